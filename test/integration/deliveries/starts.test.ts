/**
 * Conversations the desk starts (docs/contract.md#conversations-the-desk-starts) through the real
 * start trigger, outbox, Pub/Sub and HTTP: a start document (written here with the Admin SDK, as
 * the rules let a member write it: console/starts-rules.test.ts) becomes a conversation with its
 * first message and a delivery of kind `start`, notified with the attribute `kind: "start"`, claimed
 * with the address, completed with the thread (400 `conversation_required` without it, the lease
 * kept), after which the customer's answer joins it. Reuse by a known address, the merge when the
 * customer wrote first, failure and Resend, every refusal code with nothing written, and the races
 * (two starts to one new address, a start taken twice, an answer racing the complete).
 */
import { randomUUID } from 'node:crypto';
import { FieldValue, type DocumentData } from 'firebase-admin/firestore';
import { takeStart } from '../../../functions/src/deliveries/starts';
import { startedConversationId } from '../../../functions/src/rules/starts';
import { adminDb, createTestIntegration, integrationRef, postJson, type TestIntegration } from '../helpers/stack';
import { exportFilePath } from '../../../functions/src/privacy/export';
import { localStore, requestErasure, waitForErasure } from '../privacy/helpers';
import { attributeLog, claimReady, createTestTopic, eventually, expectApiError, expectOk, expectSent, failAndRequestResend, fileFixture, op, type Published, type TestTopic } from '../helpers/deliveries';

// The first start of a run meets a cold trigger in the emulator; a start end to end is several triggers and calls.
jest.setTimeout(120_000);

interface Fixture {
  topic: TestTopic;
  /** Starts by email and handle, no window. */
  open: TestIntegration;
  /** Starts by handle, a window and one template. */
  windowed: TestIntegration;
  /** No `conversations`: starts are off. */
  off: TestIntegration;
  /** Starts allowed, replies disabled. */
  silent: TestIntegration;
  published: Awaited<ReturnType<typeof attributeLog>>;
}

const TEMPLATE = { name: 'hello', language: 'en-US', params: [{ name: 'name' }], preview: 'Hi {{name}}, we have news.' };

const fixture = fileFixture<Fixture>(async (file) => {
  const topic = file.track(await createTestTopic());
  const make = () => createTestIntegration({ topic: topic.topicPath });
  const [open, windowed, off, silent] = await Promise.all([make(), make(), make(), make()]);
  await integrationRef(open.workspaceId, open.integrationId).update({ conversations: { start: { addressKinds: ['email', 'handle'] } } });
  await integrationRef(windowed.workspaceId, windowed.integrationId).update({
    conversations: { start: { addressKinds: ['handle'] } },
    channel: { window: { seconds: 86_400 }, templates: [TEMPLATE], updatedAt: Date.now() },
  });
  await integrationRef(silent.workspaceId, silent.integrationId).update({ conversations: { start: { addressKinds: ['email'] } }, 'replies.enabled': false });
  const published = file.track(await attributeLog(topic.topicPath));
  return { topic, open, windowed, off, silent, published };
});

const ws = (integration: TestIntegration) => adminDb().collection('workspaces').doc(integration.workspaceId);
const startRef = (integration: TestIntegration, startId: string) => ws(integration).collection('conversationStarts').doc(startId);
const conversationDoc = async (integration: TestIntegration, conversationId: string): Promise<DocumentData | undefined> => (await ws(integration).collection('conversations').doc(conversationId).get()).data();
const messagesOf = async (integration: TestIntegration, conversationId: string) => (await ws(integration).collection('conversations').doc(conversationId).collection('messages').get()).docs;
const deliveriesOf = async (integration: TestIntegration) => (await ws(integration).collection('deliveries').get()).docs.map((d) => d.data());

/** Writes a start as the console does (the rules' shape); returns its id. */
async function writeStart(integration: TestIntegration, fields: Record<string, unknown>, startId = `st_${randomUUID()}`): Promise<string> {
  await startRef(integration, startId).set({ integrationId: integration.integrationId, uid: 'operator-1', requestedAt: FieldValue.serverTimestamp(), ...fields });
  return startId;
}

