/**
 * Reply sequencing: an operator reply written by the console becomes a delivery with the next
 * `seq` of its conversation and a `created` notification (docs/contract.md#ordering), appended to
 * the conversation's queue by the creation transaction (./transition.ts `runCreation`,
 * `appendDelivery`); a reply that cannot be delivered is refused (./reply.ts `replyVerdict`).
 */
import { Timestamp, type DocumentSnapshot, type Firestore, type QuerySnapshot, type Transaction } from 'firebase-admin/firestore';
import { deliveryIdFor, isStorableDocumentId } from '../platform/ids';
import { paths } from '../platform/paths';
import { collectionQuery, QUERIES } from '../platform/queries';
import { retryTransient } from '../platform/failures';
import { LruMap } from '../platform/lru-map';
import { repliesTopic } from '../integrations/model';
import { integrationOf, integrationRef } from '../integrations/store';
import { publishCommitted, type CommittedNotification } from './outbox';
import { attachmentIdsOf, attachmentsVerdict, channelVerdict, markUploadUsed, operatorReplyOf, uploadRecordOf, type ChannelFacts, type UploadRecord } from './reply';
import { channelFactsOf } from './window';
import { appendDelivery, openQueue, refuseReply, runCreation } from './transition';

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

/** The upload records of `attachmentIds` (ids Firestore cannot store name no upload), by id. */
async function readUploads(tx: Transaction, db: Firestore, workspaceId: string, attachmentIds: readonly string[]): Promise<Map<string, UploadRecord | null>> {
  const ids = [...new Set(attachmentIds)].filter(isStorableDocumentId);
  const uploads = new Map<string, UploadRecord | null>();
  if (ids.length === 0) return uploads;
  const snaps = await tx.getAll(...ids.map((id) => db.doc(paths.attachmentUpload(workspaceId, id))));
  snaps.forEach((snap, i) => uploads.set(ids[i] as string, uploadRecordOf(snap.data())));
  return uploads;
}

/** How many unsequenced replies one trigger run may sequence at once. */
const UNSEQUENCED_SCAN_LIMIT = 100;

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

/** An operator reply the service has not sequenced yet (it has no `delivery` mirror). */
const isUnsequencedReply = (snap: DocumentSnapshot): boolean => operatorReplyOf(snap.id, snap.data())?.mirror === null;

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

type UnsequencedReply = { snap: DocumentSnapshot; position: ReplyPosition };

