/**
 * The safety net, run every minute (docs/contract.md#leases, docs/contract.md#liveness): publishes outbox entries their trigger or
 * task missed, and applies the due time-based duties of deliveries (./liveness.ts): lease expiry,
 * re-notification, unclaimed expiry, each within about a minute. Every query reads one shard of a
 * sharded index at a time (docs/capacity.md).
 */
import type { Firestore } from 'firebase-admin/firestore';
import { config } from '../platform/config';
import { collectionQuery, QUERIES } from '../platform/queries';
import { allShards, forEachLimit, SWEEP_CONCURRENCY } from '../platform/shards';
import { signalBlockedConversations } from './blocked';
import { runDueChecks } from './liveness';
import { processOutboxEntry } from './outbox';
import { OUTBOX, type OutboxEntry } from './store';

/** The sweeper treats entries this overdue as missed by their trigger/task (instance died, enqueue failed). */
export const OUTBOX_STALE_AFTER_MS = 15_000;
/** Outbox entries and delivery checks handled per shard and run: a larger backlog drains over several minutes. */
const PER_SHARD = 50;

export interface SweepResult {
  notifications: number;
  expiredLeases: number;
  renotified: number;
  notClaimed: number;
  /** `conversation.blocked` events written (./blocked.ts). */
  blocked: number;
}

export async function sweep(db: Firestore, now = Date.now()): Promise<SweepResult> {
  const outbox = db.collection(OUTBOX);
  const shards = await Promise.all(
    allShards(config().queueShards).map((shard) => collectionQuery(outbox, QUERIES.overdueOutboxOfShard, shard, now - OUTBOX_STALE_AFTER_MS).limit(PER_SHARD).get()),
  );
  let notifications = 0;
  await forEachLimit(shards.flatMap((s) => s.docs), SWEEP_CONCURRENCY, async (doc) => {
    const entry = doc.data() as OutboxEntry & { nextAttemptAt?: number };
    if (entry.nextAttemptAt !== undefined && entry.nextAttemptAt > now) return;
    if ((await processOutboxEntry(db, doc.id, now)) === 'published') notifications++;
  });
  const checks = await runDueChecks(db, now, PER_SHARD);
  const blocked = await signalBlockedConversations(db, now, PER_SHARD);
  return { notifications, ...checks, blocked };
}