/** The start's answer (`result` or `error`) once the trigger wrote it. */
function answerOf(integration: TestIntegration, startId: string): Promise<DocumentData> {
  return eventually(async () => {
    const data = (await startRef(integration, startId).get()).data();
    return data?.result !== undefined || data?.error !== undefined ? data : undefined;
  }, `the answer of start ${startId}`, 60_000);
}

/** The start delivery of a conversation (waits for it). */
function startDelivery(integration: TestIntegration, conversationId: string): Promise<DocumentData> {
  return eventually(async () => (await deliveriesOf(integration)).find((d) => d.conversationId === conversationId && d.start !== undefined), `the start delivery of ${conversationId}`, 20_000);
}

function publishedFor(deliveryId: string): Promise<Published[]> {
  return eventually(async () => {
    const found = fixture().published.seen.get(deliveryId) ?? [];
    return found.length > 0 ? found : undefined;
  }, `the notification of ${deliveryId}`, 20_000);
}

/** A customer message from the thread `externalConversationId`; returns the conversation id it was filed under. */
async function customerWrites(integration: TestIntegration, externalConversationId: string, externalId: string, text = 'Thanks!'): Promise<string> {
  const res = await postJson('/v1/messages', { eventId: randomUUID(), externalConversationId, sender: { externalId }, message: { text } }, { key: integration.key });
  if (res.status !== 201) throw new Error(`message refused: ${res.status} ${res.text}`);
  return (res.body as { conversationId: string }).conversationId;
}

/** Claims, starts and completes a start delivery with the thread; returns the claim. */
async function completeStart(integration: TestIntegration, deliveryId: string, thread: { externalConversationId: string; externalCustomerId: string; metadata?: Record<string, string> }) {
  const claim = await claimReady(integration.key, deliveryId);
  expectOk(await op('start', integration.key, { deliveryId, leaseId: claim.leaseId }), { status: 'sending' });
  expectSent(await op('complete', integration.key, { deliveryId, leaseId: claim.leaseId, providerMessageIds: [`p-${randomUUID()}`], conversation: thread }), deliveryId);
  return claim;
}

