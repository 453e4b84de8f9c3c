import { createHash } from 'node:crypto';

/**
 * Deterministic ids: a retry must land on the same documents, so every id the service mints is
 * derived from what identifies the thing (docs/contract.md#tenancy). 32 base64url characters = 192 bits.
 */
function digestId(prefix: string, parts: readonly string[]): string {
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

export const deliveryIdFor = (conversationId: string, replyMessageId: string): string =>
  digestId('d_', [conversationId, replyMessageId]);

/**
 * The delivery an operator's resend creates for a reply whose delivery `previousDeliveryId` ended
 * failed/unknown (null: the reply was refused without a delivery). One per previous delivery, so
 * a repeated request or a retried trigger finds it instead of creating a second one.
 */
export const resendDeliveryIdFor = (conversationId: string, replyMessageId: string, previousDeliveryId: string | null): string =>
  digestId('d_', [conversationId, replyMessageId, 'resend', previousDeliveryId ?? '']);

/**
 * True when `id` can name a Firestore document as it is: not empty, no '/', not '.' or '..', not
 * `__…__` (reserved), at most 1500 bytes. Every id the service mints can; a client-supplied id
 * that cannot was never stored, so it is not found (instead of an error from the Firestore client).
 */
export function isStorableDocumentId(id: string): boolean {
  return id.length > 0 && !id.includes('/') && id !== '.' && id !== '..' && !/^__.*__$/s.test(id) && Buffer.byteLength(id, 'utf8') <= 1500;
}
