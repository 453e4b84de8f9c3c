import { sha256Hex } from './sha256';

/**
 * Content fingerprint of an incoming event (docs/contract.md#idempotency): every field after defaults, plus each
 * image's SHA-256 and sniffed content type, in order. The eventId is the idempotency key, not
 * content, so it is left out. Canonical JSON (sorted keys, explicit nulls) keeps it stable.
 */
export interface FingerprintInput {
  externalConversationId: string;
  sender: { externalId: string; displayName: string | null; kind: 'customer' | 'service' };
  text: string | null;
  images: ReadonlyArray<{ sha256: string; contentType: string }>;
  /**
   * The channel's id of the message, when given. Left out of the canonical document when absent,
   * so the fingerprint of a message without one is the one it had before the field existed.
   */
  providerMessageId?: string | undefined;
  /**
   * The message's `metadata` as sent (nulls included), when given and not empty: like
   * `providerMessageId`, absent adds nothing, so fingerprints of messages without it are unchanged.
   */
  metadata?: Readonly<Record<string, string | null>> | undefined;
  /** The message's `sentAt` as sent, when given (absent adds nothing; the default receipt time is not content). */
  sentAt?: number | undefined;
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

export function fingerprint(input: FingerprintInput): string {
  const doc = {
    v: 1,
    externalConversationId: input.externalConversationId,
    sender: input.sender,
    text: input.text,
    images: input.images.map((i) => ({ sha256: i.sha256, contentType: i.contentType })),
    // `canonical` drops undefined values: absent, it adds nothing.
    providerMessageId: input.providerMessageId,
    // An empty map changes nothing, so it is the same content as no map.
    metadata: input.metadata !== undefined && Object.keys(input.metadata).length > 0 ? input.metadata : undefined,
    sentAt: input.sentAt,
  };
  return sha256Hex(canonical(doc));
}


/** What an event's fingerprint covers: every field of `POST /v1/messages/events` after defaults, but the eventId. */
export interface EventFingerprintInput {
  externalConversationId: string;
  sender: { externalId: string; displayName: string | null; kind: 'customer' | 'service' };
  type: string;
  target: { eventId?: string | undefined; providerMessageId?: string | undefined } | null;
  text: string | null;
  emoji: string | null;
  removed: boolean;
}

/**
 * Content fingerprint of a message event. Its canonical document is tagged `event`, so it never
 * equals a message's: an eventId used by a message and then by an event (or the other way) is a
 * conflict, never a duplicate (docs/contract.md#message-events).
 */
export function eventFingerprint(input: EventFingerprintInput): string {
  const doc = { v: 1, event: input.type, externalConversationId: input.externalConversationId, sender: input.sender, target: input.target, text: input.text, emoji: input.emoji, removed: input.removed };
  return sha256Hex(canonical(doc));
}
