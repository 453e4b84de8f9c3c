/**
 * firestore.rules for conversations the desk starts (docs/contract.md#conversations-the-desk-starts)
 * against the official Firestore emulator: the admin's `conversations.start` setting, a member's
 * start request (the allowed kinds, each address pattern, text or template, the template a windowed
 * channel requires, exactly the fields; never updated or deleted), the service-only address book,
 * replies refused while a started conversation waits for the channel, and no recall of a start's message.
 *
 * Runs in its own demo project (no trigger fires there).
 * @own-project its Firestore project is its own: it runs from the stack's start, beside the @serial suites
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { assertFails, assertSucceeds, initializeTestEnvironment, type RulesTestEnvironment } from '@firebase/rules-unit-testing';
import { Timestamp, deleteDoc, deleteField, doc, getDoc, serverTimestamp, setDoc, updateDoc, writeBatch, type DocumentData, type Firestore } from 'firebase/firestore';
import { rulesClients } from '../helpers/rules-clients';

const PROJECT = 'demo-starts-rules-test';
const WS = 'ws-a';
const TOPIC = 'projects/demo-owner-1/topics/replies';
const HASH = 'a'.repeat(64);

let env: RulesTestEnvironment;
const { as, anonymous, owner, close } = rulesClients(() => env);
const admin = () => as('alice');
const operator = () => as('oscar');
const stranger = () => as('sam');

const integrationDoc = (db: Firestore, id: string) => doc(db, 'workspaces', WS, 'integrations', id);
const startDoc = (db: Firestore, id: string) => doc(db, 'workspaces', WS, 'conversationStarts', id);
const messageDoc = (db: Firestore, conversationId: string, id: string) => doc(db, 'workspaces', WS, 'conversations', conversationId, 'messages', id);

async function seed(write: (db: Firestore) => Promise<void>): Promise<void> {
  await write(owner());
}

function integration(extra: DocumentData = {}): DocumentData {
  return { name: 'Shop chat', active: true, sourceEnabled: true, keyHash: HASH, keyPrefix: 'sdk_live_Ab3x', replies: { enabled: true, topic: TOPIC }, createdAt: Timestamp.now(), createdBy: 'alice', ...extra };
}

/** A start as the console writes it (integration `int-open` by email). */
function start(fields: DocumentData = {}, uid = 'oscar'): DocumentData {
  return { integrationId: 'int-open', to: { kind: 'email', value: 'ana@example.com' }, text: 'Hello Ana', uid, requestedAt: serverTimestamp(), ...fields };
}

/** A start without `text` (a template start, or neither). */
function withoutText(fields: DocumentData = {}): DocumentData {
  const { text: _text, ...rest } = start(fields);
  return rest;
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
  await seed(async (db) => {
    const batch = writeBatch(db);
    batch.set(doc(db, 'workspaces', WS, 'members', 'alice'), { role: 'admin' });
    batch.set(doc(db, 'workspaces', WS, 'members', 'oscar'), { role: 'operator' });
    batch.set(integrationDoc(db, 'int-open'), integration({ conversations: { start: { addressKinds: ['email', 'phone', 'handle'] } } }));
    batch.set(integrationDoc(db, 'int-email'), integration({ conversations: { start: { addressKinds: ['email'] } } }));
    batch.set(integrationDoc(db, 'int-off'), integration());
    batch.set(
      integrationDoc(db, 'int-windowed'),
      integration({
        conversations: { start: { addressKinds: ['handle'] } },
        channel: { window: { seconds: 86400 }, templates: [{ name: 'hello', language: 'en-US', params: [{ name: 'name' }], preview: 'Hi {{name}}' }], updatedAt: 1 },
        templateIndex: { 'hello:en-us': ['name'] },
      }),
    );
    batch.set(doc(db, 'workspaces', WS, 'conversations', 'c-waiting'), { integrationId: 'int-open', origin: 'desk', waitingForChannel: true, createdAt: now });
    batch.set(doc(db, 'workspaces', WS, 'conversations', 'c-open'), { integrationId: 'int-open', origin: 'desk', createdAt: now });
    batch.set(messageDoc(db, 'c-open', 's_1'), {
      direction: 'outbound',
      author: { type: 'operator', uid: 'oscar' },
      text: 'Hello',
      createdAt: now,
      start: { startId: 'st-1', to: { kind: 'email', value: 'ana@example.com' } },
      delivery: { deliveryId: 'd_1', status: 'failed', updatedAt: now },
    });
    batch.set(doc(db, 'workspaces', WS, 'conversationStarts', 'st-1'), { integrationId: 'int-open', to: { kind: 'email', value: 'ana@example.com' }, text: 'Hello', uid: 'oscar', requestedAt: now });
    batch.set(doc(db, 'workspaces', WS, 'startAddresses', 'a_1'), { integrationId: 'int-open', kind: 'email', value: 'ana@example.com', externalCustomerId: null, conversationId: 'c-open', updatedAt: now });
    await batch.commit();
  });
});

