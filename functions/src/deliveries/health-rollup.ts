/**
 * Integration health roll-up (docs/decisions.md#integration-health; the arithmetic and the schedule rules are ./health.ts).
 * Every minute (index.ts `rollUpIntegrationHealth`) it pages through the integrations, reads their
 * last health documents by id, and for each one due (./health.ts `rollUpDue`) runs a handful of
 * aggregation and limit-1 queries and writes ONE document,
 * `workspaces/{ws}/integrationHealth/{integrationId}`:
 *  - counts by status of the deliveries created in the last 24 h: one count() per status over
 *    each chunk of list shards (`deliveriesOfStatusSince`);
 *  - the oldest claimable delivery: the catch-up list's query, limit 1, per list shard
 *    (`claimableOfIntegration`, the same index as `POST /v1/deliveries/pending`);
 *  - the latest `sent` and the latest error: limit 1 per list shard on `sentAt` / `errorAt`, which
 *    every delivery write derives (../rules/record.ts `withOutcomeTimes`).
 * No delivery operation writes the health document or the integration document; cost and
 * ceilings are in docs/capacity.md ("Integration health").
 */
import { Timestamp, type DocumentData, type DocumentReference, type Firestore, type Query, type QueryDocumentSnapshot } from 'firebase-admin/firestore';
import { config } from '../platform/config';
import * as logger from '../platform/log';
import { paths } from '../platform/paths';
import { collectionQuery, groupQuery, QUERIES } from '../platform/queries';
import { allShards, forEachLimit } from '../platform/shards';
import { HEALTH_STATUSES, HEALTH_WINDOW_MS, healthProblems, inChunks, RECENT_OUTCOMES, recentFailures, rollUpDue, summarizeHealth, type HealthQueryResults, type IntegrationHealth, type PreviousHealth } from './health';
import { writeOperationalEvent } from '../platform/operational-events';
import { integrationHealthEvent, type HealthProblem } from './operational-events';
import type { DeliveryRecord, DeliveryStatus } from '../rules/record';
import type { DeliveryCheck } from './store';

/** Integrations listed per page. */
const PAGE = 300;
/** Integrations rolled up at a time (each runs its queries in parallel). */
const ROLLUP_CONCURRENCY = 8;

export const integrationHealthRef = (db: Firestore, workspaceId: string, integrationId: string): DocumentReference =>
  db.doc(paths.integrationHealth(workspaceId, integrationId));

const ts = (ms: number): Timestamp => Timestamp.fromMillis(ms);

/** The stored document (the console contract, docs/data-model.md): times as Timestamps. */
function healthDocument(h: IntegrationHealth): Record<string, unknown> {
  return {
    workspaceId: h.workspaceId,
    integrationId: h.integrationId,
    computedAt: ts(h.computedAt),
    windowStartAt: ts(h.windowStartAt),
    counts: h.counts,
    total: h.total,
    oldestClaimable: h.oldestClaimable === null ? null : { deliveryId: h.oldestClaimable.deliveryId, since: ts(h.oldestClaimable.since), ageSeconds: Math.floor(h.oldestClaimable.ageMs / 1000) },
    lastSent: h.lastSent === null ? null : { deliveryId: h.lastSent.deliveryId, at: ts(h.lastSent.at) },
    lastError: h.lastError === null ? null : { deliveryId: h.lastError.deliveryId, at: ts(h.lastError.at), status: h.lastError.status, code: h.lastError.code },
    active: h.active,
  };
}

