/**
 * `createReceiptTracker`: from the channel's message ids back to the deliveries, so that a
 * channel's delivery reports become `deliveries.receipt` calls (docs/contract.md#receipts).
 * Channels report receipts with THEIR message id; the service wants the `deliveryId`.
 */
import type { DeliveryNotification, ReceiptResult } from '../types.js';
import type { DeliveriesApi } from './deliveries.js';
import { traceIdOf } from './notification.js';
import type { ProcessDeliveryResult } from './results.js';

/** How many provider message ids the default in-memory store keeps; past it, the oldest are forgotten first. */
export const DEFAULT_RECEIPT_MEMORY_ENTRIES = 10_000;

/**
 * At most this many receipts are held for parts not recorded as sent yet (`not_yet_sent`), and at
 * most this many such parts are known; past it, the oldest is dropped (`onHeldReceipt`: `overflow`).
 */
export const MAX_HELD_RECEIPTS = 1_000;

/**
 * How long a part announced with `sending` (and a receipt held for it) waits for its delivery's
 * `remember`: the lease a reply is sent under is 2 minutes and can be extended, so 15 minutes is
 * well past any completion; then it is dropped (`onHeldReceipt`: `expired`).
 */
export const HELD_RECEIPT_MAX_AGE_MS = 15 * 60_000;

/** What the tracker keeps per provider message id. */
export interface TrackedDelivery {
  deliveryId: string;
  /** The delivery's W3C `traceparent`, when it had one: sent with its receipts. */
  traceparent?: string;
}

/**
 * Where the tracker keeps `providerMessageId -> TrackedDelivery`. The default keeps them in
 * memory, lost on a restart; receipts may come days later, so a production connector passes one
 * backed by its own storage (a table keyed by the provider message id). Each method may return a
 * promise; what it throws or rejects with reaches the caller of `remember` / `report`.
 */
export interface ReceiptStore {
  get(providerMessageId: string): TrackedDelivery | undefined | Promise<TrackedDelivery | undefined>;
  set(providerMessageId: string, delivery: TrackedDelivery): void | Promise<void>;
  delete(providerMessageId: string): void | Promise<void>;
}

/** The client operation the tracker needs (a `ConnectorClient`). */
export interface ReceiptTrackerClient {
  readonly deliveries: Pick<DeliveriesApi, 'receipt'>;
}

export interface ReceiptTrackerOptions {
  /** Where the mapping lives; default an in-memory store of at most `maxEntries` ids. */
  store?: ReceiptStore;
  /** Bound of the default in-memory store (default `DEFAULT_RECEIPT_MEMORY_ENTRIES`); not used with `store`. */
  maxEntries?: number;
  /**
   * What became of each receipt `report` held (`not_yet_sent`): reported when its delivery was
   * remembered, or dropped. Called from `remember` (and, for a drop, from any call); what it
   * throws is ignored.
   */
  onHeldReceipt?: (outcome: HeldReceiptOutcome) => void;
  /** Epoch ms now (default `Date.now`): the age of held receipts (tests pass a fake clock). */
  now?: () => number;
}

/** What the channel said about one of its messages (the receipt's `status`). */
export type ReceiptReportStatus = 'delivered' | 'read' | 'failed';

export interface ReceiptReportOptions {
  /** The channel's reason (snake_case); required with `failed`. */
  code?: string;
  /** The channel's time of the event, epoch ms (default: when the service receives it). */
  at?: number;
  /** Aborts the receipt call (including a pending retry wait). */
  signal?: AbortSignal;
}

/**
 * What `report` did:
 * - `reported`: the service took the receipt, for `deliveryId`;
 * - `not_yet_sent`: the id is a part of a reply being sent (announced with `sending`) whose
 *   delivery is not remembered as sent yet — the channel's receipt overtook the completion. The
 *   receipt is held (bounded: `MAX_HELD_RECEIPTS`, `HELD_RECEIPT_MAX_AGE_MS`) and reported when
 *   `remember` records the delivery (`onHeldReceipt` says what became of it). Answer the webhook: it
 *   need not come again;
 * - `unknown_message`: the id is neither remembered nor being sent: not a reply of this connector,
 *   forgotten, or already given a final receipt. Nothing was called.
 */
export type ReceiptReport =
  | { status: 'reported'; deliveryId: string; result: ReceiptResult }
  | { status: 'not_yet_sent'; deliveryId: string; providerMessageId: string }
  | { status: 'unknown_message'; providerMessageId: string };

