/**
 * Incoming messages and message events (`POST /v1/messages`, `POST /v1/messages/events`): the
 * service's validation and image rules, one eventId space for both, conversations, and the
 * events that wait for their target (a message not there yet, a reply's provider id not yet
 * reported) until it arrives.
 */
import { EVENT_LIMITS, emojiProblem } from '../internal/contract.generated.js';
import type { MessageEventRequest } from '../internal/api.generated.js';
import { assertImageSet, inspectImage } from '../internal/rules/images.js';
import { eventFingerprint, fingerprint as messageFingerprint } from '../internal/rules/fingerprint.js';
import { applyEvent, messageEventProblems, TYPING_WITHOUT_CONVERSATION, type EventChange, type TargetMessage } from '../internal/rules/message-events.js';
import type { DeliveryRecord } from '../internal/rules/record.js';
import { ambiguousTarget, eventConflict, messageTextOf, providerMessageIdConflict, targetNotFound } from '../internal/rules/intake.js';
import { resolveProviderTarget } from '../internal/rules/targets.js';
import { latestSentAt, mergeMetadata, metadataProblems, sentAtOf } from '../internal/rules/metadata.js';
import { closesAtAfterMessage } from '../internal/rules/window.js';
import type { ApiError } from './errors.js';
import { parseJson } from './http.js';
import { digestId, sha256Hex } from './ids.js';
import { parseMultipart } from './multipart.js';
import { body, invalidRequest, type Answer, type Handlers, type OperationRequest } from './operations.js';
import { spendIncomingBudget } from './rate-limit.js';
import { validateRequest } from './requests.generated.js';
import type { PendingEvent, ServiceState, StoredMessage, StoredReply } from './state.js';

/** The handlers of the incoming operations. */
export function messageHandlers(state: ServiceState): Pick<Handlers, 'sendMessage' | 'sendMessageEvent'> {
  return {
    sendMessage: (request) => sendMessage(state, request),
    sendMessageEvent: (request) => sendMessageEvent(state, request),
  };
}

function sendMessage(state: ServiceState, request: OperationRequest): Answer {
  const { integration } = request;
  spendIncomingBudget(state, request);
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
  const message = payload as { eventId: string; providerMessageId?: string; externalConversationId: string; sender: { externalId: string; displayName?: string; kind?: 'customer' | 'service' }; message?: { text?: string }; metadata?: Record<string, string | null>; sentAt?: number };
  // The metadata rules the service's schema refines with (rules/metadata.ts): the document says only "a map of strings or nulls".
  const metadataIssues = message.metadata === undefined ? [] : metadataProblems(message.metadata);
  if (metadataIssues.length > 0) throw invalidRequest(metadataIssues.map((problem) => `${problem.path.join('.')}: ${problem.message}`));
  const text = messageTextOf(message.message?.text, images.length);
  const sentAt = sentAtOf(message.sentAt, request.now);
  const sender = { externalId: message.sender.externalId, displayName: message.sender.displayName ?? null, kind: message.sender.kind ?? 'customer' };
  const fingerprint = messageFingerprint({ externalConversationId: message.externalConversationId, sender, text, images, providerMessageId: message.providerMessageId, metadata: message.metadata, sentAt: message.sentAt });
  const eventKey = `${integration.integrationId}\u0000${message.eventId}`;
  const known = state.events.get(eventKey);
  if (known !== undefined) {
    // An event's eventId is never a message's (and the other way round): a conflict.
    if (known.fingerprint !== fingerprint || known.messageId === null) throw eventConflict(message.eventId);
    return { status: 200, body: { conversationId: known.conversationId, messageId: known.messageId, duplicate: true } };
  }
  const providerKey = message.providerMessageId === undefined ? undefined : `${integration.integrationId}\u0000${message.providerMessageId}`;
  // Another message (another eventId) has this channel id: it names one message (the service's `pmi_` document).
  if (providerKey !== undefined && state.inboundProviderMessages.has(providerKey)) throw providerMessageIdConflict(message.providerMessageId ?? '');
  const conversationId = digestId('c_', [integration.integrationId, message.externalConversationId]);
  const messageId = digestId('m_', [integration.integrationId, message.eventId, fingerprint]);
  // Merged before anything is stored: a merge past the limits is a 400 with nothing written, as in the service's transaction.
  const merged = message.metadata === undefined ? null : mergeMetadata(state.conversations.get(conversationId)?.metadata ?? {}, message.metadata).merged;
  if (providerKey !== undefined) state.inboundProviderMessages.set(providerKey, { messageId, conversationId });
  let conversation = state.conversations.get(conversationId);
  if (conversation === undefined) {
    conversation = { conversationId, integrationId: integration.integrationId, externalConversationId: message.externalConversationId, lastSenderExternalId: sender.externalId, lastCustomerExternalId: null, nextSeq: 1, metadata: {}, lastCustomerSentAt: null, windowClosesAt: null };
    state.conversations.set(conversationId, conversation);
  }
  conversation.lastSenderExternalId = sender.externalId;
  if (sender.kind === 'customer') {
    conversation.lastCustomerExternalId = sender.externalId;
    const window = integration.channel?.window ?? null;
    // The reply window from the customer's clock, as the service's message transaction keeps it.
    if (window !== null) conversation.windowClosesAt = closesAtAfterMessage({ closesAt: conversation.windowClosesAt, latestSentAt: conversation.lastCustomerSentAt }, sentAt, window.seconds);
    conversation.lastCustomerSentAt = latestSentAt(conversation.lastCustomerSentAt, sentAt);
  }
  if (merged !== null) conversation.metadata = merged;
  state.events.set(eventKey, { fingerprint, messageId, conversationId });
  state.messages.push({
    messageId,
    integrationId: integration.integrationId,
    conversationId,
    eventId: message.eventId,
    ...(message.providerMessageId === undefined ? {} : { providerMessageId: message.providerMessageId }),
    externalConversationId: message.externalConversationId,
    kind: sender.kind,
    // functions/src/messages/http.ts: a customer is stored under customerIdFor(integration, externalId); an alert has none.
    sender: { ...sender, customerId: sender.kind === 'customer' ? digestId('u_', [integration.integrationId, sender.externalId]) : null },
    ...(text === null ? {} : { text }),
    images: images.map((image, i) => ({ part: `images[${i}]`, contentType: image.contentType, width: image.width, height: image.height, bytes: image.bytes.length, sha256: image.sha256, status: 'stored' as const })),
    receivedAt: request.now,
    sentAt,
    senderExternalId: sender.externalId,
    senderKind: sender.kind,
    fingerprint,
    erased: false,
    edits: [],
    reactions: [],
  });
  // Events that came before their message (by its eventId or its providerMessageId) are applied now, in the order received.
  const arrived = state.messages.at(-1);
  const keys = [`${integration.integrationId}\u0000e:${message.eventId}`, ...(message.providerMessageId === undefined ? [] : [`${integration.integrationId}\u0000p:${message.providerMessageId}`])];
  if (arrived !== undefined) applyPending(state, keys, { message: arrived }, conversationId);
  return { status: 201, body: { conversationId, messageId, duplicate: false } };
}

