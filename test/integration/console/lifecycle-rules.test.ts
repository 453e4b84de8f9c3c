/**
 * firestore.rules for edits and unsends (docs/contract.md#edits-and-unsends, docs/data-model.md)
 * against the official Firestore emulator: the integration's `replies.lifecycle` capability (admins
 * write it, in the contract's LIFECYCLE_LIMITS), a member's `edit` / `unsend` request on a sent
 * reply (each refusal: outside the capability, past the window, not sent, text bounds, non-member,
 * unsent, service fields) and the members' read of `typing/{conversationId}`.
 *
 * Runs in its own demo project so loading rules and clearing data never touch the main project the
 * other suites (and the functions) use; no trigger fires there. `request.time` is the emulator's
 * clock: a reply "sent long ago" is seeded with a `delivery.sentAt` that far in the past.
 * @own-project its Firestore project is its own: it runs from the stack's start, beside the @serial suites
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { assertFails, assertSucceeds, initializeTestEnvironment, type RulesTestEnvironment } from '@firebase/rules-unit-testing';
import { Timestamp, deleteField, doc, getDoc, serverTimestamp, setDoc, updateDoc, writeBatch, type DocumentData, type Firestore } from 'firebase/firestore';
import { LIFECYCLE_LIMITS, REPLY_MAX_CODE_POINTS } from '../../../functions/src/contract';
import { rulesClients } from '../helpers/rules-clients';

const PROJECT = 'demo-lifecycle-rules-test';
const WS = 'ws-a';
const OTHER_WS = 'ws-b';
/** A conversation of an integration with edits (15 minutes) and unsends (1 hour). */
const CONV = 'conv-life';
/** A conversation of an integration with edits only (15 minutes). */
const CONV_EDIT_ONLY = 'conv-edit-only';
/** A conversation of an integration without the capability. */
const CONV_PLAIN = 'conv-plain';
const TOPIC = 'projects/demo-owner-1/topics/replies';
const HASH = 'a'.repeat(64);
const EDIT_WINDOW_S = 900;
const UNSEND_WINDOW_S = 3600;
const EMOJI = '\u{1F600}'; // one code point, two UTF-16 units

let env: RulesTestEnvironment;

const { as, anonymous, owner, close } = rulesClients(() => env);
const admin = () => as('alice'); // admin of ws-a
const operator = () => as('oscar'); // operator of ws-a
const otherAdmin = () => as('bob'); // admin of ws-b only
const stranger = () => as('sam'); // signed in, member of nothing
const viewer = () => as('vera'); // member doc with an unknown role

const replyDoc = (db: Firestore, id: string, conversationId = CONV, ws = WS) => doc(db, 'workspaces', ws, 'conversations', conversationId, 'messages', id);
const integrationDoc = (db: Firestore, id: string, ws = WS) => doc(db, 'workspaces', ws, 'integrations', id);

const editRequest = (uid = 'oscar', text = 'We are on it, sorry for the typo!'): DocumentData => ({ edit: { text, requestedAt: serverTimestamp(), uid } });
const unsendRequest = (uid = 'oscar'): DocumentData => ({ unsend: { requestedAt: serverTimestamp(), uid } });

async function seed(write: (db: Firestore) => Promise<void>): Promise<void> {
  await write(owner());
}

function integration(replies: DocumentData, createdAt: Timestamp | ReturnType<typeof serverTimestamp> = serverTimestamp()): DocumentData {
  return { name: 'Shop chat', active: true, sourceEnabled: true, keyHash: HASH, keyPrefix: 'sdk_live_Ab3x', replies, createdAt, createdBy: 'alice' };
}

/** A sent operator reply: its delivery's mirror with `sentAt` this many seconds ago. */
function sentReply(sentSecondsAgo: number, overrides: DocumentData = {}): DocumentData {
  const sentAt = Timestamp.fromMillis(Date.now() - sentSecondsAgo * 1000);
  return {
    direction: 'outbound',
    author: { type: 'operator', uid: 'oscar' },
    text: 'We are on it!',
    createdAt: sentAt,
    delivery: { deliveryId: 'd_1', status: 'sent', updatedAt: sentAt, sentAt, providerMessageIds: ['p-1'] },
    ...overrides,
  };
}

