/**
 * Model-based test of the delivery state machine: several simulated connectors (some well
 * behaved, some late, some replaying old or foreign calls), the sweeper and the predecessor's wake
 * act on one delivery record in random order while time jumps around (including exactly onto
 * lease expiry and across the 24 h window). After every step the invariants of
 * docs/contract.md#delivery-states, and of the rules documented in functions/src/rules/state-machine.ts, are checked.
 * Deterministic: seeded PRNG; a failure names its seed and step.
 *
 * Invariants are checked with a tiny `check` (plain throw) rather than `expect` inside the hot
 * loop: ~25k steps with jest matchers take 20 s, with `check` well under a second.
 */
import { ApiError, ConflictError, ServiceUnavailableError } from '../../../functions/src/rules/errors';
import {
  LEASE_MAX_MS,
  LEASE_MS,
  MAX_ATTEMPTS,
  RETRY_WINDOW_MS,
  isTerminal,
  newDelivery,
  type Decision,
  type DeliveryRecord,
  type FailOutcome,
} from '../../../functions/src/rules/record';
import {
  decideClaim,
  decideComplete,
  decideExtend,
  decideFail,
  decideLeaseExpiry,
  decideStart,
  decideWake,
} from '../../../functions/src/rules/state-machine';
import { prng } from '../../support/prng';

const T0 = 1_700_000_000_000;
const RECIPIENT = { externalConversationId: 'ext', externalCustomerId: 'cust' };

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value as Record<string, unknown>)) deepFreeze(v);
  }
  return value;
}

class InvariantError extends Error {}

type Op = 'advance' | 'claim' | 'start' | 'extend' | 'complete' | 'fail' | 'sweep' | 'wake';

/** Errors each operation may legitimately throw; anything else breaks the run. */
const ALLOWED: Partial<Record<Op, Array<[abstract new (...a: never[]) => ApiError, string]>>> = {
  claim: [
    [ServiceUnavailableError, 'lease_busy'],
    [ServiceUnavailableError, 'retry_delayed'],
  ],
  start: [
    [ConflictError, 'lease_lost'],
    [ConflictError, 'delivery_finished'],
  ],
  extend: [
    [ConflictError, 'lease_lost'],
    [ConflictError, 'delivery_finished'],
    [ConflictError, 'lease_limit_reached'],
  ],
  complete: [
    [ConflictError, 'lease_lost'],
    [ConflictError, 'conflicting_completion'],
  ],
  fail: [[ConflictError, 'lease_lost']],
};

interface Stats {
  ops: Record<string, number>;
  errors: Record<string, number>;
  reached: Record<string, number>;
  lateCompleteOverUnknown: number;
  lateCompleteAfterExpiry: number;
  retriedClaims: number;
  extensions: number;
  releases: number;
  exhausted: number;
}

function bump(m: Record<string, number>, k: string): void {
  m[k] = (m[k] ?? 0) + 1;
}

