/**
 * `conversation.blocked` (docs/operations.md#operational-events): the first unfinished reply of a
 * conversation claimable for longer than OPS_BLOCKED_AFTER (15 minutes by default). Run by the
 * sweeper every minute: per shard, the claimable deliveries' check documents claimable since
 * before the bound (`blockedChecksOfShard`; only the first unfinished delivery of a conversation
 * is ever claimable, so each is a blocked conversation).
 *
 * Once per episode: the event's delivery records the episode it was sent for
 * (`blockedEventFor` = its `pendingAt`) in the same transaction as the event, and its check
 * document carries a copy, so that the next minutes skip it without a transaction. The episode
 * ends when the delivery is claimed (or ends): a new claimable period has a new `pendingAt`, and
 * would be a new episode only after another OPS_BLOCKED_AFTER. A re-notification rewrites the
 * check document without the copy; the next run then finds the record marked and only restores it.
 */
import type { Firestore } from 'firebase-admin/firestore';
import { config } from '../platform/config';
import { writeOperationalEvent } from '../platform/operational-events';
import { paths } from '../platform/paths';
import { collectionQuery, QUERIES } from '../platform/queries';
import { allShards, forEachLimit, SWEEP_CONCURRENCY } from '../platform/shards';
import { blockedEvent } from './operational-events';
import type { Decision, DeliveryRecord } from '../rules/record';
import { deliveryCheckRef, type DeliveryCheck } from './store';
import { runTransition } from './transition';

/** The marker of the episode the event was sent for (on the record and its check document). */
type Marked = { blockedEventFor?: number };

/**
 * The marker write for `d` when it is still claimable since `pendingAt` and its episode has no
 * event yet; null otherwise (claimed or finished since, or already signalled). Pure.
 */
export function decideBlockedSignal(d: DeliveryRecord, pendingAt: number): Decision<null> | null {
  if (d.pendingAt !== pendingAt || d.blockedEventFor === pendingAt) return null;
  return { response: null, next: { ...d, blockedEventFor: pendingAt }, effects: { releasesNext: false, notify: null } };
}

/** Sends `conversation.blocked` for the conversations blocked at `now`; returns how many were sent. */
export async function signalBlockedConversations(db: Firestore, now: number, perShard: number): Promise<number> {
  const checks = db.collection(paths.deliveryChecks());
  const bound = now - config().opsBlockedAfterMs;
  const shards = await Promise.all(allShards(config().queueShards).map((shard) => collectionQuery(checks, QUERIES.blockedChecksOfShard, shard, bound).limit(perShard).get()));
  let sent = 0;
  const due = shards.flatMap((s) => s.docs).map((doc) => doc.data() as DeliveryCheck & Marked).filter((c) => c.pendingAt !== undefined && c.blockedEventFor !== c.pendingAt);
  await forEachLimit(due, SWEEP_CONCURRENCY, async (check) => {
    const pendingAt = check.pendingAt as number;
    const { decision } = await runTransition(db, {
      workspaceId: check.workspaceId,
      deliveryId: check.deliveryId,
      decide: (d) => decideBlockedSignal(d, pendingAt),
      alsoWrite: (tx, outcome) => {
        const d = outcome.before;
        if (d === null || d.pendingAt !== pendingAt) return;
        if (outcome.decision !== null) writeOperationalEvent(tx, db, blockedEvent({ ...d, pendingAt }, now), now);
        // The copy on the check document: the next runs skip this episode without a transaction.
        if (outcome.decision !== null || d.blockedEventFor === pendingAt) tx.set(deliveryCheckRef(db, check.deliveryId), { blockedEventFor: pendingAt }, { merge: true });
      },
    });
    if (decision !== null) sent++;
  });
  return sent;
}
