/**
 * Identifiers of the email channel, all pure and deterministic:
 * - the `eventId` of an incoming mail (from its Message-ID, so a mail delivered twice is one message);
 * - the external conversation of a mail (its thread);
 * - the Message-ID of an outgoing reply (or of the first mail of a conversation the desk starts)
 *   and its bounce address, both derived from the deliveryId, so that the provider id is known
 *   before sending and a bounce leads back to the delivery;
 * - the thread a started conversation makes (`startedThread`): the one the connector derives for
 *   the customer's answer to that first mail.
 */
import { createHash } from 'node:crypto';

/** Longest `eventId` / `externalConversationId` the API accepts (characters). */
const MAX_EVENT_ID = 128;
const MAX_CONVERSATION_ID = 256;

const sha256 = (data: string | Uint8Array): string => createHash('sha256').update(data).digest('base64url');

/** `<abc@host>` -> `abc@host` (whitespace and angle brackets removed); undefined when nothing is left. */
export function normalizeMessageId(raw: string | undefined | null): string | undefined {
  if (typeof raw !== 'string') return undefined;
  const id = raw.trim().replace(/^<+/, '').replace(/>+$/, '').trim();
  return id === '' || /\s/.test(id) ? undefined : id;
}

/**
 * The Message-IDs of a `References` / `In-Reply-To` value, oldest first. Accepts what mailparser
 * gives (a string, or an array of strings) and raw header text with several `<id>` in it.
 */
export function parseMessageIdList(raw: string | readonly string[] | undefined | null): string[] {
  if (raw === undefined || raw === null) return [];
  const parts = typeof raw === 'string' ? [raw] : raw;
  const ids: string[] = [];
  for (const part of parts) {
    const bracketed = part.match(/<[^<>\s]+>/g);
    for (const candidate of bracketed ?? part.split(/\s+/)) {
      const id = normalizeMessageId(candidate);
      if (id !== undefined && !ids.includes(id)) ids.push(id);
    }
  }
  return ids;
}

/**
 * The `eventId` of an incoming mail: a hash of its Message-ID, so the same mail delivered twice
 * (an MTA retrying after a lost answer, a mail sent to two addresses of the desk) is one message.
 * A mail without a Message-ID falls back to a hash of its raw bytes: the same bytes again are the
 * same event.
 */
export function eventIdForMail(messageId: string | undefined, raw: Uint8Array): string {
  const id = normalizeMessageId(messageId);
  const eventId = id === undefined ? `mail-raw-${sha256(raw)}` : `mail-${sha256(id)}`;
  return eventId.slice(0, MAX_EVENT_ID);
}

/** What decides the thread of a mail. */
export interface ThreadHeaders {
  /** `References`, oldest first (normalized ids). */
  references: readonly string[];
  /** `In-Reply-To` (normalized ids). */
  inReplyTo: readonly string[];
  /** The sender's address (From). */
  senderAddress: string;
}

/** Keeps an id within the API's limit: a long one becomes a hash (stable, so still the same conversation). */
function conversationId(value: string): string {
  return [...value].length <= MAX_CONVERSATION_ID ? value : `thread-${sha256(value)}`;
}

/**
 * The external conversation of a mail:
 * 1. the conversation of the first Message-ID in `References` / `In-Reply-To` that the connector
 *    has seen before (`known`: an earlier mail of the thread, or one of our replies): a customer
 *    answering our reply lands in the same conversation;
 * 2. otherwise the root of the thread (the first `References` id, else `In-Reply-To`): a mail that
 *    answers something the connector never saw still groups with its siblings;
 * 3. otherwise (a new mail) the sender's address: every new mail of a customer joins their
 *    ongoing conversation, as in a chat.
 */
export function threadIdFor(headers: ThreadHeaders, known: (messageId: string) => string | undefined = () => undefined): string {
  const related = [...headers.references, ...headers.inReplyTo];
  for (const id of related) {
    const thread = known(id);
    if (thread !== undefined) return thread;
  }
  const root = headers.references[0] ?? headers.inReplyTo[0];
  return conversationId(root ?? normalizeAddress(headers.senderAddress));
}

/** Addresses compare case-insensitively here (the local part is case-sensitive in theory, never in practice). */
export function normalizeAddress(address: string): string {
  return address.trim().toLowerCase();
}

/** The characters a deliveryId may keep as is inside a Message-ID or an address local part. */
const SAFE_TOKEN = /^[A-Za-z0-9_-]+$/;

