/**
 * Public request and response types. Times are Unix epoch milliseconds.
 *
 * The wire types come from the service's OpenAPI document (./internal/api.generated.ts, generated
 * by scripts/sdk-generate.mjs): a result type here is the documented answer itself, and an input
 * type is the documented request, except where the SDK fills a field for you (`eventId`,
 * `requestId`) or shapes it differently (`text` and `images` of a message).
 */
// By operation (operationId), not by component name: the operations are the stable part.
import type {
  AcknowledgeErasureRequest,
  AcknowledgeErasureResponse,
  ClaimDeliveryRequest,
  ClaimDeliveryResponse,
  CompleteDeliveryRequest,
  CompleteDeliveryResponse,
  ExtendDeliveryLeaseResponse,
  FailDeliveryRequest,
  FailDeliveryResponse,
  ListPendingDeliveriesResponse,
  ListPendingErasuresResponse,
  ReportDeliveryReceiptRequest,
  ReportDeliveryReceiptResponse,
  SendMessageRequest,
  SendMessageEventResponse,
  SendMessageResponse,
  StartDeliveryRequest,
  StartDeliveryResponse,
  UpdateChannelRequest,
  UpdateChannelResponse,
} from './internal/api.generated.js';


/** Who sent an incoming message: `externalId` (stable in your system), `displayName`, `kind`. */
export type Sender = SendMessageRequest['sender'];

/** `customer` (default on the service) or `service` (alerts). */
export type SenderKind = NonNullable<Sender['kind']>;

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
  /**
   * The channel's own id of this message (1 to 200 characters), when it has one: edits, deletions
   * and reactions may then name the message by it (`target: { providerMessageId }`), so that your
   * connector keeps no table of its own from channel ids to eventIds. Unique per integration:
   * another message with it is a `ConflictError` (409 `provider_message_id_conflict`).
   */
  providerMessageId?: string;
  /** Stable identifier of the external chat. */
  externalConversationId: string;
  sender: Sender;
  /** Message text, in code points at most the API document's `message.text` limit; sent as `message.text`. */
  text?: string;
  /** Up to 3 images; when present the request is `multipart/form-data`. */
  images?: readonly ImageInput[];
  /**
   * The channel's own time of the message (epoch ms), when it has one: at most 5 minutes after the
   * service receives it (a `BadRequestError` otherwise). Default: the time the service receives it.
   */
  sentAt?: number;
  /**
   * Connector metadata of the conversation: a flat map of at most 16 keys (1 to 64 of
   * `A-Z a-z 0-9 _ . -`) to strings of at most 512 characters, at most 2048 bytes of UTF-8 JSON in
   * all; `null` removes a key. The conversation keeps the merge (the latest message wins per key)
   * and every delivery of it hands it to your `send` as `conversation.metadata`. A nested value, a
   * bad key or a size breach (of the map or of the conversation's merge) is a `BadRequestError`.
   */
  metadata?: Readonly<Record<string, string | null>>;
}

export interface SendMessageResult extends Omit<SendMessageResponse, 'duplicate'> {
  /** `true` when the service had already accepted this `eventId` with the same content (HTTP 200). */
  duplicate: boolean;
  /** The `eventId` that was sent (the generated one when you omitted it). */
  eventId: string;
}

/** What every event about a message takes (`messages.edit`, `delete`, `react`, `typing`). */
export interface MessageEventInput {
  /**
   * Identifies the event (your channel's id of the edit, deletion, reaction...): keep it stable
   * across YOUR retries. It shares the eventId space of messages: never reuse a message's. When
   * omitted the SDK generates one per call and reuses it for that call's HTTP retries.
   */
  eventId?: string;
  /** The external chat the event happened in. */
  externalConversationId: string;
  /** Who edited, deleted, reacted or is typing. */
  sender: Sender;
}

/**
 * The message an event is about: by the `eventId` it was sent with, or by the channel's own id,
 * whichever the channel's webhook gives you. A `providerMessageId` names the customer message that
 * was sent with it (`SendMessageInput.providerMessageId`) or the operator reply (or one part of it)
 * your connector reported it for; the service finds which. An id naming both is a `ConflictError`
 * (409 `ambiguous_target`): name the customer message by `eventId` then.
 */
export type MessageTarget = { eventId: string } | { providerMessageId: string };

/** `messages.edit`: the message (the sender's own customer message) and its new text (1 to 10000 code points). */
export interface EditMessageInput extends MessageEventInput {
  target: MessageTarget;
  text: string;
}

/** `messages.delete`: the message the sender deleted (their own customer message). */
export interface DeleteMessageInput extends MessageEventInput {
  target: MessageTarget;
}

/**
 * `messages.react`: a customer message or an operator reply; `emoji` one emoji (one extended
 * grapheme cluster, at most 32 bytes of UTF-8); `removed: true` takes the reaction back.
 */
export interface ReactInput extends MessageEventInput {
  target: MessageTarget;
  emoji: string;
  removed?: boolean;
}

