/**
 * The reads of the delivery transactions (./transition.ts): "read the facts", the store's half of
 * the read -> decide -> write step whose other half is ./store.ts `applyPlan`. A transition reads,
 * in order, only what its decision and its plan need:
 *
 *   1. `readForTransition`: the delivery, as the caller may see it, in one wave with what the
 *      transition asks for when the id names its conversation (the queue, the conversation), and
 *      the facts its rule decides on (for a claim: whether an earlier delivery of the conversation
 *      is unfinished, the recipient and the conversation's metadata);
 *   2. `readReleased`: when the decision ends the delivery, the one its end releases (from its
 *      release facts in the queue document when it has them, otherwise read);
 *   3. `readReplyHistory`: when the plan changes an edit's or unsend's entry, the reply's history.
 *
 * Plain functions that take a Transaction; what they compute from what they read is the rules'
 * (../rules/record.ts, ../rules/ordering.ts).
 */
import type { DocumentSnapshot, Firestore, Transaction } from 'firebase-admin/firestore';
import { conversationOfDeliveryId } from '../platform/ids';
import { paths } from '../platform/paths';
import { collectionQuery, QUERIES } from '../platform/queries';
import { hasUnfinishedBefore, parseReleaseFacts, parseUnfinished, RELEASE_FIELD, UNFINISHED_FIELD, type ReleaseFacts } from '../rules/ordering';
import { storedMetadata, type Metadata } from '../rules/metadata';
import { releasedBy } from '../rules/plan';
import { isTerminal, newDelivery, recipientFor, UNFINISHED_STATUSES, visibleDelivery, type Decision, type DeliveryRecord, type Recipient } from '../rules/record';
import type { TransitionFacts } from '../rules/state-machine';
import { ReplyHistory } from './lifecycle-history';
import { conversationRef, deliveryQueueRef, deliveryRef, type DeliveryQueueState, type ReplyAddress } from './store';

/** What a transition asks to read with the delivery (./transition.ts `Transition`). */
export interface TransitionReadRequest {
  workspaceId: string;
  deliveryId: string;
  /** A connector's call: a delivery it may not see is 404 (thrown); otherwise a missing one is null. */
  caller?: { workspaceId: string; integrationId: string } | undefined;
  /** The queue and the conversation, for the facts of a claim. */
  withConversation?: boolean | undefined;
  /** The queue in the first wave: the decision will likely end the delivery. */
  withQueue?: boolean | undefined;
}

/** One transition's reads so far: the delivery, the rule's facts, what the first wave read of its conversation, the queue once read. */
export interface TransitionRead {
  readonly request: TransitionReadRequest;
  readonly before: DeliveryRecord;
  /** The facts the rule decides on. */
  facts: TransitionFacts;
  /** The first wave's snapshots of the record's conversation (absent when the id names another, or none). */
  readonly snapshots: { queue?: DocumentSnapshot; conversation?: DocumentSnapshot };
  /** The conversation's queue, once a step read it; the writer updates it. */
  queue: DeliveryQueueState | null;
}

const NOBODY: Recipient = { externalConversationId: '', externalCustomerId: '' };

/**
 * The first wave: the delivery (null when there is none, or a 404 thrown for a caller who may not
 * see it) and, when its id names the conversation (../platform/ids.ts `conversationOfDeliveryId`),
 * what the transition asks for, in one `getAll`; then the facts its rule decides on at `now`.
 */
export async function readForTransition(tx: Transaction, db: Firestore, request: TransitionReadRequest, now: number): Promise<TransitionRead | null> {
  const first = await firstWave(tx, db, request);
  const before = request.caller ? visibleDelivery(first.delivery, request.caller) : first.delivery;
  if (before === null) return null;
  // What the first wave read through the id's hint counts only for the conversation the record names.
  const hinted = first.conversationId === before.conversationId;
  const snapshots = hinted ? { ...(first.queue ? { queue: first.queue } : {}), ...(first.conversation ? { conversation: first.conversation } : {}) } : {};
  const read: TransitionRead = { request, before, snapshots, queue: null, facts: { now, predecessorUnfinished: false, recipient: NOBODY } };
  // The queue's and the recipient's facts only when the transition asked for the conversation (a claim) and the delivery is not over.
  if (request.withConversation === true && !isTerminal(before.status)) {
    const [queue, conversation] = await Promise.all([queueOf(tx, db, read), readConversation(tx, db, before, snapshots.conversation)]);
    read.facts = { now, predecessorUnfinished: hasUnfinishedBefore(queue.unfinished, before.seq), recipient: recipientFor(conversation), metadata: conversation.metadata };
  }
  return read;
}

/** The queue of the transition's conversation: read once (from the first wave's snapshot when it has one). */
async function queueOf(tx: Transaction, db: Firestore, read: TransitionRead): Promise<DeliveryQueueState> {
  read.queue ??= await readDeliveryQueue(tx, db, read.before.workspaceId, read.before.conversationId, read.snapshots.queue);
  return read.queue;
}

/**
 * The delivery the end of this one releases (../rules/plan.ts `releasedBy`), or null: from its
 * release facts (`fromFacts`, not read) when `trustReleaseFacts` and the queue has them, or read (a
 * delivery without facts, or after a commit that found its record gone).
 */
export async function readReleased<R>(
  tx: Transaction,
  db: Firestore,
  read: TransitionRead,
  decision: Decision<R> | null,
  trustReleaseFacts: boolean,
): Promise<{ record: DeliveryRecord; fromFacts: boolean } | null> {
  const { before } = read;
  if (decision?.effects.releasesNext !== true) return null;
  const queue = await queueOf(tx, db, read);
  const next = releasedBy(before, decision, queue.unfinished);
  if (next === null) return null;
  const known = trustReleaseFacts ? queue.release.get(next.seq) : undefined;
  if (known !== undefined) return { record: waitingDelivery(before, next.seq, next.deliveryId, known), fromFacts: true };
  const record = await readDelivery(tx, db, before.workspaceId, next.deliveryId);
  return record ? { record, fromFacts: false } : null;
}

