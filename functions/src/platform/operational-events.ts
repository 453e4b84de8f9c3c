/**
 * Operational events (docs/operations.md#operational-events): what an operator must hear about,
 * published to the workspace's optional operations topic (`workspaces/{ws}/settings/operations`
 * = `{ topic }`), never to a connector's replies topic (a connector reads every message there as
 * a delivery notification).
 *
 * An event travels like a notification: an entry in the same `outbox/` collection, written in the
 * transaction that causes it (`writeOperationalEvent`), published by the outbox's trigger or the
 * sweeper (./operational-events-publisher.ts `processOperationalEntry`, called by
 * ../deliveries/outbox.ts) and deleted after the
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
import type { DocumentData, DocumentReference, Firestore } from 'firebase-admin/firestore';
import { paths } from './paths';
import { shardOf } from './shards';
import { config } from './config';

export const operationalOutboxRef = (db: Firestore, outboxId: string): DocumentReference => db.doc(paths.outboxEntry(outboxId));

type OperationalEventType = 'delivery.exhausted' | 'conversation.blocked' | 'integration.unhealthy' | 'integration.recovered' | 'erasure.done';

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
  tx.set(operationalOutboxRef(db, operationalOutboxId(event.eventId)), entryOf(event, now));
}

// The publishing half (Pub/Sub) is ./operational-events-publisher.ts: the HTTP functions write
// events in their transactions but never load the Pub/Sub client (cold start).
