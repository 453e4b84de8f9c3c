/**
 * Reply sequencing: an operator reply written by the console becomes a delivery with the next
 * `seq` of its conversation and a `created` notification (decisions 5, "Ordering").
 */
import { Timestamp, type DocumentSnapshot, type Firestore, type Transaction } from 'firebase-admin/firestore';
import { deliveryIdFor } from '../platform/ids';
import { paths } from '../platform/paths';
import { collectionQuery, QUERIES } from '../platform/queries';
import { retryTransient } from '../platform/caught';
import { codePointLength } from '../platform/schema';
import { repliesTopic } from '../integrations/model';
import { integrationOf, integrationRef } from '../integrations/store';
import { pendingKey, storedPending } from './ordering';
import { publishCommitted } from './outbox';
import { newDelivery } from './record';
import { deliveryQueueRef, readDeliveryQueue, writeDelivery } from './store';

/**
 * The reply trigger's whole work: sequence the reply (and any earlier unsequenced one), then
 * publish the notifications just committed, without waiting for the outbox trigger. A transaction
 * dropped under contention is run again here (it wrote nothing), not left to the trigger's redelivery.
 */
export async function sequenceAndPublish(db: Firestore, workspaceId: string, conversationId: string, messageId: string): Promise<ReplySequencingResult> {
  const result = await retryTransient(() => sequenceReplies(db, workspaceId, conversationId, messageId));
  await publishCommitted(db, result.outboxIds);
  return result;
}

/** Spec 1 and 8: replies are text only, up to 10000 characters. */
const MAX_REPLY_CHARACTERS = 10_000;
/** How many undelivered replies one trigger run may sequence at once. */
const PENDING_SCAN_LIMIT = 100;

interface ReplyPosition {
  at: Timestamp;
  id: string;
}

export function isOperatorReply(data: Record<string, unknown> | undefined): boolean {
  const author = data?.author as { type?: unknown } | undefined;
  return data?.direction === 'outbound' && author?.type === 'operator';
}

/** Replies are ordered by their server timestamp, ties broken by document id. */
function positionOf(snap: DocumentSnapshot): ReplyPosition {
  const createdAt = snap.get('createdAt') as unknown;
  const at = createdAt instanceof Timestamp ? createdAt : (snap.createTime ?? Timestamp.fromMillis(0));
  return { at, id: snap.id };
}

