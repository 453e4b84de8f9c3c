/**
 * The transactional outbox: every notification a delivery transaction asks for is an entry in
 * `outbox/`, published here (by its trigger, its Cloud Task at `dueAt`, or the sweeper) and then
 * deleted. At least once: an entry is deleted only after a successful publish.
 */
import * as logger from '../platform/log';
import type { Firestore } from 'firebase-admin/firestore';
import { errorMessage, retryTransient } from '../platform/failures';
import { spanIdOf } from '../platform/trace';
import { isOperationalEntry } from '../platform/operational-events';
import { processOperationalEntry } from '../platform/operational-events-publisher';
import { repliesTopic } from '../integrations/model';
import { readIntegration } from '../integrations/store';
import { knownTopicProblem, recordPublishFailure } from '../integrations/topics';
import { publishNotification, type PermanentPublishFailure, type PublishResult } from './publisher';
import { decideUndeliverable } from '../rules/state-machine';
import { notificationOf, type DeliveryNotification, type NotificationKind, type NotificationReason } from '../rules/record';
import { outboxRef, type OutboxEntry } from './store';
import { runTransition } from './transition';

/** Transient publish failures back off from 5 s to 5 min; the sweeper picks the entry up again. */
const PUBLISH_RETRY_BASE_MS = 5_000;
const PUBLISH_RETRY_CAP_MS = 300_000;

export type OutboxOutcome = 'published' | 'not_due' | 'gone' | 'undeliverable' | 'retry_later';

/** The topic to publish to, or the permanent failure to record instead (disabled replies, a topic known to be broken). */
async function topicFor(db: Firestore, entry: OutboxEntry): Promise<{ topic: string } | { code: PermanentPublishFailure; detail: string }> {
  const integration = await readIntegration(db, entry.workspaceId, entry.integrationId);
  const topic = repliesTopic(integration);
  if (topic === null || integration === null) return { code: 'replies_disabled', detail: 'replies are disabled or no topic is set' };
  const known = await knownTopicProblem(db, entry.workspaceId, entry.integrationId, { ...integration.replies, topic });
  return known ?? { topic };
}

/** Records a permanent publish failure on the delivery (and its reply), releasing its successor; drops the entry. */
async function markUndeliverable(db: Firestore, outboxId: string, entry: OutboxEntry, code: string): Promise<void> {
  await runTransition(db, {
    workspaceId: entry.workspaceId,
    deliveryId: entry.deliveryId,
    decide: (d, { now }) => decideUndeliverable(d, code, now),
    alsoWrite: (tx) => tx.delete(outboxRef(db, outboxId)),
  });
}

/**
 * A notification its writer has just committed: the outbox entry's id and, when the writer read
 * the integration's topic in the same transaction and it is not known to be broken, what to
 * publish, so that nothing needs reading again on the way to the connector.
 */
export interface CommittedNotification {
  outboxId: string;
  publish?: { topic: string; reason: NotificationReason; notification: DeliveryNotification; kind?: NotificationKind };
}

/**
 * Publishes notifications its caller has just committed (entries written with `inline`: reply
 * sequencing, resend), instead of waiting for a trigger's hop: one trigger from the operator's
 * reply to the connector (docs/capacity.md; bench, "Reply to notification"). The entry stays the
 * safety net: it is deleted only after the publish, and if this instance dies first the sweeper
 * publishes it (its trigger leaves `inline` entries to their writer). A notification without
 * `publish`, or whose direct publish failed, takes the entry's usual path (read, check the topic,
 * publish, or record the failure); an error there is logged and left to the sweeper.
 */
export async function publishCommitted(db: Firestore, committed: readonly CommittedNotification[]): Promise<void> {
  await Promise.all(
    committed.map(async ({ outboxId, publish }) => {
      try {
        if (publish !== undefined && (await publishDirect(db, outboxId, publish))) return;
        await retryTransient(() => processOutboxEntry(db, outboxId));
      } catch (err) {
        logger.warn('notification.inline_publish_failed', { outboxId, detail: errorMessage(err) });
      }
    }),
  );
}

/**
 * Publishes what the writer read in its transaction, then deletes the entry. False when the publish
 * failed: the caller hands the entry to `processOutboxEntry`, which classifies and records failures
 * (a publish that failed ambiguously may then arrive twice: connectors dedupe by claiming).
 */
async function publishDirect(db: Firestore, outboxId: string, { topic, reason, notification, kind }: NonNullable<CommittedNotification['publish']>): Promise<boolean> {
  const result = await publishNotification(topic, notification, outboxId, kind);
  if (!result.ok) return false;
  await outboxRef(db, outboxId).delete();
  logger.info('notification.published', { outboxId, deliveryId: notification.deliveryId, integrationId: notification.integrationId, reason, pubsubMessageId: result.messageId, spanId: spanIdOf(outboxId) });
  return true;
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
  const stored = (await ref.get()).data();
  if (!stored) return 'gone';
  // An operational event shares the outbox (docs/operations.md#operational-events), not its topic.
  if (isOperationalEntry(stored)) return (await processOperationalEntry(db, outboxId, now)) === 'retry_later' ? 'retry_later' : 'published';
  const entry = stored as OutboxEntry;
  // Never early: a notification that arrives before `notBefore` would make the connector's claim
  // answer 503 retry_delayed.
  if (entry.dueAt > now) return 'not_due';
  const log = { outboxId, deliveryId: entry.deliveryId, integrationId: entry.integrationId, reason: entry.reason, spanId: spanIdOf(outboxId) };

  const target = await topicFor(db, entry);
  const notification = notificationOf(entry);
  const result: PublishResult = 'code' in target ? { ok: false, permanent: true, ...target } : await publishNotification(target.topic, notification, outboxId, entry.kind);

  if (result.ok) {
    await ref.delete();
    logger.info('notification.published', { ...log, pubsubMessageId: result.messageId });
    return 'published';
  }
  if (result.permanent) {
    logger.warn('notification.undeliverable', { ...log, code: result.code, detail: result.detail });
    if ('topic' in target) await recordPublishFailure(db, entry.workspaceId, entry.integrationId, target.topic, result.code);
    await markUndeliverable(db, outboxId, entry, result.code);
    return 'undeliverable';
  }
  const attempts = entry.attempts + 1;
  const delay = Math.min(PUBLISH_RETRY_CAP_MS, PUBLISH_RETRY_BASE_MS * 2 ** (attempts - 1));
  await ref.update({ attempts, nextAttemptAt: now + delay, lastError: result.detail.slice(0, 500) });
  logger.warn('notification.publish_failed', { ...log, attempts, retryInMs: delay, detail: result.detail });
  return 'retry_later';
}
