import { createHash, randomUUID } from 'node:crypto';
import { AttachmentIntegrityError, UnexpectedResponseError } from '../errors.js';
import type {
  AttachmentFile,
  AttachmentInput,
  DeliveryPart,
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
import { LIFECYCLE_KINDS } from './contract.generated.js';
import { readNotification } from './notification.js';
import { isObject, readOperation } from './response.js';

/** The delivery kinds this SDK version reads (the claim's `kind`; absent for a reply): edits, unsends and starts. */
const KNOWN_KINDS: ReadonlySet<string> = new Set([...LIFECYCLE_KINDS, 'start']);
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

/** A copy of the per-part outcomes for a request body (the caller may pass readonly arrays). */
function partsJson(parts: readonly DeliveryPart[]): DeliveryPart[] {
  return parts.map((p) => ({
    part: p.part,
    status: p.status,
    ...(p.providerMessageIds === undefined ? {} : { providerMessageIds: [...p.providerMessageIds] }),
    ...(p.code === undefined ? {} : { code: p.code }),
  }));
}

const SHA256_HEX = /^[0-9a-f]{64}$/;

/**
 * `POST /v1/deliveries/attachment` (getDeliveryAttachment, docs/contract.md#fetch-an-attachment):
 * answers the file's bytes. The generator makes no reader for an operation whose answer is a file,
 * so its path is written here.
 */
const getDeliveryAttachment = { operationId: 'getDeliveryAttachment', method: 'POST', path: '/v1/deliveries/attachment' } as const;

/** The operations that answer a file, called by hand (sdk/test/unit/surface.test.ts checks them against the API document). */
export const FILE_OPERATIONS = { getDeliveryAttachment } as const;

/** The SHA-256 an `ETag` names (`"<64 hex>"`, weak or strong), or undefined. */
export function etagSha256(etag: string | null): string | undefined {
  const match = etag === null ? null : /^\s*(?:W\/)?"([0-9a-fA-F]{64})"\s*$/.exec(etag);
  return match?.[1]?.toLowerCase();
}

/** The `sha-256` of an RFC 9530 `Repr-Digest` header (`sha-256=:<base64>:`), as lowercase hex, or undefined. */
export function reprDigestSha256(header: string | null): string | undefined {
  if (header === null) return undefined;
  for (const member of header.split(',')) {
    const match = /^\s*sha-256\s*=\s*:([A-Za-z0-9+/]+={0,2}):\s*$/i.exec(member);
    if (!match?.[1]) continue;
    const bytes = Buffer.from(match[1], 'base64');
    if (bytes.length === 32) return bytes.toString('hex');
  }
  return undefined;
}

/** The file name of a `Content-Disposition` header (`filename*=UTF-8''…` preferred over `filename="…"`). */
export function dispositionName(header: string | null): string | undefined {
  if (header === null) return undefined;
  const extended = /filename\*\s*=\s*UTF-8''([^;]+)/i.exec(header);
  if (extended?.[1]) {
    try {
      return decodeURIComponent(extended[1].trim());
    } catch {
      // a malformed encoding: fall back to the plain parameter
    }
  }
  const plain = /filename\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;\s]+))/i.exec(header);
  const value = plain?.[1]?.replace(/\\(.)/g, '$1') ?? plain?.[2];
  return value === undefined || value === '' ? undefined : value;
}