test('a start end to end: conversation, first message, start delivery (notified with kind start, claimed with the address), conversation_required keeps the lease, complete joins the thread, the answer lands there', async () => {
  const { open } = fixture();
  const address = `ana-${randomUUID().slice(0, 6)}@example.com`;
  const startId = await writeStart(open, { to: { kind: 'email', value: address }, text: 'Hello Ana, your order is ready.' });
  const answer = await answerOf(open, startId);
  const started = startedConversationId(open.integrationId, startId);
  expect(answer.result).toEqual({ conversationId: started, reused: false });
  expect(await conversationDoc(open, started)).toMatchObject({ origin: 'desk', waitingForChannel: true, startId, to: { kind: 'email', value: address }, integrationId: open.integrationId });
  const [message] = await messagesOf(open, started);
  expect(message?.id).toMatch(/^s_/);
  expect(message?.data()).toMatchObject({ direction: 'outbound', author: { type: 'operator', uid: 'operator-1' }, text: 'Hello Ana, your order is ready.', start: { startId, to: { kind: 'email', value: address } } });

  const delivery = await startDelivery(open, started);
  const [notification] = await publishedFor(delivery.deliveryId as string);
  expect(notification?.attributes.kind).toBe('start');
  expect(notification?.body).toEqual({ deliveryId: delivery.deliveryId, workspaceId: open.workspaceId, integrationId: open.integrationId, conversationId: started, messageId: message?.id });

  const claimRes = await op('claim', open.key, { deliveryId: delivery.deliveryId, requestId: randomUUID() });
  const claim = claimRes.body as { leaseId: string; leaseExpiresAt: number };
  expect(claimRes.body).toEqual({ status: 'ready', kind: 'start', leaseId: claim.leaseId, leaseExpiresAt: claim.leaseExpiresAt, message: { text: 'Hello Ana, your order is ready.', recipient: { address: { kind: 'email', value: address } } } });
  expectOk(await op('start', open.key, { deliveryId: delivery.deliveryId, leaseId: claim.leaseId }), { status: 'sending' });
  expectApiError(await op('complete', open.key, { deliveryId: delivery.deliveryId, leaseId: claim.leaseId, providerMessageIds: ['p-1'] }), 400, 'conversation_required');
  expect((await adminDb().doc(`workspaces/${open.workspaceId}/deliveries/${String(delivery.deliveryId)}`).get()).get('status')).toBe('sending');

  const thread = { externalConversationId: `mail-${randomUUID()}`, externalCustomerId: address, metadata: { ticket: 'T-1' } };
  expectSent(await op('complete', open.key, { deliveryId: delivery.deliveryId, leaseId: claim.leaseId, providerMessageIds: ['p-1'], conversation: thread }), delivery.deliveryId as string);
  // The thread's conversation is where the customer's answer goes: the start is there now.
  const joined = await customerWrites(open, thread.externalConversationId, address, 'Great, thanks');
  expect(joined).not.toBe(started);
  expect(await conversationDoc(open, started)).toMatchObject({ mergedInto: joined });
  expect(await conversationDoc(open, started)).not.toHaveProperty('waitingForChannel');
  expect(await conversationDoc(open, joined)).toMatchObject({ origin: 'desk', startId, mergedFrom: [started], externalConversationId: thread.externalConversationId, metadata: { ticket: 'T-1' } });
  const moved = await messagesOf(open, joined);
  expect(moved.map((m) => m.data().direction).sort()).toEqual(['inbound', 'outbound']);
  expect(moved.find((m) => m.id === message?.id)?.data()).toMatchObject({ text: 'Hello Ana, your order is ready.', delivery: { status: 'sent' }, start: { startId } });
  expect(await messagesOf(open, started)).toEqual([]);
  const record = (await adminDb().doc(`workspaces/${open.workspaceId}/deliveries/${String(delivery.deliveryId)}`).get()).data();
  expect(record).toMatchObject({ status: 'sent', conversationId: joined, start: { thread: { externalConversationId: thread.externalConversationId, externalCustomerId: address } } });
  // A retried complete changes nothing.
  expectSent(await op('complete', open.key, { deliveryId: delivery.deliveryId, leaseId: claim.leaseId, providerMessageIds: ['p-1'], conversation: thread }), delivery.deliveryId as string);

  // The next start to the address is a reply in that conversation (no second conversation).
  const again = await writeStart(open, { to: { kind: 'email', value: address }, text: 'One more thing' });
  expect((await answerOf(open, again)).result).toEqual({ conversationId: joined, reused: true });
  const reply = await eventually(async () => (await deliveriesOf(open)).find((d) => d.conversationId === joined && d.text === 'One more thing'), 'the reused start delivery', 20_000);
  expect(reply.start).toBeUndefined();
  const replyClaim = await claimReady(open.key, reply.deliveryId as string);
  expect(replyClaim).toMatchObject({ message: { recipient: { externalConversationId: thread.externalConversationId, externalCustomerId: address } } });
  expect(await conversationDoc(open, startedConversationId(open.integrationId, again))).toBeUndefined();
});

test('the customer wrote from the thread before (or answered before complete): the started conversation merges into that one, nothing lost or doubled', async () => {
  const { open } = fixture();
  const handle = `@bo-${randomUUID().slice(0, 6)}`;
  const threadId = `dm-${randomUUID()}`;
  const existing = await customerWrites(open, threadId, handle, 'Earlier question');
  const startId = await writeStart(open, { to: { kind: 'handle', value: handle }, text: 'Following up' });
  const started = ((await answerOf(open, startId)).result as { conversationId: string }).conversationId;
  const delivery = await startDelivery(open, started);
  await completeStart(open, delivery.deliveryId as string, { externalConversationId: threadId, externalCustomerId: handle });
  expect(await conversationDoc(open, started)).toMatchObject({ mergedInto: existing });
  const target = await conversationDoc(open, existing);
  expect(target).toMatchObject({ mergedFrom: [started], externalConversationId: threadId });
  expect(target).not.toHaveProperty('origin');
  const texts = (await messagesOf(open, existing)).map((m) => m.data().text as string).sort();
  expect(texts).toEqual(['Earlier question', 'Following up']);
  expect(await messagesOf(open, started)).toEqual([]);
  expect((await deliveriesOf(open)).filter((d) => d.deliveryId === delivery.deliveryId)).toHaveLength(1);
});

