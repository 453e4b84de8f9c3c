/**
 * A plan names every document a delivery write changes (functions/src/rules/plan.ts): with each
 * record, whether the console sees a change (mirror or history entry), its due work (the check
 * document) and the operational event. These run on the service's rules and on the SDK's copy
 * (jest project `rules-sdk`).
 */
import { dueWorkOf, mirrorChanged, nextClaimable, planTransition, recordWrite } from '../../../functions/src/rules/plan';
import { newDelivery, storedRecord, type DeliveryRecord } from '../../../functions/src/rules/record';
import { answerOf, decideClaim, decideComplete, decideFail } from '../../../functions/src/rules/state-machine';

const T0 = 1_700_000_000_000;
const EXPIRY = 24 * 3_600_000;
const queued = (over: Partial<DeliveryRecord> = {}): DeliveryRecord => ({
  ...storedRecord(null, { ...newDelivery({ deliveryId: 'd_1', workspaceId: 'w', integrationId: 'i', conversationId: 'c', messageId: 'm', seq: 1, text: 'hi', now: T0 }), head: true }, T0, EXPIRY),
  ...over,
});
const facts = { now: T0 + 1000, predecessorUnfinished: false, recipient: { externalConversationId: 'x', externalCustomerId: 'y' } };

describe('mirrorChanged', () => {
  test('only what the console sees counts', () => {
    const d = queued();
    expect(mirrorChanged(null, d)).toBe(true);
    expect(mirrorChanged(d, { ...d, updatedAt: T0 + 1, lease: { leaseId: 'l', requestId: 'r', expiresAt: T0 + 9, started: false } })).toBe(false);
    expect(mirrorChanged(d, { ...d, status: 'leased' })).toBe(true);
    expect(mirrorChanged(d, { ...d, attemptLog: [{ at: T0, event: 'claimed' }] })).toBe(true);
    expect(mirrorChanged(d, { ...d, cancel: { status: 'too_late', requestedAt: T0, at: T0 } })).toBe(true);
  });
});

describe('dueWorkOf', () => {
  test('claimable: the liveness check and pendingAt; leased: the lease expiry; otherwise none', () => {
    const d = queued();
    expect(d.pendingAt).toBe(T0);
    expect(dueWorkOf(d)).toEqual({ dueAt: d.liveness?.checkAt, pendingAt: T0 });
    const lease = { leaseId: 'l', requestId: 'r', expiresAt: T0 + 120_000, started: false };
    const { pendingAt: _p, liveness: _l, ...waiting } = d;
    expect(dueWorkOf({ ...waiting, status: 'leased', lease })).toEqual({ dueAt: T0 + 120_000 });
    expect(dueWorkOf({ ...waiting, waiting: true })).toBeNull();
    expect(dueWorkOf({ ...waiting, status: 'sent' })).toBeNull();
  });
});

describe('recordWrite: what follows from a write', () => {
  test('a new plain reply: its mirror, its due work', () => {
    const d = queued();
    expect(recordWrite(null, d, null)).toMatchObject({ mirror: 'reply', due: dueWorkOf(d), exhausted: null });
  });

  test('an edit or unsend delivery: its entry in the reply history, not the mirror', () => {
    expect(recordWrite(null, queued({ kind: 'edit' }), null).mirror).toBe('history');
  });

  test('nothing the console sees and due work unmoved: no mirror, no check write', () => {
    const d = queued();
    expect(recordWrite(d, { ...d, updatedAt: T0 + 5 }, null)).toMatchObject({ mirror: null, due: null });
  });

  test('the end of a delivery clears its due work; the retry budget and never-claimed raise delivery.exhausted', () => {
    const d = queued();
    const { pendingAt: _p, liveness: _l, ...ended } = d;
    const failed = (code: string): DeliveryRecord => ({ ...ended, status: 'failed', error: { outcome: 'failed', code } });
    expect(recordWrite(d, failed('not_claimed'), null)).toMatchObject({ due: 'cleared', exhausted: { code: 'not_claimed' } });
    expect(recordWrite({ ...d, status: 'leased' }, failed('retry_exhausted'), null).exhausted).toEqual({ code: 'retry_exhausted' });
    expect(recordWrite(d, failed('recipient_blocked'), null).exhausted).toBeNull();
    expect(recordWrite(failed('not_claimed'), failed('not_claimed'), null).exhausted).toBeNull();
    expect(recordWrite(null, failed('not_claimed'), null).exhausted).toBeNull();
  });
});

