/**
 * firestore.rules for reply windows and template replies (docs/contract.md#windows,
 * docs/data-model.md) against the official Firestore emulator: a free-form reply is refused once the
 * conversation's `window.closesAt` has passed (without one: its customer's latest `sentAt` + the
 * window - the margin; when no customer wrote, always) when its integration declares a
 * window, and allowed when it declares none; a template reply must name a template of the
 * integration's `templateIndex` with exactly its params, each 1..TEMPLATE_PARAM_MAX_CODE_POINTS code
 * points, no text, no files; admins never write `channel` nor `templateIndex`.
 *
 * Runs in its own demo project (no trigger fires there). `request.time` is the emulator's clock: a
 * window "closed" is seeded with a `closesAt` in the past, an open one an hour ahead.
 * @own-project its Firestore project is its own: it runs from the stack's start, beside the @serial suites
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { assertFails, assertSucceeds, initializeTestEnvironment, type RulesTestEnvironment } from '@firebase/rules-unit-testing';
import { Timestamp, doc, serverTimestamp, setDoc, updateDoc, writeBatch, type DocumentData, type Firestore } from 'firebase/firestore';
import { TEMPLATE_PARAM_MAX_CODE_POINTS } from '../../../functions/src/contract';
import { templateIndexOf } from '../../../functions/src/contract/templates';
import { rulesClients } from '../helpers/rules-clients';

const PROJECT = 'demo-window-rules-test';
const WS = 'ws-a';
const TOPIC = 'projects/demo-owner-1/topics/replies';
const HASH = 'a'.repeat(64);
const EMOJI = '\u{1F600}'; // one code point, two UTF-16 units
const TEMPLATES = [
  { name: 'order_update', language: 'en-US', params: [{ name: 'name' }, { name: 'order' }], preview: 'Hi {{name}}, order {{order}} shipped.' },
  { name: 'hello', language: 'pl', params: [], preview: 'Dzień dobry!' },
];

let env: RulesTestEnvironment;
const { as } = rulesClients(() => env);
const admin = () => as('alice');
const operator = () => as('oscar');

const replyDoc = (db: Firestore, conversationId: string, id: string) => doc(db, 'workspaces', WS, 'conversations', conversationId, 'messages', id);
const integrationDoc = (db: Firestore, id: string) => doc(db, 'workspaces', WS, 'integrations', id);

const textReply = (text = 'On it!'): DocumentData => ({ direction: 'outbound', author: { type: 'operator', uid: 'oscar' }, text, createdAt: serverTimestamp() });
const templateReply = (template: unknown, extra: DocumentData = {}): DocumentData => ({ direction: 'outbound', author: { type: 'operator', uid: 'oscar' }, template, createdAt: serverTimestamp(), ...extra });
const ORDER = { name: 'order_update', language: 'en-US', params: { name: 'Ann', order: 'A-1' } };

function integration(extra: DocumentData, now: Timestamp): DocumentData {
  return { name: 'WhatsApp', active: true, sourceEnabled: true, keyHash: HASH, keyPrefix: 'sdk_live_Ab3x', replies: { enabled: true, topic: TOPIC }, createdAt: now, createdBy: 'alice', ...extra };
}

beforeAll(async () => {
  const [host, port] = (process.env.FIRESTORE_EMULATOR_HOST ?? '').split(':');
  if (!host || !port) throw new Error('FIRESTORE_EMULATOR_HOST is not set: run with `npm test`.');
  env = await initializeTestEnvironment({
    projectId: PROJECT,
    firestore: { rules: readFileSync(join(__dirname, '..', '..', '..', 'firestore.rules'), 'utf8'), host, port: Number(port) },
  });
  const now = Timestamp.now();
  const hourAhead = Timestamp.fromMillis(Date.now() + 3_600_000);
  const minuteAgo = Timestamp.fromMillis(Date.now() - 60_000);
  const hourAgo = Timestamp.fromMillis(Date.now() - 3_600_000);
  const twoDaysAgo = Timestamp.fromMillis(Date.now() - 2 * 86_400_000);
  // Seeded once: every test writes a new reply id, and nothing here changes what was seeded.
  await env.withSecurityRulesDisabled(async (ctx) => {
    const db = ctx.firestore() as unknown as Firestore;
    const batch = writeBatch(db);
    batch.set(doc(db, 'workspaces', WS, 'members', 'alice'), { role: 'admin' });
    batch.set(doc(db, 'workspaces', WS, 'members', 'oscar'), { role: 'operator' });
    const channel = { window: { seconds: 86_400 }, templates: TEMPLATES, updatedAt: now.toMillis() };
    batch.set(integrationDoc(db, 'int-wa'), integration({ channel, templateIndex: templateIndexOf(TEMPLATES) }, now));
    batch.set(integrationDoc(db, 'int-templates-only'), integration({ channel: { window: null, templates: TEMPLATES, updatedAt: now.toMillis() }, templateIndex: templateIndexOf(TEMPLATES) }, now));
    batch.set(integrationDoc(db, 'int-v1'), integration({}, now));
    const conversations: Array<[string, string, DocumentData]> = [
      ['conv-open', 'int-wa', { window: { closesAt: hourAhead } }],
      ['conv-closed', 'int-wa', { window: { closesAt: minuteAgo } }],
      ['conv-no-window', 'int-wa', {}],
      // No stored window (the customer wrote before the declaration, or an instance took the message with a channel cached from before it).
      ['conv-wrote-an-hour-ago', 'int-wa', { lastCustomerSentAt: hourAgo }],
      ['conv-wrote-two-days-ago', 'int-wa', { lastCustomerSentAt: twoDaysAgo }],
      ['conv-closed-by-connector', 'int-wa', { window: { closesAt: minuteAgo }, lastCustomerSentAt: hourAgo }],
      ['conv-templates-only', 'int-templates-only', { window: { closesAt: minuteAgo } }],
      ['conv-v1', 'int-v1', {}],
    ];
    for (const [id, integrationId, extra] of conversations) batch.set(doc(db, 'workspaces', WS, 'conversations', id), { integrationId, externalConversationId: `chat-${id}`, createdAt: now, ...extra });
    await batch.commit();
  });
});

afterAll(async () => {
  await env?.cleanup();
});

let n = 0;
const nextId = (): string => `r-${++n}`;

describe('a free-form reply and the window', () => {
  test('goes while the window is open', async () => {
    await assertSucceeds(setDoc(replyDoc(operator(), 'conv-open', nextId()), textReply()));
  });

  test('is refused once closesAt has passed, and when the conversation has no window yet', async () => {
    await assertFails(setDoc(replyDoc(operator(), 'conv-closed', nextId()), textReply()));
    await assertFails(setDoc(replyDoc(operator(), 'conv-no-window', nextId()), textReply()));
  });

  test("without a stored window, goes until the customer's latest sentAt + the window - the margin; a stored closesAt wins", async () => {
    await assertSucceeds(setDoc(replyDoc(operator(), 'conv-wrote-an-hour-ago', nextId()), textReply()));
    await assertFails(setDoc(replyDoc(operator(), 'conv-wrote-two-days-ago', nextId()), textReply()));
    await assertFails(setDoc(replyDoc(operator(), 'conv-closed-by-connector', nextId()), textReply()));
  });

  test('is never windowed when the integration declares no window (a v1 integration, or templates only)', async () => {
    await assertSucceeds(setDoc(replyDoc(operator(), 'conv-v1', nextId()), textReply()));
    await assertSucceeds(setDoc(replyDoc(operator(), 'conv-templates-only', nextId()), textReply()));
  });
});

describe('a template reply', () => {
  test('of a declared template with exactly its params goes, in or out of the window; the language in any case', async () => {
    await assertSucceeds(setDoc(replyDoc(operator(), 'conv-closed', nextId()), templateReply(ORDER)));
    await assertSucceeds(setDoc(replyDoc(operator(), 'conv-no-window', nextId()), templateReply({ ...ORDER, language: 'EN-us' })));
    await assertSucceeds(setDoc(replyDoc(operator(), 'conv-open', nextId()), templateReply({ name: 'hello', language: 'pl', params: {} })));
  });

  test.each([
    ['an unknown template', { ...ORDER, name: 'nope' }],
    ['a known name in another language', { name: 'hello', language: 'en', params: {} }],
    ['a missing param', { ...ORDER, params: { name: 'Ann' } }],
    ['an extra param', { ...ORDER, params: { ...ORDER.params, extra: 'x' } }],
    ['an empty param', { ...ORDER, params: { name: '', order: 'A-1' } }],
    ['a param that is not a string', { ...ORDER, params: { name: 7, order: 'A-1' } }],
    ['no params', { name: ORDER.name, language: ORDER.language }],
    ['another field', { ...ORDER, preview: 'x' }],
    ['not a map', 'order_update'],
  ])('is refused: %s', async (_, template) => {
    await assertFails(setDoc(replyDoc(operator(), 'conv-open', nextId()), templateReply(template)));
  });

  test('is refused with text or files beside it', async () => {
    await assertFails(setDoc(replyDoc(operator(), 'conv-open', nextId()), templateReply(ORDER, { text: 'Hi' })));
    const file = { attachmentId: 'a_1', name: 'a.png', contentType: 'image/png', size: 1, sha256: 'b'.repeat(64) };
    await assertFails(setDoc(replyDoc(operator(), 'conv-open', nextId()), templateReply(ORDER, { attachments: [file] })));
  });

  test('is refused on an integration without templates', async () => {
    await assertFails(setDoc(replyDoc(operator(), 'conv-v1', nextId()), templateReply(ORDER)));
  });

  test('a param of the limit in code points goes (astral characters: two UTF-16 units each), one more does not', async () => {
    const at = (name: string) => templateReply({ ...ORDER, params: { name, order: 'A-1' } });
    await assertSucceeds(setDoc(replyDoc(operator(), 'conv-open', nextId()), at(EMOJI.repeat(TEMPLATE_PARAM_MAX_CODE_POINTS))));
    await assertSucceeds(setDoc(replyDoc(operator(), 'conv-open', nextId()), at('x'.repeat(TEMPLATE_PARAM_MAX_CODE_POINTS))));
    await assertFails(setDoc(replyDoc(operator(), 'conv-open', nextId()), at(EMOJI.repeat(TEMPLATE_PARAM_MAX_CODE_POINTS + 1))));
    await assertFails(setDoc(replyDoc(operator(), 'conv-open', nextId()), at('x'.repeat(TEMPLATE_PARAM_MAX_CODE_POINTS + 1))));
  });
});

describe("the integration's channel and templateIndex", () => {
  test('admins never write them (the service does, from PUT /v1/channel)', async () => {
    await assertFails(updateDoc(integrationDoc(admin(), 'int-v1'), { templateIndex: { 'x:en': [] } }));
    await assertFails(updateDoc(integrationDoc(admin(), 'int-wa'), { templateIndex: {} }));
    await assertFails(updateDoc(integrationDoc(admin(), 'int-v1'), { channel: { window: null, templates: [], updatedAt: 1 } }));
    // The same admin may still rename it: the refusals above are about those fields.
    await assertSucceeds(updateDoc(integrationDoc(admin(), 'int-wa'), { name: 'WhatsApp (shop)' }));
  });
});