/** Runs the queries of one integration's health at `now` (reads only). */
async function computeIntegrationHealth(db: Firestore, workspaceId: string, integrationId: string, now: number): Promise<IntegrationHealth> {
  const deliveries = db.collection(paths.deliveries(workspaceId));
  const checks = db.collection(paths.deliveryChecks());
  const shards = allShards(config().listShards);
  const since = now - HEALTH_WINDOW_MS;

  const countsOf = async (status: DeliveryStatus): Promise<number[]> =>
    Promise.all(
      inChunks(shards).map(async (chunk) => {
        const snap = await collectionQuery(deliveries, QUERIES.deliveriesOfStatusSince, integrationId, status, chunk, since).count().get();
        return snap.data().count;
      }),
    );
  const firstOf = async <T>(query: Query, map: (data: DocumentData) => T): Promise<T | null> => {
    const doc = (await query.limit(1).get()).docs[0];
    return doc === undefined ? null : map(doc.data());
  };

  const [counts, oldestClaimable, lastSent, lastError] = await Promise.all([
    Promise.all(HEALTH_STATUSES.map(async (s) => [s, await countsOf(s)] as const)),
    Promise.all(
      shards.map((shard) =>
        firstOf(collectionQuery(checks, QUERIES.claimableOfIntegration, workspaceId, integrationId, shard, now), (c) => {
          const check = c as DeliveryCheck;
          return { deliveryId: check.deliveryId, pendingAt: check.pendingAt as number };
        }),
      ),
    ),
    Promise.all(
      shards.map((shard) =>
        firstOf(collectionQuery(deliveries, QUERIES.lastSentOfShard, integrationId, shard), (d) => ({ deliveryId: (d as DeliveryRecord).deliveryId, sentAt: (d as DeliveryRecord).sentAt as number })),
      ),
    ),
    Promise.all(
      shards.map((shard) =>
        firstOf(collectionQuery(deliveries, QUERIES.lastErrorOfShard, integrationId, shard), (data) => {
          const d = data as DeliveryRecord;
          return { deliveryId: d.deliveryId, errorAt: d.errorAt as number, status: d.status, code: d.error?.code ?? 'unknown' };
        }),
      ),
    ),
  ]);
  const results: HealthQueryResults = { now, counts: Object.fromEntries(counts) as Record<DeliveryStatus, number[]>, oldestClaimable, lastSent, lastError };
  return summarizeHealth({ workspaceId, integrationId }, results);
}

/**
 * The latest RECENT_OUTCOMES outcome times of an integration (limit-RECENT_OUTCOMES queries per
 * list shard on `sentAt` and `errorAt`), run only when its latest error is less than a day old:
 * an integration without recent errors reads no more than before (docs/operations.md#operational-events).
 */
async function recentOutcomes(db: Firestore, integrationId: string, health: IntegrationHealth): Promise<{ failed: number; of: number }> {
  if (health.lastError === null || health.lastError.at < health.computedAt - HEALTH_WINDOW_MS) return { failed: 0, of: 0 };
  const deliveries = db.collection(paths.deliveries(health.workspaceId));
  const timesOf = async (query: Query, field: 'sentAt' | 'errorAt'): Promise<number[]> =>
    (await query.limit(RECENT_OUTCOMES).select(field).get()).docs.map((doc) => doc.get(field) as unknown).filter((v): v is number => typeof v === 'number');
  const shards = allShards(config().listShards);
  const [sent, errors] = await Promise.all([
    Promise.all(shards.map((shard) => timesOf(collectionQuery(deliveries, QUERIES.lastSentOfShard, integrationId, shard), 'sentAt'))),
    Promise.all(shards.map((shard) => timesOf(collectionQuery(deliveries, QUERIES.lastErrorOfShard, integrationId, shard), 'errorAt'))),
  ]);
  return recentFailures(sent.flat(), errors.flat());
}

/** What the previous health document said about open problems (docs/operations.md#operational-events). */
export interface PreviousProblems {
  /** Epoch ms the open episode began, or null when healthy. */
  unhealthySince: number | null;
}

/**
 * Computes and writes one integration's health (one write), with its open problems; when they
 * open or close, the `integration.unhealthy` / `integration.recovered` event is written in the
 * same batch (one per episode, keyed by when it began).
 */