/** `messages.typing`: nothing but who, and where. */
export type TypingInput = MessageEventInput;

/**
 * What the service did with an event: `applied` (201), `pending` (202: its target is not there
 * yet; kept 24 h and applied when it arrives), `ignored` (200: it changes nothing — an event on a
 * deleted message, the same reaction again, taking back one that is not there, an edit to the text
 * the message already shows — or typing in a chat the desk does not know), `duplicate` (200: this
 * eventId was accepted before with the same content; `applied` is the first answer's).
 */
export type MessageEventOutcome = 'applied' | 'pending' | 'ignored' | 'duplicate';

/** The answer to `messages.edit`, `delete` and `react`. */
export interface MessageEventResult extends Omit<SendMessageEventResponse, 'conversationId'> {
  /** The conversation, as `messages.send` names it. */
  conversationId: string;
  outcome: MessageEventOutcome;
  /** The `eventId` that was sent (the generated one when you omitted it). */
  eventId: string;
}

/**
 * The answer to `messages.typing`. In a chat the desk does not know yet (the customer is typing
 * their first message), nothing is stored: `outcome: 'ignored'`, `applied: false` and no
 * `conversationId`.
 */
export interface TypingResult extends Omit<MessageEventResult, 'conversationId'> {
  /** The conversation; absent when the desk has none for the chat. */
  conversationId?: string;
}

export interface ClaimInput extends Omit<ClaimDeliveryRequest, 'requestId'> {
  /** Identifies this claim; generated once per call when omitted and reused on its retries. */
  requestId?: string;
}

/** Where a reply goes: the external chat and the customer in it. */
export type Recipient = ReplyMessage['recipient'];

/**
 * The address a conversation the desk starts goes to (a claim with `kind: "start"`): `send` gets it
 * as `recipient.address` (the thread ids are empty: there is no thread yet).
 */
export type StartAddress = ClaimReadyStart['message']['recipient']['address'];

/** What a start's `send` returns beside its ids: the thread the channel made, which `complete` carries. */
export type StartedConversation = NonNullable<CompleteDeliveryRequest['conversation']>;

/** What a `ready` claim says of its conversation: its connector metadata (present only when it has some). */
export type DeliveryConversation = NonNullable<ClaimReadySend['conversation']>;

/** The reply to deliver: its text and recipient, and its files when it has some. */
export type ReplyMessage = ClaimReadySend['message'];

/**
 * A template reply's (or start's) template (docs/contract.md#windows), as the claim carries it in
 * `message.template`: the declared template's `name` and `language`, and each param's value. Only
 * integrations that declared templates (`channel.update`) ever get one; the claim's `text` is then
 * the template's preview with the params filled in, for a channel without real templates.
 */
export type ReplyTemplate = NonNullable<ReplyMessage['template']>;

/**
 * The sent reply an edit or unsend delivery changes (the claim's `target`): the reply's delivery
 * and the provider ids its connector reported (`providerMessageIds`, and per part in `parts`).
 */
export type DeliveryTarget = ClaimReadyEdit['target'];

/** Claim could not lease the delivery now. `waiting_for_previous`: acknowledge the notification; it will be re-published. */
export type ClaimSkip = Extract<ClaimDeliveryResponse, { status: 'skip' }>;

/**
 * Claim leased the delivery: `leaseExpiresAt` is `LEASE_MS` from the claim (or from its latest
 * extension). A reply (`ClaimReadySend`, no `kind`), or an edit / unsend of a sent reply.
 */
export type ClaimReady = Extract<ClaimDeliveryResponse, { status: 'ready' }>;

/** A reply to send: its text, recipient and files (the v1 shape: no `kind`, no `target`). */
export type ClaimReadySend = Exclude<ClaimReady, { kind: string }>;

/** `kind: 'start'`: start a conversation with `message.recipient.address`, then complete with the thread the channel made. */
export type ClaimReadyStart = Extract<ClaimReady, { kind: 'start' }>;

/** `kind: 'edit'`: replace the text of the `target`'s messages with `message.text`. */
export type ClaimReadyEdit = Extract<ClaimReady, { kind: 'edit' }>;

/** `kind: 'unsend'`: delete the `target`'s messages for the recipient. */
export type ClaimReadyUnsend = Extract<ClaimReady, { kind: 'unsend' }>;

/** The kind of a delivery that changes a sent reply (`edit`, `unsend`; a reply has none). */
export type DeliveryKind = Extract<ClaimReady, { kind: string }>['kind'];

export type ClaimResult = ClaimDeliveryResponse;

/** A delivery and the lease it is worked under (start, extend). */
export type LeaseInput = StartDeliveryRequest;

/** The answer of `deliveries.extend`: the lease's new expiry, `LEASE_MS` from the extension, never later than `LEASE_MAX_MS` after the claim. */
export type ExtendResult = ExtendDeliveryLeaseResponse;

/** `sending`: send through the provider now. `sent`: already sent, do NOT send. */
export type StartResult = StartDeliveryResponse;

