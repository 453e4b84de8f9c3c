import { randomUUID } from 'node:crypto';
import type {
  ClaimInput,
  DeliveryNotification,
  ClaimResult,
  CompleteInput,
  CompleteResult,
  ExtendResult,
  FailInput,
  FailResult,
  LeaseInput,
  PendingOptions,
  PendingPage,
  ReceiptInput,
  ReceiptResult,
  StartResult,
} from '../types.js';
import {
  claimDelivery,
  completeDelivery,
  extendDeliveryLease,
  failDelivery,
  listPendingDeliveries,
  reportDeliveryReceipt,
  startDelivery,
  type ClaimDeliveryRequest,
  type CompleteDeliveryRequest,
  type ExtendDeliveryLeaseRequest,
  type FailDeliveryRequest,
  type ListPendingDeliveriesRequest,
  type ReportDeliveryReceiptRequest,
  type StartDeliveryRequest,
} from './api.generated.js';
import { readNotification } from './notification.js';
import { readOperation } from './response.js';
import type { CallOptions, Transport } from './transport.js';

/**
 * A page of the catch-up list as documented, and more than the document can say: every item a
 * valid notification (what `processDelivery` is given), a cursor that is never empty.
 */
function validPage(page: PendingPage): PendingPage | undefined {
  if (page.nextCursor === '') return undefined;
  const deliveries = page.deliveries.map((item) => readNotification(item));
  return deliveries.every((d) => d !== undefined) ? { deliveries, nextCursor: page.nextCursor } : undefined;
}

/** `client.deliveries`: the delivery operations (docs/contract.md#claim to docs/contract.md#receipts), one HTTP call each (plus retries). */
export class DeliveriesApi {
  readonly #transport: Transport;

  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /**
   * Claims a delivery: `ready` with a lease of `LEASE_MS`, the reply text and recipient, or `skip`
   * with a reason. The `requestId` (generated when omitted) is reused on retries, so a retried
   * claim whose first answer was lost gets the same lease back.
   */
  async claim(input: ClaimInput, options: CallOptions = {}): Promise<ClaimResult> {
    const json: ClaimDeliveryRequest = { deliveryId: input.deliveryId, requestId: input.requestId ?? randomUUID() };
    const answer = await this.#transport.post(claimDelivery.path, { json }, options);
    return readOperation(answer, claimDelivery);
  }

  /** Records the intent to send. Send through the provider only when the answer is `sending`. */
  async start(input: LeaseInput, options: CallOptions = {}): Promise<StartResult> {
    const json: StartDeliveryRequest = { deliveryId: input.deliveryId, leaseId: input.leaseId };
    const answer = await this.#transport.post(startDelivery.path, { json }, options);
    return readOperation(answer, startDelivery);
  }

  /**
   * Extends the lease while the provider call is still running: the lease then ends `LEASE_MS`
   * from now, but never later than `LEASE_MAX_MS` after its claim. Only under the live current
   * lease of a delivery that is leased or sending; otherwise a `ConflictError` with code
   * `lease_lost` (expired or replaced), `delivery_finished`, or `lease_limit_reached` (the lease
   * already ends `LEASE_MAX_MS` after its claim). `processDelivery` calls it for you.
   */
  async extend(input: LeaseInput, options: CallOptions = {}): Promise<ExtendResult> {
    const json: ExtendDeliveryLeaseRequest = { deliveryId: input.deliveryId, leaseId: input.leaseId };
    const answer = await this.#transport.post(extendDeliveryLease.path, { json }, options);
    return readOperation(answer, extendDeliveryLease);
  }

  /** Reports a send the provider accepted. Only call it when the provider actually accepted the message. */
  async complete(input: CompleteInput, options: CallOptions = {}): Promise<CompleteResult> {
    const json: CompleteDeliveryRequest = { deliveryId: input.deliveryId, leaseId: input.leaseId, providerMessageIds: [...input.providerMessageIds] };
    const answer = await this.#transport.post(completeDelivery.path, { json }, options);
    return readOperation(answer, completeDelivery);
  }

  /** Reports a failed, temporarily rejected or ambiguous send. */
  async fail(input: FailInput, options: CallOptions = {}): Promise<FailResult> {
    const json: FailDeliveryRequest = { deliveryId: input.deliveryId, leaseId: input.leaseId, outcome: input.outcome, code: input.code };
    if (input.retryAfterMs !== undefined) json.retryAfterMs = input.retryAfterMs;
    if (input.providerMessageIds !== undefined) json.providerMessageIds = [...input.providerMessageIds];
    const answer = await this.#transport.post(failDelivery.path, { json }, options);
    return readOperation(answer, failDelivery);
  }

  /**
   * The deliveries you can claim now, oldest first, page by page: an async iterator that follows
   * the cursors until the last page. Call it at start-up and every few minutes, and claim each
   * item as if it had been notified (e.g. with `processDelivery`), so that a lost notification
   * never blocks a conversation. Deliveries that arrive while you page come after the current
   * position; a claimed one leaves the list.
   *
   * ```ts
   * for await (const page of client.deliveries.pending()) {
   *   for (const notification of page.deliveries) await client.processDelivery(notification, send);
   * }
   * ```
   */
  async *pending(options: PendingOptions = {}): AsyncGenerator<PendingPage, void, undefined> {
    let cursor: string | null = null;
    do {
      const json: ListPendingDeliveriesRequest = {};
      if (options.limit !== undefined) json.limit = options.limit;
      if (cursor !== null) json.cursor = cursor;
      const answer = await this.#transport.post(listPendingDeliveries.path, { json }, options.signal === undefined ? {} : { signal: options.signal });
      const page = readOperation(answer, listPendingDeliveries, { refine: validPage });
      yield page;
      cursor = page.nextCursor;
    } while (cursor !== null);
  }

  /**
   * The same list as `pending()`, one notification at a time (it pages for you, fetching the next
   * page only when the current one is used up). Breaking out of the loop stops the listing.
   *
   * ```ts
   * for await (const notification of client.deliveries.pendingItems()) await client.processDelivery(notification, send);
   * ```
   */
  async *pendingItems(options: PendingOptions = {}): AsyncGenerator<DeliveryNotification, void, undefined> {
    for await (const page of this.pending(options)) yield* page.deliveries;
  }

  /**
   * Reports what the channel said after the provider accepted the message (`delivered`, `read`,
   * or `failed` with a `code`). Only for a delivery that is `sent`; safe to repeat, and receipts
   * only move forward (a late `delivered` after `read` changes nothing).
   */
  async receipt(input: ReceiptInput, options: CallOptions = {}): Promise<ReceiptResult> {
    const json: ReportDeliveryReceiptRequest = { deliveryId: input.deliveryId, status: input.status };
    if (input.code !== undefined) json.code = input.code;
    if (input.at !== undefined) json.at = input.at;
    if (input.providerMessageId !== undefined) json.providerMessageId = input.providerMessageId;
    const answer = await this.#transport.post(reportDeliveryReceipt.path, { json }, options);
    return readOperation(answer, reportDeliveryReceipt);
  }
}
