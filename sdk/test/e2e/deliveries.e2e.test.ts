/**
 * SDK end to end: the four delivery operations against the emulator stack — typed results,
 * idempotent repeats, typed errors — with notifications pulled from a real Pub/Sub subscription
 * and parsed by the SDK (pulled and push forms).
 */
import { randomUUID } from 'node:crypto';
import {
  ConflictError,
  NotFoundError,
  parsePulledNotification,
  parsePushNotification,
  ServiceUnavailableError,
  UnauthorizedError,
  type ClaimReady,
  type ConnectorClient,
} from '../../src/index.js';
import {
  createTestIntegration,
  expectedNotification,
  readDeliveryDoc,
  replyAndWait,
  sdkClient,
  sdkDeliveryFixture,
  startConversation,
  waitForMirror,
  type RawTopic,
  type TestIntegration,
} from './helpers';

// The first calls of a run meet cold functions in the emulator; triggers and Pub/Sub add seconds.
jest.setTimeout(120_000);

let topic: RawTopic;
let integration: TestIntegration;
let client: ConnectorClient;
const { newDelivery } = sdkDeliveryFixture((stack) => {
  ({ topic, integration, client } = stack);
});

async function claimReady(deliveryId: string, requestId = randomUUID()): Promise<ClaimReady> {
  const claim = await client.deliveries.claim({ deliveryId, requestId });
  if (claim.status !== 'ready') throw new Error(`expected a ready claim, got ${JSON.stringify(claim)}`);
  return claim;
}

test('the pulled notification parses (pulled and push forms) to the five identifiers and its trace context', async () => {
  const conversation = await startConversation(client, integration);
  const { replyId, message } = await replyAndWait(topic, conversation, 'Parsing check');
  const pulled = parsePulledNotification(message);
  const { traceparent, ...identifiers } = pulled;
  expect(identifiers).toEqual(expectedNotification(conversation, replyId));
  // The trace context rides as the message's `traceparent` attribute (docs/operations.md#tracing).
  expect(traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/);
  expect(traceparent).toBe(message.attributes.traceparent);
  // The same message as a push endpoint receives it, and as a REST pull's base64 data.
  const pushBody = { message: { data: message.data.toString('base64'), messageId: message.id, attributes: message.attributes }, subscription: `projects/x/subscriptions/${topic.subscriptionName}` };
  expect(parsePushNotification(pushBody)).toEqual(pulled);
  expect(parsePushNotification(JSON.stringify(pushBody))).toEqual(pulled);
  // Without the attributes (a REST pull's bare data): the identifiers only.
  expect(parsePulledNotification({ data: message.data.toString('base64') })).toEqual(identifiers);
});

test('claim -> start -> complete: typed results; repeats under the same request/lease answer the same', async () => {
  const { conversation, replyId, notification } = await newDelivery('Your parcel ships today.');
  const { deliveryId } = notification;
  const requestId = randomUUID();
  const before = Date.now();

  const claim = await client.deliveries.claim({ deliveryId, requestId });
  expect(claim).toEqual({
    status: 'ready',
    leaseId: expect.any(String),
    leaseExpiresAt: expect.any(Number),
    message: { text: 'Your parcel ships today.', recipient: { externalConversationId: conversation.externalConversationId, externalCustomerId: conversation.customerId } },
  });
  if (claim.status !== 'ready') return;
  // A lease lasts 120 s from the claim (allow for clock skew between test and emulator).
  expect(claim.leaseExpiresAt).toBeGreaterThanOrEqual(before + 120_000 - 5_000);
  expect(claim.leaseExpiresAt).toBeLessThanOrEqual(Date.now() + 120_000 + 5_000);
  // A retried claim (same requestId) gets the same lease back.
  expect(await client.deliveries.claim({ deliveryId, requestId })).toEqual(claim);

  const { leaseId } = claim;
  expect(await client.deliveries.start({ deliveryId, leaseId })).toEqual({ status: 'sending' });
  expect(await client.deliveries.start({ deliveryId, leaseId })).toEqual({ status: 'sending' });
  expect(await client.deliveries.complete({ deliveryId, leaseId, providerMessageIds: ['tg-1', 'tg-2'] })).toEqual({ status: 'sent' });
  expect(await client.deliveries.complete({ deliveryId, leaseId, providerMessageIds: ['tg-1', 'tg-2'] })).toEqual({ status: 'sent' });
  // After sent: start answers sent (do not send), fail answers sent, a new claim skips.
  expect(await client.deliveries.start({ deliveryId, leaseId })).toEqual({ status: 'sent' });
  expect(await client.deliveries.fail({ deliveryId, leaseId, outcome: 'unknown', code: 'late_report' })).toEqual({ status: 'sent' });
  expect(await client.deliveries.claim({ deliveryId })).toEqual({ status: 'skip', reason: 'already_sent' });

  const mirror = await waitForMirror(conversation, replyId, (m) => m.status === 'sent');
  expect(mirror).toMatchObject({ deliveryId, status: 'sent', providerMessageIds: ['tg-1', 'tg-2'] });
});

