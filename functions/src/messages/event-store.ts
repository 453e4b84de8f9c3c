/**
 * Firestore access for message events (docs/contract.md#message-events): the one transaction of
 * `POST /v1/messages/events`, the pending events of a target and how they are applied when it
 * arrives, and the stored form of edits, tombstones and reactions (docs/data-model.md).
 *
 * The event record is the one of messages (`events/{eventDocIdFor(integrationId, eventId)}`), so an
 * eventId names a message or an event, never both: its fingerprint tells a retry from a conflict
 * both ways (../rules/fingerprint.ts tags an event's content).
 */
import { FieldValue, Timestamp, type DocumentData, type DocumentReference, type Firestore, type Transaction } from 'firebase-admin/firestore';
import { EVENT_LIMITS } from '../contract';
import * as logger from '../platform/log';
import { paths } from '../platform/paths';
import { inboundProviderMessageKeyFor, pendingEventsIdFor, providerMessageKeyFor } from './event-ids';
import { afterChange, applyEvent, type Edit, type EventChange, type ImageRef, type MessageChange, type Reaction, type TargetMessage } from '../rules/message-events';
import { resolveProviderTarget, type TargetLocation } from '../rules/targets';
import type { EventTarget } from './event-ids';

/** A validated event, as the transaction needs it. */
export interface EventInput {
  workspaceId: string;
  integrationId: string;
  eventDocId: string;
  fingerprint: string;
  conversationId: string;
  sender: { externalId: string; displayName: string | null; kind: 'customer' | 'service' };
  /** The sender's customer id (`u_...`), null for a service sender. */
  customerId: string | null;
  change: EventChange | { type: 'typing' };
  /** Absent for typing. */
  target: EventTarget | null;
  now: number;
  retentionMs: number;
}

/** The answer of the transaction. */
export type EventOutcome =
  | { kind: 'applied'; conversationId: string; removedImages: string[] }
  | { kind: 'pending'; conversationId: string }
  | { kind: 'ignored'; conversationId: string; code: string }
  | { kind: 'duplicate'; conversationId: string; applied: boolean }
  | { kind: 'not_found'; code: string }
  /** `target.providerMessageId` names a customer message and an operator reply (../rules/targets.ts): 409, nothing written. */
  | { kind: 'ambiguous' }
  /** `typing` in a chat the desk does not know: nothing written (../rules/message-events.ts `TYPING_WITHOUT_CONVERSATION`). */
  | { kind: 'no_conversation' }
  | { kind: 'conflict' };

/** One event waiting for its target, as stored in `pendingEvents/{id}.events[]` (order: as received). */
interface PendingEntry {
  eventDocId: string;
  conversationId: string;
  senderExternalId: string;
  /** For an erasure: the customer whose event it is (null for a service sender). */
  customerId: string | null;
  type: EventChange['type'];
  text?: string;
  emoji?: string;
  removed?: boolean;
  receivedAt: Timestamp;
}

const ms = (value: unknown): number => (value instanceof Timestamp ? value.toMillis() : 0);

/** The rules' view of a stored message (inbound or an operator reply). */
export function targetOf(data: DocumentData): TargetMessage {
  const inbound = data.direction === 'inbound';
  const sender = data.sender as { externalId?: unknown } | undefined;
  const list = (value: unknown): DocumentData[] => (Array.isArray(value) ? (value as DocumentData[]) : []);
  return {
    direction: inbound ? 'inbound' : 'outbound',
    kind: inbound ? (data.kind === 'alert' ? 'alert' : 'message') : undefined,
    senderExternalId: inbound && typeof sender?.externalId === 'string' ? sender.externalId : undefined,
    text: inbound && typeof data.text === 'string' ? data.text : null,
    deleted: data.deleted !== undefined && data.deleted !== null,
    edits: list(data.edits).map((e): Edit => ({ text: String(e.text), at: ms(e.at) })),
    reactions: list(data.reactions).map((r): Reaction => ({ emoji: String(r.emoji), senderExternalId: String(r.senderExternalId), at: ms(r.at) })),
    images: list(data.images).map((i): ImageRef => ({ path: String(i.path) })),
  };
}

