/**
 * The delivery transactions: every write to a delivery record runs in one of the two transactions
 * opened here, and both write the plan the rules made of a decision (../rules/plan.ts) through the
 * store's one writer (./store.ts `applyPlan` / `writeRecord`: the record with its check document,
 * reply mirror or history entry, operational event and notification, then the queue).
 *
 * `runTransition`: every change to an existing delivery (claim, start, extend, complete, fail,
 * receipt, cancel, lease expiry and liveness checks by the sweeper, an undeliverable
 * notification), top to bottom:
 *
 *   1. read the delivery and the rule's facts (./reads.ts; for a claim, its conversation's queue and
 *      the recipient);
 *   2. decide (../rules/state-machine.ts, pure);
 *   3. when the decision ends the delivery, read what it releases (./reads.ts, ../rules/ordering.ts);
 *   4. plan (../rules/plan.ts `planTransition`: every document the transition writes), read the
 *      reply's history if the plan asks for an entry in it, and apply the plan (./store.ts `applyPlan`).
 *
 * `runCreation`: a delivery coming into being, for a new reply (./sequencing.ts) or an operator's
 * resend (./resend.ts). The creator reads the reply (and what else it needs) together with the
 * conversation's queue document, then for each reply either appends a delivery (`appendDelivery`:
 * the plan `planAppend`, written by ./store.ts `writeRecord`) or refuses it (`refuseReply`: the reply's
 * mirror says why); the queue document is written once at the end.
 *
 * All reads come before the first write, as Firestore transactions require. A decision that
 * throws writes nothing.
 */
import type { DocumentReference, DocumentSnapshot, Firestore, Transaction } from 'firebase-admin/firestore';
import type { QueueTail, ReleaseFacts } from '../rules/ordering';
import { planAppend, planTransition } from '../rules/plan';
import { config } from '../platform/config';
import type { Decision, DeliveryNotification, DeliveryRecord } from '../rules/record';
import { rejectionMirror, type ReplyRejection, type StoredMirror } from './reply';
import type { ReplyHistory } from './lifecycle-history';
import type { AppendInput, TransitionFacts } from '../rules/state-machine';
import { readDeliveryQueue, readForTransition, readReleased, readReplyHistory, type TransitionReadRequest } from './reads';
import { applyPlan, conversationRef, countAttention, deliveryQueueRef, writeQueueAfterAppend, writeRecord, writeReplyMirror, type DeliveryQueueState, type ReplyAddress } from './store';
import { failClosesWindow } from '../rules/window';
import { windowClosedUpdate } from './window';
import { attentionDelta } from './attention';

/**
 * One transition: the delivery it acts on and what to read with it (./reads.ts
 * `TransitionReadRequest`: `caller` makes a delivery the connector may not see a 404; `withConversation`
 * reads the queue and recipient before deciding, as the claim needs; `withQueue` reads the queue in
 * the first wave when the decision will likely end the delivery: complete, fail `failed`/`unknown`).
 */
export interface Transition<R> extends TransitionReadRequest {
  /** Takes the decision on the current record, or null for nothing to do. */
  decide(d: DeliveryRecord, facts: TransitionFacts): Decision<R> | null;
  /**
   * After the decision and before any write: what else the transition reads, and the writes of its
   * own it makes after the plan's (a start's complete joins the thread's conversation: ./start-completion.ts).
   */
  readAlso?(tx: Transaction, before: DeliveryRecord, decision: Decision<R> | null): Promise<((tx: Transaction) => void) | null>;
  /** Last step before the writes: e.g. give up when the request's deadline has passed. */
  beforeWrite?(): void;
  /** Further writes of the same transaction, knowing what was read and decided (the outbox deletes the entry it handled). */
  alsoWrite?(tx: Transaction, outcome: TransitionOutcome<R>): void;
}

export interface TransitionOutcome<R> {
  /** The record as read, or null when there was none. */
  before: DeliveryRecord | null;
  /** The decision taken, or null when there was nothing to decide. */
  decision: Decision<R> | null;
  /** The delivery this one's end made claimable now (../rules/plan.ts `nextClaimable`), or null. */
  next: DeliveryNotification | null;
}

/** gRPC NOT_FOUND: a commit whose update names a document that does not exist. */
const NOT_FOUND = 5;

