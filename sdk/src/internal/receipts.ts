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
 * What `report` did: `reported` (the service took the receipt, for `deliveryId`), or
 * `unknown_message` (the id is not remembered: not a reply of this connector, forgotten, or
 * already given a final receipt); nothing was called then.
 */
export type ReceiptReport = { status: 'reported'; deliveryId: string; result: ReceiptResult } | { status: 'unknown_message'; providerMessageId: string };

export interface ReceiptTracker {
  /**
   * Remembers the provider ids of a `sent` result (`processDelivery`'s, or the `result` of a
   * `handled` event), with the traceparent of `notification` when it has a well-formed one (the one the delivery
   * was processed from, e.g. the `handled` event's `notification`). Any other result, or none,
   * is ignored. Resolves true when something was remembered.
   */
  remember(result: ProcessDeliveryResult | undefined, notification?: DeliveryNotification | { traceparent?: string }): Promise<boolean>;
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

  return {
    async remember(result, notification) {
      if (result?.kind !== 'sent') return false;
      const traceparent = traceparentOf(notification);
      const delivery: TrackedDelivery = traceparent === undefined ? { deliveryId: result.deliveryId } : { deliveryId: result.deliveryId, traceparent };
      for (const id of result.providerMessageIds) await store.set(id, delivery);
      return true;
    },

    async report(providerMessageId, status, reportOptions = {}) {
      if (typeof providerMessageId !== 'string' || providerMessageId === '') throw new TypeError('report needs a providerMessageId');
      // Caught here rather than answered 400 by the service: the contract requires a code with `failed`.
      if (status === 'failed' && (reportOptions.code === undefined || reportOptions.code === '')) throw new TypeError('a failed receipt needs a code');
      const delivery = await store.get(providerMessageId);
      if (delivery === undefined) return { status: 'unknown_message', providerMessageId };
      const { deliveryId, traceparent } = delivery;
      const result = await client.deliveries.receipt(
        { deliveryId, status, providerMessageId, ...(reportOptions.code === undefined ? {} : { code: reportOptions.code }), ...(reportOptions.at === undefined ? {} : { at: reportOptions.at }) },
        { ...(traceparent === undefined ? {} : { traceparent }), ...(reportOptions.signal === undefined ? {} : { signal: reportOptions.signal }) },
      );
      if (FINAL.has(status)) await store.delete(providerMessageId);
      return { status: 'reported', deliveryId, result };
    },
  };
}