/**
 * What became of a held receipt: `reported` (the service took it), `failed` (the receipt call
 * failed: `error`), or `dropped` — its part's delivery was remembered as not sent (`not_sent`), it
 * waited longer than `HELD_RECEIPT_MAX_AGE_MS` (`expired`), or more than `MAX_HELD_RECEIPTS` waited
 * (`overflow`, the oldest first).
 */
export type HeldReceiptOutcome = { providerMessageId: string; deliveryId: string; status: ReceiptReportStatus } & (
  | { outcome: 'reported'; result: ReceiptResult }
  | { outcome: 'failed'; error: unknown }
  | { outcome: 'dropped'; reason: 'not_sent' | 'expired' | 'overflow' }
);

export interface ReceiptTracker {
  /**
   * Remembers the provider ids of a `sent` result (`processDelivery`'s, or the `result` of a
   * `handled` event), with the traceparent of `notification` when it has a well-formed one (the one the delivery
   * was processed from, e.g. the `handled` event's `notification`). Any other result, or none,
   * is ignored. Resolves true when something was remembered.
   */
  remember(result: ProcessDeliveryResult | undefined, notification?: DeliveryNotification | { traceparent?: string }): Promise<boolean>;
  /**
   * Announces provider ids of a reply while it is being sent (call it from your `send` as each part
   * is accepted by the channel, with the `deliveryId` your `send` received): a receipt for one of
   * them that comes before the delivery is remembered is held (`not_yet_sent`) instead of answered
   * `unknown_message`, and reported by `remember`. A result that is not `sent` for the delivery drops
   * what was held for it. Kept in memory only, `HELD_RECEIPT_MAX_AGE_MS` at most.
   */
  sending(deliveryId: string, providerMessageIds: string | readonly string[]): void;
  /**
   * Reports what the channel said about its message `providerMessageId`: `deliveries.receipt`
   * for the remembered delivery, with that `providerMessageId` and the delivery's traceparent.
   * An id the tracker does not know resolves `{ status: 'unknown_message' }` (no call, no throw).
   * After a final receipt (`read`, `failed`) was taken, the id is forgotten (`store.delete`): the
   * service ignores anything later anyway. Errors of the call (a 503 after the SDK's retries, a
   * 409 `delivery_not_sent`) are thrown: answer the channel's webhook so that it tries again.
   */
  report(providerMessageId: string, status: ReceiptReportStatus, options?: ReceiptReportOptions): Promise<ReceiptReport>;
}

/** The default store: a `Map` in insertion order, the oldest entry evicted past `maxEntries`. */
function memoryStore(maxEntries: number): ReceiptStore {
  const entries = new Map<string, TrackedDelivery>();
  return {
    get: (id) => entries.get(id),
    set(id, delivery) {
      // Re-inserting moves the id to the newest end, so eviction stays oldest-first.
      entries.delete(id);
      entries.set(id, delivery);
      for (const oldest of entries.keys()) {
        if (entries.size <= maxEntries) break;
        entries.delete(oldest);
      }
    },
    delete(id) {
      entries.delete(id);
    },
  };
}

/** The traceparent `source` carries, when it is well-formed (as `processDelivery` forwards one: anything else is not sent). */
function traceparentOf(source: unknown): string | undefined {
  const value = typeof source === 'object' && source !== null ? (source as { traceparent?: unknown }).traceparent : undefined;
  return typeof value === 'string' && traceIdOf(value) !== undefined ? value : undefined;
}

/** Receipt statuses after which nothing can change (docs/contract.md#receipts: receipts only move forward). */
const FINAL: ReadonlySet<ReceiptReportStatus> = new Set(['read', 'failed']);

/**
 * Keeps `providerMessageId -> deliveryId` for the deliveries this connector sent, and turns the
 * channel's delivery reports into `deliveries.receipt` calls.
 *
 * ```ts
 * const receipts = createReceiptTracker({ client, store: myTableStore });
 * runPullLoop(client, subscription, send, {
 *   onEvent: (e) => e.type === 'handled' && void receipts.remember(e.result, e.notification).catch(log.warn),
 * });
 * // the channel's webhook:
 * const r = await receipts.report(body.messageId, body.status);
 * ```
 */
