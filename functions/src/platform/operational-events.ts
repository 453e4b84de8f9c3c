/**
 * Operational events (docs/operations.md#operational-events): what an operator must hear about,
 * published to the workspace's optional operations topic (`workspaces/{ws}/settings/operations`
 * = `{ topic }`), never to a connector's replies topic (a connector reads every message there as
 * a delivery notification).
 *
 * An event travels like a notification: an entry in the same `outbox/` collection, written in the
 * transaction that causes it (`writeOperationalEvent`), published by the outbox's trigger or the
 * sweeper (`processOperationalEntry`, called by ../deliveries/outbox.ts) and deleted after the
 * publish. Here in platform/ so that any feature can raise one (the events themselves are built
 * by their feature: ../deliveries/operational-events.ts). So it
 * is sent at least once, within seconds, and its `eventId` is stable: the entry's id is made of
 * it, and a retried transaction or a second detection writes the same entry.
 *
 * No topic configured: the entry is dropped (events are optional). A topic that does not exist or
 * that the service may not publish to: recorded on the settings document (`topicStatus`, shown by
 * the console) and the event dropped, not retried forever; a transient failure backs off like a
 * notification.
 */
import { FieldValue, type DocumentData, type DocumentReference, type Firestore } from 'firebase-admin/firestore';
import { errorCode, errorMessage, GRPC } from './failures';
import * as logger from './log';
import { paths } from './paths';
import { pubsub } from './pubsub';
import { shardOf } from './shards';
import { config } from './config';
import { isValidTopicName } from '../contract';

const outboxRef = (db: Firestore, outboxId: string) => db.doc(paths.outboxEntry(outboxId));

export type OperationalEventType = 'delivery.exhausted' | 'conversation.blocked' | 'integration.unhealthy' | 'integration.recovered' | 'erasure.done';

/** One event as published (the message data, JSON); `at` is ISO 8601 (read by people and tools outside the service). */
export interface OperationalEvent {
  eventId: string;
  type: OperationalEventType;
  workspaceId: string;
  integrationId?: string;
  conversationId?: string;
  deliveryId?: string;
  at: string;
  detail: Record<string, unknown>;
}

/** Event times: ISO 8601. */
export const iso = (ms: number): string => new Date(ms).toISOString();

/** An event's outbox entry (`outbox/ops_{eventId}`): `kind` tells it from a notification's. */
export interface OperationalOutboxEntry {
  kind: 'operational';
  event: OperationalEvent;
  workspaceId: string;
  /** When it may be published (it always may: the sweeper's index orders by it). */
  dueAt: number;
  attempts: number;
  createdAt: number;
  shard: number;
  nextAttemptAt?: number;
  lastError?: string;
}

export const isOperationalEntry = (entry: unknown): entry is OperationalOutboxEntry =>
  typeof entry === 'object' && entry !== null && (entry as { kind?: unknown }).kind === 'operational';

/** The outbox id of an event: its eventId made a valid document id. */
export const operationalOutboxId = (eventId: string): string => `ops_${eventId.replace(/[^A-Za-z0-9_.@-]/g, '_')}`;

function entryOf(event: OperationalEvent, now: number): OperationalOutboxEntry {
  return { kind: 'operational', event, workspaceId: event.workspaceId, dueAt: Math.min(now, Date.now()), attempts: 0, createdAt: Date.now(), shard: shardOf(event.eventId, config().queueShards) };
}

/** Writes `event` in the caller's transaction (or batch) (published after the commit, at least once). */
export function writeOperationalEvent(tx: { set(ref: DocumentReference, data: DocumentData): unknown }, db: Firestore, event: OperationalEvent, now: number): void {
  tx.set(outboxRef(db, operationalOutboxId(event.eventId)), entryOf(event, now));
}

/**
 * Publishes an event caused outside a delivery transaction (e.g. an erasure finished): writes its
 * entry (the same eventId twice is one entry) and publishes it now; the sweeper retries a failure.
 * Prefer `writeOperationalEvent` inside the transaction that causes the event when there is one.
 */
export async function publishOperationalEvent(db: Firestore, event: OperationalEvent): Promise<void> {
  const id = operationalOutboxId(event.eventId);
  await outboxRef(db, id).set(entryOf(event, Date.now()));
  try {
    await processOperationalEntry(db, id);
  } catch (err) {
    logger.warn('operations.event_publish_failed', { eventId: event.eventId, type: event.type, detail: errorMessage(err) });
  }
}

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