beforeAll(async () => {
  const [host, port] = (process.env.FIRESTORE_EMULATOR_HOST ?? '').split(':');
  if (!host || !port) throw new Error('FIRESTORE_EMULATOR_HOST is not set: run with `npm test`.');
  env = await initializeTestEnvironment({
    projectId: PROJECT,
    firestore: { rules: readFileSync(join(__dirname, '..', '..', '..', 'firestore.rules'), 'utf8'), host, port: Number(port) },
  });
});

beforeEach(async () => {
  await env.clearFirestore();
  const now = Timestamp.now();
  // One batch (one commit) instead of a write per document: this runs before each test.
  await seed(async (db) => {
    const batch = writeBatch(db);
    batch.set(doc(db, 'workspaces', WS, 'members', 'alice'), { role: 'admin' });
    batch.set(doc(db, 'workspaces', WS, 'members', 'oscar'), { role: 'operator' });
    batch.set(doc(db, 'workspaces', WS, 'members', 'vera'), { role: 'viewer' });
    batch.set(doc(db, 'workspaces', OTHER_WS, 'members', 'bob'), { role: 'admin' });
    const lifecycle = { edit: { windowSeconds: EDIT_WINDOW_S }, unsend: { windowSeconds: UNSEND_WINDOW_S } };
    batch.set(integrationDoc(db, 'int-life'), integration({ enabled: true, topic: TOPIC, lifecycle }, now));
    batch.set(integrationDoc(db, 'int-edit-only'), integration({ enabled: true, topic: TOPIC, lifecycle: { edit: { windowSeconds: EDIT_WINDOW_S } } }, now));
    batch.set(integrationDoc(db, 'int-plain'), integration({ enabled: true, topic: TOPIC }, now));
    // A capability the rules would never let an admin write (an Admin SDK write): taken as none.
    batch.set(integrationDoc(db, 'int-broken'), integration({ enabled: true, topic: TOPIC, lifecycle: { edit: { windowSeconds: 10 }, unsend: { windowSeconds: 'forever' } } }, now));
    for (const [conversationId, integrationId] of [
      [CONV, 'int-life'],
      [CONV_EDIT_ONLY, 'int-edit-only'],
      [CONV_PLAIN, 'int-plain'],
      ['conv-broken', 'int-broken'],
    ] as const) {
      batch.set(doc(db, 'workspaces', WS, 'conversations', conversationId), { integrationId, externalConversationId: `chat-${conversationId}`, createdAt: now });
      batch.set(replyDoc(db, 'r-sent', conversationId), sentReply(60));
    }
    // In the edit window's past but the unsend window's present.
    batch.set(replyDoc(db, 'r-old'), sentReply(EDIT_WINDOW_S + 120));
    batch.set(replyDoc(db, 'r-ancient'), sentReply(UNSEND_WINDOW_S + 120));
    batch.set(replyDoc(db, 'r-unsent'), sentReply(60, { unsent: { at: now } }));
    batch.set(replyDoc(db, 'r-files'), sentReply(60, { text: '', attachments: [] }));
    // Sent before `delivery.sentAt` existed: no window to measure.
    batch.set(replyDoc(db, 'r-no-sent-at'), { ...sentReply(60), delivery: { deliveryId: 'd_2', status: 'sent', updatedAt: now } });
    for (const status of ['queued', 'leased', 'sending', 'failed', 'unknown'] as const) {
      batch.set(replyDoc(db, `r-${status}`), { ...sentReply(60), delivery: { deliveryId: `d_${status}`, status, updatedAt: now } });
    }
    batch.set(replyDoc(db, 'r-unsequenced'), { direction: 'outbound', author: { type: 'operator', uid: 'oscar' }, text: 'Hi', createdAt: now });
    batch.set(replyDoc(db, 'm_in'), { direction: 'inbound', text: 'Help', createdAt: now, delivery: { status: 'sent', sentAt: now, updatedAt: now } });
    // The same conversation in another workspace (for the other workspace's admin).
    batch.set(integrationDoc(db, 'int-life', OTHER_WS), integration({ enabled: true, topic: TOPIC, lifecycle }, now));
    batch.set(doc(db, 'workspaces', OTHER_WS, 'conversations', CONV), { integrationId: 'int-life', externalConversationId: 'chat-x', createdAt: now });
    batch.set(replyDoc(db, 'r-sent', CONV, OTHER_WS), sentReply(60));
    batch.set(doc(db, 'workspaces', WS, 'typing', CONV), { conversationId: CONV, integrationId: 'int-life', senderExternalId: 'cust-1', at: now, expireAt: now });
    await batch.commit();
  });
});