export function createReceiptTracker(client: ReceiptTrackerClient, options: ReceiptTrackerOptions = {}): ReceiptTracker {
  if (typeof client?.deliveries?.receipt !== 'function') throw new TypeError('createReceiptTracker needs a client with deliveries.receipt');
  const maxEntries = options.maxEntries ?? DEFAULT_RECEIPT_MEMORY_ENTRIES;
  if (options.store === undefined && (!Number.isInteger(maxEntries) || maxEntries < 1)) throw new RangeError('maxEntries must be a positive integer');
  const store = options.store ?? memoryStore(maxEntries);
  const now = options.now ?? Date.now;
  if (typeof now !== 'function') throw new TypeError('now must be a function');
  const held = new HeldReceipts(now, options.onHeldReceipt);

  const send = (delivery: TrackedDelivery, providerMessageId: string, status: ReceiptReportStatus, extra: { code?: string; at?: number; signal?: AbortSignal }): Promise<ReceiptResult> =>
    client.deliveries.receipt(
      { deliveryId: delivery.deliveryId, status, providerMessageId, ...(extra.code === undefined ? {} : { code: extra.code }), ...(extra.at === undefined ? {} : { at: extra.at }) },
      { ...(delivery.traceparent === undefined ? {} : { traceparent: delivery.traceparent }), ...(extra.signal === undefined ? {} : { signal: extra.signal }) },
    );

  return {
    async remember(result, notification) {
      if (result === undefined || result === null || typeof result !== 'object') return false;
      // This attempt did not send (failed, unknown, retried later): what was held for its parts will
      // not be taken. Skipped or already finished: another attempt may still remember them.
      if (result.kind === 'failed' || result.kind === 'unknown' || result.kind === 'retry_scheduled') held.dropDelivery(result.deliveryId);
      if (result.kind !== 'sent') return false;
      const traceparent = traceparentOf(notification);
      const delivery: TrackedDelivery = traceparent === undefined ? { deliveryId: result.deliveryId } : { deliveryId: result.deliveryId, traceparent };
      for (const id of result.providerMessageIds) await store.set(id, delivery);
      // The receipts that overtook the completion, in the order they came.
      for (const receipt of held.release(result.deliveryId)) {
        try {
          const answer = await send(delivery, receipt.providerMessageId, receipt.status, receipt);
          if (FINAL.has(receipt.status)) await store.delete(receipt.providerMessageId);
          held.emit({ providerMessageId: receipt.providerMessageId, deliveryId: delivery.deliveryId, status: receipt.status, outcome: 'reported', result: answer });
        } catch (error) {
          held.emit({ providerMessageId: receipt.providerMessageId, deliveryId: delivery.deliveryId, status: receipt.status, outcome: 'failed', error });
        }
      }
      return true;
    },

    sending(deliveryId, providerMessageIds) {
      if (typeof deliveryId !== 'string' || deliveryId === '') throw new TypeError('sending needs a deliveryId');
      const ids = typeof providerMessageIds === 'string' ? [providerMessageIds] : providerMessageIds;
      if (!Array.isArray(ids) || !ids.every((id) => typeof id === 'string' && id !== '')) throw new TypeError('sending needs provider message ids (non-empty strings)');
      for (const id of ids) held.announce(id, deliveryId);
    },

    async report(providerMessageId, status, reportOptions = {}) {
      if (typeof providerMessageId !== 'string' || providerMessageId === '') throw new TypeError('report needs a providerMessageId');
      // Caught here rather than answered 400 by the service: the contract requires a code with `failed`.
      if (status === 'failed' && (reportOptions.code === undefined || reportOptions.code === '')) throw new TypeError('a failed receipt needs a code');
      const delivery = await store.get(providerMessageId);
      if (delivery === undefined) {
        const deliveryId = held.hold(providerMessageId, status, reportOptions);
        return deliveryId === undefined ? { status: 'unknown_message', providerMessageId } : { status: 'not_yet_sent', deliveryId, providerMessageId };
      }
      const result = await send(delivery, providerMessageId, status, reportOptions);
      if (FINAL.has(status)) await store.delete(providerMessageId);
      return { status: 'reported', deliveryId: delivery.deliveryId, result };
    },
  };
}

/** A receipt waiting for its part's delivery to be remembered (as long as its part is announced). */
interface HeldReceipt {
  providerMessageId: string;
  status: ReceiptReportStatus;
  code?: string;
  at?: number;
}