test('a start fails like a reply and is resent as a start', async () => {
  const { open } = fixture();
  const startId = await writeStart(open, { to: { kind: 'handle', value: `@cy-${randomUUID().slice(0, 6)}` }, text: 'Hi' });
  const started = ((await answerOf(open, startId)).result as { conversationId: string }).conversationId;
  const first = await startDelivery(open, started);
  const [message] = await messagesOf(open, started);
  await failAndRequestResend(open.key, first.deliveryId as string, message!.ref);
  const second = await eventually(async () => (await deliveriesOf(open)).find((d) => d.conversationId === started && d.deliveryId !== first.deliveryId), 'the resent start', 20_000);
  expect(second).toMatchObject({ start: first.start, text: 'Hi', status: 'queued' });
  const again = await claimReady(open.key, second.deliveryId as string);
  expect(again).toMatchObject({ kind: 'start', message: { recipient: { address: first.start.to } } });
  expect(await conversationDoc(open, started)).toMatchObject({ waitingForChannel: true });
});

test('a template start on a windowed channel carries the template and its filled preview', async () => {
  const { windowed } = fixture();
  const startId = await writeStart(windowed, { to: { kind: 'handle', value: '@dee' }, template: { name: 'hello', language: 'en-US', params: { name: 'Dee' } } });
  const started = ((await answerOf(windowed, startId)).result as { conversationId: string }).conversationId;
  const delivery = await startDelivery(windowed, started);
  const claim = await claimReady(windowed.key, delivery.deliveryId as string);
  expect(claim).toMatchObject({ kind: 'start', message: { text: 'Hi Dee, we have news.', template: { name: 'hello', language: 'en-US', params: { name: 'Dee' } }, recipient: { address: { kind: 'handle', value: '@dee' } } } });
});

test.each([
  ['starts_disabled', 'off', { to: { kind: 'email', value: 'a@example.com' }, text: 'x' }],
  ['replies_disabled', 'silent', { to: { kind: 'email', value: 'a@example.com' }, text: 'x' }],
  ['address_kind_not_allowed', 'open', { to: { kind: 'phone', value: '+4915112345678' }, text: 'x' }],
  ['invalid_address', 'open', { to: { kind: 'email', value: 'not-an-address' }, text: 'x' }],
  ['invalid_start', 'open', { to: { kind: 'email', value: 'a@example.com' } }],
  ['template_required', 'windowed', { to: { kind: 'handle', value: '@eve' }, text: 'x' }],
  ['template_invalid', 'windowed', { to: { kind: 'handle', value: '@eve' }, template: { name: 'hello', language: 'en-US', params: {} } }],
] as const)('refused %s: the error on the start, nothing else written', async (code, which, fields) => {
  const integration = fixture()[which];
  const startId = await writeStart(integration, fields);
  const answer = await answerOf(integration, startId);
  expect(answer.error).toMatchObject({ code });
  expect(typeof (answer.error as { message: unknown }).message).toBe('string');
  expect(answer.result).toBeUndefined();
  const started = startedConversationId(integration.integrationId, startId);
  expect(await conversationDoc(integration, started)).toBeUndefined();
  expect(await messagesOf(integration, started)).toEqual([]);
  expect((await deliveriesOf(integration)).filter((d) => d.conversationId === started)).toEqual([]);
  expect((await ws(integration).collection('startAddresses').where('conversationId', '==', started).get()).size).toBe(0);
});

