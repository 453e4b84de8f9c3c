/**
 * Delivery state machine (functions/src/rules/state-machine.ts): docs/contract.md#delivery-states and decisions.md
 * section 5, row by row, plus the boundaries and the decisions documented in the module header.
 * Every input record is deep-frozen, so any mutation by the code under test throws.
 */
import { ApiError, ConflictError, NotFoundError, ServiceUnavailableError } from '../../../functions/src/rules/errors';
import {
  BACKOFF_BASE_MS,
  BACKOFF_CAP_MS,
  LEASE_MAX_MS,
  LEASE_MS,
  MAX_ATTEMPTS,
  RETRY_WINDOW_MS,
  backoffMs,
  holdsLease,
  isLeaseLive,
  isTerminal,
  newDelivery,
  recipientFor,
  retryBudgetSpent,
  visibleDelivery,
  withOutcomeTimes,
  type DeliveryRecord,
  type DeliveryStatus,
  type Recipient,
} from '../../../functions/src/rules/record';
import {
  applyLeaseExpiry,
  decideCancel,
  decideClaim,
  decideComplete,
  decideExtend,
  decideFail,
  decideLeaseExpiry,
  decideReceipt,
  decideStart,
  receiptProblems,
  decideWake,
  type ClaimInput,
  type FailInput,
} from '../../../functions/src/rules/state-machine';

// ---------------------------------------------------------------------------------------------
// Fixtures

const T0 = 1_700_000_000_000;
const RECIPIENT: Recipient = { externalConversationId: 'ext-conv-1', externalCustomerId: 'cust-1' };

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value as Record<string, unknown>)) deepFreeze(v);
  }
  return value;
}

/** A frozen queued delivery created at T0, with overrides. */
function rec(overrides: Partial<DeliveryRecord> = {}): DeliveryRecord {
  return deepFreeze({
    ...newDelivery({
      deliveryId: 'd_1',
      workspaceId: 'ws1',
      integrationId: 'int1',
      conversationId: 'c_1',
      messageId: 'm_1',
      seq: 1,
      text: 'Hello there',
      now: T0,
    }),
    ...overrides,
  });
}

interface LeaseOpts {
  leaseId?: string;
  requestId?: string;
  at?: number;
  attempts?: number;
  extra?: Partial<DeliveryRecord>;
}

/** A frozen delivery leased by `leaseId` at `at` (its `attempts`-th lease). */
function leased({ leaseId = 'L1', requestId = 'R1', at = T0, attempts = 1, extra = {} }: LeaseOpts = {}): DeliveryRecord {
  const leaseHistory = [...Array.from({ length: attempts - 1 }, (_, i) => `old${i + 1}`), leaseId];
  return rec({
    status: 'leased',
    attempts,
    updatedAt: at,
    lease: { leaseId, requestId, expiresAt: at + LEASE_MS, started: false },
    leaseHistory,
    ...extra,
  });
}

/** A frozen delivery in `sending` under `leaseId`. */
function sending(opts: LeaseOpts = {}): DeliveryRecord {
  const d = leased(opts);
  return deepFreeze({ ...d, status: 'sending' as const, lease: { ...d.lease!, started: true } });
}

function claimIn(now: number, over: Partial<ClaimInput> = {}): ClaimInput {
  return { now, requestId: 'R1', newLeaseId: 'Lnew', predecessorUnfinished: false, recipient: RECIPIENT, ...over };
}

function failIn(now: number, over: Partial<FailInput> = {}): FailInput {
  return { now, leaseId: 'L1', outcome: 'retry', code: 'provider_busy', random: 0, ...over };
}

/** Runs `fn`, expecting an ApiError of class `cls` with `code`; returns it for more assertions. */
function expectApiError(fn: () => unknown, cls: abstract new (...a: never[]) => ApiError, code: string): ApiError {
  let caught: unknown;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  expect(caught).toBeInstanceOf(cls);
  const err = caught as ApiError;
  expect(err.code).toBe(code);
  return err;
}

/** Drives a fresh delivery to a terminal status through the normal path. */
function finished(status: 'sent' | 'failed' | 'unknown'): DeliveryRecord {
  const s = sending();
  const now = T0 + 1000;
  const next =
    status === 'sent'
      ? decideComplete(s, { now, leaseId: 'L1', providerMessageIds: ['p1'] }).next
      : decideFail(s, failIn(now, { outcome: status, code: `x_${status}` })).next;
  return deepFreeze(next!);
}

// ---------------------------------------------------------------------------------------------
// Helpers and constants

describe('constants and helpers', () => {
  test('constants match the spec and decisions', () => {
    expect(LEASE_MS).toBe(120_000);
    expect(MAX_ATTEMPTS).toBe(10);
    expect(RETRY_WINDOW_MS).toBe(86_400_000);
    expect(BACKOFF_BASE_MS).toBe(30_000);
    expect(BACKOFF_CAP_MS).toBe(3_600_000);
  });

  test.each<[DeliveryStatus, boolean]>([
    ['queued', false],
    ['leased', false],
    ['sending', false],
    ['sent', true],
    ['failed', true],
    ['unknown', true],
  ])('isTerminal(%s) = %s', (s, expected) => {
    expect(isTerminal(s)).toBe(expected);
  });

  test('a lease is live strictly before its expiry', () => {
    const lease = { leaseId: 'L', requestId: 'R', expiresAt: T0, started: false };
    expect(isLeaseLive(lease, T0 - 1)).toBe(true);
    expect(isLeaseLive(lease, T0)).toBe(false);
    expect(isLeaseLive(null, T0)).toBe(false);
  });

  test('holdsLease needs the current, live lease on a leased/sending delivery', () => {
    const d = leased();
    expect(holdsLease(d, 'L1', T0 + LEASE_MS - 1)).toBe(true);
    expect(holdsLease(d, 'L1', T0 + LEASE_MS)).toBe(false);
    expect(holdsLease(d, 'other', T0)).toBe(false);
    expect(holdsLease(rec({ ...d, status: 'queued' }), 'L1', T0)).toBe(false);
  });

  test('retry budget: spent at 10 attempts or exactly 24 h after creation', () => {
    expect(retryBudgetSpent(rec({ attempts: 9 }), T0 + RETRY_WINDOW_MS - 1)).toBe(false);
    expect(retryBudgetSpent(rec({ attempts: 10 }), T0)).toBe(true);
    expect(retryBudgetSpent(rec({ attempts: 1 }), T0 + RETRY_WINDOW_MS)).toBe(true);
  });

  test('recipientFor prefers the last customer, else the last sender', () => {
    expect(
      recipientFor({ externalConversationId: 'x', lastCustomerExternalId: 'cust', lastSenderExternalId: 'bot' }),
    ).toEqual({ externalConversationId: 'x', externalCustomerId: 'cust' });
    expect(recipientFor({ externalConversationId: 'x', lastSenderExternalId: 'bot' })).toEqual({
      externalConversationId: 'x',
      externalCustomerId: 'bot',
    });
    expect(recipientFor({ externalConversationId: 'x', lastCustomerExternalId: null, lastSenderExternalId: 'bot' }))
      .toEqual({ externalConversationId: 'x', externalCustomerId: 'bot' });
  });

  test('visibleDelivery: missing and foreign deliveries are the same 404', () => {
    const me = { workspaceId: 'ws1', integrationId: 'int1' };
    const missing = expectApiError(() => visibleDelivery(undefined, me), NotFoundError, 'delivery_not_found');
    const nil = expectApiError(() => visibleDelivery(null, me), NotFoundError, 'delivery_not_found');
    const foreign = expectApiError(
      () => visibleDelivery(rec(), { workspaceId: 'ws1', integrationId: 'int2' }),
      NotFoundError,
      'delivery_not_found',
    );
    const otherWs = expectApiError(
      () => visibleDelivery(rec(), { workspaceId: 'ws2', integrationId: 'int1' }),
      NotFoundError,
      'delivery_not_found',
    );
    for (const e of [nil, foreign, otherWs]) expect(e.message).toBe(missing.message);
    expect(foreign.status).toBe(404);
    const d = rec();
    expect(visibleDelivery(d, me)).toBe(d);
  });

  test('newDelivery starts queued with no lease and empty history', () => {
    const d = rec();
    expect(d).toMatchObject({
      status: 'queued',
      attempts: 0,
      createdAt: T0,
      updatedAt: T0,
      notBefore: null,
      lease: null,
      leaseHistory: [],
      waiting: false,
      completion: null,
      lastFail: null,
      providerMessageIds: [],
      error: null,
      seq: 1,
      text: 'Hello there',
    });
  });
});