type EventTargetRef = { message: StoredMessage } | { reply: StoredReply };

/** The target as the service's rules read it (rules/message-events.ts `TargetMessage`). */
function targetOf(target: EventTargetRef): TargetMessage {
  if ('reply' in target) return { direction: 'outbound', kind: undefined, senderExternalId: undefined, text: null, deleted: false, edits: [], reactions: target.reply.reactions, images: [] };
  const m = target.message;
  return {
    direction: 'inbound',
    kind: m.senderKind === 'customer' ? 'message' : 'alert',
    senderExternalId: m.senderExternalId,
    text: m.text ?? null,
    deleted: m.deleted !== undefined,
    edits: m.edits,
    reactions: m.reactions,
    images: m.images.map((image) => ({ path: image.sha256 })),
  };
}

/** The change as the service's rules read it (rules/message-events.ts `EventChange`). */
function changeOf(change: PendingEvent): EventChange {
  if (change.type === 'edited') return { type: 'edited', senderExternalId: change.senderExternalId, text: change.text ?? '' };
  if (change.type === 'deleted') return { type: 'deleted', senderExternalId: change.senderExternalId };
  return { type: 'reaction', senderExternalId: change.senderExternalId, emoji: change.emoji ?? '', removed: change.removed === true };
}

/**
 * What an event does to its target, decided by the service's rule (rules/message-events.ts
 * `applyEvent`: who may change it, a deleted one takes nothing more, the reaction set), then stored.
 */
function applyChange(target: EventTargetRef, change: PendingEvent, at: number): 'applied' | 'ignored' | 'not_found' {
  const effect = applyEvent(targetOf(target), changeOf(change), at);
  if (effect.kind !== 'applied') return effect.kind;
  const { fields } = effect;
  if ('reply' in target) {
    if (fields.reactions !== undefined) target.reply.reactions = [...fields.reactions];
    return 'applied';
  }
  const m = target.message;
  if (fields.deleted !== undefined) {
    // The content goes (text, images, edits); the tombstone stays.
    delete m.text;
    m.images = [];
    m.edits = [];
    m.deleted = fields.deleted;
  }
  if (fields.edits !== undefined) m.edits = [...fields.edits];
  if (fields.reactions !== undefined) m.reactions = [...fields.reactions];
  return 'applied';
}

/**
 * The events that waited for a target that just arrived (under any of `keys`: a message's eventId
 * and providerMessageId): applied in the order received; another conversation's, a stranger's or
 * an expired one dropped.
 */
