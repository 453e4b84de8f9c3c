/**
 * firestore.rules against the official Firestore emulator (the console contract, docs/data-model.md and
 * docs/data-model.md): for each rule the allowed case and its denied neighbours.
 *
 * Runs in its own demo project (`demo-rules-test`) so loading rules and clearing data never touch
 * the main project the other suites (and the functions) use; no trigger fires there.
 * @long every rule of the console checked through the Firestore emulator (about 80 s)
 * @own-project its Firestore project is its own: it runs from the stack's start, beside the @serial suites
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { assertFails, assertSucceeds, initializeTestEnvironment, type RulesTestEnvironment } from '@firebase/rules-unit-testing';
import {
  Timestamp,
  addDoc,
  collection,
  deleteDoc,
  deleteField,
  doc,
  getCountFromServer,
  getDoc,
  getDocs,
  query,
  serverTimestamp,
  setDoc,
  updateDoc,
  where,
  writeBatch,
  type DocumentData,
  type Firestore,
} from 'firebase/firestore';
import { rulesClients } from '../helpers/rules-clients';

const PROJECT = 'demo-rules-test';
const WS = 'ws-a';
const OTHER_WS = 'ws-b';
const CONV = 'conv-1';
const INTEGRATION = 'int-1';
const TOPIC = 'projects/demo-owner-1/topics/replies';
const HASH = 'a'.repeat(64);
const EMOJI = '\u{1F600}'; // one code point, two UTF-16 units

let env: RulesTestEnvironment;

const { as, anonymous, owner, close } = rulesClients(() => env);
const admin = () => as('alice'); // admin of ws-a
const operator = () => as('oscar'); // operator of ws-a
const otherAdmin = () => as('bob'); // admin of ws-b only
const stranger = () => as('sam'); // signed in, member of nothing
const viewer = () => as('vera'); // member doc with an unknown role

const replies = (db: Firestore, conversationId = CONV, ws = WS) => collection(db, 'workspaces', ws, 'conversations', conversationId, 'messages');
const integrationDoc = (db: Firestore, id = INTEGRATION, ws = WS) => doc(db, 'workspaces', ws, 'integrations', id);

async function seed(write: (db: Firestore) => Promise<void>): Promise<void> {
  await write(owner());
}

function newIntegration(overrides: DocumentData = {}): DocumentData {
  return {
    name: 'Shop chat',
    active: true,
    sourceEnabled: true,
    keyHash: HASH,
    keyPrefix: 'sdk_live_Ab3x',
    replies: { enabled: true, topic: TOPIC },
    createdAt: serverTimestamp(),
    createdBy: 'alice',
    ...overrides,
  };
}

function reply(uid: string, overrides: DocumentData = {}): DocumentData {
  return { direction: 'outbound', author: { type: 'operator', uid }, text: 'We are on it!', createdAt: serverTimestamp(), ...overrides };
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
  // One batch (one commit) instead of a write per document: this runs before each of the ~40 tests.
  await seed(async (db) => {
    const batch = writeBatch(db);
    batch.set(doc(db, 'workspaces', WS), { name: 'Workspace A' });
    batch.set(doc(db, 'workspaces', WS, 'members', 'alice'), { role: 'admin' });
    batch.set(doc(db, 'workspaces', WS, 'members', 'oscar'), { role: 'operator' });
    batch.set(doc(db, 'workspaces', WS, 'members', 'vera'), { role: 'viewer' });
    batch.set(doc(db, 'workspaces', OTHER_WS, 'members', 'bob'), { role: 'admin' });
    for (const ws of [WS, OTHER_WS]) {
      batch.set(integrationDoc(db, INTEGRATION, ws), {
        ...newIntegration({ createdAt: now }),
        previousKey: { hash: 'b'.repeat(64), prefix: 'sdk_live_Old1', expiresAt: Date.now() + 3_600_000 },
        replies: { enabled: true, topic: TOPIC, topicStatus: 'ok', topicMessage: 'ok', topicCheckedAt: now },
      });
      batch.set(doc(db, 'workspaces', ws, 'conversations', CONV), { integrationId: INTEGRATION, externalConversationId: 'chat-1', createdAt: now });
      batch.set(doc(db, 'workspaces', ws, 'conversations', CONV, 'messages', 'm_in'), { direction: 'inbound', text: 'Help', createdAt: now });
      batch.set(doc(db, 'workspaces', ws, 'conversations', CONV, 'messages', 'r-1'), {
        ...reply('oscar', { createdAt: now }),
        delivery: { deliveryId: 'd_1', status: 'sent', updatedAt: now },
      });
      // Replies whose deliveries ended failed / unknown / are still queued: the resend rule's cases.
      for (const [id, status] of [['r-failed', 'failed'], ['r-unknown', 'unknown'], ['r-queued', 'queued']] as const) {
        batch.set(doc(db, 'workspaces', ws, 'conversations', CONV, 'messages', id), {
          ...reply('oscar', { createdAt: now }),
          delivery: { deliveryId: `d_${id}`, status, updatedAt: now, ...(status === 'queued' ? {} : { error: { outcome: status, code: 'provider_rejected' } }) },
        });
      }
      // A reply the service has not sequenced yet (no `delivery` mirror): nothing to recall.
      batch.set(doc(db, 'workspaces', ws, 'conversations', CONV, 'messages', 'r-new'), reply('oscar', { createdAt: now }));
      batch.set(doc(db, 'workspaces', ws, 'integrationHealth', INTEGRATION), { integrationId: INTEGRATION, counts: { sent: 1 }, computedAt: now });
      batch.set(doc(db, 'workspaces', ws, 'customers', 'u_1'), { integrationId: INTEGRATION, externalId: 'cust-1' });
      batch.set(doc(db, 'workspaces', ws, 'events', 'e_1'), { eventId: 'evt-1' });
      batch.set(doc(db, 'workspaces', ws, 'deliveries', 'd_1'), { status: 'sent', text: 'We are on it!' });
      batch.set(doc(db, 'workspaces', ws, 'deliveryQueues', CONV), { nextSeq: 2 });
    }
    batch.set(doc(db, 'outbox', 'd_1@1'), { deliveryId: 'd_1' });
    batch.set(doc(db, 'deliveryChecks', 'd_1'), { deliveryId: 'd_1', workspaceId: WS, dueAt: 1, shard: 0 });
    await batch.commit();
  });
});

afterAll(async () => {
  await close();
  await env?.cleanup();
});

describe('membership', () => {
  test('members read the workspace and its member list', async () => {
    await assertSucceeds(getDoc(doc(operator(), 'workspaces', WS)));
    await assertSucceeds(getDoc(doc(operator(), 'workspaces', WS, 'members', 'alice')));
    await assertSucceeds(getDocs(collection(admin(), 'workspaces', WS, 'members')));
  });

  test('non-members, other workspaces, unknown roles and anonymous users read nothing', async () => {
    await assertFails(getDoc(doc(otherAdmin(), 'workspaces', WS)));
    await assertFails(getDocs(collection(otherAdmin(), 'workspaces', WS, 'members')));
    await assertFails(getDoc(doc(stranger(), 'workspaces', WS, 'members', 'alice')));
    await assertFails(getDoc(doc(viewer(), 'workspaces', WS, 'members', 'alice')));
    await assertFails(getDoc(doc(anonymous(), 'workspaces', WS, 'members', 'alice')));
  });

  test('nobody writes memberships or the workspace document from a client (provisioning does)', async () => {
    await assertFails(setDoc(doc(operator(), 'workspaces', WS, 'members', 'oscar'), { role: 'admin' }));
    await assertFails(setDoc(doc(admin(), 'workspaces', WS, 'members', 'newbie'), { role: 'operator' }));
    await assertFails(setDoc(doc(stranger(), 'workspaces', WS, 'members', 'sam'), { role: 'admin' }));
    await assertFails(deleteDoc(doc(admin(), 'workspaces', WS, 'members', 'oscar')));
    await assertFails(setDoc(doc(admin(), 'workspaces', WS), { name: 'renamed' }));
    await assertFails(setDoc(doc(stranger(), 'workspaces', 'ws-new'), { name: 'mine' }));
  });
});

describe('integrations: read', () => {
  test('admins and operators read their workspace integrations (get and list)', async () => {
    await assertSucceeds(getDoc(integrationDoc(operator())));
    await assertSucceeds(getDoc(integrationDoc(admin())));
    await assertSucceeds(getDocs(collection(operator(), 'workspaces', WS, 'integrations')));
  });

  test('other workspaces, strangers, unknown roles and anonymous users are denied', async () => {
    await assertFails(getDoc(integrationDoc(otherAdmin())));
    await assertFails(getDocs(collection(otherAdmin(), 'workspaces', WS, 'integrations')));
    await assertFails(getDoc(integrationDoc(operator(), INTEGRATION, OTHER_WS)));
    await assertFails(getDoc(integrationDoc(stranger())));
    await assertFails(getDoc(integrationDoc(viewer())));
    await assertFails(getDoc(integrationDoc(anonymous())));
  });
});

describe('integrations: create', () => {
  test('an admin creates exactly the contract shape', async () => {
    await assertSucceeds(setDoc(integrationDoc(admin(), 'new-1'), newIntegration()));
    // Without replies: disabled with a null topic (as the admin CLI writes it).
    await assertSucceeds(setDoc(integrationDoc(admin(), 'new-2'), newIntegration({ replies: { enabled: false, topic: null } })));
    // A test key prefix, and replies disabled but a topic kept.
    await assertSucceeds(setDoc(integrationDoc(admin(), 'new-3'), newIntegration({ keyPrefix: 'sdk_test_-_9z', replies: { enabled: false, topic: TOPIC } })));
  });

  test('operators, other workspaces, strangers and anonymous users cannot create', async () => {
    await assertFails(setDoc(integrationDoc(operator(), 'new-1'), newIntegration({ createdBy: 'oscar' })));
    await assertFails(setDoc(integrationDoc(otherAdmin(), 'new-1'), newIntegration({ createdBy: 'bob' })));
    await assertFails(setDoc(integrationDoc(stranger(), 'new-1'), newIntegration({ createdBy: 'sam' })));
    await assertFails(setDoc(integrationDoc(viewer(), 'new-1'), newIntegration({ createdBy: 'vera' })));
    await assertFails(setDoc(integrationDoc(anonymous(), 'new-1'), newIntegration()));
  });

  test.each([
    ['an extra field (limits)', { limits: { messagesPerMinute: 1_000_000 } }],
    ['a forged rotation overlap (previousKey)', { previousKey: { hash: 'c'.repeat(64), prefix: 'sdk_live_Zzzz', expiresAt: 9e15 } }],
    ['active: false', { active: false }],
    ['sourceEnabled: false', { sourceEnabled: false }],
    ['an empty name', { name: '' }],
    ['a 201-character name', { name: 'n'.repeat(201) }],
    ['an upper-case key hash', { keyHash: 'A'.repeat(64) }],
    ['a 63-character key hash', { keyHash: 'a'.repeat(63) }],
    ['a plaintext key instead of a hash', { keyHash: `sdk_live_${'x'.repeat(43)}` }],
    ['a malformed key prefix', { keyPrefix: 'sk_live_Ab3x' }],
    ['a key prefix with too much of the secret', { keyPrefix: 'sdk_live_Ab3xYz' }],
    ['a malformed topic', { replies: { enabled: true, topic: 'my-topic' } }],
    ['a topic with an invalid project id', { replies: { enabled: true, topic: 'projects/P/topics/replies' } }],
    ['enabled replies without a topic', { replies: { enabled: true, topic: null } }],
    ['replies.enabled not a boolean', { replies: { enabled: 'yes', topic: TOPIC } }],
    ['a service status field (topicStatus)', { replies: { enabled: true, topic: TOPIC, topicStatus: 'ok' } }],
    ['a client clock createdAt', { createdAt: Timestamp.fromMillis(Date.now()) }],
    ['createdBy of someone else', { createdBy: 'oscar' }],
  ])('an admin cannot create one with %s', async (_what, overrides) => {
    await assertFails(setDoc(integrationDoc(admin(), 'new-1'), newIntegration(overrides)));
  });

  test('an admin cannot create one with a missing field (createdBy) or an overlong id', async () => {
    const { createdBy: _createdBy, ...withoutCreatedBy } = newIntegration();
    await assertFails(setDoc(integrationDoc(admin(), 'new-1'), withoutCreatedBy));
    await assertFails(setDoc(integrationDoc(admin(), 'i'.repeat(129)), newIntegration()));
  });
});

describe('integrations: update', () => {
  test('an admin renames, deactivates, pauses the source and toggles replies', async () => {
    await assertSucceeds(updateDoc(integrationDoc(admin()), { name: 'Renamed', updatedAt: serverTimestamp() }));
    await assertSucceeds(updateDoc(integrationDoc(admin()), { active: false }));
    await assertSucceeds(updateDoc(integrationDoc(admin()), { sourceEnabled: false }));
    await assertSucceeds(updateDoc(integrationDoc(admin()), { 'replies.enabled': false }));
  });

  test('an admin changes the topic by writing replies without the old status (the service re-checks it)', async () => {
    const other = 'projects/demo-owner-2/topics/replies-2';
    await assertSucceeds(updateDoc(integrationDoc(admin()), { replies: { enabled: true, topic: other } }));
  });

  test('an admin may ask for a re-check by removing the status without changing the topic', async () => {
    await assertSucceeds(updateDoc(integrationDoc(admin()), { 'replies.topicStatus': deleteField(), 'replies.topicMessage': deleteField(), 'replies.topicCheckedAt': deleteField() }));
  });

  test('an admin re-keys (new hash + prefix: the old key stops at once) and may end a rotation overlap', async () => {
    await assertSucceeds(updateDoc(integrationDoc(admin()), { keyHash: 'd'.repeat(64), keyPrefix: 'sdk_live_New1' }));
    await assertSucceeds(updateDoc(integrationDoc(admin()), { previousKey: deleteField() }));
  });

  test.each([
    ['a topic change keeping the old status', { 'replies.topic': 'projects/demo-owner-2/topics/replies-2' }],
    ['a topic status', { 'replies.topicStatus': 'permission_denied' }],
    ['a topic message', { 'replies.topicMessage': 'all good' }],
    ['a topic check time', { 'replies.topicCheckedAt': serverTimestamp() }],
    ['an unknown replies field', { 'replies.extra': true }],
    ['an invalid topic', { replies: { enabled: true, topic: 'projects/x/topics/y' } }],
    ['enabled replies without a topic', { replies: { enabled: true, topic: null } }],
    ['a key prefix without a new hash', { keyPrefix: 'sdk_live_New1' }],
    ['an invalid key hash', { keyHash: 'z'.repeat(64), keyPrefix: 'sdk_live_New1' }],
    ['a forged previousKey', { previousKey: { hash: 'c'.repeat(64), prefix: 'sdk_live_Zzzz', expiresAt: 9e15 } }],
    ['a longer overlap', { 'previousKey.expiresAt': 9e15 }],
    ['createdAt', { createdAt: serverTimestamp() }],
    ['createdBy', { createdBy: 'alice2' }],
    ['limits', { limits: { messagesPerMinute: 1_000_000 } }],
    // The channel is the connector's to declare (PUT /v1/channel): the console only shows it.
    ['the channel', { channel: { window: { seconds: 60 }, templates: [], updatedAt: 1 } }],
    ['the channel window', { 'channel.window': null }],
    ['a non-boolean active', { active: 'yes' }],
    ['an empty name', { name: '' }],
    ['a client clock updatedAt', { updatedAt: Timestamp.fromMillis(0) }],
  ])('an admin cannot update with %s', async (_what, data) => {
    await assertFails(updateDoc(integrationDoc(admin()), data));
  });

  test('operators, other workspaces and anonymous users cannot update; nobody deletes', async () => {
    await assertFails(updateDoc(integrationDoc(operator()), { active: false }));
    await assertFails(updateDoc(integrationDoc(otherAdmin()), { active: false }));
    await assertFails(updateDoc(integrationDoc(anonymous()), { active: false }));
    await assertFails(updateDoc(integrationDoc(admin(), INTEGRATION, OTHER_WS), { active: false }));
    await assertFails(deleteDoc(integrationDoc(admin())));
  });
});

describe('conversations, messages, customers: read', () => {
  test('members read conversations, their messages (with the delivery mirror) and customers', async () => {
    for (const db of [operator(), admin()]) {
      await assertSucceeds(getDoc(doc(db, 'workspaces', WS, 'conversations', CONV)));
      await assertSucceeds(getDocs(collection(db, 'workspaces', WS, 'conversations')));
      await assertSucceeds(getDocs(replies(db)));
      const snap = await assertSucceeds(getDoc(doc(replies(db), 'r-1')));
      expect(snap.get('delivery.status')).toBe('sent');
      await assertSucceeds(getDoc(doc(db, 'workspaces', WS, 'customers', 'u_1')));
      await assertSucceeds(getDocs(collection(db, 'workspaces', WS, 'customers')));
    }
  });

  test('other workspaces, strangers and anonymous users read none of it', async () => {
    for (const db of [otherAdmin(), stranger(), viewer(), anonymous()]) {
      await assertFails(getDoc(doc(db, 'workspaces', WS, 'conversations', CONV)));
      await assertFails(getDocs(replies(db)));
      await assertFails(getDoc(doc(replies(db), 'r-1')));
      await assertFails(getDoc(doc(db, 'workspaces', WS, 'customers', 'u_1')));
    }
    await assertFails(getDocs(replies(operator(), CONV, OTHER_WS)));
  });

  test("the erasure preview's reads (docs/console.md#privacy): an admin lists a customer's conversations and counts their messages in their workspace, no rule change; others are refused", async () => {
    await seed(async (db) => {
      await setDoc(doc(db, 'workspaces', WS, 'conversations', 'conv-u1'), { integrationId: INTEGRATION, customerIds: ['u_1'], createdAt: Timestamp.now() });
      await setDoc(doc(db, 'workspaces', WS, 'conversations', 'conv-u1', 'messages', 'm_u1'), { direction: 'inbound', sender: { customerId: 'u_1' }, createdAt: Timestamp.now() });
    });
    const listed = (db: Firestore, ws = WS) => query(collection(db, 'workspaces', ws, 'conversations'), where('customerIds', 'array-contains', 'u_1'));
    const own = (db: Firestore, ws = WS) => query(replies(db, 'conv-u1', ws), where('sender.customerId', '==', 'u_1'));
    const db = admin();
    expect((await assertSucceeds(getDoc(doc(db, 'workspaces', WS, 'customers', 'u_1')))).exists()).toBe(true);
    expect((await assertSucceeds(getDocs(listed(db)))).docs.map((d) => d.id)).toEqual(['conv-u1']);
    expect((await assertSucceeds(getCountFromServer(own(db)))).data().count).toBe(1);
    expect((await assertSucceeds(getCountFromServer(replies(db, 'conv-u1')))).data().count).toBe(1);
    for (const other of [otherAdmin(), stranger(), viewer(), anonymous()]) {
      await assertFails(getDocs(listed(other)));
      await assertFails(getCountFromServer(own(other)));
    }
  });

  test('clients never write conversations, incoming messages or customers', async () => {
    await assertFails(setDoc(doc(admin(), 'workspaces', WS, 'conversations', 'conv-new'), { integrationId: INTEGRATION }));
    await assertFails(updateDoc(doc(operator(), 'workspaces', WS, 'conversations', CONV), { externalConversationId: 'x' }));
    await assertFails(updateDoc(doc(replies(operator()), 'm_in'), { text: 'changed' }));
    await assertFails(deleteDoc(doc(replies(admin()), 'm_in')));
    await assertFails(setDoc(doc(admin(), 'workspaces', WS, 'customers', 'u_2'), { externalId: 'x' }));
    await assertFails(updateDoc(doc(operator(), 'workspaces', WS, 'customers', 'u_1'), { displayName: 'x' }));
  });
});

describe('operator replies: create', () => {
  test('a member creates an operator reply in the contract shape (operator or admin)', async () => {
    await assertSucceeds(addDoc(replies(operator()), reply('oscar')));
    await assertSucceeds(addDoc(replies(admin()), reply('alice')));
    await assertSucceeds(setDoc(doc(replies(operator()), 'my-own-id'), reply('oscar')));
  });

  test('text limits count code points: 10000 allowed, 10001 denied, whatever the UTF-16 length', async () => {
    await assertSucceeds(addDoc(replies(operator()), reply('oscar', { text: 'a' })));
    await assertSucceeds(addDoc(replies(operator()), reply('oscar', { text: 'a'.repeat(10_000) })));
    await assertSucceeds(addDoc(replies(operator()), reply('oscar', { text: EMOJI.repeat(10_000) }))); // 20000 UTF-16 units
    await assertSucceeds(addDoc(replies(operator()), reply('oscar', { text: EMOJI.repeat(5_000) + 'a'.repeat(5_000) })));
    await assertSucceeds(addDoc(replies(operator()), reply('oscar', { text: `line 1\nline 2\n${'b'.repeat(9_986)}` })));
    await assertSucceeds(addDoc(replies(operator()), reply('oscar', { text: `${EMOJI}\n`.repeat(5_000) })));
    await assertFails(addDoc(replies(operator()), reply('oscar', { text: 'a'.repeat(10_001) })));
    await assertFails(addDoc(replies(operator()), reply('oscar', { text: EMOJI.repeat(10_001) })));
    await assertFails(addDoc(replies(operator()), reply('oscar', { text: EMOJI.repeat(5_000) + 'a'.repeat(5_001) })));
    await assertFails(addDoc(replies(operator()), reply('oscar', { text: `${EMOJI}\n`.repeat(5_000) + 'a' })));
    await assertFails(addDoc(replies(operator()), reply('oscar', { text: '' })));
    await assertFails(addDoc(replies(operator()), reply('oscar', { text: 42 })));
  });

  test('other workspaces, strangers, unknown roles and anonymous users cannot reply', async () => {
    await assertFails(addDoc(replies(otherAdmin()), reply('bob')));
    await assertFails(addDoc(replies(stranger()), reply('sam')));
    await assertFails(addDoc(replies(viewer()), reply('vera')));
    await assertFails(addDoc(replies(anonymous()), reply('oscar')));
    await assertFails(addDoc(replies(operator(), CONV, OTHER_WS), reply('oscar')));
  });

  test.each([
    ['a forged author uid', { author: { type: 'operator', uid: 'alice' } }],
    ['author type service', { author: { type: 'service', uid: 'oscar' } }],
    ['author type customer', { author: { type: 'customer', uid: 'oscar' } }],
    ['an extra author field', { author: { type: 'operator', uid: 'oscar', displayName: 'Oscar' } }],
    ['direction inbound', { direction: 'inbound' }],
    ['a delivery field', { delivery: { deliveryId: 'd_x', status: 'sent', updatedAt: serverTimestamp() } }],
    ['an extra field (integrationId)', { integrationId: INTEGRATION }],
    ['an extra field (images)', { images: [] }],
    ['a client clock createdAt', { createdAt: Timestamp.fromMillis(Date.now()) }],
  ])('a member cannot create a reply with %s', async (_what, overrides) => {
    await assertFails(addDoc(replies(operator()), reply('oscar', overrides)));
  });

  test('a reply without createdAt, in a missing conversation, or at a reserved or overlong id is denied', async () => {
    const { createdAt: _createdAt, ...withoutCreatedAt } = reply('oscar');
    await assertFails(addDoc(replies(operator()), withoutCreatedAt));
    await assertFails(addDoc(replies(operator(), 'no-such-conversation'), reply('oscar')));
    await assertFails(setDoc(doc(replies(operator()), 'm_future'), reply('oscar')));
    await assertFails(setDoc(doc(replies(operator()), 'r'.repeat(129)), reply('oscar')));
  });

  test('resend (decisions 7): a member may write exactly { requestedAt: server time, uid: self } on a failed or unknown reply', async () => {
    for (const [db, uid] of [[operator(), 'oscar'], [admin(), 'alice']] as const) {
      await assertSucceeds(updateDoc(doc(replies(db), 'r-failed'), { resend: { requestedAt: serverTimestamp(), uid } }));
      await assertSucceeds(updateDoc(doc(replies(db), 'r-unknown'), { resend: { requestedAt: serverTimestamp(), uid } }));
    }
  });

  test.each([
    ['a sent reply', 'r-1', { resend: { requestedAt: serverTimestamp(), uid: 'oscar' } }],
    ['a reply still queued', 'r-queued', { resend: { requestedAt: serverTimestamp(), uid: 'oscar' } }],
    ['an incoming message', 'm_in', { resend: { requestedAt: serverTimestamp(), uid: 'oscar' } }],
    ['another uid', 'r-failed', { resend: { requestedAt: serverTimestamp(), uid: 'alice' } }],
    ['a client clock', 'r-failed', { resend: { requestedAt: Timestamp.fromMillis(Date.now()), uid: 'oscar' } }],
    ['an extra resend field', 'r-failed', { resend: { requestedAt: serverTimestamp(), uid: 'oscar', note: 'again' } }],
    ['a missing requestedAt', 'r-failed', { resend: { uid: 'oscar' } }],
    ['a resend that is not a map', 'r-failed', { resend: true }],
    ['the text changed with it', 'r-failed', { resend: { requestedAt: serverTimestamp(), uid: 'oscar' }, text: 'edited' }],
    ['the delivery changed with it', 'r-failed', { resend: { requestedAt: serverTimestamp(), uid: 'oscar' }, 'delivery.status': 'queued' }],
    ['another field only', 'r-failed', { note: 'hello' }],
  ])('resend denied: %s', async (_what, id, update) => {
    await assertFails(updateDoc(doc(replies(operator()), id), update));
  });

  test('resend denied to non-members, other workspaces and anonymous users; no delete of a resend', async () => {
    const request = (uid: string) => ({ resend: { requestedAt: serverTimestamp(), uid } });
    await assertFails(updateDoc(doc(replies(viewer()), 'r-failed'), request('vera')));
    await assertFails(updateDoc(doc(replies(stranger()), 'r-failed'), request('sam')));
    await assertFails(updateDoc(doc(replies(otherAdmin()), 'r-failed'), request('bob')));
    await assertFails(updateDoc(doc(replies(anonymous()), 'r-failed'), { resend: { requestedAt: serverTimestamp(), uid: null } }));
    await assertSucceeds(updateDoc(doc(replies(operator()), 'r-failed'), request('oscar')));
    await assertFails(updateDoc(doc(replies(operator()), 'r-failed'), { resend: deleteField() }));
    await assertFails(deleteDoc(doc(replies(operator()), 'r-failed')));
  });

  test('cancel (decisions 10): a member may write exactly { requestedAt: server time, uid: self } on an operator reply with a delivery, in any status, and ask again', async () => {
    for (const [db, uid] of [[operator(), 'oscar'], [admin(), 'alice']] as const) {
      for (const id of ['r-queued', 'r-1', 'r-failed', 'r-unknown']) {
        await assertSucceeds(updateDoc(doc(replies(db), id), { cancel: { requestedAt: serverTimestamp(), uid } }));
      }
    }
    // A cancel request does not stand in the way of a resend, nor the other way round.
    await assertSucceeds(updateDoc(doc(replies(operator()), 'r-failed'), { resend: { requestedAt: serverTimestamp(), uid: 'oscar' } }));
    await assertSucceeds(updateDoc(doc(replies(operator()), 'r-failed'), { cancel: { requestedAt: serverTimestamp(), uid: 'oscar' } }));
  });

  test.each([
    ['a reply not sequenced yet (no delivery mirror)', 'r-new', { cancel: { requestedAt: serverTimestamp(), uid: 'oscar' } }],
    ['an incoming message', 'm_in', { cancel: { requestedAt: serverTimestamp(), uid: 'oscar' } }],
    ['another uid', 'r-queued', { cancel: { requestedAt: serverTimestamp(), uid: 'alice' } }],
    ['a client clock', 'r-queued', { cancel: { requestedAt: Timestamp.fromMillis(Date.now()), uid: 'oscar' } }],
    ['an extra cancel field', 'r-queued', { cancel: { requestedAt: serverTimestamp(), uid: 'oscar', reason: 'typo' } }],
    ['a missing requestedAt', 'r-queued', { cancel: { uid: 'oscar' } }],
    ['a missing uid', 'r-queued', { cancel: { requestedAt: serverTimestamp() } }],
    ['a cancel that is not a map', 'r-queued', { cancel: true }],
    ['the text changed with it', 'r-queued', { cancel: { requestedAt: serverTimestamp(), uid: 'oscar' }, text: 'edited' }],
    ['the delivery changed with it', 'r-queued', { cancel: { requestedAt: serverTimestamp(), uid: 'oscar' }, 'delivery.status': 'failed' }],
    ['the delivery cancel answer forged', 'r-queued', { 'delivery.cancel': { status: 'cancelled' } }],
    ['a resend with it', 'r-failed', { cancel: { requestedAt: serverTimestamp(), uid: 'oscar' }, resend: { requestedAt: serverTimestamp(), uid: 'oscar' } }],
    ['the author changed with it', 'r-queued', { cancel: { requestedAt: serverTimestamp(), uid: 'oscar' }, author: { type: 'operator', uid: 'alice' } }],
  ])('cancel denied: %s', async (_what, id, update) => {
    await assertFails(updateDoc(doc(replies(operator()), id), update));
  });

  test('cancel denied to non-members, other workspaces, unknown roles and anonymous users; no delete of a cancel', async () => {
    const request = (uid: string) => ({ cancel: { requestedAt: serverTimestamp(), uid } });
    await assertFails(updateDoc(doc(replies(viewer()), 'r-queued'), request('vera')));
    await assertFails(updateDoc(doc(replies(stranger()), 'r-queued'), request('sam')));
    await assertFails(updateDoc(doc(replies(otherAdmin()), 'r-queued'), request('bob')));
    await assertFails(updateDoc(doc(replies(otherAdmin(), CONV, OTHER_WS), 'r-queued'), request('oscar')));
    await assertFails(updateDoc(doc(replies(operator(), CONV, OTHER_WS), 'r-queued'), request('oscar')));
    await assertFails(updateDoc(doc(replies(anonymous()), 'r-queued'), { cancel: { requestedAt: serverTimestamp(), uid: null } }));
    await assertSucceeds(updateDoc(doc(replies(operator()), 'r-queued'), request('oscar')));
    await assertFails(updateDoc(doc(replies(operator()), 'r-queued'), { cancel: deleteField() }));
    await assertFails(deleteDoc(doc(replies(operator()), 'r-queued')));
  });

  test('replies are otherwise immutable for clients: no update (text or delivery), no delete, no overwrite', async () => {
    for (const db of [operator(), admin()]) {
      await assertFails(updateDoc(doc(replies(db), 'r-1'), { text: 'edited' }));
      await assertFails(updateDoc(doc(replies(db), 'r-1'), { 'delivery.status': 'failed' }));
      await assertFails(updateDoc(doc(replies(db), 'r-1'), { delivery: deleteField() }));
      await assertFails(updateDoc(doc(replies(db), 'r-1'), { note: 'hello' }));
      await assertFails(updateDoc(doc(replies(db), 'r-1'), { createdAt: serverTimestamp() }));
      await assertFails(setDoc(doc(replies(db), 'r-1'), reply('oscar')));
      await assertFails(deleteDoc(doc(replies(db), 'r-1')));
    }
  });
});

/**
 * Tried as an attacker would: matches() is a full match and RE2's `.` does not match a newline, so
 * a pattern like 'm_.*' says nothing about "m_\nx". Every pattern that guards a reserved id, a
 * prefix or a format must hold for every string, control characters included.
 */