describe('backoffMs', () => {
  test('random 0: 30 s doubling per attempt, capped at 1 h', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((n) => backoffMs(n, 0))).toEqual([
      30_000, 60_000, 120_000, 240_000, 480_000, 960_000, 1_920_000, 3_600_000, 3_600_000, 3_600_000,
    ]);
  });

  test('random ~1: at most +50 % and never above the cap', () => {
    const r = 0.9999999999;
    expect(backoffMs(1, r)).toBe(44_999);
    expect(backoffMs(2, r)).toBe(89_999);
    expect(backoffMs(7, r)).toBe(2_879_999);
    expect(backoffMs(8, r)).toBe(3_600_000);
    expect(backoffMs(10, r)).toBe(3_600_000);
  });

  test('always within [30 s, 1 h] and non-decreasing in the attempt for a fixed random', () => {
    for (const r of [0, 0.1, 0.5, 0.75, 0.999999]) {
      let prev = 0;
      for (let n = 1; n <= 60; n++) {
        const b = backoffMs(n, r);
        expect(b).toBeGreaterThanOrEqual(BACKOFF_BASE_MS);
        expect(b).toBeLessThanOrEqual(BACKOFF_CAP_MS);
        expect(Number.isInteger(b)).toBe(true);
        expect(b).toBeGreaterThanOrEqual(prev);
        prev = b;
      }
    }
  });

  test('jitter spreads the delay: two randoms give two delays', () => {
    expect(backoffMs(3, 0.2)).toBe(132_000);
    expect(backoffMs(3, 0.8)).toBe(168_000);
  });

  test('degenerate inputs are clamped, not propagated', () => {
    expect(backoffMs(0, 0)).toBe(30_000);
    expect(backoffMs(-5, 0)).toBe(30_000);
    expect(backoffMs(Number.NaN, 0)).toBe(30_000);
    expect(backoffMs(1_000_000, 0.5)).toBe(3_600_000);
    expect(backoffMs(1, -1)).toBe(30_000);
    expect(backoffMs(1, 7)).toBe(45_000);
    expect(backoffMs(1, Number.NaN)).toBe(30_000);
  });
});

// ---------------------------------------------------------------------------------------------
// docs/contract.md#delivery-states (claim, start, complete, fail), one test per row

describe('spec section 3 table', () => {
  test('claim, can be processed now: ready, 120-second lease, message and recipient', () => {
    const r = decideClaim(rec(), claimIn(T0 + 5));
    expect(r.response).toEqual({
      status: 'ready',
      leaseId: 'Lnew',
      leaseExpiresAt: T0 + 5 + 120_000,
      message: { text: 'Hello there', recipient: RECIPIENT },
    });
    expect(r.next?.status).toBe('leased');
  });

  test('claim, earlier reply unfinished: skip waiting_for_previous; the predecessor completion wakes it', () => {
    const claim = decideClaim(rec({ seq: 2 }), claimIn(T0, { predecessorUnfinished: true }));
    expect(claim.response).toEqual({ status: 'skip', reason: 'waiting_for_previous' });
    expect(claim.next?.waiting).toBe(true);

    // The predecessor completes; its decision says "release the next one", which wakes this one.
    const pred = decideComplete(sending(), { now: T0 + 10, leaseId: 'L1', providerMessageIds: ['p'] });
    expect(pred.effects.releasesNext).toBe(true);
    const wake = decideWake(deepFreeze(claim.next!), T0 + 11);
    expect(wake?.effects.notify?.at).toBe(T0 + 11);
    expect(wake?.next?.waiting).toBe(false);
    // The re-published notification now claims ready.
    const again = decideClaim(deepFreeze(wake!.next!), claimIn(T0 + 12, { requestId: 'R2' }));
    expect(again.response.status).toBe('ready');
  });

  test('start, lease valid: sending (and sent is also a possible response)', () => {
    expect(decideStart(leased(), { now: T0 + 1, leaseId: 'L1' }).response).toEqual({ status: 'sending' });
    expect(decideStart(finished('sent'), { now: T0 + 2000, leaseId: 'L1' }).response).toEqual({ status: 'sent' });
  });

  test('complete, lease valid, provider ids: sent; idempotent for the same lease and ids', () => {
    const first = decideComplete(sending(), { now: T0 + 1, leaseId: 'L1', providerMessageIds: ['a', 'b'] });
    expect(first.response).toEqual({ status: 'sent' });
    const again = decideComplete(deepFreeze(first.next!), { now: T0 + 2, leaseId: 'L1', providerMessageIds: ['a', 'b'] });
    expect(again.response).toEqual({ status: 'sent' });
    expect(again.next).toBeNull();
  });

  test.each<['retry' | 'failed' | 'unknown', 'queued' | 'failed' | 'unknown']>([
    ['retry', 'queued'],
    ['failed', 'failed'],
    ['unknown', 'unknown'],
  ])('fail with outcome %s: response status %s (one of the fail statuses)', (outcome, status) => {
    const r = decideFail(sending(), failIn(T0 + 1, { outcome }));
    expect(r.response).toEqual({ status });
    expect(r.next?.status).toBe(status);
  });

  test('fail unknown: the provider call is not repeated automatically', () => {
    const r = decideFail(sending(), failIn(T0 + 1, { outcome: 'unknown', code: 'timeout' }));
    expect(r.effects.notify).toBeNull();
    const claim = decideClaim(deepFreeze(r.next!), claimIn(T0 + 10 * LEASE_MS, { requestId: 'R9', newLeaseId: 'L9' }));
    expect(claim.response).toEqual({ status: 'skip', reason: 'outcome_unknown' });
    expect(claim.next).toBeNull();
  });
});

// ---------------------------------------------------------------------------------------------
// claim (docs/contract.md#claim)

