/**
 * Privacy of conversations the desk starts (docs/privacy.md#addresses-of-conversations-the-desk-starts)
 * through the real start trigger, the connector's HTTP calls, the export and erasure triggers and
 * the retention pass:
 *   - a completed start whose customer answered: the erasure of that customer removes the address
 *     book entry, the start requests, the started conversation (with a start to the address taken
 *     before the `complete`), the thread's conversation, its messages and the delivery records
 *     naming the address; the export holds all of it first;
 *   - a completed start the customer never answered: exported and erased with the customer;
 *   - a shared thread keeps its operator messages and delivery records without the address: those
 *     of a start that failed, was resent and then completed included;
 *   - starts that never completed (failed by the connector, still queued, refused): exported and
 *     erased by a request naming the address as `externalCustomerId`; an address the book records
 *     for another customer is left to that customer's erasure;
 *   - retention: a start request goes with its `requestedAt`, an address book entry once the
 *     conversation it names is gone.
 */
import { randomUUID } from 'node:crypto';
import { FieldValue, Timestamp, type DocumentData } from 'firebase-admin/firestore';
import { exportFilePath } from '../../../functions/src/privacy/export';
import { runRetention } from '../../../functions/src/privacy/retention';
import { startAddressId, type StartAddress } from '../../../functions/src/rules/starts';
import { adminDb, createTestIntegration, integrationRef, postJson, type TestIntegration } from '../helpers/stack';
import { claimReady, createTestTopic, eventually, expectOk, expectSent, failAndRequestResend, fileFixture, op, type TestTopic } from '../helpers/deliveries';
import { age, localStore, requestErasure, waitForErasure, ws } from './helpers';

// A start end to end is several triggers and calls; the first meets a cold trigger.
jest.setTimeout(180_000);

const DAY = 86_400_000;

interface Fixture {
  topic: TestTopic;
  /** Starts by email and handle, no window. */
  open: TestIntegration;
}

const fixture = fileFixture<Fixture>(async (file) => {
  const topic = file.track(await createTestTopic());
  const open = await createTestIntegration({ topic: topic.topicPath });
  await integrationRef(open.workspaceId, open.integrationId).update({ conversations: { start: { addressKinds: ['email', 'handle'] } } });
  return { topic, open };
});

const base = (integration: TestIntegration) => ws(integration.workspaceId);
const startRef = (integration: TestIntegration, startId: string) => base(integration).collection('conversationStarts').doc(startId);
const bookRef = (integration: TestIntegration, address: StartAddress) => base(integration).collection('startAddresses').doc(startAddressId(integration.integrationId, address));
const conversationRef = (integration: TestIntegration, conversationId: string) => base(integration).collection('conversations').doc(conversationId);
const messagesOf = async (integration: TestIntegration, conversationId: string) => (await conversationRef(integration, conversationId).collection('messages').get()).docs;
const deliveriesOf = async (integration: TestIntegration, conversationId: string) => (await base(integration).collection('deliveries').where('conversationId', '==', conversationId).get()).docs;
const exists = async (ref: FirebaseFirestore.DocumentReference) => (await ref.get()).exists;

/** Writes a start as the console does (the rules' shape) and waits for the service's answer. */
async function start(integration: TestIntegration, to: StartAddress, text: string, extra: Record<string, unknown> = {}): Promise<{ startId: string; answer: DocumentData }> {
  const startId = `st_${randomUUID()}`;
  await startRef(integration, startId).set({ integrationId: integration.integrationId, uid: 'operator-1', requestedAt: FieldValue.serverTimestamp(), to, text, ...extra });
  const answer = await eventually(async () => {
    const data = (await startRef(integration, startId).get()).data();
    return data?.result !== undefined || data?.error !== undefined ? data : undefined;
  }, `the answer of start ${startId}`, 60_000);
  return { startId, answer };
}

const conversationOf = (answer: DocumentData): string => (answer.result as { conversationId: string }).conversationId;