describe('tenant isolation: every pattern holds for strings with newlines', () => {
  test.each([
    ['a newline after the prefix', 'm_\nx'],
    ['a trailing newline', 'm_x\n'],
    ['only the prefix and a newline', 'm_\n'],
    ['a carriage return and a newline', 'm_\r\nforged'],
    ['the bare prefix', 'm_'],
  ])('an operator cannot create a reply at a reserved m_ id with %s', async (_what, id) => {
    await assertFails(setDoc(doc(replies(operator()), id), reply('oscar')));
    await assertFails(setDoc(doc(replies(admin()), id), reply('alice')));
  });

  test('an id with a newline that does not start with the reserved prefix is an ordinary reply id', async () => {
    await assertSucceeds(setDoc(doc(replies(operator()), 'r\nm_x'), reply('oscar')));
  });

  test.each([
    ['a topic with a trailing newline', { replies: { enabled: true, topic: `${TOPIC}\n` } }],
    ['a topic with a newline inside', { replies: { enabled: true, topic: 'projects/demo-owner-1/topics/re\nplies' } }],
    ['a topic after a newline', { replies: { enabled: true, topic: `x\n${TOPIC}` } }],
    ['a key hash with a trailing newline', { keyHash: `${'a'.repeat(63)}\n` }],
    ['a key prefix with a newline', { keyPrefix: 'sdk_live_Ab3\n' }],
    ['a key prefix with a trailing newline', { keyPrefix: 'sdk_live_Ab3x\n' }],
  ])('an admin cannot create an integration with %s', async (_what, overrides) => {
    await assertFails(setDoc(integrationDoc(admin(), 'new-nl'), newIntegration(overrides)));
  });

  test('an admin cannot move the topic or re-key to a value with a newline', async () => {
    await assertFails(updateDoc(integrationDoc(admin()), { replies: { enabled: true, topic: `${TOPIC}\n` } }));
    await assertFails(updateDoc(integrationDoc(admin()), { keyHash: `${'d'.repeat(63)}\n`, keyPrefix: 'sdk_live_New1' }));
    await assertFails(updateDoc(integrationDoc(admin()), { keyHash: 'd'.repeat(64), keyPrefix: 'sdk_live_New\n' }));
  });

  test('newlines count as one code point each in reply text (the count pattern uses (?s))', async () => {
    // 5000 astral characters + 5000 newlines = 10000 code points in 15000 UTF-16 units: the
    // pattern path. One more newline is one code point too many.
    await assertSucceeds(addDoc(replies(operator()), reply('oscar', { text: EMOJI.repeat(5_000) + '\n'.repeat(5_000) })));
    await assertFails(addDoc(replies(operator()), reply('oscar', { text: EMOJI.repeat(5_000) + '\n'.repeat(5_001) })));
  });
});

