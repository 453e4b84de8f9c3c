/**
 * Reply sequencing: an operator reply written by the console becomes a delivery with the next
 * `seq` of its conversation and a `created` notification (decisions 5, "Ordering").
 */
import { Timestamp, type DocumentSnapshot, type Firestore, type QuerySnapshot, type Transaction } from 'firebase-admin/firestore';
import { deliveryIdFor } from '../platform/ids';
import { paths } from '../platform/paths';
import { collectionQuery, QUERIES } from '../platform/queries';
import { retryTransient } from '../platform/caught';
import { codePointLength, REPLY_MAX_CODE_POINTS } from '../contract';
import { LruMap } from '../platform/lru-map';
import { repliesTopic } from '../integrations/model';
import { integrationOf, integrationRef } from '../integrations/store';
import { pendingKey, storedPending } from './ordering';
import { publishCommitted, type CommittedNotification } from './outbox';
import { newDelivery } from './record';
import { deliveryQueueRef, readDeliveryQueue, writeDelivery } from './store';

/**
 * The reply trigger's whole work: sequence the reply (and any earlier unsequenced one), then
 * publish the notifications just committed, without waiting for the outbox trigger and without
 * reading again what the transaction read. A transaction dropped under contention is run again
 * here (it wrote nothing), not left to the trigger's redelivery. `createdAt` is the reply's, from
 * the trigger's event (see `sequenceReplies`).
 */
export async function sequenceAndPublish(db: Firestore, workspaceId: string, conversationId: string, messageId: string, createdAt?: unknown): Promise<ReplySequencingResult> {
  const { committed, ...result } = await retryTransient(() => sequenceReplies(db, workspaceId, conversationId, messageId, createdAt));
  await publishCommitted(db, committed);
  return result;
}

/** How many undelivered replies one trigger run may sequence at once. */
const PENDING_SCAN_LIMIT = 100;

interface ReplyPosition {
  at: Timestamp;
  id: string;
}

/** How many of the most recent replies the first read wave fetches (usually: this one and the one before). */
const RECENT_REPLIES = 5;

/**
 * conversation -> integration, remembered per instance: a conversation's integration never changes
 * (the conversation id is derived from it), so a warm instance reads the integration document in
 * the transaction's first wave instead of after the conversation's.
 */
const integrationOfConversation = new LruMap<string, string>(10_000);

