/**
 * The test service's state: everything it keeps, in memory, in one object the other modules are
 * handed (integrations, conversations, messages and their events, operator replies, typing, files,
 * erasures, faults, the recorded calls, the waiters, the notifications). The deliveries themselves
 * live in MemoryDeliveries (./deliveries.ts) and change only through the service's rules.
 */
import { closesAtAfterConnectorClosed } from '../internal/rules/window.js';
import type { LifecycleKind } from '../internal/contract.generated.js';
import type { Metadata } from '../internal/rules/metadata.js';
import type { Channel } from '../internal/rules/channel.js';
import type { Decision, DeliveryRecord, ReceiptStatus } from '../internal/rules/record.js';
import { MemoryDeliveries } from './deliveries.js';
import { Notifications } from './notifications.js';
import type { FaultSpec, IntegrationCapabilities, MessageView, OperationId, ReactionView, RecordedCall, StartTestServiceOptions, TypingView } from './types.js';

/** The service's default incoming rate (MESSAGES_PER_MINUTE_DEFAULT). */
const DEFAULT_MESSAGES_PER_MINUTE = 1200;

export interface Integration {
  integrationId: string;
  workspaceId: string;
  keyHash: string;
  capabilities: IntegrationCapabilities;
  /** The console's switch: an inactive integration's key is answered 403 `integration_inactive`. */
  active: boolean;
  bucket: { tokens: number; updatedAt: number } | undefined;
  /** What the connector declared of its channel (`PUT /v1/channel`); absent until it does. */
  channel?: Channel;
}

export interface Conversation {
  conversationId: string;
  integrationId: string;
  externalConversationId: string;
  lastSenderExternalId: string;
  lastCustomerExternalId: string | null;
  nextSeq: number;
  /** The merge of its messages' `metadata` (../internal/rules/metadata.ts `mergeMetadata`). */
  metadata: Metadata;
  /** The greatest `sentAt` of its customer messages (epoch ms), null before the first. */
  lastCustomerSentAt: number | null;
  /** When its reply window closes (epoch ms: ../internal/rules/window.ts), null until a customer writes while a window is declared. */
  windowClosesAt: number | null;
  /**
   * A started conversation whose start completed: the thread's conversation it joined (the
   * service's `mergedInto`). The operator's calls on it (a reply, a resend) follow it there, as the
   * console does.
   */
  mergedInto?: string;
}

/** One operator request of a kind on a reply (an edit's carries its new `text`); `deliveryId` null when refused. */
interface StoredRequest {
  text?: string;
  requestedAt: number;
  uid: string;
  deliveryId: string | null;
}

/** An operator reply: what the console's mirror keeps of it besides its deliveries. */
export interface StoredReply {
  messageId: string;
  integrationId: string;
  conversationId: string;
  text: string;
  /** Each kind's requests (the reply's `edits`, `unsends`, ...), oldest first. */
  requests: Record<LifecycleKind, StoredRequest[]>;
  reactions: ReactionView[];
}

/** An event waiting for its target (functions/src/messages/event-store.ts `PendingEntry`), and the change an event makes. */
export interface PendingEvent {
  type: 'edited' | 'deleted' | 'reaction';
  conversationId: string;
  senderExternalId: string;
  receivedAt: number;
  text?: string;
  emoji?: string;
  removed?: boolean;
}

export interface StoredMessage extends Omit<MessageView, 'edits' | 'reactions'> {
  edits: { text: string; at: number }[];
  reactions: ReactionView[];
  senderExternalId: string;
  senderKind: 'customer' | 'service';
  fingerprint: string;
  erased: boolean;
}

/** The record of one eventId: a message's names its message; an event's names its type and its first answer. */
interface EventRecord {
  fingerprint: string;
  messageId: string | null;
  conversationId: string;
  messageEvent?: string;
  applied?: boolean;
}

export interface Erasure {
  erasureId: string;
  integrationId: string;
  externalCustomerId: string;
  externalConversationIds: string[];
  requestedAt: number;
  counts: { conversations: number; messages: number };
  acknowledged: boolean;
  acknowledgedAt: number | null;
}

/** What `deliveries()` shows of a delivery beyond the service's record: receipts, fetched files, the operator's recall. */
interface DeliveryExtras {
  receipts: Map<string, { status: ReceiptStatus; at: number }>;
  fetched: Set<string>;
  cancelled: boolean;
}