describe('claim', () => {
  test.each<['sent' | 'failed' | 'unknown', string]>([
    ['sent', 'already_sent'],
    ['failed', 'already_failed'],
    ['unknown', 'outcome_unknown'],
  ])('terminal %s: skip %s, no write, no effects', (status, reason) => {
    const d = finished(status);
    const r = decideClaim(d, claimIn(T0 + 5000, { requestId: 'Rx', newLeaseId: 'Lx' }));
    expect(r.response).toEqual({ status: 'skip', reason });
    expect(r.next).toBeNull();
    expect(r.effects).toEqual({ releasesNext: false, notify: null });
  });

  test('terminal wins over an unfinished predecessor (checked first)', () => {
    const r = decideClaim(finished('sent'), claimIn(T0 + 5000, { predecessorUnfinished: true, newLeaseId: 'Lx' }));
    expect(r.response).toEqual({ status: 'skip', reason: 'already_sent' });
  });

  test('waiting_for_previous marks the delivery waiting; a repeat does not write again', () => {
    const d = rec({ seq: 3 });
    const r = decideClaim(d, claimIn(T0 + 7, { predecessorUnfinished: true }));
    expect(r.response).toEqual({ status: 'skip', reason: 'waiting_for_previous' });
    expect(r.next).toEqual({ ...d, waiting: true, updatedAt: T0 + 7 });
    expect(r.effects).toEqual({ releasesNext: false, notify: null });

    const again = decideClaim(deepFreeze(r.next!), claimIn(T0 + 8, { predecessorUnfinished: true, requestId: 'R2' }));
    expect(again.response).toEqual({ status: 'skip', reason: 'waiting_for_previous' });
    expect(again.next).toBeNull();
  });

  test('ready: fresh lease now + 120 s, attempts + 1, history appended, retry time and waiting cleared', () => {
    const d = rec({ attempts: 2, leaseHistory: ['a', 'b'], notBefore: T0 + 100, waiting: true, lease: { leaseId: 'b', requestId: 'Rb', expiresAt: T0, started: true } });
    const now = T0 + 100;
    const r = decideClaim(d, claimIn(now, { requestId: 'R3', newLeaseId: 'c' }));
    expect(r.response).toMatchObject({ status: 'ready', leaseId: 'c', leaseExpiresAt: now + LEASE_MS });
    expect(r.next).toEqual({
      ...d,
      status: 'leased',
      attempts: 3,
      leaseHistory: ['a', 'b', 'c'],
      lease: { leaseId: 'c', requestId: 'R3', expiresAt: now + LEASE_MS, started: false, claimedAt: now },
      notBefore: null,
      waiting: false,
      head: true,
      updatedAt: now,
      attemptLog: [{ at: now, event: 'claimed' }],
    });
    expect(r.effects).toEqual({ releasesNext: false, notify: null });
  });

  test.each<['leased' | 'sending']>([['leased'], ['sending']])(
    'live %s lease + same requestId: the same lease back, unchanged expiry, no write',
    (status) => {
      const d = status === 'leased' ? leased() : sending();
      const r = decideClaim(d, claimIn(T0 + 60_000, { requestId: 'R1', newLeaseId: 'Lnew' }));
      expect(r.response).toEqual({
        status: 'ready',
        leaseId: 'L1',
        leaseExpiresAt: T0 + LEASE_MS,
        message: { text: 'Hello there', recipient: RECIPIENT },
      });
      expect(r.next).toBeNull();
    },
  );

  test.each<[number, number]>([
    [0, 120],
    [1, 120],
    [999, 120],
    [1000, 119],
    [60_500, 60],
    [LEASE_MS - 1, 1],
  ])('live lease + other requestId, %i ms into the lease: 503 lease_busy, Retry-After %i s', (elapsed, seconds) => {
    for (const d of [leased(), sending()]) {
      const err = expectApiError(
        () => decideClaim(d, claimIn(T0 + elapsed, { requestId: 'R2' })),
        ServiceUnavailableError,
        'lease_busy',
      );
      expect(err.status).toBe(503);
      expect(err.retryAfterSeconds).toBe(seconds);
    }
  });

  test('a leased delivery whose lease expires exactly now is claimable by anyone', () => {
    const now = T0 + LEASE_MS;
    for (const requestId of ['R1', 'R2']) {
      const r = decideClaim(leased(), claimIn(now, { requestId, newLeaseId: 'L2' }));
      expect(r.response).toMatchObject({ status: 'ready', leaseId: 'L2', leaseExpiresAt: now + LEASE_MS });
      expect(r.next).toMatchObject({ status: 'leased', attempts: 2, leaseHistory: ['L1', 'L2'] });
      expect(r.next?.lease).toEqual({ leaseId: 'L2', requestId, expiresAt: now + LEASE_MS, started: false, claimedAt: now });
      expect(r.effects.notify).toBeNull();
    }
  });

  test('a sending delivery whose lease expired is not re-leased: it becomes unknown (without the sweeper)', () => {
    const now = T0 + LEASE_MS;
    const r = decideClaim(sending(), claimIn(now, { requestId: 'R1', newLeaseId: 'L2' }));
    expect(r.response).toEqual({ status: 'skip', reason: 'outcome_unknown' });
    expect(r.next).toMatchObject({
      status: 'unknown',
      error: { outcome: 'unknown', code: 'lease_expired_after_start' },
      attempts: 1,
      leaseHistory: ['L1'],
      updatedAt: now,
    });
    expect(r.effects).toEqual({ releasesNext: true, notify: null });
    // Same outcome as the sweeper's.
    expect(r.next).toEqual(decideLeaseExpiry(sending(), now)?.next);
  });

  test('a leased delivery whose 10th lease expired is failed retry_exhausted, not leased again', () => {
    const now = T0 + LEASE_MS;
    const r = decideClaim(leased({ attempts: 10 }), claimIn(now, { newLeaseId: 'L11' }));
    expect(r.response).toEqual({ status: 'skip', reason: 'already_failed' });
    expect(r.next).toMatchObject({ status: 'failed', attempts: 10, error: { outcome: 'failed', code: 'retry_exhausted' } });
    expect(r.effects.releasesNext).toBe(true);
  });

  test.each<[number, number]>([
    [1, 1],
    [1000, 1],
    [1001, 2],
    [45_000, 45],
  ])('queued with a retry time %i ms ahead: 503 retry_delayed, Retry-After %i s', (ahead, seconds) => {
    const d = rec({ attempts: 1, leaseHistory: ['L1'], notBefore: T0 + 5000 + ahead });
    const err = expectApiError(() => decideClaim(d, claimIn(T0 + 5000)), ServiceUnavailableError, 'retry_delayed');
    expect(err.retryAfterSeconds).toBe(seconds);
  });

  test('queued with a retry time equal to now (or past): ready', () => {
    for (const notBefore of [T0 + 5000, T0 + 4000]) {
      const d = rec({ attempts: 1, leaseHistory: ['L1'], notBefore });
      const r = decideClaim(d, claimIn(T0 + 5000, { newLeaseId: 'L2' }));
      expect(r.response.status).toBe('ready');
      expect(r.next?.notBefore).toBeNull();
    }
  });

  test('an old queued delivery (connector down for days) still gets its first attempt', () => {
    const r = decideClaim(rec(), claimIn(T0 + 3 * RETRY_WINDOW_MS));
    expect(r.response.status).toBe('ready');
  });

  test('a lease id is never handed out twice (programming error)', () => {
    const d = rec({ attempts: 1, leaseHistory: ['L1'] });
    expect(() => decideClaim(d, claimIn(T0, { newLeaseId: 'L1' }))).toThrow('newLeaseId');
  });
});

// ---------------------------------------------------------------------------------------------
// start

describe('start', () => {
  test('valid lease and leased: sending, intent recorded', () => {
    const d = leased();
    const r = decideStart(d, { now: T0 + 10, leaseId: 'L1' });
    expect(r.response).toEqual({ status: 'sending' });
    expect(r.next).toEqual({ ...d, status: 'sending', lease: { ...d.lease!, started: true }, updatedAt: T0 + 10, attemptLog: [{ at: T0 + 10, event: 'started' }] });
    expect(r.effects).toEqual({ releasesNext: false, notify: null });
  });

  test('start one millisecond before expiry still works', () => {
    expect(decideStart(leased(), { now: T0 + LEASE_MS - 1, leaseId: 'L1' }).response.status).toBe('sending');
  });

  test('already sending under the same lease: sending again, no write', () => {
    const r = decideStart(sending(), { now: T0 + 10, leaseId: 'L1' });
    expect(r.response).toEqual({ status: 'sending' });
    expect(r.next).toBeNull();
  });

  test('sent: sent (the connector must not send), for any lease that held it', () => {
    const d = finished('sent');
    for (const now of [T0 + 2000, T0 + 10 * LEASE_MS]) {
      const r = decideStart(d, { now, leaseId: 'L1' });
      expect(r.response).toEqual({ status: 'sent' });
      expect(r.next).toBeNull();
    }
  });

  test.each<['failed' | 'unknown']>([['failed'], ['unknown']])('%s: 409 delivery_finished', (status) => {
    const err = expectApiError(
      () => decideStart(finished(status), { now: T0 + 2000, leaseId: 'L1' }),
      ConflictError,
      'delivery_finished',
    );
    expect(err.status).toBe(409);
  });

  test('a lease that never held it: 409 lease_lost, whatever the state', () => {
    for (const d of [leased(), sending(), finished('sent'), finished('failed'), rec()]) {
      expectApiError(() => decideStart(d, { now: T0 + 1, leaseId: 'nope' }), ConflictError, 'lease_lost');
    }
  });

  test('an earlier lease (replaced by a newer one): 409 lease_lost', () => {
    const d = leased({ leaseId: 'L2', attempts: 2, at: T0 + 200_000 });
    expectApiError(() => decideStart(d, { now: T0 + 200_001, leaseId: 'old1' }), ConflictError, 'lease_lost');
  });

  test('expired lease (exactly at expiry) on a leased delivery: 409 lease_lost', () => {
    expectApiError(() => decideStart(leased(), { now: T0 + LEASE_MS, leaseId: 'L1' }), ConflictError, 'lease_lost');
  });

  test('expired lease on a sending delivery: it is unknown now, 409 delivery_finished', () => {
    expectApiError(
      () => decideStart(sending(), { now: T0 + LEASE_MS, leaseId: 'L1' }),
      ConflictError,
      'delivery_finished',
    );
  });

  test('after its own retry fail the lease is released: 409 lease_lost', () => {
    const q = decideFail(sending(), failIn(T0 + 5)).next!;
    expectApiError(() => decideStart(deepFreeze(q), { now: T0 + 6, leaseId: 'L1' }), ConflictError, 'lease_lost');
  });
});

// ---------------------------------------------------------------------------------------------
// complete

