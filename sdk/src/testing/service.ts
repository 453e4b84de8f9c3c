/**
 * The test service (`@support-desk/connector-sdk/testing`, decision 16): every connector operation
 * of openapi/openapi.yaml served on loopback from memory, with the service's validation (the
 * document's request schemas, ./requests.generated.ts), statuses, error codes and headers, the
 * delivery rules of the real service (its own code: ../internal/rules, generated), the operator's side as calls, faults on demand
 * and inspection. Zero dependencies: `node:` built-ins only.
 *
 * Lease expiry is applied to every delivery before each request and on a short timer (the real
 * service applies it lazily on each operation and by its sweeper every minute): the same outcome,
 * without waiting for a sweep. Notifications due later (a retry's) are published when the service
 * clock reaches their time.
 */
import { createHash, randomBytes, randomInt } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  ATTACHMENT_CONTENT_TYPES,
  ATTACHMENT_LIMITS,
  EVENT_LIMITS,
  REPLY_MAX_CODE_POINTS,
  codePointLength,
  emojiProblem,
  parseLifecycleCapability,
  type AttachmentContentType,
} from '../internal/contract.generated.js';
import type { MessageEventRequest } from '../internal/api.generated.js';
import type { PulledMessage } from '../internal/pull-loop.js';
import { MAX_JSON_BYTES, parseMultipart } from './multipart.js';
import { assertImageSet, inspectImage } from '../internal/rules/images.js';
import { REQUESTS, validateRequest, type RequestSchema } from './requests.generated.js';
import { apiError, ApiError } from './errors.js';
import { MemoryDeliveries, type TransitionFacts } from './deliveries.js';
import { decideAttachmentFetch, decideCancel, decideClaim, decideComplete, decideErase, decideExtend, decideFail, decideReceipt, decideStart, type CompleteInput } from '../internal/rules/state-machine.js';
import { isTerminal, traceIdOfDelivery, type AttachmentRef, type Decision, type DeliveryRecord, type DeliveryTarget, type FailOutcome, type ReceiptStatus } from '../internal/rules/record.js';
import { stateOf, take as takeToken, tokensAt } from '../internal/rules/rate-limit.js';
import { eventFingerprint, fingerprint as messageFingerprint } from '../internal/rules/fingerprint.js';
import { messageEventProblems } from '../internal/rules/message-events.js';
import { attachmentDownloadHeaders } from '../internal/rules/file-headers.js';
import { lifecycleTarget, lifecycleVerdict } from '../internal/rules/lifecycle.js';
import type { LifecycleKind as DeliveryKind } from '../internal/contract.generated.js';
import type {
  CreatedIntegration,
  DeliveryView,
  FaultSpec,
  IntegrationCapabilities,
  LifecycleRefusal,
  MessageView,
  ReactionView,
  ReplyView,
  OperationId,
  RecordedCall,
  ReplyCreated,
  ReplyInput,
  StartTestServiceOptions,
  TestService,
  TestSubscription,
  TypingView,
  Violation,
} from './types.js';
import { findViolations } from './violations.js';

/** docs/contract.md#limits: a multipart request is at most 21 MB. */
const MAX_MULTIPART_BYTES = 21 * 1024 * 1024;
/** The service's default incoming rate (MESSAGES_PER_MINUTE_DEFAULT). */
const DEFAULT_MESSAGES_PER_MINUTE = 1200;
const INVALID_KEY_MESSAGE = 'Missing, malformed, unknown or revoked integration key.';
const KEY_PATTERN = /^sdk_(live|test)_[A-Za-z0-9_-]{43}$/;

/** The usual `error.code` of a status, for an injected fault without one. */
const FAULT_CODES: Record<FaultSpec['status'], string> = {
  400: 'invalid_request',
  401: 'invalid_key',
  403: 'integration_inactive',
  404: 'delivery_not_found',
  409: 'lease_lost',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limited',
  500: 'internal',
  502: 'bad_gateway',
  503: 'temporarily_unavailable',
  504: 'gateway_timeout',
};

const digestId = (prefix: string, parts: readonly string[]): string => `${prefix}${createHash('sha256').update(parts.join('\u0000')).digest('base64url').slice(0, 32)}`;
const randomId = (prefix: string): string => `${prefix}${randomBytes(16).toString('base64url')}`;
const sha256Hex = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/** Canonical JSON (sorted keys, explicit nulls), as the service's content fingerprint (functions/src/rules/fingerprint.ts). */

/** What each refusal of an edit or unsend means, for the test service's error message (KIND: edit or unsend). */
const LIFECYCLE_REFUSALS: Readonly<Record<LifecycleRefusal, string>> = {
  lifecycle_disabled: 'the integration has no replies.lifecycle.KIND (setCapabilities({ lifecycle: { KIND: { windowSeconds } } }))',
  reply_not_sent: 'only a sent reply is edited or unsent',
  reply_unsent: 'the reply was unsent (or an unsend of it is on its way)',
  edit_window_passed: "the channel's window after the send has passed",
  invalid_edit: `the reply has no text to edit, or the new text is not 1 to ${REPLY_MAX_CODE_POINTS} characters`,
  superseded: 'a later request of the same kind was already taken',
};

interface Integration {
  integrationId: string;
  workspaceId: string;
  keyHash: string;
  capabilities: IntegrationCapabilities;
  /** The console's switch: an inactive integration's key is answered 403 `integration_inactive`. */
  active: boolean;
  bucket: { tokens: number; updatedAt: number } | undefined;
}

interface Conversation {
  conversationId: string;
  integrationId: string;
  externalConversationId: string;
  lastSenderExternalId: string;
  lastCustomerExternalId: string | null;
  nextSeq: number;
}

/** An operator reply: what the console's mirror keeps of it besides its deliveries. */
interface StoredReply {
  messageId: string;
  integrationId: string;
  conversationId: string;
  text: string;
  edits: { text: string; requestedAt: number; uid: string; deliveryId: string | null }[];
  unsends: { requestedAt: number; uid: string; deliveryId: string | null }[];
  reactions: ReactionView[];
}

/** An event waiting for its target (functions/src/messages/event-store.ts `PendingEntry`), and the change an event makes. */
interface PendingEvent {
  type: 'edited' | 'deleted' | 'reaction';
  conversationId: string;
  senderExternalId: string;
  receivedAt: number;
  text?: string;
  emoji?: string;
  removed?: boolean;
}

interface StoredMessage extends Omit<MessageView, 'edits' | 'reactions'> {
  edits: { text: string; at: number }[];
  reactions: ReactionView[];
  senderExternalId: string;
  senderKind: 'customer' | 'service';
  fingerprint: string;
  erased: boolean;
}

interface Erasure {
  erasureId: string;
  integrationId: string;
  externalCustomerId: string;
  externalConversationIds: string[];
  requestedAt: number;
  counts: { conversations: number; messages: number };
  acknowledged: boolean;
  acknowledgedAt: number | null;
}

/** What a request handler gets: the parsed request and its caller. */
interface OperationRequest {
  integration: Integration;
  json: unknown;
  mediaType: 'application/json' | 'multipart/form-data';
  contentType: string;
  raw: Buffer;
  now: number;
  /** Headers to set on the answer, whatever it turns out to be. */
  headers: Record<string, string>;
}

type Answer = { status: number; body: unknown } | { status: 200; file: { bytes: Buffer; headers: Record<string, string>; cutOffAfter?: number } };
type Handler = (request: OperationRequest) => Answer;

/** A notification published to the integration's subscriptions and push endpoints. */
interface Published {
  id: string;
  data: Buffer;
  attributes: Record<string, string>;
}

