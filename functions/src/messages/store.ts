/**
 * Firestore access for incoming messages: the idempotency record, the message, its conversation
 * and its customer, written in one transaction.
 */
import { FieldValue, Timestamp, type DocumentData, type DocumentReference, type Firestore, type Transaction } from 'firebase-admin/firestore';
import { paths } from '../platform/paths';
import { conversationListShard, isRetentionDays } from '../contract';
import { conversationSearchKeys } from '../contract/conversation-search';
import { inboundProviderMessageKeyFor, pendingEventsIdFor } from './event-ids';
import { applyPending, logSkipped, storedChange, targetOf } from './event-store';
import { latestSentAt, mergeMetadata, storedMetadata, type MetadataPatch } from '../rules/metadata';
import { closesAtAfterMessage } from '../rules/window';

export interface StoredImage {
  path: string;
  sha256: string;
  contentType: string;
  width: number;
  height: number;
  bytes: number;
}

export interface AcceptMessageInput {
  workspaceId: string;
  integrationId: string;
  eventId: string;
  eventDocId: string;
  /** The channel's id of the message (`providerMessageId`), when the connector gave one. */
  providerMessageId: string | null;
  fingerprint: string;
  conversationId: string;
  messageId: string;
  customerId: string | null;
  externalConversationId: string;
  sender: { externalId: string; displayName: string | null; kind: 'customer' | 'service' };
  text: string | null;
  images: StoredImage[];
  /** The message's `metadata` as sent (null: none), merged into the conversation's (rules/metadata.ts). */
  metadata: MetadataPatch | null;
  /** The channel's time of the message (epoch ms), already checked against `now` (rules/metadata.ts `sentAtOf`). */
  sentAt: number;
  /**
   * The integration's reply window in seconds (its declared channel, carried by the key's resolution:
   * no extra read), or null: the conversation's `window` is then left as it is.
   */
  windowSeconds: number | null;
  now: number;
  retentionMs: number;
  /** The customer id of a sender of this integration (a pending reaction's sender: `reactionCustomerIds`). */
  customerIdOf: (externalId: string) => string;
}

export type AcceptOutcome =
  /** `removedImages`: stored images a pending deletion released (the caller deletes the objects after the commit). */
  | { kind: 'created'; conversationId: string; messageId: string; removedImages: string[] }
  | { kind: 'duplicate'; conversationId: string; messageId: string }
  | { kind: 'conflict' }
  /** Another message of the integration came with this `providerMessageId`: 409, nothing written. */
  | { kind: 'provider_id_conflict' };

const eventRef = (db: Firestore, workspaceId: string, eventDocId: string): DocumentReference => db.doc(paths.event(workspaceId, eventDocId));
const conversationRef = (db: Firestore, workspaceId: string, conversationId: string): DocumentReference => db.doc(paths.conversation(workspaceId, conversationId));
const customerRef = (db: Firestore, workspaceId: string, customerId: string): DocumentReference => db.doc(paths.customer(workspaceId, customerId));

/** The answer for an eventId that was already recorded: same content is a duplicate, other content a conflict. */
function outcomeForExisting(existing: DocumentData, fingerprint: string): AcceptOutcome {
  if (existing.fingerprint !== fingerprint) return { kind: 'conflict' };
  return { kind: 'duplicate', conversationId: String(existing.conversationId), messageId: String(existing.messageId) };
}

/**
 * The events waiting for a new message, by its eventId and by its providerMessageId, as one
 * pending document: the entries of both in the order received. Undefined when none waits.
 */
function mergedPending(byEventId: DocumentData | undefined, byProviderId: DocumentData | undefined): DocumentData | undefined {
  if (byProviderId === undefined) return byEventId;
  if (byEventId === undefined) return byProviderId;
  const entries = (doc: DocumentData): Array<{ receivedAt?: unknown }> => (Array.isArray(doc.events) ? (doc.events as Array<{ receivedAt?: unknown }>) : []);
  const at = (entry: { receivedAt?: unknown }): number => (entry.receivedAt instanceof Timestamp ? entry.receivedAt.toMillis() : 0);
  // A stable sort: entries received at the same millisecond keep each document's order.
  return { events: [...entries(byEventId), ...entries(byProviderId)].sort((a, b) => at(a) - at(b)) };
}

/**
 * Looks the event up outside a transaction (an event record never changes once written, nor does a
 * providerMessageId's uniqueness document), so a retry, a conflicting reuse of an eventId or a
 * providerMessageId another message has is answered before any side effect such as an upload.
 * Returns null when the event is new; the transaction still decides in that case.
 */
