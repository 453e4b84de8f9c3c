import { createHash } from 'node:crypto';
import type { LifecycleKind } from '../contract';

/**
 * Deterministic ids: a retry must land on the same documents, so every id the service mints is
 * derived from what identifies the thing (docs/contract.md#tenancy). 32 base64url characters = 192 bits.
 * Exported for the ids a feature mints for itself (messages/event-ids.ts).
 */
export function digestId(prefix: string, parts: readonly string[]): string {
  // NUL cannot occur in the ids we hash as text boundaries, so ("ab","c") != ("a","bc").
  const hash = createHash('sha256').update(parts.join('\u0000')).digest('base64url');
  return `${prefix}${hash.slice(0, 32)}`;
}

export const conversationIdFor = (integrationId: string, externalConversationId: string): string =>
  digestId('c_', [integrationId, externalConversationId]);

export const customerIdFor = (integrationId: string, externalId: string): string =>
  digestId('u_', [integrationId, externalId]);

export const eventDocIdFor = (integrationId: string, eventId: string): string =>
  digestId('e_', [integrationId, eventId]);

/** Includes the fingerprint so that an eventId reused after its record expired never overwrites a message. */
export const messageIdFor = (integrationId: string, eventId: string, fingerprint: string): string =>
  digestId('m_', [integrationId, eventId, fingerprint]);

/**
 * A delivery id names its conversation (docs/decisions.md, "Delivery: one read wave"): the 34
 * characters of its digest, a '_', and the conversation id (only URL-, email- and file-name-safe
 * characters, as before: connectors use ids in tokens of their own), so that every delivery transaction
 * reads the delivery, its conversation's queue document and (the claim) the conversation in one
 * wave, without first reading the delivery to learn where they are. Opaque to connectors (they
 * already receive the conversation id with every notification), at most 34 + 1 + 93 characters (the digest's fixed length tells where the conversation id starts),
 * and a conversation id that does not fit the shape (never one the service mints) keeps the digest
 * alone, like every delivery minted before: those are served by the path that reads the delivery
 * first (`conversationOfDeliveryId` is null for them).
 */
const CONVERSATION_IN_DELIVERY_ID = /^[A-Za-z0-9_-]{1,93}$/;
const withConversation = (digest: string, conversationId: string): string => (CONVERSATION_IN_DELIVERY_ID.test(conversationId) ? `${digest}_${conversationId}` : digest);
const DELIVERY_ID_WITH_CONVERSATION = /^d_[A-Za-z0-9_-]{32}_([A-Za-z0-9_-]{1,93})$/;

export const deliveryIdFor = (conversationId: string, replyMessageId: string): string => withConversation(digestId('d_', [conversationId, replyMessageId]), conversationId);

/**
 * The delivery an operator's resend creates for a reply whose delivery `previousDeliveryId` ended
 * failed/unknown (null: the reply was refused without a delivery). One per previous delivery, so
 * a repeated request or a retried trigger finds it instead of creating a second one.
 */
export const resendDeliveryIdFor = (conversationId: string, replyMessageId: string, previousDeliveryId: string | null): string =>
  withConversation(digestId('d_', [conversationId, replyMessageId, 'resend', previousDeliveryId ?? '']), conversationId);

/** Resends of one reply that `resendChain` follows: an operator resends a failed reply by hand, a few times at most. */
const MAX_RESENDS_FOLLOWED = 20;

/**
 * The delivery ids of a start (or any reply), first to last: `firstDeliveryId`, then each resend's
 * (`resendDeliveryIdFor` of the one before), until `currentDeliveryId` (the message's mirror). A
 * mirror beyond `MAX_RESENDS_FOLLOWED` is still included, so the delivery that was sent is never missed.
 */
export function resendChain(conversationId: string, messageId: string, firstDeliveryId: string, currentDeliveryId: string | null): string[] {
  const chain = [firstDeliveryId];
  while (currentDeliveryId !== null && chain.at(-1) !== currentDeliveryId && chain.length <= MAX_RESENDS_FOLLOWED) {
    chain.push(resendDeliveryIdFor(conversationId, messageId, chain.at(-1) ?? null));
  }
  if (currentDeliveryId !== null && !chain.includes(currentDeliveryId)) chain.push(currentDeliveryId);
  return chain;
}

/**
 * The delivery that carries an operator's edit or unsend request of a sent reply to its channel
 * (docs/contract.md#edits-and-unsends): one per request, identified by the reply, the kind, the
 * request's server time (epoch ms) and who asked, so that a redelivered trigger finds it instead
 * of creating a second one.
 */
export const lifecycleDeliveryIdFor = (conversationId: string, replyMessageId: string, kind: LifecycleKind, requestedAtMs: number, uid: string): string =>
  withConversation(digestId('d_', [conversationId, replyMessageId, kind, String(requestedAtMs), uid]), conversationId);

/**
 * The conversation a delivery id names, or null for an id of the older shape (`d_` + digest) or
 * any other string. Only a hint for where to read: the delivery record read with it decides
 * (a forged id names a delivery that does not exist, and the record's own `conversationId` must
 * match before anything read through the hint is used).
 */
export function conversationOfDeliveryId(deliveryId: string): string | null {
  return DELIVERY_ID_WITH_CONVERSATION.exec(deliveryId)?.[1] ?? null;
}

/**
 * True when `id` can name a Firestore document as it is: not empty, no '/', not '.' or '..', not
 * `__…__` (reserved), at most 1500 bytes. Every id the service mints can; a client-supplied id
 * that cannot was never stored, so it is not found (instead of an error from the Firestore client).
 */
export function isStorableDocumentId(id: string): boolean {
  return id.length > 0 && !id.includes('/') && id !== '.' && id !== '..' && !/^__.*__$/s.test(id) && Buffer.byteLength(id, 'utf8') <= 1500;
}
