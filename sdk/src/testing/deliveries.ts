/**
 * The test service's delivery store: the in-memory twin of the service's Firestore store
 * (functions/src/deliveries/transition.ts and store.ts). Every change to a delivery is the same
 * read -> decide -> write step as the service's, run on the service's own rules (generated copies
 * under ../internal/rules): read the record and its conversation's queue, let a rule decide, store
 * the decided record with the fields every store derives (`storedRecord`), queue its notification,
 * and when it ends, wake the delivery it releases (`releaseFrom`, `decideWake`). Creation is
 * `decideAppend` on the conversation's queue, as the service's reply trigger does. Nothing here
 * decides anything a connector can observe: that is the rules' job.
 */
import { decideAppend, decideLivenessCheck, decideLeaseExpiry, decideWake, type AppendInput } from '../internal/rules/state-machine.js';
import { hasUnfinishedBefore, releaseFrom, type QueueTail } from '../internal/rules/ordering.js';
import { isTerminal, storedRecord, type Decision, type DeliveryRecord, type NotificationReason, type Recipient } from '../internal/rules/record.js';

/** What a decision may know besides the record (as the service's `TransitionFacts`). */
export interface TransitionFacts {
  now: number;
  /** An earlier delivery of the conversation is unfinished. */
  predecessorUnfinished: boolean;
  recipient: Recipient;
}

/** A notification due at `at` (the service's outbox entry). */
export interface OutboxEntry {
  deliveryId: string;
  at: number;
  reason: NotificationReason;
}

/** The service's default unclaimed expiry (functions/src/platform/config.ts `UNCLAIMED_EXPIRY`: 24 h). */
const UNCLAIMED_EXPIRY_MS = 24 * 3600_000;

export class MemoryDeliveries {
  readonly records = new Map<string, DeliveryRecord>();
  /** Per conversation: the next seq and the unfinished deliveries by seq (the queue document). */
  private readonly queues = new Map<string, QueueTail & { unfinished: Map<number, string> }>();
  readonly outbox: OutboxEntry[] = [];

  constructor(
    private readonly recipientOf: (conversationId: string) => Recipient,
    private readonly unclaimedExpiryMs = UNCLAIMED_EXPIRY_MS,
  ) {}

  private queue(conversationId: string): QueueTail & { unfinished: Map<number, string> } {
    let queue = this.queues.get(conversationId);
    if (queue === undefined) {
      queue = { nextSeq: 1, unfinished: new Map() };
      this.queues.set(conversationId, queue);
    }
    return queue;
  }

  /** Read -> decide -> write on one delivery; null when there is no such delivery. */
  transition<R>(deliveryId: string, now: number, decide: (d: DeliveryRecord, facts: TransitionFacts) => Decision<R> | null): { before: DeliveryRecord; decision: Decision<R> | null } | null {
    const before = this.records.get(deliveryId);
    if (before === undefined) return null;
    const queue = this.queue(before.conversationId);
    const facts: TransitionFacts = { now, predecessorUnfinished: !isTerminal(before.status) && hasUnfinishedBefore(queue.unfinished, before.seq), recipient: this.recipientOf(before.conversationId) };
    const decision = decide(before, facts);
    if (decision !== null) this.write(before, decision, now);
    return { before, decision };
  }

  /** A new delivery at the end of its conversation's queue (`decideAppend`), with its notification. */
  append(input: AppendInput): DeliveryRecord {
    const queue = this.queue(input.conversationId);
    const { decision, queue: after } = decideAppend(queue, input);
    queue.nextSeq = after.nextSeq;
    queue.unfinished.set(decision.next.seq, decision.next.deliveryId);
    this.write(null, decision, input.now);
    return this.records.get(decision.next.deliveryId) ?? decision.next;
  }

  /** The lease expiries and liveness checks that are due (the service's lazy expiry and its sweeper). */
  sweep(now: number): void {
    for (const d of [...this.records.values()]) {
      const expiry = decideLeaseExpiry(d, now);
      if (expiry !== null) this.write(d, expiry, now);
      const current = this.records.get(d.deliveryId) ?? d;
      const checkAt = current.liveness?.checkAt;
      if (checkAt !== undefined && checkAt <= now) {
        const check = decideLivenessCheck(current, checkAt, now);
        if (check !== null) this.write(current, check, now);
      }
    }
  }

  /** The notifications due at `now`, taken out of the outbox. */
  takeDue(now: number): OutboxEntry[] {
    const due = this.outbox.filter((entry) => entry.at <= now);
    for (const entry of due) this.outbox.splice(this.outbox.indexOf(entry), 1);
    return due;
  }

  /** Stores what a rule decided (the service's `writeDecision`), and the wake of the delivery its end releases. */
  private write<R>(before: DeliveryRecord | null, decision: Decision<R>, now: number): void {
    const next = decision.next;
    if (next === null) return;
    this.records.set(next.deliveryId, storedRecord(before, next, now, this.unclaimedExpiryMs));
    if (decision.effects.notify !== null) this.outbox.push({ deliveryId: next.deliveryId, at: decision.effects.notify.at, reason: decision.effects.notify.reason });
    if (!decision.effects.releasesNext || before === null) return;
    const queue = this.queue(next.conversationId);
    const released = releaseFrom(queue.unfinished, before.seq);
    queue.unfinished.delete(before.seq);
    const waiting = released === null ? undefined : this.records.get(released.deliveryId);
    const wake = waiting === undefined ? null : decideWake(waiting, now);
    if (waiting !== undefined && wake !== null) this.write(waiting, wake, now);
  }
}