describe('the next delivery of the conversation', () => {
  test('complete and a final fail answer `next` (the next delivery, claimable now: its notification); processDelivery returns it; the last one and a repeat answer none', async () => {
    const conversation = await startConversation(client, integration);
    const ids = async (text: string) => {
      const { traceparent: _traceparent, ...identifiers } = parsePulledNotification((await replyAndWait(topic, conversation, text)).message);
      return identifiers;
    };
    const first = await ids('First');
    const second = await ids('Second');
    const third = await ids('Third');

    const sent = await client.processDelivery(first, () => ({ providerMessageIds: ['p-1'] }));
    expect(sent).toEqual({ kind: 'sent', deliveryId: first.deliveryId, leaseId: expect.any(String), providerMessageIds: ['p-1'], next: second });
    if (sent.kind !== 'sent') return;
    // A repeated complete changes nothing and releases nothing again.
    expect(await client.deliveries.complete({ deliveryId: first.deliveryId, leaseId: sent.leaseId, providerMessageIds: ['p-1'] })).toEqual({ status: 'sent' });

    const claim = await claimReady(second.deliveryId);
    expect(await client.deliveries.start({ deliveryId: second.deliveryId, leaseId: claim.leaseId })).toEqual({ status: 'sending' });
    expect(await client.deliveries.fail({ deliveryId: second.deliveryId, leaseId: claim.leaseId, outcome: 'failed', code: 'rejected' })).toEqual({ status: 'failed', next: third });

    const last = await client.processDelivery(third, () => ({ providerMessageIds: ['p-3'] }));
    expect(last).toEqual({ kind: 'sent', deliveryId: third.deliveryId, leaseId: expect.any(String), providerMessageIds: ['p-3'] });
  });
});

