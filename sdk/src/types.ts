/** Public request and response types. Times are Unix epoch milliseconds. */

/** `customer` (default on the service) or `service` (alerts). */
export type SenderKind = 'customer' | 'service';

export interface Sender {
  /** Stable identifier of the sender in your system. */
  externalId: string;
  displayName?: string;
  kind?: SenderKind;
}

/** An image attached to an incoming message (PNG, JPEG or static WebP; the service sniffs the bytes). */
export interface ImageInput {
  data: Uint8Array | Blob;
  /** Declared content type (e.g. `image/png`); defaults to the Blob's type or `application/octet-stream`. */
  contentType?: string;
  /**
   * File name sent in the multipart part; when missing or empty, `image-<n>` plus the extension of
   * the content type (e.g. `image-1.png`). The service never uses it as a path.
   */
  filename?: string;
}

export interface SendMessageInput {
  /**
   * Identifies the source event (not a ticket): keep it stable across YOUR retries of the same
   * event. When omitted the SDK generates one (`crypto.randomUUID()`) per `send` call and reuses
   * it for that call's HTTP retries.
   */
  eventId?: string;
  /** Stable identifier of the external chat. */
  externalConversationId: string;
  sender: Sender;
  /** Message text (at most 10000 characters); sent as `message.text`. */
  text?: string;
  /** Up to 3 images; when present the request is `multipart/form-data`. */
  images?: readonly ImageInput[];
}

export interface SendMessageResult {
  conversationId: string;
  messageId: string;
  /** `true` when the service had already accepted this `eventId` with the same content (HTTP 200). */
  duplicate: boolean;
  /** The `eventId` that was sent (the generated one when you omitted it). */
  eventId: string;
}

export interface ClaimInput {
  deliveryId: string;
  /** Identifies this claim; generated once per call when omitted and reused on its retries. */
  requestId?: string;
}

export interface Recipient {
  externalConversationId: string;
  externalCustomerId: string;
}

export interface ReplyMessage {
  text: string;
  recipient: Recipient;
}

/** Claim could not lease the delivery now. `waiting_for_previous`: acknowledge the notification; it will be re-published. */
export interface ClaimSkip {
  status: 'skip';
  reason: string;
}

export interface ClaimReady {
  status: 'ready';
  leaseId: string;
  /** Epoch ms; a lease lasts 120 seconds from claim (or from its latest extension). */
  leaseExpiresAt: number;
  message: ReplyMessage;
}

export type ClaimResult = ClaimSkip | ClaimReady;

export interface LeaseInput {
  deliveryId: string;
  leaseId: string;
}

/** The answer of `deliveries.extend`: the lease's new expiry. */
export interface ExtendResult {
  /** Epoch ms: 120 seconds from the extension, never later than 15 minutes after the claim. */
  leaseExpiresAt: number;
}

/** `sending`: send through the provider now. `sent`: already sent, do NOT send. */
export interface StartResult {
  status: 'sending' | 'sent';
}

export interface CompleteInput extends LeaseInput {
  /** 1 to 20 ids, each 1 to 200 characters. */
  providerMessageIds: readonly string[];
}

export interface CompleteResult {
  status: 'sent';
}

/** `retry`: definite temporary rejection. `failed`: permanent. `unknown`: ambiguous or partial send. */
export type FailOutcome = 'retry' | 'failed' | 'unknown';

export interface FailInput extends LeaseInput {
  outcome: FailOutcome;
  /** snake_case, `^[a-z][a-z0-9_]*$`, at most 80 characters. */
  code: string;
  /** Integer 0 to 3600000; only meaningful with `retry`. */
  retryAfterMs?: number;
  /** Ids of parts that were accepted (partial send); at most 20. */
  providerMessageIds?: readonly string[];
}

export interface FailResult {
  status: 'queued' | 'failed' | 'unknown' | 'sent';
}

/** Options of `deliveries.pending()`. */
export interface PendingOptions {
  /** Page size, 1 to 100 (default 50). */
  limit?: number;
  /** Aborts the listing (also a call in progress). */
  signal?: AbortSignal;
}

/** One page of the catch-up list: claimable deliveries, oldest first, each exactly a notification. */
export interface PendingPage {
  deliveries: DeliveryNotification[];
  /** The cursor of the next page, or null on the last one (the iterator follows it for you). */
  nextCursor: string | null;
}

/** What the channel said about a sent reply: reached the recipient, read, or failed after all. */
export type ReceiptStatus = 'delivered' | 'read' | 'failed';

export interface ReceiptInput {
  deliveryId: string;
  status: ReceiptStatus;
  /** Required with `failed`: snake_case, `^[a-z][a-z0-9_]*$`, at most 80 characters. */
  code?: string;
  /** When it happened by the channel's clock (epoch ms); default: when the service receives it. */
  at?: number;
  /** Which provider message it is about (1 to 200 characters), when the reply went out in parts. */
  providerMessageId?: string;
}

/** Receipts never change the delivery: it stays `sent`. */
export interface ReceiptResult {
  status: 'sent';
}

/** The delivery notification published to the integration's topic (docs/contract.md#notifications): identifiers only. */
export interface DeliveryNotification {
  deliveryId: string;
  workspaceId: string;
  integrationId: string;
  conversationId: string;
  messageId: string;
}
