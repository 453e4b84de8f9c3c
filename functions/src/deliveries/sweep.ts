/**
 * The safety net, run every minute (decisions 5 and 7): publishes outbox entries their trigger or
 * task missed, applies lease expiry to deliveries nobody touched, and runs the due liveness checks
 * (re-notification, unclaimed expiry: ./liveness.ts), each within about a minute.
 */
import type { Firestore } from 'firebase-admin/firestore';
import { collectionQuery, groupQuery, QUERIES } from '../platform/queries';
import { runDueChecks } from './liveness';
import { processOutboxEntry } from './outbox';
import { UNFINISHED_STATUSES, type DeliveryRecord } from './record';
import { decideLeaseExpiry } from './state-machine';
import { OUTBOX, type OutboxEntry } from './store';
import { runTransition } from './transition';

/** The sweeper treats entries this overdue as missed by their trigger/task (instance died, enqueue failed). */
export const OUTBOX_STALE_AFTER_MS = 15_000;
/** Entries and deliveries handled per run: a backlog larger than this drains over several minutes. */
const SWEEP_BATCH = 200;

/** Liveness checks handled per shard and run (16 shards: up to 800 a minute). */
const CHECKS_PER_SHARD = 50;

export interface SweepResult {
  notifications: number;
  expiredLeases: number;
  renotified: number;
  notClaimed: number;
}

export async function sweep(db: Firestore, now = Date.now()): Promise<SweepResult> {
  const overdue = await collectionQuery(db.collection(OUTBOX), QUERIES.overdueOutbox, now - OUTBOX_STALE_AFTER_MS).limit(SWEEP_BATCH).get();
  let notifications = 0;
  for (const doc of overdue.docs) {
    const entry = doc.data() as OutboxEntry & { nextAttemptAt?: number };
    if (entry.nextAttemptAt !== undefined && entry.nextAttemptAt > now) continue;
    if ((await processOutboxEntry(db, doc.id, now)) === 'published') notifications++;
  }
  const leasedStatuses = UNFINISHED_STATUSES.filter((s) => s !== 'queued');
  const expired = await groupQuery(db, QUERIES.expiredLeases, leasedStatuses, now).limit(SWEEP_BATCH).get();
  let expiredLeases = 0;
  for (const doc of expired.docs) {
    const { workspaceId, deliveryId } = doc.data() as DeliveryRecord;
    const { decision } = await runTransition(db, { workspaceId, deliveryId, decide: (d, facts) => decideLeaseExpiry(d, facts.now) });
    if (decision !== null) expiredLeases++;
  }
  const checks = await runDueChecks(db, now, CHECKS_PER_SHARD);
  return { notifications, expiredLeases, renotified: checks.renotified, notClaimed: checks.expired };
}
