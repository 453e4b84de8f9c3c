/**
 * The public types of the test service (`@support-desk/connector-sdk/testing`): an in-memory
 * stand-in for the support desk that serves every connector operation of the API on loopback,
 * with the operator's side as calls, faults on demand, inspection, and the delivery-rules checker.
 *
 * This file is the contract between the service (./service.ts and what it imports), the rules
 * checker (./violations.ts) and the conformance runner (../check/): each builds against these
 * types, none reaches into another's internals.
 */
import type { LifecycleKind, TargetOnlyLifecycleKind } from '../internal/contract.generated.js';
import type { PullSubscription } from '../internal/pull-loop.js';
import type { REQUESTS } from './requests.generated.js';
import type { DeliveryNotification, ReceiptStatus } from '../types.js';

/** Every connector operation of the API: openapi/openapi.yaml's operationIds, from the generated request schemas. */
export type OperationId = keyof typeof REQUESTS;

/**
 * `replies.lifecycle`: operators may edit, unsend, ... (each kind of the contract) a sent reply
 * within the channel's window (`windowSeconds`, an integer from 60 to 604800, counted from the
 * reply's `sentAt`).
 */
export type LifecycleCapability = { [K in LifecycleKind]?: { windowSeconds: number } };

/** The capabilities an integration opts into (what the console's admin sets on the integration). */
export interface IntegrationCapabilities {
  /** Replies may carry files (`replies.attachments`); the default is text-only replies. */
  attachments?: boolean;
  /** Edits and unsends of sent replies (`replies.lifecycle`); absent: neither, as for a v1 integration. */
  lifecycle?: LifecycleCapability;
  /** Conversations the desk starts (`conversations.start.addressKinds`); absent: none, as for a v1 integration. */
  conversations?: { start: { addressKinds: Array<'phone' | 'email' | 'handle'> } };
}

/** A member's start request (the console's `conversationStarts` document): exactly one of `text` and `template`. */
export interface StartConversationInput {
  integrationId: string;
  to: { kind: 'phone' | 'email' | 'handle'; value: string };
  text?: string;
  template?: { name: string; language: string; params: Record<string, string> };
}

/**
 * The service's answer on the start: `result` (a new conversation with its `start` delivery, or a
 * reply in the known address's conversation: `reused`) or `error` (the refusal code and why).
 */
export interface StartConversationResult {
  startId: string;
  result?: { conversationId: string; reused: boolean };
  error?: { code: string; message: string };
  /** The delivery the start became (absent when refused). */
  deliveryId?: string;
}

/** `createIntegration`'s options: the capabilities, and where the integration lives. */
export interface CreateIntegrationOptions extends IntegrationCapabilities {
  /** The workspace (default: a fresh one). Integrations of one workspace still see only their own deliveries and erasures. */
  workspaceId?: string;
  /** False: an inactive integration (the console's switch), whose key is answered 403 `integration_inactive` on every operation. Default true. */
  active?: boolean;
}

export interface CreatedIntegration {
  integrationId: string;
  workspaceId: string;
  /** The bearer integration key (shown once, as the console does). */
  key: string;
}

/** A file of an operator reply. */
export interface ReplyFile {
  fileName: string;
  contentType: string;
  data: Uint8Array;
}

export interface ReplyInput {
  /** The conversation (its `conversationId` from `POST /v1/messages`). */
  conversationId: string;
  text?: string;
  files?: readonly ReplyFile[];
  /**
   * A template reply instead of text and files: one of the templates the connector declared
   * (`PUT /v1/channel`) with exactly its params. Refused (an error with `code: 'template_invalid'`)
   * otherwise, as the console's rules refuse it; allowed whether the window is open or not.
   */
  template?: { name: string; language: string; params: Readonly<Record<string, string>> };
}

export interface ReplyCreated {
  /** The operator reply's id (the notification's `messageId`). */
  messageId: string;
  /** The delivery created for it (the notification's `deliveryId`). */
  deliveryId: string;
}