/** The start delivery of a started conversation (waits for the trigger). */
function startDelivery(integration: TestIntegration, conversationId: string): Promise<DocumentData> {
  return eventually(async () => (await deliveriesOf(integration, conversationId)).map((d) => d.data()).find((d) => d.start !== undefined), `the start delivery of ${conversationId}`, 30_000);
}

/** The connector sends the start and names the thread: returns the thread's conversation id (the delivery's, after the move). */
async function complete(integration: TestIntegration, deliveryId: string, thread: { externalConversationId: string; externalCustomerId: string }): Promise<string> {
  const claim = await claimReady(integration.key, deliveryId);
  expectOk(await op('start', integration.key, { deliveryId, leaseId: claim.leaseId }), { status: 'sending' });
  expectSent(await op('complete', integration.key, { deliveryId, leaseId: claim.leaseId, providerMessageIds: [`p-${randomUUID()}`], conversation: thread }), deliveryId);
  return String((await base(integration).collection('deliveries').doc(deliveryId).get()).get('conversationId'));
}

async function customerWrites(integration: TestIntegration, externalConversationId: string, externalId: string, text: string): Promise<string> {
  const res = await postJson('/v1/messages', { eventId: randomUUID(), externalConversationId, sender: { externalId }, message: { text } }, { key: integration.key });
  if (res.status !== 201) throw new Error(`message refused: ${res.status} ${res.text}`);
  return (res.body as { conversationId: string }).conversationId;
}

/** Requests an export of the customer as the console writes it, and reads its lines once done. */
async function exportOf(integration: TestIntegration, externalCustomerId: string): Promise<Array<Record<string, unknown>>> {
  const exportId = `ex-${randomUUID()}`;
  await base(integration).collection('exports').doc(exportId).create({ integrationId: integration.integrationId, externalCustomerId, requestedAt: FieldValue.serverTimestamp(), requestedBy: 'admin-1' });
  await eventually(async () => ((await base(integration).collection('exports').doc(exportId).get()).get('status') === 'done' ? true : undefined), 'the export', 30_000);
  const text = (await localStore().get(exportFilePath(integration.workspaceId, exportId)))?.toString('utf8') ?? '';
  return text.trim().split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Record<string, unknown>);
}

const ofType = (lines: Array<Record<string, unknown>>, type: string) => lines.filter((l) => l.type === type);

async function erase(integration: TestIntegration, externalCustomerId: string): Promise<DocumentData> {
  return waitForErasure(integration.workspaceId, await requestErasure(integration, externalCustomerId), 60_000);
}

