/**
 * Integration health (functions/src/deliveries/health.ts, docs/decisions.md#integration-health): the roll-up arithmetic
 * over per-shard query results, and which integrations a given minute rolls up.
 */
import {
  HEALTH_WINDOW_MS,
  IDLE_ROLLUP_EVERY_MINUTES,
  MIN_ROLLUP_INTERVAL_MS,
  inChunks,
  rollUpDue,
  summarizeHealth,
  type HealthQueryResults,
} from '../../../functions/src/deliveries/health';

const NOW = 1_700_000_000_000;
const OWNER = { workspaceId: 'ws1', integrationId: 'int1' };
const none = { queued: [], leased: [], sending: [], sent: [], failed: [], unknown: [] };

function results(over: Partial<HealthQueryResults> = {}): HealthQueryResults {
  return { now: NOW, counts: none, oldestClaimable: [], lastSent: [], lastError: [], ...over };
}

describe('summarizeHealth', () => {
  test('sums the counts of every shard chunk per status; the window is the last 24 h', () => {
    const h = summarizeHealth(OWNER, results({ counts: { queued: [2, 1], leased: [0, 1], sending: [1], sent: [40, 2], failed: [3], unknown: [0, 0] } }));
    expect(h.counts).toEqual({ queued: 3, leased: 1, sending: 1, sent: 42, failed: 3, unknown: 0 });
    expect(h.total).toBe(50);
    expect(h).toMatchObject({ ...OWNER, computedAt: NOW, windowStartAt: NOW - HEALTH_WINDOW_MS, active: true });
  });

  test('the oldest claimable is the earliest pendingAt over the shards, with its age at computedAt', () => {
    const h = summarizeHealth(
      OWNER,
      results({
        oldestClaimable: [null, { deliveryId: 'd_b', pendingAt: NOW - 90_000 }, { deliveryId: 'd_a', pendingAt: NOW - 300_500 }, { deliveryId: 'd_c', pendingAt: NOW - 5_000 }],
      }),
    );
    expect(h.oldestClaimable).toEqual({ deliveryId: 'd_a', since: NOW - 300_500, ageMs: 300_500 });
    // Claimable but nothing created in the window (an old delivery): still active.
    expect(h.total).toBe(0);
    expect(h.active).toBe(true);
  });

  test('a pendingAt a little ahead of the clock gives age 0, not a negative one', () => {
    expect(summarizeHealth(OWNER, results({ oldestClaimable: [{ deliveryId: 'd_a', pendingAt: NOW + 20 }] })).oldestClaimable?.ageMs).toBe(0);
  });

  test('the last sent and the last error are the latest over the shards (ties: the smaller id)', () => {
    const h = summarizeHealth(
      OWNER,
      results({
        lastSent: [{ deliveryId: 'd_1', sentAt: NOW - 10 }, null, { deliveryId: 'd_0', sentAt: NOW - 5 }, { deliveryId: 'd_z', sentAt: NOW - 5 }],
        lastError: [null, { deliveryId: 'd_e1', errorAt: NOW - 1_000, status: 'failed', code: 'recipient_blocked' }, { deliveryId: 'd_e2', errorAt: NOW - 50, status: 'unknown', code: 'provider_timeout' }],
      }),
    );
    expect(h.lastSent).toEqual({ deliveryId: 'd_0', at: NOW - 5 });
    expect(h.lastError).toEqual({ deliveryId: 'd_e2', at: NOW - 50, status: 'unknown', code: 'provider_timeout' });
  });

  test('nothing at all: zeros, nulls, idle', () => {
    const h = summarizeHealth(OWNER, results({ oldestClaimable: [null, null], lastSent: [null], lastError: [null] }));
    expect(h).toMatchObject({ counts: { queued: 0, leased: 0, sending: 0, sent: 0, failed: 0, unknown: 0 }, total: 0, oldestClaimable: null, lastSent: null, lastError: null, active: false });
  });

  test('a last sent or error older than the window alone does not make it active', () => {
    const h = summarizeHealth(OWNER, results({ lastSent: [{ deliveryId: 'd_1', sentAt: NOW - 2 * HEALTH_WINDOW_MS }] }));
    expect(h.lastSent).not.toBeNull();
    expect(h.active).toBe(false);
  });
});

describe('rollUpDue', () => {
  const MIN = 60_000;

  test('no health yet, or active at the last roll-up: every minute', () => {
    expect(rollUpDue(OWNER, null, NOW)).toBe(true);
    expect(rollUpDue(OWNER, { computedAt: NOW - MIN, active: true }, NOW)).toBe(true);
  });

  test('never twice within MIN_ROLLUP_INTERVAL_MS (at most one write per minute, even with overlapping runs)', () => {
    expect(rollUpDue(OWNER, { computedAt: NOW - MIN_ROLLUP_INTERVAL_MS + 1, active: true }, NOW)).toBe(false);
    expect(rollUpDue(OWNER, { computedAt: NOW, active: true }, NOW)).toBe(false);
    expect(rollUpDue(OWNER, { computedAt: NOW - MIN_ROLLUP_INTERVAL_MS, active: true }, NOW)).toBe(true);
  });

  test('idle: exactly one minute in every IDLE_ROLLUP_EVERY_MINUTES, when rolled up the minute before', () => {
    const start = Math.floor(NOW / MIN) * MIN;
    const minutes = Array.from({ length: 3 * IDLE_ROLLUP_EVERY_MINUTES }, (_, i) => start + i * MIN);
    const due = minutes.filter((t) => rollUpDue(OWNER, { computedAt: t - MIN, active: false }, t));
    expect(due).toHaveLength(3);
    expect(due[1]! - due[0]!).toBe(IDLE_ROLLUP_EVERY_MINUTES * MIN);
  });

  test('idle ones are spread over the minutes (not all in the same one)', () => {
    const t = Math.floor(NOW / MIN) * MIN;
    const owners = Array.from({ length: 200 }, (_, i) => ({ workspaceId: `ws${i}`, integrationId: 'int' }));
    const dueNow = owners.filter((o) => rollUpDue(o, { computedAt: t - MIN, active: false }, t)).length;
    expect(dueNow).toBeGreaterThan(0);
    expect(dueNow).toBeLessThan(60);
  });

  test('an idle one whose minute was missed (no run then) is rolled up once its interval has passed', () => {
    const t = Math.floor(NOW / MIN) * MIN;
    expect(rollUpDue(OWNER, { computedAt: t - IDLE_ROLLUP_EVERY_MINUTES * MIN, active: false }, t)).toBe(true);
  });
});

test('inChunks: groups of at most 30 (one `in` filter)', () => {
  const shards = Array.from({ length: 64 }, (_, i) => i);
  expect(inChunks(shards).map((c) => c.length)).toEqual([30, 30, 4]);
  expect(inChunks([0, 1, 2])).toEqual([[0, 1, 2]]);
  expect(inChunks([])).toEqual([]);
});