describe('integration health (decisions 10)', () => {
  const health = (db: Firestore, ws = WS) => doc(db, 'workspaces', ws, 'integrationHealth', INTEGRATION);

  test('members read their workspace integration health (get and list)', async () => {
    for (const db of [operator(), admin()]) {
      const snap = await assertSucceeds(getDoc(health(db)));
      expect(snap.get('counts.sent')).toBe(1);
      await assertSucceeds(getDocs(collection(db, 'workspaces', WS, 'integrationHealth')));
    }
  });

  test('other workspaces, strangers, unknown roles and anonymous users read none of it; nobody writes it', async () => {
    for (const db of [otherAdmin(), stranger(), viewer(), anonymous()]) {
      await assertFails(getDoc(health(db)));
      await assertFails(getDocs(collection(db, 'workspaces', WS, 'integrationHealth')));
    }
    await assertFails(getDoc(health(admin(), OTHER_WS)));
    for (const db of [admin(), operator(), stranger(), anonymous()]) {
      await assertFails(setDoc(health(db), { counts: { sent: 1000 } }));
      await assertFails(updateDoc(health(db), { 'counts.sent': 0 }));
      await assertFails(deleteDoc(health(db)));
      await assertFails(setDoc(doc(db, 'workspaces', WS, 'integrationHealth', 'new-one'), { counts: {} }));
    }
  });
});