/** Black-box probe: would `leaseId` be told `sending` by start right now? */
function holdsNow(d: DeliveryRecord, leaseId: string, now: number): boolean {
  try {
    return decideStart(d, { now, leaseId }).response.status === 'sending';
  } catch (e) {
    if (e instanceof ApiError) return false;
    throw e;
  }
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function runModel(seed: number, steps: number, stats: Stats): void {
  const rnd = prng(seed);
  const xrnd = prng(seed + 1_000_003);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;
  let step = 0;
  const check = (cond: boolean, what: string): void => {
    if (!cond) throw new InvariantError(`seed ${seed}, step ${step}: ${what}`);
  };

  /** Structural invariants of every stored record. */
  const checkRecord = (d: DeliveryRecord): void => {
    check(d.attempts >= 0 && d.attempts <= MAX_ATTEMPTS, `attempts ${d.attempts} within 0..${MAX_ATTEMPTS}`);
    check(d.leaseHistory.length === d.attempts, 'one history entry per lease granted');
    check(new Set(d.leaseHistory).size === d.leaseHistory.length, 'lease ids unique');
    check(
      d.attempts === 0 ? d.lease === null : d.lease?.leaseId === d.leaseHistory[d.leaseHistory.length - 1],
      'lease is the last one granted',
    );
    if (d.status === 'leased' || d.status === 'sending') check(d.lease !== null, `${d.status} has a lease`);
    if (d.status === 'sending') check(d.lease?.started === true, 'sending lease is started');
    check((d.error !== null) === (d.status === 'failed' || d.status === 'unknown'), 'error set iff failed/unknown');
    check(d.notBefore === null || d.status === 'queued', 'notBefore only when queued');
    if (d.status === 'sent') {
      check(d.completion !== null && sameJson(d.providerMessageIds, d.completion.providerMessageIds), 'sent has its completion');
    } else {
      check(d.completion === null, 'completion only when sent');
    }
    if (isTerminal(d.status)) check(!d.waiting, 'terminal is not waiting');
  };

  let d: DeliveryRecord = deepFreeze(
    newDelivery({ deliveryId: 'd', workspaceId: 'w', integrationId: 'i', conversationId: 'c', messageId: 'm', seq: 2, text: 'hi', now: T0 }),
  );
  let now = T0;
  let predecessorDone = rnd() < 0.5;
  let leaseCounter = 0;
  let requestCounter = 0;

  // Connector-side knowledge.
  const connectors = [0, 1, 2].map(() => ({ lastRequestId: null as string | null, leases: [] as string[] }));
  const issued = new Map<string, number>(); // leaseId -> expiresAt as announced by claim
  /** The lease told `sending` and not since released by its own accepted retry. */
  let activeSender: string | null = null;
  let sentSnapshot: string | null = null;

  for (step = 0; step < steps; step++) {
    const before = d;
    const beforeJson = JSON.stringify(before);
    const c = pick(connectors);
    const someLease = (): string => {
      if (rnd() < 0.08) return 'never-issued';
      const last = c.leases[c.leases.length - 1];
      if (last !== undefined && rnd() < 0.7) return last;
      return pick([...issued.keys(), 'never-issued']);
    };

    // Extensions draw from their own stream, so the other operations keep the random sequence
    // (and the coverage) they had before extend existed.
    const extendStep = xrnd() < 0.08;
    const roll = extendStep ? 0 : rnd();
    const op: Op = extendStep
      ? 'extend'
      : roll < 0.18
        ? 'advance'
        : roll < 0.38
          ? 'claim'
          : roll < 0.55
            ? 'start'
            : roll < 0.7
              ? 'complete'
              : roll < 0.88
                ? 'fail'
                : roll < 0.97
                  ? 'sweep'
                  : 'wake';
    bump(stats.ops, op);
    let decision: Decision<unknown> | null = null;
    let usedLease: string | null = null;

    try {
      switch (op) {
        case 'advance': {
          now += pick([0, 1, 999, 1000, 30_000, 60_000, LEASE_MS - 1, LEASE_MS, LEASE_MS + 1, 3_600_000, 6 * 3_600_000]);
          if (!predecessorDone && rnd() < 0.3) predecessorDone = true;
          break;
        }
        case 'claim': {
          const reuse = c.lastRequestId !== null && rnd() < 0.35;
          const requestId = reuse && c.lastRequestId !== null ? c.lastRequestId : `r${++requestCounter}`;
          c.lastRequestId = requestId;
          const newLeaseId = `l${++leaseCounter}`;
          const dc = decideClaim(before, { now, requestId, newLeaseId, predecessorUnfinished: !predecessorDone, recipient: RECIPIENT });
          decision = dc;
          const r = dc.response;
          const after = dc.next ?? before;
          if (r.status === 'ready') {
            check(predecessorDone, 'never ready while an earlier reply is unfinished');
            check(!isTerminal(before.status), 'never ready on a terminal delivery');
            check(after.lease?.leaseId === r.leaseId && after.lease.expiresAt === r.leaseExpiresAt, 'ready lease is stored');
            check(r.leaseExpiresAt > now, 'ready lease is live');
            check(sameJson(r.message, { text: 'hi', recipient: RECIPIENT }), 'ready carries message and recipient');
            if (r.leaseId === newLeaseId) {
              check(r.leaseExpiresAt === now + LEASE_MS, 'new lease lasts 120 s');
              for (const other of issued.keys()) check(!holdsNow(before, other, now), `no other usable lease (${other}) when ${r.leaseId} is granted`);
              issued.set(r.leaseId, r.leaseExpiresAt);
            } else {
              stats.retriedClaims++;
              check(issued.get(r.leaseId) === r.leaseExpiresAt, 'retried claim: same lease, same expiry');
              check(dc.next === null, 'retried claim writes nothing');
              check(after.lease?.requestId === requestId, 'retried claim only for the same requestId');
            }
            if (!c.leases.includes(r.leaseId)) c.leases.push(r.leaseId);
          } else if (r.reason === 'waiting_for_previous') {
            check(!predecessorDone, 'waiting only while the predecessor is unfinished');
            check(after.waiting, 'waiting_for_previous marks the delivery waiting');
          } else {
            check(isTerminal(after.status), `skip ${r.reason} only for a terminal delivery`);
          }
          break;
        }
        case 'start': {
          usedLease = someLease();
          const ds = decideStart(before, { now, leaseId: usedLease });
          decision = ds;
          const after = ds.next ?? before;
          if (ds.response.status === 'sending') {
            check(after.status === 'sending' && after.lease?.leaseId === usedLease, 'sending under the used lease');
            check(after.lease!.expiresAt > now, 'sending only under a live lease');
            check(activeSender === null || activeSender === usedLease, 'never two senders without an accepted retry in between');
            activeSender = usedLease;
          } else {
            check(after.status === 'sent', 'start answers sent only when sent');
          }
          break;
        }
        case 'extend': {
          const mine = c.leases[c.leases.length - 1];
          usedLease = xrnd() < 0.1 || mine === undefined ? 'never-issued' : xrnd() < 0.8 ? mine : ([...issued.keys()][Math.floor(xrnd() * issued.size)] ?? 'never-issued');
          // Mostly one call; sometimes a long provider call that extends every half lease until the 15-minute cap refuses.
          const calls = xrnd() < 0.2 ? 20 : 1;
          let current = before;
          for (let i = 0; i < calls; i++) {
            const at = i === 0 ? now : now + LEASE_MS / 2;
            let de: Decision<{ leaseExpiresAt: number }>;
            try {
              de = decideExtend(current, { now: at, leaseId: usedLease });
            } catch (e) {
              // The first refusal is the step's error; a later one ends the long call (the extensions so far stand).
              if (i === 0 || !(e instanceof ConflictError)) throw e;
              bump(stats.errors, `extend:${e.code}`);
              check(e.code === 'lease_limit_reached', `a long call under a live lease ends only at the cap (${e.code})`);
              break;
            }
            now = at;
            const after = de.next ?? current;
            check(holdsNow(current, usedLease, now), 'extend succeeds only under the live current lease');
            check(after.status === current.status && (after.status === 'leased' || after.status === 'sending'), 'extend keeps a leased/sending status');
            check(after.lease?.leaseId === usedLease && after.lease.expiresAt === de.response.leaseExpiresAt, 'extend answers the stored expiry');
            check(after.lease!.expiresAt > now && after.lease!.expiresAt <= now + LEASE_MS, 'extended lease is live and at most 120 s ahead');
            check(after.lease!.expiresAt >= current.lease!.expiresAt, 'extend never shortens a lease');
            const claimedAt = after.lease!.claimedAt ?? after.lease!.expiresAt - LEASE_MS;
            check(after.lease!.expiresAt <= claimedAt + LEASE_MAX_MS, 'a lease never lives past 15 minutes after its claim');
            check(after.attempts === current.attempts && sameJson(after.leaseHistory, current.leaseHistory), 'extend is not an attempt');
            check(!de.effects.releasesNext && de.effects.notify === null, 'extend has no effects');
            issued.set(usedLease, after.lease!.expiresAt);
            if (de.next !== null) {
              stats.extensions++;
              current = deepFreeze(de.next);
            }
          }
          decision = current === before ? null : { response: null, next: current, effects: { releasesNext: false, notify: null } };
          break;
        }
        case 'complete': {
          usedLease = someLease();
          const ids = pick([['p1'], ['p1'], ['p2'], ['p1', 'p2']]);
          const dc = decideComplete(before, { now, leaseId: usedLease, providerMessageIds: ids });
          decision = dc;
          const after = dc.next ?? before;
          check(after.status === 'sent', 'complete leaves the delivery sent');
          check(sameJson(after.completion, { leaseId: usedLease, providerMessageIds: ids }), 'completion is this call\'s (or an identical repeat)');
          if (dc.next !== null && before.status === 'unknown') stats.lateCompleteOverUnknown++;
          if (dc.next !== null && before.lease !== null && before.lease.expiresAt <= now) stats.lateCompleteAfterExpiry++;
          break;
        }
        case 'fail': {
          usedLease = someLease();
          const outcome: FailOutcome = pick(['retry', 'retry', 'failed', 'unknown'] as const);
          const code = pick(['busy', 'blocked']);
          const lf = before.lastFail;
          const repeated = lf !== null && lf.leaseId === usedLease && lf.outcome === outcome && lf.code === code;
          const df = decideFail(before, {
            now,
            leaseId: usedLease,
            outcome,
            code,
            retryAfterMs: pick([undefined, undefined, 0, 5000, 3_600_000]),
            providerMessageIds: pick([undefined, ['part']]),
            random: rnd(),
          });
          decision = df;
          const after = df.next ?? before;
          const status = df.response.status;
          if (before.status === 'sent') {
            check(status === 'sent' && df.next === null, 'fail on sent: sent, nothing changes');
          } else if (repeated) {
            check(status === lf.responseStatus && df.next === null, 'repeated fail: same response, no write');
          } else {
            check(status === after.status, `fail response ${status} is the resulting status ${after.status}`);
            if (status === 'queued') {
              check(outcome === 'retry', 'only retry re-queues');
              if (activeSender === usedLease) activeSender = null;
            }
            if (after.error?.code === 'retry_exhausted' && df.next !== null && before.status !== 'failed') stats.exhausted++;
          }
          break;
        }
        case 'sweep': {
          decision = decideLeaseExpiry(before, now);
          const expired = (before.status === 'leased' || before.status === 'sending') && before.lease !== null && before.lease.expiresAt <= now;
          check((decision !== null) === expired, 'the sweeper acts exactly on expired leased/sending deliveries');
          if (decision !== null) check(decision.next?.status !== 'leased' && decision.next?.status !== 'sending', 'expiry ends the lease');
          break;
        }
        case 'wake': {
          decision = predecessorDone ? decideWake(before, now) : null;
          if (decision !== null) {
            check(decision.next?.head === true && decision.next.waiting === false, 'wake marks the head and clears waiting');
            check(before.waiting ? decision.effects.notify?.at === now && decision.effects.notify.reason === 'wake' : decision.effects.notify === null, 'wake re-publishes exactly a waiting delivery');
          }
          break;
        }
      }
    } catch (e) {
      if (e instanceof InvariantError || !(e instanceof ApiError)) throw e;
      const ok = (ALLOWED[op] ?? []).some(([cls, code]) => e instanceof cls && e.code === code);
      check(ok, `${op} threw an unexpected ${e.name} ${e.code}`);
      bump(stats.errors, `${op}:${e.code}`);
      decision = null; // a throwing call writes nothing
      if (e instanceof ServiceUnavailableError) check((e.retryAfterSeconds ?? 0) >= 1, 'Retry-After at least 1 s');
      if (before.status === 'sent' && usedLease !== null && before.leaseHistory.includes(usedLease)) {
        if (op === 'extend') check(e.code === 'delivery_finished', 'extend on a sent delivery: delivery_finished');
        else check(e.code === 'conflicting_completion', 'a sent delivery only refuses a different completion');
      }
    }

    // ---- Invariants of the decision.
    check(JSON.stringify(before) === beforeJson, 'the input record was not mutated');
    const next = decision?.next ?? null;
    if (decision !== null) {
      if (next !== null) {
        check(next !== before, 'a write is a new object');
        check(next.updatedAt === now, 'updatedAt = now on every write');
        checkRecord(next);
        check(before.status !== 'sent', `a sent delivery is never rewritten (by ${op})`);
        if (isTerminal(before.status)) {
          check(isTerminal(next.status), 'terminal is absorbing');
          if (before.status === 'failed') check(next.status === 'sent' && op === 'complete', 'failed changes only by late completion');
          if (next.status !== 'sent') {
            check(
              before.status === 'unknown' &&
                before.error?.code === 'lease_expired_after_start' &&
                op === 'fail' &&
                usedLease === before.lease?.leaseId,
              'only the cut-off lease may refine an expiry-unknown',
            );
          }
        }
        if (next.status === 'queued' && before.status !== 'queued') {
          const n = decision.effects.notify?.at ?? null;
          check(n !== null && n >= now && n === Math.max(now, next.notBefore ?? now), 'entering queued schedules its notification');
          check(next.attempts < MAX_ATTEMPTS && now - next.createdAt < RETRY_WINDOW_MS, 'requeued only within the retry budget');
        }
      }
      const releases = next !== null && !isTerminal(before.status) && isTerminal(next.status);
      check(decision.effects.releasesNext === releases, 'releasesNext exactly on non-terminal -> terminal');
      if (releases) stats.releases++;
    }

    d = next === null ? before : deepFreeze(next);
    bump(stats.reached, d.status);

    // ---- Invariants of the state.
    checkRecord(d);
    const holders = [...issued.keys()].filter((l) => holdsNow(d, l, now));
    check(holders.length <= 1, `never two live leases (${holders.join(', ')})`);
    if (sentSnapshot !== null) check(JSON.stringify(d) === sentSnapshot, 'a sent delivery never changes');
    if (d.status === 'sent' && sentSnapshot === null) sentSnapshot = JSON.stringify(d);
  }
}

describe('delivery state machine, model-based', () => {
  const stats: Stats = {
    ops: {},
    errors: {},
    reached: {},
    lateCompleteOverUnknown: 0,
    lateCompleteAfterExpiry: 0,
    retriedClaims: 0,
    extensions: 0,
    releases: 0,
    exhausted: 0,
  };
  const BATCHES = Array.from({ length: 10 }, (_, i) => 1000 + i * 40);

  test.each(BATCHES)('seeds %i..+39: invariants hold over 100 random steps each', (first) => {
    for (let s = first; s < first + 40; s++) runModel(s, 100, stats);
    expect(stats.ops.claim ?? 0).toBeGreaterThan(0);
  });

  test('the random runs exercised every state, operation, error and late rule', () => {
    for (const s of ['queued', 'leased', 'sending', 'sent', 'failed', 'unknown']) {
      expect({ [s]: (stats.reached[s] ?? 0) > 0 }).toEqual({ [s]: true });
    }
    for (const o of ['advance', 'claim', 'start', 'extend', 'complete', 'fail', 'sweep', 'wake']) {
      expect(stats.ops[o] ?? 0).toBeGreaterThan(50);
    }
    for (const e of [
      'claim:lease_busy',
      'claim:retry_delayed',
      'start:lease_lost',
      'start:delivery_finished',
      'extend:lease_lost',
      'extend:delivery_finished',
      'extend:lease_limit_reached',
      'complete:lease_lost',
      'complete:conflicting_completion',
      'fail:lease_lost',
    ]) {
      expect({ [e]: (stats.errors[e] ?? 0) > 0 }).toEqual({ [e]: true });
    }
    expect(stats.lateCompleteOverUnknown).toBeGreaterThan(0);
    expect(stats.lateCompleteAfterExpiry).toBeGreaterThan(0);
    expect(stats.retriedClaims).toBeGreaterThan(0);
    expect(stats.extensions).toBeGreaterThan(0);
    expect(stats.releases).toBeGreaterThan(100);
    expect(stats.exhausted).toBeGreaterThan(0);
  });
});