afterAll(async () => {
  await close();
  await env?.cleanup();
});

describe('the integration capability replies.lifecycle', () => {
  const lifecycle = (value: unknown): DocumentData => ({ enabled: true, topic: TOPIC, lifecycle: value });

  test('an admin creates an integration with it, adds it, changes and removes it', async () => {
    await assertSucceeds(setDoc(integrationDoc(admin(), 'new-1'), integration(lifecycle({ edit: { windowSeconds: 900 }, unsend: { windowSeconds: 172_800 } }))));
    await assertSucceeds(setDoc(integrationDoc(admin(), 'new-2'), integration(lifecycle({ unsend: { windowSeconds: LIFECYCLE_LIMITS.windowSecondsMin } }))));
    await assertSucceeds(setDoc(integrationDoc(admin(), 'new-3'), integration(lifecycle({}))));
    await assertSucceeds(updateDoc(integrationDoc(admin(), 'int-plain'), { replies: lifecycle({ edit: { windowSeconds: LIFECYCLE_LIMITS.windowSecondsMax } }) }));
    await assertSucceeds(updateDoc(integrationDoc(admin(), 'int-life'), { 'replies.lifecycle.edit.windowSeconds': 60 }));
    await assertSucceeds(updateDoc(integrationDoc(admin(), 'int-life'), { 'replies.lifecycle.unsend': deleteField() }));
    await assertSucceeds(updateDoc(integrationDoc(admin(), 'int-life'), { 'replies.lifecycle': deleteField() }));
  });

  test.each([
    ['a window under the contract minimum', { edit: { windowSeconds: LIFECYCLE_LIMITS.windowSecondsMin - 1 } }],
    ['a window over the contract maximum', { unsend: { windowSeconds: LIFECYCLE_LIMITS.windowSecondsMax + 1 } }],
    ['a window that is not whole seconds', { edit: { windowSeconds: 900.5 } }],
    ['a window that is a string', { edit: { windowSeconds: '900' } }],
    ['a kind without a window', { edit: {} }],
    ['a kind that is not a map', { edit: true }],
    ['an extra key of a kind', { edit: { windowSeconds: 900, maxEdits: 3 } }],
    ['an unknown kind', { react: { windowSeconds: 900 } }],
    ['a capability that is not a map', true],
  ])('refused on create and update: %s', async (_what, value) => {
    await assertFails(setDoc(integrationDoc(admin(), 'new-1'), integration(lifecycle(value))));
    await assertFails(updateDoc(integrationDoc(admin(), 'int-plain'), { replies: lifecycle(value) }));
  });

  test('operators, other workspaces and strangers cannot set it', async () => {
    const replies = lifecycle({ edit: { windowSeconds: 900 } });
    await assertFails(updateDoc(integrationDoc(operator(), 'int-plain'), { replies }));
    await assertFails(updateDoc(integrationDoc(otherAdmin(), 'int-plain'), { replies }));
    await assertFails(updateDoc(integrationDoc(stranger(), 'int-plain'), { replies }));
    await assertFails(setDoc(integrationDoc(operator(), 'new-1'), { ...integration(replies), createdBy: 'oscar' }));
  });
});