/** Operator replies not yet sequenced, after `last` and up to `mine`, in reply order. */
function unsequencedBetween(snaps: readonly DocumentSnapshot[], last: ReplyPosition | null, mine: ReplyPosition): UnsequencedReply[] {
  return snaps
    .filter(isUnsequencedReply)
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
function unsequencedFromRecent(recent: QuerySnapshot, last: ReplyPosition | null, mine: ReplyPosition): UnsequencedReply[] | null {
  const docs = recent.docs;
  const oldest = docs[docs.length - 1];
  if (docs.length >= RECENT_REPLIES && oldest !== undefined && (last === null || compareTimes(positionOf(oldest).at, last.at) >= 0)) return null;
  return unsequencedBetween(docs, last, mine);
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
 * @public the bench calls it from the built module (bench/lib/service.mjs)
 */
export async function sequenceReplies(
  db: Firestore,
  workspaceId: string,
  conversationId: string,
  messageId: string,
  createdAt?: unknown,
): Promise<ReplySequencingResult & { committed: CommittedNotification[] }> {
  const conversationKey = `${workspaceId}/${conversationId}`;
  return runCreation(db, { workspaceId, conversationId }, async (tx, queue, now) => {
    const result: ReplySequencingResult & { committed: CommittedNotification[] } = { created: [], rejected: [], outboxIds: [], committed: [] };
    const knownIntegrationId = integrationOfConversation.get(conversationKey);
    // The first wave's third document: the integration when this instance knows which it is,
    // otherwise the conversation, which names it.
    const conversationDocRef = db.doc(paths.conversation(workspaceId, conversationId));
    const integrationOrConversationRef = knownIntegrationId === undefined ? conversationDocRef : integrationRef(db, workspaceId, knownIntegrationId);
    // The conversation is read in the same wave either way: the replies answer it (`answeredUpdate`).
    const [[replySnap, queueSnap, integrationOrConversationSnap, conversationOnlySnap], recent] = await Promise.all([
      tx.getAll(db.doc(paths.message(workspaceId, conversationId, messageId)), queue.ref, integrationOrConversationRef, ...(knownIntegrationId === undefined ? [] : [conversationDocRef])),
      recentReplies(db, workspaceId, conversationId, createdAt),
    ]);
    const conversationSnap = knownIntegrationId === undefined ? integrationOrConversationSnap : conversationOnlySnap;
    if (replySnap?.exists !== true || !isUnsequencedReply(replySnap)) return result;

    const integrationId = knownIntegrationId ?? (integrationOrConversationSnap?.get('integrationId') as unknown);
    const integrationSnap =
      knownIntegrationId !== undefined
        ? integrationOrConversationSnap
        : typeof integrationId === 'string'
          ? await tx.get(integrationRef(db, workspaceId, integrationId))
          : undefined;
    if (typeof integrationId === 'string') rememberIntegration(conversationKey, integrationId);
    const integration = integrationSnap?.exists === true ? integrationOf(integrationSnap) : null;
    const topic = repliesTopic(integration);
    const repliesEnabled = topic !== null;
    // Published without reading again only to a topic not known to be broken (./outbox.ts).
    const topicStatus = integration?.replies.topicStatus ?? null;
    const directTopic = topic !== null && (topicStatus === null || topicStatus === 'ok') ? topic : null;

    // The conversation's unfinished deliveries (../rules/ordering.ts): each new delivery joins them in
    // this transaction; a queue document from before the map existed is rebuilt first.
    await openQueue(tx, db, queue, queueSnap);
    const lastReplyAt = queueSnap?.get('lastReplyAt') as unknown;
    const last: ReplyPosition | null = lastReplyAt instanceof Timestamp ? { at: lastReplyAt, id: String(queueSnap?.get('lastReplyId') ?? '') } : null;
    const mine = positionOf(replySnap);
    // A reply without a `delivery` was never sequenced (sequencing writes the mirror in the same
    // transaction). If it sorts at or before the last sequenced reply it became visible late (e.g.
    // a client-set or skewed `createdAt`): it is delivered after those already sequenced instead
    // of being dropped silently.
    const late = last !== null && compare(mine, last) <= 0;

    let unsequenced: UnsequencedReply[] = [];
    if (!late) {
      const fromRecent = recent === null ? null : unsequencedFromRecent(recent, last, mine);
      if (fromRecent !== null) {
        unsequenced = fromRecent;
      } else {
        const messages = db.collection(paths.messages(workspaceId, conversationId));
        const unsequencedQuery = last
          ? collectionQuery(messages, QUERIES.outboundRepliesSince, 'outbound', last.at)
          : collectionQuery(messages, QUERIES.outboundReplies, 'outbound');
        unsequenced = unsequencedBetween((await tx.get(unsequencedQuery.limit(UNSEQUENCED_SCAN_LIMIT))).docs, last, mine);
      }
    }
    // The reply that fired may lack a `createdAt` the query can see (defensive): sequence it last.
    if (!unsequenced.some(({ snap }) => snap.id === messageId)) unsequenced.push({ snap: replySnap, position: mine });

    // The upload records of every file these replies name, read before anything is written
    // (docs/contract.md#attachments); a text-only reply reads nothing more than before.
    const uploads = await readUploads(tx, db, workspaceId, repliesEnabled && integration?.replies.attachments != null ? unsequenced.flatMap(({ snap }) => attachmentIdsOf(snap.get('attachments'))) : []);

    // The channel's word on these replies (docs/contract.md#windows): its templates, and whether its
    // window has closed by now, from the integration and the conversation this transaction read.
    const channel: ChannelFacts = channelFactsOf(integration, conversationSnap, now);
    for (const { snap } of unsequenced) {
      const files = snap.get('attachments') as unknown;
      const textVerdict = channelVerdict({ text: snap.get('text'), template: snap.get('template'), hasAttachments: files !== undefined }, integrationId, repliesEnabled, channel);
      const filesVerdict = textVerdict.accepted ? attachmentsVerdict(files, integration?.replies.attachments ?? null, uploads, { workspaceId, conversationId, messageId: snap.id }) : null;
      const verdict = filesVerdict !== null && !filesVerdict.accepted ? filesVerdict : textVerdict;
      if (!verdict.accepted) {
        refuseReply(tx, db, { workspaceId, conversationId, messageId: snap.id }, verdict.code, now);
        result.rejected.push({ messageId: snap.id, code: verdict.code });
        continue;
      }
      const { delivery, outboxId } = appendDelivery(tx, db, queue, {
        deliveryId: deliveryIdFor(conversationId, snap.id),
        workspaceId,
        integrationId: verdict.integrationId,
        conversationId,
        messageId: snap.id,
        text: verdict.text,
        ...(verdict.template !== undefined ? { template: verdict.template } : {}),
        ...(filesVerdict?.accepted === true && filesVerdict.attachments.length > 0 ? { attachments: filesVerdict.attachments } : {}),
        now,
        reason: 'created',
      });
      if (outboxId !== null) {
        result.outboxIds.push(outboxId);
        const notification = { deliveryId: delivery.deliveryId, workspaceId, integrationId: verdict.integrationId, conversationId, messageId: snap.id };
        result.committed.push(directTopic === null ? { outboxId } : { outboxId, publish: { topic: directTopic, reason: 'created', notification } });
      }
      result.created.push(delivery.deliveryId);
      // Each file now belongs to this reply: no other reply may carry it, and the unused-upload
      // cleanup no longer finds it (docs/data-model.md#attachment-uploads).
      for (const file of filesVerdict?.accepted === true ? filesVerdict.attachments : []) {
        tx.update(db.doc(paths.attachmentUpload(workspaceId, file.attachmentId)), markUploadUsed(snap.id));
        const upload = uploads.get(file.attachmentId);
        if (upload) uploads.set(file.attachmentId, { ...upload, usedBy: snap.id });
      }
    }
    // The queue's position never moves backwards (a late reply does not rewind it).
    const newest = late && last !== null ? last : (unsequenced[unsequenced.length - 1]?.position ?? mine);
    queue.fields = { lastReplyAt: newest.at, lastReplyId: newest.id };
    const answered = answeredUpdate(conversationSnap, newest.at, now);
    if (answered !== null) tx.update(conversationDocRef, answered);
    return result;
  });
}

/**
 * The conversation's queue fields once operator replies up to `repliedAt` are sequenced
 * (docs/console.md#the-queue): it no longer needs a reply when the newest of them was written at or
 * after its last customer message. Null when nothing changes, or the conversation is gone (an
 * erasure: nothing is recreated). A customer message that arrives after the reply was written sets
 * `needsReply` again in its own transaction, and this one, reading the conversation, never
 * overwrites it (the two conflict and one is retried).
 */
function answeredUpdate(conversation: DocumentSnapshot | undefined, repliedAt: Timestamp, now: number): Record<string, unknown> | null {
  if (conversation?.exists !== true || conversation.get('needsReply') !== true) return null;
  const lastCustomerMessageAt = conversation.get('lastCustomerMessageAt') as unknown;
  if (lastCustomerMessageAt instanceof Timestamp && repliedAt.toMillis() < lastCustomerMessageAt.toMillis()) return null;
  return { needsReply: false, updatedAt: Timestamp.fromMillis(now) };
}