/**
 * Runs one transition in one Firestore transaction (retried by Firestore on contention).
 *
 * One read wave, then the commit, when the id names its conversation (../platform/ids.ts
 * `conversationOfDeliveryId`): the delivery with, as the transition asks, its conversation's queue
 * document and the conversation, in one `getAll`; and a delivery this one releases is woken from
 * its release facts in the queue document (../rules/ordering.ts RELEASE_FIELD), not read. An id of the
 * older shape takes the waves it always took (the delivery, then what it names, then the released
 * delivery). If the released record turns out to be gone (its wake, an update, fails the commit
 * with NOT_FOUND, and nothing was written), the transition runs again reading it, as before.
 */
export async function runTransition<R>(db: Firestore, transition: Transition<R>): Promise<TransitionOutcome<R>> {
  const attempt = { wokeFromFacts: false };
  try {
    return await transitionOnce(db, transition, true, attempt);
  } catch (err) {
    if (!attempt.wokeFromFacts || (err as { code?: unknown }).code !== NOT_FOUND) throw err;
    return transitionOnce(db, transition, false, attempt);
  }
}

function transitionOnce<R>(db: Firestore, transition: Transition<R>, trustReleaseFacts: boolean, attempt: { wokeFromFacts: boolean }): Promise<TransitionOutcome<R>> {
  return db.runTransaction(async (tx) => {
    const now = Date.now();
    attempt.wokeFromFacts = false;
    // Read the facts (./reads.ts), decide (the transition's rule), plan (../rules/plan.ts, the same
    // for the SDK's test service), read what the plan's writes need, apply the plan (./store.ts).
    const read = await readForTransition(tx, db, transition, now);
    if (read === null) return finish(tx, transition, { before: null, decision: null, next: null });
    const { before } = read;
    const decision = transition.decide(before, read.facts);
    // A delivery that ends releases the next one of its conversation: read it (or its release facts);
    // null, reading nothing, when the decision does not end it.
    const released = await readReleased(tx, db, read, decision, trustReleaseFacts);
    const plan = planTransition(before, decision, released?.record ?? null, { now, unclaimedExpiryMs: config().unclaimedExpiryMs });
    // An edit's or unsend's entry in the reply's history needs the reply: read before any write.
    const history = plan?.decided?.mirror === 'history' ? await readReplyHistory(tx, db, before) : undefined;
    const alsoWrite = transition.readAlso === undefined ? null : await transition.readAlso(tx, before, decision);
    transition.beforeWrite?.();
    if (plan) {
      // A record woken from its release facts was not read: the writer writes only what a wake changes.
      const wokenFromFacts = plan.woken !== null && released?.fromFacts === true;
      attempt.wokeFromFacts ||= wokenFromFacts;
      applyPlan(tx, db, plan, { now, queue: read.queue, history, wokenFromFacts });
    }
    alsoWrite?.(tx);
    // The connector's `window_closed` closes the conversation's window now (docs/contract.md#windows),
    // on the conversation its first wave read (a fail asks for it with that code: ./http.ts).
    const windowClosed = failClosesWindow(before, decision?.next) ? windowClosedUpdate(read.snapshots.conversation, now) : null;
    if (windowClosed !== null) tx.update(conversationRef(db, before.workspaceId, before.conversationId), windowClosed);
    return finish(tx, transition, { before, decision, next: plan?.next ?? null });
  });
}

/** The transition's own further writes (`alsoWrite`), then its outcome. */
function finish<R>(tx: Transaction, transition: Transition<R>, outcome: TransitionOutcome<R>): TransitionOutcome<R> {
  transition.alsoWrite?.(tx, outcome);
  return outcome;
}

/**
 * One conversation's queue during a creation: read once by `openQueue`, advanced by each
 * `appendDelivery`, and written by `runCreation` when the creator is done.
 */
