import { FieldValue, Timestamp, type DocumentReference, type DocumentSnapshot, type Firestore, type Transaction } from 'firebase-admin/firestore';
import { decideWake, type Decision, type DeliveryRecord, type DeliveryStatus } from '../domain/delivery';
import { parsePending, pendingKey, releaseFrom, storedPending, type PendingDeliveries } from '../domain/delivery-queue';
import { collectionQuery, QUERIES } from './queries';

/**
 * Firestore access for deliveries: plain functions that take a Transaction. Every delivery
 * operation is one transaction: reads first (the delivery; then its conversation's queue document
 * and, for a claim, the conversation; then the delivery a terminal transition releases), then the
 * pure decision, then writes (delivery, reply mirror, outbox, queue, successor). No queries.
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
/** Per-conversation sequencing and ordering state: `{ nextSeq, lastReplyAt, lastReplyId, pending, updatedAt }`. */
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

/**
 * The ordering state of one conversation (domain/delivery-queue.ts): its unfinished deliveries by
 * seq, read from the queue document by id, never by a query.
 */
export interface DeliveryQueueState {
  ref: DocumentReference;
  pending: PendingDeliveries;
  /**
   * The stored document had no `pending` map (written before the map existed, or missing): it was
   * rebuilt from the deliveries themselves and must be written back in this transaction.
   */
  rebuilt: boolean;
}

/**
 * Reads a conversation's queue. A queue document without `pending` is rebuilt once, inside the
 * transaction, from the conversation's unfinished deliveries (the only query left on the
 * delivery path, run at most once per conversation); `absentIsEmpty` skips that for a
 * conversation whose first reply is being sequenced (no document yet, so no deliveries either).
 */
export async function readDeliveryQueue(
  tx: Transaction,
  db: Firestore,
  workspaceId: string,
  conversationId: string,
  snapshot?: DocumentSnapshot,
  absentIsEmpty = false,
): Promise<DeliveryQueueState> {
  const ref = deliveryQueueRef(db, workspaceId, conversationId);
  const snap = snapshot ?? (await tx.get(ref));
  const stored = parsePending(snap.get('pending'));
  if (stored) return { ref, pending: stored, rebuilt: false };
  if (!snap.exists && absentIsEmpty) return { ref, pending: new Map(), rebuilt: false };
  const query = collectionQuery(deliveriesCollection(db, workspaceId), QUERIES.unfinishedOfConversation, conversationId, UNFINISHED_STATUSES, Number.MAX_SAFE_INTEGER);
  const pending = new Map<number, string>();
  for (const doc of (await tx.get(query)).docs) {
    const d = doc.data() as DeliveryRecord;
    pending.set(d.seq, d.deliveryId);
  }
  return { ref, pending, rebuilt: true };
}

/** What a delivery's transaction read about its conversation before deciding. */
export interface OrderingReads {
  queue: DeliveryQueueState | null;
  /** The delivery released by a terminal transition (read only when it is the new head). */
  successor: DeliveryRecord | null;
}

export const NO_ORDERING_READS: OrderingReads = { queue: null, successor: null };

/**
 * The reads a decision needs before any write: when `d` becomes terminal (`releasesNext`), its
 * queue (unless already read) and the delivery it releases.
 */
export async function readOrdering(tx: Transaction, db: Firestore, d: DeliveryRecord, releasesNext: boolean, queue: DeliveryQueueState | null = null): Promise<OrderingReads> {
  if (!releasesNext) return { queue, successor: null };
  const state = queue ?? (await readDeliveryQueue(tx, db, d.workspaceId, d.conversationId));
  const released = releaseFrom(state.pending, d.seq);
  const successor = released ? await readDelivery(tx, db, d.workspaceId, released.deliveryId) : null;
  return { queue: state, successor };
}

/**
 * Writes the queue after a transition: drops `terminalSeq` from `pending` (when a delivery became
 * terminal) and writes a rebuilt map back whole.
 */
function writeQueue(tx: Transaction, queue: DeliveryQueueState, terminalSeq: number | null, now: number): void {
  const updatedAt = Timestamp.fromMillis(now);
  if (queue.rebuilt) {
    const pending = new Map(queue.pending);
    if (terminalSeq !== null) pending.delete(terminalSeq);
    tx.set(queue.ref, { pending: storedPending(pending), updatedAt }, { mergeFields: ['pending', 'updatedAt'] });
  } else if (terminalSeq !== null) {
    tx.set(queue.ref, { pending: { [pendingKey(terminalSeq)]: FieldValue.delete() }, updatedAt }, { merge: true });
  }
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
 * Applies a decision taken on `before` inside the transaction. `ordering` must come from
 * `readOrdering` (called before any write) when the decision releases the next delivery.
 */
export function applyDecision<R>(
  tx: Transaction,
  db: Firestore,
  before: DeliveryRecord,
  decision: Decision<R>,
  ordering: OrderingReads,
  now: number,
  reason: NotificationReason,
): void {
  if (decision.effects.releasesNext && ordering.queue === null) {
    // A programming error: the queue must be read before the first write of the transaction.
    throw new Error('a terminal transition needs readOrdering() before applyDecision()');
  }
  if (decision.next) {
    writeDelivery(tx, db, before, decision.next, decision.effects.notifyAt, reason, now);
  }
  if (ordering.queue) writeQueue(tx, ordering.queue, decision.effects.releasesNext ? before.seq : null, now);
  if (decision.effects.releasesNext && ordering.successor) {
    const wake = decideWake(ordering.successor, now);
    if (wake?.next) writeDelivery(tx, db, ordering.successor, wake.next, wake.effects.notifyAt, 'wake', now);
  }
}
