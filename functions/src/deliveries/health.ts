/**
 * Integration health for the console (docs/decisions.md#integration-health), the pure part: what the roll-up
 * (./health-rollup.ts) makes of its query results, and which integrations it rolls up in a given
 * minute. No Firebase, no clock (callers pass `now`).
 *
 * The health of an integration is a summary over its deliveries, computed from aggregation and
 * limit-1 queries once a minute at most and written to one document beside the integration
 * (`integrationHealth/{integrationId}`, docs/data-model.md). No delivery operation writes it, so
 * its write rate is the roll-up's, never the traffic's.
 */
import { shardOf } from '../platform/shards';
import type { HealthProblem } from './operational-events';
import type { DeliveryStatus } from '../rules/record';

/** The counts cover deliveries created in the last 24 hours. */
export const HEALTH_WINDOW_MS = 24 * 3600_000;
/** An integration with nothing in the window and nothing claimable is rolled up every 10 minutes (staggered). */
export const IDLE_ROLLUP_EVERY_MINUTES = 10;
/**
 * Two runs closer than this (an overrun schedule, or two instances) do not both write: at most one
 * write per integration per minute, whatever the scheduler does.
 */
export const MIN_ROLLUP_INTERVAL_MS = 55_000;

export const HEALTH_STATUSES: readonly DeliveryStatus[] = ['queued', 'leased', 'sending', 'sent', 'failed', 'unknown'];

/** What the roll-up's queries returned for one integration (each list: one entry per query run). */
export interface HealthQueryResults {
  now: number;
  /** Per status, the count of each query run (one per chunk of list shards): summed. */
  counts: Record<DeliveryStatus, readonly number[]>;
  /** The oldest claimable delivery of each list shard (`pendingAt`), or null for an empty shard. */
  oldestClaimable: ReadonlyArray<{ deliveryId: string; pendingAt: number } | null>;
  /** The latest `sentAt` of each list shard. */
  lastSent: ReadonlyArray<{ deliveryId: string; sentAt: number } | null>;
  /** The latest `errorAt` of each list shard, with the delivery's status and error code. */
  lastError: ReadonlyArray<{ deliveryId: string; errorAt: number; status: string; code: string } | null>;
}

/** The health of one integration at `computedAt` (epoch ms here; the stored document uses Timestamps). */
export interface IntegrationHealth {
  workspaceId: string;
  integrationId: string;
  computedAt: number;
  /** `computedAt` - 24 h: the counts are of deliveries created since then. */
  windowStartAt: number;
  /** Deliveries created in the window, by their status now. */
  counts: Record<DeliveryStatus, number>;
  total: number;
  /** The delivery claimable the longest (queued, due, first of its conversation), or null. */
  oldestClaimable: { deliveryId: string; since: number; ageMs: number } | null;
  /** The latest delivery to become `sent` (any age), or null. */
  lastSent: { deliveryId: string; at: number } | null;
  /** The latest delivery to end `failed`/`unknown` with an error (any age; `cancelled` is not one), or null. */
  lastError: { deliveryId: string; at: number; status: string; code: string } | null;
  /** Something in the window or claimable: rolled up every minute (otherwise every IDLE_ROLLUP_EVERY_MINUTES). */
  active: boolean;
}

/** The latest (or, with `earliest`, the first) non-null entry by `key`; ties: the smaller id, so the result is stable. */
function pick<T extends { deliveryId: string }>(items: ReadonlyArray<T | null>, key: (t: T) => number, earliest: boolean): T | null {
  let best: T | null = null;
  for (const item of items) {
    if (item === null) continue;
    const better = best === null || (earliest ? key(item) < key(best) : key(item) > key(best)) || (key(item) === key(best) && item.deliveryId < best.deliveryId);
    if (better) best = item;
  }
  return best;
}

