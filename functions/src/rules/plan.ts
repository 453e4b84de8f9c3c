/**
 * What a delivery transition writes, decided once for every store: the read -> decide -> write
 * step of the service (functions/src/deliveries/transition.ts, Firestore) and of the SDK's test
 * service (sdk/src/testing/deliveries.ts, memory) asks these functions for its plan and only
 * applies it. A plan names every delivery record the transition writes (the decided one, and the
 * one its end releases, woken), each as stored (`storedRecord`) with the notification it asks for,
 * and the change to the conversation's queue. What each store derives from a record write (the
 * service's reply mirror, check document, outbox document, operational event) is its writer's.
 */
import { decideWake, decideAppend, type AppendInput } from './state-machine';
import { releaseFrom, type QueuedDelivery, type QueueTail, type UnfinishedDeliveries } from './ordering';
import { storedRecord, type Decision, type DeliveryRecord, type Notify } from './record';

/** One delivery record to write: as read (`before`, null for a new one) and as stored. */
export interface RecordWrite {
  before: DeliveryRecord | null;
  record: DeliveryRecord;
  notify: Notify | null;
}

/** The change to the conversation's queue: the delivery that ended, the one woken, a claim's `waiting`. */
export interface QueueChange {
  terminalSeq: number | null;
  releasedSeq: number | null;
  waiting: { seq: number; waiting: boolean } | null;
}

export interface TransitionPlan<R> {
  response: R;
  /** The decided record as stored; null when the decision writes none. */
  decided: RecordWrite | null;
  /** The delivery the end of this one released, woken; null when none is. */
  woken: RecordWrite | null;
  queue: QueueChange;
}

/** What a store must know to plan besides the record: when, and how long an unclaimed delivery lives. */
export interface PlanSettings {
  now: number;
  unclaimedExpiryMs: number;
}

/**
 * Which delivery the end of `before` releases, if `decision` ends it: the conversation's new head
 * (../rules/ordering.ts `releaseFrom`), for the store to read (or take from its release facts).
 */
export function releasedBy<R>(before: DeliveryRecord, decision: Decision<R> | null, unfinished: UnfinishedDeliveries): QueuedDelivery | null {
  return decision?.effects.releasesNext === true ? releaseFrom(unfinished, before.seq) : null;
}

/**
 * The plan of a transition on `before`: the decided record as stored, the wake of `released` (the
 * record `releasedBy` named, as the store read it; null when nothing is released or it is gone),
 * and the queue change. A decision without a record to write plans no write of its own.
 */
export function planTransition<R>(before: DeliveryRecord, decision: Decision<R> | null, released: DeliveryRecord | null, settings: PlanSettings): TransitionPlan<R> | null {
  if (decision === null) return null;
  const { now, unclaimedExpiryMs } = settings;
  const next = decision.next;
  const wake = released === null ? null : decideWake(released, now);
  const woken = released !== null && wake?.next ? { before: released, record: storedRecord(released, wake.next, now, unclaimedExpiryMs), notify: wake.effects.notify } : null;
  return {
    response: decision.response,
    decided: next === null ? null : { before, record: storedRecord(before, next, now, unclaimedExpiryMs), notify: decision.effects.notify },
    woken,
    queue: {
      terminalSeq: decision.effects.releasesNext ? before.seq : null,
      releasedSeq: woken === null ? null : woken.record.seq,
      waiting: next !== null && next.waiting !== before.waiting ? { seq: before.seq, waiting: next.waiting } : null,
    },
  };
}

/** The plan of a new delivery at the end of its conversation's queue (`decideAppend`), and the queue after it. */
export function planAppend(queue: QueueTail, input: AppendInput, unclaimedExpiryMs: number): { write: RecordWrite & { before: null }; queue: QueueTail } {
  const { decision, queue: after } = decideAppend(queue, input);
  return { write: { before: null, record: storedRecord(null, decision.next, input.now, unclaimedExpiryMs), notify: decision.effects.notify }, queue: after };
}