/** The Pub/Sub stand-in of one `subscription()`: messages wait here until a `message` listener takes them. */
class Subscription implements TestSubscription {
  private readonly listeners = { message: new Set<(value: unknown) => void>(), error: new Set<(value: unknown) => void>() };
  private readonly backlog: Published[] = [];
  private readonly inFlight = new Set<string>();
  private open = true;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly onSettled: () => void) {}

  get isOpen(): boolean {
    return this.open;
  }

  get outstanding(): number {
    return this.backlog.length + this.inFlight.size;
  }

  on(event: 'message' | 'error', listener: (value: unknown) => void): this {
    this.listeners[event].add(listener);
    // A listener (re)opens the subscription, as the Pub/Sub client's does.
    if (event === 'message') {
      this.open = true;
      this.schedule(0);
    }
    return this;
  }

  removeListener(event: 'message' | 'error', listener: (value: unknown) => void): this {
    this.listeners[event].delete(listener);
    return this;
  }

  close(): Promise<void> {
    this.open = false;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    return Promise.resolve();
  }

  publish(message: Published): void {
    this.backlog.push(message);
    this.schedule(0);
  }

  private schedule(ms: number): void {
    if (this.timer !== undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.dispatch();
    }, ms);
    this.timer.unref();
  }

  private dispatch(): void {
    if (!this.open || this.listeners.message.size === 0) return;
    for (const message of this.backlog.splice(0)) {
      this.inFlight.add(message.id);
      let settled = false;
      const settle = (redeliver: boolean): void => {
        if (settled || !this.inFlight.has(message.id)) return;
        settled = true;
        this.inFlight.delete(message.id);
        // A nack is redelivered shortly, as Pub/Sub does (never in a hot loop).
        if (redeliver) {
          this.backlog.push(message);
          this.schedule(50);
        }
        this.onSettled();
      };
      const pulled: PulledMessage & { ackId: string; publishTime: Date } = {
        id: message.id,
        ackId: message.id,
        data: Buffer.from(message.data),
        attributes: { ...message.attributes },
        publishTime: new Date(),
        ack: () => settle(false),
        nack: () => settle(true),
      };
      for (const listener of [...this.listeners.message]) listener(pulled);
    }
  }
}