/** The roll-up arithmetic: sums the counts, takes the oldest claimable and the latest sent and error. */
export function summarizeHealth(owner: { workspaceId: string; integrationId: string }, results: HealthQueryResults): IntegrationHealth {
  const { now } = results;
  const counts = Object.fromEntries(HEALTH_STATUSES.map((s) => [s, results.counts[s].reduce((a, b) => a + b, 0)])) as Record<DeliveryStatus, number>;
  const total = HEALTH_STATUSES.reduce((sum, s) => sum + counts[s], 0);
  const oldest = pick(results.oldestClaimable, (c) => c.pendingAt, true);
  const sent = pick(results.lastSent, (c) => c.sentAt, false);
  const error = pick(results.lastError, (c) => c.errorAt, false);
  return {
    workspaceId: owner.workspaceId,
    integrationId: owner.integrationId,
    computedAt: now,
    windowStartAt: now - HEALTH_WINDOW_MS,
    counts,
    total,
    oldestClaimable: oldest === null ? null : { deliveryId: oldest.deliveryId, since: oldest.pendingAt, ageMs: Math.max(0, now - oldest.pendingAt) },
    lastSent: sent === null ? null : { deliveryId: sent.deliveryId, at: sent.sentAt },
    lastError: error === null ? null : { deliveryId: error.deliveryId, at: error.errorAt, status: error.status, code: error.code },
    active: total > 0 || oldest !== null,
  };
}

/** What the roll-up needs to know of the last stored health of an integration. */
export interface PreviousHealth {
  computedAt: number;
  active: boolean;
}

/**
 * Whether the run at `now` rolls up this integration: never twice within MIN_ROLLUP_INTERVAL_MS;
 * otherwise always when it has no health yet or was active at the last roll-up, and an idle one
 * once every IDLE_ROLLUP_EVERY_MINUTES minutes, in a minute of its own (spread by a hash of its
 * id, so the idle ones do not all fall in the same minute).
 */
export function rollUpDue(owner: { workspaceId: string; integrationId: string }, previous: PreviousHealth | null, now: number): boolean {
  if (previous === null) return true;
  if (now - previous.computedAt < MIN_ROLLUP_INTERVAL_MS) return false;
  if (previous.active) return true;
  const minute = Math.floor(now / 60_000);
  const slot = shardOf(`${owner.workspaceId}/${owner.integrationId}`, IDLE_ROLLUP_EVERY_MINUTES);
  return minute % IDLE_ROLLUP_EVERY_MINUTES === slot || now - previous.computedAt >= IDLE_ROLLUP_EVERY_MINUTES * 60_000;
}

/** Splits list shards into groups that fit one `in` filter (Firestore allows 30 values). */
export function inChunks<T>(values: readonly T[], size = 30): T[][] {
  const chunks: T[][] = [];
  for (let i = 0; i < values.length; i += size) chunks.push(values.slice(i, i + size));
  return chunks;
}

/** The outcomes the failing-integration rule looks at (docs/operations.md#operational-events). */
export const RECENT_OUTCOMES = 20;

/**
 * Of the latest RECENT_OUTCOMES outcomes (times at which deliveries became `sent`, and at which
 * they ended with an error), how many were errors. Each list: the latest times of one or more
 * list shards, in any order.
 */
export function recentFailures(sentAt: readonly number[], errorAt: readonly number[], n = RECENT_OUTCOMES): { failed: number; of: number } {
  const all = [...sentAt.map((at) => ({ at, failed: false })), ...errorAt.map((at) => ({ at, failed: true }))].sort((a, b) => b.at - a.at).slice(0, n);
  return { failed: all.filter((o) => o.failed).length, of: all.length };
}

/**
 * The open problems of an integration: its oldest claimable delivery waits longer than
 * `unhealthyAfterMs`, or more than half of its latest outcomes are errors. None: healthy.
 */
export function healthProblems(h: IntegrationHealth, recent: { failed: number; of: number }, unhealthyAfterMs: number): HealthProblem[] {
  const problems: HealthProblem[] = [];
  if (h.oldestClaimable !== null && h.oldestClaimable.ageMs > unhealthyAfterMs) {
    problems.push({ code: 'claimable_too_old', deliveryId: h.oldestClaimable.deliveryId, ageSeconds: Math.floor(h.oldestClaimable.ageMs / 1000) });
  }
  if (recent.of > 0 && recent.failed * 2 > recent.of) problems.push({ code: 'outcomes_failing', failed: recent.failed, of: recent.of });
  return problems;
}
