/**
 * The test service's delivery store: the in-memory twin of the service's Firestore store
 * (functions/src/deliveries/transition.ts and store.ts). Every change to a delivery is the same
 * read -> decide -> write step as the service's, run on the service's own rules (generated copies
 * under ../internal/rules): read the record and its conversation's queue, let a rule decide, store
 * the plan the rules make of the decision (`planTransition`: the decided record as stored, the
 * delivery its end releases woken, the queue change) and apply it. Creation is `planAppend` on the
 * conversation's queue, as the service's reply trigger does. Nothing here
 * decides anything a connector can observe: that is the rules' job.
 *
 * Of what a plan says follows from each record (`RecordWrite`), this store keeps the notification
 * (its outbox); the rest needs no document here: the console's view of a reply is derived from the
 * records when asked (./replies.ts), due work is found by scanning the records (`sweep`), and there
 * is no operational-event channel to write to.
 */
import { decideLivenessCheck, decideLeaseExpiry, type AppendInput, type TransitionFacts } from '../internal/rules/state-machine.js';
import { planAppend, planTransition, releasedBy, type QueueChange, type RecordWrite } from '../internal/rules/plan.js';
import { hasUnfinishedBefore, type QueueTail } from '../internal/rules/ordering.js';
import { failClosesWindow } from '../internal/rules/window.js';
import { DEFAULT_UNCLAIMED_EXPIRY_MS, isTerminal, type Decision, type DeliveryNotification, type DeliveryRecord, type NotificationReason } from '../internal/rules/record.js';


/** A notification due at `at` (the service's outbox entry). */
export interface OutboxEntry {
  deliveryId: string;
  at: number;
  reason: NotificationReason;
}

export class MemoryDeliveries {
  readonly records = new Map<string, DeliveryRecord>();
  /** Per conversation: the next seq and the unfinished deliveries by seq (the queue document). */
  private readonly queues = new Map<string, QueueTail & { unfinished: Map<number, string> }>();
  readonly outbox: OutboxEntry[] = [];

  constructor(
    /** What a claim reads of the conversation (the service's `readConversation`): its recipient and its connector metadata. */
    private readonly conversationOf: (conversationId: string) => Pick<TransitionFacts, 'recipient' | 'metadata'>,
    private readonly unclaimedExpiryMs = DEFAULT_UNCLAIMED_EXPIRY_MS,
    /** The conversation's window closes at `now` (a reply's delivery failed `window_closed`: ../internal/rules/window.ts `failClosesWindow`). */
    private readonly windowClosed: (conversationId: string, now: number) => void = () => undefined,
  ) {}

  private queue(conversationId: string): QueueTail & { unfinished: Map<number, string> } {
    let queue = this.queues.get(conversationId);
    if (queue === undefined) {
      queue = { nextSeq: 1, unfinished: new Map() };
      this.queues.set(conversationId, queue);
    }
    return queue;
  }

  /** Read -> decide -> plan -> write on one delivery (../internal/rules/plan.ts); null when there is no such delivery. */
  transition<R>(deliveryId: string, now: number, decide: (d: DeliveryRecord, facts: TransitionFacts) => Decision<R> | null): { before: DeliveryRecord; decision: Decision<R> | null; next: DeliveryNotification | null } | null {
    const before = this.records.get(deliveryId);
    if (before === undefined) return null;
    const queue = this.queue(before.conversationId);
    const facts: TransitionFacts = { now, predecessorUnfinished: !isTerminal(before.status) && hasUnfinishedBefore(queue.unfinished, before.seq), ...this.conversationOf(before.conversationId) };
    const decision = decide(before, facts);
    const released = releasedBy(before, decision, queue.unfinished);
    const plan = planTransition(before, decision, released === null ? null : (this.records.get(released.deliveryId) ?? null), { now, unclaimedExpiryMs: this.unclaimedExpiryMs });
    if (plan !== null) this.apply([plan.decided, plan.woken], plan.queue, queue);
    if (failClosesWindow(before, decision?.next)) this.windowClosed(before.conversationId, now);
    return { before, decision, next: plan?.next ?? null };
  }

  /** A new delivery at the end of its conversation's queue (`planAppend`), with its notification. */
  append(input: AppendInput): DeliveryRecord {
    const queue = this.queue(input.conversationId);
    const { write, queue: after } = planAppend(queue, input, this.unclaimedExpiryMs);
    queue.nextSeq = after.nextSeq;
    queue.unfinished.set(write.record.seq, write.record.deliveryId);
    this.apply([write], null, queue);
    return write.record;
  }

  /** The lease expiries and liveness checks that are due (the service's lazy expiry and its sweeper). */
  sweep(now: number): void {
    for (const deliveryId of [...this.records.keys()]) {
      this.transition(deliveryId, now, (d) => decideLeaseExpiry(d, now));
      this.transition(deliveryId, now, (d) => (d.liveness !== undefined && d.liveness.checkAt <= now ? decideLivenessCheck(d, d.liveness.checkAt, now) : null));
    }
  }

  /** The notifications due at `now`, taken out of the outbox. */
  takeDue(now: number): OutboxEntry[] {
    const due = this.outbox.filter((entry) => entry.at <= now);
    for (const entry of due) this.outbox.splice(this.outbox.indexOf(entry), 1);
    return due;
  }

  /** This store's writer of a plan: the records, their notifications, the queue's unfinished deliveries (see above for the rest). */
  private apply(writes: ReadonlyArray<RecordWrite | null>, change: QueueChange | null, queue: { unfinished: Map<number, string> }): void {
    for (const write of writes) {
      if (write === null) continue;
      this.records.set(write.record.deliveryId, write.record);
      if (write.notify !== null) this.outbox.push({ deliveryId: write.record.deliveryId, at: write.notify.at, reason: write.notify.reason });
    }
    if (change?.terminalSeq != null) queue.unfinished.delete(change.terminalSeq);
  }
}
