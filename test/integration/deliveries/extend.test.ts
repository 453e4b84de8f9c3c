/**
 * Lease extension (docs/contract.md#extend), POST /v1/deliveries/extend through real HTTP (Hosting ->
 * Functions emulator): the live current lease of a leased or sending delivery gets now + 120 s,
 * at most 15 minutes after its claim (clamped, then 409 lease_limit_reached); wrong, expired and
 * finished cases are 409s that write nothing; the sweeper's check document moves with the lease.
 * Time is simulated by rewriting the lease's times with the Admin SDK (test fixture writes), as in
 * expiry.test.ts. Validation, 401/403 and foreign deliveries are in validation.test.ts.
 *
 * @serial runs the global sweeper and moves leases into the past, asserting records a concurrent suite's sweep would change (an expired lease requeued)
 */
import { randomUUID } from 'node:crypto';
import { sweep } from '../../../functions/src/deliveries/sweep';
import { adminDb, createTestIntegration } from '../helpers/stack';
import { attemptEvents, claimReady, type ConversationSetup, deliverFully, deliveryDoc, deliveryDocRef, expectApiError, expectHttp, expectOk, expectSent, mirrorOnceStatus, op, replyAndNotify, setLeaseExpiry, sharedConversationFixture, sleep } from '../helpers/deliveries';

const LEASE_MS = 120_000;
const LEASE_MAX_MS = 15 * 60_000;

let key: string;
const { conversation } = sharedConversationFixture((first) => {
  key = first.integration.key;
});

/**
 * Waits until the clock is past `at` (an instant the service granted a lease at), so that a lease
 * granted now ends strictly later than the one granted then. The service and the tests share the
 * machine's clock; the requests in between usually took longer than this already.
 */
async function clockPast(at: number): Promise<void> {
  await sleep(Math.max(0, at + CLOCK_STEP_MS - Date.now()));
}
/** How far past: a few milliseconds already make the later lease later (leases are whole milliseconds). */
const CLOCK_STEP_MS = 20;

const checkDoc = async (deliveryId: string) => (await adminDb().collection('deliveryChecks').doc(deliveryId).get()).data();

/** Extends and asserts a 200 `{ leaseExpiresAt }` (an integer); returns it. */
async function extendOk(deliveryId: string, leaseId: string): Promise<number> {
  const res = await op('extend', key, { deliveryId, leaseId });
  expectHttp(res, 200);
  const body = res.body as { leaseExpiresAt: number };
  expect(Object.keys(body)).toEqual(['leaseExpiresAt']);
  expect(Number.isInteger(body.leaseExpiresAt)).toBe(true);
  return body.leaseExpiresAt;
}

/** Test fixture for an old claim: the lease's claim time and expiry as given, on the record and its check document. */
async function setLeaseTimes(setup: Pick<ConversationSetup, 'integration'>, deliveryId: string, claimedAt: number, expiresAt: number): Promise<void> {
  const batch = adminDb().batch();
  batch.update(deliveryDocRef(setup.integration.workspaceId, deliveryId), { 'lease.claimedAt': claimedAt, 'lease.expiresAt': expiresAt });
  batch.update(adminDb().collection('deliveryChecks').doc(deliveryId), { dueAt: expiresAt });
  await batch.commit();
}

test('a live lease, leased then sending, is extended to now + 120 s (later than before); the record and its check move, the mirror does not', async () => {
  const setup = await conversation();
  const { deliveryId, messageId } = await replyAndNotify(setup, 'extend me');
  const claim = await claimReady(key, deliveryId);
  const stored = await deliveryDoc(setup, deliveryId);
  expect(stored.lease).toMatchObject({ leaseId: claim.leaseId, expiresAt: claim.leaseExpiresAt, claimedAt: claim.leaseExpiresAt - LEASE_MS });
  await clockPast(stored.lease.claimedAt as number);

  const before = Date.now();
  const extended = await extendOk(deliveryId, claim.leaseId);
  const after = Date.now();
  expect(extended).toBeGreaterThan(claim.leaseExpiresAt);
  expect(extended).toBeGreaterThanOrEqual(before + LEASE_MS - 2_000);
  expect(extended).toBeLessThanOrEqual(after + LEASE_MS + 2_000);
  const afterExtend = await deliveryDoc(setup, deliveryId);
  expect(afterExtend).toMatchObject({ status: 'leased', attempts: 1, lease: { leaseId: claim.leaseId, expiresAt: extended, claimedAt: stored.lease.claimedAt, started: false } });
  expect(afterExtend.attemptLog).toEqual(stored.attemptLog);
  expect(await checkDoc(deliveryId)).toMatchObject({ deliveryId, dueAt: extended });

  // Start and a second extend work under the extended lease.
  expectOk(await op('start', key, { deliveryId, leaseId: claim.leaseId }), { status: 'sending' });
  await clockPast(extended - LEASE_MS);
  const again = await extendOk(deliveryId, claim.leaseId);
  expect(again).toBeGreaterThan(extended);
  expect(await deliveryDoc(setup, deliveryId)).toMatchObject({ status: 'sending', lease: { expiresAt: again, started: true } });
  expect(await checkDoc(deliveryId)).toMatchObject({ dueAt: again });
  expectSent(await op('complete', key, { deliveryId, leaseId: claim.leaseId, providerMessageIds: ['p-ext'] }), deliveryId);
  expect(attemptEvents(await mirrorOnceStatus(setup, messageId, 'sent'))).toEqual(['claimed', 'started', 'sent']);
});

