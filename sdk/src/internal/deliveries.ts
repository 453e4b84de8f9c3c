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
import { readNotification } from './notification.js';
import { isObject, readAnswer, readStatus, type Json } from './response.js';
import type { CallOptions, Transport } from './transport.js';

/** A page of the catch-up list, every item a valid notification. */
function pendingPage(b: Json): PendingPage | undefined {
  if (!Array.isArray(b.deliveries) || !(b.nextCursor === null || (typeof b.nextCursor === 'string' && b.nextCursor !== ''))) return undefined;
  const deliveries = b.deliveries.map((item: unknown) => readNotification(item));
  return deliveries.every((d) => d !== undefined) ? { deliveries, nextCursor: b.nextCursor } : undefined;
}

/** The claim answer: `skip` with a reason, or `ready` with the lease and the message. */
function claimResult(b: Json): ClaimResult | undefined {
  if (b.status === 'skip' && typeof b.reason === 'string') return { status: 'skip', reason: b.reason };
  if (b.status !== 'ready' || typeof b.leaseId !== 'string' || typeof b.leaseExpiresAt !== 'number' || !isObject(b.message)) return undefined;
  const { text, recipient } = b.message;
  if (typeof text !== 'string' || !isObject(recipient) || typeof recipient.externalConversationId !== 'string' || typeof recipient.externalCustomerId !== 'string') return undefined;
  return {
    status: 'ready',
    leaseId: b.leaseId,
    leaseExpiresAt: b.leaseExpiresAt,
    message: { text, recipient: { externalConversationId: recipient.externalConversationId, externalCustomerId: recipient.externalCustomerId } },
  };
}

/** `client.deliveries`: the delivery operations (spec section 4 and receipts), one HTTP call each (plus retries). */
export class DeliveriesApi {
  readonly #transport: Transport;

  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /**
   * Claims a delivery: `ready` with a 120-second lease, the reply text and recipient, or `skip`
   * with a reason. The `requestId` (generated when omitted) is reused on retries, so a retried
   * claim whose first answer was lost gets the same lease back.
   */
  async claim(input: ClaimInput, options: CallOptions = {}): Promise<ClaimResult> {
    const path = '/v1/deliveries/claim';
    const body = { deliveryId: input.deliveryId, requestId: input.requestId ?? randomUUID() };
    const answer = await this.#transport.post(path, { json: body }, options);
    return readAnswer(answer, path, "{ status: 'skip', reason } or { status: 'ready', leaseId, leaseExpiresAt, message }", claimResult);
  }

  /** Records the intent to send. Send through the provider only when the answer is `sending`. */
  async start(input: LeaseInput, options: CallOptions = {}): Promise<StartResult> {
    const path = '/v1/deliveries/start';
    const answer = await this.#transport.post(path, { json: { deliveryId: input.deliveryId, leaseId: input.leaseId } }, options);
    return readStatus(answer, path, ['sending', 'sent'] as const);
  }

  /**
   * Extends the lease while the provider call is still running: the lease then ends 120 seconds
   * from now, but never later than 15 minutes after its claim. Only under the live current lease
   * of a delivery that is leased or sending; otherwise a `ConflictError` with code `lease_lost`
   * (expired or replaced), `delivery_finished`, or `lease_limit_reached` (the lease already ends
   * 15 minutes after its claim). `processDelivery` calls it for you.
   */
  async extend(input: LeaseInput, options: CallOptions = {}): Promise<ExtendResult> {
    const path = '/v1/deliveries/extend';
    const answer = await this.#transport.post(path, { json: { deliveryId: input.deliveryId, leaseId: input.leaseId } }, options);
    return readAnswer(answer, path, '{ leaseExpiresAt }', (b) =>
      typeof b.leaseExpiresAt === 'number' && Number.isFinite(b.leaseExpiresAt) ? { leaseExpiresAt: b.leaseExpiresAt } : undefined,
    );
  }

  /** Reports a send the provider accepted. Only call it when the provider actually accepted the message. */
  async complete(input: CompleteInput, options: CallOptions = {}): Promise<CompleteResult> {
    const path = '/v1/deliveries/complete';
    const json = { deliveryId: input.deliveryId, leaseId: input.leaseId, providerMessageIds: [...input.providerMessageIds] };
    const answer = await this.#transport.post(path, { json }, options);
    return readStatus(answer, path, ['sent'] as const);
  }

  /** Reports a failed, temporarily rejected or ambiguous send. */
  async fail(input: FailInput, options: CallOptions = {}): Promise<FailResult> {
    const path = '/v1/deliveries/fail';
    const json: Json = { deliveryId: input.deliveryId, leaseId: input.leaseId, outcome: input.outcome, code: input.code };
    if (input.retryAfterMs !== undefined) json.retryAfterMs = input.retryAfterMs;
    if (input.providerMessageIds !== undefined) json.providerMessageIds = [...input.providerMessageIds];
    const answer = await this.#transport.post(path, { json }, options);
    return readStatus(answer, path, ['queued', 'failed', 'unknown', 'sent'] as const);
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
    const path = '/v1/deliveries/pending';
    let cursor: string | null = null;
    do {
      const json: Json = {};
      if (options.limit !== undefined) json.limit = options.limit;
      if (cursor !== null) json.cursor = cursor;
      const answer = await this.#transport.post(path, { json }, options.signal === undefined ? {} : { signal: options.signal });
      const page = readAnswer(answer, path, '{ deliveries: [notification], nextCursor: string | null }', pendingPage);
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
    const path = '/v1/deliveries/receipt';
    const json: Json = { deliveryId: input.deliveryId, status: input.status };
    if (input.code !== undefined) json.code = input.code;
    if (input.at !== undefined) json.at = input.at;
    if (input.providerMessageId !== undefined) json.providerMessageId = input.providerMessageId;
    const answer = await this.#transport.post(path, { json }, options);
    return readStatus(answer, path, ['sent'] as const);
  }
}