describe('edit requests', () => {
  test('a member edits a sent reply within the window, and asks again (the request is replaced)', async () => {
    await assertSucceeds(updateDoc(replyDoc(operator(), 'r-sent'), editRequest()));
    await assertSucceeds(updateDoc(replyDoc(admin(), 'r-sent'), editRequest('alice', 'Second thoughts')));
    await assertSucceeds(updateDoc(replyDoc(operator(), 'r-sent', CONV_EDIT_ONLY), editRequest()));
    const stored = (await getDoc(replyDoc(operator(), 'r-sent'))).data();
    expect(stored?.edit).toMatchObject({ text: 'Second thoughts', uid: 'alice' });
    expect(stored?.text).toBe('We are on it!');
  });

  test('the text bounds are a reply text\'s, counted in code points', async () => {
    await assertSucceeds(updateDoc(replyDoc(operator(), 'r-sent'), editRequest('oscar', 'x'.repeat(REPLY_MAX_CODE_POINTS))));
    await assertSucceeds(updateDoc(replyDoc(operator(), 'r-sent'), editRequest('oscar', EMOJI.repeat(REPLY_MAX_CODE_POINTS))));
    await assertFails(updateDoc(replyDoc(operator(), 'r-sent'), editRequest('oscar', '')));
    await assertFails(updateDoc(replyDoc(operator(), 'r-sent'), editRequest('oscar', 'x'.repeat(REPLY_MAX_CODE_POINTS + 1))));
    await assertFails(updateDoc(replyDoc(operator(), 'r-sent'), editRequest('oscar', EMOJI.repeat(REPLY_MAX_CODE_POINTS + 1))));
    await assertFails(updateDoc(replyDoc(operator(), 'r-sent'), { edit: { text: 42, requestedAt: serverTimestamp(), uid: 'oscar' } }));
  });

  test.each([
    ['an integration without the capability', 'r-sent', CONV_PLAIN],
    ['an integration whose capability is malformed', 'r-sent', 'conv-broken'],
    ['past the edit window', 'r-old', CONV],
    ['a reply sent before delivery.sentAt existed', 'r-no-sent-at', CONV],
    ['an unsent reply', 'r-unsent', CONV],
    ['a reply with files and no text', 'r-files', CONV],
    ['a reply still queued', 'r-queued', CONV],
    ['a reply being leased', 'r-leased', CONV],
    ['a reply being sent', 'r-sending', CONV],
    ['a failed reply', 'r-failed', CONV],
    ['a reply whose outcome is unknown', 'r-unknown', CONV],
    ['a reply not sequenced yet', 'r-unsequenced', CONV],
    ['an incoming message', 'm_in', CONV],
  ])('refused: %s', async (_what, id, conversationId) => {
    await assertFails(updateDoc(replyDoc(operator(), id, conversationId), editRequest()));
  });

  test.each([
    ['another uid', { edit: { text: 'Fixed', requestedAt: serverTimestamp(), uid: 'alice' } }],
    ['a client clock', { edit: { text: 'Fixed', requestedAt: Timestamp.now(), uid: 'oscar' } }],
    ['a missing text', { edit: { requestedAt: serverTimestamp(), uid: 'oscar' } }],
    ['an extra field', { edit: { text: 'Fixed', requestedAt: serverTimestamp(), uid: 'oscar', attachments: [] } }],
    ['an edit that is not a map', { edit: 'Fixed' }],
    ['an edit and an unsend in one write', { ...editRequest(), ...unsendRequest() }],
    ['the reply text changed with it', { ...editRequest(), text: 'Fixed' }],
    ['the service history written with it (edits)', { ...editRequest(), edits: [{ text: 'Fixed', requestedAt: Timestamp.now(), deliveryId: 'd_x', status: 'sent' }] }],
    ['the service history written alone (edits)', { edits: [] }],
    ['the mirror written with it (delivery.sentAt)', { ...editRequest(), 'delivery.sentAt': serverTimestamp() }],
    ['the mirror written alone (delivery.sentAt)', { 'delivery.sentAt': serverTimestamp() }],
  ])('refused on a sent reply: %s', async (_what, update) => {
    await assertFails(updateDoc(replyDoc(operator(), 'r-sent'), update));
  });

  test('refused to non-members, other workspaces, unknown roles and anonymous users; never removed', async () => {
    await assertFails(updateDoc(replyDoc(stranger(), 'r-sent'), editRequest('sam')));
    await assertFails(updateDoc(replyDoc(otherAdmin(), 'r-sent'), editRequest('bob')));
    await assertFails(updateDoc(replyDoc(viewer(), 'r-sent'), editRequest('vera')));
    await assertFails(updateDoc(replyDoc(anonymous(), 'r-sent'), { edit: { text: 'Fixed', requestedAt: serverTimestamp(), uid: null } }));
    // The other workspace's own admin may, on its own reply.
    await assertSucceeds(updateDoc(replyDoc(otherAdmin(), 'r-sent', CONV, OTHER_WS), editRequest('bob')));
    await assertSucceeds(updateDoc(replyDoc(operator(), 'r-sent'), editRequest()));
    await assertFails(updateDoc(replyDoc(operator(), 'r-sent'), { edit: deleteField() }));
  });
});

