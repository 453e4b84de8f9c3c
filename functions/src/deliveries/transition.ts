/**
 * The one delivery transition: every change to an existing delivery (claim, start, complete,
 * fail, lease expiry by the sweeper, an undeliverable notification) is this transaction, top to
 * bottom:
 *
 *   1. read the delivery (and, for a claim, its conversation's queue and the recipient);
 *   2. decide (./state-machine.ts, pure);
 *   3. when the decision ends the delivery, read what it releases (./ordering.ts);
 *   4. write: the record with its reply mirror and notification (the reason travels in the
 *      decision's effects), the queue, and the wake of the released delivery.
 *
 * All reads come before the first write, as Firestore transactions require. A decision that
 * throws writes nothing.
 */
import type { Firestore, Transaction } from 'firebase-admin/firestore';
import { releaseFrom, hasUnfinishedBefore } from './ordering';
import { isTerminal, recipientFor, visibleDelivery, type Decision, type DeliveryRecord, type Recipient } from './record';
import { decideWake } from './state-machine';
import { readConversation, readDelivery, readDeliveryQueue, writeDelivery, writeQueue, type DeliveryQueueState } from './store';

/** What a decision may know besides the record. */
export interface TransitionFacts {
  now: number;
  /** An earlier delivery of the conversation is unfinished (read only `withConversation`). */
  predecessorUnfinished: boolean;
  /** Who the reply goes to (read only `withConversation`). */
  recipient: Recipient;
}

export interface Transition<R> {
  workspaceId: string;
  deliveryId: string;
  /** A connector's call: a delivery it may not see is 404 (thrown); otherwise a missing one is no-op. */
  caller?: { workspaceId: string; integrationId: string };
  /** Read the conversation's queue and recipient before deciding (the claim needs both). */
  withConversation?: boolean;
  /** Takes the decision on the current record, or null for nothing to do. */
  decide(d: DeliveryRecord, facts: TransitionFacts): Decision<R> | null;
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
}

const NOBODY: Recipient = { externalConversationId: '', externalCustomerId: '' };

/** Runs one transition in one Firestore transaction (retried by Firestore on contention). */
export function runTransition<R>(db: Firestore, transition: Transition<R>): Promise<TransitionOutcome<R>> {
  return db.runTransaction(async (tx) => {
    const now = Date.now();
    const found = await readDelivery(tx, db, transition.workspaceId, transition.deliveryId);
    const before = transition.caller ? visibleDelivery(found, transition.caller) : found;
    if (before === null) {
      const outcome: TransitionOutcome<R> = { before, decision: null };
      transition.alsoWrite?.(tx, outcome);
      return outcome;
    }

    let facts: TransitionFacts = { now, predecessorUnfinished: false, recipient: NOBODY };
    let queue: DeliveryQueueState | null = null;
    if (transition.withConversation && !isTerminal(before.status)) {
      const [queueState, conversation] = await Promise.all([
        readDeliveryQueue(tx, db, before.workspaceId, before.conversationId),
        readConversation(tx, db, before),
      ]);
      queue = queueState;
      facts = { now, predecessorUnfinished: hasUnfinishedBefore(queue.pending, before.seq), recipient: recipientFor(conversation) };
    }
    const decision = transition.decide(before, facts);

    // A delivery that ends releases the next one of its conversation: read both before writing.
    let released: DeliveryRecord | null = null;
    if (decision?.effects.releasesNext) {
      queue ??= await readDeliveryQueue(tx, db, before.workspaceId, before.conversationId);
      const next = releaseFrom(queue.pending, before.seq);
      released = next ? await readDelivery(tx, db, before.workspaceId, next.deliveryId) : null;
    }

    transition.beforeWrite?.();
    if (decision?.next) writeDelivery(tx, db, before, decision.next, decision.effects.notify, now);
    if (queue) writeQueue(tx, queue, decision?.effects.releasesNext ? before.seq : null, now);
    const wake = released ? decideWake(released, now) : null;
    if (released && wake?.next) writeDelivery(tx, db, released, wake.next, wake.effects.notify, now);
    const outcome: TransitionOutcome<R> = { before, decision };
    transition.alsoWrite?.(tx, outcome);
    return outcome;
  });
}