describe('extend (decisions 10)', () => {
  test('under the live current lease, leased or sending: expiry now + 120 s, claim time kept, nothing else changes', () => {
    for (const d of [leased(), sending()]) {
      const now = T0 + 60_000;
      const r = decideExtend(d, { now, leaseId: 'L1' });
      expect(r.response).toEqual({ leaseExpiresAt: now + LEASE_MS });
      expect(r.next).toEqual({ ...d, lease: { ...d.lease!, expiresAt: now + LEASE_MS, claimedAt: T0 }, updatedAt: now });
      expect(r.effects).toEqual({ releasesNext: false, notify: null });
    }
  });

  test('repeated extensions keep the lease live past the first expiry; the lease still holds for start and complete', () => {
    let d = leased();
    let now = T0;
    for (let i = 0; i < 3; i++) {
      now += LEASE_MS / 2;
      d = deepFreeze(decideExtend(d, { now, leaseId: 'L1' }).next!);
    }
    expect(now).toBeGreaterThan(T0 + LEASE_MS);
    expect(d.lease!.expiresAt).toBe(now + LEASE_MS);
    expect(decideLeaseExpiry(d, T0 + LEASE_MS + 1)).toBeNull();
    const started = decideStart(d, { now, leaseId: 'L1' });
    expect(started.response).toEqual({ status: 'sending' });
    expect(decideComplete(deepFreeze(started.next!), { now: now + 1, leaseId: 'L1', providerMessageIds: ['p'] }).response).toEqual({ status: 'sent' });
  });

  test('at most 15 minutes after the claim: the expiry is clamped to the cap, then 409 lease_limit_reached', () => {
    const claimedAt = T0;
    const d = leased({ extra: { lease: { leaseId: 'L1', requestId: 'R1', expiresAt: claimedAt + LEASE_MAX_MS - 30_000, started: true, claimedAt }, status: 'sending' } });
    const now = claimedAt + LEASE_MAX_MS - 60_000;
    const r = decideExtend(d, { now, leaseId: 'L1' });
    expect(r.response).toEqual({ leaseExpiresAt: claimedAt + LEASE_MAX_MS });
    const capped = deepFreeze(r.next!);
    expect(capped.lease!.expiresAt).toBe(claimedAt + LEASE_MAX_MS);
    expectApiError(() => decideExtend(capped, { now: now + 1_000, leaseId: 'L1' }), ConflictError, 'lease_limit_reached');
  });

  test('a lease from before claimedAt existed counts from its first expiry minus 120 s', () => {
    const d = leased({ at: T0 });
    expect(d.lease!.claimedAt).toBeUndefined();
    const atCap = deepFreeze({ ...d, lease: { ...d.lease!, expiresAt: T0 + LEASE_MAX_MS, claimedAt: T0 } });
    expectApiError(() => decideExtend(atCap, { now: T0 + LEASE_MAX_MS - 1, leaseId: 'L1' }), ConflictError, 'lease_limit_reached');
    expect(decideExtend(d, { now: T0 + 1, leaseId: 'L1' }).next?.lease?.claimedAt).toBe(T0);
  });

  test('a retried extend in the same instant answers the current expiry without a write', () => {
    const d = leased();
    const r = decideExtend(d, { now: T0, leaseId: 'L1' });
    expect(r).toEqual({ response: { leaseExpiresAt: T0 + LEASE_MS }, next: null, effects: { releasesNext: false, notify: null } });
  });

  test('409 lease_lost: a lease that never held it, an older lease, an expired lease (never revived, leased or sending)', () => {
    expectApiError(() => decideExtend(leased(), { now: T0 + 1, leaseId: 'nope' }), ConflictError, 'lease_lost');
    expectApiError(() => decideExtend(leased({ leaseId: 'L2', attempts: 2, extra: { leaseHistory: ['L1', 'L2'] } }), { now: T0 + 1, leaseId: 'L1' }), ConflictError, 'lease_lost');
    expectApiError(() => decideExtend(leased(), { now: T0 + LEASE_MS, leaseId: 'L1' }), ConflictError, 'lease_lost');
    expectApiError(() => decideExtend(sending(), { now: T0 + LEASE_MS + 5, leaseId: 'L1' }), ConflictError, 'lease_lost');
    expectApiError(() => decideExtend(rec({ status: 'queued', attempts: 1, leaseHistory: ['L1'], lease: { leaseId: 'L1', requestId: 'R1', expiresAt: T0, started: false } }), { now: T0 + 1, leaseId: 'L1' }), ConflictError, 'lease_lost');
  });

  test('409 delivery_finished on a terminal delivery for any lease that held it; a stranger still gets lease_lost', () => {
    for (const status of ['sent', 'failed', 'unknown'] as const) {
      const d = deepFreeze({ ...sending(), status, error: status === 'sent' ? null : { outcome: status, code: 'x' } });
      expectApiError(() => decideExtend(d, { now: T0 + 1, leaseId: 'L1' }), ConflictError, 'delivery_finished');
      expectApiError(() => decideExtend(d, { now: T0 + 1, leaseId: 'nope' }), ConflictError, 'lease_lost');
    }
  });
});

describe('complete', () => {
  test('under the live lease after start: sent, ids recorded, next one released', () => {
    const d = sending();
    const r = decideComplete(d, { now: T0 + 50, leaseId: 'L1', providerMessageIds: ['p1', 'p2'] });
    expect(r.response).toEqual({ status: 'sent' });
    expect(r.next).toEqual({
      ...d,
      status: 'sent',
      completion: { leaseId: 'L1', providerMessageIds: ['p1', 'p2'] },
      providerMessageIds: ['p1', 'p2'],
      updatedAt: T0 + 50,
      attemptLog: [{ at: T0 + 50, event: 'sent' }],
    });
    expect(r.effects).toEqual({ releasesNext: true, notify: null });
  });

  test('under the live lease without start: accepted (the lease holds it)', () => {
    const r = decideComplete(leased(), { now: T0 + 50, leaseId: 'L1', providerMessageIds: ['p1'] });
    expect(r.next?.status).toBe('sent');
    expect(r.effects.releasesNext).toBe(true);
  });

  test('late completion of a sending delivery whose lease expired (no sweep yet): sent, releases next', () => {
    const r = decideComplete(sending(), { now: T0 + LEASE_MS + 30_000, leaseId: 'L1', providerMessageIds: ['p'] });
    expect(r.response).toEqual({ status: 'sent' });
    expect(r.next).toMatchObject({ status: 'sent', error: null, providerMessageIds: ['p'] });
    expect(r.effects.releasesNext).toBe(true);
  });

  test('late completion overrides unknown/lease_expired_after_start (the truth), without a second release', () => {
    const u = deepFreeze(decideLeaseExpiry(sending(), T0 + LEASE_MS)!.next!);
    expect(u.status).toBe('unknown');
    const r = decideComplete(u, { now: T0 + LEASE_MS + 1, leaseId: 'L1', providerMessageIds: ['p'] });
    expect(r.response).toEqual({ status: 'sent' });
    expect(r.next).toMatchObject({ status: 'sent', error: null, completion: { leaseId: 'L1', providerMessageIds: ['p'] } });
    expect(r.effects).toEqual({ releasesNext: false, notify: null });
  });

  test('completion resolves the connector\'s own fail unknown (same lease): sent', () => {
    const u = finished('unknown');
    const r = decideComplete(u, { now: T0 + 5000, leaseId: 'L1', providerMessageIds: ['p'] });
    expect(r.next).toMatchObject({ status: 'sent', error: null, providerMessageIds: ['p'] });
    expect(r.effects.releasesNext).toBe(false);
  });

  test('late completion of a leased delivery re-queued by expiry: sent, releases next', () => {
    const q = deepFreeze(decideLeaseExpiry(leased(), T0 + LEASE_MS)!.next!);
    expect(q.status).toBe('queued');
    const r = decideComplete(q, { now: T0 + LEASE_MS + 5, leaseId: 'L1', providerMessageIds: ['p'] });
    expect(r.next?.status).toBe('sent');
    expect(r.effects.releasesNext).toBe(true);
  });

  test('late completion over a failed the service decided alone (budget spent on expiry): sent', () => {
    const f = deepFreeze(decideLeaseExpiry(leased({ attempts: 10 }), T0 + LEASE_MS)!.next!);
    expect(f).toMatchObject({ status: 'failed', error: { code: 'retry_exhausted' } });
    const r = decideComplete(f, { now: T0 + LEASE_MS + 5, leaseId: 'L1', providerMessageIds: ['p'] });
    expect(r.next?.status).toBe('sent');
  });

  test.each<['retry' | 'failed']>([['retry'], ['failed']])(
    'the same lease already reported fail %s: 409 conflicting_completion',
    (outcome) => {
      const after = deepFreeze(decideFail(sending(), failIn(T0 + 5, { outcome })).next!);
      expectApiError(
        () => decideComplete(after, { now: T0 + 6, leaseId: 'L1', providerMessageIds: ['p'] }),
        ConflictError,
        'conflicting_completion',
      );
    },
  );

  test('repeat with the same lease and ids: sent, no write, even much later', () => {
    const s = finished('sent');
    const r = decideComplete(s, { now: T0 + RETRY_WINDOW_MS * 2, leaseId: 'L1', providerMessageIds: ['p1'] });
    expect(r.response).toEqual({ status: 'sent' });
    expect(r.next).toBeNull();
    expect(r.effects).toEqual({ releasesNext: false, notify: null });
  });

  test.each<[string[]]>([[['p2']], [['p1', 'p2']], [[]]])('different ids %j after sent: 409 conflicting_completion', (ids) => {
    expectApiError(
      () => decideComplete(finished('sent'), { now: T0 + 2000, leaseId: 'L1', providerMessageIds: ids }),
      ConflictError,
      'conflicting_completion',
    );
  });

  test('same ids in another order count as different', () => {
    const s = deepFreeze(decideComplete(sending(), { now: T0 + 1, leaseId: 'L1', providerMessageIds: ['a', 'b'] }).next!);
    expectApiError(
      () => decideComplete(s, { now: T0 + 2, leaseId: 'L1', providerMessageIds: ['b', 'a'] }),
      ConflictError,
      'conflicting_completion',
    );
  });

  test('another lease that held it, after sent: 409 conflicting_completion', () => {
    const d = sending({ leaseId: 'L2', attempts: 2 }); // history: old1, L2
    const s = deepFreeze(decideComplete(d, { now: T0 + 1, leaseId: 'L2', providerMessageIds: ['p'] }).next!);
    expectApiError(
      () => decideComplete(s, { now: T0 + 2, leaseId: 'old1', providerMessageIds: ['p'] }),
      ConflictError,
      'conflicting_completion',
    );
  });

  test('a lease that never held it: 409 lease_lost, even after sent', () => {
    for (const d of [leased(), sending(), finished('sent'), finished('unknown')]) {
      expectApiError(
        () => decideComplete(d, { now: T0 + 1, leaseId: 'stranger', providerMessageIds: ['p'] }),
        ConflictError,
        'lease_lost',
      );
    }
  });

  test('an older lease (not the last one) on an unfinished delivery: 409 lease_lost', () => {
    const d = leased({ leaseId: 'L2', attempts: 2 });
    expectApiError(
      () => decideComplete(d, { now: T0 + 1, leaseId: 'old1', providerMessageIds: ['p'] }),
      ConflictError,
      'lease_lost',
    );
  });
});

