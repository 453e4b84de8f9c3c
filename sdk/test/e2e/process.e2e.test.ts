/**
 * SDK end to end: `processDelivery` (docs/contract.md#connector-rules) against the emulator stack, from a notification
 * pulled from Pub/Sub and parsed by the SDK to the delivery record and the reply's mirror; or the
 * same against the test service (./target.ts).
 * @serial runs the global sweeper about a minute ahead: it would expire other suites' live leases
 */
import { randomUUID } from 'node:crypto';
import {
  parsePulledNotification,
  ProviderPermanentError,
  ProviderRetryableError,
  ProviderUnknownOutcomeError,
  type ConnectorClient,
  type DeliveryEvent,
  type ProviderSendInput,
} from '../../src/index.js';
import { eventually, fastClock, readDeliveryDoc, sdkDeliveryFixture, startConversation, sweepAt, waitForMirror, writeReply, type RawTopic, type TestIntegration } from './helpers';

// The first calls of a run meet cold functions in the emulator; triggers and Pub/Sub add seconds.
jest.setTimeout(120_000);

let topic: RawTopic;
let integration: TestIntegration;
let client: ConnectorClient;
const { newDelivery } = sdkDeliveryFixture((stack) => {
  ({ topic, integration, client } = stack);
});

/** A provider that records its calls and behaves as `behave` says. */
function provider(behave: (input: ProviderSendInput) => Promise<unknown> | unknown) {
  const calls: ProviderSendInput[] = [];
  const send = async (input: ProviderSendInput) => {
    calls.push(input);
    return (await behave(input)) as string[];
  };
  return { calls, send };
}

test('provider succeeds -> sent: complete reported, delivery and mirror sent; a redelivered notification is skipped', async () => {
  const { conversation, replyId, notification } = await newDelivery('Refund issued.');
  const p = provider(() => ({ providerMessageIds: ['tg-100'] }));

  const result = await client.processDelivery(notification, p.send);
  expect(result).toEqual({ kind: 'sent', deliveryId: notification.deliveryId, leaseId: expect.any(String), providerMessageIds: ['tg-100'] });
  expect(p.calls).toHaveLength(1);
  expect(p.calls[0]).toMatchObject({
    deliveryId: notification.deliveryId,
    text: 'Refund issued.',
    recipient: { externalConversationId: conversation.externalConversationId, externalCustomerId: conversation.customerId },
    leaseExpiresAt: expect.any(Number),
  });
  expect(p.calls[0]?.signal).toBeInstanceOf(AbortSignal);

  const mirror = await waitForMirror(conversation, replyId, (m) => m.status === 'sent');
  expect(mirror).toMatchObject({ deliveryId: notification.deliveryId, status: 'sent', providerMessageIds: ['tg-100'] });
  expect(await readDeliveryDoc(integration.workspaceId, notification.deliveryId)).toMatchObject({ status: 'sent', attempts: 1, providerMessageIds: ['tg-100'] });

  // Pub/Sub delivers at least once: the same notification again does not send again.
  expect(await client.processDelivery(notification, p.send)).toEqual({ kind: 'already_finished', deliveryId: notification.deliveryId, status: 'sent', reason: 'already_sent' });
  expect(p.calls).toHaveLength(1);
});

test('temporary rejection (ProviderRetryableError) -> fail retry -> queued; re-notified when due, then sent', async () => {
  const { conversation, replyId, notification } = await newDelivery('Try again later');
  const rejected = provider(() => {
    throw new ProviderRetryableError('429 from the channel', { code: 'Rate-Limited', retryAfterMs: 1_500 });
  });
  const at = Date.now();
  const result = await client.processDelivery(notification, rejected.send);
  expect(result).toMatchObject({ kind: 'retry_scheduled', deliveryId: notification.deliveryId, outcome: 'retry', code: 'rate_limited', deliveryStatus: 'queued' });
  expect(result.kind === 'retry_scheduled' && result.error).toBeInstanceOf(ProviderRetryableError);
  expect(rejected.calls).toHaveLength(1);

  const doc = await readDeliveryDoc(integration.workspaceId, notification.deliveryId);
  expect(doc).toMatchObject({ status: 'queued', attempts: 1, lastFail: { outcome: 'retry', code: 'rate_limited', responseStatus: 'queued' }, error: null });
  expect(doc?.notBefore).toBeGreaterThanOrEqual(at + 1_500 - 2_000);
  expect(doc?.notBefore).toBeLessThanOrEqual(Date.now() + 1_500 + 2_000);
  expect(await waitForMirror(conversation, replyId)).toMatchObject({ status: 'queued' });

  // The service publishes the notification again once the delay has passed (Cloud Task).
  const again = parsePulledNotification(await topic.waitFor(replyId, 2, 30_000));
  // The same delivery; its notifications are spans of the reply's one trace (docs/operations.md#tracing).
  const { traceparent: againTrace, ...againIds } = again;
  const { traceparent: firstTrace, ...firstIds }: typeof again = notification;
  expect(againIds).toEqual(firstIds);
  expect(againTrace?.split('-')[1]).toMatch(/^[0-9a-f]{32}$/);
  expect(againTrace?.split('-')[1]).toBe(firstTrace?.split('-')[1]);
  const ok = provider(() => ['tg-200']);
  expect(await client.processDelivery(again, ok.send)).toMatchObject({ kind: 'sent', providerMessageIds: ['tg-200'] });
  expect(await readDeliveryDoc(integration.workspaceId, notification.deliveryId)).toMatchObject({ status: 'sent', attempts: 2 });
  await waitForMirror(conversation, replyId, (m) => m.status === 'sent');
});

