/**
 * Outgoing delivery, docs/contract.md#delivery-states row by row and the claim/start/complete/fail transitions of
 * docs/contract.md#delivery-states, through real HTTP (Hosting -> Functions emulator) with a real Pub/Sub
 * notification for every reply. Each test uses its own conversation (ordering is per
 * conversation), sharing one integration and topic.
 */
import { randomUUID } from 'node:crypto';
import { attemptEvents, claimReady, deliveryDoc, deliveryDocRef, expectApiError, expectOk, expectRetryAfterUntil, expectSent, expectSkip, mirrorOnceStatus, op, replyAndNotify, setLeaseExpiry, sharedConversationFixture, timedCall, waitForMirror } from '../helpers/deliveries';

let key: string;
const { conversation } = sharedConversationFixture((first) => {
  key = first.integration.key;
});

test('claim is ready with a 120 s lease, message and recipient; the same requestId gets the same lease back; another gets 503 lease_busy with the seconds left', async () => {
  const setup = await conversation();
  const { deliveryId, messageId } = await replyAndNotify(setup, 'Your order ships today.');
  const requestId = randomUUID();
  const before = Date.now();
  const first = await op('claim', key, { deliveryId, requestId });
  const after = Date.now();
  expectOk(first, {
    status: 'ready',
    leaseId: expect.stringMatching(/^.{1,128}$/),
    leaseExpiresAt: expect.any(Number),
    message: { text: 'Your order ships today.', recipient: { externalConversationId: setup.externalConversationId, externalCustomerId: setup.customerId } },
  });
  const lease = first.body as { leaseId: string; leaseExpiresAt: number };
  expect(Number.isInteger(lease.leaseExpiresAt)).toBe(true);
  // 120 s from the claim, on the server clock (same host: allow a second of skew).
  expect(lease.leaseExpiresAt).toBeGreaterThanOrEqual(before + 120_000 - 1_000);
  expect(lease.leaseExpiresAt).toBeLessThanOrEqual(after + 120_000 + 1_000);

  // A retried claim (same requestId) gets the very same lease, with its original expiry.
  expectOk(await op('claim', key, { deliveryId, requestId }), first.body);

  // Any other requestId: 503 lease_busy, Retry-After = seconds left on the lease.
  const busy = await timedCall(() => op('claim', key, { deliveryId, requestId: randomUUID() }));
  expectApiError(busy.result, 503, 'lease_busy');
  expectRetryAfterUntil(busy, lease.leaseExpiresAt);

  // With 30 s left on the lease, Retry-After says 30 (give or take the request's own latency).
  const laterExpiry = Date.now() + 30_000;
  await setLeaseExpiry(setup, deliveryId, laterExpiry);
  const busyLater = await timedCall(() => op('claim', key, { deliveryId, requestId: randomUUID() }));
  expectApiError(busyLater.result, 503, 'lease_busy');
  expectRetryAfterUntil(busyLater, laterExpiry);

  const stored = await deliveryDoc(setup, deliveryId);
  expect(stored).toMatchObject({ status: 'leased', attempts: 1, lease: { leaseId: lease.leaseId, requestId } });
  // The console sees the delivery is being worked on.
  await waitForMirror(setup, messageId, (m) => m.status === 'leased');

  // Start (twice: a retried start answers sending again), then complete.
  expectOk(await op('start', key, { deliveryId, leaseId: lease.leaseId }), { status: 'sending' });
  expectOk(await op('start', key, { deliveryId, leaseId: lease.leaseId }), { status: 'sending' });
  expect(await deliveryDoc(setup, deliveryId)).toMatchObject({ status: 'sending', lease: { leaseId: lease.leaseId, started: true } });
  // A retried claim while sending still gets the same lease; another requestId is still busy.
  expectOk(await op('claim', key, { deliveryId, requestId }), { ...(first.body as object), leaseExpiresAt: expect.any(Number) });
  expectApiError(await op('claim', key, { deliveryId, requestId: randomUUID() }), 503, 'lease_busy');
  expectSent(await op('complete', key, { deliveryId, leaseId: lease.leaseId, providerMessageIds: ['wamid.1'] }), deliveryId);
});