afterAll(async () => {
  await close();
  await env?.cleanup();
});

describe('the integration setting conversations.start', () => {
  test('an admin sets 1..3 distinct kinds, and removes the field', async () => {
    await assertSucceeds(updateDoc(integrationDoc(admin(), 'int-off'), { conversations: { start: { addressKinds: ['email'] } } }));
    await assertSucceeds(updateDoc(integrationDoc(admin(), 'int-off'), { conversations: { start: { addressKinds: ['phone', 'email', 'handle'] } } }));
    await assertSucceeds(updateDoc(integrationDoc(admin(), 'int-off'), { conversations: deleteField() }));
  });
  test.each([
    ['no kind', { start: { addressKinds: [] } }],
    ['an unknown kind', { start: { addressKinds: ['fax'] } }],
    ['a repeated kind', { start: { addressKinds: ['email', 'email'] } }],
    ['another field', { start: { addressKinds: ['email'] }, other: true }],
    ['a field beside addressKinds', { start: { addressKinds: ['email'], auto: true } }],
    ['not a list', { start: { addressKinds: 'email' } }],
  ])('refused: %s', async (_, conversations) => {
    await assertFails(updateDoc(integrationDoc(admin(), 'int-off'), { conversations }));
  });
  test('an operator may not set it', async () => {
    await assertFails(updateDoc(integrationDoc(operator(), 'int-off'), { conversations: { start: { addressKinds: ['email'] } } }));
  });
});