test('a completed start the customer answered: exported, then erased with the customer (address book, requests, started conversation, thread, messages, delivery records)', async () => {
  const { open } = fixture();
  const email = `ana-${randomUUID().slice(0, 6)}@example.com`;
  const address: StartAddress = { kind: 'email', value: email };
  const first = await start(open, address, 'Hello Ana');
  const started = conversationOf(first.answer);
  // A second start before the channel named the thread: a reply in the started conversation, which it keeps after the complete.
  const second = await start(open, address, 'And one more thing');
  expect(second.answer.result).toEqual({ conversationId: started, reused: true });
  const delivery = await startDelivery(open, started);
  const threadId = `mail-${randomUUID()}`;
  const joined = await complete(open, delivery.deliveryId as string, { externalConversationId: threadId, externalCustomerId: email });
  expect(joined).not.toBe(started);
  expect(await customerWrites(open, threadId, email, 'Thanks!')).toBe(joined);
  // Someone else's start stays through it all.
  const other = `bo-${randomUUID().slice(0, 6)}@example.com`;
  const otherStart = await start(open, { kind: 'email', value: other }, 'Hello Bo');
  await eventually(async () => ((await deliveriesOf(open, started)).length === 1 && (await messagesOf(open, started)).length === 1 ? true : undefined), 'the reused start in the started conversation');

  const lines = await exportOf(open, email);
  expect(ofType(lines, 'start_address')).toEqual([expect.objectContaining({ kind: 'email', value: email, externalCustomerId: email, conversationId: joined })]);
  expect(ofType(lines, 'conversation_start').map((l) => l.startId).sort()).toEqual([first.startId, second.startId].sort());
  expect(ofType(lines, 'conversation').map((l) => l.conversationId).sort()).toEqual([joined, started].sort());
  expect(ofType(lines, 'conversation').find((l) => l.conversationId === joined)).toMatchObject({ to: address, origin: 'desk', soleCustomer: true });
  expect(ofType(lines, 'message').map((l) => l.text).sort()).toEqual(['And one more thing', 'Hello Ana', 'Thanks!']);
  // The start's delivery record (with the address) and the reply the second start became.
  expect(ofType(lines, 'delivery').map((l) => (l.start as { to?: unknown } | undefined)?.to ?? null)).toEqual(expect.arrayContaining([address, null]));
  expect(ofType(lines, 'delivery')).toHaveLength(2);
  expect(JSON.stringify(lines)).not.toContain(other);

  const audit = await erase(open, email);
  expect(audit.counts).toMatchObject({ conversations: 2, messages: 3, deliveries: 2 });
  expect(audit.externalConversationIds).toEqual([threadId]);
  expect(await exists(bookRef(open, address))).toBe(false);
  expect(await exists(startRef(open, first.startId))).toBe(false);
  expect(await exists(startRef(open, second.startId))).toBe(false);
  for (const id of [started, joined]) {
    expect(await exists(conversationRef(open, id))).toBe(false);
    expect(await exists(base(open).collection('deliveryQueues').doc(id))).toBe(false);
    expect(await messagesOf(open, id)).toEqual([]);
    expect(await deliveriesOf(open, id)).toEqual([]);
  }
  expect(JSON.stringify(await exportOf(open, email))).not.toContain(email);
  expect(await exists(startRef(open, otherStart.startId))).toBe(true);
  expect(await exists(conversationRef(open, conversationOf(otherStart.answer)))).toBe(true);
  expect(await exists(bookRef(open, { kind: 'email', value: other }))).toBe(true);
});

test('a completed start the customer never answered: exported and erased with its customer; an erasure naming the address of another customer leaves it', async () => {
  const { open } = fixture();
  const handle = `@cy-${randomUUID().slice(0, 6)}`;
  const customer = `user-${randomUUID().slice(0, 8)}`;
  const address: StartAddress = { kind: 'handle', value: handle };
  const { startId, answer } = await start(open, address, 'Are you still interested?');
  const started = conversationOf(answer);
  const delivery = await startDelivery(open, started);
  const threadId = `dm-${randomUUID()}`;
  const joined = await complete(open, delivery.deliveryId as string, { externalConversationId: threadId, externalCustomerId: customer });

  const lines = await exportOf(open, customer);
  // The thread's conversation (which lists the customer) and the started one merged into it.
  expect(ofType(lines, 'conversation').map((l) => l.conversationId).sort()).toEqual([joined, started].sort());
  expect(ofType(lines, 'conversation').find((l) => l.conversationId === joined)).toMatchObject({ soleCustomer: true, to: address, externalConversationId: threadId, mergedFrom: [started] });
  expect(ofType(lines, 'conversation').find((l) => l.conversationId === started)).toMatchObject({ to: address, mergedInto: joined });
  expect(ofType(lines, 'message')).toEqual([expect.objectContaining({ conversationId: joined, text: 'Are you still interested?', start: { startId, to: address } })]);
  expect(ofType(lines, 'delivery')).toEqual([expect.objectContaining({ deliveryId: delivery.deliveryId, status: 'sent', start: expect.objectContaining({ to: address }) })]);
  expect(ofType(lines, 'start_address')).toEqual([expect.objectContaining({ value: handle, externalCustomerId: customer })]);
  expect(ofType(lines, 'conversation_start')).toEqual([expect.objectContaining({ startId })]);

  // The address is customer `customer`'s: a request naming the address itself finds nothing of it.
  const byAddress = await erase(open, handle);
  expect(byAddress.counts).toMatchObject({ conversations: 0, messages: 0, deliveries: 0 });
  expect(await exists(bookRef(open, address))).toBe(true);
  expect(await exists(startRef(open, startId))).toBe(true);
  expect(ofType(await exportOf(open, handle), 'conversation_start')).toEqual([]);

  const audit = await erase(open, customer);
  expect(audit.counts).toMatchObject({ conversations: 2, messages: 1, deliveries: 1 });
  expect(audit.externalConversationIds).toEqual([threadId]);
  for (const id of [started, joined]) expect(await exists(conversationRef(open, id))).toBe(false);
  expect(await messagesOf(open, joined)).toEqual([]);
  expect(await exists(base(open).collection('deliveries').doc(delivery.deliveryId as string))).toBe(false);
  expect(await exists(bookRef(open, address))).toBe(false);
  expect(await exists(startRef(open, startId))).toBe(false);
});