export async function rollUpIntegration(db: Firestore, workspaceId: string, integrationId: string, now: number, previous: PreviousProblems = { unhealthySince: null }): Promise<IntegrationHealth> {
  const health = await computeIntegrationHealth(db, workspaceId, integrationId, now);
  const problems: HealthProblem[] = healthProblems(health, await recentOutcomes(db, integrationId, health), config().opsUnhealthyAfterMs);
  const unhealthySince = problems.length === 0 ? null : (previous.unhealthySince ?? now);
  const batch = db.batch();
  batch.set(integrationHealthRef(db, workspaceId, integrationId), { ...healthDocument(health), problems, unhealthySince: unhealthySince === null ? null : ts(unhealthySince) });
  const opened = problems.length > 0 && previous.unhealthySince === null;
  const closed = problems.length === 0 && previous.unhealthySince !== null;
  if (opened || closed) {
    const event = integrationHealthEvent({ workspaceId, integrationId }, unhealthySince ?? previous.unhealthySince ?? now, problems, now);
    // A batch, not a transaction: the outbox entry and the health document commit together.
    writeOperationalEvent(batch, db, event, now);
  }
  await batch.commit();
  // One line per roll-up: the monitoring's oldest-claimable metric reads it (monitoring/).
  logger.info('health.rolled_up', {
    workspaceId,
    integrationId,
    ...(health.oldestClaimable === null ? {} : { oldestClaimableAgeSeconds: Math.floor(health.oldestClaimable.ageMs / 1000) }),
    problems: problems.map((p) => p.code).join(',') || 'none',
  });
  return health;
}

function previousProblemsOf(data: DocumentData | undefined): PreviousProblems {
  const since = data?.unhealthySince as unknown;
  return { unhealthySince: since instanceof Timestamp ? since.toMillis() : null };
}

function previousOf(data: DocumentData | undefined): PreviousHealth | null {
  const computedAt = data?.computedAt as unknown;
  if (!(computedAt instanceof Timestamp)) return null;
  return { computedAt: computedAt.toMillis(), active: data?.active === true };
}

export interface HealthRollUpResult {
  integrations: number;
  rolledUp: number;
  active: number;
}

/**
 * The scheduled run: every integration (a page at a time), its previous health read by id, and a
 * roll-up for those due at `now`. A failing integration is logged by the caller's error and does
 * not stop the others (the next minute tries again).
 */
export async function rollUpHealth(db: Firestore, now = Date.now(), onError: (owner: { workspaceId: string; integrationId: string }, err: unknown) => void = () => {}): Promise<HealthRollUpResult> {
  const result: HealthRollUpResult = { integrations: 0, rolledUp: 0, active: 0 };
  let cursor: QueryDocumentSnapshot | undefined;
  for (;;) {
    let query = groupQuery(db, QUERIES.allIntegrations).select().limit(PAGE);
    if (cursor !== undefined) query = query.startAfter(cursor);
    const page = (await query.get()).docs;
    if (page.length === 0) break;
    cursor = page.at(-1);
    const owners = page.flatMap((doc) => {
      const workspaceId = doc.ref.parent.parent?.id;
      return workspaceId === undefined ? [] : [{ workspaceId, integrationId: doc.id }];
    });
    result.integrations += owners.length;
    if (owners.length === 0) continue;
    const previous = await db.getAll(...owners.map((o) => integrationHealthRef(db, o.workspaceId, o.integrationId)));
    const due = owners.flatMap((o, i) => (rollUpDue(o, previousOf(previous[i]?.data()), now) ? [{ ...o, problems: previousProblemsOf(previous[i]?.data()) }] : []));
    await forEachLimit(due, ROLLUP_CONCURRENCY, async (o) => {
      try {
        const health = await rollUpIntegration(db, o.workspaceId, o.integrationId, now, o.problems);
        result.rolledUp++;
        if (health.active) result.active++;
      } catch (err) {
        onError(o, err);
      }
    });
    if (page.length < PAGE) break;
  }
  return result;
}