test('start, complete and fail with a lease that never held the delivery: 409 lease_lost, nothing changes', async () => {
  const setup = await conversation();
  const a = await replyAndNotify(setup, 'first');
  const claimA = await claimReady(key, a.deliveryId);
  const before = await deliveryDoc(setup, a.deliveryId);

  const strangers = ['l_never_granted', 'x'.repeat(128)];
  for (const leaseId of strangers) {
    expectApiError(await op('start', key, { deliveryId: a.deliveryId, leaseId }), 409, 'lease_lost');
    expectApiError(await op('complete', key, { deliveryId: a.deliveryId, leaseId, providerMessageIds: ['p'] }), 409, 'lease_lost');
    expectApiError(await op('fail', key, { deliveryId: a.deliveryId, leaseId, outcome: 'failed', code: 'provider_error' }), 409, 'lease_lost');
  }
  expect(await deliveryDoc(setup, a.deliveryId)).toEqual(before);

  // The lease really works, and once sent a stranger lease is still lease_lost (not a conflict).
  expectOk(await op('start', key, { deliveryId: a.deliveryId, leaseId: claimA.leaseId }), { status: 'sending' });
  expectSent(await op('complete', key, { deliveryId: a.deliveryId, leaseId: claimA.leaseId, providerMessageIds: ['p-a'] }), a.deliveryId);
  expectApiError(await op('complete', key, { deliveryId: a.deliveryId, leaseId: 'l_never_granted', providerMessageIds: ['p-a'] }), 409, 'lease_lost');
  expectApiError(await op('start', key, { deliveryId: a.deliveryId, leaseId: 'l_never_granted' }), 409, 'lease_lost');

  // A lease of ANOTHER delivery does not hold this one.
  const b = await replyAndNotify(setup, 'second');
  const claimB = await claimReady(key, b.deliveryId);
  expectApiError(await op('start', key, { deliveryId: b.deliveryId, leaseId: claimA.leaseId }), 409, 'lease_lost');
  expectApiError(await op('complete', key, { deliveryId: b.deliveryId, leaseId: claimA.leaseId, providerMessageIds: ['p-a'] }), 409, 'lease_lost');
  expectApiError(await op('fail', key, { deliveryId: b.deliveryId, leaseId: claimA.leaseId, outcome: 'retry', code: 'x' }), 409, 'lease_lost');
  expect(await deliveryDoc(setup, b.deliveryId)).toMatchObject({ status: 'leased', lease: { leaseId: claimB.leaseId } });
});

test('complete: sent and mirrored; idempotent for the same lease and ids; other ids or an older lease -> 409 conflicting_completion; fail, start and claim after sent', async () => {
  const setup = await conversation();
  const { deliveryId, messageId } = await replyAndNotify(setup, 'Thanks for waiting!');
  // An older lease: granted, then expired (fixture) and replaced by a new claim.
  const old = await claimReady(key, deliveryId);
  await setLeaseExpiry(setup, deliveryId);
  const current = await claimReady(key, deliveryId);
  expect(current.leaseId).not.toBe(old.leaseId);

  expectOk(await op('start', key, { deliveryId, leaseId: current.leaseId }), { status: 'sending' });
  const ids = ['msg-1', 'msg-2'];
  expectSent(await op('complete', key, { deliveryId, leaseId: current.leaseId, providerMessageIds: ids }), deliveryId);
  const mirror = await mirrorOnceStatus(setup, messageId, 'sent');
  expect(Object.keys(mirror).sort()).toEqual(['attempts', 'deliveryId', 'providerMessageIds', 'sentAt', 'status', 'traceId', 'updatedAt']);
  expect(attemptEvents(mirror)).toEqual(['claimed', 'lease_expired', 'claimed', 'started', 'sent']);
  expect(mirror).toMatchObject({ deliveryId, status: 'sent', providerMessageIds: ids });
  const stored = await deliveryDoc(setup, deliveryId);
  // The mirror's `sentAt` is the record's (the window of an edit or unsend counts from it: docs/contract.md#edits-and-unsends).
  expect((mirror.sentAt as { toMillis(): number }).toMillis()).toBe(stored.sentAt);

  // Same lease, same ids: sent again, no write.
  expectSent(await op('complete', key, { deliveryId, leaseId: current.leaseId, providerMessageIds: ids }), deliveryId);
  // Different ids, ids in another order, a subset: conflicting.
  for (const other of [['msg-3'], ['msg-2', 'msg-1'], ['msg-1']]) {
    expectApiError(await op('complete', key, { deliveryId, leaseId: current.leaseId, providerMessageIds: other }), 409, 'conflicting_completion');
  }
  // The older lease (it held the delivery once): conflicting too.
  expectApiError(await op('complete', key, { deliveryId, leaseId: old.leaseId, providerMessageIds: ids }), 409, 'conflicting_completion');

  // fail on a sent delivery answers sent and changes nothing (any outcome, either lease).
  for (const outcome of ['retry', 'failed', 'unknown'] as const) {
    expectSent(await op('fail', key, { deliveryId, leaseId: current.leaseId, outcome, code: 'late_report' }), deliveryId);
  }
  expectSent(await op('fail', key, { deliveryId, leaseId: old.leaseId, outcome: 'failed', code: 'late_report' }), deliveryId);
  // start after sent: sent (the connector must not send again).
  expectOk(await op('start', key, { deliveryId, leaseId: current.leaseId }), { status: 'sent' });
  await expectSkip(key, deliveryId, 'already_sent');
  expect(await deliveryDoc(setup, deliveryId)).toEqual(stored);
  expect(stored).toMatchObject({ status: 'sent', providerMessageIds: ids, error: null, completion: { leaseId: current.leaseId, providerMessageIds: ids } });
});