describe('fail outcomes', () => {
  test('retry -> queued (with retryAfterMs: not claimable before then: ServiceUnavailableError retry_delayed)', async () => {
    const { notification } = await newDelivery();
    const { deliveryId } = notification;
    const { leaseId } = await claimReady(deliveryId);
    await client.deliveries.start({ deliveryId, leaseId });
    const at = Date.now();
    expect(await client.deliveries.fail({ deliveryId, leaseId, outcome: 'retry', code: 'rate_limited', retryAfterMs: 600_000 })).toEqual({ status: 'queued' });
    const doc = await readDeliveryDoc(integration.workspaceId, deliveryId);
    expect(doc).toMatchObject({ status: 'queued', lastFail: { leaseId, outcome: 'retry', code: 'rate_limited', responseStatus: 'queued' } });
    expect(doc?.notBefore).toBeGreaterThanOrEqual(at + 600_000 - 5_000);

    const noRetry = sdkClient(integration.key, { retry: 0 });
    const err = await noRetry.deliveries.claim({ deliveryId }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServiceUnavailableError);
    expect(err).toMatchObject({ status: 503, code: 'retry_delayed', attempts: 1 });
    expect((err as ServiceUnavailableError).retryAfterMs).toBeGreaterThan(590_000);
    expect((err as ServiceUnavailableError).retryAfterMs).toBeLessThanOrEqual(600_000);
  });

  test('failed -> failed; then start is ConflictError delivery_finished and complete is conflicting_completion', async () => {
    const { conversation, replyId, notification } = await newDelivery();
    const { deliveryId } = notification;
    const { leaseId } = await claimReady(deliveryId);
    await client.deliveries.start({ deliveryId, leaseId });
    expect(await client.deliveries.fail({ deliveryId, leaseId, outcome: 'failed', code: 'recipient_blocked' })).toEqual({ status: 'failed' });
    // The same report again: the same answer.
    expect(await client.deliveries.fail({ deliveryId, leaseId, outcome: 'failed', code: 'recipient_blocked' })).toEqual({ status: 'failed' });

    const started = await client.deliveries.start({ deliveryId, leaseId }).catch((e: unknown) => e);
    expect(started).toBeInstanceOf(ConflictError);
    expect(started).toMatchObject({ status: 409, code: 'delivery_finished' });
    const completed = await client.deliveries.complete({ deliveryId, leaseId, providerMessageIds: ['x'] }).catch((e: unknown) => e);
    expect(completed).toBeInstanceOf(ConflictError);
    expect(completed).toMatchObject({ status: 409, code: 'conflicting_completion' });

    const mirror = await waitForMirror(conversation, replyId, (m) => m.status === 'failed');
    expect(mirror).toMatchObject({ status: 'failed', error: { outcome: 'failed', code: 'recipient_blocked' } });
  });

  test('unknown (partial send) -> unknown, with the partial ids; a later complete resolves it to sent', async () => {
    const { conversation, replyId, notification } = await newDelivery();
    const { deliveryId } = notification;
    const { leaseId } = await claimReady(deliveryId);
    await client.deliveries.start({ deliveryId, leaseId });
    expect(await client.deliveries.fail({ deliveryId, leaseId, outcome: 'unknown', code: 'provider_timeout', providerMessageIds: ['part-1'] })).toEqual({ status: 'unknown' });
    const unknown = await waitForMirror(conversation, replyId, (m) => m.status === 'unknown');
    expect(unknown).toMatchObject({ error: { outcome: 'unknown', code: 'provider_timeout' }, providerMessageIds: ['part-1'] });
    expect(await client.deliveries.claim({ deliveryId })).toEqual({ status: 'skip', reason: 'outcome_unknown' });

    expect(await client.deliveries.complete({ deliveryId, leaseId, providerMessageIds: ['part-1', 'part-2'] })).toEqual({ status: 'sent' });
    await waitForMirror(conversation, replyId, (m) => m.status === 'sent');
  });
});