test('a shared thread keeps its operator messages, but the erased customer\'s start address goes from them; the started conversation and the address book entry go', async () => {
  const { open } = fixture();
  const handle = `@fin-${randomUUID().slice(0, 6)}`;
  const address: StartAddress = { kind: 'handle', value: handle };
  const { startId, answer } = await start(open, address, 'Welcome to the group');
  const started = conversationOf(answer);
  const delivery = await startDelivery(open, started);
  const threadId = `group-${randomUUID()}`;
  const joined = await complete(open, delivery.deliveryId as string, { externalConversationId: threadId, externalCustomerId: handle });
  await customerWrites(open, threadId, handle, 'Hi all');
  await customerWrites(open, threadId, `@gus-${randomUUID().slice(0, 6)}`, 'Hello from Gus');
  expect((await conversationRef(open, joined).get()).get('customerIds')).toHaveLength(2);

  const audit = await erase(open, handle);
  expect(audit.counts).toMatchObject({ conversations: 1, messages: 1 });
  const kept = (await conversationRef(open, joined).get()).data();
  expect(kept).toBeDefined();
  expect(kept).not.toHaveProperty('to');
  const texts = (await messagesOf(open, joined)).map((m) => m.data());
  expect(texts.map((m) => m.text).sort()).toEqual(['Hello from Gus', 'Welcome to the group']);
  expect(texts.find((m) => m.text === 'Welcome to the group')?.start).toEqual({ startId });
  const record = (await base(open).collection('deliveries').doc(delivery.deliveryId as string).get()).data();
  expect(record?.status).toBe('sent');
  expect(record?.start).toEqual({ thread: { externalConversationId: threadId } });
  expect(JSON.stringify(kept) + JSON.stringify(texts) + JSON.stringify(record)).not.toContain(handle);
  expect(await exists(conversationRef(open, started))).toBe(false);
  expect(await exists(bookRef(open, address))).toBe(false);
  expect(await exists(startRef(open, startId))).toBe(false);
});

test('a shared thread, a start failed, resent, then completed: the sent resend keeps no address; the failed first delivery goes with the started conversation', async () => {
  const { open } = fixture();
  const handle = `@hal-${randomUUID().slice(0, 6)}`;
  const address: StartAddress = { kind: 'handle', value: handle };
  const { answer } = await start(open, address, 'Second try');
  const started = conversationOf(answer);
  const first = await startDelivery(open, started);
  const [message] = await messagesOf(open, started);
  await failAndRequestResend(open.key, first.deliveryId as string, message!.ref);
  const resent = await eventually(async () => (await deliveriesOf(open, started)).map((d) => d.data()).find((d) => d.deliveryId !== first.deliveryId), 'the resent start', 30_000);
  const threadId = `group-${randomUUID()}`;
  const joined = await complete(open, resent.deliveryId as string, { externalConversationId: threadId, externalCustomerId: handle });
  await customerWrites(open, threadId, handle, 'Got it this time');
  await customerWrites(open, threadId, `@ivy-${randomUUID().slice(0, 6)}`, 'Me too');
  const recordOf = async (deliveryId: unknown) => (await base(open).collection('deliveries').doc(String(deliveryId)).get()).data();
  // Before: both records hold the address (the failed first one and the sent resend).
  expect((await recordOf(first.deliveryId))?.start).toEqual({ to: address });
  expect((await recordOf(resent.deliveryId))?.start).toMatchObject({ to: address, thread: { externalConversationId: threadId, externalCustomerId: handle } });

  await erase(open, handle);
  const [failedRecord, sentRecord] = [await recordOf(first.deliveryId), await recordOf(resent.deliveryId)];
  // The failed first delivery stayed in the started conversation, which goes whole with the customer.
  expect(failedRecord).toBeUndefined();
  expect(await exists(conversationRef(open, started))).toBe(false);
  expect(sentRecord).toMatchObject({ status: 'sent', start: { thread: { externalConversationId: threadId } } });
  const kept = (await messagesOf(open, joined)).map((m) => m.data());
  expect(kept.map((m) => m.text).sort()).toEqual(['Me too', 'Second try']);
  expect(JSON.stringify(failedRecord) + JSON.stringify(sentRecord) + JSON.stringify(kept)).not.toContain(handle);
});