test('fail failed -> failed (mirrored with its code); repeated -> same answer; then claim skips already_failed and start is 409 delivery_finished', async () => {
  const setup = await conversation();
  const { deliveryId, messageId } = await replyAndNotify(setup, 'one');
  const claim = await claimReady(key, deliveryId);
  expectOk(await op('start', key, { deliveryId, leaseId: claim.leaseId }), { status: 'sending' });
  const body = { deliveryId, leaseId: claim.leaseId, outcome: 'failed', code: 'recipient_blocked' };
  expectOk(await op('fail', key, body), { status: 'failed' });
  const stored = await deliveryDoc(setup, deliveryId);
  expect(stored).toMatchObject({ status: 'failed', error: { outcome: 'failed', code: 'recipient_blocked' } });
  expectOk(await op('fail', key, body), { status: 'failed' });
  expect(await deliveryDoc(setup, deliveryId)).toEqual(stored);

  const mirror = await mirrorOnceStatus(setup, messageId, 'failed');
  expect(mirror).toEqual({ deliveryId, status: 'failed', updatedAt: expect.anything(), error: { outcome: 'failed', code: 'recipient_blocked' }, attempts: expect.any(Array), traceId: expect.stringMatching(/^[0-9a-f]{32}$/) });
  expect(attemptEvents(mirror)).toEqual(['claimed', 'started', 'failed:recipient_blocked']);
  await expectSkip(key, deliveryId, 'already_failed');
  expectApiError(await op('start', key, { deliveryId, leaseId: claim.leaseId }), 409, 'delivery_finished');
  // A completion contradicting this lease's own definite failure is refused.
  expectApiError(await op('complete', key, { deliveryId, leaseId: claim.leaseId, providerMessageIds: ['p'] }), 409, 'conflicting_completion');
  // The next reply of the conversation is not blocked.
  const next = await replyAndNotify(setup, 'two');
  await claimReady(key, next.deliveryId);
});

test('fail unknown -> unknown with the partial provider ids kept and mirrored; claim skips outcome_unknown; a late complete resolves it to sent', async () => {
  const setup = await conversation();
  const { deliveryId, messageId } = await replyAndNotify(setup, 'A long answer in two parts');
  const claim = await claimReady(key, deliveryId);
  expectOk(await op('start', key, { deliveryId, leaseId: claim.leaseId }), { status: 'sending' });
  const body = { deliveryId, leaseId: claim.leaseId, outcome: 'unknown', code: 'provider_timeout', providerMessageIds: ['part-1'] };
  expectOk(await op('fail', key, body), { status: 'unknown' });
  expectOk(await op('fail', key, body), { status: 'unknown' });
  const mirror = await mirrorOnceStatus(setup, messageId, 'unknown');
  expect(mirror).toEqual({
    deliveryId,
    status: 'unknown',
    updatedAt: expect.anything(),
    providerMessageIds: ['part-1'],
    error: { outcome: 'unknown', code: 'provider_timeout' },
    attempts: expect.any(Array),
    traceId: expect.stringMatching(/^[0-9a-f]{32}$/),
  });
  expect(attemptEvents(mirror)).toEqual(['claimed', 'started', 'unknown:provider_timeout']);
  await expectSkip(key, deliveryId, 'outcome_unknown');
  expectApiError(await op('start', key, { deliveryId, leaseId: claim.leaseId }), 409, 'delivery_finished');

  // The connector later learns the provider did accept both parts: complete is the truth.
  expectSent(await op('complete', key, { deliveryId, leaseId: claim.leaseId, providerMessageIds: ['part-1', 'part-2'] }), deliveryId);
  const sent = await mirrorOnceStatus(setup, messageId, 'sent');
  expect(sent).toEqual({ deliveryId, status: 'sent', updatedAt: expect.anything(), sentAt: expect.anything(), providerMessageIds: ['part-1', 'part-2'], attempts: expect.any(Array), traceId: expect.stringMatching(/^[0-9a-f]{32}$/) });
  expect(attemptEvents(sent)).toEqual(['claimed', 'started', 'unknown:provider_timeout', 'sent']);
  await expectSkip(key, deliveryId, 'already_sent');
});