test('the sweeper does not expire an extended lease: a lease about to end, extended, outlives its first expiry', async () => {
  const setup = await conversation();
  const { deliveryId } = await replyAndNotify(setup, 'almost over');
  const claim = await claimReady(key, deliveryId);
  expectOk(await op('start', key, { deliveryId, leaseId: claim.leaseId }), { status: 'sending' });
  const firstExpiry = Date.now() + 2_000;
  await setLeaseExpiry(setup, deliveryId, firstExpiry);
  const extended = await extendOk(deliveryId, claim.leaseId);
  expect(extended).toBeGreaterThan(firstExpiry + 60_000);
  await sleep(Math.max(0, firstExpiry - Date.now()) + 500);

  await sweep(adminDb());
  expect(await deliveryDoc(setup, deliveryId)).toMatchObject({ status: 'sending', lease: { leaseId: claim.leaseId, expiresAt: extended } });
  expectSent(await op('complete', key, { deliveryId, leaseId: claim.leaseId, providerMessageIds: ['p-outlived'] }), deliveryId);
  expect((await deliveryDoc(setup, deliveryId)).attemptLog.map((e: { event: string }) => e.event)).toEqual(['claimed', 'started', 'sent']);
});

test('409 lease_lost for a lease that never held it and for a replaced lease; nothing written', async () => {
  const setup = await conversation();
  const { deliveryId } = await replyAndNotify(setup, 'wrong lease');
  const old = await claimReady(key, deliveryId);
  const stored = await deliveryDoc(setup, deliveryId);
  expectApiError(await op('extend', key, { deliveryId, leaseId: `l_${randomUUID()}` }), 409, 'lease_lost');
  expect(await deliveryDoc(setup, deliveryId)).toEqual(stored);

  await setLeaseExpiry(setup, deliveryId);
  const fresh = await claimReady(key, deliveryId);
  expectApiError(await op('extend', key, { deliveryId, leaseId: old.leaseId }), 409, 'lease_lost');
  expect(await deliveryDoc(setup, deliveryId)).toMatchObject({ status: 'leased', lease: { leaseId: fresh.leaseId, expiresAt: fresh.leaseExpiresAt } });
});

test('409 lease_lost for an expired lease, leased or sending (never revived); nothing written', async () => {
  const setup = await conversation();
  const a = await replyAndNotify(setup, 'expired before start');
  const claimA = await claimReady(key, a.deliveryId);
  await setLeaseExpiry(setup, a.deliveryId);
  const storedA = await deliveryDoc(setup, a.deliveryId);
  expectApiError(await op('extend', key, { deliveryId: a.deliveryId, leaseId: claimA.leaseId }), 409, 'lease_lost');
  expect(await deliveryDoc(setup, a.deliveryId)).toEqual(storedA);
  expectSent(await op('complete', key, { deliveryId: a.deliveryId, leaseId: claimA.leaseId, providerMessageIds: ['late'] }), a.deliveryId);

  const b = await replyAndNotify(setup, 'expired while sending');
  const claimB = await claimReady(key, b.deliveryId);
  expectOk(await op('start', key, { deliveryId: b.deliveryId, leaseId: claimB.leaseId }), { status: 'sending' });
  await setLeaseExpiry(setup, b.deliveryId);
  const storedB = await deliveryDoc(setup, b.deliveryId);
  expectApiError(await op('extend', key, { deliveryId: b.deliveryId, leaseId: claimB.leaseId }), 409, 'lease_lost');
  expect(await deliveryDoc(setup, b.deliveryId)).toEqual(storedB);
});

