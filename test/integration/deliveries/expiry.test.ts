/**
 * Lease expiry (docs/contract.md#leases). Time is simulated by rewriting `lease.expiresAt` into the
 * past on the delivery document (a test fixture write with the Admin SDK); expiry is then applied
 * either lazily by the next operation or by the every-minute sweeper, run here in-process
 * (`sweep` publishes with the real Pub/Sub client against the emulator).
 *
 * @serial runs the global sweeper (every workspace's due leases and checks) and asserts its counts and the lazy (claim-time) expiry of leases it moved into the past, which another suite's sweep would take first
 */
import { randomUUID } from 'node:crypto';
import { sweep } from '../../../functions/src/deliveries/sweep';
import { adminDb } from '../helpers/stack';
import { attemptEvents, claimReady, deliveryDoc, expectApiError, expectOk, expectSent, expectSkip, mirrorOnceStatus, notificationsFor, op, replyAndNotify, setLeaseExpiry, sharedConversationFixture, type TestTopic, waitForNotifications } from '../helpers/deliveries';

let topic: TestTopic;
let key: string;
const { conversation } = sharedConversationFixture((first) => {
  ({ topic } = first);
  key = first.integration.key;
});

test('before start, lazily: an expired lease is claimable again with a new lease; the old lease is lost', async () => {
  const setup = await conversation();
  const { deliveryId } = await replyAndNotify(setup, 'lazy');
  const oldRequest = randomUUID();
  const old = await claimReady(key, deliveryId, oldRequest);
  await setLeaseExpiry(setup, deliveryId);

  const newRequest = randomUUID();
  const fresh = await claimReady(key, deliveryId, newRequest);
  expect(fresh.leaseId).not.toBe(old.leaseId);
  expect(fresh.leaseExpiresAt).toBeGreaterThan(Date.now() + 100_000);
  expect(await deliveryDoc(setup, deliveryId)).toMatchObject({ status: 'leased', attempts: 2, lease: { leaseId: fresh.leaseId, requestId: newRequest } });

  // The old claim's retry no longer gets its lease: someone else holds it now.
  expectApiError(await op('claim', key, { deliveryId, requestId: oldRequest }), 503, 'lease_busy');
  expectApiError(await op('start', key, { deliveryId, leaseId: old.leaseId }), 409, 'lease_lost');
  expectApiError(await op('complete', key, { deliveryId, leaseId: old.leaseId, providerMessageIds: ['p'] }), 409, 'lease_lost');
  expectApiError(await op('fail', key, { deliveryId, leaseId: old.leaseId, outcome: 'failed', code: 'x' }), 409, 'lease_lost');
  expectOk(await op('start', key, { deliveryId, leaseId: fresh.leaseId }), { status: 'sending' });
});

test('with an expired lease (not yet swept): start and fail are 409 lease_lost, a late complete is accepted as sent', async () => {
  const setup = await conversation();
  const { deliveryId, messageId } = await replyAndNotify(setup, 'late');
  const claim = await claimReady(key, deliveryId);
  await setLeaseExpiry(setup, deliveryId);
  expectApiError(await op('start', key, { deliveryId, leaseId: claim.leaseId }), 409, 'lease_lost');
  expectApiError(await op('fail', key, { deliveryId, leaseId: claim.leaseId, outcome: 'retry', code: 'x' }), 409, 'lease_lost');
  expectApiError(await op('fail', key, { deliveryId, leaseId: claim.leaseId, outcome: 'unknown', code: 'x' }), 409, 'lease_lost');
  expectSent(await op('complete', key, { deliveryId, leaseId: claim.leaseId, providerMessageIds: ['late-1'] }), deliveryId);
  expect(await mirrorOnceStatus(setup, messageId, 'sent')).toMatchObject({ providerMessageIds: ['late-1'] });
  await expectSkip(key, deliveryId, 'already_sent');
});

test('before start, by the sweeper: back to queued and the notification is re-published; a claim then gets a new lease', async () => {
  const setup = await conversation();
  const { deliveryId, messageId } = await replyAndNotify(setup, 'swept before start');
  const old = await claimReady(key, deliveryId);
  await setLeaseExpiry(setup, deliveryId);
  expect(notificationsFor(topic, deliveryId)).toHaveLength(1);

  const result = await sweep(adminDb());
  expect(result.expiredLeases).toBeGreaterThanOrEqual(1);
  expect(await deliveryDoc(setup, deliveryId)).toMatchObject({ status: 'queued', notBefore: null, error: null, attempts: 1 });
  await mirrorOnceStatus(setup, messageId, 'queued');
  await waitForNotifications(topic, deliveryId, 2);

  const fresh = await claimReady(key, deliveryId);
  expect(fresh.leaseId).not.toBe(old.leaseId);
  expectApiError(await op('start', key, { deliveryId, leaseId: old.leaseId }), 409, 'lease_lost');
  // A second sweep finds nothing to do for this delivery (its new lease is live).
  await sweep(adminDb());
  expect(await deliveryDoc(setup, deliveryId)).toMatchObject({ status: 'leased', lease: { leaseId: fresh.leaseId } });
});