/**
 * The parts announced as being sent (`sending`) and the receipts held for them, in memory, in
 * insertion order (the oldest first out), bounded in count (`MAX_HELD_RECEIPTS` each) and in age
 * (`HELD_RECEIPT_MAX_AGE_MS` from the part's announcement, checked on every call: no timer keeps
 * the process alive).
 */
class HeldReceipts {
  /** providerMessageId -> the delivery it is a part of, and when it was announced. */
  readonly #parts = new Map<string, { deliveryId: string; at: number }>();
  readonly #receipts: HeldReceipt[] = [];
  readonly #now: () => number;
  readonly #onHeld: ((outcome: HeldReceiptOutcome) => void) | undefined;

  constructor(now: () => number, onHeld: ((outcome: HeldReceiptOutcome) => void) | undefined) {
    this.#now = now;
    this.#onHeld = onHeld;
  }

  emit(outcome: HeldReceiptOutcome): void {
    try {
      this.#onHeld?.(outcome);
    } catch {
      // An observer must never change what the tracker does.
    }
  }

  announce(providerMessageId: string, deliveryId: string): void {
    this.#expire();
    this.#parts.delete(providerMessageId);
    this.#parts.set(providerMessageId, { deliveryId, at: this.#now() });
    for (const oldest of this.#parts.keys()) {
      if (this.#parts.size <= MAX_HELD_RECEIPTS) break;
      this.#forgetPart(oldest, 'overflow');
    }
  }

  /** Holds the receipt when its id is an announced part; returns the part's deliveryId, or undefined (not ours). */
  hold(providerMessageId: string, status: ReceiptReportStatus, options: { code?: string; at?: number }): string | undefined {
    this.#expire();
    const part = this.#parts.get(providerMessageId);
    if (part === undefined) return undefined;
    this.#receipts.push({ providerMessageId, status, ...(options.code === undefined ? {} : { code: options.code }), ...(options.at === undefined ? {} : { at: options.at }) });
    while (this.#receipts.length > MAX_HELD_RECEIPTS) this.#drop(this.#receipts.shift(), 'overflow');
    return part.deliveryId;
  }

  /** The receipts held for the delivery's parts, in the order they came; its parts are no longer announced. */
  release(deliveryId: string): HeldReceipt[] {
    this.#expire();
    const mine = new Set([...this.#parts].filter(([, part]) => part.deliveryId === deliveryId).map(([id]) => id));
    for (const id of mine) this.#parts.delete(id);
    const released = this.#receipts.filter((r) => mine.has(r.providerMessageId));
    this.#keep((r) => !mine.has(r.providerMessageId));
    return released;
  }

  /** The delivery ended without being sent: its parts and their receipts go. */
  dropDelivery(deliveryId: string): void {
    for (const [id, part] of [...this.#parts]) if (part.deliveryId === deliveryId) this.#forgetPart(id, 'not_sent');
  }

  #forgetPart(providerMessageId: string, reason: 'not_sent' | 'expired' | 'overflow'): void {
    const part = this.#parts.get(providerMessageId);
    this.#parts.delete(providerMessageId);
    if (part === undefined) return;
    for (const r of this.#receipts) if (r.providerMessageId === providerMessageId) this.emit({ providerMessageId, deliveryId: part.deliveryId, status: r.status, outcome: 'dropped', reason });
    this.#keep((r) => r.providerMessageId !== providerMessageId);
  }

  #drop(receipt: HeldReceipt | undefined, reason: 'overflow'): void {
    if (receipt === undefined) return;
    const deliveryId = this.#parts.get(receipt.providerMessageId)?.deliveryId ?? '';
    this.emit({ providerMessageId: receipt.providerMessageId, deliveryId, status: receipt.status, outcome: 'dropped', reason });
  }

  #keep(predicate: (r: HeldReceipt) => boolean): void {
    const kept = this.#receipts.filter(predicate);
    this.#receipts.splice(0, this.#receipts.length, ...kept);
  }

  /** Parts announced longer ago than `HELD_RECEIPT_MAX_AGE_MS` are dropped, with the receipts held for them. */
  #expire(): void {
    const limit = this.#now() - HELD_RECEIPT_MAX_AGE_MS;
    for (const [id, part] of [...this.#parts]) if (part.at < limit) this.#forgetPart(id, 'expired');
  }
}
