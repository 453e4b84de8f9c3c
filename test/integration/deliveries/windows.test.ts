/**
 * Reply windows and template replies (docs/contract.md#windows) through real HTTP on the emulators:
 * the conversation's `window.closesAt` from the customer's `sentAt` (the channel's clock, not the
 * receipt), a late free-form reply failed `window_closed` and never published nor claimable, a
 * template reply claimed with `message.template` and its filled preview, an unknown template or bad
 * params failed `template_invalid`, the connector's `window_closed` fail closing the window, a reply
 * written in time but sequenced after `closesAt` failed, and an integration without a channel
 * seeing none of it.
 *
 * Replies are written with the Admin SDK (the rules are tested in
 * test/integration/console/window-rules.test.ts): that is how a reply the rules let through in
 * time, or one the console should have refused, reaches the service.
 */
import { randomUUID } from 'node:crypto';
import { FieldValue, Timestamp, type DocumentData } from 'firebase-admin/firestore';
import { adminDb, createTestIntegration, integrationRef, postJson, type TestIntegration } from '../helpers/stack';
import { readConversationDoc } from '../helpers/messages';
import { claimReady, conversationDeliveries, createTestTopic, expectHttp, fileFixture, op, sleep, waitForMirror, waitForNotifications, writeReply, type TestTopic } from '../helpers/deliveries';

const DAY_S = 86_400;
const MARGIN_MS = 60_000;
const ORDER = { name: 'order_update', language: 'en-US', params: [{ name: 'name' }, { name: 'order', maxLength: 8 }], preview: 'Hi {{name}}, order {{ order }} shipped.' };
const HELLO = { name: 'hello', language: 'pl', params: [], preview: 'Dzień dobry!' };

interface Fixture {
  topic: TestTopic;
  /** Declares a 24 h window and the two templates. */
  channel: TestIntegration;
  /** Never declared a channel (a v1 connector). */
  plain: TestIntegration;
}

const fixture = fileFixture<Fixture>(async ({ track }) => {
  const topic = track(await createTestTopic());
  const [channel, plain] = await Promise.all([createTestIntegration({ topic: topic.topicPath }), createTestIntegration({ topic: topic.topicPath })]);
  const declared = await postJson('/v1/channel', { window: { seconds: DAY_S }, templates: [ORDER, HELLO] }, { key: channel.key, method: 'PUT' });
  expectHttp(declared, 200);
  return { topic, channel, plain };
});

interface Conversation {
  integration: TestIntegration;
  conversationId: string;
  externalConversationId: string;
}

/** A customer message (sent at `sentAt` on the channel's clock) in `externalConversationId` (default: a new one). */
async function customerWrites(integration: TestIntegration, sentAt: number, externalConversationId = `chat-${randomUUID()}`): Promise<Conversation> {
  const res = await postJson('/v1/messages', { eventId: randomUUID(), externalConversationId, sentAt, sender: { externalId: 'cust-1' }, message: { text: 'Hello?' } }, { key: integration.key });
  expectHttp(res, 201);
  return { integration, conversationId: (res.body as { conversationId: string }).conversationId, externalConversationId };
}

const closesAtOf = async (c: Conversation): Promise<number | undefined> => ((await readConversationDoc(c.integration.workspaceId, c.conversationId))?.window as { closesAt?: Timestamp } | undefined)?.closesAt?.toMillis();

/** Writes an operator reply document as given (Admin SDK: no rules); returns its id. */
async function writeReplyDoc(c: Conversation, fields: DocumentData): Promise<string> {
  const ref = adminDb().collection('workspaces').doc(c.integration.workspaceId).collection('conversations').doc(c.conversationId).collection('messages').doc();
  await ref.create({ direction: 'outbound', author: { type: 'operator', uid: 'operator-1' }, createdAt: FieldValue.serverTimestamp(), ...fields });
  return ref.id;
}

/** A refused reply: failed with `code`, no delivery id, no delivery record, never published. */
async function expectRefused(c: Conversation, messageId: string, code: string): Promise<void> {
  const mirror = await waitForMirror(c, messageId);
  expect(mirror).toMatchObject({ status: 'failed', error: { outcome: 'failed', code } });
  expect(mirror.deliveryId).toBeUndefined();
  expect((await conversationDeliveries(c)).filter((d) => d.messageId === messageId)).toEqual([]);
  // A published notification would have arrived by now (the creator publishes right after its commit).
  await sleep(500);
  expect(fixture().topic.received.filter((n) => n.messageId === messageId)).toEqual([]);
}

test("closesAt counts from the customer's sentAt, not the receipt; an older message never moves it back; templateIndex is stored", async () => {
  const { channel } = fixture();
  const sentAt = Date.now() - 2 * 3_600_000;
  const c = await customerWrites(channel, sentAt);
  expect(await closesAtOf(c)).toBe(sentAt + DAY_S * 1000 - MARGIN_MS);
  // An older message arriving late: the window stays.
  await customerWrites(channel, sentAt - 3_600_000, c.externalConversationId);
  expect(await closesAtOf(c)).toBe(sentAt + DAY_S * 1000 - MARGIN_MS);
  // A newer one moves it forward.
  const later = Date.now() - 1000;
  await customerWrites(channel, later, c.externalConversationId);
  expect(await closesAtOf(c)).toBe(later + DAY_S * 1000 - MARGIN_MS);
  const stored = await integrationRef(channel.workspaceId, channel.integrationId).get();
  expect(stored.get('templateIndex')).toEqual({ 'order_update:en-us': ['name', 'order'], 'hello:pl': [] });
});