// ---------------------------------------------------------------------------------------------
// fail

describe('fail', () => {
  test('retry with retryAfterMs: queued until now + retryAfterMs, notification re-published then', () => {
    const d = sending();
    const now = T0 + 10;
    const r = decideFail(d, failIn(now, { retryAfterMs: 5000, providerMessageIds: ['ignored'] }));
    expect(r.response).toEqual({ status: 'queued' });
    expect(r.next).toEqual({
      ...d,
      status: 'queued',
      notBefore: now + 5000,
      error: null,
      lastFail: { leaseId: 'L1', outcome: 'retry', code: 'provider_busy', responseStatus: 'queued' },
      updatedAt: now,
      attemptLog: [{ at: now, event: 'retry', code: 'provider_busy' }],
    });
    expect(r.effects).toEqual({ releasesNext: false, notify: { at: now + 5000, reason: 'retry' } });
  });

  test('retry without retryAfterMs: jittered exponential backoff from the attempt count', () => {
    const now = T0 + 10;
    const first = decideFail(sending(), failIn(now, { random: 0 }));
    expect(first.next?.notBefore).toBe(now + 30_000);
    expect(first.effects.notify?.at).toBe(now + 30_000);
    const third = decideFail(sending({ attempts: 3 }), failIn(now, { random: 0.5 }));
    expect(third.next?.notBefore).toBe(now + 150_000);
    const ninth = decideFail(sending({ attempts: 9 }), failIn(now, { random: 0.9999 }));
    expect(ninth.next?.notBefore).toBe(now + 3_600_000);
  });

  test('retry with retryAfterMs 0: claimable right away', () => {
    const r = decideFail(leased(), failIn(T0 + 10, { retryAfterMs: 0 }));
    expect(r.next?.notBefore).toBe(T0 + 10);
    const c = decideClaim(deepFreeze(r.next!), claimIn(T0 + 10, { requestId: 'R2', newLeaseId: 'L2' }));
    expect(c.response.status).toBe('ready');
  });

  test('retry at attempt 9: queued; at attempt 10: failed retry_exhausted, response failed', () => {
    expect(decideFail(sending({ attempts: 9 }), failIn(T0 + 1)).response).toEqual({ status: 'queued' });
    const d = sending({ attempts: 10 });
    const r = decideFail(d, failIn(T0 + 1, { code: 'rate_limited' }));
    expect(r.response).toEqual({ status: 'failed' });
    expect(r.next).toEqual({
      ...d,
      status: 'failed',
      error: { outcome: 'failed', code: 'retry_exhausted' },
      lastFail: { leaseId: 'L1', outcome: 'retry', code: 'rate_limited', responseStatus: 'failed' },
      updatedAt: T0 + 1,
      // What the connector reported, then what the service decided.
      attemptLog: [
        { at: T0 + 1, event: 'retry', code: 'rate_limited' },
        { at: T0 + 1, event: 'failed', code: 'retry_exhausted' },
      ],
    });
    expect(r.effects).toEqual({ releasesNext: true, notify: null });
  });

  test('retry 1 ms before 24 h since creation: queued; at exactly 24 h: failed retry_exhausted', () => {
    const at = T0 + RETRY_WINDOW_MS - 60_000;
    expect(decideFail(sending({ at }), failIn(T0 + RETRY_WINDOW_MS - 1)).response.status).toBe('queued');
    const r = decideFail(sending({ at }), failIn(T0 + RETRY_WINDOW_MS));
    expect(r.response.status).toBe('failed');
    expect(r.next?.error).toEqual({ outcome: 'failed', code: 'retry_exhausted' });
  });

  test('failed: failed, error recorded, next released', () => {
    const d = sending();
    const r = decideFail(d, failIn(T0 + 3, { outcome: 'failed', code: 'invalid_recipient' }));
    expect(r.response).toEqual({ status: 'failed' });
    expect(r.next).toEqual({
      ...d,
      status: 'failed',
      error: { outcome: 'failed', code: 'invalid_recipient' },
      lastFail: { leaseId: 'L1', outcome: 'failed', code: 'invalid_recipient', responseStatus: 'failed' },
      updatedAt: T0 + 3,
      attemptLog: [{ at: T0 + 3, event: 'failed', code: 'invalid_recipient' }],
    });
    expect(r.effects).toEqual({ releasesNext: true, notify: null });
  });

  test('unknown: unknown, partial provider ids kept, next released', () => {
    const r = decideFail(sending(), failIn(T0 + 3, { outcome: 'unknown', code: 'partial_send', providerMessageIds: ['part1'] }));
    expect(r.response).toEqual({ status: 'unknown' });
    expect(r.next).toMatchObject({
      status: 'unknown',
      providerMessageIds: ['part1'],
      error: { outcome: 'unknown', code: 'partial_send' },
    });
    expect(r.effects.releasesNext).toBe(true);
  });

  test('failed/unknown from a leased (not started) delivery are accepted too', () => {
    expect(decideFail(leased(), failIn(T0 + 1, { outcome: 'failed' })).next?.status).toBe('failed');
    expect(decideFail(leased(), failIn(T0 + 1, { outcome: 'unknown' })).next?.status).toBe('unknown');
  });

  test.each<['retry' | 'failed' | 'unknown']>([['retry'], ['failed'], ['unknown']])(
    'on an already sent delivery (%s): sent, nothing changes',
    (outcome) => {
      const r = decideFail(finished('sent'), failIn(T0 + 5000, { outcome }));
      expect(r.response).toEqual({ status: 'sent' });
      expect(r.next).toBeNull();
      expect(r.effects).toEqual({ releasesNext: false, notify: null });
    },
  );

  test.each<['retry' | 'failed' | 'unknown', string]>([
    ['retry', 'queued'],
    ['failed', 'failed'],
    ['unknown', 'unknown'],
  ])('the same fail %s repeated under the same lease: same response (%s), no second transition', (outcome, status) => {
    const first = decideFail(sending({ attempts: 3 }), failIn(T0 + 1, { outcome, random: 0.3 }));
    const after = deepFreeze(first.next!);
    const again = decideFail(after, failIn(T0 + 2, { outcome, random: 0.9 }));
    expect(again.response).toEqual({ status });
    expect(again.next).toBeNull();
    expect(again.effects).toEqual({ releasesNext: false, notify: null });
  });

  test('a repeated retry after the delivery was re-leased by someone else: still queued, no write', () => {
    const q = deepFreeze(decideFail(sending(), failIn(T0 + 1, { retryAfterMs: 0 })).next!);
    const l2 = deepFreeze(decideClaim(q, claimIn(T0 + 2, { requestId: 'R2', newLeaseId: 'L2' })).next!);
    const again = decideFail(l2, failIn(T0 + 3, { retryAfterMs: 0 }));
    expect(again.response).toEqual({ status: 'queued' });
    expect(again.next).toBeNull();
  });

  test('retry exhausted repeated: failed again, no write', () => {
    const f = deepFreeze(decideFail(sending({ attempts: 10 }), failIn(T0 + 1)).next!);
    const again = decideFail(f, failIn(T0 + 2));
    expect(again.response).toEqual({ status: 'failed' });
    expect(again.next).toBeNull();
  });

  test('a different fail from the same lease after a terminal one: the current status, no write', () => {
    const f = finished('failed');
    const r = decideFail(f, failIn(T0 + 5000, { outcome: 'unknown', code: 'other' }));
    expect(r.response).toEqual({ status: 'failed' });
    expect(r.next).toBeNull();
  });

  test('a different fail from the same lease after its retry, before anyone else claims: 409 lease_lost', () => {
    const q = deepFreeze(decideFail(sending(), failIn(T0 + 1)).next!);
    expectApiError(() => decideFail(q, failIn(T0 + 2, { outcome: 'failed' })), ConflictError, 'lease_lost');
  });

  test('a lease that never held it: 409 lease_lost, whatever the state', () => {
    for (const d of [rec(), leased(), sending(), finished('sent'), finished('failed'), finished('unknown')]) {
      expectApiError(() => decideFail(d, failIn(T0 + 1, { leaseId: 'stranger' })), ConflictError, 'lease_lost');
    }
  });

  test('an expired lease (exactly at expiry) on a leased delivery: 409 lease_lost', () => {
    for (const outcome of ['retry', 'failed', 'unknown'] as const) {
      expectApiError(() => decideFail(leased(), failIn(T0 + LEASE_MS, { outcome })), ConflictError, 'lease_lost');
    }
  });

  test('an older lease while another lease holds it: 409 lease_lost', () => {
    const d = sending({ leaseId: 'L2', attempts: 2 });
    expectApiError(() => decideFail(d, failIn(T0 + 1, { leaseId: 'old1' })), ConflictError, 'lease_lost');
  });

  test('an older lease on a finished delivery: its status, nothing changes', () => {
    const d = sending({ leaseId: 'L2', attempts: 2 });
    const f = deepFreeze(decideFail(d, failIn(T0 + 1, { leaseId: 'L2', outcome: 'failed' })).next!);
    const r = decideFail(f, failIn(T0 + 2, { leaseId: 'old1', outcome: 'retry' }));
    expect(r.response).toEqual({ status: 'failed' });
    expect(r.next).toBeNull();
  });

  describe('late report from the lease cut off while sending (unknown, lease_expired_after_start)', () => {
    const late = T0 + LEASE_MS + 10_000;

    test('fail failed (sweeper not run yet): failed with the connector code; the next one is released once', () => {
      const r = decideFail(sending(), failIn(late, { outcome: 'failed', code: 'blocked' }));
      expect(r.response).toEqual({ status: 'failed' });
      expect(r.next).toMatchObject({ status: 'failed', error: { outcome: 'failed', code: 'blocked' }, updatedAt: late });
      expect(r.effects).toEqual({ releasesNext: true, notify: null });
    });

    test('fail unknown after the sweeper ran: unknown with the connector code and partial ids, no re-release', () => {
      const u = deepFreeze(decideLeaseExpiry(sending(), T0 + LEASE_MS)!.next!);
      const r = decideFail(u, failIn(late, { outcome: 'unknown', code: 'timeout', providerMessageIds: ['part'] }));
      expect(r.response).toEqual({ status: 'unknown' });
      expect(r.next).toMatchObject({
        status: 'unknown',
        error: { outcome: 'unknown', code: 'timeout' },
        providerMessageIds: ['part'],
        lastFail: { leaseId: 'L1', outcome: 'unknown', code: 'timeout', responseStatus: 'unknown' },
      });
      expect(r.effects.releasesNext).toBe(false);
    });

    test('fail retry: stays unknown (its successor was already released); a later complete is contradictory', () => {
      const u = deepFreeze(decideLeaseExpiry(sending(), T0 + LEASE_MS)!.next!);
      const r = decideFail(u, failIn(late, { outcome: 'retry' }));
      expect(r.response).toEqual({ status: 'unknown' });
      expect(r.next).toMatchObject({ status: 'unknown', error: { outcome: 'unknown', code: 'lease_expired_after_start' } });
      expect(r.effects).toEqual({ releasesNext: false, notify: null });
      const after = deepFreeze(r.next!);
      expect(decideFail(after, failIn(late + 1, { outcome: 'retry' })).next).toBeNull();
      expectApiError(
        () => decideComplete(after, { now: late + 2, leaseId: 'L1', providerMessageIds: ['p'] }),
        ConflictError,
        'conflicting_completion',
      );
    });

    test('only one refinement: a second, different late fail gets the current status', () => {
      const u = deepFreeze(decideLeaseExpiry(sending(), T0 + LEASE_MS)!.next!);
      const f = deepFreeze(decideFail(u, failIn(late, { outcome: 'failed', code: 'blocked' })).next!);
      const r = decideFail(f, failIn(late + 1, { outcome: 'unknown', code: 'timeout' }));
      expect(r.response).toEqual({ status: 'failed' });
      expect(r.next).toBeNull();
    });
  });
});