describe('service-owned collections', () => {
  const serviceDocs: Array<[string, string[]]> = [
    ['events', ['workspaces', WS, 'events', 'e_1']],
    ['deliveries', ['workspaces', WS, 'deliveries', 'd_1']],
    ['deliveryQueues', ['workspaces', WS, 'deliveryQueues', CONV]],
    ['outbox', ['outbox', 'd_1@1']],
    ['deliveryChecks', ['deliveryChecks', 'd_1']],
  ];

  test.each(serviceDocs)('%s: no client reads (get or list) or writes, not even a workspace admin', async (_name, path) => {
    const [first, ...rest] = path as [string, ...string[]];
    for (const db of [admin(), operator(), stranger(), anonymous()]) {
      await assertFails(getDoc(doc(db, first, ...rest)));
      await assertFails(getDocs(collection(db, first, ...rest.slice(0, -1))));
      await assertFails(setDoc(doc(db, first, ...rest), { status: 'sent' }));
      await assertFails(deleteDoc(doc(db, first, ...rest)));
    }
  });

  test('unknown collections are denied too', async () => {
    await assertFails(getDoc(doc(admin(), 'workspaces', WS, 'secrets', 'x')));
    await assertFails(setDoc(doc(admin(), 'workspaces', WS, 'secrets', 'x'), { a: 1 }));
    await assertFails(setDoc(doc(admin(), 'anything', 'x'), { a: 1 }));
  });
});