test('409 delivery_finished on a sent, failed or expired-while-sending (unknown) delivery', async () => {
  const setup = await conversation();
  const sent = await replyAndNotify(setup, 'sent');
  const sentClaim = await deliverFully(key, sent.deliveryId);
  expectApiError(await op('extend', key, { deliveryId: sent.deliveryId, leaseId: sentClaim.leaseId }), 409, 'delivery_finished');

  const failed = await replyAndNotify(setup, 'failed');
  const failedClaim = await claimReady(key, failed.deliveryId);
  expectSent(await op('fail', key, { deliveryId: failed.deliveryId, leaseId: failedClaim.leaseId, outcome: 'failed', code: 'blocked' }), failed.deliveryId, 'failed');
  expectApiError(await op('extend', key, { deliveryId: failed.deliveryId, leaseId: failedClaim.leaseId }), 409, 'delivery_finished');

  const unknown = await replyAndNotify(setup, 'cut off');
  const unknownClaim = await claimReady(key, unknown.deliveryId);
  expectOk(await op('start', key, { deliveryId: unknown.deliveryId, leaseId: unknownClaim.leaseId }), { status: 'sending' });
  await setLeaseExpiry(setup, unknown.deliveryId);
  await sweep(adminDb());
  expect(await deliveryDoc(setup, unknown.deliveryId)).toMatchObject({ status: 'unknown' });
  expectApiError(await op('extend', key, { deliveryId: unknown.deliveryId, leaseId: unknownClaim.leaseId }), 409, 'delivery_finished');
});

test('at most 15 minutes after the claim: the granted expiry is clamped to claim + 15 min, then 409 lease_limit_reached', async () => {
  const setup = await conversation();
  const { deliveryId } = await replyAndNotify(setup, 'a very slow provider');
  const claim = await claimReady(key, deliveryId);
  expectOk(await op('start', key, { deliveryId, leaseId: claim.leaseId }), { status: 'sending' });
  // As if claimed 14.5 minutes ago and extended since: 30 s are left before the cap.
  const claimedAt = Date.now() - LEASE_MAX_MS + 30_000;
  await setLeaseTimes(setup, deliveryId, claimedAt, Date.now() + 20_000);

  const clamped = await extendOk(deliveryId, claim.leaseId);
  expect(clamped).toBe(claimedAt + LEASE_MAX_MS);
  expect(await deliveryDoc(setup, deliveryId)).toMatchObject({ status: 'sending', lease: { expiresAt: clamped, claimedAt } });
  expect(await checkDoc(deliveryId)).toMatchObject({ dueAt: clamped });

  const stored = await deliveryDoc(setup, deliveryId);
  const refused = expectApiError(await op('extend', key, { deliveryId, leaseId: claim.leaseId }), 409, 'lease_limit_reached');
  expect(refused).toContain('15 minutes');
  expect(await deliveryDoc(setup, deliveryId)).toEqual(stored);
  // The lease still holds until the cap: the connector reports its outcome as usual.
  expectSent(await op('complete', key, { deliveryId, leaseId: claim.leaseId, providerMessageIds: ['p-capped'] }), deliveryId);
});

test("another integration's delivery is 404 delivery_not_found, exactly like an unknown id; the owner's lease is untouched", async () => {
  const setup = await conversation();
  const { deliveryId } = await replyAndNotify(setup, 'not yours');
  const claim = await claimReady(key, deliveryId);
  const other = await createTestIntegration({ workspaceId: setup.integration.workspaceId });
  const foreign = await op('extend', other.key, { deliveryId, leaseId: claim.leaseId });
  const unknown = await op('extend', other.key, { deliveryId: `d_${randomUUID()}`, leaseId: claim.leaseId });
  expectApiError(foreign, 404, 'delivery_not_found');
  expectApiError(unknown, 404, 'delivery_not_found');
  expect(foreign.body).toEqual(unknown.body);
  expect(await deliveryDoc(setup, deliveryId)).toMatchObject({ status: 'leased', lease: { leaseId: claim.leaseId, expiresAt: claim.leaseExpiresAt } });
});

test('strict body: unknown properties, a missing or wrong-typed leaseId, over-long ids are 400 invalid_request naming the field', async () => {
  const setup = await conversation();
  const { deliveryId } = await replyAndNotify(setup, 'strict');
  const claim = await claimReady(key, deliveryId);
  const cases: Array<[unknown, string]> = [
    [{ deliveryId, leaseId: claim.leaseId, extra: true }, 'extra'],
    [{ deliveryId, leaseId: claim.leaseId, seconds: 300 }, 'seconds'],
    [{ deliveryId }, 'leaseId'],
    [{ deliveryId, leaseId: 7 }, 'leaseId'],
    [{ deliveryId, leaseId: 'l'.repeat(129) }, 'leaseId'],
    [{ deliveryId: '', leaseId: claim.leaseId }, 'deliveryId'],
  ];
  for (const [body, field] of cases) expect(expectApiError(await op('extend', key, body), 400, 'invalid_request')).toContain(field);
  expect(await deliveryDoc(setup, deliveryId)).toMatchObject({ lease: { expiresAt: claim.leaseExpiresAt } });
});