export async function findExistingEvent(db: Firestore, input: Pick<AcceptMessageInput, 'workspaceId' | 'integrationId' | 'eventDocId' | 'fingerprint' | 'providerMessageId'>): Promise<AcceptOutcome | null> {
  const providerRef = input.providerMessageId === null ? null : db.doc(paths.providerMessage(input.workspaceId, inboundProviderMessageKeyFor(input.integrationId, input.providerMessageId)));
  const [eventSnap, providerSnap] = await db.getAll(eventRef(db, input.workspaceId, input.eventDocId), ...(providerRef === null ? [] : [providerRef]));
  const existing = eventSnap?.data();
  if (existing) return outcomeForExisting(existing, input.fingerprint);
  return providerSnap?.exists === true ? { kind: 'provider_id_conflict' } : null;
}

/**
 * Records an incoming message in one transaction: the idempotency record, the message, its
 * conversation and its customer. All reads happen in one round trip before any write.
 * Same eventId + same fingerprint -> duplicate (original ids); other fingerprint -> conflict.
 */
export async function acceptMessage(tx: Transaction, db: Firestore, input: AcceptMessageInput): Promise<AcceptOutcome> {
  const evRef = eventRef(db, input.workspaceId, input.eventDocId);
  const convRef = conversationRef(db, input.workspaceId, input.conversationId);
  const custRef = input.customerId ? customerRef(db, input.workspaceId, input.customerId) : null;
  // The workspace's retention period (docs/privacy.md#retention), read with the rest: the message and
  // customer get their `expireAt` now; the retention job stamps everything else (and re-stamps on a change).
  // A message with images gets none: the job deletes it, its images first, once its period is over.
  const retentionRef = db.doc(paths.retentionSettings(input.workspaceId));
  // Events that arrived before this message (docs/contract.md#message-events) wait in one document
  // for its eventId: read in the same wave, applied to the message as it is created.
  const pendingRef = db.doc(paths.pendingEvent(input.workspaceId, pendingEventsIdFor(input.integrationId, { eventId: input.eventId })));
  // With a providerMessageId: its uniqueness document, and the events that named the message by it.
  const byProvider =
    input.providerMessageId === null
      ? null
      : {
          indexRef: db.doc(paths.providerMessage(input.workspaceId, inboundProviderMessageKeyFor(input.integrationId, input.providerMessageId))),
          pendingRef: db.doc(paths.pendingEvent(input.workspaceId, pendingEventsIdFor(input.integrationId, { providerMessageId: input.providerMessageId }))),
        };
  const snaps = await tx.getAll(evRef, convRef, retentionRef, pendingRef, ...(byProvider ? [byProvider.indexRef, byProvider.pendingRef] : []), ...(custRef ? [custRef] : []));
  const [eventSnap, convSnap, retentionSnap, pendingSnap] = snaps;
  const [indexSnap, providerPendingSnap] = byProvider ? snaps.slice(4, 6) : [];
  const custSnap = custRef ? snaps.at(-1) : undefined;
  const days: unknown = retentionSnap?.data()?.days;
  const expireAt = isRetentionDays(days) ? { expireAt: Timestamp.fromMillis(input.now + days * 86_400_000) } : {};

  const existing = eventSnap?.data();
  if (existing) return outcomeForExisting(existing, input.fingerprint);
  // A new eventId with a providerMessageId another message has: the id would name two messages.
  if (indexSnap?.exists === true) return { kind: 'provider_id_conflict' };

  const now = Timestamp.fromMillis(input.now);
  // The record keeps what idempotency needs and nothing of the content: its id is a hash of the
  // eventId, the fingerprint tells a retry from a conflict, the ids answer a duplicate. An erasure
  // leaves it, so that a retry of an erased message is a duplicate, not a resurrection (docs/privacy.md#kept).
  tx.create(evRef, {
    integrationId: input.integrationId,
    fingerprint: input.fingerprint,
    conversationId: input.conversationId,
    messageId: input.messageId,
    createdAt: now,
    // TTL policy field (firestore.indexes.json): Firestore deletes the record after retention.
    expireAt: Timestamp.fromMillis(input.now + input.retentionMs),
  });

  const messageData: Record<string, unknown> = {
    direction: 'inbound',
    integrationId: input.integrationId,
    eventId: input.eventId,
    kind: input.sender.kind === 'service' ? 'alert' : 'message',
    text: input.text,
    sender: {
      externalId: input.sender.externalId,
      displayName: input.sender.displayName,
      kind: input.sender.kind,
      customerId: input.customerId,
    },
    images: input.images,
    createdAt: now,
    sentAt: Timestamp.fromMillis(input.sentAt),
    ...(input.providerMessageId === null ? {} : { providerMessageId: input.providerMessageId }),
    ...(input.images.length === 0 ? expireAt : {}),
  };
  if (byProvider && input.providerMessageId !== null) {
    // Ids only, like a reply's lookup (./triggers.ts), and kept like it (no TTL): the id stays taken,
    // and a target by it finds the message as long as the message is there.
    tx.create(byProvider.indexRef, {
      integrationId: input.integrationId,
      conversationId: input.conversationId,
      messageId: input.messageId,
      direction: 'inbound',
      createdAt: now,
    });
  }
  let removedImages: string[] = [];
  const waiting = mergedPending(pendingSnap?.data(), providerPendingSnap?.data());
  if (waiting !== undefined) {
    const pending = applyPending(waiting, targetOf(messageData), input.conversationId, input.now);
    logSkipped(pending.skipped, { workspaceId: input.workspaceId, conversationId: input.conversationId, messageId: input.messageId });
    // Written with the message, so it never exists without the events that were waiting for it.
    const change = storedChange(pending.change, input.customerIdOf);
    if (pending.change.deleted !== undefined) delete change.edits; // a new document has no edits to delete
    Object.assign(messageData, change);
    removedImages = pending.removedImages;
    if (pendingSnap?.exists === true) tx.delete(pendingRef);
    if (byProvider && providerPendingSnap?.exists === true) tx.delete(byProvider.pendingRef);
  }
  tx.set(db.doc(paths.message(input.workspaceId, input.conversationId, input.messageId)), messageData);

  const conversationUpdate: Record<string, unknown> = {
    integrationId: input.integrationId,
    externalConversationId: input.externalConversationId,
    lastSenderExternalId: input.sender.externalId,
    lastMessageAt: now,
    updatedAt: now,
  };
  if (input.sender.kind === 'customer') {
    conversationUpdate.lastCustomerExternalId = input.sender.externalId;
    // The console's queue (docs/console.md#the-queue): the customer wrote last, so the conversation
    // needs a reply until an operator reply written after this message is sequenced
    // (../deliveries/sequencing.ts `answeredUpdate`).
    conversationUpdate.needsReply = true;
    conversationUpdate.lastCustomerMessageAt = now;
    // The greatest customer `sentAt` so far: a late, older message never moves it back.
    const previous: unknown = convSnap?.get('lastCustomerSentAt');
    const previousSentAt = previous instanceof Timestamp ? previous.toMillis() : null;
    conversationUpdate.lastCustomerSentAt = Timestamp.fromMillis(latestSentAt(previousSentAt, input.sentAt));
    if (input.windowSeconds !== null) {
      // The reply window (../rules/window.ts), from the customer's clock, on the conversation this transaction already read.
      const closesAt: unknown = convSnap?.get('window.closesAt');
      const before = { closesAt: closesAt instanceof Timestamp ? closesAt.toMillis() : null, latestSentAt: previousSentAt };
      conversationUpdate.window = { closesAt: Timestamp.fromMillis(closesAtAfterMessage(before, input.sentAt, input.windowSeconds)) };
    }
  }
  if (input.metadata !== null && Object.keys(input.metadata).length > 0) {
    // Merged on the conversation this transaction already read (no extra read), in the order the
    // conversation accepts its messages; a merge past the limits throws 400 before anything is written.
    const { merged, removed } = mergeMetadata(storedMetadata(convSnap?.get('metadata')), input.metadata);
    // `set` with merge merges maps key by key: the new values are set, a removed key is deleted, and
    // an empty map is no field at all (a claim then carries no `conversation`).
    conversationUpdate.metadata = Object.keys(merged).length === 0 ? FieldValue.delete() : { ...merged, ...Object.fromEntries(removed.map((key) => [key, FieldValue.delete()])) };
  }
  // The console's search finds a conversation by its channel id and its latest customer's id and
  // name (../contract/conversation-search.ts): recomputed whole, so an earlier customer's name goes
  // when another customer writes. An alert keeps the keys (a new conversation gets its id's).
  const customerName = input.sender.displayName ?? (custSnap?.get('displayName') as unknown);
  if (input.sender.kind === 'customer' || !convSnap?.exists) {
    conversationUpdate.searchKeys = conversationSearchKeys({
      externalConversationId: input.externalConversationId,
      customerExternalId: input.sender.kind === 'customer' ? input.sender.externalId : null,
      customerName: input.sender.kind === 'customer' && typeof customerName === 'string' ? customerName : null,
    });
  }
  // Every customer who wrote here: an erasure deletes the conversation only when its customer is the only one (docs/privacy.md#erasure).
  if (input.customerId !== null) conversationUpdate.customerIds = FieldValue.arrayUnion(input.customerId);
  if (!convSnap?.exists) {
    conversationUpdate.createdAt = now;
    // The console's conversation list reads one index range per list shard (docs/capacity.md):
    // the contract's count, which the console reads too, never the configurable LIST_SHARDS.
    conversationUpdate.listShard = conversationListShard(input.conversationId);
  }
  tx.set(convRef, conversationUpdate, { merge: true });

  if (custRef) {
    const customerUpdate: Record<string, unknown> = {
      integrationId: input.integrationId,
      externalId: input.sender.externalId,
      lastSeenAt: now,
      updatedAt: now,
    };
    if (input.sender.displayName !== null) customerUpdate.displayName = input.sender.displayName;
    if (!custSnap?.exists) customerUpdate.createdAt = now;
    tx.set(custRef, { ...customerUpdate, ...expireAt }, { merge: true });
  }
  return { kind: 'created', conversationId: input.conversationId, messageId: input.messageId, removedImages };
}