describe('reply attachments (docs/data-model.md#reply-attachments)', () => {
  const CAP = { contentTypes: ['image/png', 'application/pdf'], maxBytes: 10 * 1024 * 1024, maxCount: 5 };
  const file = (overrides: DocumentData = {}): DocumentData => ({ attachmentId: 'a_abc123', name: 'shot.png', contentType: 'image/png', size: 1234, sha256: 'c'.repeat(64), ...overrides });

  test('an admin sets, changes and removes the capability; on create too', async () => {
    await assertSucceeds(updateDoc(integrationDoc(admin()), { 'replies.attachments': CAP }));
    await assertSucceeds(updateDoc(integrationDoc(admin()), { 'replies.attachments': { ...CAP, contentTypes: ['text/plain'], maxCount: 1, maxBytes: 1 } }));
    await assertSucceeds(updateDoc(integrationDoc(admin()), { 'replies.attachments': deleteField() }));
    await assertSucceeds(setDoc(integrationDoc(admin(), 'int-new'), newIntegration({ replies: { enabled: true, topic: TOPIC, attachments: CAP } })));
  });

  test.each([
    ['an unknown type', { ...CAP, contentTypes: ['image/svg+xml'] }],
    ['no type', { ...CAP, contentTypes: [] }],
    ['a repeated type', { ...CAP, contentTypes: ['image/png', 'image/png'] }],
    ['maxBytes over 10 MB', { ...CAP, maxBytes: 10 * 1024 * 1024 + 1 }],
    ['maxBytes 0', { ...CAP, maxBytes: 0 }],
    ['maxCount 6', { ...CAP, maxCount: 6 }],
    ['maxCount 0', { ...CAP, maxCount: 0 }],
    ['a fractional maxBytes', { ...CAP, maxBytes: 1.5 }],
    ['an extra key', { ...CAP, maxTotal: 1 }],
    ['a missing key', { contentTypes: ['image/png'], maxBytes: 1 }],
  ])('the capability with %s is refused (update and create)', async (_name, value) => {
    await assertFails(updateDoc(integrationDoc(admin()), { 'replies.attachments': value }));
    await assertFails(setDoc(integrationDoc(admin(), 'int-new'), newIntegration({ replies: { enabled: true, topic: TOPIC, attachments: value } })));
  });

  test('an operator cannot set the capability', async () => {
    await assertFails(updateDoc(integrationDoc(operator()), { 'replies.attachments': CAP }));
  });

  test('a reply may carry 1..5 files, and its text may then be empty', async () => {
    await assertSucceeds(addDoc(replies(operator()), reply('oscar', { attachments: [file()] })));
    await assertSucceeds(addDoc(replies(operator()), reply('oscar', { text: '', attachments: [file(), file({ attachmentId: 'a_2', contentType: 'application/pdf' })] })));
    await assertSucceeds(addDoc(replies(operator()), reply('oscar', { text: '', attachments: [1, 2, 3, 4, 5].map((i) => file({ attachmentId: `a_${i}` })) })));
  });

  test.each([
    ['no file', []],
    ['six files', [1, 2, 3, 4, 5, 6].map((i) => file({ attachmentId: `a_${i}` }))],
    ['a bad id', [file({ attachmentId: 'x/1' })]],
    ['an unknown type', [file({ contentType: 'image/svg+xml' })]],
    ['size 0', [file({ size: 0 })]],
    ['size over 10 MB', [file({ size: 10 * 1024 * 1024 + 1 })]],
    ['an uppercase sha256', [file({ sha256: 'C'.repeat(64) })]],
    ['an empty name', [file({ name: '' })]],
    ['an extra key', [file({ path: 'x' })]],
    ['a bad fifth file', [1, 2, 3, 4].map((i) => file({ attachmentId: `a_${i}` })).concat([file({ size: -1 })])],
    ['not a list', file()],
  ])('a reply with %s is refused', async (_name, attachments) => {
    await assertFails(addDoc(replies(operator()), reply('oscar', { text: '', attachments })));
  });

  test('a reply without files still needs a text', async () => {
    await assertFails(addDoc(replies(operator()), reply('oscar', { text: '' })));
  });
});