test('starts that never completed (failed by the connector, still queued, refused): exported and erased by a request naming the address', async () => {
  const { open } = fixture();
  const failedTo = `dee-${randomUUID().slice(0, 6)}@example.com`;
  const queuedTo = `eve-${randomUUID().slice(0, 6)}@example.com`;
  const failed = await start(open, { kind: 'email', value: failedTo }, 'We tried');
  const failedConversation = conversationOf(failed.answer);
  const failedDelivery = await startDelivery(open, failedConversation);
  const claim = await claimReady(open.key, failedDelivery.deliveryId as string);
  expectOk(await op('fail', open.key, { deliveryId: failedDelivery.deliveryId, leaseId: claim.leaseId, outcome: 'failed', code: 'recipient_unreachable' }), { status: 'failed' });
  // Refused (the kind is not allowed), so it never reached the address book: found by the value all the same.
  const refused = await start(open, { kind: 'phone', value: failedTo } as unknown as StartAddress, 'Wrong kind');
  expect(refused.answer.error).toMatchObject({ code: 'address_kind_not_allowed' });
  const queued = await start(open, { kind: 'email', value: queuedTo }, 'Still waiting');
  const queuedConversation = conversationOf(queued.answer);
  const queuedDelivery = await startDelivery(open, queuedConversation);
  expect(queuedDelivery.status).toBe('queued');

  const lines = await exportOf(open, failedTo);
  expect(ofType(lines, 'start_address')).toEqual([expect.objectContaining({ kind: 'email', value: failedTo, externalCustomerId: null, conversationId: failedConversation })]);
  expect(ofType(lines, 'conversation_start').map((l) => l.startId).sort()).toEqual([failed.startId, refused.startId].sort());
  expect(ofType(lines, 'conversation')).toEqual([expect.objectContaining({ conversationId: failedConversation, waitingForChannel: true, to: { kind: 'email', value: failedTo } })]);
  expect(ofType(lines, 'message')).toEqual([expect.objectContaining({ text: 'We tried' })]);
  expect(ofType(lines, 'delivery')).toEqual([expect.objectContaining({ status: 'failed' })]);
  expect(JSON.stringify(lines)).not.toContain(queuedTo);

  const audit = await erase(open, failedTo);
  expect(audit.counts).toMatchObject({ conversations: 1, messages: 1, deliveries: 1 });
  expect(await exists(bookRef(open, { kind: 'email', value: failedTo }))).toBe(false);
  expect(await exists(startRef(open, failed.startId))).toBe(false);
  expect(await exists(startRef(open, refused.startId))).toBe(false);
  expect(await exists(conversationRef(open, failedConversation))).toBe(false);
  expect(await deliveriesOf(open, failedConversation)).toEqual([]);
  // The queued one is not this request's.
  expect(await exists(startRef(open, queued.startId))).toBe(true);
  expect((await base(open).collection('deliveries').doc(queuedDelivery.deliveryId as string).get()).get('status')).toBe('queued');

  // Still queued when its address is erased: the delivery fails `erased` first (no connector may send it), then everything goes.
  const queuedLines = await exportOf(open, queuedTo);
  expect(ofType(queuedLines, 'delivery')).toEqual([expect.objectContaining({ status: 'queued', start: { to: { kind: 'email', value: queuedTo } } })]);
  const queuedAudit = await erase(open, queuedTo);
  expect(queuedAudit.counts).toMatchObject({ conversations: 1, messages: 1, deliveries: 1 });
  const res = await op('claim', open.key, { deliveryId: queuedDelivery.deliveryId, requestId: randomUUID() });
  expect(res.status).toBe(404);
  expect(await exists(bookRef(open, { kind: 'email', value: queuedTo }))).toBe(false);
  expect(await exists(startRef(open, queued.startId))).toBe(false);
  expect(await exists(conversationRef(open, queuedConversation))).toBe(false);
});