describe('unsend requests', () => {
  test('a member unsends a sent reply within the unsend window, also after the edit window', async () => {
    await assertSucceeds(updateDoc(replyDoc(operator(), 'r-sent'), unsendRequest()));
    await assertSucceeds(updateDoc(replyDoc(operator(), 'r-old'), unsendRequest()));
    await assertSucceeds(updateDoc(replyDoc(admin(), 'r-files'), unsendRequest('alice')));
  });

  test.each([
    ['an integration without the capability', 'r-sent', CONV_PLAIN],
    ['an integration that takes edits only', 'r-sent', CONV_EDIT_ONLY],
    ['an integration whose capability is malformed', 'r-sent', 'conv-broken'],
    ['past the unsend window', 'r-ancient', CONV],
    ['a reply sent before delivery.sentAt existed', 'r-no-sent-at', CONV],
    ['an unsent reply', 'r-unsent', CONV],
    ['a reply still queued', 'r-queued', CONV],
    ['a reply being sent', 'r-sending', CONV],
    ['a failed reply', 'r-failed', CONV],
    ['a reply whose outcome is unknown', 'r-unknown', CONV],
    ['a reply not sequenced yet', 'r-unsequenced', CONV],
    ['an incoming message', 'm_in', CONV],
  ])('refused: %s', async (_what, id, conversationId) => {
    await assertFails(updateDoc(replyDoc(operator(), id, conversationId), unsendRequest()));
  });

  test.each([
    ['another uid', { unsend: { requestedAt: serverTimestamp(), uid: 'alice' } }],
    ['a client clock', { unsend: { requestedAt: Timestamp.now(), uid: 'oscar' } }],
    ['a text with it', { unsend: { text: '', requestedAt: serverTimestamp(), uid: 'oscar' } }],
    ['an unsend that is not a map', { unsend: true }],
    ['the service history written with it (unsends)', { ...unsendRequest(), unsends: [] }],
    ['the service marker written with it (unsent)', { ...unsendRequest(), unsent: { at: serverTimestamp() } }],
    ['the service marker written alone (unsent)', { unsent: { at: serverTimestamp() } }],
  ])('refused on a sent reply: %s', async (_what, update) => {
    await assertFails(updateDoc(replyDoc(operator(), 'r-sent'), update));
  });

  test('refused to non-members, other workspaces, unknown roles and anonymous users', async () => {
    await assertFails(updateDoc(replyDoc(stranger(), 'r-sent'), unsendRequest('sam')));
    await assertFails(updateDoc(replyDoc(otherAdmin(), 'r-sent'), unsendRequest('bob')));
    await assertFails(updateDoc(replyDoc(viewer(), 'r-sent'), unsendRequest('vera')));
    await assertFails(updateDoc(replyDoc(anonymous(), 'r-sent'), { unsend: { requestedAt: serverTimestamp(), uid: null } }));
  });
});

describe('typing', () => {
  test('members read who is typing; nobody else does, and no client writes it', async () => {
    await assertSucceeds(getDoc(doc(operator(), 'workspaces', WS, 'typing', CONV)));
    await assertSucceeds(getDoc(doc(admin(), 'workspaces', WS, 'typing', CONV)));
    await assertFails(getDoc(doc(stranger(), 'workspaces', WS, 'typing', CONV)));
    await assertFails(getDoc(doc(otherAdmin(), 'workspaces', WS, 'typing', CONV)));
    await assertFails(getDoc(doc(viewer(), 'workspaces', WS, 'typing', CONV)));
    await assertFails(getDoc(doc(anonymous(), 'workspaces', WS, 'typing', CONV)));
    await assertFails(setDoc(doc(operator(), 'workspaces', WS, 'typing', CONV), { conversationId: CONV, senderExternalId: 'x', at: serverTimestamp() }));
    await assertFails(updateDoc(doc(admin(), 'workspaces', WS, 'typing', CONV), { at: serverTimestamp() }));
  });
});