export interface ServiceState {
  /** The service clock. */
  readonly now: () => number;
  readonly messagesPerMinute: number;
  readonly integrations: Map<string, Integration>;
  readonly integrationsByKeyHash: Map<string, Integration>;
  readonly conversations: Map<string, Conversation>;
  readonly messages: StoredMessage[];
  /** One eventId space for messages and message events (functions/src/messages/event-store.ts), by `integrationId\0eventId`. */
  readonly events: Map<string, EventRecord>;
  /** A reply's provider ids (of its own sent delivery, and of its parts) -> the reply, for events by providerMessageId. */
  readonly providerMessages: Map<string, { messageId: string; conversationId: string }>;
  /** A customer message's own providerMessageId -> the message (one per integration and id: the service's `pmi_` document). */
  readonly inboundProviderMessages: Map<string, { messageId: string; conversationId: string }>;
  /** Events waiting for their target (by `e:<eventId>` / `p:<providerMessageId>`), in the order received. */
  readonly pendingEvents: Map<string, PendingEvent[]>;
  readonly replies: Map<string, StoredReply>;
  readonly typing: Map<string, TypingView>;
  /** The deliveries, stored and changed by the service's own rules (./deliveries.ts). */
  readonly store: MemoryDeliveries;
  readonly deliveries: ReadonlyMap<string, DeliveryRecord>;
  readonly extras: Map<string, DeliveryExtras>;
  /** Reply files by attachment id. */
  readonly files: Map<string, Buffer>;
  readonly faults: Map<OperationId, { spec: FaultSpec; remaining: number }[]>;
  readonly erasures: Erasure[];
  readonly recorded: RecordedCall[];
  /** `waitFor`'s checks, run after every change. */
  readonly waiters: Set<() => void>;
  readonly notifications: Notifications;
}

export function createState(options: StartTestServiceOptions): ServiceState {
  const conversations = new Map<string, Conversation>();
  const store = new MemoryDeliveries(
    (conversationId) => {
      const c = conversations.get(conversationId);
      return { recipient: { externalConversationId: c?.externalConversationId ?? '', externalCustomerId: c?.lastCustomerExternalId ?? c?.lastSenderExternalId ?? '' }, metadata: c?.metadata ?? {} };
    },
    undefined,
    // The connector's `window_closed` fail closes the conversation's window (the service's transition does the same).
    (conversationId, now) => {
      const c = conversations.get(conversationId);
      if (c !== undefined) c.windowClosesAt = closesAtAfterConnectorClosed(c.windowClosesAt, now);
    },
  );
  const state: ServiceState = {
    now: options.now ?? Date.now,
    messagesPerMinute: options.messagesPerMinute ?? DEFAULT_MESSAGES_PER_MINUTE,
    integrations: new Map(),
    integrationsByKeyHash: new Map(),
    conversations,
    messages: [],
    events: new Map(),
    providerMessages: new Map(),
    inboundProviderMessages: new Map(),
    pendingEvents: new Map(),
    replies: new Map(),
    typing: new Map(),
    store,
    deliveries: store.records,
    extras: new Map(),
    files: new Map(),
    faults: new Map(),
    erasures: [],
    recorded: [],
    waiters: new Set(),
    // A settled notification (acked, nacked, pushed) may be what a waiter waits for.
    notifications: new Notifications(() => notifyWaiters(state)),
  };
  return state;
}

/** Runs every `waitFor` check (after anything that changes what a predicate may look at). */
export function notifyWaiters(state: ServiceState): void {
  for (const check of [...state.waiters]) check();
}

export function extrasOf(state: ServiceState, deliveryId: string): DeliveryExtras {
  let extras = state.extras.get(deliveryId);
  if (extras === undefined) {
    extras = { receipts: new Map(), fetched: new Set(), cancelled: false };
    state.extras.set(deliveryId, extras);
  }
  return extras;
}

/** A delivery the operator's side names (a programming error of the test when there is none). */
export function deliveryOrThrow(state: ServiceState, deliveryId: string): DeliveryRecord {
  const d = state.deliveries.get(deliveryId);
  if (d === undefined) throw new Error(`test service: no delivery ${deliveryId}`);
  return d;
}

/** A rule's decision on a delivery, through the store (read -> decide -> write); its answer. */
export function decideOn<R>(state: ServiceState, deliveryId: string, at: number, decide: (d: DeliveryRecord) => Decision<R>): R {
  const outcome = state.store.transition(deliveryId, at, decide);
  if (outcome?.decision === null || outcome === null) throw new Error(`test service: no delivery ${deliveryId}`);
  return outcome.decision.response;
}