// ---------------------------------------------------------------------------------------------
// Lease expiry (sweeper) and wake

describe('decideLeaseExpiry (sweeper)', () => {
  test('nothing to do: queued, terminal, or a live lease (1 ms before expiry)', () => {
    expect(decideLeaseExpiry(rec(), T0 + 10 * LEASE_MS)).toBeNull();
    for (const s of ['sent', 'failed', 'unknown'] as const) expect(decideLeaseExpiry(finished(s), T0 + 10 * LEASE_MS)).toBeNull();
    expect(decideLeaseExpiry(leased(), T0 + LEASE_MS - 1)).toBeNull();
    expect(decideLeaseExpiry(sending(), T0 + LEASE_MS - 1)).toBeNull();
  });

  test('leased, expired exactly now: queued again, claimable, notification re-published now', () => {
    const d = leased();
    const now = T0 + LEASE_MS;
    const r = decideLeaseExpiry(d, now)!;
    expect(r.response).toBeNull();
    expect(r.next).toEqual({ ...d, status: 'queued', updatedAt: now, attemptLog: [{ at: now, event: 'lease_expired' }] });
    expect(r.effects).toEqual({ releasesNext: false, notify: { at: now, reason: 'lease_expired' } });
    expect(decideClaim(deepFreeze(r.next!), claimIn(now + 1, { requestId: 'R2', newLeaseId: 'L2' })).response.status).toBe('ready');
  });

  test('sending, expired: unknown lease_expired_after_start, next released, no notification', () => {
    const d = sending();
    const now = T0 + LEASE_MS + 30_000;
    const r = decideLeaseExpiry(d, now)!;
    expect(r.next).toEqual({
      ...d,
      status: 'unknown',
      error: { outcome: 'unknown', code: 'lease_expired_after_start' },
      updatedAt: now,
      attemptLog: [{ at: now, event: 'lease_expired', code: 'lease_expired_after_start' }],
    });
    expect(r.effects).toEqual({ releasesNext: true, notify: null });
  });

  test('leased, expired, retry budget spent (10 attempts or 24 h): failed retry_exhausted, next released', () => {
    for (const d of [leased({ attempts: 10 }), leased({ at: T0 + RETRY_WINDOW_MS - LEASE_MS })]) {
      const now = d.lease!.expiresAt;
      const r = decideLeaseExpiry(d, now)!;
      expect(r.next).toMatchObject({ status: 'failed', error: { outcome: 'failed', code: 'retry_exhausted' } });
      expect(r.effects).toEqual({ releasesNext: true, notify: null });
    }
    const r9 = decideLeaseExpiry(leased({ attempts: 9 }), T0 + LEASE_MS)!;
    expect(r9.next?.status).toBe('queued');
  });

  test('applyLeaseExpiry returns the record itself when nothing expired, the swept one otherwise', () => {
    const d = leased();
    expect(applyLeaseExpiry(d, T0 + 1)).toBe(d);
    expect(applyLeaseExpiry(d, T0 + LEASE_MS)).toEqual(decideLeaseExpiry(d, T0 + LEASE_MS)!.next);
  });

  test('claims give the same answer whether or not the sweeper ran', () => {
    for (const d of [leased(), sending(), leased({ attempts: 10 })]) {
      const now = T0 + LEASE_MS + 5000;
      const swept = deepFreeze(decideLeaseExpiry(d, now - 1000)!.next!);
      const a = decideClaim(d, claimIn(now, { requestId: 'R9', newLeaseId: 'L9' }));
      const b = decideClaim(swept, claimIn(now, { requestId: 'R9', newLeaseId: 'L9' }));
      expect(a.response).toEqual(b.response);
      expect(a.next?.status ?? d.status).toBe(b.next?.status ?? swept.status);
    }
  });
});