/**
 * The stored fields of an applied change. A deletion removes the text, the images and the edits
 * (their texts are content too) and leaves the tombstone; reactions stay as they are.
 * `reactionCustomerIds` lists the customers who reacted, so an erasure finds their reactions on
 * messages that stay (docs/privacy.md#erasure).
 */
export function storedChange(change: MessageChange, integrationCustomerId: (externalId: string) => string): Record<string, unknown> {
  if (change.deleted !== undefined) return { deleted: { at: Timestamp.fromMillis(change.deleted.at) }, text: null, images: [], edits: FieldValue.delete() };
  const fields: Record<string, unknown> = {};
  if (change.edits) fields.edits = change.edits.map((e) => ({ text: e.text, at: Timestamp.fromMillis(e.at) }));
  if (change.reactions) {
    fields.reactions = change.reactions.map((r) => ({ emoji: r.emoji, senderExternalId: r.senderExternalId, at: Timestamp.fromMillis(r.at) }));
    fields.reactionCustomerIds = [...new Set(change.reactions.map((r) => integrationCustomerId(r.senderExternalId)))];
  }
  return fields;
}

const pendingChange = (entry: PendingEntry): EventChange =>
  entry.type === 'edited'
    ? { type: 'edited', senderExternalId: entry.senderExternalId, text: entry.text ?? '' }
    : entry.type === 'deleted'
      ? { type: 'deleted', senderExternalId: entry.senderExternalId }
      : { type: 'reaction', senderExternalId: entry.senderExternalId, emoji: entry.emoji ?? '', removed: entry.removed === true };

/** A pending event not applied on arrival: dropped (never applied) or ignored (its target was deleted), with the code of its log line. */
export interface SkippedEvent {
  eventDocId: string;
  type: string;
  outcome: 'dropped' | 'ignored';
  code: string;
}

/**
 * Applies the pending events of a target that has just arrived (or whose provider ids were just
 * reported), in the order received, to `target`: entries of another conversation, of a sender who
 * may not change it, or older than 24 hours are dropped (`skipped`, for the caller's log lines:
 * `logSkipped`). Returns the target after them, the fields to write (merged) and the stored
 * objects a deletion released. Pure.
 */
export function applyPending(
  pending: DocumentData | undefined,
  target: TargetMessage,
  conversationId: string,
  now: number,
): { target: TargetMessage; change: MessageChange; removedImages: string[]; applied: number; skipped: SkippedEvent[] } {
  const entries = Array.isArray(pending?.events) ? (pending.events as PendingEntry[]) : [];
  let current = target;
  let change: MessageChange = {};
  const removedImages: string[] = [];
  const skipped: SkippedEvent[] = [];
  let applied = 0;
  for (const entry of entries) {
    const skip = (outcome: SkippedEvent['outcome'], code: string): void => void skipped.push({ eventDocId: entry.eventDocId, type: entry.type, outcome, code });
    if (entry.conversationId !== conversationId) {
      skip('dropped', 'target_not_found');
      continue;
    }
    if (ms(entry.receivedAt) + EVENT_LIMITS.pendingMs < now) {
      skip('dropped', 'pending_expired');
      continue;
    }
    // The event's own time: when it was received, so the history keeps the order of what happened.
    const effect = applyEvent(current, pendingChange(entry), ms(entry.receivedAt));
    if (effect.kind === 'not_found') {
      skip('dropped', `target_not_found:${effect.code}`);
      continue;
    }
    if (effect.kind === 'ignored') {
      skip('ignored', effect.code);
      continue;
    }
    current = afterChange(current, effect.fields);
    // A deletion replaces everything before it; a later change adds to the state after it.
    change = effect.fields.deleted !== undefined ? { deleted: effect.fields.deleted } : { ...change, ...effect.fields };
    removedImages.push(...effect.removedImages);
    applied += 1;
  }
  return { target: current, change, removedImages, applied, skipped };
}

