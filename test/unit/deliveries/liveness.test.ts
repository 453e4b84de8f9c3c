/**
 * Liveness's pure parts (docs/contract.md#liveness): the schedule a claimable delivery carries
 * (deliveries/record.ts `withLiveness`), what a due check decides (state-machine.ts
 * `decideLivenessCheck`), the bounded attempt log, and the check shards.
 */
import {
  ATTEMPT_LOG_LIMIT,
  LEASE_MS,
  RENOTIFY_FIRST_MS,
  RENOTIFY_MAX_INTERVAL_MS,
  newDelivery,
  withAttempt,
  withLiveness,
  withPendingAt,
  type DeliveryRecord,
} from '../../../functions/src/rules/record';
import { decideClaim, decideLivenessCheck } from '../../../functions/src/rules/state-machine';
import { shardOf } from '../../../functions/src/platform/shards';
import { deliveryIdFor } from '../../../functions/src/platform/ids';

const T0 = 1_700_000_000_000;
const MIN = 60_000;
const EXPIRY = 24 * 60 * MIN;
const base = (over: Partial<DeliveryRecord> = {}): DeliveryRecord => ({
  ...newDelivery({ deliveryId: 'd_1', workspaceId: 'ws', integrationId: 'int', conversationId: 'c', messageId: 'm', seq: 1, text: 'hi', now: T0 }),
  ...over,
});
/** What the store writes: the derived fields of `next` over `before`. */
const stored = (before: DeliveryRecord | null, next: DeliveryRecord, now: number, expiry = EXPIRY): DeliveryRecord =>
  withLiveness(before, withPendingAt(before, next, now), expiry);
const claimable = (now = T0, expiry = EXPIRY): DeliveryRecord => stored(null, base({ head: true }), now, expiry);

describe('withLiveness', () => {
  test('a claimable delivery gets its first check 5 minutes after it became claimable, and its expiry', () => {
    expect(claimable().liveness).toEqual({ checkAt: T0 + RENOTIFY_FIRST_MS, intervalMs: RENOTIFY_FIRST_MS, expiresAt: T0 + EXPIRY });
  });

  test('nothing for a delivery that is not claimable (behind another, leased, finished)', () => {
    expect('liveness' in stored(null, base(), T0)).toBe(false);
    for (const status of ['leased', 'sending', 'sent', 'failed', 'unknown'] as const) {
      expect('liveness' in stored(claimable(), { ...claimable(), status }, T0 + 1)).toBe(false);
    }
  });

  test('a retry counts from its due time', () => {
    const retried = stored(null, base({ head: true, status: 'queued', notBefore: T0 + 30_000 }), T0);
    expect(retried.liveness?.checkAt).toBe(T0 + 30_000 + RENOTIFY_FIRST_MS);
  });

  test('kept while it stays claimable since the same time; a new claimable period starts over at 5 minutes', () => {
    const first = claimable();
    const advanced = { ...first, liveness: { ...first.liveness!, checkAt: T0 + 15 * MIN, intervalMs: 10 * MIN } };
    expect(stored(first, { ...advanced, updatedAt: T0 + 6 * MIN }, T0 + 6 * MIN).liveness).toEqual(advanced.liveness);
    // Claimed, the lease expired: claimable again from the expiry, schedule reset.
    const claimed = stored(advanced, decideClaim(advanced, { now: T0 + 7 * MIN, requestId: 'R', newLeaseId: 'L', predecessorUnfinished: false, recipient: { externalConversationId: 'x', externalCustomerId: 'y' } }).next!, T0 + 7 * MIN);
    expect(claimed.liveness).toBeUndefined();
    const requeued = stored(claimed, { ...claimed, status: 'queued', lease: null }, T0 + 7 * MIN + LEASE_MS);
    expect(requeued.liveness).toEqual({ checkAt: T0 + 7 * MIN + LEASE_MS + RENOTIFY_FIRST_MS, intervalMs: RENOTIFY_FIRST_MS, expiresAt: T0 + 7 * MIN + LEASE_MS + EXPIRY });
  });

  test('an expiry shorter than the first interval: the first check is the expiry', () => {
    expect(claimable(T0, 3 * MIN).liveness).toEqual({ checkAt: T0 + 3 * MIN, intervalMs: RENOTIFY_FIRST_MS, expiresAt: T0 + 3 * MIN });
  });
});