function applyPending(state: ServiceState, keys: readonly string[], target: EventTargetRef, conversationId: string): void {
  const waiting = keys.flatMap((key) => state.pendingEvents.get(key) ?? []).sort((a, b) => a.receivedAt - b.receivedAt);
  for (const key of keys) state.pendingEvents.delete(key);
  for (const entry of waiting) {
    if (entry.conversationId !== conversationId || entry.receivedAt + EVENT_LIMITS.pendingMs < state.now()) continue;
    applyChange(target, entry, entry.receivedAt);
  }
}

/** A reply's sent delivery reported its provider ids: they name the reply (reactions), and the reactions waiting for them apply. */
export function recordProviderIds(state: ServiceState, d: DeliveryRecord): void {
  if (d.kind !== undefined || d.status !== 'sent') return;
  const reply = state.replies.get(d.messageId);
  if (reply === undefined) return;
  const ids = [...new Set([...d.providerMessageIds, ...(d.parts ?? []).flatMap((p) => p.providerMessageIds ?? [])])];
  for (const id of ids) {
    const key = `${d.integrationId}\u0000${id}`;
    if (!state.providerMessages.has(key)) state.providerMessages.set(key, { messageId: d.messageId, conversationId: d.conversationId });
    applyPending(state, [`${d.integrationId}\u0000p:${id}`], { reply }, d.conversationId);
  }
}

function sendMessageEvent(state: ServiceState, request: OperationRequest): Answer {
  const { integration } = request;
  spendIncomingBudget(state, request);
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
  const known = state.events.get(eventKey);
  if (known !== undefined) {
    if (known.fingerprint !== fingerprint || known.messageEvent === undefined) throw eventConflict(event.eventId);
    return { status: 200, body: { conversationId: known.conversationId, applied: known.applied === true, duplicate: true } };
  }
  const conversationId = digestId('c_', [integration.integrationId, event.externalConversationId]);
  const record = (applied: boolean): void => {
    state.events.set(eventKey, { fingerprint, messageId: null, conversationId, messageEvent: event.type, applied });
  };
  const answer = (status: 200 | 201 | 202, applied: boolean): Answer => ({ status, body: { conversationId, applied, duplicate: false } });
  if (event.type === 'typing' || target === null) {
    // A chat the desk does not know: nothing stored, no conversation to name (rules/message-events.ts).
    if (!state.conversations.has(conversationId)) return TYPING_WITHOUT_CONVERSATION;
    state.typing.set(conversationId, {
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
  const notFound = (): ApiError => targetNotFound(event);
  const located = locateTarget(state, integration.integrationId, target);
  if (located === 'ambiguous') throw ambiguousTarget('providerMessageId' in target ? target.providerMessageId : '');
  if (located === null) throw notFound();
  if (located === undefined) {
    // Not there yet: kept for 24 hours, applied when it arrives.
    const key = `${integration.integrationId}\u0000${'eventId' in target ? `e:${target.eventId}` : `p:${target.providerMessageId}`}`;
    state.pendingEvents.set(key, [...(state.pendingEvents.get(key) ?? []), change]);
    record(false);
    return answer(202, false);
  }
  if (located.conversationId !== conversationId) throw notFound();
  const effect = applyChange(located.ref, change, request.now);
  if (effect === 'not_found') throw notFound();
  record(effect === 'applied');
  return effect === 'applied' ? answer(201, true) : answer(200, false);
}

/**
 * The stored message or reply an event names, and its conversation: undefined when it is not
 * there yet (the event waits for it); null when the eventId names no message (an event's eventId,
 * or an erased message's); `ambiguous` when a provider id names a customer message and a reply
 * (rules/targets.ts).
 */
function locateTarget(state: ServiceState, integrationId: string, target: { eventId: string } | { providerMessageId: string }): { ref: EventTargetRef; conversationId: string } | null | undefined | 'ambiguous' {
  if ('eventId' in target) {
    const located = state.events.get(`${integrationId}\u0000${target.eventId}`);
    if (located === undefined) return undefined;
    // An eventId of an event (not a message) names no message.
    if (located.messageId === null) return null;
    const message = state.messages.find((m) => m.messageId === located.messageId && !m.erased);
    return message === undefined ? null : { ref: { message }, conversationId: located.conversationId };
  }
  const key = `${integrationId}\u0000${target.providerMessageId}`;
  const resolution = resolveProviderTarget(state.inboundProviderMessages.get(key), state.providerMessages.get(key));
  if (resolution.kind === 'ambiguous') return 'ambiguous';
  if (resolution.kind === 'absent') return undefined;
  const { location } = resolution;
  if (resolution.side === 'inbound') {
    // As the service: the uniqueness entry stays after an erasure; the message is gone (404).
    const message = state.messages.find((m) => m.messageId === location.messageId && !m.erased);
    return message === undefined ? null : { ref: { message }, conversationId: location.conversationId };
  }
  const reply = state.replies.get(location.messageId);
  return reply === undefined ? undefined : { ref: { reply }, conversationId: location.conversationId };
}