export interface CreationQueue {
  readonly workspaceId: string;
  readonly conversationId: string;
  /** The queue document, for the creator's first read wave. */
  readonly ref: DocumentReference;
  /** The queue as read (its map rebuilt if needed); null until `openQueue`. */
  read: DeliveryQueueState | null;
  /** Where the next delivery goes. */
  tail: QueueTail;
  /** The deliveries appended in this transaction, by seq. */
  appended: Map<number, string>;
  /** The release facts of those appended behind an unfinished delivery (../rules/ordering.ts RELEASE_FIELD). */
  release: Map<number, ReleaseFacts>;
  /**
   * Further fields the creator keeps on the queue document (sequencing: the last reply it
   * sequenced). When set, the queue is written even if nothing was appended.
   */
  fields: Record<string, unknown> | null;
}

/**
 * Reads the queue for appending, from `snapshot` when the creator read the document in its first
 * wave. A conversation without a queue document has no deliveries yet, so nothing is rebuilt.
 */
export async function openQueue(tx: Transaction, db: Firestore, queue: CreationQueue, snapshot: DocumentSnapshot | undefined): Promise<void> {
  const snap = snapshot ?? (await tx.get(queue.ref));
  const read = await readDeliveryQueue(tx, db, queue.workspaceId, queue.conversationId, snap, true);
  const nextSeq = snap.get('nextSeq') as unknown;
  queue.read = read;
  queue.tail = { nextSeq: typeof nextSeq === 'number' ? nextSeq : 1, unfinished: read.unfinished };
}

/**
 * Appends a new delivery to the end of its conversation's queue (`decideAppend`: the next seq and
 * the head rule) and writes it: record, reply mirror, check document when claimable, and its
 * notification, which the creator publishes after the commit (./outbox.ts `publishCommitted`).
 * Only after every read of the transaction, and after `openQueue`. An edit or unsend (`input.lifecycle`)
 * takes its reply's `history` (its entry instead of the reply's mirror), which its creator writes.
 */
export function appendDelivery(tx: Transaction, db: Firestore, queue: CreationQueue, input: AppendInput, history?: ReplyHistory): { delivery: DeliveryRecord; outboxId: string | null } {
  if (queue.read === null) throw new Error('appendDelivery: the queue was not read (openQueue)');
  const { write, queue: tail } = planAppend(queue.tail, input, config().unclaimedExpiryMs);
  const outboxId = writeRecord(tx, db, write, input.now, undefined, history);
  queue.tail = tail;
  const created = write.record;
  queue.appended.set(created.seq, created.deliveryId);
  // Behind an unfinished delivery: what its release needs, so that it is woken without being read.
  if (created.head !== true) queue.release.set(created.seq, { messageId: created.messageId, waiting: false });
  return { delivery: created, outboxId };
}

/**
 * A reply that becomes no delivery: its mirror says why (./reply.ts `rejectionMirror`), keeping
 * `replaced` (the mirror a refused resend replaces) as its `previous`.
 */
export function refuseReply(tx: Transaction, db: Firestore, reply: ReplyAddress, code: ReplyRejection, now: number, replaced?: StoredMirror): void {
  writeReplyMirror(tx, db, reply, rejectionMirror(code, now, replaced));
  countAttention(tx, db, reply, attentionDelta(replaced === undefined ? null : { status: replaced.status, code: replaced.errorCode }, { status: 'failed', code }));
}

/**
 * Runs one creation in one Firestore transaction (retried by Firestore on contention): `create`
 * reads (the queue document through `queue.ref`, then `openQueue`), appends or refuses; the queue
 * document is then written once: the appended deliveries, the next seq, the creator's fields.
 */
export function runCreation<T>(
  db: Firestore,
  conversation: { workspaceId: string; conversationId: string },
  create: (tx: Transaction, queue: CreationQueue, now: number) => Promise<T>,
): Promise<T> {
  return db.runTransaction(async (tx) => {
    const now = Date.now();
    const queue: CreationQueue = {
      ...conversation,
      ref: deliveryQueueRef(db, conversation.workspaceId, conversation.conversationId),
      read: null,
      tail: { nextSeq: 1, unfinished: new Map() },
      appended: new Map(),
      release: new Map(),
      fields: null,
    };
    const result = await create(tx, queue, now);
    const { read } = queue;
    if (read !== null && (queue.appended.size > 0 || read.rebuilt || queue.fields !== null)) {
      writeQueueAfterAppend(tx, read, queue.appended, queue.release, queue.tail.nextSeq, queue.fields ?? {}, now);
    }
    return result;
  });
}
