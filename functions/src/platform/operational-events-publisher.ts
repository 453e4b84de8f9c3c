/**
 * The publishing half of operational events (./operational-events.ts has the writing half):
 * the outbox's trigger and the sweeper publish an event entry to its workspace's operations
 * topic (docs/operations.md#operational-events). Only the triggers load this module (and with it
 * the Pub/Sub client); the HTTP functions never do.
 */
import { FieldValue, type Firestore } from 'firebase-admin/firestore';
import { isValidTopicName } from '../contract';
import { errorCode, errorMessage, GRPC } from './failures';
import * as logger from './log';
import { isOperationalEntry, operationalOutboxRef as outboxRef } from './operational-events';
import { paths } from './paths';
import { pubsub } from './pubsub';

/** The Pub/Sub answers that retrying will not change: recorded on the settings document. */
const PERMANENT: ReadonlyMap<unknown, string> = new Map<unknown, string>([
  [GRPC.NOT_FOUND, 'not_found'],
  [GRPC.PERMISSION_DENIED, 'permission_denied'],
  [GRPC.INVALID_ARGUMENT, 'invalid'],
]);
const RETRY_BASE_MS = 5_000;
const RETRY_CAP_MS = 300_000;

/**
 * Publishes one event entry to its workspace's operations topic, then deletes it; see the module
 * comment for what happens without a topic or on a failure.
 */
export async function processOperationalEntry(db: Firestore, outboxId: string, now = Date.now()): Promise<'published' | 'dropped' | 'retry_later' | 'gone'> {
  const ref = outboxRef(db, outboxId);
  const entry = (await ref.get()).data();
  if (!isOperationalEntry(entry)) return 'gone';
  const { event } = entry;
  const log = { eventId: event.eventId, eventType: event.type, workspaceId: event.workspaceId, ...(event.deliveryId === undefined ? {} : { deliveryId: event.deliveryId }) };
  const settingsRef = db.doc(paths.operationsSettings(event.workspaceId));
  const settings = (await settingsRef.get()).data();
  const topic = settings?.topic as unknown;
  if (typeof topic !== 'string' || !isValidTopicName(topic)) {
    await ref.delete();
    logger.info('operations.event_dropped', { ...log, reason: 'no_topic' });
    return 'dropped';
  }
  try {
    const messageId = await (await pubsub()).topic(topic, { batching: { maxMessages: 1, maxMilliseconds: 0 } }).publishMessage({ json: event, attributes: { type: event.type, eventId: event.eventId } });
    await ref.delete();
    // A topic that works again: its recorded failure is cleared (one write, only after a failure).
    if (settings?.topicStatus !== undefined && settings.topicStatus !== 'ok') {
      await settingsRef.update({ topicStatus: FieldValue.delete(), topicMessage: FieldValue.delete(), topicCheckedAt: FieldValue.delete() });
    }
    logger.info('operations.event_published', { ...log, pubsubMessageId: messageId });
    return 'published';
  } catch (err) {
    const status = PERMANENT.get(errorCode(err));
    const detail = errorMessage(err).slice(0, 500);
    if (status !== undefined) {
      await settingsRef.set({ topicStatus: status, topicMessage: detail, topicCheckedAt: now }, { merge: true });
      await ref.delete();
      logger.warn('operations.event_dropped', { ...log, reason: status, detail });
      return 'dropped';
    }
    const attempts = entry.attempts + 1;
    const delay = Math.min(RETRY_CAP_MS, RETRY_BASE_MS * 2 ** (attempts - 1));
    await ref.update({ attempts, nextAttemptAt: now + delay, lastError: detail });
    logger.warn('operations.event_publish_failed', { ...log, attempts, retryInMs: delay, detail });
    return 'retry_later';
  }
}