/**
 * Why the service refuses an operator's edit or unsend (the console's rules and the service's
 * re-check, rules/lifecycle.ts `lifecycleVerdict`): the capability is off (`lifecycle_disabled`),
 * the reply is not `sent` (`reply_not_sent`), it was unsent or an unsend is on its way
 * (`reply_unsent`), the channel's window passed (`edit_window_passed`), the edit is invalid
 * (`invalid_edit`: a reply with files only has no text to edit, or the new text is empty or too
 * long), or a later request of the same kind was already taken (`superseded`).
 */
export type LifecycleRefusal = 'lifecycle_disabled' | 'edit_window_passed' | 'reply_not_sent' | 'reply_unsent' | 'invalid_edit' | 'superseded';

/** The status of an edit or unsend request: its delivery's status (`failed` for a refused request). */
export type LifecycleRequestStatus = 'queued' | 'leased' | 'sending' | 'sent' | 'failed' | 'unknown';

/** One edit request of a reply, as the reply's `edits` history shows it (latest last). */
export interface ReplyEditView {
  text: string;
  requestedAt: number;
  /** The member who asked (`options.uid` of `edit` / `unsend`, default `operator`). */
  uid: string;
  /** The edit delivery; null for a refused request. */
  deliveryId: string | null;
  status: LifecycleRequestStatus;
  /** When the delivery became sent / failed / unknown. */
  at?: number;
  error?: { outcome: 'failed' | 'unknown'; code: string };
}

/** One request of kind `K` of a reply: an edit's carries its text, every other kind's has none. */
export type ReplyLifecycleView<K extends LifecycleKind> = K extends 'edit' ? ReplyEditView : Omit<ReplyEditView, 'text'>;

/** One unsend request of a reply (its `unsends` history). */
export type ReplyUnsendView = ReplyLifecycleView<'unsend'>;

/** Each kind's history of a reply, under the kind's plural (`edits`, `unsends`, ...), latest last. */
export type ReplyHistories = { [K in LifecycleKind as `${K}s`]: readonly ReplyLifecycleView<K>[] };

/** An operator reply as the console's mirror shows it. */
export interface ReplyView extends ReplyHistories {
  messageId: string;
  integrationId: string;
  conversationId: string;
  /** The text the operator wrote (an edit does not change it: see `edits`). */
  text: string;
  /** The reply's own delivery (the latest, after a resend): its status and when it became sent. */
  delivery: { deliveryId: string; status: DeliveryView['status']; sentAt?: number };
  /** Set when an unsend delivery completed. */
  unsent?: { at: number };
  /** Customers' reactions on this reply (by provider message id). */
  reactions: readonly ReactionView[];
}

/** A customer's reaction (at most one per sender and emoji). */
export interface ReactionView {
  emoji: string;
  senderExternalId: string;
  at: number;
}

/** The latest `typing` event of a conversation (it shows for 8 s in the console; expires after a minute). */
export interface TypingView {
  conversationId: string;
  integrationId: string;
  senderExternalId: string;
  displayName?: string;
  at: number;
  expireAt: number;
}

/** A fault to answer instead of the real operation, `times` times (default 1). */
export interface FaultSpec {
  status: 429 | 500 | 502 | 503 | 504 | 400 | 401 | 403 | 404 | 409 | 413 | 415;
  /** The envelope's `error.code` (default: the status's usual code, e.g. `unavailable` for 503). */
  code?: string;
  /** Sent as `Retry-After` (seconds) with 429 / 503; default 1 for those statuses. */
  retryAfterSeconds?: number;
  times?: number;
}

/** One HTTP request the service received, and what it answered (in arrival order). */
export interface RecordedCall {
  /** 1-based arrival order. */
  seq: number;
  /** Service time (ms since epoch) when the request arrived and when it was answered. */
  receivedAt: number;
  answeredAt: number;
  /** The operation its path names, or null for a path the API does not serve. */
  operationId: OperationId | null;
  method: string;
  path: string;
  /** The integration its key belongs to (null when the key was missing or unknown). */
  integrationId: string | null;
  request: {
    headers: Readonly<Record<string, string>>;
    /** Parsed JSON body; for multipart, the `metadata` part parsed, plus `parts: [{ name, fileName, contentType, bytes }]`; undefined when absent or unparsable. */
    body: unknown;
  };
  response: {
    status: number;
    headers: Readonly<Record<string, string>>;
    /** Parsed JSON body; for a file answer, `{ bytes: number }`. */
    body: unknown;
  };
  /** True when an injected fault answered instead of the operation. */
  injected: boolean;
}