/** The history of the reply an edit or unsend delivery belongs to, read in the transaction. */
export async function readReplyHistory(tx: Transaction, db: Firestore, reply: ReplyAddress, snapshot?: DocumentSnapshot): Promise<ReplyHistory> {
  const snap = snapshot ?? (await tx.get(db.doc(paths.message(reply.workspaceId, reply.conversationId, reply.messageId))));
  return new ReplyHistory({ workspaceId: reply.workspaceId, conversationId: reply.conversationId, messageId: reply.messageId }, snap.exists ? snap.data() : undefined);
}

/** One delivery record, or null. */
export async function readDelivery(tx: Transaction, db: Firestore, workspaceId: string, deliveryId: string): Promise<DeliveryRecord | null> {
  const snap = await tx.get(deliveryRef(db, workspaceId, deliveryId));
  return snap.exists ? (snap.data() as DeliveryRecord) : null;
}

/**
 * Reads a conversation's queue. A queue document without the map is rebuilt once, inside the
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
  const stored = parseUnfinished(snap.get(UNFINISHED_FIELD));
  if (stored) return { ref, unfinished: stored, rebuilt: false, release: parseReleaseFacts(snap.get(RELEASE_FIELD)) };
  if (!snap.exists && absentIsEmpty) return { ref, unfinished: new Map(), rebuilt: false, release: new Map() };
  const deliveries = db.collection(paths.deliveries(workspaceId));
  const query = collectionQuery(deliveries, QUERIES.unfinishedOfConversation, conversationId, UNFINISHED_STATUSES, Number.MAX_SAFE_INTEGER);
  const unfinished = new Map<number, string>();
  for (const doc of (await tx.get(query)).docs) {
    const d = doc.data() as DeliveryRecord;
    unfinished.set(d.seq, d.deliveryId);
  }
  // Release facts written beside a map that has since gone stay true (every transition that reads
  // the queue keeps them in step, rebuilt or not); deliveries without them are read before their release.
  return { ref, unfinished, rebuilt: true, release: parseReleaseFacts(snap.get(RELEASE_FIELD)) };
}

interface ConversationFacts {
  externalConversationId: string;
  lastCustomerExternalId: string | null;
  lastSenderExternalId: string;
  /** The conversation's connector metadata (the claim carries it): read from the same snapshot, no extra read. */
  metadata: Metadata;
}

/** The conversation's facts a claim answers with, from `snapshot` when the first read wave had it. */
async function readConversation(tx: Transaction, db: Firestore, d: DeliveryRecord, snapshot?: DocumentSnapshot): Promise<ConversationFacts> {
  const data = (snapshot ?? (await tx.get(conversationRef(db, d.workspaceId, d.conversationId)))).data() ?? {};
  const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
  return {
    externalConversationId: str(data.externalConversationId) ?? '',
    lastCustomerExternalId: str(data.lastCustomerExternalId),
    lastSenderExternalId: str(data.lastSenderExternalId) ?? '',
    metadata: storedMetadata(data.metadata),
  };
}

/** What the first read wave returned: the delivery and, when its id names the conversation, what the transition asked for. */
interface FirstWave {
  delivery: DeliveryRecord | null;
  /** The conversation the id names (null: an id of the older shape). */
  conversationId: string | null;
  queue?: DocumentSnapshot;
  conversation?: DocumentSnapshot;
}

async function firstWave(tx: Transaction, db: Firestore, transition: TransitionReadRequest): Promise<FirstWave> {
  const { workspaceId, deliveryId } = transition;
  const conversationId = conversationOfDeliveryId(deliveryId);
  const withQueue = conversationId !== null && (transition.withConversation === true || transition.withQueue === true);
  const withConversation = conversationId !== null && transition.withConversation === true;
  if (conversationId === null || !withQueue) return { delivery: await readDelivery(tx, db, workspaceId, deliveryId), conversationId };
  const refs = [deliveryRef(db, workspaceId, deliveryId), deliveryQueueRef(db, workspaceId, conversationId), ...(withConversation ? [conversationRef(db, workspaceId, conversationId)] : [])];
  const [delivery, queue, conversation] = await tx.getAll(...refs);
  return {
    delivery: delivery?.exists === true ? (delivery.data() as DeliveryRecord) : null,
    conversationId,
    ...(queue ? { queue } : {}),
    ...(conversation ? { conversation } : {}),
  };
}

/**
 * A delivery waiting behind `releasing`, as far as its release needs it, from its release facts
 * (../rules/ordering.ts RELEASE_FIELD): of the same conversation (so of the same integration, whose id
 * the conversation id is derived from), created behind an unfinished delivery and never claimable
 * since (a claim needs every earlier delivery finished), so queued, not the head, no lease, no
 * retry time, no schedule. The rest of the record (text, files, log) is not needed: the wake
 * changes none of it, and its mirror does not change (`mirrorChanged` compares none of it).
 */
function waitingDelivery(releasing: DeliveryRecord, seq: number, deliveryId: string, facts: ReleaseFacts): DeliveryRecord {
  const { workspaceId, integrationId, conversationId } = releasing;
  return { ...newDelivery({ deliveryId, workspaceId, integrationId, conversationId, messageId: facts.messageId, seq, text: '', now: 0 }), waiting: facts.waiting };
}