/** Starts a test service on loopback. Resolves once it listens (in milliseconds). */
export async function startTestService(options: StartTestServiceOptions = {}): Promise<TestService> {
  const now = options.now ?? Date.now;
  const messagesPerMinute = options.messagesPerMinute ?? DEFAULT_MESSAGES_PER_MINUTE;

  const integrations = new Map<string, Integration>();
  const integrationsByKeyHash = new Map<string, Integration>();
  const conversations = new Map<string, Conversation>();
  const messages: StoredMessage[] = [];
  // One eventId space for messages and message events (functions/src/messages/event-store.ts):
  // a message's record names its message; an event's names its type and its first answer.
  const events = new Map<string, { fingerprint: string; messageId: string | null; conversationId: string; messageEvent?: string; applied?: boolean }>();
  // A reply's provider ids (of its own sent delivery, and of its parts) -> the reply, for reactions by providerMessageId.
  const providerMessages = new Map<string, { messageId: string; conversationId: string }>();
  // Events waiting for their target (by `e:<eventId>` / `p:<providerMessageId>`), in the order received.
  const pendingEvents = new Map<string, PendingEvent[]>();
  const replyStore = new Map<string, StoredReply>();
  const typing = new Map<string, TypingView>();
  // The deliveries, stored and changed by the service's own rules (./deliveries.ts).
  const store = new MemoryDeliveries((conversationId) => {
    const c = conversations.get(conversationId);
    return { externalConversationId: c?.externalConversationId ?? '', externalCustomerId: c?.lastCustomerExternalId ?? c?.lastSenderExternalId ?? '' };
  });
  const deliveries: ReadonlyMap<string, DeliveryRecord> = store.records;
  const views = new Map<string, { receipts: Map<string, { status: ReceiptStatus; at: number }>; fetched: Set<string>; cancelled: boolean }>();
  const files = new Map<string, Buffer>();
  const subscriptions = new Map<string, Set<Subscription>>();
  const pushTargets = new Map<string, Set<(message: Published) => void>>();
  const faults = new Map<OperationId, { spec: FaultSpec; remaining: number }[]>();
  const erasures: Erasure[] = [];
  const recorded: RecordedCall[] = [];
  const waiters = new Set<() => void>();
  let publishCount = 0;

  const notifyWaiters = (): void => {
    for (const check of [...waiters]) check();
  };

  // ------------------------------------------------------------------------------------ deliveries

  const viewOf = (deliveryId: string) => {
    let view = views.get(deliveryId);
    if (view === undefined) {
      view = { receipts: new Map(), fetched: new Set(), cancelled: false };
      views.set(deliveryId, view);
    }
    return view;
  };

  /** Publishes the delivery's notification to every subscription and push endpoint of its integration. */
  function publish(d: DeliveryRecord): void {
    publishCount += 1;
    const notification = { deliveryId: d.deliveryId, workspaceId: d.workspaceId, integrationId: d.integrationId, conversationId: d.conversationId, messageId: d.messageId };
    const message: Published = {
      id: String(publishCount),
      data: Buffer.from(JSON.stringify(notification)),
      // An edit / unsend notification carries the attribute `kind` (none for a reply).
      attributes: {
        deliveryId: d.deliveryId,
        integrationId: d.integrationId,
        traceparent: `00-${traceIdOfDelivery(d.deliveryId)}-${randomBytes(8).toString('hex')}-01`,
        ...(d.kind === undefined ? {} : { kind: d.kind }),
      },
    };
    for (const subscription of subscriptions.get(d.integrationId) ?? []) subscription.publish(message);
    for (const push of pushTargets.get(d.integrationId) ?? []) push(message);
  }

  /** Lease expiries and liveness checks that are due, then the notifications due by the service clock (the service's sweeper and outbox). */
  function sweep(): void {
    const at = now();
    store.sweep(at);
    for (const entry of store.takeDue(at)) {
      const d = deliveries.get(entry.deliveryId);
      if (d !== undefined && !isTerminal(d.status)) publish(d);
    }
  }

  /** A rule's decision on a delivery, through the store (read -> decide -> write); its answer. */
  function decideOn<R>(deliveryId: string, at: number, decide: (d: DeliveryRecord) => Decision<R>): R {
    const outcome = store.transition(deliveryId, at, decide);
    if (outcome?.decision === null || outcome === null) throw new Error(`test service: no delivery ${deliveryId}`);
    return outcome.decision.response;
  }

  /** A new delivery of a reply (or of its edit / unsend, or a resend), published at once as the service's creator does. */
  function append(input: { conversation: Conversation; messageId: string; deliveryId: string; text: string; attachments?: AttachmentRef[]; textSent?: boolean; lifecycle?: { kind: DeliveryKind; target: DeliveryTarget }; reason: 'created' | 'resend' }): DeliveryRecord {
    const { conversation, lifecycle, ...fields } = input;
    const integration = integrations.get(conversation.integrationId);
    if (integration === undefined) throw new Error('unknown integration');
    const at = now();
    const d = store.append({
      ...fields,
      workspaceId: integration.workspaceId,
      integrationId: integration.integrationId,
      conversationId: conversation.conversationId,
      ...(lifecycle === undefined ? {} : { lifecycle: { ...lifecycle, requestedAt: at } }),
      now: at,
    });
    viewOf(d.deliveryId);
    // The creator publishes right after its commit (`inline`): the outbox entry is spent.
    store.takeDue(at).forEach((entry) => {
      const due = deliveries.get(entry.deliveryId);
      if (due !== undefined && !isTerminal(due.status)) publish(due);
    });
    notifyWaiters();
    return d;
  }

  // -------------------------------------------------------------------------------------- handlers

  const invalidRequest = (problems: readonly string[]): ApiError => apiError(400, 'invalid_request', problems.slice(0, 5).join('; '));

  /** The body checked against the operation's request schema of the document (400 `invalid_request` naming the field). */
  function body<T>(operationId: OperationId, json: unknown): T {
    const schema = (REQUESTS[operationId] as { json?: RequestSchema }).json;
    if (schema === undefined) throw new Error(`${operationId} has no JSON request schema`);
    const problems = validateRequest(schema, json);
    if (problems.length > 0) throw invalidRequest(problems);
    return json as T;
  }

  /** The caller's delivery, or 404 for a missing one and for one of another integration (reported identically). */
  function deliveryOf(request: OperationRequest, deliveryId: string): DeliveryRecord {
    const d = deliveries.get(deliveryId);
    if (d === undefined || d.integrationId !== request.integration.integrationId) throw apiError(404, 'delivery_not_found', 'delivery not found');
    return d;
  }

  function transition<B extends { deliveryId: string }, R>(operationId: OperationId, decide: (d: DeliveryRecord, body: B, request: OperationRequest, facts: TransitionFacts) => Decision<R>): Handler {
    return (request) => {
      const parsed = body<B>(operationId, request.json);
      deliveryOf(request, parsed.deliveryId);
      const outcome = store.transition(parsed.deliveryId, request.now, (d, facts) => decide(d, parsed, request, facts));
      if (outcome === null || outcome.decision === null) throw apiError(404, 'delivery_not_found', 'delivery not found');
      return { status: 200, body: outcome.decision.response };
    };
  }

  const rateLimitState = (integration: Integration, at: number, take: boolean): { allowed: boolean; limit: number; remaining: number; resetSeconds: number } => {
    // The service's arithmetic (rules/rate-limit.ts): the same bucket, the same headers, the same Retry-After.
    if (!take) {
      return { allowed: true, ...stateOf(tokensAt(integration.bucket, messagesPerMinute, at), messagesPerMinute) };
    }
    const taken = takeToken(integration.bucket, messagesPerMinute, at);
    integration.bucket = taken.bucket;
    return { allowed: taken.decision.allowed, ...stateOf(taken.bucket.tokens, messagesPerMinute) };
  };
  const rateLimitHeaders = (state: { limit: number; remaining: number; resetSeconds: number }): Record<string, string> => ({
    'RateLimit-Limit': String(state.limit),
    'RateLimit-Remaining': String(state.remaining),
    'RateLimit-Reset': String(state.resetSeconds),
  });

  /**
   * Messages and message events share one per-integration budget: takes a token, answers its
   * RateLimit headers, and refuses with 429 (Retry-After: the next token) when none is left.
   */
  const spendIncomingBudget = (request: OperationRequest): void => {
    const state = rateLimitState(request.integration, request.now, true);
    Object.assign(request.headers, rateLimitHeaders(state));
    if (!state.allowed) {
      throw apiError(429, 'rate_limited', `Incoming message rate limit of ${messagesPerMinute} per minute exceeded; retry with the same eventId after Retry-After.`, state.resetSeconds);
    }
  };

  const sendMessage: Handler = (request) => {
    const { integration } = request;
    spendIncomingBudget(request);
    let payload = request.json;
    let images: { contentType: 'image/png' | 'image/jpeg' | 'image/webp'; width: number; height: number; bytes: Buffer; sha256: string }[] = [];
    if (request.mediaType === 'multipart/form-data') {
      const multipart = parseMultipart(request.contentType, request.raw);
      payload = parseJson(multipart.payload, 'payload');
      // The service's image rules (rules/images.ts): format by magic bytes, header integrity, animation, sides and pixels, sizes.
      images = multipart.images.map((image, i) => {
        const inspected = inspectImage(image.bytes, `images[${i}]`);
        return { contentType: inspected.contentType, width: inspected.width, height: inspected.height, bytes: image.bytes, sha256: sha256Hex(image.bytes) };
      });
      assertImageSet(images.map((image) => ({ bytes: image.bytes.length })));
    }
    // The message JSON itself (the multipart `payload`'s schema); "text or an image" is the 400 `empty_message` below, as in the service.
    const problems = validateRequest({ ref: 'IncomingMessage' }, payload);
    if (problems.length > 0) throw invalidRequest(problems);
    const message = payload as { eventId: string; externalConversationId: string; sender: { externalId: string; displayName?: string; kind?: 'customer' | 'service' }; message?: { text?: string } };
    const text = message.message?.text !== undefined && message.message.text !== '' ? message.message.text : null;
    if (text === null && images.length === 0) throw apiError(400, 'empty_message', 'message.text: required (non-empty) unless at least one image is attached.');
    const sender = { externalId: message.sender.externalId, displayName: message.sender.displayName ?? null, kind: message.sender.kind ?? 'customer' };
    const fingerprint = messageFingerprint({ externalConversationId: message.externalConversationId, sender, text, images });
    const eventKey = `${integration.integrationId}\u0000${message.eventId}`;
    const known = events.get(eventKey);
    if (known !== undefined) {
      // An event's eventId is never a message's (and the other way round): a conflict.
      if (known.fingerprint !== fingerprint || known.messageId === null) throw apiError(409, 'event_conflict', `eventId '${message.eventId}' was already used with different content.`);
      return { status: 200, body: { conversationId: known.conversationId, messageId: known.messageId, duplicate: true } };
    }
    const conversationId = digestId('c_', [integration.integrationId, message.externalConversationId]);
    const messageId = digestId('m_', [integration.integrationId, message.eventId, fingerprint]);
    let conversation = conversations.get(conversationId);
    if (conversation === undefined) {
      conversation = { conversationId, integrationId: integration.integrationId, externalConversationId: message.externalConversationId, lastSenderExternalId: sender.externalId, lastCustomerExternalId: null, nextSeq: 1 };
      conversations.set(conversationId, conversation);
    }
    conversation.lastSenderExternalId = sender.externalId;
    if (sender.kind === 'customer') conversation.lastCustomerExternalId = sender.externalId;
    events.set(eventKey, { fingerprint, messageId, conversationId });
    messages.push({
      messageId,
      integrationId: integration.integrationId,
      conversationId,
      eventId: message.eventId,
      externalConversationId: message.externalConversationId,
      kind: sender.kind,
      // functions/src/messages/http.ts: a customer is stored under customerIdFor(integration, externalId); an alert has none.
      sender: { ...sender, customerId: sender.kind === 'customer' ? digestId('u_', [integration.integrationId, sender.externalId]) : null },
      ...(text === null ? {} : { text }),
      images: images.map((image, i) => ({ part: `images[${i}]`, contentType: image.contentType, width: image.width, height: image.height, bytes: image.bytes.length, sha256: image.sha256, status: 'stored' as const })),
      receivedAt: request.now,
      senderExternalId: sender.externalId,
      senderKind: sender.kind,
      fingerprint,
      erased: false,
      edits: [],
      reactions: [],
    });
    // Events that came before their message are applied now, in the order received.
    const arrived = messages.at(-1);
    if (arrived !== undefined) applyPending(`${integration.integrationId}\u0000e:${message.eventId}`, { message: arrived }, conversationId);
    return { status: 201, body: { conversationId, messageId, duplicate: false } };
  };

  // ------------------------------------------------------------------------------- message events

  type EventTargetRef = { message: StoredMessage } | { reply: StoredReply };

  /** functions/src/rules/message-events.ts `applyEvent`: who may change the target, and what the change does. */
  function applyChange(target: EventTargetRef, change: PendingEvent, at: number): 'applied' | 'ignored' | 'not_found' {
    if (change.type !== 'reaction') {
      // An edit or a deletion: only the sender's own customer message (not an alert, not a reply).
      if ('reply' in target || target.message.senderKind !== 'customer' || target.message.senderExternalId !== change.senderExternalId) return 'not_found';
    }
    const owner = 'reply' in target ? target.reply : target.message;
    if ('message' in target && target.message.deleted !== undefined) return 'ignored';
    if (change.type === 'edited' && 'message' in target) target.message.edits.push({ text: change.text ?? '', at });
    else if (change.type === 'deleted' && 'message' in target) {
      // The content goes (text, images, edits); the tombstone stays.
      const m = target.message;
      delete m.text;
      m.images = [];
      m.edits = [];
      m.deleted = { at };
    } else if (change.type === 'reaction') {
      const same = (r: ReactionView): boolean => r.emoji === change.emoji && r.senderExternalId === change.senderExternalId;
      if (change.removed === true) owner.reactions = owner.reactions.filter((r) => !same(r));
      else if (!owner.reactions.some(same)) owner.reactions.push({ emoji: change.emoji ?? '', senderExternalId: change.senderExternalId, at });
    }
    return 'applied';
  }

  /** The events that waited for a target that just arrived: applied in order; another conversation's, a stranger's or an expired one dropped. */
  function applyPending(key: string, target: EventTargetRef, conversationId: string): void {
    const waiting = pendingEvents.get(key);
    if (waiting === undefined) return;
    pendingEvents.delete(key);
    for (const entry of waiting) {
      if (entry.conversationId !== conversationId || entry.receivedAt + EVENT_LIMITS.pendingMs < now()) continue;
      applyChange(target, entry, entry.receivedAt);
    }
  }

  /** A reply's sent delivery reported its provider ids: they name the reply (reactions), and the reactions waiting for them apply. */
  function recordProviderIds(d: DeliveryRecord): void {
    if (d.kind !== undefined || d.status !== 'sent') return;
    const reply = replyStore.get(d.messageId);
    if (reply === undefined) return;
    const ids = [...new Set([...d.providerMessageIds, ...(d.parts ?? []).flatMap((p) => p.providerMessageIds ?? [])])];
    for (const id of ids) {
      const key = `${d.integrationId}\u0000${id}`;
      if (!providerMessages.has(key)) providerMessages.set(key, { messageId: d.messageId, conversationId: d.conversationId });
      applyPending(`${d.integrationId}\u0000p:${id}`, { reply }, d.conversationId);
    }
  }

  const sendMessageEvent: Handler = (request) => {
    const { integration } = request;
    spendIncomingBudget(request);
    const event = body<MessageEventRequest>('sendMessageEvent', request.json);
    // The per-type rules (functions/src/messages/schemas.ts `messageEventProblems`), then the emoji.
    const problems = messageEventProblems(event).map((problem) => `${problem.path.join('.')}: ${problem.message}`);
    if (event.emoji !== undefined) {
      const problem = emojiProblem(event.emoji);
      if (problem !== null) problems.push(`emoji: ${problem}`);
    }
    if (problems.length > 0) throw invalidRequest(problems);
    const sender = { externalId: event.sender.externalId, displayName: event.sender.displayName ?? null, kind: event.sender.kind ?? 'customer' };
    const target = event.target === undefined ? null : event.target.eventId !== undefined ? { eventId: event.target.eventId } : { providerMessageId: event.target.providerMessageId ?? '' };
    const fingerprint = eventFingerprint({ externalConversationId: event.externalConversationId, sender, type: event.type, target, text: event.text ?? null, emoji: event.emoji ?? null, removed: event.removed === true });
    const eventKey = `${integration.integrationId}\u0000${event.eventId}`;
    const known = events.get(eventKey);
    if (known !== undefined) {
      if (known.fingerprint !== fingerprint || known.messageEvent === undefined) throw apiError(409, 'event_conflict', `eventId '${event.eventId}' was already used with different content.`);
      return { status: 200, body: { conversationId: known.conversationId, applied: known.applied === true, duplicate: true } };
    }
    const conversationId = digestId('c_', [integration.integrationId, event.externalConversationId]);
    const record = (applied: boolean): void => {
      events.set(eventKey, { fingerprint, messageId: null, conversationId, messageEvent: event.type, applied });
    };
    const answer = (status: 200 | 201 | 202, applied: boolean): Answer => ({ status, body: { conversationId, applied, duplicate: false } });
    if (event.type === 'typing' || target === null) {
      typing.set(conversationId, {
        conversationId,
        integrationId: integration.integrationId,
        senderExternalId: sender.externalId,
        ...(sender.displayName === null ? {} : { displayName: sender.displayName }),
        at: request.now,
        expireAt: request.now + EVENT_LIMITS.typingTtlMs,
      });
      record(true);
      return answer(201, true);
    }
    const change: PendingEvent = {
      type: event.type,
      conversationId,
      senderExternalId: sender.externalId,
      receivedAt: request.now,
      ...(event.text === undefined ? {} : { text: event.text }),
      ...(event.emoji === undefined ? {} : { emoji: event.emoji }),
      ...(event.removed === true ? { removed: true } : {}),
    };
    const notFound = (): ApiError => {
      const named = 'eventId' in target ? `target.eventId: '${target.eventId}'` : `target.providerMessageId: '${target.providerMessageId}'`;
      return apiError(404, 'target_not_found', `${named} is not ${event.type === 'reaction' ? 'a message of this conversation' : "a message of this sender's in this conversation"}.`);
    };
    let found: EventTargetRef | undefined;
    let foundConversation: string | undefined;
    if ('eventId' in target) {
      const located = events.get(`${integration.integrationId}\u0000${target.eventId}`);
      // An eventId of an event (not a message) names no message.
      if (located !== undefined && located.messageId === null) throw notFound();
      if (located !== undefined) {
        const message = messages.find((m) => m.messageId === located.messageId && !m.erased);
        if (message === undefined) throw notFound();
        found = { message };
        foundConversation = located.conversationId;
      }
    } else {
      const located = providerMessages.get(`${integration.integrationId}\u0000${target.providerMessageId}`);
      const reply = located === undefined ? undefined : replyStore.get(located.messageId);
      if (located !== undefined && reply !== undefined) {
        found = { reply };
        foundConversation = located.conversationId;
      }
    }
    if (found === undefined) {
      // Not there yet: kept for 24 hours, applied when it arrives.
      const key = `${integration.integrationId}\u0000${'eventId' in target ? `e:${target.eventId}` : `p:${target.providerMessageId}`}`;
      pendingEvents.set(key, [...(pendingEvents.get(key) ?? []), change]);
      record(false);
      return answer(202, false);
    }
    if (foundConversation !== conversationId) throw notFound();
    const effect = applyChange(found, change, request.now);
    if (effect === 'not_found') throw notFound();
    record(effect === 'applied');
    return effect === 'applied' ? answer(201, true) : answer(200, false);
  };

  const listPendingDeliveries: Handler = (request) => {
    const parsed = body<{ limit?: number; cursor?: string }>('listPendingDeliveries', request.json);
    const owner = request.integration;
    const limit = parsed.limit ?? 50;
    const after = parsed.cursor === undefined ? null : decodeCursor(owner, '', parsed.cursor, (c) => (typeof c.t === 'number' && typeof c.d === 'string' && Object.keys(c).length === 2 ? { t: c.t, d: c.d } : null));
    const claimable = [...deliveries.values()]
      // The service's catch-up index: claimable deliveries carry `pendingAt` (rules/record.ts `withPendingAt`), listed once due.
      .flatMap((d) => (d.integrationId === owner.integrationId && d.pendingAt !== undefined && d.pendingAt <= request.now ? [{ d, t: d.pendingAt }] : []))
      .sort((a, b) => a.t - b.t || (a.d.deliveryId < b.d.deliveryId ? -1 : a.d.deliveryId > b.d.deliveryId ? 1 : 0))
      .filter((e) => after === null || e.t > after.t || (e.t === after.t && e.d.deliveryId > after.d));
    const page = claimable.slice(0, limit);
    const last = page.at(-1);
    return {
      status: 200,
      body: {
        deliveries: page.map(({ d }) => ({ deliveryId: d.deliveryId, workspaceId: d.workspaceId, integrationId: d.integrationId, conversationId: d.conversationId, messageId: d.messageId })),
        nextCursor: claimable.length > limit && last !== undefined ? encodeCursor(owner, '', { t: last.t, d: last.d.deliveryId }) : null,
      },
    };
  };

  const getDeliveryAttachment: Handler = (request) => {
    const parsed = body<{ deliveryId: string; leaseId: string; attachmentId: string }>('getDeliveryAttachment', request.json);
    const d = deliveryOf(request, parsed.deliveryId);
    const file = decideAttachmentFetch(d, { now: request.now, leaseId: parsed.leaseId, attachmentId: parsed.attachmentId });
    const bytes = files.get(file.attachmentId);
    if (bytes === undefined || bytes.length !== file.size) {
      throw apiError(503, 'temporarily_unavailable', 'The file cannot be read at the moment; retry after the indicated delay.', 5);
    }
    // The service's headers (rules/file-headers.ts): CSP sandbox, a cleaned name, nosniff, ETag, Repr-Digest.
    const headers = attachmentDownloadHeaders(file);
    // Bytes that do not match the recorded SHA-256 are cut off before their last byte, as the
    // service's streamed answer does: a client never receives a complete wrong file.
    if (sha256Hex(bytes) !== file.sha256) return { status: 200, file: { bytes, headers, cutOffAfter: bytes.length - 1 } };
    viewOf(d.deliveryId).fetched.add(file.attachmentId);
    return { status: 200, file: { bytes, headers } };
  };

  const listPendingErasures: Handler = (request) => {
    const parsed = body<{ limit?: number; cursor?: string }>('listPendingErasures', request.json);
    const owner = request.integration;
    const limit = parsed.limit ?? 50;
    const after = parsed.cursor === undefined ? null : decodeCursor(owner, 'erasures\u0000', parsed.cursor, (c) => (typeof c.e === 'string' && Object.keys(c).length === 1 ? { e: c.e } : null));
    const open = erasures
      .filter((e) => e.integrationId === owner.integrationId && !e.acknowledged)
      .sort((a, b) => (a.erasureId < b.erasureId ? -1 : a.erasureId > b.erasureId ? 1 : 0))
      .filter((e) => after === null || e.erasureId > after.e);
    const page = open.slice(0, limit);
    const last = page.at(-1);
    return {
      status: 200,
      body: {
        erasures: page.map((e) => ({ erasureId: e.erasureId, externalCustomerId: e.externalCustomerId, externalConversationIds: [...e.externalConversationIds], requestedAt: e.requestedAt })),
        nextCursor: open.length > limit && last !== undefined ? encodeCursor(owner, 'erasures\u0000', { e: last.erasureId }) : null,
      },
    };
  };

  const acknowledgeErasure: Handler = (request) => {
    const parsed = body<{ erasureId: string }>('acknowledgeErasure', request.json);
    const erasure = erasures.find((e) => e.erasureId === parsed.erasureId && e.integrationId === request.integration.integrationId);
    if (erasure === undefined) throw apiError(404, 'erasure_not_found', 'erasureId: no finished erasure of this integration has this id.');
    erasure.acknowledged = true;
    // functions/src/privacy/erasure-list.ts: `acknowledgedAt` is kept from the first acknowledgement.
    erasure.acknowledgedAt ??= request.now;
    return { status: 200, body: { acknowledged: true } };
  };

  /** One handler per operation of the document; a new operation without one does not compile. */
  const handlers = {
    sendMessage,
    sendMessageEvent,
    claimDelivery: transition<{ deliveryId: string; requestId: string }, unknown>('claimDelivery', (d, b, _r, facts) =>
      decideClaim(d, { ...facts, requestId: b.requestId, newLeaseId: `l_${randomBytes(18).toString('base64url')}` }),
    ),
    startDelivery: transition<{ deliveryId: string; leaseId: string }, unknown>('startDelivery', (d, b, r) => decideStart(d, { now: r.now, leaseId: b.leaseId })),
    extendDeliveryLease: transition<{ deliveryId: string; leaseId: string }, unknown>('extendDeliveryLease', (d, b, r) => decideExtend(d, { now: r.now, leaseId: b.leaseId })),
    completeDelivery: (request) => {
      const answer = transition<{ deliveryId: string; leaseId: string; providerMessageIds: string[]; parts?: NonNullable<CompleteInput['parts']> }, unknown>('completeDelivery', (d, b, r) =>
        decideComplete(d, { now: r.now, leaseId: b.leaseId, providerMessageIds: b.providerMessageIds, ...(b.parts === undefined ? {} : { parts: b.parts }) }),
      )(request);
      // messages/triggers.ts `onReplyProviderIds`: a reply's sent delivery names it by its provider ids.
      const completed = deliveries.get((request.json as { deliveryId: string }).deliveryId);
      if (completed !== undefined) recordProviderIds(completed);
      return answer;
    },
    failDelivery: transition<{ deliveryId: string; leaseId: string; outcome: FailOutcome; code: string; retryAfterMs?: number; providerMessageIds?: string[]; parts?: NonNullable<CompleteInput['parts']> }, unknown>(
      'failDelivery',
      (d, b, r) => decideFail(d, { ...b, now: r.now, random: randomInt(0, 1_000_000) / 1_000_000 }),
    ),
    listPendingDeliveries,
    reportDeliveryReceipt: transition<{ deliveryId: string; status: ReceiptStatus; code?: string; at?: number; providerMessageId?: string }, unknown>('reportDeliveryReceipt', (d, b, r) => {
      // The service's schema refines this (functions/src/deliveries/schemas.ts): the document says it in prose.
      if (b.status === 'failed' && b.code === undefined) throw apiError(400, 'invalid_request', 'code: required when status is failed');
      const decision = decideReceipt(d, { ...b, now: r.now });
      const key = b.providerMessageId ?? d.providerMessageIds[0] ?? '';
      viewOf(d.deliveryId).receipts.set(key, { status: b.status, at: b.at ?? r.now });
      return decision;
    }),
    getDeliveryAttachment,
    listPendingErasures,
    acknowledgeErasure,
  } satisfies Record<OperationId, Handler>;

  const operationByPath = new Map<string, OperationId>(Object.entries(REQUESTS).map(([id, r]) => [r.path, id as OperationId]));

  // ------------------------------------------------------------------------------------------ HTTP

  function takeFault(operationId: OperationId): FaultSpec | null {
    const queue = faults.get(operationId);
    const head = queue?.[0];
    if (queue === undefined || head === undefined) return null;
    head.remaining -= 1;
    if (head.remaining <= 0) queue.shift();
    return head.spec;
  }

  function authenticate(authorization: string | undefined): Integration {
    const match = authorization === undefined ? null : /^Bearer +(\S+)\s*$/i.exec(authorization);
    const key = match?.[1];
    const integration = key !== undefined && KEY_PATTERN.test(key) ? integrationsByKeyHash.get(sha256Hex(Buffer.from(key))) : undefined;
    if (integration === undefined) throw apiError(401, 'invalid_key', INVALID_KEY_MESSAGE);
    // functions/src/integrations/auth.ts: a valid key of an inactive integration is 403, on every operation.
    if (!integration.active) throw apiError(403, 'integration_inactive', 'This integration is inactive.');
    return integration;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const receivedAt = now();
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks);
    sweep();
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const operationId = operationByPath.get(path) ?? null;
    const headers: Record<string, string> = { 'X-Request-Id': `req_${randomBytes(12).toString('base64url')}` };
    let integration: Integration | null = null;
    let requestBody: unknown;
    let injected = false;
    let answer: Answer;
    try {
      if (operationId === null) throw apiError(404, 'not_found', `${path} is not an operation of the API.`);
      if (req.method !== 'POST') {
        headers.Allow = 'POST';
        throw apiError(405, 'method_not_allowed', `POST ${path} accepts POST only.`);
      }
      integration = authenticate(req.headers.authorization);
      if (operationId === 'sendMessage' || operationId === 'sendMessageEvent') Object.assign(headers, rateLimitHeaders(rateLimitState(integration, receivedAt, false)));
      const contentType = req.headers['content-type'] ?? '';
      const accepts = operationId === 'sendMessage' ? ['application/json', 'multipart/form-data'] : ['application/json'];
      requestBody = recordedBody(contentType, raw);
      const fault = takeFault(operationId);
      if (fault !== null) {
        injected = true;
        const retryAfter = fault.retryAfterSeconds ?? (fault.status === 429 || fault.status === 503 ? 1 : undefined);
        throw apiError(fault.status, fault.code ?? FAULT_CODES[fault.status], 'injected by the test service (inject)', retryAfter);
      }
      const mediaType = parseMediaType(contentType, accepts);
      const limit = mediaType === 'application/json' ? MAX_JSON_BYTES : MAX_MULTIPART_BYTES;
      if (raw.length > limit) throw apiError(413, 'payload_too_large', `Request body is ${raw.length} bytes; the limit for ${mediaType} is ${limit} bytes.`);
      const json = mediaType === 'application/json' ? parseJson(raw, 'body') : undefined;
      answer = handlers[operationId]({ integration, json, mediaType, contentType, raw, now: receivedAt, headers });
    } catch (error) {
      const refusal = error instanceof ApiError ? error : apiError(503, 'temporarily_unavailable', 'Temporary failure; retry after the indicated delay.', 1);
      if (!(error instanceof ApiError)) console.error('test service: unexpected error', error);
      if (refusal.retryAfterSeconds !== undefined) headers['Retry-After'] = String(refusal.retryAfterSeconds);
      answer = { status: refusal.status, body: { error: { code: refusal.code, message: refusal.message } } };
    }

    let responseBody: unknown;
    if ('file' in answer) {
      const { bytes, cutOffAfter } = answer.file;
      Object.assign(headers, answer.file.headers, { 'Content-Length': String(bytes.length) });
      res.writeHead(200, headers);
      if (cutOffAfter !== undefined) {
        res.write(bytes.subarray(0, cutOffAfter));
        res.destroy();
        responseBody = { bytes: cutOffAfter, cutOff: true };
      } else {
        res.end(bytes);
        responseBody = { bytes: bytes.length };
      }
    } else {
      Object.assign(headers, { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store' });
      res.writeHead(answer.status, headers);
      res.end(JSON.stringify(answer.body));
      responseBody = answer.body;
    }
    recorded.push({
      seq: recorded.length + 1,
      receivedAt,
      answeredAt: now(),
      operationId,
      method: req.method ?? '',
      path,
      integrationId: integration?.integrationId ?? null,
      request: { headers: recordedHeaders(req), body: requestBody },
      response: { status: answer.status, headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v])), body: responseBody },
      injected,
    });
    notifyWaiters();
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      console.error('test service: request failed', error);
      if (!res.headersSent) res.writeHead(503, { 'Retry-After': '1' });
      res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const ticker = setInterval(() => {
    sweep();
    notifyWaiters();
  }, 20);
  ticker.unref();
  const stoppers = new Set<() => void>();

  // ----------------------------------------------------------------------------------- the service

  const deliveryOrThrow = (deliveryId: string): DeliveryRecord => {
    const d = deliveries.get(deliveryId);
    if (d === undefined) throw new Error(`test service: no delivery ${deliveryId}`);
    return d;
  };

  // ------------------------------------------------------------------------- reply lifecycle (edits)

  /** The reply's own deliveries (not its edits / unsends), oldest first. */
  const replyDeliveries = (messageId: string): DeliveryRecord[] =>
    [...deliveries.values()].filter((d) => d.messageId === messageId && d.kind === undefined).sort((a, b) => a.createdAt - b.createdAt || a.seq - b.seq);
  /** When a delivery became sent (its attempt log's `sent`). */
  const sentAtOf = (d: DeliveryRecord): number | undefined => (d.status === 'sent' ? (d.attemptLog ?? []).findLast((e) => e.event === 'sent')?.at ?? d.updatedAt : undefined);
  /** When a delivery ended (sent / failed / unknown), for the history's `at`. */
  const endedAtOf = (d: DeliveryRecord): number | undefined => (isTerminal(d.status) ? ((d.attemptLog ?? []).at(-1)?.at ?? d.updatedAt) : undefined);
  const unsentAtOf = (reply: StoredReply): number | undefined => {
    for (const u of reply.unsends) {
      const d = u.deliveryId === null ? undefined : deliveries.get(u.deliveryId);
      if (d?.status === 'sent') return endedAtOf(d);
    }
    return undefined;
  };



  /**
   * The operator's edit / unsend request (the console's write and the service's trigger): checked
   * as the rules check it, then a delivery of the kind at the end of the conversation's queue, with
   * the reply's sent delivery and its provider ids as the target.
   */
  function requestLifecycle(kind: DeliveryKind, messageId: string, text: string, uid: string): ReplyCreated {
    sweep();
    const reply = replyStore.get(messageId);
    if (reply === undefined) throw new Error(`test service: no operator reply ${messageId} (reply() returns its messageId)`);
    const conversation = conversations.get(reply.conversationId);
    if (conversation === undefined) throw new Error('test service: the conversation was erased');
    const at = now();
    const capability = parseLifecycleCapability(integrations.get(reply.integrationId)?.capabilities.lifecycle);
    // The reply's delivery as the console's mirror shows it: its latest (a resend's).
    const sent = replyDeliveries(messageId).at(-1);
    const taken = (kind === 'edit' ? reply.edits : reply.unsends).filter((entry) => entry.deliveryId !== null).map((entry) => entry.requestedAt);
    // The service's own check (rules/lifecycle.ts), on the facts as this store holds them.
    const verdict = lifecycleVerdict(
      {
        kind,
        window: capability[kind],
        replyStatus: sent?.status ?? null,
        sentAt: sent?.sentAt ?? null,
        replyText: reply.text,
        unsent: unsentAtOf(reply) !== undefined,
        // An unsend queued or on its way (one that failed or ended unknown stops nothing).
        unsendTaken: reply.unsends.some((u) => {
          const status = u.deliveryId === null ? undefined : deliveries.get(u.deliveryId)?.status;
          return status === 'queued' || status === 'leased' || status === 'sending' || status === 'sent';
        }),
        latestTaken: taken.length === 0 ? null : Math.max(...taken),
      },
      { requestedAt: at, ...(kind === 'edit' ? { text } : {}) },
    );
    if (!verdict.accepted) {
      throw Object.assign(new Error(`test service: ${kind} refused (${verdict.code}): ${LIFECYCLE_REFUSALS[verdict.code].replace('KIND', kind)}`), { code: verdict.code });
    }
    if (sent === undefined) throw new Error('test service: the reply has no delivery');
    const target = lifecycleTarget(sent.deliveryId, sent.providerMessageIds, sent.parts ?? []);
    const history = kind === 'edit' ? reply.edits : reply.unsends;
    // Deterministic from the request, as the service's id (a redelivered trigger is a no-op); the
    // request's position tells two requests of one millisecond apart.
    const deliveryId = digestId('d_', [reply.conversationId, messageId, kind, String(at), uid, String(history.length)]);
    if (kind === 'edit') reply.edits.push({ text, requestedAt: at, uid, deliveryId });
    else reply.unsends.push({ requestedAt: at, uid, deliveryId });
    append({ conversation, messageId, deliveryId, text: verdict.text, lifecycle: { kind, target }, reason: 'created' });
    return { messageId, deliveryId };
  }

  function replyView(reply: StoredReply): ReplyView {
    const own = replyDeliveries(reply.messageId);
    const latest = own.at(-1);
    const sentAt = latest === undefined ? undefined : sentAtOf(latest);
    const entry = (deliveryId: string | null) => {
      const d = deliveryId === null ? undefined : deliveries.get(deliveryId);
      if (d === undefined) return { deliveryId, status: 'failed' as const };
      const at = endedAtOf(d);
      return {
        deliveryId,
        status: d.status,
        ...(at === undefined ? {} : { at }),
        ...(d.error === null || d.status === 'sent' ? {} : { error: { outcome: d.error.outcome === 'unknown' ? ('unknown' as const) : ('failed' as const), code: d.error.code } }),
      };
    };
    const unsentAt = unsentAtOf(reply);
    return {
      messageId: reply.messageId,
      integrationId: reply.integrationId,
      conversationId: reply.conversationId,
      text: reply.text,
      delivery: { deliveryId: latest?.deliveryId ?? '', status: latest?.status ?? 'queued', ...(sentAt === undefined ? {} : { sentAt }) },
      edits: reply.edits.map((e) => ({ text: e.text, requestedAt: e.requestedAt, uid: e.uid, ...entry(e.deliveryId) })),
      unsends: reply.unsends.map((u) => ({ requestedAt: u.requestedAt, uid: u.uid, ...entry(u.deliveryId) })),
      ...(unsentAt === undefined ? {} : { unsent: { at: unsentAt } }),
      reactions: reply.reactions.map((r) => ({ ...r })),
    };
  }

  const service: TestService = {
    baseUrl,

    createIntegration(options = {}) {
      const { workspaceId = randomId('w_'), active = true, ...capabilities } = options;
      const integrationId = randomId('i_');
      const key = `sdk_test_${randomBytes(32).toString('base64url')}`;
      const integration: Integration = { integrationId, workspaceId, keyHash: sha256Hex(Buffer.from(key)), capabilities, active, bucket: undefined };
      integrations.set(integrationId, integration);
      integrationsByKeyHash.set(integration.keyHash, integration);
      const created: CreatedIntegration = { integrationId, workspaceId, key };
      return Promise.resolve(created);
    },

    setCapabilities(integrationId, capabilities) {
      const integration = integrations.get(integrationId);
      if (integration === undefined) throw new Error(`test service: no integration ${integrationId}`);
      integration.capabilities = { ...integration.capabilities, ...capabilities };
    },

    reply(input: ReplyInput): ReplyCreated {
      const conversation = conversations.get(input.conversationId);
      if (conversation === undefined) throw new Error(`test service: no conversation ${input.conversationId} (start one with POST /v1/messages)`);
      const text = input.text ?? '';
      const replyFiles = input.files ?? [];
      if (text === '' && replyFiles.length === 0) throw new Error('test service: a reply needs text or files');
      if (codePointLength(text) > REPLY_MAX_CODE_POINTS) throw new Error(`test service: a reply's text is at most ${REPLY_MAX_CODE_POINTS} characters`);
      const integration = integrations.get(conversation.integrationId);
      if (replyFiles.length > 0 && integration?.capabilities.attachments !== true) {
        throw new Error('test service: this integration takes text-only replies (createIntegration({ attachments: true }) or setCapabilities)');
      }
      if (replyFiles.length > ATTACHMENT_LIMITS.maxCount) throw new Error(`test service: at most ${ATTACHMENT_LIMITS.maxCount} files per reply`);
      const attachments = replyFiles.map((file): AttachmentRef => {
        if (!(ATTACHMENT_CONTENT_TYPES as readonly string[]).includes(file.contentType)) throw new Error(`test service: ${file.contentType} is not an attachment content type (${ATTACHMENT_CONTENT_TYPES.join(', ')})`);
        if (file.data.length === 0 || file.data.length > ATTACHMENT_LIMITS.maxBytesPerFile) throw new Error(`test service: a file has 1 to ${ATTACHMENT_LIMITS.maxBytesPerFile} bytes`);
        const attachmentId = randomId('a_');
        files.set(attachmentId, Buffer.from(file.data));
        return { attachmentId, name: file.fileName, contentType: file.contentType as AttachmentContentType, size: file.data.length, sha256: sha256Hex(file.data) };
      });
      const messageId = randomId('m_');
      const deliveryId = digestId('d_', [conversation.conversationId, messageId]);
      replyStore.set(messageId, { messageId, integrationId: conversation.integrationId, conversationId: conversation.conversationId, text, edits: [], unsends: [], reactions: [] });
      append({ conversation, messageId, deliveryId, text, ...(attachments.length > 0 ? { attachments } : {}), reason: 'created' });
      return { messageId, deliveryId };
    },

    edit(messageId, text, options = {}) {
      return requestLifecycle('edit', messageId, text, options.uid ?? 'operator');
    },

    unsend(messageId, options = {}) {
      return requestLifecycle('unsend', messageId, '', options.uid ?? 'operator');
    },

    replies(filter = {}) {
      sweep();
      return [...replyStore.values()]
        .filter((r) => (filter.integrationId === undefined || r.integrationId === filter.integrationId) && (filter.conversationId === undefined || r.conversationId === filter.conversationId))
        .map(replyView);
    },

    typing(filter = {}) {
      const at = now();
      return [...typing.values()].filter((t) => t.expireAt > at && (filter.integrationId === undefined || t.integrationId === filter.integrationId)).map((t) => ({ ...t }));
    },

    cancel(deliveryId) {
      const d = deliveryOrThrow(deliveryId);
      const at = now();
      // The console's request time identifies the request: the same request again answers as before (rules `decideCancel`).
      const answer = decideOn(d.deliveryId, at, (current) => decideCancel(current, { now: at, requestedAt: at })).status;
      if (answer === 'cancelled') viewOf(deliveryId).cancelled = true;
      notifyWaiters();
      return answer;
    },

    resend(deliveryId) {
      sweep();
      const d = deliveryOrThrow(deliveryId);
      if (d.status !== 'failed' && d.status !== 'unknown') throw new Error(`test service: only a failed or unknown delivery is resent (this one is ${d.status})`);
      if (d.kind !== undefined) throw new Error(`test service: an ${d.kind} delivery is not resent (request the ${d.kind} again)`);
      const conversation = conversations.get(d.conversationId);
      if (conversation === undefined) throw new Error('test service: the conversation was erased');
      // A resend carries only the parts not known to be sent (docs/decisions.md#operator-resend).
      const sent = new Set((d.parts ?? []).filter((p) => p.status === 'sent').map((p) => p.part));
      const attachments = (d.attachments ?? []).filter((a) => !sent.has(a.attachmentId));
      const textSent = d.textSent === true || sent.has('text');
      const next = append({
        conversation,
        messageId: d.messageId,
        deliveryId: digestId('d_', [d.conversationId, d.messageId, 'resend', d.deliveryId]),
        text: textSent ? '' : d.text,
        ...(attachments.length > 0 ? { attachments } : {}),
        ...(textSent ? { textSent } : {}),
        reason: 'resend',
      });
      return { messageId: next.messageId, deliveryId: next.deliveryId };
    },

    erase(integrationId, externalCustomerId) {
      const at = now();
      const ofCustomer = messages.filter((m) => m.integrationId === integrationId && m.senderKind === 'customer' && m.senderExternalId === externalCustomerId && !m.erased);
      const conversationIds = [...new Set(ofCustomer.map((m) => m.conversationId))];
      // functions/src/privacy/erasure.ts: a conversation whose only customer is this one goes
      // entirely (every message, and the replies); in another, only the customer's messages go.
      const sole = conversationIds.filter((id) => !messages.some((m) => m.conversationId === id && !m.erased && m.senderKind === 'customer' && m.senderExternalId !== externalCustomerId));
      const erased = messages.filter((m) => !m.erased && (ofCustomer.includes(m) || sole.includes(m.conversationId)));
      const replies = new Set([...deliveries.values()].filter((d) => sole.includes(d.conversationId)).map((d) => d.messageId));
      for (const m of erased) m.erased = true;
      // The customer's reactions on what stays, their pending events and their typing go too (docs/privacy.md).
      for (const m of messages) if (m.integrationId === integrationId) m.reactions = m.reactions.filter((r) => r.senderExternalId !== externalCustomerId);
      for (const r of replyStore.values()) if (r.integrationId === integrationId) r.reactions = r.reactions.filter((x) => x.senderExternalId !== externalCustomerId);
      for (const [key, list] of pendingEvents) {
        if (!key.startsWith(`${integrationId}\u0000`)) continue;
        const kept = list.filter((e) => e.senderExternalId !== externalCustomerId && !sole.includes(e.conversationId));
        if (kept.length === 0) pendingEvents.delete(key);
        else pendingEvents.set(key, kept);
      }
      for (const [conversationId, t] of typing) if (t.integrationId === integrationId && (t.senderExternalId === externalCustomerId || sole.includes(conversationId))) typing.delete(conversationId);
      for (const messageId of replyStore.keys()) if (sole.includes(replyStore.get(messageId)?.conversationId ?? '')) replyStore.delete(messageId);
      for (const conversationId of conversationIds) {
        for (const d of [...deliveries.values()].filter((x) => x.conversationId === conversationId).sort((a, b) => a.seq - b.seq)) {
          const current = deliveries.get(d.deliveryId) ?? d;
          decideOn(current.deliveryId, at, (record) => decideErase(record, { now: at }));
        }
      }
      const erasure: Erasure = {
        erasureId: randomId('x_'),
        integrationId,
        externalCustomerId,
        // Sorted, as the service lists them (functions/src/privacy/erasure.ts).
        externalConversationIds: conversationIds.map((id) => conversations.get(id)?.externalConversationId ?? '').filter((id) => id !== '').sort(),
        requestedAt: at,
        counts: { conversations: sole.length, messages: erased.length + replies.size },
        acknowledged: false,
        acknowledgedAt: null,
      };
      erasures.push(erasure);
      notifyWaiters();
      return { erasureId: erasure.erasureId };
    },

    erasures(integrationId) {
      return erasures
        .filter((e) => integrationId === undefined || e.integrationId === integrationId)
        .map((e) => ({ ...e, externalConversationIds: [...e.externalConversationIds], counts: { ...e.counts } }));
    },

    subscription(integrationId) {
      const subscription = new Subscription(notifyWaiters);
      let set = subscriptions.get(integrationId);
      if (set === undefined) {
        set = new Set();
        subscriptions.set(integrationId, set);
      }
      set.add(subscription);
      return subscription;
    },

    pushTo(integrationId, url) {
      let stopped = false;
      const timers = new Set<ReturnType<typeof setTimeout>>();
      const deliver = (message: Published, attempt: number): void => {
        if (stopped) return;
        const envelope = {
          message: { data: message.data.toString('base64'), attributes: message.attributes, messageId: message.id, publishTime: new Date().toISOString() },
          subscription: `projects/test-service/subscriptions/push-${integrationId}`,
        };
        fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(envelope) })
          .then(async (response) => {
            await response.arrayBuffer();
            return response.ok;
          })
          .catch(() => false)
          .then((ok) => {
            notifyWaiters();
            if (ok || stopped) return;
            // Redelivered after a non-2xx with backoff, as Pub/Sub push does (kept short for tests).
            const timer = setTimeout(() => {
              timers.delete(timer);
              deliver(message, attempt + 1);
            }, Math.min(2000, 50 * 2 ** attempt));
            timers.add(timer);
          })
          .catch(() => undefined);
      };
      const target = (message: Published): void => deliver(message, 0);
      let set = pushTargets.get(integrationId);
      if (set === undefined) {
        set = new Set();
        pushTargets.set(integrationId, set);
      }
      set.add(target);
      const stop = (): void => {
        stopped = true;
        for (const timer of timers) clearTimeout(timer);
        pushTargets.get(integrationId)?.delete(target);
        stoppers.delete(stop);
      };
      stoppers.add(stop);
      return stop;
    },

    inject(operationId, fault) {
      if (!(operationId in handlers)) throw new Error(`test service: ${String(operationId)} is not an operation`);
      const times = fault.times ?? 1;
      if (!Number.isInteger(times) || times < 1) throw new RangeError('times must be a positive integer');
      let queue = faults.get(operationId);
      if (queue === undefined) {
        queue = [];
        faults.set(operationId, queue);
      }
      queue.push({ spec: { ...fault }, remaining: times });
    },

    sweep(at = now()) {
      // The sweeper's lease expiry as of `at` (functions/src/deliveries/liveness.ts); the
      // notifications due by the service clock go out as usual.
      store.sweep(at);
      sweep();
      notifyWaiters();
    },

    expireLease(deliveryId) {
      const d = deliveryOrThrow(deliveryId);
      if (d.lease === null || (d.status !== 'leased' && d.status !== 'sending')) throw new Error(`test service: delivery ${deliveryId} holds no lease (it is ${d.status})`);
      const at = now();
      // The lease ran out just now: the same expiry as its 120 s running out (record.ts `isLeaseLive`: expired at `expiresAt`).
      // A fault, not a rule: the record is changed behind the rules' back, as time passing would.
      store.records.set(deliveryId, { ...d, lease: { ...d.lease, expiresAt: Math.min(d.lease.expiresAt, at) } });
      sweep();
      notifyWaiters();
    },

    publish(integrationId, data, attributes = {}) {
      publishCount += 1;
      const message: Published = { id: String(publishCount), data: Buffer.from(data), attributes: { ...attributes } };
      for (const subscription of subscriptions.get(integrationId) ?? []) subscription.publish(message);
      for (const push of pushTargets.get(integrationId) ?? []) push(message);
    },

    notifyAgain(deliveryId) {
      publish(deliveryOrThrow(deliveryId));
    },

    corruptAttachment(deliveryId, attachmentId) {
      const d = deliveryOrThrow(deliveryId);
      const file = attachmentId === undefined ? d.attachments?.[0] : d.attachments?.find((a) => a.attachmentId === attachmentId);
      const bytes = file === undefined ? undefined : files.get(file.attachmentId);
      if (file === undefined || bytes === undefined) throw new Error(`test service: delivery ${deliveryId} has no attachment ${attachmentId ?? ''}`);
      const corrupted = Buffer.from(bytes);
      corrupted[0] = (corrupted[0] ?? 0) ^ 0xff;
      files.set(file.attachmentId, corrupted);
    },

    deliveries(filter = {}) {
      sweep();
      return [...deliveries.values()]
        .filter((d) => (filter.integrationId === undefined || d.integrationId === filter.integrationId) && (filter.conversationId === undefined || d.conversationId === filter.conversationId))
        .sort((a, b) => a.createdAt - b.createdAt || a.seq - b.seq)
        .map((d): DeliveryView => {
          const view = viewOf(d.deliveryId);
          return {
            deliveryId: d.deliveryId,
            integrationId: d.integrationId,
            conversationId: d.conversationId,
            messageId: d.messageId,
            ...(d.kind === undefined || d.target === undefined ? {} : { kind: d.kind, target: { ...d.target, providerMessageIds: [...d.target.providerMessageIds] } }),
            status: d.status,
            cancelled: view.cancelled || d.error?.code === 'erased',
            attempts: attemptsOf(d),
            providerMessageIds: [...d.providerMessageIds],
            parts: (d.parts ?? []).map((p) => ({ ...p })),
            receipts: [...view.receipts].map(([providerMessageId, r]) => ({ status: r.status, providerMessageId, at: r.at })),
            fetchedAttachments: [...view.fetched],
            ...(d.error === null || d.status === 'sent' ? {} : { failure: { code: d.error.code, outcome: d.error.outcome === 'unknown' ? ('unknown' as const) : ('failed' as const) } }),
            notBefore: d.notBefore,
            lastFail: d.lastFail === null ? null : { ...d.lastFail },
            lease: d.lease === null ? null : { expiresAt: d.lease.expiresAt },
            attachments: (d.attachments ?? []).map(({ attachmentId, name, contentType, size, sha256 }) => ({ attachmentId, name, contentType, size, sha256 })),
            traceparent: `00-${traceIdOfDelivery(d.deliveryId)}-${createHash('sha256').update(`span:${d.deliveryId}`).digest('hex').slice(0, 16)}-01`,
          };
        });
    },

    messages(filter = {}) {
      return messages
        .filter((m) => !m.erased && (filter.integrationId === undefined || m.integrationId === filter.integrationId) && (filter.conversationId === undefined || m.conversationId === filter.conversationId))
        .map(({ senderExternalId: _s, senderKind: _k, fingerprint: _f, erased: _e, ...view }) => ({
          ...view,
          sender: { ...view.sender },
          images: view.images.map((i) => ({ ...i })),
          edits: view.edits.map((e) => ({ ...e })),
          ...(view.deleted === undefined ? {} : { deleted: { ...view.deleted } }),
          reactions: view.reactions.map((r) => ({ ...r })),
        }));
    },

    calls(filter = {}) {
      return recorded.filter((c) => (filter.integrationId === undefined || c.integrationId === filter.integrationId) && (filter.operationId === undefined || c.operationId === filter.operationId));
    },

    violations(options = {}): Violation[] {
      return findViolations(recorded, { final: options.final === true });
    },

    waitFor(predicate, timeoutMs = 5000) {
      return new Promise<void>((resolve, reject) => {
        const check = (): void => {
          let held = false;
          try {
            held = predicate();
          } catch (error) {
            finish();
            reject(error instanceof Error ? error : new Error(String(error)));
            return;
          }
          if (held) {
            finish();
            resolve();
          }
        };
        const timer = setTimeout(() => {
          finish();
          reject(new Error(`test service: waitFor timed out after ${timeoutMs} ms`));
        }, timeoutMs);
        const finish = (): void => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },

    async close() {
      clearInterval(ticker);
      for (const stop of [...stoppers]) stop();
      for (const set of subscriptions.values()) for (const subscription of set) await subscription.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return service;
}

/** The attempt log of the real record, numbered by the lease it belongs to. */
function attemptsOf(d: DeliveryRecord): DeliveryView['attempts'] {
  let attempt = 0;
  return (d.attemptLog ?? []).map((entry) => {
    if (entry.event === 'claimed') attempt += 1;
    return { event: entry.event, at: entry.at, attempt, ...(entry.code === undefined ? {} : { code: entry.code }) };
  });
}

/** The accepted media type of a Content-Type, or a 415 (functions/src/platform/http/pipeline.ts `parseMediaType`). */
function parseMediaType(contentType: string, accepts: readonly string[]): 'application/json' | 'multipart/form-data' {
  const expected = accepts.join(' or ');
  if (contentType.trim() === '') throw apiError(415, 'unsupported_media_type', `Content-Type is required: use ${expected}.`);
  const [type, ...params] = contentType.split(';').map((p) => p.trim());
  const mediaType = (type ?? '').toLowerCase();
  const accepted = accepts.find((a) => a === mediaType);
  if (accepted === undefined) throw apiError(415, 'unsupported_media_type', `Content-Type '${mediaType}' is not supported: use ${expected}.`);
  const malformed = params.find((p) => p !== '' && !/^[^=\s]+=/.test(p));
  if (malformed !== undefined) throw apiError(415, 'unsupported_media_type', `Content-Type parameter '${malformed.slice(0, 40)}' is malformed: use name=value (e.g. charset=utf-8).`);
  const charset = params.find((p) => p.toLowerCase().startsWith('charset='));
  if (charset !== undefined && !/^charset="?utf-8"?$/i.test(charset)) throw apiError(415, 'unsupported_media_type', 'Only the utf-8 charset is supported.');
  return accepted as 'application/json' | 'multipart/form-data';
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/** A JSON body parsed strictly from its bytes: invalid UTF-8 and malformed JSON are 400 `invalid_json`. */
function parseJson(raw: Buffer, what: string): unknown {
  if (raw.length === 0) throw apiError(400, 'invalid_json', `${what}: must not be empty.`);
  let text: string;
  try {
    text = strictUtf8.decode(raw);
  } catch {
    throw apiError(400, 'invalid_json', `${what}: is not valid UTF-8.`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw apiError(400, 'invalid_json', `${what}: is not valid JSON (${error instanceof SyntaxError ? error.message : 'malformed'}).`);
  }
}

/** The body as `calls()` shows it: parsed JSON, or the multipart's payload with its parts; undefined when unreadable. */
function recordedBody(contentType: string, raw: Buffer): unknown {
  try {
    if (contentType.toLowerCase().startsWith('multipart/form-data')) {
      const multipart = parseMultipart(contentType, raw);
      const payload = JSON.parse(multipart.payload.toString('utf8')) as unknown;
      const parts = multipart.images.map((image) => ({ name: 'images', fileName: image.fileName, contentType: image.contentType, bytes: image.bytes.length }));
      return typeof payload === 'object' && payload !== null ? { ...payload, parts } : { payload, parts };
    }
    return raw.length === 0 ? undefined : (JSON.parse(raw.toString('utf8')) as unknown);
  } catch {
    return undefined;
  }
}

/** The request's headers (lowercase names); the key itself is replaced by its display prefix. */
function recordedHeaders(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    const text = Array.isArray(value) ? value.join(', ') : value;
    out[name] = name === 'authorization' ? text.replace(/(sdk_(?:live|test)_.{4}).*/, '$1…') : text;
  }
  return out;
}

const ownerTag = (scope: string, owner: { workspaceId: string; integrationId: string }): string =>
  createHash('sha256').update(`${scope}${owner.workspaceId}\u0000${owner.integrationId}`).digest('base64url').slice(0, 16);

/** The opaque cursors of the paged lists (functions/src/platform/cursor.ts). */
function encodeCursor(owner: { workspaceId: string; integrationId: string }, scope: string, position: Record<string, unknown>): string {
  return Buffer.from(JSON.stringify({ v: 1, o: ownerTag(scope, owner), ...position })).toString('base64url');
}

function decodeCursor<P>(owner: { workspaceId: string; integrationId: string }, scope: string, cursor: string, read: (fields: Record<string, unknown>) => P | null): P {
  let value: unknown;
  try {
    value = /^[A-Za-z0-9_-]+$/.test(cursor) ? JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) : undefined;
  } catch {
    value = undefined;
  }
  const { v, o, ...fields } = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>;
  const position = v === 1 && o === ownerTag(scope, owner) ? read(fields) : null;
  if (position === null) throw apiError(400, 'invalid_cursor', 'cursor: not a cursor of this list; start again without one.');
  return position;
}