function compare(a: ReplyPosition, b: ReplyPosition): number {
  const byTime = a.at.toMillis() - b.at.toMillis() || a.at.nanoseconds - b.at.nanoseconds;
  return byTime !== 0 ? byTime : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** The mirror of a reply refused without a delivery. */
export function failureMirror(code: string, now: number): Record<string, unknown> {
  return { status: 'failed', error: { outcome: 'failed', code }, updatedAt: Timestamp.fromMillis(now) };
}

/** Why a reply cannot become a delivery (`replies_disabled`, `invalid_reply`), or null when it can. */
export function replyRejection(text: unknown, repliesEnabled: boolean): 'replies_disabled' | 'invalid_reply' | null {
  if (!repliesEnabled) return 'replies_disabled';
  if (typeof text !== 'string' || text.length === 0 || codePointLength(text) > MAX_REPLY_CHARACTERS) return 'invalid_reply';
  return null;
}

/** Whether the integration of a conversation (read in the transaction) takes replies. */
export async function repliesEnabledFor(tx: Transaction, db: Firestore, workspaceId: string, integrationId: unknown): Promise<boolean> {
  const snap = typeof integrationId === 'string' ? await tx.get(integrationRef(db, workspaceId, integrationId)) : null;
  return repliesTopic(snap ? integrationOf(snap) : null) !== null;
}

export type ReplySequencingResult = {
  created: string[];
  rejected: Array<{ messageId: string; code: string }>;
  /** The `created` notifications' outbox entries, for the trigger to publish right after the commit. */
  outboxIds: string[];
};

/**
 * Creates the deliveries for a newly written operator reply, exactly once even if the trigger
 * fires twice or out of order: in one transaction it sequences every not-yet-sequenced reply of
 * the conversation up to this one, in reply order (createdAt, then id), so a late trigger for an
 * earlier reply can never put it behind a later one. Each delivery gets the next `seq` of its
 * conversation and a `created` notification in the outbox; the reply gets its `delivery` mirror.
 */
export async function sequenceReplies(db: Firestore, workspaceId: string, conversationId: string, messageId: string): Promise<ReplySequencingResult> {
  return db.runTransaction(async (tx) => {
    const now = Date.now();
    const result: ReplySequencingResult = { created: [], rejected: [], outboxIds: [] };
    const conversationRef = db.doc(paths.conversation(workspaceId, conversationId));
    const queueRef = deliveryQueueRef(db, workspaceId, conversationId);
    const [replySnap, queueSnap, conversationSnap] = await tx.getAll(db.doc(paths.message(workspaceId, conversationId, messageId)), queueRef, conversationRef);
    if (!replySnap?.exists || !isOperatorReply(replySnap.data()) || replySnap.get('delivery') !== undefined) return result;

    const queue = queueSnap?.data() ?? {};
    // The conversation's unfinished deliveries (domain/delivery-queue.ts): each new delivery is
    // added in this transaction; a queue document from before the map existed is rebuilt first.
    const queueState = await readDeliveryQueue(tx, db, workspaceId, conversationId, queueSnap, true);
    const pendingEntries = queueState.rebuilt ? storedPending(queueState.pending) : {};
    const last: ReplyPosition | null = queue.lastReplyAt instanceof Timestamp ? { at: queue.lastReplyAt, id: String(queue.lastReplyId ?? '') } : null;
    const mine = positionOf(replySnap);
    // A reply without a `delivery` was never sequenced (sequencing writes the mirror in the same
    // transaction). If it sorts at or before the last sequenced reply it became visible late (e.g.
    // a client-set or skewed `createdAt`): it is delivered after those already sequenced instead
    // of being dropped silently.
    const late = last !== null && compare(mine, last) <= 0;

    const integrationId = conversationSnap?.get('integrationId') as unknown;
    const repliesEnabled = await repliesEnabledFor(tx, db, workspaceId, integrationId);

    const messages = db.collection(paths.messages(workspaceId, conversationId));
    const pendingQuery = last
      ? collectionQuery(messages, QUERIES.outboundRepliesSince, 'outbound', last.at)
      : collectionQuery(messages, QUERIES.outboundReplies, 'outbound');
    const pending: Array<{ snap: DocumentSnapshot; position: ReplyPosition }> = late
      ? []
      : (await tx.get(pendingQuery.limit(PENDING_SCAN_LIMIT))).docs
          .filter((s) => isOperatorReply(s.data()) && s.get('delivery') === undefined)
          .map((snap) => ({ snap, position: positionOf(snap) }))
          .filter(({ position }) => (last === null || compare(position, last) > 0) && compare(position, mine) <= 0)
          .sort((a, b) => compare(a.position, b.position));
    // The reply that fired may lack a `createdAt` the query can see (defensive): sequence it last.
    if (!pending.some(({ snap }) => snap.id === messageId)) pending.push({ snap: replySnap, position: mine });

    let nextSeq = typeof queue.nextSeq === 'number' ? queue.nextSeq : 1;
    for (const { snap } of pending) {
      const text = snap.get('text') as unknown;
      const code = replyRejection(text, repliesEnabled);
      if (code !== null || typeof integrationId !== 'string' || typeof text !== 'string') {
        tx.set(snap.ref, { delivery: failureMirror(code ?? 'replies_disabled', now) }, { merge: true });
        result.rejected.push({ messageId: snap.id, code: code ?? 'replies_disabled' });
        continue;
      }
      const delivery = newDelivery({
        deliveryId: deliveryIdFor(conversationId, snap.id),
        workspaceId,
        integrationId,
        conversationId,
        messageId: snap.id,
        seq: nextSeq++,
        text,
        now,
      });
      // The first unfinished delivery of the conversation is its head: claimable, in the catch-up list.
      const head = queueState.pending.size === 0 && Object.keys(pendingEntries).length === 0;
      const outboxId = writeDelivery(tx, db, null, head ? { ...delivery, head } : delivery, { at: now, reason: 'created', inline: true }, now);
      if (outboxId !== null) result.outboxIds.push(outboxId);
      pendingEntries[pendingKey(delivery.seq)] = delivery.deliveryId;
      result.created.push(delivery.deliveryId);
    }
    // The queue's position never moves backwards (a late reply does not rewind it).
    const newest = late && last !== null ? last : (pending[pending.length - 1]?.position ?? mine);
    // `merge` adds the new `pending` entries and keeps the unfinished ones already there.
    tx.set(queueRef, { nextSeq, lastReplyAt: newest.at, lastReplyId: newest.id, pending: pendingEntries, updatedAt: Timestamp.fromMillis(now) }, { merge: true });
    return result;
  });
}