test('a free-form reply after closesAt fails window_closed: no delivery, never published', async () => {
  const { channel } = fixture();
  // The customer wrote 24 h minus 30 s ago: with the minute of margin, the window closed 30 s ago.
  const c = await customerWrites(channel, Date.now() - DAY_S * 1000 + 30_000);
  await expectRefused(c, await writeReply(c, 'Sorry for the wait!'), 'window_closed');
});

test('a reply written before closesAt but sequenced after it fails window_closed', async () => {
  const { channel } = fixture();
  const c = await customerWrites(channel, Date.now() - DAY_S * 1000 + 30_000);
  // Written (by its createdAt) a minute before the window closed: the service checks when it sequences.
  const messageId = await writeReplyDoc(c, { text: 'Just in time?', createdAt: Timestamp.fromMillis(Date.now() - 90_000) });
  await expectRefused(c, messageId, 'window_closed');
});

test('a template reply goes out of the window: its claim carries message.template and the filled preview', async () => {
  const { channel } = fixture();
  const c = await customerWrites(channel, Date.now() - 2 * DAY_S * 1000);
  const messageId = await writeReplyDoc(c, { template: { name: 'order_update', language: 'en-us', params: { name: 'Zoë', order: 'A-1' } } });
  const mirror = await waitForMirror(c, messageId);
  expect(mirror.status).toBe('queued');
  const claim = await claimReady(channel.key, mirror.deliveryId as string);
  expect(claim.message).toEqual({
    text: 'Hi Zoë, order A-1 shipped.',
    template: { name: 'order_update', language: 'en-US', params: { name: 'Zoë', order: 'A-1' } },
    recipient: { externalConversationId: c.externalConversationId, externalCustomerId: 'cust-1' },
  });
});

test.each([
  ['an unknown template', { name: 'nope', language: 'en-US', params: {} }],
  ['a missing param', { name: 'order_update', language: 'en-US', params: { name: 'Ann' } }],
  ['an extra param', { name: 'order_update', language: 'en-US', params: { name: 'Ann', order: 'A-1', x: 'y' } }],
  ['a param over its maxLength', { name: 'order_update', language: 'en-US', params: { name: 'Ann', order: '123456789' } }],
])('%s: template_invalid, never published', async (_, template) => {
  const { channel } = fixture();
  const c = await customerWrites(channel, Date.now());
  await expectRefused(c, await writeReplyDoc(c, { template }), 'template_invalid');
});

test("the connector's window_closed fail closes the window now; the next free-form reply fails window_closed", async () => {
  const { channel } = fixture();
  const c = await customerWrites(channel, Date.now());
  const first = await waitForMirror(c, await writeReply(c, 'Here is your answer'));
  const claim = await claimReady(channel.key, first.deliveryId as string);
  const before = Date.now();
  const fail = await op('fail', channel.key, { deliveryId: first.deliveryId, leaseId: claim.leaseId, outcome: 'failed', code: 'window_closed' });
  expectHttp(fail, 200);
  const closesAt = await closesAtOf(c);
  expect(closesAt).toBeGreaterThanOrEqual(before - 1000);
  expect(closesAt).toBeLessThanOrEqual(Date.now());
  await expectRefused(c, await writeReply(c, 'Are you there?'), 'window_closed');
});

test('an integration without a channel sees no change: no window, a late reply goes, the claim has no template', async () => {
  const { plain, topic } = fixture();
  const c = await customerWrites(plain, Date.now() - 3 * DAY_S * 1000);
  expect((await readConversationDoc(plain.workspaceId, c.conversationId))?.window).toBeUndefined();
  const mirror = await waitForMirror(c, await writeReply(c, 'Hello again'));
  expect(mirror.status).toBe('queued');
  // Published as any reply is.
  await waitForNotifications(topic, mirror.deliveryId as string, 1);
  const claim = await claimReady(plain.key, mirror.deliveryId as string);
  expect(Object.keys(claim.message).sort()).toEqual(['recipient', 'text']);
  // A template reply on it names no declared template.
  await expectRefused(c, await writeReplyDoc(c, { template: { name: 'hello', language: 'pl', params: {} } }), 'template_invalid');
});

test("a conversation whose customer wrote before the window was declared counts from that sentAt: an hour ago goes, two days ago fails window_closed", async () => {
  const { topic } = fixture();
  const late = await createTestIntegration({ topic: topic.topicPath });
  // The customers write while the integration declares no channel: no `window` is stored, `lastCustomerSentAt` is.
  const recent = await customerWrites(late, Date.now() - 3_600_000);
  const old = await customerWrites(late, Date.now() - 2 * DAY_S * 1000);
  expect(await closesAtOf(recent)).toBeUndefined();
  expectHttp(await postJson('/v1/channel', { window: { seconds: DAY_S }, templates: [ORDER] }, { key: late.key, method: 'PUT' }), 200);
  // Sequencing reads the integration as it is now: the window applies, from the customer's sentAt.
  const goes = await waitForMirror(recent, await writeReply(recent, 'Still within the day'));
  expect(goes.status).toBe('queued');
  await waitForNotifications(topic, goes.deliveryId as string, 1);
  await expectRefused(old, await writeReply(old, 'Two days later'), 'window_closed');
});