describe('races', () => {
  test('two starts to the same new address at once: one conversation, the other reuses it', async () => {
    const { open } = fixture();
    const address = { kind: 'email', value: `race-${randomUUID().slice(0, 6)}@example.com` };
    const [a, b] = await Promise.all([writeStart(open, { to: address, text: 'from A' }), writeStart(open, { to: address, text: 'from B' })]);
    const [ra, rb] = await Promise.all([answerOf(open, a), answerOf(open, b)]);
    const results = [ra.result, rb.result] as Array<{ conversationId: string; reused: boolean }>;
    expect(results.map((r) => r.reused).sort()).toEqual([false, true]);
    expect(results[0]?.conversationId).toBe(results[1]?.conversationId);
    const conversationId = results[0]?.conversationId as string;
    const texts = await eventually(async () => {
      const found = (await messagesOf(open, conversationId)).map((m) => m.data().text as string).sort();
      return found.length === 2 ? found : undefined;
    }, 'both messages in the one conversation');
    expect(texts).toEqual(['from A', 'from B']);
    const created = [a, b].map((id) => startedConversationId(open.integrationId, id)).filter((id) => id !== conversationId);
    expect(await conversationDoc(open, created[0] as string)).toBeUndefined();
  });

  test('a start taken twice (a redelivered trigger): one conversation, one delivery', async () => {
    const { open } = fixture();
    const startId = await writeStart(open, { to: { kind: 'handle', value: `@twice-${randomUUID().slice(0, 6)}` }, text: 'Once' });
    await answerOf(open, startId);
    const again = await Promise.all([takeStart(adminDb(), open.workspaceId, startId, open.integrationId), takeStart(adminDb(), open.workspaceId, startId, open.integrationId)]);
    expect(again).toEqual([{ kind: 'ignored' }, { kind: 'ignored' }]);
    const started = startedConversationId(open.integrationId, startId);
    expect((await deliveriesOf(open)).filter((d) => d.conversationId === started)).toHaveLength(1);
  });

  test("a customer's answer racing the complete: both end in the thread's conversation, once each", async () => {
    const { open } = fixture();
    const handle = `@fay-${randomUUID().slice(0, 6)}`;
    const startId = await writeStart(open, { to: { kind: 'handle', value: handle }, text: 'Are you there?' });
    const started = ((await answerOf(open, startId)).result as { conversationId: string }).conversationId;
    const delivery = await startDelivery(open, started);
    const threadId = `dm-${randomUUID()}`;
    const [, joined] = await Promise.all([completeStart(open, delivery.deliveryId as string, { externalConversationId: threadId, externalCustomerId: handle }), customerWrites(open, threadId, handle, 'Yes!')]);
    const texts = (await messagesOf(open, joined)).map((m) => m.data().text as string).sort();
    expect(texts).toEqual(['Are you there?', 'Yes!']);
    expect(await conversationDoc(open, started)).toMatchObject({ mergedInto: joined });
    expect(await conversationDoc(open, joined)).toMatchObject({ mergedFrom: [started] });
  });
});

test('privacy: the address book entry and the start requests of a customer are exported and erased; another customer\'s stay', async () => {
  const { open } = fixture();
  const mine = `gil-${randomUUID().slice(0, 6)}@example.com`;
  const theirs = `hal-${randomUUID().slice(0, 6)}@example.com`;
  const started: Record<string, string> = {};
  for (const address of [mine, theirs]) {
    const startId = await writeStart(open, { to: { kind: 'email', value: address }, text: `Hello ${address}` });
    started[address] = startId;
    const conversationId = ((await answerOf(open, startId)).result as { conversationId: string }).conversationId;
    const delivery = await startDelivery(open, conversationId);
    await completeStart(open, delivery.deliveryId as string, { externalConversationId: `mail-${randomUUID()}`, externalCustomerId: address });
  }
  const book = ws(open).collection('startAddresses');
  await eventually(async () => ((await book.where('externalCustomerId', 'in', [mine, theirs]).get()).size === 2 ? true : undefined), 'both addresses recorded');

  const exportId = `ex-${randomUUID()}`;
  await ws(open).collection('exports').doc(exportId).create({ integrationId: open.integrationId, externalCustomerId: mine, requestedAt: FieldValue.serverTimestamp(), requestedBy: 'admin-1' });
  await eventually(async () => ((await ws(open).collection('exports').doc(exportId).get()).get('status') === 'done' ? true : undefined), 'the export');
  const lines = ((await localStore().get(exportFilePath(open.workspaceId, exportId)))?.toString('utf8') ?? '').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
  expect(lines.filter((l) => l.type === 'start_address')).toEqual([expect.objectContaining({ kind: 'email', value: mine, externalCustomerId: mine })]);
  expect(lines.filter((l) => l.type === 'conversation_start')).toEqual([expect.objectContaining({ startId: started[mine], text: `Hello ${mine}` })]);
  expect(JSON.stringify(lines)).not.toContain(theirs);

  const erasureId = await requestErasure(open, mine);
  await waitForErasure(open.workspaceId, erasureId);
  expect((await book.where('externalCustomerId', '==', mine).get()).size).toBe(0);
  expect((await startRef(open, started[mine] as string).get()).exists).toBe(false);
  expect((await book.where('externalCustomerId', '==', theirs).get()).size).toBe(1);
  expect((await startRef(open, started[theirs] as string).get()).exists).toBe(true);
});