test('fail retry -> queued; the same call again -> queued; claim before notBefore -> 503 retry_delayed with Retry-After; afterwards a new lease', async () => {
  const setup = await conversation();
  const { deliveryId, messageId } = await replyAndNotify(setup, 'retry me');
  const claim = await claimReady(key, deliveryId);
  const body = { deliveryId, leaseId: claim.leaseId, outcome: 'retry', code: 'rate_limited', retryAfterMs: 60_000 };
  const before = Date.now();
  expectOk(await op('fail', key, body), { status: 'queued' });
  expectOk(await op('fail', key, body), { status: 'queued' });
  const stored = await deliveryDoc(setup, deliveryId);
  expect(stored).toMatchObject({ status: 'queued', error: null, lastFail: { outcome: 'retry', code: 'rate_limited' } });
  expect(stored.notBefore).toBeGreaterThanOrEqual(before + 60_000 - 1_000);
  expect(stored.notBefore).toBeLessThanOrEqual(Date.now() + 60_000 + 1_000);
  await mirrorOnceStatus(setup, messageId, 'queued');

  const delayed = await timedCall(() => op('claim', key, { deliveryId, requestId: randomUUID() }));
  expectApiError(delayed.result, 503, 'retry_delayed');
  expectRetryAfterUntil(delayed, stored.notBefore);
  // The old lease no longer holds it: start is lease_lost, a complete contradicts its own retry.
  expectApiError(await op('start', key, { deliveryId, leaseId: claim.leaseId }), 409, 'lease_lost');
  expectApiError(await op('complete', key, { deliveryId, leaseId: claim.leaseId, providerMessageIds: ['p'] }), 409, 'conflicting_completion');
  // A different fail under the old lease is not the repeated call: lease_lost.
  expectApiError(await op('fail', key, { ...body, code: 'something_else' }), 409, 'lease_lost');

  // Time passes (fixture: notBefore moved into the past): a fresh lease, attempt 2.
  await deliveryDocRef(setup.integration.workspaceId, deliveryId).update({ notBefore: Date.now() - 1 });
  const second = await claimReady(key, deliveryId);
  expect(second.leaseId).not.toBe(claim.leaseId);
  expect(await deliveryDoc(setup, deliveryId)).toMatchObject({ status: 'leased', attempts: 2 });
});

test('fail retry without retryAfterMs backs off 30 s (+ up to 50 % jitter) on the first attempt', async () => {
  const setup = await conversation();
  const { deliveryId } = await replyAndNotify(setup, 'backoff');
  const claim = await claimReady(key, deliveryId);
  const before = Date.now();
  expectOk(await op('fail', key, { deliveryId, leaseId: claim.leaseId, outcome: 'retry', code: 'temporarily_unavailable' }), { status: 'queued' });
  const stored = await deliveryDoc(setup, deliveryId);
  expect(stored.notBefore - before).toBeGreaterThanOrEqual(30_000 - 1_000);
  expect(stored.notBefore - before).toBeLessThanOrEqual(45_000 + 1_000);
  const delayed = await timedCall(() => op('claim', key, { deliveryId, requestId: randomUUID() }));
  expectApiError(delayed.result, 503, 'retry_delayed');
  expectRetryAfterUntil(delayed, stored.notBefore);
});