/** `client.deliveries`: the delivery operations (docs/contract.md#claim to docs/contract.md#receipts), one HTTP call each (plus retries). */
export class DeliveriesApi {
  readonly #transport: Transport;

  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /**
   * Claims a delivery: `ready` with a lease of `LEASE_MS`, the reply text and recipient, or `skip`
   * with a reason. A `ready` edit or unsend (integrations with `replies.lifecycle`) has `kind` and
   * `target`; a plain reply has neither. A `ready` answer of a kind this SDK version does not know
   * keeps its `kind` (any other string): never send it as a reply (processDelivery fails it
   * `unsupported_kind`). The `requestId` (generated when omitted) is reused on retries, so a retried
   * claim whose first answer was lost gets the same lease back.
   */
  async claim(input: ClaimInput, options: CallOptions = {}): Promise<ClaimResult> {
    const json: ClaimDeliveryRequest = { deliveryId: input.deliveryId, requestId: input.requestId ?? randomUUID() };
    const answer = await this.#transport.post(claimDelivery.path, { json }, options);
    const raw = answer.body;
    if (isObject(raw) && raw.status === 'ready' && typeof raw.kind === 'string' && !KNOWN_KINDS.has(raw.kind)) {
      // A kind added by a later service version: the reader would take it for a reply (the
      // documented fields only) and it would be SENT. Keep its `kind`, so that processDelivery
      // fails it `unsupported_kind` and a caller of claim can tell.
      const message = isObject(raw.message) ? { text: '', ...raw.message } : raw.message;
      const { kind: _kind, target: _target, ...rest } = raw;
      return Object.assign(readOperation(answer, claimDelivery, { body: { ...rest, message } }), { kind: raw.kind });
    }
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
    if (input.parts !== undefined) json.parts = partsJson(input.parts);
    // A start's thread (docs/contract.md#conversations-the-desk-starts), copied: the caller's object is not sent as it is.
    if (input.conversation !== undefined) {
      const { externalConversationId, externalCustomerId, metadata } = input.conversation;
      json.conversation = { externalConversationId, externalCustomerId, ...(metadata !== undefined ? { metadata: { ...metadata } } : {}) };
    }
    const answer = await this.#transport.post(completeDelivery.path, { json }, options);
    return readOperation(answer, completeDelivery);
  }

  /** Reports a failed, temporarily rejected or ambiguous send. */
  async fail(input: FailInput, options: CallOptions = {}): Promise<FailResult> {
    const json: FailDeliveryRequest = { deliveryId: input.deliveryId, leaseId: input.leaseId, outcome: input.outcome, code: input.code };
    if (input.retryAfterMs !== undefined) json.retryAfterMs = input.retryAfterMs;
    if (input.providerMessageIds !== undefined) json.providerMessageIds = [...input.providerMessageIds];
    if (input.parts !== undefined) json.parts = partsJson(input.parts);
    const answer = await this.#transport.post(failDelivery.path, { json }, options);
    return readOperation(answer, failDelivery);
  }

  /**
   * Downloads one file of a reply under the live lease of its delivery (`leased` or `sending`):
   * the bytes, checked against the SHA-256 of the answer's `ETag` and `Repr-Digest` and against
   * `expectedSha256` (the claim's `sha256`) when given. A mismatch throws `AttachmentIntegrityError`
   * (`inTransit` tells a damaged download from a file that differs from the claim). An expired or
   * replaced lease is `ConflictError` `lease_lost`, a finished delivery `delivery_finished`, an id
   * not on the delivery `NotFoundError`. Retries (network, 503) as every call; the file is at most
   * 10 MB and is held in memory.
   */
  async attachment(input: AttachmentInput, options: CallOptions = {}): Promise<AttachmentFile> {
    const json = { deliveryId: input.deliveryId, leaseId: input.leaseId, attachmentId: input.attachmentId };
    const answer = await this.#transport.postForBytes(getDeliveryAttachment.path, json, options);
    const origin = { status: answer.status, method: getDeliveryAttachment.method, path: getDeliveryAttachment.path, requestId: answer.requestId, attempts: answer.attempts };
    const sha256 = createHash('sha256').update(answer.bytes).digest('hex');
    const digests = [etagSha256(answer.headers.get('etag')), reprDigestSha256(answer.headers.get('repr-digest'))].filter((d) => d !== undefined);
    const expected = input.expectedSha256?.toLowerCase();
    if (expected !== undefined && !SHA256_HEX.test(expected)) throw new TypeError('expectedSha256 must be 64 hex digits');
    // The answer always carries its digest (docs/contract.md#fetch-an-attachment); without one, and nothing
    // to compare with, the bytes could not be checked at all.
    if (digests.length === 0 && expected === undefined) {
      throw new UnexpectedResponseError({ ...origin, code: 'missing_digest', detail: 'the file answer has no ETag or Repr-Digest with its SHA-256' });
    }
    const wrongInTransit = digests.find((d) => d !== sha256);
    if (wrongInTransit !== undefined) throw new AttachmentIntegrityError({ attachmentId: input.attachmentId, expectedSha256: wrongInTransit, actualSha256: sha256, inTransit: true });
    if (expected !== undefined && expected !== sha256) throw new AttachmentIntegrityError({ attachmentId: input.attachmentId, expectedSha256: expected, actualSha256: sha256, inTransit: false });
    const contentType = answer.headers.get('content-type') ?? 'application/octet-stream';
    return { attachmentId: input.attachmentId, bytes: answer.bytes, contentType, size: answer.bytes.length, sha256, name: dispositionName(answer.headers.get('content-disposition')) };
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
