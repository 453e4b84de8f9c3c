/**
 * Liveness (decisions 7: nothing blocks a conversation forever). A delivery that is claimable
 * (queued, due, first unfinished of its conversation) carries a schedule (`liveness` on the record,
 * ./record.ts `withLiveness`) and one document `deliveryChecks/{deliveryId}` with the next check's
 * due time (also its catch-up list entry: ./pending.ts), written in the same transaction as the
 * record (./store.ts `writeDelivery`).
 * A claim ends the schedule and deletes the document, so on the normal path a check costs one
 * write and one delete, and the sweeper never sees it.
 *
 * The sweeper (every minute) reads the due checks shard by shard and applies each in one delivery
 * transition (./state-machine.ts `decideLivenessCheck`): a re-notification through the outbox, or
 * the unclaimed expiry. No collection-wide index on a time field: the checks' index leads with the
 * shard (CHECK_SHARDS ranges), and `deliveryChecks` holds only claimable deliveries, so its size is
 * the backlog of unclaimed work, not the history.
 */
import type { Firestore } from 'firebase-admin/firestore';
import { paths } from '../platform/paths';
import { collectionQuery, QUERIES } from '../platform/queries';
import { decideLivenessCheck } from './state-machine';
import { CHECK_SHARDS, deliveryCheckOf, deliveryCheckRef, type DeliveryCheck } from './store';
import { runTransition } from './transition';

export interface LivenessSweep {
  renotified: number;
  expired: number;
}

/**
 * Applies the checks due at `now`, at most `perShard` of each shard per run (a larger backlog
 * drains over the next runs). A check whose delivery moved on (claimed, finished, rescheduled)
 * does nothing; its document is then brought in line with the record (normally already gone).
 */
export async function runDueChecks(db: Firestore, now: number, perShard: number): Promise<LivenessSweep> {
  const checks = db.collection(paths.deliveryChecks());
  const shards = await Promise.all(
    Array.from({ length: CHECK_SHARDS }, (_, shard) => collectionQuery(checks, QUERIES.dueChecksOfShard, shard, now).limit(perShard).get()),
  );
  const result: LivenessSweep = { renotified: 0, expired: 0 };
  for (const doc of shards.flatMap((s) => s.docs)) {
    const check = doc.data() as DeliveryCheck;
    const { before, decision } = await runTransition(db, {
      workspaceId: check.workspaceId,
      deliveryId: check.deliveryId,
      decide: (d, facts) => decideLivenessCheck(d, check.dueAt, facts.now),
      // Nothing decided: the record no longer carries this check (or is gone). Normally the
      // document went with the schedule; a leftover one is removed so it is not read again.
      alsoWrite: (tx, outcome) => {
        if (outcome.decision === null && outcome.before?.liveness?.checkAt !== check.dueAt) {
          const current = outcome.before === null ? null : deliveryCheckOf(outcome.before);
          if (current === null) tx.delete(deliveryCheckRef(db, check.deliveryId));
          else tx.set(deliveryCheckRef(db, check.deliveryId), current);
        }
      },
    });
    if (decision === null || before === null) continue;
    if (decision.next?.status === 'failed') result.expired++;
    else result.renotified++;
  }
  return result;
}