describe('operations settings (workspaces/{ws}/settings/operations)', () => {
  const settingsDoc = (db: Firestore, ws = WS) => doc(db, 'workspaces', ws, 'settings', 'operations');
  const OPS_TOPIC = 'projects/demo-owner-1/topics/operations';

  test('admins set, change and clear the topic; the topic has the replies topic`s form', async () => {
    await assertSucceeds(setDoc(settingsDoc(admin()), { topic: OPS_TOPIC }));
    await assertSucceeds(getDoc(settingsDoc(admin())));
    await assertSucceeds(setDoc(settingsDoc(admin()), { topic: null }));
    for (const topic of ['operations', 'projects/x/topics/ops', `${OPS_TOPIC}\n`, 'projects/demo-owner-1/subscriptions/ops', 42]) {
      await assertFails(setDoc(settingsDoc(admin()), { topic }));
    }
    await assertFails(setDoc(settingsDoc(admin()), { topic: OPS_TOPIC, extra: true }));
    // The service's status fields: never set by a client.
    await assertFails(setDoc(settingsDoc(admin()), { topic: OPS_TOPIC, topicStatus: 'ok' }));
  });

  test('a recorded topicStatus is kept or removed, and removed when the topic changes', async () => {
    await seed((db) => setDoc(doc(db, 'workspaces', WS, 'settings', 'operations'), { topic: OPS_TOPIC, topicStatus: 'not_found', topicMessage: 'gone', topicCheckedAt: 1 }));
    await assertFails(updateDoc(settingsDoc(admin()), { topicStatus: 'ok' }));
    await assertFails(updateDoc(settingsDoc(admin()), { topic: `${OPS_TOPIC}-2` }));
    await assertSucceeds(updateDoc(settingsDoc(admin()), { topic: `${OPS_TOPIC}-2`, topicStatus: deleteField(), topicMessage: deleteField(), topicCheckedAt: deleteField() }));
  });

  test('operators, other workspaces` admins, strangers and anonymous users neither read nor write it', async () => {
    await seed((db) => setDoc(doc(db, 'workspaces', WS, 'settings', 'operations'), { topic: OPS_TOPIC }));
    for (const db of [operator(), otherAdmin(), stranger(), viewer(), anonymous()]) {
      await assertFails(getDoc(settingsDoc(db)));
      await assertFails(setDoc(settingsDoc(db), { topic: OPS_TOPIC }));
    }
  });
});