function rememberIntegration(conversationKey: string, integrationId: string): void {
  if (!integrationOfConversation.has(conversationKey)) integrationOfConversation.set(conversationKey, integrationId);
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

const compareTimes = (a: Timestamp, b: Timestamp): number => a.seconds - b.seconds || a.nanoseconds - b.nanoseconds;

function compare(a: ReplyPosition, b: ReplyPosition): number {
  const byTime = compareTimes(a.at, b.at);
  return byTime !== 0 ? byTime : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

type PendingReply = { snap: DocumentSnapshot; position: ReplyPosition };

/** Operator replies not yet sequenced, after `last` and up to `mine`, in reply order. */
function unsequencedBetween(snaps: readonly DocumentSnapshot[], last: ReplyPosition | null, mine: ReplyPosition): PendingReply[] {
  return snaps
    .filter((s) => isOperatorReply(s.data()) && s.get('delivery') === undefined)
    .map((snap) => ({ snap, position: positionOf(snap) }))
    .filter(({ position }) => (last === null || compare(position, last) > 0) && compare(position, mine) <= 0)
    .sort((a, b) => compare(a.position, b.position));
}

/**
 * The most recent operator replies at or before the one being sequenced (its `createdAt` from the
 * trigger's event), newest first; null without a usable `createdAt`. Read beside the transaction,
 * not in it: the transaction's reads are serialised until its first one returns, and this read
 * needs no lock. What it shows is sound against the queue document, which the transaction does
 * read: every reply after the queue's `lastReplyAt` is unsequenced (sequencing advances it in the
 * same transaction), replies are immutable, and a reply committed after this one carries a later
 * server timestamp, so none can appear inside the range once this reply's trigger runs.
 */
async function recentReplies(db: Firestore, workspaceId: string, conversationId: string, createdAt: unknown): Promise<QuerySnapshot | null> {
  const at = asTimestamp(createdAt);
  if (at === null) return null;
  const messages = db.collection(paths.messages(workspaceId, conversationId));
  return collectionQuery(messages, QUERIES.recentOutboundReplies, 'outbound', at).limit(RECENT_REPLIES).get();
}

/** The trigger's `createdAt` (a Timestamp, possibly of another copy of the class) as a Timestamp. */
function asTimestamp(value: unknown): Timestamp | null {
  if (value instanceof Timestamp) return value;
  const v = value as { seconds?: unknown; nanoseconds?: unknown } | null | undefined;
  return typeof v?.seconds === 'number' && typeof v.nanoseconds === 'number' ? new Timestamp(v.seconds, v.nanoseconds) : null;
}

/**
 * The unsequenced replies up to `mine` as the recent replies show them, or null when they do not
 * cover everything since `last`: a full page whose oldest reply is not strictly older than `last`
 * (replies sharing the edge's time may continue beyond the page), or a full page and nothing
 * sequenced yet. The exact query then runs in the transaction.
 */
function unsequencedFromRecent(recent: QuerySnapshot, last: ReplyPosition | null, mine: ReplyPosition): PendingReply[] | null {
  const docs = recent.docs;
  const oldest = docs[docs.length - 1];
  if (docs.length >= RECENT_REPLIES && oldest !== undefined && (last === null || compareTimes(positionOf(oldest).at, last.at) >= 0)) return null;
  return unsequencedBetween(docs, last, mine);
}

/** The mirror of a reply refused without a delivery. */
export function failureMirror(code: string, now: number): Record<string, unknown> {
  return { status: 'failed', error: { outcome: 'failed', code }, updatedAt: Timestamp.fromMillis(now) };
}

/** Why a reply cannot become a delivery (`replies_disabled`, `invalid_reply`), or null when it can. */
export function replyRejection(text: unknown, repliesEnabled: boolean): 'replies_disabled' | 'invalid_reply' | null {
  if (!repliesEnabled) return 'replies_disabled';
  if (typeof text !== 'string' || text.length === 0 || codePointLength(text) > REPLY_MAX_CODE_POINTS) return 'invalid_reply';
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
  /** The `created` notifications' outbox entries, published right after the commit. */
  outboxIds: string[];
};

/**
 * Creates the deliveries for a newly written operator reply, exactly once even if the trigger
 * fires twice or out of order: in one transaction it sequences every not-yet-sequenced reply of
 * the conversation up to this one, in reply order (createdAt, then id), so a late trigger for an
 * earlier reply can never put it behind a later one. Each delivery gets the next `seq` of its
 * conversation and a `created` notification in the outbox; the reply gets its `delivery` mirror.
 *
 * One read wave in the usual case (the reply-to-connector latency, docs/capacity.md): the reply,
 * the queue document and the integration (its id remembered per conversation) in one `getAll`,
 * with the recent replies read beside it. A cold instance reads the conversation first, and a
 * burst of unsequenced replies larger than the recent page takes the exact query in the transaction.
 */
export async function sequenceReplies(
  db: Firestore,
  workspaceId: string,
  conversationId: string,
  messageId: string,
  createdAt?: unknown,
): Promise<ReplySequencingResult & { committed: CommittedNotification[] }> {
  const conversationKey = `${workspaceId}/${conversationId}`;
  return db.runTransaction(async (tx) => {
    const now = Date.now();
    const result: ReplySequencingResult & { committed: CommittedNotification[] } = { created: [], rejected: [], outboxIds: [], committed: [] };
    const knownIntegrationId = integrationOfConversation.get(conversationKey);
    const conversationRef = db.doc(paths.conversation(workspaceId, conversationId));
    const queueRef = deliveryQueueRef(db, workspaceId, conversationId);
    const thirdRef = knownIntegrationId === undefined ? conversationRef : integrationRef(db, workspaceId, knownIntegrationId);
    const [[replySnap, queueSnap, thirdSnap], recent] = await Promise.all([
      tx.getAll(db.doc(paths.message(workspaceId, conversationId, messageId)), queueRef, thirdRef),
      recentReplies(db, workspaceId, conversationId, createdAt),
    ]);
    if (!replySnap?.exists || !isOperatorReply(replySnap.data()) || replySnap.get('delivery') !== undefined) return result;

    const integrationId = knownIntegrationId ?? (thirdSnap?.get('integrationId') as unknown);
    const integrationSnap =
      knownIntegrationId !== undefined ? thirdSnap : typeof integrationId === 'string' ? await tx.get(integrationRef(db, workspaceId, integrationId)) : undefined;
    if (typeof integrationId === 'string') rememberIntegration(conversationKey, integrationId);
    const integration = integrationSnap?.exists === true ? integrationOf(integrationSnap) : null;
    const topic = repliesTopic(integration);
    const repliesEnabled = topic !== null;
    // Published without reading again only to a topic not known to be broken (./outbox.ts).
    const topicStatus = integration?.replies.topicStatus ?? null;
    const directTopic = topic !== null && (topicStatus === null || topicStatus === 'ok') ? topic : null;

    const queue = queueSnap?.data() ?? {};
    // The conversation's unfinished deliveries (./ordering.ts): each new delivery is added in this
    // transaction; a queue document from before the map existed is rebuilt first.
    const queueState = await readDeliveryQueue(tx, db, workspaceId, conversationId, queueSnap, true);
    const pendingEntries = queueState.rebuilt ? storedPending(queueState.pending) : {};
    const last: ReplyPosition | null = queue.lastReplyAt instanceof Timestamp ? { at: queue.lastReplyAt, id: String(queue.lastReplyId ?? '') } : null;
    const mine = positionOf(replySnap);
    // A reply without a `delivery` was never sequenced (sequencing writes the mirror in the same
    // transaction). If it sorts at or before the last sequenced reply it became visible late (e.g.
    // a client-set or skewed `createdAt`): it is delivered after those already sequenced instead
    // of being dropped silently.
    const late = last !== null && compare(mine, last) <= 0;

    let pending: PendingReply[] = [];
    if (!late) {
      const fromRecent = recent === null ? null : unsequencedFromRecent(recent, last, mine);
      if (fromRecent !== null) {
        pending = fromRecent;
      } else {
        const messages = db.collection(paths.messages(workspaceId, conversationId));
        const pendingQuery = last
          ? collectionQuery(messages, QUERIES.outboundRepliesSince, 'outbound', last.at)
          : collectionQuery(messages, QUERIES.outboundReplies, 'outbound');
        pending = unsequencedBetween((await tx.get(pendingQuery.limit(PENDING_SCAN_LIMIT))).docs, last, mine);
      }
    }
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
      if (outboxId !== null) {
        result.outboxIds.push(outboxId);
        const notification = { deliveryId: delivery.deliveryId, workspaceId, integrationId, conversationId, messageId: snap.id };
        result.committed.push(directTopic === null ? { outboxId } : { outboxId, publish: { topic: directTopic, reason: 'created', notification } });
      }
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
