/**
 * fail `retry` (docs/contract.md#fail): the delayed re-notification goes through the outbox and a
 * Cloud Task on the tasks emulator and is pulled from the real subscription; the retry budget of
 * 10 attempts ends in `failed` / `retry_exhausted` and releases the next reply.
 *
 * The tasks emulator dispatches a task at once (it ignores `scheduleTime`, which Cloud Tasks
 * honours): the task answers "not due yet" with an error and the emulator retries it after the
 * queue's 5 s minimum backoff, so locally the re-notification lands about 5 s after the fail.
 */
import { randomUUID } from 'node:crypto';
import { attemptEvents, claimReady, deliveryDoc, deliveryTestFile, eventually, expectApiError, expectOk, expectSent, expectSkip, mirrorOnceStatus, notificationsFor, op, replyAndNotify, retryAfterSeconds, waitForNotifications } from '../helpers/deliveries';

// Each test has an integration and topic of its own: its subscription carries only its notifications.
const { ownConversation: conversation } = deliveryTestFile();

test('fail retry with retryAfterMs 1500: 503 retry_delayed until then, and the notification is re-published within seconds of it', async () => {
  const setup = await conversation();
  const key = setup.integration.key;
  const { deliveryId } = await replyAndNotify(setup, 'retry soon');
  const claim = await claimReady(key, deliveryId);
  expectOk(await op('start', key, { deliveryId, leaseId: claim.leaseId }), { status: 'sending' });
  expectOk(await op('fail', key, { deliveryId, leaseId: claim.leaseId, outcome: 'retry', code: 'provider_throttled', retryAfterMs: 1500 }), { status: 'queued' });
  const notBefore = (await deliveryDoc(setup, deliveryId)).notBefore as number;

  const early = await op('claim', key, { deliveryId, requestId: randomUUID() });
  if (Date.now() < notBefore - 100) {
    expectApiError(early, 503, 'retry_delayed');
    expect(retryAfterSeconds(early)).toBeLessThanOrEqual(2);
  }

  // The second notification: not before notBefore (a 500 ms clock-skew tolerance), and soon after it.
  const republished = await eventually(async () => (notificationsFor(setup.topic, deliveryId).length >= 2 ? Date.now() : undefined), 'the retry notification', 30_000);
  expect(republished).toBeGreaterThanOrEqual(notBefore - 500);
  expect(republished - notBefore).toBeLessThan(15_000);

  // The connector claims on the notification (honouring Retry-After once if it arrived a hair early).
  let res = await op('claim', key, { deliveryId, requestId: randomUUID() });
  if (res.status === 503) {
    expectApiError(res, 503, 'retry_delayed');
    await new Promise((r) => setTimeout(r, retryAfterSeconds(res) * 1000));
    res = await op('claim', key, { deliveryId, requestId: randomUUID() });
  }
  expectOk(res, expect.objectContaining({ status: 'ready' }));
  expect((res.body as { leaseId: string }).leaseId).not.toBe(claim.leaseId);
  expect(await deliveryDoc(setup, deliveryId)).toMatchObject({ status: 'leased', attempts: 2 });
});

test('the retry budget: the 10th attempt failing with retry ends failed / retry_exhausted (mirrored), releasing the next reply', async () => {
  const setup = await conversation();
  const key = setup.integration.key;
  const a = await replyAndNotify(setup, 'reply A');
  const b = await replyAndNotify(setup, 'reply B');
  await expectSkip(key, b.deliveryId, 'waiting_for_previous');

  for (let attempt = 1; attempt <= 10; attempt++) {
    const claim = await claimReady(key, a.deliveryId);
    const res = await op('fail', key, { deliveryId: a.deliveryId, leaseId: claim.leaseId, outcome: 'retry', code: 'provider_busy', retryAfterMs: 0 });
    // The 10th attempt ends A failed and releases B, which the answer then names as `next`.
    if (attempt < 10) expectOk(res, { status: 'queued' });
    else expectSent(res, a.deliveryId, 'failed');
    // Still ordered: B stays behind A while A is queued for another attempt.
    if (attempt === 5) await expectSkip(key, b.deliveryId, 'waiting_for_previous');
  }
  expect(await deliveryDoc(setup, a.deliveryId)).toMatchObject({
    status: 'failed',
    attempts: 10,
    error: { outcome: 'failed', code: 'retry_exhausted' },
    lastFail: { outcome: 'retry', code: 'provider_busy', responseStatus: 'failed' },
  });
  const mirror = await mirrorOnceStatus(setup, a.messageId, 'failed');
  expect(mirror).toEqual({ deliveryId: a.deliveryId, status: 'failed', updatedAt: expect.anything(), error: { outcome: 'failed', code: 'retry_exhausted' }, attempts: expect.any(Array), traceId: expect.stringMatching(/^[0-9a-f]{32}$/) });
  // Ten leases, each rejected by the provider, then the service's verdict.
  expect(attemptEvents(mirror)).toEqual([...Array.from({ length: 10 }, () => ['claimed', 'retry:provider_busy']).flat(), 'failed:retry_exhausted']);
  await expectSkip(key, a.deliveryId, 'already_failed');

  // Every retry re-published A's notification (creation + 9 retries).
  await waitForNotifications(setup.topic, a.deliveryId, 10);
  // A's terminal transition woke B (it had been told waiting_for_previous): re-published, claimable.
  await waitForNotifications(setup.topic, b.deliveryId, 2);
  await claimReady(key, b.deliveryId);
});