test('after start, by the sweeper: unknown / lease_expired_after_start (mirrored), the next reply is released; a late complete makes it sent', async () => {
  const setup = await conversation();
  const a = await replyAndNotify(setup, 'A: started, then the connector vanished');
  const b = await replyAndNotify(setup, 'B: waits for A');
  const claimA = await claimReady(key, a.deliveryId);
  expectOk(await op('start', key, { deliveryId: a.deliveryId, leaseId: claimA.leaseId }), { status: 'sending' });
  await expectSkip(key, b.deliveryId, 'waiting_for_previous');
  await setLeaseExpiry(setup, a.deliveryId);

  await sweep(adminDb());
  expect(await deliveryDoc(setup, a.deliveryId)).toMatchObject({ status: 'unknown', error: { outcome: 'unknown', code: 'lease_expired_after_start' } });
  const mirror = await mirrorOnceStatus(setup, a.messageId, 'unknown');
  expect(mirror).toEqual({ deliveryId: a.deliveryId, status: 'unknown', updatedAt: expect.anything(), error: { outcome: 'unknown', code: 'lease_expired_after_start' }, attempts: expect.any(Array), traceId: expect.stringMatching(/^[0-9a-f]{32}$/) });
  expect(attemptEvents(mirror)).toEqual(['claimed', 'started', 'lease_expired:lease_expired_after_start']);
  await expectSkip(key, a.deliveryId, 'outcome_unknown');
  expectApiError(await op('start', key, { deliveryId: a.deliveryId, leaseId: claimA.leaseId }), 409, 'delivery_finished');

  // B was waiting: A's terminal transition re-publishes it and it is ready now.
  await waitForNotifications(topic, b.deliveryId, 2);
  const claimB = await claimReady(key, b.deliveryId);

  // The vanished connector comes back: the provider had accepted A. Late completion is the truth.
  expectSent(await op('complete', key, { deliveryId: a.deliveryId, leaseId: claimA.leaseId, providerMessageIds: ['a-1'] }), a.deliveryId);
  const sent = await mirrorOnceStatus(setup, a.messageId, 'sent');
  expect(sent).toEqual({ deliveryId: a.deliveryId, status: 'sent', updatedAt: expect.anything(), sentAt: expect.anything(), providerMessageIds: ['a-1'], attempts: expect.any(Array), traceId: expect.stringMatching(/^[0-9a-f]{32}$/) });
  expect(attemptEvents(sent)).toEqual(['claimed', 'started', 'lease_expired:lease_expired_after_start', 'sent']);
  // B is unaffected (it was released once, and still holds its lease).
  expect(await deliveryDoc(setup, b.deliveryId)).toMatchObject({ status: 'leased', lease: { leaseId: claimB.leaseId } });
});

test('after start, lazily on claim: outcome_unknown, the next reply is released; a late fail failed refines it to failed', async () => {
  const setup = await conversation();
  const a = await replyAndNotify(setup, 'A');
  const b = await replyAndNotify(setup, 'B');
  const claimA = await claimReady(key, a.deliveryId);
  expectOk(await op('start', key, { deliveryId: a.deliveryId, leaseId: claimA.leaseId }), { status: 'sending' });
  await expectSkip(key, b.deliveryId, 'waiting_for_previous');
  await setLeaseExpiry(setup, a.deliveryId);

  // Someone claims A again (e.g. a redelivered notification): expiry applies on the spot.
  await expectSkip(key, a.deliveryId, 'outcome_unknown');
  expect(await deliveryDoc(setup, a.deliveryId)).toMatchObject({ status: 'unknown', error: { code: 'lease_expired_after_start' } });
  await mirrorOnceStatus(setup, a.messageId, 'unknown');
  await waitForNotifications(topic, b.deliveryId, 2);
  await claimReady(key, b.deliveryId);

  // The cut-off lease reports a definite failure: failed, with its code.
  expectSent(await op('fail', key, { deliveryId: a.deliveryId, leaseId: claimA.leaseId, outcome: 'failed', code: 'provider_rejected' }), a.deliveryId, 'failed');
  const failed = await mirrorOnceStatus(setup, a.messageId, 'failed');
  expect(failed).toEqual({
    deliveryId: a.deliveryId,
    status: 'failed',
    updatedAt: expect.anything(),
    error: { outcome: 'failed', code: 'provider_rejected' },
    attempts: expect.any(Array),
    traceId: expect.stringMatching(/^[0-9a-f]{32}$/),
  });
  // Expiry applied by the claim, then the cut-off lease's own late word.
  expect(attemptEvents(failed)).toEqual(['claimed', 'started', 'lease_expired:lease_expired_after_start', 'failed:provider_rejected']);
  await expectSkip(key, a.deliveryId, 'already_failed');
});
