/**
 * The time-based duties of unfinished deliveries (docs/contract.md#leases, docs/contract.md#liveness; docs/capacity.md). Each
 * delivery with something due has one document `deliveryChecks/{deliveryId}` (./store.ts
 * `DeliveryCheck`), written in the same transaction as the record (./store.ts `writeRecord`, when the plan says its due work moved: ../rules/plan.ts `dueWorkOf`):
 *  - claimable (queued, due, first of its conversation): its next liveness check: re-notify, or
 *    fail it `not_claimed` at the unclaimed expiry (../rules/record.ts `withLiveness`);
 *  - leased or sending: its lease's expiry.
 * The sweeper (every minute) reads the due documents shard by shard and applies each in one
 * delivery transition. No index on a time field spans the project: the index leads with the shard
 * (QUEUE_SHARDS ranges), and the collection holds only deliveries with a duty, not the history.
 */
import type { Firestore } from 'firebase-admin/firestore';
import * as logger from '../platform/log';
import { config } from '../platform/config';
import { paths } from '../platform/paths';
import { collectionQuery, QUERIES } from '../platform/queries';
import { allShards, forEachLimit, SWEEP_CONCURRENCY } from '../platform/shards';
import type { DeliveryRecord } from '../rules/record';
import { decideLeaseExpiry, decideLivenessCheck } from '../rules/state-machine';
import { deliveryCheckOf, deliveryCheckRef, type DeliveryCheck } from './store';
import { runTransition } from './transition';

export interface DueChecksResult {
  renotified: number;
  notClaimed: number;
  expiredLeases: number;
}

/** The duty `check` stands for, applied to the record as it is now; null when it is stale or not due. */
function decideCheck(d: DeliveryRecord, check: DeliveryCheck, now: number) {
  if (d.status === 'leased' || d.status === 'sending') return d.lease?.expiresAt === check.dueAt ? decideLeaseExpiry(d, now) : null;
  return decideLivenessCheck(d, check.dueAt, now);
}

/**
 * Applies the checks due at `now`, at most `perShard` of each shard per run (a larger backlog
 * drains over the next runs). A check whose delivery moved on (claimed, finished, rescheduled)
 * does nothing; its document is then brought in line with the record (normally it already is).
 */
export async function runDueChecks(db: Firestore, now: number, perShard: number): Promise<DueChecksResult> {
  const checks = db.collection(paths.deliveryChecks());
  const shards = await Promise.all(allShards(config().queueShards).map((shard) => collectionQuery(checks, QUERIES.dueChecksOfShard, shard, now).limit(perShard).get()));
  const result: DueChecksResult = { renotified: 0, notClaimed: 0, expiredLeases: 0 };
  // Independent deliveries: a few transactions at a time (a backlog after an outage drains in
  // minutes, not hours; docs/capacity.md, "Sweeper").
  await forEachLimit(shards.flatMap((s) => s.docs), SWEEP_CONCURRENCY, async (doc) => {
    const check = doc.data() as DeliveryCheck;
    const { before, decision } = await runTransition(db, {
      workspaceId: check.workspaceId,
      deliveryId: check.deliveryId,
      decide: (d, facts) => decideCheck(d, check, facts.now),
      alsoWrite: (tx, outcome) => {
        if (outcome.decision !== null) return;
        const current = outcome.before === null ? null : deliveryCheckOf(outcome.before);
        if (current === null) tx.delete(deliveryCheckRef(db, check.deliveryId));
        else if (current.dueAt !== check.dueAt) tx.set(deliveryCheckRef(db, check.deliveryId), current);
      },
    });
    if (decision === null || before === null || decision.next === null) return;
    const log = { deliveryId: before.deliveryId, workspaceId: before.workspaceId, integrationId: before.integrationId, deliveryStatus: decision.next.status };
    // One line per applied duty: the monitoring's lease-expiry and outcome metrics count these (monitoring/).
    if (before.status === 'leased' || before.status === 'sending') {
      result.expiredLeases++;
      logger.info('delivery.lease_expired', { ...log, leaseStarted: before.lease?.started ?? false });
    } else if (decision.next.status === 'failed') {
      result.notClaimed++;
      logger.warn('delivery.not_claimed', log);
    } else result.renotified++;
  });
  return result;
}
