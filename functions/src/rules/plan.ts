/**
 * What a delivery transition writes, decided once for every store: the read -> decide -> write
 * step of the service (functions/src/deliveries/transition.ts, Firestore) and of the SDK's test
 * service (sdk/src/testing/deliveries.ts, memory) asks these functions for its plan and only
 * applies it. A plan names every document the transition changes: each delivery record it writes
 * (the decided one, and the one its end releases, woken) as stored (`storedRecord`), and with each
 * record what follows from it (`RecordWrite`): the notification it asks for (the outbox), whether
 * the console sees a change (the reply's mirror, or an edit's or unsend's entry in the reply's
 * history), its due work (the liveness check or the lease's expiry) and the operational event it
 * raises; then the change to the conversation's queue. A store's writer only stores these in its
 * own shape (the service: functions/src/deliveries/store.ts `applyPlan`); it decides nothing.
 */
import { decideWake, decideAppend, type AppendInput } from './state-machine';
import { releaseFrom, type QueuedDelivery, type QueueTail, type UnfinishedDeliveries } from './ordering';
import { NOT_CLAIMED, notificationOf, storedRecord, type Decision, type DeliveryNotification, type DeliveryRecord, type Notify } from './record';

/** One delivery record to write: as read (`before`, null for a new one) and as stored, with what follows from it. */
export interface RecordWrite {
  before: DeliveryRecord | null;
  record: DeliveryRecord;
  /** The notification to send (an outbox entry). */
  notify: Notify | null;
  /**
   * What the console sees changed (`mirrorChanged`): `reply`, the reply's `delivery` mirror (a
   * plain reply's delivery); `history`, the request's entry in the reply's history (an edit or
   * unsend delivery); null, nothing the console shows.
   */
  mirror: 'reply' | 'history' | null;
  /** The record's due work when it moved (`dueWorkOf`): `cleared` when it has none any more; null when unchanged. */
  due: DueWork | 'cleared' | null;
  /** The write ended the delivery by its retry budget or unclaimed (`delivery.exhausted`, with its code); null otherwise. */
  exhausted: { code: string } | null;
}

/**
 * The time-based duty of an unfinished delivery: while claimable (`pendingAt` and `liveness` set),
 * its next liveness check (and `pendingAt`, the catch-up list's order); while it holds a lease, the
 * lease's expiry. None while it waits behind another or once finished.
 */
export interface DueWork {
  dueAt: number;
  /** Only while claimable. */
  pendingAt?: number;
}

/** The due work of a stored record, or null when nothing about it is due. */
export function dueWorkOf(d: DeliveryRecord): DueWork | null {
  if (d.pendingAt !== undefined && d.liveness !== undefined) return { dueAt: d.liveness.checkAt, pendingAt: d.pendingAt };
  if ((d.status === 'leased' || d.status === 'sending') && d.lease !== null) return { dueAt: d.lease.expiresAt };
  return null;
}

/** Whether the console would see a difference between `before` (null: a new record) and `next`. */
export function mirrorChanged(before: DeliveryRecord | null, next: DeliveryRecord): boolean {
  return (
    before === null ||
    before.status !== next.status ||
    JSON.stringify(before.error) !== JSON.stringify(next.error) ||
    JSON.stringify(before.providerMessageIds) !== JSON.stringify(next.providerMessageIds) ||
    JSON.stringify(before.receipt ?? null) !== JSON.stringify(next.receipt ?? null) ||
    JSON.stringify(before.attemptLog ?? []) !== JSON.stringify(next.attemptLog ?? []) ||
    JSON.stringify(before.cancel ?? null) !== JSON.stringify(next.cancel ?? null) ||
    JSON.stringify(before.parts ?? null) !== JSON.stringify(next.parts ?? null)
  );
}

/** The retry budget's code, and the unclaimed expiry's: the two ends of a delivery nobody could send. */
const EXHAUSTED_CODES: ReadonlySet<string> = new Set(['retry_exhausted', NOT_CLAIMED]);

/** The code of `delivery.exhausted` when this write ends the delivery by its retry budget or unclaimed; otherwise null. */
function exhaustedBy(before: DeliveryRecord | null, next: DeliveryRecord): { code: string } | null {
  if (next.status !== 'failed' || before === null || before.status === 'failed') return null;
  const code = next.error?.code;
  return code !== undefined && EXHAUSTED_CODES.has(code) ? { code } : null;
}

/** `record` (as stored, after `before`; null: a new record) with everything that follows from writing it. */
export function recordWrite(before: DeliveryRecord | null, record: DeliveryRecord, notify: Notify | null): RecordWrite {
  const dueBefore = before === null ? null : dueWorkOf(before);
  const dueAfter = dueWorkOf(record);
  const due = dueAfter === null ? (dueBefore === null ? null : 'cleared') : dueAfter.dueAt !== dueBefore?.dueAt || dueAfter.pendingAt !== dueBefore.pendingAt ? dueAfter : null;
  const mirror = mirrorChanged(before, record) ? (record.kind === undefined ? 'reply' : 'history') : null;
  return { before, record, notify, mirror, due, exhausted: exhaustedBy(before, record) };
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
  /** The woken delivery's notification when it is claimable at once (`nextClaimable`); null otherwise. */
  next: DeliveryNotification | null;
  queue: QueueChange;
}

/**
 * The woken delivery as `next`, when a claim at `now` would get it: queued, with no retry delay
 * still running. Null when nothing was woken or it must wait (its notification says when).
 */
export function nextClaimable(woken: RecordWrite | null, now: number): DeliveryNotification | null {
  if (woken === null) return null;
  const { record } = woken;
  if (record.status !== 'queued' || (record.notBefore !== null && record.notBefore > now)) return null;
  return notificationOf(record);
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
  const woken = released !== null && wake?.next ? recordWrite(released, storedRecord(released, wake.next, now, unclaimedExpiryMs), wake.effects.notify) : null;
  return {
    response: decision.response,
    decided: next === null ? null : recordWrite(before, storedRecord(before, next, now, unclaimedExpiryMs), decision.effects.notify),
    woken,
    next: nextClaimable(woken, now),
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
  return { write: { ...recordWrite(null, storedRecord(null, decision.next, input.now, unclaimedExpiryMs), decision.effects.notify), before: null }, queue: after };
}