describe('decideLivenessCheck', () => {
  /** Runs every check as it falls due, as the sweeper would, until the delivery is no longer claimable. */
  function runSchedule(start: DeliveryRecord): { renotifiedAt: number[]; failedAt: number | null; record: DeliveryRecord } {
    let d = start;
    const renotifiedAt: number[] = [];
    for (let i = 0; i < 200 && d.liveness; i++) {
      const at = d.liveness.checkAt;
      const decision = decideLivenessCheck(d, at, at + 1_000)!;
      d = stored(d, decision.next!, at + 1_000);
      if (d.status === 'failed') return { renotifiedAt, failedAt: at, record: d };
      expect(decision.effects).toEqual({ releasesNext: false, notify: { at: at + 1_000, reason: 'renotified' } });
      renotifiedAt.push(at);
    }
    return { renotifiedAt, failedAt: null, record: d };
  }

  test('re-notified after 5 minutes, then the interval doubles up to 1 hour; at 24 h: failed not_claimed, next released', () => {
    const { renotifiedAt, failedAt, record } = runSchedule(claimable());
    const minutes = renotifiedAt.map((at) => (at - T0) / MIN);
    expect(minutes.slice(0, 7)).toEqual([5, 15, 35, 75, 135, 195, 255]);
    expect(minutes.at(-1)).toBe(1395);
    expect(renotifiedAt).toHaveLength(7 + (1395 - 255) / 60);
    expect(failedAt).toBe(T0 + EXPIRY);
    expect(record.status).toBe('failed');
    expect(record.error).toEqual({ outcome: 'failed', code: 'not_claimed' });
    expect(record.pendingAt).toBeUndefined();
    expect(record.liveness).toBeUndefined();
    expect(record.attemptLog?.at(-1)).toEqual({ at: T0 + EXPIRY + 1_000, event: 'failed', code: 'not_claimed' });
    expect(record.attemptLog?.filter((e) => e.event === 'renotified')).toHaveLength(renotifiedAt.length);
  });

  test('the expiry releases the next delivery', () => {
    const d = claimable(T0, 20 * MIN);
    const last = { ...d, liveness: { ...d.liveness!, checkAt: d.liveness!.expiresAt } };
    expect(decideLivenessCheck(last, last.liveness.checkAt, T0 + 20 * MIN)?.effects).toEqual({ releasesNext: true, notify: null });
  });

  test('a configured expiry of 20 minutes: re-notified at 5 and 15, failed at 20', () => {
    const { renotifiedAt, failedAt } = runSchedule(claimable(T0, 20 * MIN));
    expect(renotifiedAt.map((at) => (at - T0) / MIN)).toEqual([5, 15]);
    expect(failedAt).toBe(T0 + 20 * MIN);
  });

  test('a stale check does nothing: another due time, claimed, finished, not head', () => {
    const d = claimable();
    expect(decideLivenessCheck(d, d.liveness!.checkAt - 1, T0 + 10 * MIN)).toBeNull();
    expect(decideLivenessCheck({ ...d, status: 'leased' }, d.liveness!.checkAt, T0 + 10 * MIN)).toBeNull();
    expect(decideLivenessCheck({ ...d, status: 'sent' }, d.liveness!.checkAt, T0 + 10 * MIN)).toBeNull();
    const behind = stored(null, base(), T0);
    expect(decideLivenessCheck(behind, T0 + RENOTIFY_FIRST_MS, T0 + 10 * MIN)).toBeNull();
  });

  test('a late sweep does not stretch the schedule: the next check counts from the due time', () => {
    const d = claimable();
    const r = decideLivenessCheck(d, d.liveness!.checkAt, T0 + 9 * MIN)!;
    expect(r.next?.liveness).toEqual({ checkAt: T0 + 15 * MIN, intervalMs: 10 * MIN, expiresAt: T0 + EXPIRY });
  });

  test('the interval never exceeds 1 hour', () => {
    const d = claimable();
    const late = { ...d, liveness: { ...d.liveness!, intervalMs: RENOTIFY_MAX_INTERVAL_MS } };
    expect(decideLivenessCheck(late, late.liveness.checkAt, T0)?.next?.liveness?.intervalMs).toBe(RENOTIFY_MAX_INTERVAL_MS);
  });
});

describe('attempt log', () => {
  test('appends with the code only when there is one, and keeps the latest ATTEMPT_LOG_LIMIT', () => {
    let d = base();
    d = withAttempt(d, T0, 'claimed');
    d = withAttempt(d, T0 + 1, 'retry', 'provider_busy');
    d = withAttempt(d, T0 + 2, 'lease_expired', null);
    expect(d.attemptLog).toEqual([
      { at: T0, event: 'claimed' },
      { at: T0 + 1, event: 'retry', code: 'provider_busy' },
      { at: T0 + 2, event: 'lease_expired' },
    ]);
    for (let i = 0; i < ATTEMPT_LOG_LIMIT + 5; i++) d = withAttempt(d, T0 + 10 + i, 'renotified');
    expect(d.attemptLog).toHaveLength(ATTEMPT_LOG_LIMIT);
    expect(d.attemptLog?.at(-1)).toEqual({ at: T0 + 10 + ATTEMPT_LOG_LIMIT + 4, event: 'renotified' });
    expect(d.attemptLog?.[0]).toEqual({ at: T0 + 15, event: 'renotified' });
  });
});

describe('shards', () => {
  test('deterministic, in range, and spread over every shard by real delivery ids', () => {
    for (const count of [8, 64]) {
      const counts = new Array<number>(count).fill(0);
      const n = count * 100;
      for (let i = 0; i < n; i++) {
        const id = deliveryIdFor(`c_${i % 40}`, `m_${i}`);
        const shard = shardOf(id, count);
        expect(shardOf(id, count)).toBe(shard);
        counts[shard] = (counts[shard] ?? 0) + 1;
      }
      expect(counts.every((c) => c >= 50 && c <= 150)).toBe(true);
    }
  });
});