/** An attempt of a delivery as the service recorded it. */
export interface DeliveryAttemptView {
  /** The attempt log of the real service: `claimed`, `started`, `retry`, `failed`, `unknown`, `sent`, `lease_expired`, `renotified`. */
  event: 'claimed' | 'started' | 'retry' | 'failed' | 'unknown' | 'sent' | 'lease_expired' | 'renotified';
  at: number;
  attempt: number;
  code?: string;
}

/** A delivery as `deliveries()` shows it (the console's mirror, and more). */
export interface DeliveryView {
  deliveryId: string;
  integrationId: string;
  conversationId: string;
  messageId: string;
  /** The kind (`edit`, `unsend`, ...) of the deliveries that change a sent reply (`messageId` is the reply's); absent for a reply. */
  kind?: LifecycleKind;
  /** What an edit / unsend changes: the reply's sent delivery and its provider ids (the claim's `target`). */
  target?: { deliveryId: string; providerMessageIds: readonly string[]; parts?: readonly { part: string; providerMessageIds: readonly string[] }[] };
  /**
   * A start's delivery (a conversation the desk starts, or its resend): the address, and the thread
   * its `complete` named (absent before).
   */
  start?: { to: { kind: 'phone' | 'email' | 'handle'; value: string }; thread?: { externalConversationId: string; externalCustomerId: string } };
  /** The delivery state of docs/contract.md (`queued` -> `leased` -> `sending` -> `sent` / `failed` / `unknown`). */
  status: 'queued' | 'leased' | 'sending' | 'sent' | 'failed' | 'unknown';
  /** Set when the operator recalled it (`cancel`) or the customer was erased: such a delivery is `failed` with that code. */
  cancelled: boolean;
  attempts: readonly DeliveryAttemptView[];
  providerMessageIds: readonly string[];
  /** Per-part outcomes of an attachment reply, as completed. */
  parts: readonly { part: string; status: 'sent' | 'failed'; providerMessageIds?: readonly string[]; code?: string }[];
  /** The channel's latest receipt per provider message id (as `POST /v1/deliveries/receipt` reported). */
  receipts: readonly { status: ReceiptStatus; providerMessageId: string; at: number }[];
  /** Attachment ids the connector fetched (`getDeliveryAttachment` answered 200), per attempt's lease. */
  fetchedAttachments: readonly string[];
  /** Why it is failed / unknown: `outcome` is `failed` or `unknown` (the service's `error` of the delivery). */
  failure?: { code: string; message?: string; outcome?: 'failed' | 'unknown' };
  /** Queued after a `retry`: not claimable before this time (ms since epoch); null otherwise. */
  notBefore: number | null;
  /** The latest `fail` report and what it was answered (a repeated report gets the same answer). */
  lastFail: { leaseId: string; outcome: 'retry' | 'failed' | 'unknown'; code: string; responseStatus: 'queued' | 'failed' | 'unknown' | 'sent' } | null;
  /** The latest lease (kept once the delivery ends, as the service keeps it): when it expires (ms since epoch), moved by each extension. */
  lease: { expiresAt: number } | null;
  /** The reply's files (the claim's `message.attachments`). */
  attachments: readonly { attachmentId: string; name: string; contentType: string; size: number; sha256: string }[];
  traceparent: string;
}

/** An erasure as `erasures()` shows it. */
export interface ErasureView {
  erasureId: string;
  integrationId: string;
  externalCustomerId: string;
  /** The chats the customer wrote in (sorted), as `POST /v1/erasures/pending` lists them. */
  externalConversationIds: readonly string[];
  requestedAt: number;
  /** What the erasure deleted: conversations that went entirely (the customer was their only customer) and messages (the customer's, and every message of such a conversation). */
  counts: { conversations: number; messages: number };
  acknowledged: boolean;
  /** The connector's first acknowledgement (a repeated one keeps it); null before. */
  acknowledgedAt: number | null;
}