test('permanent rejection (ProviderPermanentError) -> fail failed -> failed', async () => {
  const { conversation, replyId, notification } = await newDelivery('You are blocked');
  const p = provider(() => {
    throw new ProviderPermanentError('bot blocked by the user', { code: 'recipient_blocked' });
  });
  const result = await client.processDelivery(notification, p.send);
  expect(result).toMatchObject({ kind: 'failed', outcome: 'failed', code: 'recipient_blocked', deliveryStatus: 'failed' });
  expect(p.calls).toHaveLength(1);
  expect(await readDeliveryDoc(integration.workspaceId, notification.deliveryId)).toMatchObject({ status: 'failed', error: { outcome: 'failed', code: 'recipient_blocked' } });
  expect(await waitForMirror(conversation, replyId, (m) => m.status === 'failed')).toMatchObject({ error: { outcome: 'failed', code: 'recipient_blocked' } });
  expect(await client.processDelivery(notification, p.send)).toMatchObject({ kind: 'already_finished', status: 'failed', reason: 'already_failed' });
  expect(p.calls).toHaveLength(1);
});

test('provider times out (providerTimeoutMs) -> unknown, the provider was called exactly once and saw the abort', async () => {
  const { conversation, replyId, notification } = await newDelivery('Slow channel');
  let aborted = false;
  const p = provider(
    ({ signal }) =>
      new Promise((resolve) => {
        signal.addEventListener('abort', () => {
          aborted = true;
        });
        setTimeout(() => resolve(['too-late']), 3_000); // "succeeds" after the limit: must be ignored
      }),
  );
  const result = await client.processDelivery(notification, p.send, { providerTimeoutMs: 300 });
  expect(result).toMatchObject({ kind: 'unknown', outcome: 'unknown', code: 'provider_timeout', deliveryStatus: 'unknown' });
  expect(result.kind === 'unknown' && result.error).toBeInstanceOf(ProviderUnknownOutcomeError);
  expect(p.calls).toHaveLength(1);
  expect(aborted).toBe(true);

  expect(await readDeliveryDoc(integration.workspaceId, notification.deliveryId)).toMatchObject({ status: 'unknown', error: { outcome: 'unknown', code: 'provider_timeout' } });
  expect(await waitForMirror(conversation, replyId, (m) => m.status === 'unknown')).toMatchObject({ error: { code: 'provider_timeout' } });
  // Never sent again automatically.
  expect(await client.processDelivery(notification, p.send)).toMatchObject({ kind: 'already_finished', status: 'unknown', reason: 'outcome_unknown' });
  expect(p.calls).toHaveLength(1);
});

test('an unexpected provider error -> unknown provider_error (never retried: it may have been sent)', async () => {
  const { notification } = await newDelivery('Boom');
  const p = provider(() => {
    throw new Error('socket hang up');
  });
  expect(await client.processDelivery(notification, p.send)).toMatchObject({ kind: 'unknown', outcome: 'unknown', code: 'provider_error', deliveryStatus: 'unknown' });
});

test('replies are delivered in order: the second waits (skipped waiting_for_previous) and is re-notified after the first', async () => {
  const conversation = await startConversation(client, integration);
  const first = await writeReply(conversation, 'First reply');
  const second = await writeReply(conversation, 'Second reply');
  const n1 = parsePulledNotification(await topic.waitFor(first));
  const n2 = parsePulledNotification(await topic.waitFor(second));

  const sentTexts: string[] = [];
  const record = provider(({ text }) => {
    sentTexts.push(text);
    return [`p-${randomUUID().slice(0, 8)}`];
  });
  expect(await client.processDelivery(n2, record.send)).toEqual({ kind: 'skipped', deliveryId: n2.deliveryId, reason: 'waiting_for_previous' });
  expect(await client.processDelivery(n1, record.send)).toMatchObject({ kind: 'sent' });
  // Completing the first wakes the second: its notification is published again.
  const n2again = parsePulledNotification(await topic.waitFor(second, 2));
  expect(await client.processDelivery(n2again, record.send)).toMatchObject({ kind: 'sent' });
  expect(sentTexts).toEqual(['First reply', 'Second reply']);
});