describe('decideWake', () => {
  test('a waiting delivery: flag cleared, notification re-published now', () => {
    const d = rec({ seq: 2, waiting: true });
    const r = decideWake(d, T0 + 9)!;
    expect(r.next).toEqual({ ...d, head: true, waiting: false, updatedAt: T0 + 9 });
    expect(r.effects).toEqual({ releasesNext: false, notify: { at: T0 + 9, reason: 'wake' } });
  });

  test('not waiting: marked head (joins the catch-up list), no notification', () => {
    const d = rec({ seq: 2 });
    expect(decideWake(d, T0 + 3)).toEqual({ response: null, next: { ...d, head: true, waiting: false, updatedAt: T0 + 3 }, effects: { releasesNext: false, notify: null } });
  });

  test('already head and not waiting, or already terminal: nothing', () => {
    expect(decideWake(rec({ seq: 2, head: true }), T0)).toBeNull();
    expect(decideWake(rec({ ...finished('failed'), waiting: true }), T0)).toBeNull();
  });
});

// ---------------------------------------------------------------------------------------------
// Whole flows and general properties

describe('flows', () => {
  test('claim -> start -> complete, then everything repeated: stable answers, no writes', () => {
    let d = rec();
    let now = T0 + 1;
    const c = decideClaim(d, claimIn(now, { newLeaseId: 'A' }));
    d = deepFreeze(c.next!);
    now += 100;
    d = deepFreeze(decideStart(d, { now, leaseId: 'A' }).next!);
    now += 100;
    const done = decideComplete(d, { now, leaseId: 'A', providerMessageIds: ['pm'] });
    expect(done.effects.releasesNext).toBe(true);
    d = deepFreeze(done.next!);
    now += 100;
    expect(decideClaim(d, claimIn(now, { newLeaseId: 'B' })).response).toEqual({ status: 'skip', reason: 'already_sent' });
    expect(decideStart(d, { now, leaseId: 'A' })).toEqual({ response: { status: 'sent' }, next: null, effects: { releasesNext: false, notify: null } });
    expect(decideComplete(d, { now, leaseId: 'A', providerMessageIds: ['pm'] }).next).toBeNull();
    expect(decideFail(d, failIn(now, { leaseId: 'A' })).next).toBeNull();
    expect(decideLeaseExpiry(d, now + 10 * LEASE_MS)).toBeNull();
  });

  test('retry until exhausted: 10 leases, then failed; attempts and history stay bounded', () => {
    let d = rec();
    let now = T0;
    const statuses: string[] = [];
    for (let i = 1; i <= MAX_ATTEMPTS; i++) {
      const c = decideClaim(d, claimIn(now, { requestId: `R${i}`, newLeaseId: `L${i}` }));
      expect(c.response.status).toBe('ready');
      d = deepFreeze(c.next!);
      d = deepFreeze(decideStart(d, { now, leaseId: `L${i}` }).next!);
      const f = decideFail(d, failIn(now + 1, { leaseId: `L${i}`, random: 0 }));
      statuses.push(f.response.status);
      d = deepFreeze(f.next!);
      now = d.notBefore ?? now + 1;
    }
    expect(statuses).toEqual([...Array(9).fill('queued'), 'failed']);
    expect(d.attempts).toBe(MAX_ATTEMPTS);
    expect(d.leaseHistory).toHaveLength(MAX_ATTEMPTS);
    expect(d.error).toEqual({ outcome: 'failed', code: 'retry_exhausted' });
    expect(decideClaim(d, claimIn(now, { newLeaseId: 'L11' })).response).toEqual({ status: 'skip', reason: 'already_failed' });
  });

  test('ordering: the second reply waits for the first and is woken by its terminal transition', () => {
    let d1 = rec({ deliveryId: 'd1', seq: 1 });
    let d2 = rec({ deliveryId: 'd2', seq: 2 });
    const unfinished = (d: DeliveryRecord) => !isTerminal(d.status);
    let now = T0;
    d1 = deepFreeze(decideClaim(d1, claimIn(now, { requestId: 'a', newLeaseId: 'A' })).next!);
    const w = decideClaim(d2, claimIn(now, { requestId: 'b', newLeaseId: 'B', predecessorUnfinished: unfinished(d1) }));
    expect(w.response).toEqual({ status: 'skip', reason: 'waiting_for_previous' });
    d2 = deepFreeze(w.next!);
    now += 10;
    const f1 = decideFail(d1, failIn(now, { leaseId: 'A', outcome: 'failed', code: 'bad' }));
    expect(f1.effects.releasesNext).toBe(true);
    d1 = deepFreeze(f1.next!);
    const wake = decideWake(d2, now)!;
    expect(wake.effects.notify?.at).toBe(now);
    d2 = deepFreeze(wake.next!);
    const c2 = decideClaim(d2, claimIn(now + 1, { requestId: 'b2', newLeaseId: 'B', predecessorUnfinished: unfinished(d1) }));
    expect(c2.response.status).toBe('ready');
  });

  test('every write sets updatedAt = now and returns a new object', () => {
    const now = T0 + 77;
    const writes = [
      decideClaim(rec(), claimIn(now)).next,
      decideClaim(rec(), claimIn(now, { predecessorUnfinished: true })).next,
      decideStart(leased(), { now, leaseId: 'L1' }).next,
      decideComplete(sending(), { now, leaseId: 'L1', providerMessageIds: ['p'] }).next,
      decideFail(sending(), failIn(now)).next,
      decideFail(sending(), failIn(now, { outcome: 'failed' })).next,
      decideLeaseExpiry(leased({ at: now - LEASE_MS }), now)?.next,
      decideWake(rec({ waiting: true }), now)?.next,
    ];
    for (const w of writes) {
      expect(w).toBeTruthy();
      expect(w!.updatedAt).toBe(now);
      expect(Object.isFrozen(w)).toBe(false);
    }
  });
});

describe('decideReceipt (decisions 8)', () => {
  const sent = (): DeliveryRecord => {
    const d = sending();
    return deepFreeze(decideComplete(d, { now: T0 + 5, leaseId: 'L1', providerMessageIds: ['p1'] }).next!);
  };
  const receipt = (d: DeliveryRecord, now: number, status: 'delivered' | 'read' | 'failed', extra: { code?: string; at?: number; providerMessageId?: string } = {}) =>
    decideReceipt(d, { now, status, ...extra });

  test('delivered then read: both recorded, the delivery stays sent, nothing is released or notified', () => {
    const delivered = receipt(sent(), T0 + 10, 'delivered', { at: T0 + 8, providerMessageId: 'p1' });
    expect(delivered.response).toEqual({ status: 'sent' });
    expect(delivered.next).toMatchObject({ status: 'sent', receipt: { status: 'delivered', at: T0 + 8, code: null, providerMessageId: 'p1' }, updatedAt: T0 + 10 });
    expect(delivered.effects).toEqual({ releasesNext: false, notify: null });
    const read = receipt(deepFreeze(delivered.next!), T0 + 20, 'read');
    expect(read.next?.receipt).toEqual({ status: 'read', at: T0 + 20, code: null, providerMessageId: null });
  });

  test('read then delivered: no regression (no write)', () => {
    const read = deepFreeze(receipt(sent(), T0 + 10, 'read').next!);
    expect(receipt(read, T0 + 11, 'delivered')).toEqual({ response: { status: 'sent' }, next: null, effects: { releasesNext: false, notify: null } });
    expect(receipt(read, T0 + 11, 'failed', { code: 'x' }).next).toBeNull();
  });

  test('failed after delivered is recorded with its code, and then stands', () => {
    const delivered = deepFreeze(receipt(sent(), T0 + 10, 'delivered').next!);
    const failed = deepFreeze(receipt(delivered, T0 + 12, 'failed', { code: 'recipient_unreachable' }).next!);
    expect(failed.receipt).toMatchObject({ status: 'failed', code: 'recipient_unreachable' });
    expect(failed.status).toBe('sent');
    expect(receipt(failed, T0 + 13, 'read').next).toBeNull();
    expect(receipt(failed, T0 + 13, 'delivered').next).toBeNull();
  });

  test('the same receipt again is idempotent (no write)', () => {
    const delivered = deepFreeze(receipt(sent(), T0 + 10, 'delivered').next!);
    expect(receipt(delivered, T0 + 30, 'delivered').next).toBeNull();
  });

  test('a record written before receipts existed (no field) takes its first receipt', () => {
    const { receipt: _none, ...old } = sent();
    expect(receipt(deepFreeze(old as DeliveryRecord), T0 + 10, 'read').next?.receipt?.status).toBe('read');
  });

  test.each(['queued', 'leased', 'sending', 'failed', 'unknown'] as const)('%s: 409 delivery_not_sent, no write', (status) => {
    const d = status === 'sending' ? sending() : status === 'leased' ? leased() : rec({ status });
    const err = (() => {
      try {
        receipt(d, T0 + 10, 'delivered');
      } catch (e) {
        return e;
      }
      return null;
    })();
    expect(err).toBeInstanceOf(ConflictError);
    expect(err).toMatchObject({ status: 409, code: 'delivery_not_sent' });
  });
});