/** A message the service stored from `POST /v1/messages`. */
export interface MessageView {
  messageId: string;
  integrationId: string;
  conversationId: string;
  eventId: string;
  /** The channel's id of the message, when the connector sent one (`providerMessageId`). */
  providerMessageId?: string;
  externalConversationId: string;
  kind: 'customer' | 'service_alert' | string;
  /** The sender as given (`kind` defaults to customer); `customerId` is the customer it is stored under (null for a service alert). */
  sender: { externalId: string; displayName: string | null; kind: 'customer' | 'service'; customerId: string | null };
  text?: string;
  /** The stored images: the content type judged by the bytes, the dimensions of the header, the size and SHA-256 of the bytes stored. */
  images: readonly { part: string; contentType: string; width: number; height: number; bytes: number; sha256: string; status: 'stored' | 'rejected'; code?: string }[];
  receivedAt: number;
  /** The channel's time of the message (epoch ms): its `sentAt`, or `receivedAt` when it came without one. */
  sentAt: number;
  /** The customer's edits (`POST /v1/messages/events` `edited`), oldest first; `text` stays the original. */
  edits: readonly { text: string; at: number }[];
  /** Set when the customer deleted it (`deleted`): `text` and `images` are gone, the tombstone stays. */
  deleted?: { at: number };
  /** Reactions on it (at most one per sender and emoji). */
  reactions: readonly ReactionView[];
}

/** A subscription with the interface `runPullLoop` takes (messages are `PulledMessage`s in the Pub/Sub client's shape). */
export interface TestSubscription extends PullSubscription {
  /** Notifications published and not yet acknowledged. */
  readonly outstanding: number;
  /** False once closed (until a `message` listener opens it again), as the Pub/Sub client's `isOpen`. */
  readonly isOpen: boolean;
}

/** One broken delivery rule, named, with the calls that show it. */
export interface Violation {
  /** A stable name (the conformance runner prints it): see `VIOLATION_RULES` in ./violations.ts. */
  rule:
    | 'complete_without_sending_start'
    | 'provider_work_after_sent'
    | 'call_after_lease_lost'
    | 'retry_before_retry_after'
    | 'claim_retry_new_request_id'
    | 'message_retry_new_event_id'
    | 'start_after_skip'
    | 'complete_without_fetching_files'
    | 'erasure_not_acknowledged'
    | 'edit_sent_as_new_message';
  /** One sentence a developer can act on. */
  message: string;
  deliveryId?: string;
  /** The `seq` of the calls that show it, in order. */
  evidence: readonly number[];
}

export interface StartTestServiceOptions {
  /** Loopback port (default 0: any free port). */
  port?: number;
  /** The service clock (default `Date.now`); tests pass a fake one to expire leases without waiting. */
  now?: () => number;
  /** Incoming messages per minute per integration before a 429 (default 1200, the service's default). */
  messagesPerMinute?: number;
}

/**
 * The operator's request of each kind without text (`unsend`, ...: the contract's target-only
 * kinds) on a sent reply (`messageId` of `reply()`): a delivery of that kind at the end of the
 * conversation's queue; refused as `edit` is (an Error whose `code` is the `LifecycleRefusal`).
 */
export type TargetOnlyRequests = { [K in TargetOnlyLifecycleKind]: (messageId: string, options?: { uid?: string }) => ReplyCreated };

/** The running test service. */
export interface TestService extends TargetOnlyRequests {
  /** `http://127.0.0.1:<port>`: the connector's API base URL. */
  readonly baseUrl: string;

