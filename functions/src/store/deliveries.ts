import { Timestamp, type DocumentReference, type Firestore, type Transaction } from 'firebase-admin/firestore';
import { decideWake, type Decision, type DeliveryRecord, type DeliveryStatus } from '../domain/delivery';
import { collectionQuery, QUERIES } from './queries';

/**
 * Firestore access for deliveries: plain functions that take a Transaction. Every delivery
 * operation is one transaction: reads first (delivery, then predecessor/successor/conversation
 * in parallel), then the pure decision, then writes (delivery, reply mirror, outbox, successor).
 */

export const UNFINISHED_STATUSES: DeliveryStatus[] = ['queued', 'leased', 'sending'];

const workspace = (db: Firestore, workspaceId: string) => db.collection('workspaces').doc(workspaceId);

export const deliveriesCollection = (db: Firestore, workspaceId: string) => workspace(db, workspaceId).collection('deliveries');
export const deliveryRef = (db: Firestore, workspaceId: string, deliveryId: string): DocumentReference =>
  deliveriesCollection(db, workspaceId).doc(deliveryId);
export const replyRef = (db: Firestore, d: Pick<DeliveryRecord, 'workspaceId' | 'conversationId' | 'messageId'>): DocumentReference =>
  workspace(db, d.workspaceId).collection('conversations').doc(d.conversationId).collection('messages').doc(d.messageId);
export const conversationDocRef = (db: Firestore, workspaceId: string, conversationId: string): DocumentReference =>
  workspace(db, workspaceId).collection('conversations').doc(conversationId);
/** Per-conversation sequencing state: `{ nextSeq, lastReplyAt, lastReplyId }`. */
export const deliveryQueueRef = (db: Firestore, workspaceId: string, conversationId: string): DocumentReference =>
  workspace(db, workspaceId).collection('deliveryQueues').doc(conversationId);

/** Notifications waiting to be published (transactional outbox). Top-level so the sweeper can scan it. */
export const OUTBOX = 'outbox';
export const outboxRef = (db: Firestore, outboxId: string): DocumentReference => db.collection(OUTBOX).doc(outboxId);

export type NotificationReason = 'created' | 'wake' | 'retry' | 'lease_expired';

export interface OutboxEntry {
  deliveryId: string;
  workspaceId: string;
  integrationId: string;
  conversationId: string;
  messageId: string;
  reason: NotificationReason;
  /** Epoch ms: not published before this time. */
  dueAt: number;
  attempts: number;
  createdAt: number;
}

/** The deterministic outbox id of one notification: a retried transaction writes the same entry. */
export const outboxIdFor = (deliveryId: string, dueAt: number): string => `${deliveryId}@${dueAt}`;

export async function readDelivery(tx: Transaction, db: Firestore, workspaceId: string, deliveryId: string): Promise<DeliveryRecord | null> {
  const snap = await tx.get(deliveryRef(db, workspaceId, deliveryId));
  return snap.exists ? (snap.data() as DeliveryRecord) : null;
}

/** True when an earlier delivery of the same conversation is not terminal (ordering, decisions 5). */
export async function hasUnfinishedPredecessor(tx: Transaction, db: Firestore, d: DeliveryRecord): Promise<boolean> {
  const query = collectionQuery(deliveriesCollection(db, d.workspaceId), QUERIES.unfinishedBefore, d.conversationId, UNFINISHED_STATUSES, d.seq);
  const snap = await tx.get(query.limit(1));
  return !snap.empty;
}

/** The oldest unfinished delivery after `d` in its conversation: the one a terminal `d` releases. */
export async function readSuccessor(tx: Transaction, db: Firestore, d: DeliveryRecord): Promise<DeliveryRecord | null> {
  const query = collectionQuery(deliveriesCollection(db, d.workspaceId), QUERIES.unfinishedAfter, d.conversationId, UNFINISHED_STATUSES, d.seq);
  const snap = await tx.get(query.limit(1));
  const first = snap.docs[0];
  return first ? (first.data() as DeliveryRecord) : null;
}

export interface ConversationFacts {
  externalConversationId: string;
  lastCustomerExternalId: string | null;
  lastSenderExternalId: string;
}

export async function readConversation(tx: Transaction, db: Firestore, d: DeliveryRecord): Promise<ConversationFacts> {
  const data = (await tx.get(conversationDocRef(db, d.workspaceId, d.conversationId))).data() ?? {};
  const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
  return {
    externalConversationId: str(data.externalConversationId) ?? '',
    lastCustomerExternalId: str(data.lastCustomerExternalId),
    lastSenderExternalId: str(data.lastSenderExternalId) ?? '',
  };
}

/** What the console sees on the operator's reply (decisions 3). */
export function deliveryMirror(d: DeliveryRecord, now: number): Record<string, unknown> {
  const mirror: Record<string, unknown> = {
    deliveryId: d.deliveryId,
    status: d.status,
    updatedAt: Timestamp.fromMillis(now),
  };
  if (d.providerMessageIds.length > 0) mirror.providerMessageIds = d.providerMessageIds;
  if (d.error) mirror.error = d.error;
  return mirror;
}

function mirrorChanged(before: DeliveryRecord | null, next: DeliveryRecord): boolean {
  return (
    before === null ||
    before.status !== next.status ||
    JSON.stringify(before.error) !== JSON.stringify(next.error) ||
    JSON.stringify(before.providerMessageIds) !== JSON.stringify(next.providerMessageIds)
  );
}

/** Writes one record and what follows from it: the reply mirror and, when asked, a notification. */
export function writeDelivery(tx: Transaction, db: Firestore, before: DeliveryRecord | null, next: DeliveryRecord, notifyAt: number | null, reason: NotificationReason, now: number): void {
  tx.set(deliveryRef(db, next.workspaceId, next.deliveryId), next);
  // `mergeFields` replaces the whole `delivery` map (a plain merge would keep a stale `error` or
  // `providerMessageIds` from the previous mirror, e.g. `error` after unknown -> sent) and leaves
  // the console's fields of the reply untouched.
  if (mirrorChanged(before, next)) tx.set(replyRef(db, next), { delivery: deliveryMirror(next, now) }, { mergeFields: ['delivery'] });
  if (notifyAt !== null) enqueueNotification(tx, db, next, notifyAt, reason, now);
}

export function enqueueNotification(tx: Transaction, db: Firestore, d: DeliveryRecord, dueAt: number, reason: NotificationReason, now: number): void {
  const entry: OutboxEntry = {
    deliveryId: d.deliveryId,
    workspaceId: d.workspaceId,
    integrationId: d.integrationId,
    conversationId: d.conversationId,
    messageId: d.messageId,
    reason,
    dueAt,
    attempts: 0,
    createdAt: now,
  };
  tx.set(outboxRef(db, outboxIdFor(d.deliveryId, dueAt)), entry);
}

/**
 * Applies a decision taken on `before` inside the transaction. `successor` must have been read
 * (with `readSuccessor`) before any write when the decision releases the next delivery.
 */
export function applyDecision<R>(
  tx: Transaction,
  db: Firestore,
  before: DeliveryRecord,
  decision: Decision<R>,
  successor: DeliveryRecord | null,
  now: number,
  reason: NotificationReason,
): void {
  if (decision.next) {
    writeDelivery(tx, db, before, decision.next, decision.effects.notifyAt, reason, now);
  }
  if (decision.effects.releasesNext && successor) {
    const wake = decideWake(successor, now);
    if (wake?.next) writeDelivery(tx, db, successor, wake.next, wake.effects.notifyAt, 'wake', now);
  }
}