/**
 * A file of an operator reply, as the claim lists it in `message.attachments` (only on integrations
 * whose replies accept attachments; docs/contract.md#attachments): `attachmentId`, the
 * operator's file `name`, the sniffed `contentType`, `size` in bytes, `sha256` (lowercase hex).
 */
export type DeliveryAttachment = NonNullable<ReplyMessage['attachments']>[number];

/**
 * The outcome of one part of a reply (`part`: `text`, or an `attachmentId` of the claim), reported
 * with `complete` or `fail` and shown to the operator per part (`delivery.parts`); a resend sends
 * only the parts not known to be sent.
 */
export type DeliveryPart = NonNullable<CompleteDeliveryRequest['parts']>[number];

/** A file to download under a lease: `deliveries.attachment()`. */
export interface AttachmentInput {
  deliveryId: string;
  /** The live lease of a `leased` or `sending` delivery. */
  leaseId: string;
  /** One of the claim's `message.attachments`. */
  attachmentId: string;
  /**
   * The SHA-256 (lowercase hex) the bytes must have, normally the claim's `sha256`; checked besides
   * the answer's own `ETag` and `Repr-Digest`.
   */
  expectedSha256?: string;
}

/** A downloaded attachment: its bytes (already checked against their SHA-256) and what the answer said of them. */
export interface AttachmentFile {
  attachmentId: string;
  bytes: Uint8Array;
  /** `Content-Type` of the answer. */
  contentType: string;
  /** `bytes.length`. */
  size: number;
  /** SHA-256 of `bytes`, lowercase hex (equal to every digest the answer and the claim gave). */
  sha256: string;
  /** The file name of `Content-Disposition`, when it had one. */
  name: string | undefined;
}

/** The provider's ids of the sent message: at least one (the limits are the API document's `CompleteRequest`); `parts`: each part's outcome. */
export type CompleteInput = CompleteDeliveryRequest;

export type CompleteResult = CompleteDeliveryResponse;

/** `retry`: definite temporary rejection. `failed`: permanent. `unknown`: ambiguous or partial send. */
export type FailOutcome = FailDeliveryRequest['outcome'];

/** `code`: the connector's own reason in snake_case (the API document's `FailRequest`); `retryAfterMs` only with `retry`. */
export type FailInput = FailDeliveryRequest;

export type FailResult = FailDeliveryResponse;

/** Options of `deliveries.pending()`. */
export interface PendingOptions {
  /** Page size, 1 to 100 (default 50). */
  limit?: number;
  /** Aborts the listing (also a call in progress). */
  signal?: AbortSignal;
}

/** One page of the catch-up list: claimable deliveries, oldest first, each exactly a notification; `nextCursor` is null on the last page (the iterator follows it for you). */
export type PendingPage = ListPendingDeliveriesResponse;

/** What the channel said about a sent reply: reached the recipient, read, or failed after all. */
export type ReceiptStatus = ReportDeliveryReceiptRequest['status'];

/** `code` (snake_case) is required with `failed`; `at` defaults to when the service receives it. */
export type ReceiptInput = ReportDeliveryReceiptRequest;

/** Receipts never change the delivery: it stays `sent`. */
export type ReceiptResult = ReportDeliveryReceiptResponse;

/** The delivery notification published to the integration's topic: identifiers only (the items of the catch-up list are the same). */
export type DeliveryNotification = ListPendingDeliveriesResponse['deliveries'][number];

/** Request of `erasures.pending()`: a page size (1 to 100, default 50) and the previous page's `nextCursor`. */
export interface PendingErasuresInput {
  limit?: number;
  cursor?: string | null;
}

/** One page of the erasures to purge, oldest first; `nextCursor` is null on the last page. */
export type PendingErasuresPage = ListPendingErasuresResponse;

/**
 * A customer the service has erased and the connector must purge from its own storage: their id
 * in your system, the external conversations that were erased with them, and when the erasure was
 * requested (epoch ms). `erasureId` is what `erasures.ack` takes.
 */
export type ErasureNotice = ListPendingErasuresResponse['erasures'][number];

/** Request of `erasures.ack()`. */
export type AckErasureInput = AcknowledgeErasureRequest;

/** `{ acknowledged: true }`, also on a repeated ack. */
export type AckErasureResult = AcknowledgeErasureResponse;

/**
 * `client.channel.update()`: what the connector declares of its channel. `window` (`{ seconds }`,
 * 60 to 604800: how long after the customer's latest message a free-text reply may go out; null:
 * none) and `templates` (every template, replacing the stored list); a field left out stays as
 * stored, and at least one is needed.
 */
export type ChannelInput = UpdateChannelRequest;
/** One message template: `name`, `language` (BCP 47), `params` (`{ name, maxLength? }`), `preview` with a `{{param}}` for each param. */
export type ChannelTemplate = NonNullable<UpdateChannelRequest['templates']>[number];
/** The channel as stored: `{ window, templates, updatedAt }` (`updatedAt` stays when an update changed nothing). */
export type Channel = UpdateChannelResponse;