test('retention: a start request goes with its requestedAt; an address book entry once the conversation it names is gone', async () => {
  const integration = await createTestIntegration({ topic: fixture().topic.topicPath });
  await integrationRef(integration.workspaceId, integration.integrationId).update({ conversations: { start: { addressKinds: ['email'] } } });
  const oldTo: StartAddress = { kind: 'email', value: `old-${randomUUID().slice(0, 6)}@example.com` };
  const liveTo: StartAddress = { kind: 'email', value: `live-${randomUUID().slice(0, 6)}@example.com` };
  const old = await start(integration, oldTo, 'Long ago');
  const oldStarted = conversationOf(old.answer);
  const oldJoined = await complete(integration, (await startDelivery(integration, oldStarted)).deliveryId as string, { externalConversationId: `mail-${randomUUID()}`, externalCustomerId: oldTo.value });
  const live = await start(integration, liveTo, 'Recently');
  const liveStarted = conversationOf(live.answer);
  const liveJoined = await complete(integration, (await startDelivery(integration, liveStarted)).deliveryId as string, { externalConversationId: `mail-${randomUUID()}`, externalCustomerId: liveTo.value });
  const settings = base(integration).collection('settings').doc('retention');
  const pass = () => runRetention(adminDb(), localStore(), { now: Date.now(), deleteDue: true, workspaceIds: [integration.workspaceId] });

  // Ten years: the requests are stamped at their time plus the period; the entries, whose conversations exist, are not.
  await settings.set({ days: 3650 });
  await pass();
  const stamped = (await startRef(integration, old.startId).get()).get('expireAt') as Timestamp;
  expect(stamped.toMillis()).toBeGreaterThan(Date.now() + 3600 * DAY);
  expect((await bookRef(integration, oldTo).get()).get('expireAt')).toBeUndefined();

  // The old start and everything of its conversations are two days old; the live conversation got an answer just now.
  await age(startRef(integration, old.startId), 'requestedAt', 2 * DAY);
  await age(bookRef(integration, oldTo), 'updatedAt', 2 * DAY);
  await age(bookRef(integration, liveTo), 'updatedAt', 2 * DAY);
  for (const id of [oldStarted, oldJoined]) {
    await age(conversationRef(integration, id), 'lastMessageAt', 2 * DAY);
    for (const m of await messagesOf(integration, id)) await age(m.ref, 'createdAt', 2 * DAY);
    for (const d of await deliveriesOf(integration, id)) await age(d.ref, 'createdAt', 2 * DAY);
  }
  await settings.set({ days: 1 });
  await pass();
  await pass();
  expect(await exists(conversationRef(integration, oldJoined))).toBe(false);
  expect(await exists(conversationRef(integration, oldStarted))).toBe(false);
  expect(await exists(startRef(integration, old.startId))).toBe(false);
  expect(await exists(bookRef(integration, oldTo))).toBe(false);
  // Its conversation lives: the entry stays (unstamped) however old its own time, and so does the recent request.
  expect(await exists(conversationRef(integration, liveJoined))).toBe(true);
  expect(await exists(bookRef(integration, liveTo))).toBe(true);
  expect((await bookRef(integration, liveTo).get()).get('expireAt')).toBeUndefined();
  expect(await exists(startRef(integration, live.startId))).toBe(true);
  expect(((await startRef(integration, live.startId).get()).get('expireAt') as Timestamp).toMillis()).toBeGreaterThan(Date.now());
  // The next start to the live address still finds its conversation.
  expect((await start(integration, liveTo, 'Again')).answer.result).toEqual({ conversationId: liveJoined, reused: true });
});