/** One log line per pending event that was not applied (`message event dropped` / `message event ignored`, with its code). */
export function logSkipped(skipped: readonly SkippedEvent[], where: { workspaceId: string; conversationId: string; messageId: string }): void {
  for (const s of skipped) {
    const fields = { code: s.code, eventDocId: s.eventDocId, type: s.type, ...where };
    if (s.outcome === 'dropped') logger.warn('message event dropped', fields);
    else logger.info('message event ignored', fields);
  }
}

/** The new entry of a pending-events document, and the document's other fields (create or append). */
function pendingWrite(input: EventInput, change: EventChange, existing: DocumentData | undefined): Record<string, unknown> {
  const entry: PendingEntry = {
    eventDocId: input.eventDocId,
    conversationId: input.conversationId,
    senderExternalId: change.senderExternalId,
    customerId: input.customerId,
    type: change.type,
    receivedAt: Timestamp.fromMillis(input.now),
    ...(change.type === 'edited' ? { text: change.text } : {}),
    ...(change.type === 'reaction' ? { emoji: change.emoji, removed: change.removed } : {}),
  };
  const events = Array.isArray(existing?.events) ? [...(existing.events as PendingEntry[]), entry] : [entry];
  const customerIds = [...new Set(events.map((e) => e.customerId).filter((id): id is string => id !== null))];
  return {
    integrationId: input.integrationId,
    target: input.target,
    events,
    customerIds,
    updatedAt: Timestamp.fromMillis(input.now),
    // TTL policy field (firestore.indexes.json): 24 hours after the newest entry; older entries are dropped when applied.
    expireAt: Timestamp.fromMillis(input.now + EVENT_LIMITS.pendingMs),
  };
}

/** The answer for an eventId already recorded: the same content is a duplicate (the first answer's `applied`), other content a conflict. */
function outcomeForExisting(existing: DocumentData, fingerprint: string): EventOutcome {
  if (existing.fingerprint !== fingerprint || existing.messageEvent === undefined) return { kind: 'conflict' };
  return { kind: 'duplicate', conversationId: String(existing.conversationId), applied: existing.applied === true };
}

/** The message a locator document names (an event record of a message, or a provider-id lookup), when it names one. */
function locationOf(data: DocumentData | undefined): TargetLocation | undefined {
  return data !== undefined && typeof data.messageId === 'string' && typeof data.conversationId === 'string' ? { conversationId: data.conversationId, messageId: data.messageId } : undefined;
}

/**
 * `typing`: the typing document of a conversation the desk knows, and the event's record. In a chat
 * it does not know, nothing at all is written (the answer has no conversation to name).
 */
async function acceptTyping(tx: Transaction, db: Firestore, input: EventInput, evRef: DocumentReference, record: (applied: boolean) => void): Promise<EventOutcome> {
  const [eventSnap, convSnap] = await tx.getAll(evRef, db.doc(paths.conversation(input.workspaceId, input.conversationId)));
  const existing = eventSnap?.data();
  if (existing) return outcomeForExisting(existing, input.fingerprint);
  if (convSnap?.exists !== true) return { kind: 'no_conversation' };
  tx.set(db.doc(paths.typing(input.workspaceId, input.conversationId)), {
    conversationId: input.conversationId,
    integrationId: input.integrationId,
    senderExternalId: input.sender.externalId,
    ...(input.sender.displayName !== null ? { displayName: input.sender.displayName } : {}),
    at: Timestamp.fromMillis(input.now),
    // TTL policy field (firestore.indexes.json): Firestore deletes it about a minute later.
    expireAt: Timestamp.fromMillis(input.now + EVENT_LIMITS.typingTtlMs),
  });
  // The console's queue shows "typing" on the conversation's row from the conversation itself (the
  // list already listens to it: no read per row); `typingAt` is not indexed (firestore.indexes.json).
  tx.update(convSnap.ref, { typingAt: Timestamp.fromMillis(input.now) });
  record(true);
  return { kind: 'applied', conversationId: input.conversationId, removedImages: [] };
}

/**
 * Where the target is, from its locator documents: by eventId the event record (null when it is an
 * event's, not a message's: it names no message); by provider id the customer message that came
 * with it and the reply reported with it, resolved by ../rules/targets.ts. Undefined: not there yet.
 */