  // ---- the operator's and admin's side
  createIntegration(options?: CreateIntegrationOptions): Promise<CreatedIntegration>;
  /** Changes an integration's capabilities (as the console's admin does). */
  setCapabilities(integrationId: string, capabilities: IntegrationCapabilities): void;
  /**
   * The operator's reply (the console's write). A free-form reply (text, files) once the
   * conversation's window has closed (the integration declared a `window` and the customer's latest
   * `sentAt` + the window - 60 s has passed on this service's clock, or a connector failed a delivery
   * `window_closed`) is refused with an error of `code: 'window_closed'`, as the console's rules refuse it.
   */
  reply(input: ReplyInput): ReplyCreated;
  /**
   * A member starts a conversation (docs/contract.md#conversations-the-desk-starts), decided by the
   * service's own rule (rules/starts.ts): a `start` delivery in a new conversation, a reply when the
   * address is known, or the refusal. Its `complete` must carry `conversation` (the thread).
   */
  startConversation(input: StartConversationInput): StartConversationResult;
  /**
   * The operator edits a sent reply (`messageId` of `reply()`): a delivery of kind `edit` at the end
   * of the conversation's queue. Throws an Error whose `code` is the `LifecycleRefusal` when the
   * console's rules refuse it (capability, window, state, text bounds).
   */
  edit(messageId: string, text: string, options?: { uid?: string }): ReplyCreated;
  /** The operator replies as the console's mirror shows them: their delivery, edit / unsend history, `unsent`, reactions. */
  replies(filter?: { integrationId?: string; conversationId?: string }): ReplyView[];
  /** The conversations' typing state (`typing` events not yet expired by the service clock). */
  typing(filter?: { integrationId?: string }): TypingView[];
  /** Recall before the send: `cancelled`, or `too_late` once the connector started sending. */
  cancel(deliveryId: string): 'cancelled' | 'too_late';
  /** Sends a failed / unknown reply again as a new delivery (the console's resend). */
  resend(deliveryId: string): ReplyCreated;
  /** Erases a customer of the integration (its messages; its unfinished deliveries end), listing an erasure for the connector to purge and acknowledge. */
  erase(integrationId: string, externalCustomerId: string): { erasureId: string };
  /**
   * Erasures of the integration, as the erasure's audit shows them: the conversations and what was
   * deleted (`counts`), and when the connector first acknowledged it (`acknowledgedAt`, null before).
   */
  erasures(integrationId?: string): ErasureView[];

  // ---- notifications
  /** The integration's notifications as a pull subscription (every reply published from now on, and `notifyAgain`). */
  subscription(integrationId: string): TestSubscription;
  /** Delivers the integration's notifications to `url` in the Pub/Sub push format (retried after a non-2xx, as Pub/Sub does). Returns a function that stops it. */
  pushTo(integrationId: string, url: string): () => void;

  // ---- faults
  /** The next `times` calls of `operationId` (any integration) are answered with the fault instead. */
  inject(operationId: OperationId, fault: FaultSpec): void;
  /** Runs the service's sweeper as of `at` (default: the service clock): every lease expired by then ends as its running out does. */
  sweep(at?: number): void;
  /** Expires the delivery's current lease now (as the lease's 120 s running out would). */
  expireLease(deliveryId: string): void;
  /** Publishes the delivery's notification again (a duplicate, as Pub/Sub may deliver). */
  notifyAgain(deliveryId: string): void;
  /** Publishes arbitrary bytes to the integration's subscriptions and push endpoints, as anything else publishing to its topic could (a connector acknowledges and reports what is not a notification). */
  publish(integrationId: string, data: Uint8Array, attributes?: Readonly<Record<string, string>>): void;
  /** Flips one byte of the attachment's stored content, so its SHA-256 no longer matches. */
  corruptAttachment(deliveryId: string, attachmentId?: string): void;

  // ---- inspection
  deliveries(filter?: { integrationId?: string; conversationId?: string }): DeliveryView[];
  messages(filter?: { integrationId?: string; conversationId?: string }): MessageView[];
  calls(filter?: { integrationId?: string; operationId?: OperationId }): RecordedCall[];
  /** The delivery rules broken in the calls so far (./violations.ts). `final` adds the checks that need the run to be over (an erasure never acknowledged). */
  violations(options?: { final?: boolean }): Violation[];
  /** Resolves when `predicate` holds over the service's state (checked after every call), or rejects after `timeoutMs` (default 5000). */
  waitFor(predicate: () => boolean, timeoutMs?: number): Promise<void>;

  close(): Promise<void>;
}

/** Used by the conformance runner's in-process connectors: what `start()` receives. */
export interface ConnectorStartContext {
  baseUrl: string;
  key: string;
  subscription: TestSubscription;
}

export type { DeliveryNotification };