describe('typed errors', () => {
  test('start/complete/fail with a lease that never held the delivery -> ConflictError lease_lost (not retried)', async () => {
    const { notification } = await newDelivery();
    const { deliveryId } = notification;
    await claimReady(deliveryId);
    const bogus = `l_${randomUUID()}`;
    for (const call of [
      () => client.deliveries.start({ deliveryId, leaseId: bogus }),
      () => client.deliveries.complete({ deliveryId, leaseId: bogus, providerMessageIds: ['p'] }),
      () => client.deliveries.fail({ deliveryId, leaseId: bogus, outcome: 'failed', code: 'x' }),
    ]) {
      const err = await call().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ConflictError);
      expect(err).toMatchObject({ status: 409, code: 'lease_lost', attempts: 1 });
    }
  });

  test('a second claim with another requestId while the lease lives -> ServiceUnavailableError lease_busy with retryAfterMs (retry limit 0)', async () => {
    const { notification } = await newDelivery();
    const { deliveryId } = notification;
    const claim = await claimReady(deliveryId);
    const noRetry = sdkClient(integration.key, { retry: 0 });
    const err = await noRetry.deliveries.claim({ deliveryId, requestId: randomUUID() }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServiceUnavailableError);
    expect(err).toMatchObject({ status: 503, code: 'lease_busy', attempts: 1, path: '/v1/deliveries/claim', requestId: expect.stringMatching(/^req_/) });
    // Retry-After is the rest of the lease, in whole seconds.
    const retryAfterMs = (err as ServiceUnavailableError).retryAfterMs;
    expect(retryAfterMs).toBeGreaterThan(0);
    expect(retryAfterMs! % 1000).toBe(0);
    expect(retryAfterMs).toBeLessThanOrEqual(claim.leaseExpiresAt - Date.now() + 2_000);
  });

  test('a missing delivery -> NotFoundError delivery_not_found', async () => {
    const err = await client.deliveries.claim({ deliveryId: `d_missing_${randomUUID()}` }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotFoundError);
    expect(err).toMatchObject({ status: 404, code: 'delivery_not_found', attempts: 1 });
  });

  test("another integration's delivery -> NotFoundError delivery_not_found (same as missing)", async () => {
    const { notification } = await newDelivery();
    const other = await createTestIntegration({ workspaceId: integration.workspaceId });
    const err = await sdkClient(other.key).deliveries.claim({ deliveryId: notification.deliveryId }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotFoundError);
    expect(err).toMatchObject({ status: 404, code: 'delivery_not_found' });
  });

  test('an invalid key -> UnauthorizedError invalid_key on every operation', async () => {
    const bad = sdkClient(`sdk_test_${randomUUID().replace(/-/g, '')}`);
    const calls = [
      () => bad.deliveries.claim({ deliveryId: 'd_x' }),
      () => bad.deliveries.start({ deliveryId: 'd_x', leaseId: 'l_x' }),
      () => bad.deliveries.complete({ deliveryId: 'd_x', leaseId: 'l_x', providerMessageIds: ['p'] }),
      () => bad.deliveries.fail({ deliveryId: 'd_x', leaseId: 'l_x', outcome: 'retry', code: 'x' }),
    ];
    for (const call of calls) {
      const err = await call().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(UnauthorizedError);
      expect(err).toMatchObject({ status: 401, code: 'invalid_key', attempts: 1 });
    }
  });
});

describe('connector metadata (messages.send `metadata`, the claim\'s `conversation.metadata`)', () => {
  test('the merge of the messages\' metadata reaches `send` as conversation.metadata; a null removes a key; a conversation without any has no key', async () => {
    const { conversation, notification } = await newDelivery('With metadata');
    const { externalConversationId, customerId } = conversation;
    const sender = { externalId: customerId };
    await client.messages.send({ externalConversationId, sender, text: 'order', metadata: { orderId: 'A-1', locale: 'pl' } });
    await client.messages.send({ externalConversationId, sender, text: 'update', metadata: { orderId: 'A-2', locale: null }, sentAt: Date.now() - 60_000 });
    const seen: unknown[] = [];
    const result = await client.processDelivery(notification, (input) => {
      seen.push(input.conversation);
      return { providerMessageIds: ['meta-1'] };
    });
    expect(result).toMatchObject({ kind: 'sent' });
    expect(seen).toEqual([{ metadata: { orderId: 'A-2' } }]);

    const plain = await newDelivery('Without metadata');
    const inputs: object[] = [];
    await client.processDelivery(plain.notification, (input) => {
      inputs.push(input);
      return { providerMessageIds: ['meta-2'] };
    });
    expect(inputs[0]).not.toHaveProperty('conversation');
  });

  test('a bad key, a nested value or a sentAt over 5 minutes ahead is a BadRequestError', async () => {
    const { conversation } = await newDelivery('Refusals');
    const base = { externalConversationId: conversation.externalConversationId, sender: { externalId: conversation.customerId }, text: 'x' };
    await expect(client.messages.send({ ...base, metadata: { 'bad key': 'x' } })).rejects.toMatchObject({ status: 400, code: 'invalid_request' });
    await expect(client.messages.send({ ...base, metadata: { a: { b: 'c' } } as unknown as Record<string, string> })).rejects.toMatchObject({ status: 400, code: 'invalid_request' });
    await expect(client.messages.send({ ...base, sentAt: Date.now() + 10 * 60_000 })).rejects.toMatchObject({ status: 400, code: 'invalid_request' });
  });
});