describe('a start request', () => {
  test('a member writes a text start, and reads the answer; never updates or deletes it', async () => {
    await assertSucceeds(setDoc(startDoc(operator(), 'st-new'), start()));
    await assertSucceeds(getDoc(startDoc(operator(), 'st-1')));
    await assertFails(updateDoc(startDoc(operator(), 'st-1'), { text: 'changed' }));
    await assertFails(updateDoc(startDoc(operator(), 'st-1'), { result: { conversationId: 'c-x', reused: false } }));
    await assertFails(deleteDoc(startDoc(operator(), 'st-1')));
  });
  test.each([
    ['phone', '+4915112345678'],
    ['handle', '@ana'],
    ['handle', '\u{1F600}'.repeat(256)],
    ['email', `${'a'.repeat(242)}@example.com`],
  ])('the address %s %j', async (kind, value) => {
    await assertSucceeds(setDoc(startDoc(operator(), 'st-new'), start({ to: { kind, value } })));
  });
  test.each([
    ['a phone without +', { kind: 'phone', value: '4915112345678' }],
    ['a phone too short', { kind: 'phone', value: '+123456' }],
    ['a phone too long', { kind: 'phone', value: '+1234567890123456' }],
    ['a phone with a leading 0', { kind: 'phone', value: '+0123456789' }],
    ['an email without @', { kind: 'email', value: 'ana.example.com' }],
    ['an email with two @', { kind: 'email', value: 'a@b@c' }],
    ['an email over 254', { kind: 'email', value: `${'a'.repeat(243)}@example.com` }],
    ['an email with a space', { kind: 'email', value: 'a na@example.com' }],
    ['an empty handle', { kind: 'handle', value: '' }],
    ['a handle over 256 code points', { kind: 'handle', value: 'a'.repeat(257) }],
    ['a handle with a control', { kind: 'handle', value: 'ana\nbob' }],
    ['a handle with a C1 control', { kind: 'handle', value: 'ana\u0085' }],
    ['an unknown kind', { kind: 'fax', value: '123' }],
    ['a field beside kind and value', { kind: 'email', value: 'ana@example.com', name: 'Ana' }],
  ])('refused: %s', async (_, to) => {
    await assertFails(setDoc(startDoc(operator(), 'st-new'), start({ to })));
  });
  test('a kind the integration does not allow, and an integration without starts', async () => {
    await assertFails(setDoc(startDoc(operator(), 'st-new'), start({ integrationId: 'int-email', to: { kind: 'handle', value: '@ana' } })));
    await assertFails(setDoc(startDoc(operator(), 'st-new'), start({ integrationId: 'int-off' })));
    await assertFails(setDoc(startDoc(operator(), 'st-new'), start({ integrationId: 'int-missing' })));
  });
  test('exactly one of text and template; a text as a reply', async () => {
    await assertFails(setDoc(startDoc(operator(), 'st-new'), withoutText()));
    await assertFails(setDoc(startDoc(operator(), 'st-new'), { integrationId: 'int-open', to: { kind: 'email', value: 'ana@example.com' }, uid: 'oscar', requestedAt: serverTimestamp() }));
    await assertFails(setDoc(startDoc(operator(), 'st-new'), start({ text: '' })));
    await assertFails(setDoc(startDoc(operator(), 'st-new'), start({ text: 'x'.repeat(10_001) })));
  });
  test('a windowed channel: a template it declares, with exactly its params; no text', async () => {
    const to = { kind: 'handle', value: '@ana' };
    await assertSucceeds(setDoc(startDoc(operator(), 'st-t1'), withoutText({ integrationId: 'int-windowed', to, template: { name: 'hello', language: 'en-US', params: { name: 'Ana' } } })));
    await assertFails(setDoc(startDoc(operator(), 'st-t2'), start({ integrationId: 'int-windowed', to })));
    await assertFails(setDoc(startDoc(operator(), 'st-t3'), withoutText({ integrationId: 'int-windowed', to, template: { name: 'bye', language: 'en-US', params: { name: 'Ana' } } })));
    await assertFails(setDoc(startDoc(operator(), 'st-t4'), withoutText({ integrationId: 'int-windowed', to, template: { name: 'hello', language: 'en-US', params: {} } })));
    await assertFails(setDoc(startDoc(operator(), 'st-t5'), start({ integrationId: 'int-windowed', to, text: 'Hi', template: { name: 'hello', language: 'en-US', params: { name: 'Ana' } } })));
  });
  test('the writer is themselves, the time is the server time, the fields are exactly these, members only', async () => {
    await assertFails(setDoc(startDoc(operator(), 'st-new'), start({ uid: 'alice' })));
    await assertFails(setDoc(startDoc(operator(), 'st-new'), start({ requestedAt: Timestamp.now() })));
    await assertFails(setDoc(startDoc(operator(), 'st-new'), start({ result: { conversationId: 'c', reused: false } })));
    await assertFails(setDoc(startDoc(stranger(), 'st-new'), start({}, 'sam')));
    await assertFails(setDoc(startDoc(anonymous(), 'st-new'), start()));
    await assertFails(getDoc(startDoc(stranger(), 'st-1')));
  });
});

describe('around a started conversation', () => {
  test('the address book is the service\'s alone', async () => {
    await assertFails(getDoc(doc(operator(), 'workspaces', WS, 'startAddresses', 'a_1')));
    await assertFails(setDoc(doc(admin(), 'workspaces', WS, 'startAddresses', 'a_2'), { conversationId: 'c-open' }));
  });
  test('no reply while the conversation waits for the channel; replies once it does not', async () => {
    const reply = () => ({ direction: 'outbound', author: { type: 'operator', uid: 'oscar' }, text: 'More', createdAt: serverTimestamp() });
    await assertFails(setDoc(messageDoc(operator(), 'c-waiting', 'r-1'), reply()));
    await assertSucceeds(setDoc(messageDoc(operator(), 'c-open', 'r-1'), reply()));
  });
  test("a start's message is not recalled, but a failed one is resent", async () => {
    await assertFails(updateDoc(messageDoc(operator(), 'c-open', 's_1'), { cancel: { requestedAt: serverTimestamp(), uid: 'oscar' } }));
    await assertSucceeds(updateDoc(messageDoc(operator(), 'c-open', 's_1'), { resend: { requestedAt: serverTimestamp(), uid: 'oscar' } }));
  });
});