describe('decideCancel (decisions 10: recall before send)', () => {
  const REQ = T0 + 500;
  const cancelIn = (now: number, requestedAt = REQ) => ({ now, requestedAt });

  test('queued -> failed `cancelled`: releases the next reply, logged as a failed attempt, no notification', () => {
    const d = rec({ head: true, attemptLog: [{ at: T0, event: 'renotified' }] });
    const result = decideCancel(d, cancelIn(T0 + 1000));
    expect(result.response).toEqual({ status: 'cancelled' });
    expect(result.next).toMatchObject({
      status: 'failed',
      error: { outcome: 'failed', code: 'cancelled' },
      cancel: { status: 'cancelled', requestedAt: REQ, at: T0 + 1000 },
      notBefore: null,
      waiting: false,
      updatedAt: T0 + 1000,
    });
    expect(result.next?.attemptLog).toEqual([{ at: T0, event: 'renotified' }, { at: T0 + 1000, event: 'failed', code: 'cancelled' }]);
    expect(result.effects).toEqual({ releasesNext: true, notify: null });
  });

  test('queued waiting for a retry time, or waiting behind an earlier reply: cancelled too', () => {
    expect(decideCancel(rec({ notBefore: T0 + 60_000 }), cancelIn(T0 + 1000)).next).toMatchObject({ status: 'failed', notBefore: null });
    expect(decideCancel(rec({ waiting: true }), cancelIn(T0 + 1000)).next).toMatchObject({ status: 'failed', waiting: false });
  });

  test('leased, lease not started -> cancelled; the lease stays recorded, so its start is 409 delivery_finished', () => {
    const d = leased();
    const result = decideCancel(d, cancelIn(T0 + 1000));
    expect(result.response).toEqual({ status: 'cancelled' });
    expect(result.effects.releasesNext).toBe(true);
    const cancelled = deepFreeze(result.next!);
    expect(cancelled.lease).toEqual(d.lease);
    expectApiError(() => decideStart(cancelled, { now: T0 + 2000, leaseId: 'L1' }), ConflictError, 'delivery_finished');
    // A claim now is skipped as failed.
    expect(decideClaim(cancelled, claimIn(T0 + 3000)).response).toEqual({ status: 'skip', reason: 'already_failed' });
  });

  test('leased with an expired lease: the expiry (back to queued) applies first, then it is cancelled', () => {
    const result = decideCancel(leased(), cancelIn(T0 + LEASE_MS + 1));
    expect(result.response).toEqual({ status: 'cancelled' });
    expect(result.next?.attemptLog?.map((e) => e.event)).toEqual(['lease_expired', 'failed']);
    expect(result.effects).toEqual({ releasesNext: true, notify: null });
  });

  test('sending -> too_late: the status does not change, the answer is recorded, nothing released', () => {
    const d = sending();
    const result = decideCancel(d, cancelIn(T0 + 1000));
    expect(result.response).toEqual({ status: 'too_late' });
    expect(result.next).toEqual({ ...d, cancel: { status: 'too_late', requestedAt: REQ, at: T0 + 1000 }, updatedAt: T0 + 1000 });
    expect(result.effects).toEqual({ releasesNext: false, notify: null });
    // The connector carries on: its completion is accepted and the answer stays.
    const sent = decideComplete(deepFreeze(result.next!), { now: T0 + 2000, leaseId: 'L1', providerMessageIds: ['p1'] }).next;
    expect(sent).toMatchObject({ status: 'sent', cancel: { status: 'too_late' } });
  });

  test('sending with an expired lease: the expiry to unknown is written with the answer (and releases the next)', () => {
    const result = decideCancel(sending(), cancelIn(T0 + LEASE_MS + 1));
    expect(result.response).toEqual({ status: 'too_late' });
    expect(result.next).toMatchObject({ status: 'unknown', error: { code: 'lease_expired_after_start' }, cancel: { status: 'too_late' } });
    expect(result.effects.releasesNext).toBe(true);
  });

  test.each(['sent', 'failed', 'unknown'] as const)('%s -> too_late, status unchanged, nothing released', (status) => {
    const d = finished(status);
    const result = decideCancel(d, cancelIn(T0 + 5000));
    expect(result.response).toEqual({ status: 'too_late' });
    expect(result.next).toMatchObject({ status, error: d.error, cancel: { status: 'too_late', requestedAt: REQ } });
    expect(result.effects).toEqual({ releasesNext: false, notify: null });
  });

  test('the same request again (redelivered trigger): the recorded answer, no write', () => {
    const cancelled = deepFreeze(decideCancel(rec(), cancelIn(T0 + 1000)).next!);
    expect(decideCancel(cancelled, cancelIn(T0 + 9000))).toEqual({ response: { status: 'cancelled' }, next: null, effects: { releasesNext: false, notify: null } });
    const tooLate = deepFreeze(decideCancel(sending(), cancelIn(T0 + 1000)).next!);
    expect(decideCancel(tooLate, cancelIn(T0 + 9000))).toEqual({ response: { status: 'too_late' }, next: null, effects: { releasesNext: false, notify: null } });
  });

  test('a new request on a delivery already cancelled: still cancelled, no write; on a sending one: answered again', () => {
    const cancelled = deepFreeze(decideCancel(rec(), cancelIn(T0 + 1000)).next!);
    expect(decideCancel(cancelled, cancelIn(T0 + 9000, T0 + 8000))).toEqual({ response: { status: 'cancelled' }, next: null, effects: { releasesNext: false, notify: null } });
    const tooLate = deepFreeze(decideCancel(sending(), cancelIn(T0 + 1000)).next!);
    expect(decideCancel(tooLate, cancelIn(T0 + 9000, T0 + 8000)).next?.cancel).toEqual({ status: 'too_late', requestedAt: T0 + 8000, at: T0 + 9000 });
  });
});

describe('withOutcomeTimes (the health roll-up\'s sentAt / errorAt)', () => {
  test('sentAt on the first sent, kept afterwards; a late completion of unknown drops errorAt', () => {
    const s = sending();
    const sent = withOutcomeTimes(s, decideComplete(s, { now: T0 + 10, leaseId: 'L1', providerMessageIds: ['p'] }).next!, T0 + 10);
    expect(sent.sentAt).toBe(T0 + 10);
    expect(withOutcomeTimes(sent, { ...sent, receipt: { status: 'read', at: T0 + 50, code: null, providerMessageId: null }, updatedAt: T0 + 50 }, T0 + 50).sentAt).toBe(T0 + 10);
    const unknown = withOutcomeTimes(s, { ...s, status: 'unknown', error: { outcome: 'unknown', code: 'timeout' } }, T0 + 20);
    expect(unknown.errorAt).toBe(T0 + 20);
    const resolved = withOutcomeTimes(unknown, { ...unknown, status: 'sent', error: null }, T0 + 30);
    expect(resolved).toMatchObject({ sentAt: T0 + 30 });
    expect(resolved).not.toHaveProperty('errorAt');
    // A record sent before the field existed takes its last change.
    const { sentAt: _none, ...old } = sent;
    expect(withOutcomeTimes(old, { ...old, updatedAt: T0 + 99 }, T0 + 99).sentAt).toBe(old.updatedAt);
  });

  test('errorAt when it ends failed/unknown with a new error, not on a rewrite of the same, never for cancelled', () => {
    const failed = withOutcomeTimes(rec(), { ...rec(), status: 'failed', error: { outcome: 'failed', code: 'not_claimed' } }, T0 + 5);
    expect(failed.errorAt).toBe(T0 + 5);
    expect(withOutcomeTimes(failed, { ...failed, updatedAt: T0 + 9 }, T0 + 9).errorAt).toBe(T0 + 5);
    const cancelled = withOutcomeTimes(rec(), { ...rec(), status: 'failed', error: { outcome: 'failed', code: 'cancelled' } }, T0 + 5);
    expect(cancelled).not.toHaveProperty('errorAt');
    expect(withOutcomeTimes(rec(), { ...rec(), status: 'leased' }, T0 + 5)).not.toHaveProperty('errorAt');
  });
});

describe('receiptProblems (the receipt field rule the schema and the test service share)', () => {
  test('a failed receipt without a code names the field; with one, or any other status, is fine', () => {
    expect(receiptProblems({ status: 'failed' })).toEqual([{ path: ['code'], message: 'required when status is failed' }]);
    expect(receiptProblems({ status: 'failed', code: 'recipient_unreachable' })).toEqual([]);
    expect(receiptProblems({ status: 'delivered' })).toEqual([]);
  });
});
