import * as logger from 'firebase-functions/logger';
import type { Firestore } from 'firebase-admin/firestore';
import { decideLeaseExpiry, decideUndeliverable, type DeliveryRecord } from '../domain/delivery';
import { integrationPath } from '../store/integrations';
import { applyDecision, deliveryRef, NO_ORDERING_READS, OUTBOX, outboxRef, readOrdering, UNFINISHED_STATUSES, type OutboxEntry } from '../store/deliveries';
import { collectionQuery, groupQuery, QUERIES } from '../store/queries';
import { publishNotification, type DeliveryNotification, type PermanentPublishFailure, type PublishResult } from './publisher';
import { knownTopicProblem, recordPublishFailure } from './topics';

/** Transient publish failures back off from 5 s to 5 min; the sweeper picks the entry up again. */
const PUBLISH_RETRY_BASE_MS = 5_000;
const PUBLISH_RETRY_CAP_MS = 300_000;
/** The sweeper treats entries this overdue as missed by their trigger/task (instance died, enqueue failed). */
export const OUTBOX_STALE_AFTER_MS = 15_000;

export type OutboxOutcome = 'published' | 'not_due' | 'gone' | 'undeliverable' | 'retry_later';

/** The topic to publish to, or the permanent failure to record instead (disabled replies, a topic known to be broken). */
async function topicFor(db: Firestore, entry: OutboxEntry): Promise<{ topic: string } | { code: PermanentPublishFailure; detail: string }> {
  const data = (await db.doc(integrationPath(entry.workspaceId, entry.integrationId)).get()).data();
  const replies = (data?.replies ?? {}) as { enabled?: unknown; topic?: unknown };
  if (replies.enabled !== true || typeof replies.topic !== 'string') return { code: 'replies_disabled', detail: 'replies are disabled or no topic is set' };
  const known = await knownTopicProblem(db, entry.workspaceId, entry.integrationId, { ...replies, topic: replies.topic });
  return known ?? { topic: replies.topic };
}

/** Records a permanent publish failure on the delivery (and its reply), releasing its successor. */
async function markUndeliverable(db: Firestore, entry: OutboxEntry, code: string): Promise<void> {
  await db.runTransaction(async (tx) => {
    const now = Date.now();
    const snap = await tx.get(deliveryRef(db, entry.workspaceId, entry.deliveryId));
    const delivery = snap.data() as DeliveryRecord | undefined;
    const decision = delivery ? decideUndeliverable(delivery, code, now) : null;
    const ordering = delivery && decision ? await readOrdering(tx, db, delivery, decision.effects.releasesNext) : NO_ORDERING_READS;
    if (delivery && decision) applyDecision(tx, db, delivery, decision, ordering, now, 'wake');
    tx.delete(outboxRef(db, outboxIdOf(entry)));
  });
}

function outboxIdOf(entry: OutboxEntry): string {
  return `${entry.deliveryId}@${entry.dueAt}`;
}

/** Reads an entry's due time (null when it is gone). */
export async function outboxDueAt(db: Firestore, outboxId: string): Promise<number | null> {
  const entry = (await outboxRef(db, outboxId).get()).data() as OutboxEntry | undefined;
  return entry ? entry.dueAt : null;
}

/**
 * Publishes one outbox entry if it is due, then deletes it. At-least-once: the entry is deleted
 * only after a successful publish, so a crash in between publishes it again (connectors dedupe by
 * claiming). Safe to call concurrently for the same entry.
 */
export async function processOutboxEntry(db: Firestore, outboxId: string, now = Date.now()): Promise<OutboxOutcome> {
  const ref = outboxRef(db, outboxId);
  const snap = await ref.get();
  const entry = snap.data() as OutboxEntry | undefined;
  if (!entry) return 'gone';
  // Never early: a notification that arrives before `notBefore` would make the connector's claim
  // answer 503 retry_delayed.
  if (entry.dueAt > now) return 'not_due';
  const log = { outboxId, deliveryId: entry.deliveryId, integrationId: entry.integrationId, reason: entry.reason };

  const target = await topicFor(db, entry);
  const notification: DeliveryNotification = {
    deliveryId: entry.deliveryId,
    workspaceId: entry.workspaceId,
    integrationId: entry.integrationId,
    conversationId: entry.conversationId,
    messageId: entry.messageId,
  };
  const result: PublishResult = 'code' in target ? { ok: false, permanent: true, ...target } : await publishNotification(target.topic, notification);

  if (result.ok) {
    await ref.delete();
    logger.info('notification.published', { ...log, pubsubMessageId: result.messageId });
    return 'published';
  }
  if (result.permanent) {
    logger.warn('notification.undeliverable', { ...log, code: result.code, detail: result.detail });
    if ('topic' in target) await recordPublishFailure(db, entry.workspaceId, entry.integrationId, target.topic, result.code);
    await markUndeliverable(db, entry, result.code);
    return 'undeliverable';
  }
  const attempts = entry.attempts + 1;
  const delay = Math.min(PUBLISH_RETRY_CAP_MS, PUBLISH_RETRY_BASE_MS * 2 ** (attempts - 1));
  await ref.update({ attempts, nextAttemptAt: now + delay, lastError: result.detail.slice(0, 500) });
  logger.warn('notification.publish_failed', { ...log, attempts, retryInMs: delay, detail: result.detail });
  return 'retry_later';
}

/**
 * Safety net, run every minute: publishes outbox entries their trigger or task missed, and
 * applies lease expiry to deliveries nobody touched (decisions 5: within about a minute).
 */
export async function sweep(db: Firestore, now = Date.now()): Promise<{ notifications: number; expiredLeases: number }> {
  const overdue = await collectionQuery(db.collection(OUTBOX), QUERIES.overdueOutbox, now - OUTBOX_STALE_AFTER_MS).limit(200).get();
  let notifications = 0;
  for (const doc of overdue.docs) {
    const entry = doc.data() as OutboxEntry & { nextAttemptAt?: number };
    if (entry.nextAttemptAt !== undefined && entry.nextAttemptAt > now) continue;
    if ((await processOutboxEntry(db, doc.id, now)) === 'published') notifications++;
  }
  const leasedStatuses = UNFINISHED_STATUSES.filter((s) => s !== 'queued');
  const expired = await groupQuery(db, QUERIES.expiredLeases, leasedStatuses, now).limit(200).get();
  let expiredLeases = 0;
  for (const doc of expired.docs) {
    const changed = await db.runTransaction(async (tx) => {
      const t = Date.now();
      const fresh = (await tx.get(doc.ref)).data() as DeliveryRecord | undefined;
      const decision = fresh ? decideLeaseExpiry(fresh, t) : null;
      if (!fresh || !decision) return false;
      const ordering = await readOrdering(tx, db, fresh, decision.effects.releasesNext);
      applyDecision(tx, db, fresh, decision, ordering, t, 'lease_expired');
      return true;
    });
    if (changed) expiredLeases++;
  }
  return { notifications, expiredLeases };
}