function locate(target: EventTarget, first: DocumentData | undefined, reply: DocumentData | undefined): TargetLocation | 'not_a_message' | 'ambiguous' | undefined {
  if ('eventId' in target) {
    if (first === undefined) return undefined;
    return locationOf(first) ?? 'not_a_message';
  }
  const resolution = resolveProviderTarget(locationOf(first), locationOf(reply));
  if (resolution.kind === 'ambiguous') return 'ambiguous';
  return resolution.kind === 'found' ? resolution.location : undefined;
}

/**
 * Records a message event in one transaction: its event record, and the change of its target (or
 * the typing document, or a pending entry). Reads: the event record, the target's locators (by
 * eventId its event record; by provider id both sides' lookups) and its pending document in one
 * wave; then the target message. Nothing is written for a 404 or a 409.
 */
export async function acceptEvent(tx: Transaction, db: Firestore, input: EventInput, eventDocIdOf: (eventId: string) => string, customerIdOf: (externalId: string) => string): Promise<EventOutcome> {
  const evRef = db.doc(paths.event(input.workspaceId, input.eventDocId));
  const record = (applied: boolean): void => {
    // As a message's record (./store.ts), plus what a duplicate answers: `applied` of the first answer.
    tx.create(evRef, {
      integrationId: input.integrationId,
      fingerprint: input.fingerprint,
      conversationId: input.conversationId,
      messageEvent: input.change.type,
      applied,
      createdAt: Timestamp.fromMillis(input.now),
      expireAt: Timestamp.fromMillis(input.now + input.retentionMs),
    });
  };
  const change = input.change;
  const target = input.target;
  if (change.type === 'typing' || target === null) return acceptTyping(tx, db, input, evRef, record);

  const firstRef =
    'eventId' in target
      ? db.doc(paths.event(input.workspaceId, eventDocIdOf(target.eventId)))
      : db.doc(paths.providerMessage(input.workspaceId, inboundProviderMessageKeyFor(input.integrationId, target.providerMessageId)));
  const replyRef = 'eventId' in target ? null : db.doc(paths.providerMessage(input.workspaceId, providerMessageKeyFor(input.integrationId, target.providerMessageId)));
  const pendingRef = db.doc(paths.pendingEvent(input.workspaceId, pendingEventsIdFor(input.integrationId, target)));
  const [eventSnap, pendingSnap, firstSnap, replySnap] = await tx.getAll(evRef, pendingRef, firstRef, ...(replyRef === null ? [] : [replyRef]));
  const existing = eventSnap?.data();
  if (existing) return outcomeForExisting(existing, input.fingerprint);

  const located = locate(target, firstSnap?.data(), replySnap?.data());
  if (located === 'not_a_message') return { kind: 'not_found', code: 'not_a_message' };
  if (located === 'ambiguous') return { kind: 'ambiguous' };
  if (located === undefined) {
    // Not there yet: kept until it arrives, 24 hours at most (`applyPending`).
    tx.set(pendingRef, pendingWrite(input, change, pendingSnap?.data()));
    record(false);
    return { kind: 'pending', conversationId: input.conversationId };
  }
  if (located.conversationId !== input.conversationId) return { kind: 'not_found', code: 'other_conversation' };

  const messageRef = db.doc(paths.message(input.workspaceId, input.conversationId, located.messageId));
  const messageSnap = await tx.get(messageRef);
  const message = messageSnap.data();
  // Gone (erased, or past retention): no longer anyone's to change.
  if (message === undefined) return { kind: 'not_found', code: 'message_gone' };
  const effect = applyEvent(targetOf(message), change, input.now);
  if (effect.kind === 'not_found') return { kind: 'not_found', code: effect.code };
  if (effect.kind === 'ignored') {
    record(false);
    return { kind: 'ignored', conversationId: input.conversationId, code: effect.code };
  }
  tx.update(messageRef, storedChange(effect.fields, customerIdOf));
  record(true);
  return { kind: 'applied', conversationId: input.conversationId, removedImages: effect.removedImages };
}