/**
 * A provider call longer than half the lease, with the real 120 s lease, in seconds: the SDK runs on
 * a clock 30 times as fast as real time (`fastClock`), so it extends the lease through POST
 * /v1/deliveries/extend about 2 s (60 s of its clock) after the claim, while the call runs. Once the
 * service has moved the stored lease, the sweeper is run as of the ORIGINAL expiry (plus 1 s):
 * without the extension the delivery would become `unknown` (lease_expired_after_start) there; with
 * it, it stays `sending` and ends `sent` with no expiry in its attempt log. The service's time is
 * real, so the extension moves the expiry by the real time since the claim (a few seconds), not by
 * 60 s. (The SDK's timing with short leases is in sdk/test/unit/process.test.ts.)
 */
test('a slow provider (longer than half the lease): the lease is extended while it runs, the original expiry passes harmlessly, sent', async () => {
  const { conversation, replyId, notification } = await newDelivery('Large attachment, slow channel');
  const clock = fastClock(30);
  const events: DeliveryEvent[] = [];
  let originalExpiry = 0;
  let sweptAtOriginalExpiry: Record<string, unknown> | undefined;
  const p = provider(async ({ leaseExpiresAt }) => {
    originalExpiry = leaseExpiresAt;
    // The SDK extends at half of the remaining lease (~60 s of its clock): wait until the stored lease moved past the sweep's time.
    const extendedTo = await eventually(
      async () => {
        const lease = (await readDeliveryDoc(integration.workspaceId, notification.deliveryId))?.lease as { expiresAt: number } | undefined;
        return lease !== undefined && lease.expiresAt > leaseExpiresAt + 1_000 ? lease.expiresAt : undefined;
      },
      'the SDK to extend the lease',
      30_000,
    );
    expect(extendedTo).toBeGreaterThan(leaseExpiresAt + 1_000);
    // The service stores the extension before its answer reaches the SDK; on the in-process test
    // service the stored lease can be read first. Wait for the SDK's own word too, so that the
    // provider does not return while the extension's answer is still on its way.
    await eventually(async () => (events.some((e) => e.type === 'extended') ? true : undefined), 'the SDK to receive its extension', 30_000);
    await sweepAt(leaseExpiresAt + 1_000);
    sweptAtOriginalExpiry = await readDeliveryDoc(integration.workspaceId, notification.deliveryId);
    return ['tg-slow'];
  });
  const started = clock.now();
  // 14 minutes of the SDK's clock (28 s real): the provider limit must not end the call first.
  const result = await client.processDelivery(notification, p.send, { providerTimeoutMs: 14 * 60_000, clock, onEvent: (e) => events.push(e) });
  expect(clock.now() - started).toBeGreaterThan(55_000);
  expect(result).toEqual({ kind: 'sent', deliveryId: notification.deliveryId, leaseId: expect.any(String), providerMessageIds: ['tg-slow'] });
  expect(sweptAtOriginalExpiry).toMatchObject({ status: 'sending' });
  // The SDK extended at half of the lease by its clock, and each time got the service's new expiry.
  const extended = events.filter((e): e is Extract<DeliveryEvent, { type: 'extended' }> => e.type === 'extended');
  expect(extended.length).toBeGreaterThanOrEqual(1);
  expect((extended[0]?.at ?? 0) - started).toBeGreaterThan(55_000);
  // Nothing else happened to the delivery (an extension that failed once and was tried again aside).
  expect(events.filter((e) => e.type !== 'extended' && !(e.type === 'extend_failed' && e.willRetry)).map((e) => e.type)).toEqual(['claimed', 'started', 'completed']);
  const doc = await readDeliveryDoc(integration.workspaceId, notification.deliveryId);
  expect(doc).toMatchObject({ status: 'sent', attempts: 1, providerMessageIds: ['tg-slow'] });
  expect((doc?.lease as { expiresAt: number }).expiresAt).toBeGreaterThan(originalExpiry);
  // At least what the last reported extension granted (one still in flight when the call ended may have been stored too).
  expect((doc?.lease as { expiresAt: number }).expiresAt).toBeGreaterThanOrEqual(Math.max(...extended.map((e) => e.leaseExpiresAt)));
  expect(((doc?.attemptLog ?? []) as Array<{ event: string }>).map((e) => e.event)).toEqual(['claimed', 'started', 'sent']);
  expect(await waitForMirror(conversation, replyId, (m) => m.status === 'sent')).toMatchObject({ providerMessageIds: ['tg-slow'] });
});