describe('planTransition: every document of a transition', () => {
  test('a claim: the record leased, its mirror, the check moves from the liveness check to the lease expiry', () => {
    const d = queued();
    const decision = decideClaim(d, { requestId: 'r1', newLeaseId: 'l_1', ...facts });
    const plan = planTransition(d, decision, null, { now: facts.now, unclaimedExpiryMs: EXPIRY });
    expect(plan?.decided).toMatchObject({ mirror: 'reply', exhausted: null, due: { dueAt: plan?.decided?.record.lease?.expiresAt } });
    expect(plan?.decided?.due).not.toHaveProperty('pendingAt');
    expect(plan?.woken).toBeNull();
  });

  test('a complete that releases the next delivery (a claim found it waiting): its due work cleared, the next one woken, claimable and notified', () => {
    const d = queued();
    const claim = planTransition(d, decideClaim(d, { requestId: 'r1', newLeaseId: 'l_1', ...facts }), null, { now: facts.now, unclaimedExpiryMs: EXPIRY });
    const leased = claim?.decided?.record as DeliveryRecord;
    const next = { ...newDelivery({ deliveryId: 'd_2', workspaceId: 'w', integrationId: 'i', conversationId: 'c', messageId: 'm2', seq: 2, text: 'b', now: T0 }), head: false, waiting: true };
    const plan = planTransition(leased, decideComplete(leased, { leaseId: 'l_1', providerMessageIds: ['p1'], now: facts.now }), next, { now: facts.now, unclaimedExpiryMs: EXPIRY });
    expect(plan?.decided).toMatchObject({ mirror: 'reply', due: 'cleared', exhausted: null });
    expect(plan?.woken).toMatchObject({ mirror: null, due: { pendingAt: facts.now }, notify: { reason: 'wake' } });
    expect(plan?.queue).toEqual({ terminalSeq: 1, releasedSeq: 2, waiting: null });
    // Claimable now: the answer names it, with exactly its notification's identifiers.
    expect(plan?.next).toEqual({ deliveryId: 'd_2', workspaceId: 'w', integrationId: 'i', conversationId: 'c', messageId: 'm2' });
  });

  test('next: only a woken delivery a claim would get now; a final fail names it, a retry (which releases nothing) does not', () => {
    const d = queued();
    const leased = planTransition(d, decideClaim(d, { requestId: 'r1', newLeaseId: 'l_1', ...facts }), null, { now: facts.now, unclaimedExpiryMs: EXPIRY })?.decided?.record as DeliveryRecord;
    const waiting = { ...newDelivery({ deliveryId: 'd_2', workspaceId: 'w', integrationId: 'i', conversationId: 'c', messageId: 'm2', seq: 2, text: 'b', now: T0 }), head: false, waiting: true };
    const failed = planTransition(leased, decideFail(leased, { leaseId: 'l_1', outcome: 'failed', code: 'rejected', random: 0, now: facts.now }), waiting, { now: facts.now, unclaimedExpiryMs: EXPIRY });
    expect(failed?.next?.deliveryId).toBe('d_2');
    const retry = planTransition(leased, decideFail(leased, { leaseId: 'l_1', outcome: 'retry', code: 'busy', random: 0, now: facts.now }), null, { now: facts.now, unclaimedExpiryMs: EXPIRY });
    expect(retry?.woken).toBeNull();
    expect(retry?.next).toBeNull();
    // A woken delivery that must still wait (a retry delay of its own) is not claimable now.
    const woken = failed?.woken ?? null;
    expect(woken).not.toBeNull();
    if (woken === null) return;
    expect(nextClaimable({ ...woken, record: { ...woken.record, notBefore: facts.now + 5_000 } }, facts.now)).toBeNull();
    expect(nextClaimable({ ...woken, record: { ...woken.record, notBefore: facts.now } }, facts.now)?.deliveryId).toBe('d_2');
    expect(nextClaimable({ ...woken, record: { ...woken.record, status: 'leased' } }, facts.now)).toBeNull();
    expect(nextClaimable(null, facts.now)).toBeNull();
  });

  test('answerOf: complete and fail answer `next`; no other transition does, and none without one', () => {
    const next = { deliveryId: 'd_2', workspaceId: 'w', integrationId: 'i', conversationId: 'c', messageId: 'm2' };
    expect(answerOf('completeDelivery', { status: 'sent' }, next)).toEqual({ status: 'sent', next });
    expect(answerOf('failDelivery', { status: 'failed' }, next)).toEqual({ status: 'failed', next });
    expect(answerOf('completeDelivery', { status: 'sent' }, null)).toEqual({ status: 'sent' });
    // A claim of a cancelled delivery ends it and may release the next, but its answer has no `next`.
    expect(answerOf('claimDelivery', { status: 'skip', reason: 'already_failed' }, next)).toEqual({ status: 'skip', reason: 'already_failed' });
  });

  test('a fail that spends the retry budget: delivery.exhausted with the record', () => {
    let d = queued({ attempts: 100 });
    const claim = planTransition(d, decideClaim(d, { requestId: 'r1', newLeaseId: 'l_1', ...facts }), null, { now: facts.now, unclaimedExpiryMs: EXPIRY });
    d = claim?.decided?.record as DeliveryRecord;
    const plan = planTransition(d, decideFail(d, { leaseId: 'l_1', outcome: 'retry', code: 'timeout', random: 0, now: facts.now }), null, { now: facts.now, unclaimedExpiryMs: EXPIRY });
    expect(plan?.decided?.record.status).toBe('failed');
    expect(plan?.decided?.exhausted).toEqual({ code: 'retry_exhausted' });
  });
});