/** deliveryId -> a token for a Message-ID / local part: as is when safe, else `b64.` + base64url. Reversible. */
function deliveryToken(deliveryId: string): string {
  return SAFE_TOKEN.test(deliveryId) ? deliveryId : `b64.${Buffer.from(deliveryId, 'utf8').toString('base64url')}`;
}

function deliveryIdFromToken(token: string): string | undefined {
  if (token.startsWith('b64.')) {
    const decoded = Buffer.from(token.slice(4), 'base64url').toString('utf8');
    return decoded === '' ? undefined : decoded;
  }
  return SAFE_TOKEN.test(token) ? token : undefined;
}

/**
 * The Message-ID of the reply a delivery sends (without angle brackets): `reply.<deliveryId>@<domain>`.
 * Known before sending (it is the providerMessageId reported by `complete`), the same on any
 * repeated send of the delivery, and it leads back to the delivery when a bounce quotes it.
 */
export function replyMessageId(deliveryId: string, domain: string): string {
  return `reply.${deliveryToken(deliveryId)}@${domain}`;
}

/**
 * The Message-ID of the first mail of a conversation the desk starts (without angle brackets):
 * `start.<deliveryId>@<domain>`. Like a reply's: known before sending, the same on a retried send
 * of the delivery, and a bounce quoting it leads back to the delivery.
 */
export function startMessageId(deliveryId: string, domain: string): string {
  return `start.${deliveryToken(deliveryId)}@${domain}`;
}

/** The prefixes of our own Message-IDs: a reply's, a start's. */
const OUR_PREFIXES = ['reply.', 'start.'] as const;

/** The deliveryId of one of our Message-IDs, a reply's or a start's (with or without brackets), or undefined. */
export function deliveryIdFromMessageId(messageId: string, domain: string): string | undefined {
  const id = normalizeMessageId(messageId);
  if (id === undefined) return undefined;
  const at = id.lastIndexOf('@');
  if (at < 0 || id.slice(at + 1).toLowerCase() !== domain.toLowerCase()) return undefined;
  const local = id.slice(0, at);
  const prefix = OUR_PREFIXES.find((p) => local.startsWith(p));
  return prefix === undefined ? undefined : deliveryIdFromToken(local.slice(prefix.length));
}

/** The thread a started conversation makes: what a start's `send` returns as `conversation`. */
export interface StartedThread {
  /** The first mail's Message-ID (no brackets). */
  messageId: string;
  /** The thread: what `threadIdFor` derives for the customer's answer to the first mail. */
  externalConversationId: string;
  /** The customer's address as inbound mail from them names its sender (`normalizeAddress`). */
  externalCustomerId: string;
}

/**
 * The thread of a conversation the desk starts by mailing `address` (pure). The customer's answer
 * to the first mail carries its Message-ID in `In-Reply-To` (and, from most clients, as the root of
 * `References`), and `threadIdFor` files such a mail under the root of its thread, even when the
 * connector's store has forgotten the first mail. So the thread is exactly that derivation, run on
 * the answer's headers (no second rule), and the customer is the sender id inbound mail from the
 * address gets: the service files the answer in the started conversation.
 */
export function startedThread(deliveryId: string, address: string, domain: string): StartedThread {
  const messageId = startMessageId(deliveryId, domain);
  const customer = normalizeAddress(address);
  return {
    messageId,
    externalConversationId: threadIdFor({ references: [messageId], inReplyTo: [messageId], senderAddress: customer }),
    externalCustomerId: customer,
  };
}

/**
 * The envelope sender (MAIL FROM) of a reply: `<local>+<deliveryId>@<domain>` (VERP), so a bounce,
 * which goes to the envelope sender, names its delivery in its recipient address.
 */
export function bounceAddress(deliveryId: string, bounceLocalPart: string, domain: string): string {
  return `${bounceLocalPart}+${deliveryToken(deliveryId)}@${domain}`;
}

/** The deliveryId named by a bounce address, or undefined when `address` is not one. */
export function deliveryIdFromBounceAddress(address: string, bounceLocalPart: string, domain: string): string | undefined {
  const at = address.lastIndexOf('@');
  if (at < 0 || address.slice(at + 1).toLowerCase() !== domain.toLowerCase()) return undefined;
  const local = address.slice(0, at);
  const prefix = `${bounceLocalPart}+`;
  return local.toLowerCase().startsWith(prefix.toLowerCase()) ? deliveryIdFromToken(local.slice(prefix.length)) : undefined;
}