describe('read markers (the queue\'s unread state): each member writes and reads only their own', () => {
  const marker = (db: Firestore, uid: string, conversationId = CONV, ws = WS) => doc(db, 'workspaces', ws, 'members', uid, 'reads', conversationId);

  test('admins and operators write { readAt: server time } on their own marker, again later, read it back and delete it', async () => {
    for (const [client, uid] of [[admin(), 'alice'], [operator(), 'oscar']] as const) {
      await assertSucceeds(setDoc(marker(client, uid), { readAt: serverTimestamp() }));
      await assertSucceeds(setDoc(marker(client, uid), { readAt: serverTimestamp() }));
      const read = await assertSucceeds(getDoc(marker(client, uid)));
      expect(read.get('readAt')).toBeInstanceOf(Timestamp);
      await assertSucceeds(getDocs(collection(client, 'workspaces', WS, 'members', uid, 'reads')));
      await assertSucceeds(deleteDoc(marker(client, uid)));
    }
  });

  test("nobody reads or writes another member's markers", async () => {
    await seed(async (db) => setDoc(marker(db, 'alice'), { readAt: Timestamp.now() }));
    const db = operator();
    await assertFails(getDoc(marker(db, 'alice')));
    await assertFails(getDocs(collection(db, 'workspaces', WS, 'members', 'alice', 'reads')));
    await assertFails(setDoc(marker(db, 'alice'), { readAt: serverTimestamp() }));
    await assertFails(deleteDoc(marker(db, 'alice')));
  });

  test.each([
    ['a client-chosen time', { readAt: Timestamp.fromMillis(Date.now() + 86_400_000) }],
    ['an extra field', { readAt: serverTimestamp(), conversationId: CONV }],
    ['no readAt', { seen: true }],
  ])('a marker with %s is denied', async (_case, data) => {
    await assertFails(setDoc(marker(admin(), 'alice'), data));
  });

  test('no marker for a conversation that does not exist, in another workspace, or for strangers, unknown roles and anonymous users', async () => {
    await assertFails(setDoc(marker(admin(), 'alice', 'conv-missing'), { readAt: serverTimestamp() }));
    await assertFails(setDoc(marker(admin(), 'alice', CONV, OTHER_WS), { readAt: serverTimestamp() }));
    await assertFails(setDoc(marker(stranger(), 'sam'), { readAt: serverTimestamp() }));
    await assertFails(setDoc(marker(viewer(), 'vera'), { readAt: serverTimestamp() }));
    await assertFails(setDoc(marker(anonymous(), 'anyone'), { readAt: serverTimestamp() }));
  });
});
