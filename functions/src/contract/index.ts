/**
 * The contract the service, the console and the connector SDK share: the numbers and rules each of
 * them must apply alike (request limits, the lease, the topic-name rule, the shard counts, how a
 * text is measured). One module so that a change reaches all three in the same commit:
 *
 * - the service imports it (functions/src, compiled by tsc and inlined by the handler bundles);
 * - the console imports it (console/src, bundled by esbuild);
 * - the SDK compiles a generated copy, sdk/src/internal/contract.generated.ts
 *   (scripts/sdk-generate.mjs; a unit test fails when the copy is stale), so that the SDK package
 *   still builds and installs on its own.
 *
 * Therefore this file is pure and self-contained: no import at all, no Node.js or browser API, no
 * Firebase, no zod. firestore.rules cannot import it: the facts the rules apply (the topic pattern,
 * the reply limit, the attachment limits and content types, the console's id and name lengths, the
 * retention bounds) are a generated block of functions there, written from this file by
 * scripts/rules-facts.mjs (`--check` compares); test/unit/contract/rules-facts.test.ts fails when
 * the block is stale or a hand-written copy of one of them is left outside it.
 */

/** Length in Unicode code points: every text limit of the contract counts characters, not UTF-16 units or bytes. */
export function codePointLength(text: string): number {
  let n = 0;
  for (const _ of text) n += 1;
  return n;
}

/** Limits of `POST /v1/messages` (code points for texts). */
export const MESSAGE_LIMITS = {
  eventId: 128,
  externalConversationId: 256,
  senderExternalId: 256,
  displayName: 200,
  text: 10_000,
  /** `providerMessageId` of an incoming message: the channel's id of it, 1 to this many characters (as `DELIVERY_LIMITS.providerMessageId`). */
  providerMessageId: 200,
} as const;

/**
 * `metadata` of an incoming message (docs/contract.md#connector-metadata): a flat map of keys to
 * strings that the conversation keeps merged. The limits hold for each message's map and for the
 * conversation's merge alike, so a claim never carries more than this. `bytes` is measured on the
 * UTF-8 of the map's JSON (`JSON.stringify`, no spaces), the form it travels in.
 */
export const METADATA_LIMITS = {
  keys: 16,
  keyPattern: '^[A-Za-z0-9_.-]{1,64}$',
  /** Code points of one value. */
  value: 512,
  /** UTF-8 bytes of the map's JSON. */
  bytes: 2048,
} as const;

/** `sentAt` of an incoming message (the channel's time of it, epoch ms) may be at most this far ahead of the receipt time. */
export const SENT_AT_MAX_FUTURE_MS = 5 * 60_000;

/** Limits of the delivery operations (code points for texts). */
export const DELIVERY_LIMITS = {
  /** `deliveryId`, `requestId`, `leaseId`: 1 to this many characters. */
  id: 128,
  /** One provider message id: 1 to this many characters. */
  providerMessageId: 200,
  /** Provider message ids in one report (complete: at least one; fail: any number up to this). */
  providerMessageIds: 20,
  /** The `code` of a fail report or of a `failed` receipt. */
  failCode: 80,
  /** Largest `retryAfterMs` of a fail report (one hour). */
  retryAfterMs: 3_600_000,
  /** Page size of the catch-up list: 1 to this many (default `pendingDefault`). */
  pendingPage: 100,
  pendingDefault: 50,
  /** The catch-up list's cursor: 1 to this many characters. */
  pendingCursor: 512,
} as const;

/**
 * Why a claim answers `skip` (docs/contract.md#claim): `waiting_for_previous` (an earlier reply of
 * the conversation is unfinished: a new notification comes), or the delivery is over
 * (`already_sent`, `already_failed`, `outcome_unknown`). The service's response schema, its state
 * machine and the SDK use this list. Later versions may add reasons: a reader treats an unknown one
 * like any skip (acknowledge), so the published schema admits any string besides these.
 */
export const SKIP_REASONS = ['waiting_for_previous', 'already_sent', 'already_failed', 'outcome_unknown'] as const;
/** One of the skip reasons of this version. */
export type SkipReason = (typeof SKIP_REASONS)[number];

/** Pattern of a fail code (a connector's own reason): snake_case, a letter first. */
export const FAIL_CODE_PATTERN = /^[a-z][a-z0-9_]*$/;

/**
 * An operator reply: 1 to this many code points. The console counts it before writing, the rules
 * refuse a longer one, and the service marks one that got through anyway `invalid_reply`.
 */
export const REPLY_MAX_CODE_POINTS = 10_000;

/**
 * A template reply's param value (docs/contract.md#channel): 1 to this many code points. The
 * console counts it, the rules refuse a longer one, and the service fails one that got through
 * anyway `template_invalid` (functions/src/contract/templates.ts).
 */
export const TEMPLATE_PARAM_MAX_CODE_POINTS = 1024;

/**
 * A conversation's reply window closes this long before the channel's own end (docs/contract.md#windows):
 * a reply sequenced just in time still has a minute to be claimed and sent, and a customer's clock a
 * little ahead does not make us late. The service, the SDK's test service and the rules apply it.
 */
export const WINDOW_MARGIN_MS = 60_000;

/** When a window opened by a customer message sent at `sentAt` (epoch ms, the channel's clock) closes, on a channel whose window is `seconds` long. */
export function windowClosesAt(sentAt: number, seconds: number): number {
  return sentAt + seconds * 1000 - WINDOW_MARGIN_MS;
}

/** What a conversation keeps that its window is read from. */
export interface ConversationWindow {
  /** The stored `window.closesAt` (epoch ms), or null when it has none. */
  closesAt: number | null;
  /** The greatest customer `sentAt` (epoch ms; kept whatever the channel declares), or null when no customer wrote. */
  lastCustomerSentAt: number | null;
}

/**
 * When the conversation's window closes on a channel whose window is `seconds` long: its stored
 * `closesAt`, else one opened by its customer's latest `sentAt`. The fallback covers a conversation
 * whose customer wrote before the window was declared, or whose message an instance took with a
 * channel it had cached from before the declaration (the key cache's 30 s): the customer's clock is
 * known either way. Null when no customer has written (a conversation the desk started).
 */
export function effectiveClosesAt(conversation: ConversationWindow, seconds: number): number | null {
  if (conversation.closesAt !== null) return conversation.closesAt;
  return conversation.lastCustomerSentAt === null ? null : windowClosesAt(conversation.lastCustomerSentAt, seconds);
}

/** A template declares at most this many params (docs/contract.md#channel); the rules check each value of a reply, one line per param. */
export const TEMPLATE_MAX_PARAMS = 20;

/**
 * What the console writes straight to Firestore under firestore.rules (docs/data-model.md); the
 * rules refuse anything beyond these.
 */
export const CONSOLE_LIMITS = {
  /**
   * The id of a document the console creates (an integration, an operator reply, an erasure or an
   * export request): at most this many characters, so that it fits the connector API's ids.
   */
  documentId: DELIVERY_LIMITS.id,
  /** An integration's `name`: 1 to this many UTF-16 units (what the rules' size() and an input's maxlength count). */
  integrationName: 200,
  /** `externalCustomerId` of an erasure or export request: the connector's `sender.externalId`. */
  externalCustomerId: MESSAGE_LIMITS.senderExternalId,
} as const;

/**
 * Conversations the desk starts (docs/contract.md#conversations-the-desk-starts): the kinds of
 * address a start may go to, and each kind's limits (shared by the service's rule, firestore.rules and the console).
 */
export const START_ADDRESS_KINDS = ['phone', 'email', 'handle'] as const;
export const START_ADDRESS_LIMITS = {
  /** E.164: a plus, a country code that does not start with 0, 7 to 15 digits in all. */
  phonePattern: /^\+[1-9][0-9]{6,14}$/,
  /** An email address: at most this many UTF-16 units. */
  emailMax: 254,
  /** A handle: 1 to this many code points, no control characters. */
  handleMax: 256,
} as const;

/** Why a value is not an address of its kind (`startAddressFault`): each client says it in its own words. */
export type StartAddressFault = 'empty' | 'not_e164' | 'too_long' | 'not_one_at' | 'space_or_control' | 'control_character';

/**
 * The one address check of a start (docs/contract.md#conversations-the-desk-starts), or null when
 * `value` is an address of `kind`: `phone` E.164; `email` at most START_ADDRESS_LIMITS.emailMax
 * characters with exactly one `@` that has something on both sides, no whitespace and no control
 * character (the channel checks deliverability; only what cannot be an address is refused);
 * `handle` 1 to START_ADDRESS_LIMITS.handleMax code points without a control character (Unicode
 * Cc). The service's start verdict and the console's form both ask it; firestore.rules state the
 * same facts for the member's write.
 */
export function startAddressFault(kind: (typeof START_ADDRESS_KINDS)[number], value: string): StartAddressFault | null {
  if (value === '') return 'empty';
  switch (kind) {
    case 'phone':
      return START_ADDRESS_LIMITS.phonePattern.test(value) ? null : 'not_e164';
    case 'email': {
      if (value.length > START_ADDRESS_LIMITS.emailMax) return 'too_long';
      const at = value.indexOf('@');
      if (at <= 0 || at !== value.lastIndexOf('@') || at === value.length - 1) return 'not_one_at';
      return /\s|\p{Cc}/u.test(value) ? 'space_or_control' : null;
    }
    case 'handle':
      if (codePointLength(value) > START_ADDRESS_LIMITS.handleMax) return 'too_long';
      return /\p{Cc}/u.test(value) ? 'control_character' : null;
  }
}

/** The retention period of a workspace (`settings/retention` `{ days }`, docs/privacy.md#retention): whole days in this range. */
export const RETENTION_DAYS = { min: 1, max: 3650 } as const;

/** Whether a stored `days` is a retention period (anything else means: keep forever). */
export function isRetentionDays(days: unknown): days is number {
  return typeof days === 'number' && Number.isInteger(days) && days >= RETENTION_DAYS.min && days <= RETENTION_DAYS.max;
}

/** A lease lasts this long from its claim, and from each extension. */
export const LEASE_MS = 120_000;
/** Extensions never move a lease's end later than this after its claim (`lease_limit_reached`). */
export const LEASE_MAX_MS = 15 * 60_000;

/**
 * The topic-name rule of an integration's `replies.topic`: a full Pub/Sub topic name with a valid
 * project id (6-30 characters) and topic id (3-255, a letter first). The service, the admin CLI,
 * the console and firestore.rules (its generated copy) apply this one.
 */
export const TOPIC_NAME_PATTERN = /^projects\/[a-z][a-z0-9-]{4,28}[a-z0-9]\/topics\/[A-Za-z][A-Za-z0-9._~%+-]{2,254}$/;
/** How the topic-name rule reads in messages. */
export const TOPIC_NAME_FORMAT = 'projects/<project>/topics/<topic>';

export function isValidTopicName(topic: string): boolean {
  return TOPIC_NAME_PATTERN.test(topic);
}

/**
 * Shard counts of the queue-like indexes (docs/capacity.md): N shards are N index ranges of about
 * 500 writes/s each. The two configurable ones (the service's `QUEUE_SHARDS` and `LIST_SHARDS`) are
 * read only by the service itself, so their range is free. They may be raised, never lowered.
 */
export const SHARD_COUNTS = {
  /** `QUEUE_SHARDS`: the sweeper's indexes (outbox, delivery checks). */
  queue: { default: 64, min: 1, max: 1024 },
  /** `LIST_SHARDS`: the catch-up list and the health indexes of an integration's deliveries. */
  list: { default: 8, min: 1, max: 64 },
} as const;

/**
 * Shards of the console's conversation list: the service writes each conversation's `listShard`
 * below this count and the console reads every shard below it. Not configurable, on purpose: a
 * count the service could raise alone would hide the conversations above the console's count.
 * Raising it (never lower it) is a change of this constant, deployed with the console.
 */
export const CONVERSATION_LIST_SHARDS = 8;

/** FNV-1a (32-bit) of the id: deterministic, and even for the hash-like ids the service mints. */
function fnv1a(id: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    hash ^= id.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** The shard of `id` among `count` shards: 0 .. count-1. */
export function shardOf(id: string, count: number): number {
  return fnv1a(id) % count;
}

/** 0 .. count-1, for the readers of every shard. */
export function allShards(count: number): number[] {
  return Array.from({ length: count }, (_, shard) => shard);
}

/** The conversation-list shard of a conversation (its `listShard`). */
export function conversationListShard(conversationId: string): number {
  return shardOf(conversationId, CONVERSATION_LIST_SHARDS);
}

/**
 * Reply attachments (docs/contract.md#attachments): the limits an integration's
 * `replies.attachments` capability may set, and that every reply's files obey. The console shows
 * them before an upload, firestore.rules apply a generated copy (scripts/rules-facts.mjs), the
 * service applies them on upload, on the reply and on the claim.
 */
export const ATTACHMENT_CONTENT_TYPES = ['image/png', 'image/jpeg', 'image/webp', 'image/gif', 'application/pdf', 'text/plain'] as const;
/** One of the content types a reply attachment may have (sniffed from its bytes, never trusted from a client). */
export type AttachmentContentType = (typeof ATTACHMENT_CONTENT_TYPES)[number];

export const ATTACHMENT_LIMITS = {
  /** The largest `maxBytes` a capability may set: one file is at most 10 MB. */
  maxBytesPerFile: 10 * 1024 * 1024,
  /** `maxCount` of a capability: 1 to this many files per reply. */
  maxCount: 5,
  /** A reply's files total at most this many bytes. */
  maxTotalBytes: 20 * 1024 * 1024,
  /** An attachment's `name`: 1 to this many code points (the client's file name, sanitised on the way out). */
  name: 255,
  /** `attachmentId`: 1 to this many characters. */
  id: 128,
} as const;

/** Pattern of an `attachmentId` the service mints: `a_` then base64url. */
export const ATTACHMENT_ID_PATTERN = /^a_[A-Za-z0-9_-]{1,126}$/;
/** Pattern of a SHA-256 in JSON: 64 lowercase hex digits. */
export const SHA256_HEX_PATTERN = /^[0-9a-f]{64}$/;
/** A part of a reply in per-part outcomes: its text, or one of its attachments by id. */
export const TEXT_PART = 'text';

export function isAttachmentContentType(value: unknown): value is AttachmentContentType {
  return typeof value === 'string' && (ATTACHMENT_CONTENT_TYPES as readonly string[]).includes(value);
}

/** An integration's `replies.attachments` capability, as validated. */
export interface AttachmentCapability {
  contentTypes: AttachmentContentType[];
  maxBytes: number;
  maxCount: number;
}

/**
 * The capability a stored `replies.attachments` value means, or null when it is absent or not a
 * valid capability (text only: a broken capability never opens attachments).
 */
export function parseAttachmentCapability(value: unknown): AttachmentCapability | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const { contentTypes, maxBytes, maxCount } = value as Record<string, unknown>;
  if (!Array.isArray(contentTypes) || contentTypes.length === 0 || !contentTypes.every(isAttachmentContentType)) return null;
  if (new Set(contentTypes).size !== contentTypes.length) return null;
  if (typeof maxBytes !== 'number' || !Number.isInteger(maxBytes) || maxBytes < 1 || maxBytes > ATTACHMENT_LIMITS.maxBytesPerFile) return null;
  if (typeof maxCount !== 'number' || !Number.isInteger(maxCount) || maxCount < 1 || maxCount > ATTACHMENT_LIMITS.maxCount) return null;
  return { contentTypes: [...contentTypes], maxBytes, maxCount };
}

// ---------------------------------------------------------------------------------------------
// Edits and unsends of sent replies (docs/contract.md#edits-and-unsends)

/**
 * An integration's `replies.lifecycle` capability: `{ edit?: { windowSeconds }, unsend?: { windowSeconds } }`,
 * each window the channel's own (e.g. 900 s for edits on one channel, two days on another), in whole
 * seconds within these bounds. firestore.rules apply a generated copy (scripts/rules-facts.mjs).
 */
export const LIFECYCLE_LIMITS = { windowSecondsMin: 60, windowSecondsMax: 604_800 } as const;

/**
 * What an operator may ask of a sent reply: the `kind` of the delivery that carries it to the
 * channel. Every list of kinds (the capability, the reply's histories, the claim's answers, the
 * SDK's callbacks, the test service's calls) is derived from this one.
 */
export const LIFECYCLE_KINDS = ['edit', 'unsend'] as const;
export type LifecycleKind = (typeof LIFECYCLE_KINDS)[number];

/**
 * The kinds that carry no text: the delivery acts on its target only (the claim's `message` is the
 * recipient, the request and its history entry have no `text`). An `edit` is the one that carries
 * the new text.
 */
export type TargetOnlyLifecycleKind = Exclude<LifecycleKind, 'edit'>;
export const isTargetOnlyLifecycleKind = (kind: LifecycleKind): kind is TargetOnlyLifecycleKind => kind !== 'edit';

/** Whether a value is one of the contract's kinds. */
export const isLifecycleKind = (value: unknown): value is LifecycleKind => (LIFECYCLE_KINDS as readonly unknown[]).includes(value);

/** One value per kind, in LIFECYCLE_KINDS order (what each kind's part of a table holds). */
export function byLifecycleKind<T>(valueOf: (kind: LifecycleKind) => T): Record<LifecycleKind, T> {
  return Object.fromEntries(LIFECYCLE_KINDS.map((kind) => [kind, valueOf(kind)])) as Record<LifecycleKind, T>;
}

/** One kind's part of the capability: requests are taken until `windowSeconds` after the reply was sent. */
export interface LifecycleWindow {
  windowSeconds: number;
}

/** The `replies.lifecycle` capability as validated: null for a kind the connector does not take. */
export type LifecycleCapability = Record<LifecycleKind, LifecycleWindow | null>;

function lifecycleWindowOf(value: unknown): LifecycleWindow | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const keys = Object.keys(value);
  const { windowSeconds } = value as Record<string, unknown>;
  if (keys.length !== 1 || typeof windowSeconds !== 'number' || !Number.isInteger(windowSeconds)) return null;
  return windowSeconds >= LIFECYCLE_LIMITS.windowSecondsMin && windowSeconds <= LIFECYCLE_LIMITS.windowSecondsMax ? { windowSeconds } : null;
}

/**
 * The capability a stored `replies.lifecycle` value means. Absent or malformed (not a map, another
 * key, a window out of bounds or not whole seconds): no edits or unsends, exactly as for a connector
 * built before them; each kind is judged on its own.
 */
export function parseLifecycleCapability(value: unknown): LifecycleCapability {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return byLifecycleKind(() => null);
  const stored = value as Record<string, unknown>;
  if (Object.keys(stored).some((key) => !isLifecycleKind(key))) return byLifecycleKind(() => null);
  return byLifecycleKind((kind) => lifecycleWindowOf(stored[kind]));
}

/**
 * Why the service refused an operator's edit or unsend request (the `error.code` of its history
 * entry on the reply, docs/data-model.md): the integration does not take the kind (or replies are
 * off), the kind's window since the reply was sent has passed (for an unsend too), the reply is
 * not `sent`, it was unsent already (or an unsend of it is on its way), the edit's text is not a
 * reply's text, or a later request of the same kind was already taken (requests that reached the
 * service out of order: the older one would undo the newer one on the channel).
 */
export const LIFECYCLE_REFUSALS = ['lifecycle_disabled', 'edit_window_passed', 'reply_not_sent', 'reply_unsent', 'invalid_edit', 'superseded'] as const;
export type LifecycleRefusal = (typeof LIFECYCLE_REFUSALS)[number];

/** The fail code of a connector that has no way to carry a delivery's `kind` (its SDK fails it with this). */
export const UNSUPPORTED_KIND = 'unsupported_kind';

// ------------------------------------------------------------------------------------ message events

/**
 * Limits of `POST /v1/messages/events` (docs/contract.md#message-events). The ids and texts share
 * `MESSAGE_LIMITS`; these are the event's own.
 */
export const EVENT_LIMITS = {
  /** `target.providerMessageId`: the channel's id of a customer message or of an operator reply (as `DELIVERY_LIMITS.providerMessageId`). */
  providerMessageId: 200,
  /** `emoji`: one extended grapheme cluster of at most this many UTF-8 bytes. */
  emojiBytes: 32,
  /** How long an event whose target has not arrived yet is kept, waiting for it (24 hours). */
  pendingMs: 24 * 3_600_000,
  /** How long a typing document lives (its `expireAt`); the console shows "typing..." for `typingShownMs` after `at`. */
  typingTtlMs: 60_000,
  typingShownMs: 8_000,
} as const;

/** The event types of `POST /v1/messages/events`. */
export const MESSAGE_EVENT_TYPES = ['edited', 'deleted', 'reaction', 'typing'] as const;
/** One event type. */
export type MessageEventType = (typeof MESSAGE_EVENT_TYPES)[number];

/** Bytes of `text` in UTF-8, counted from its code points (no TextEncoder: this module uses no host API beyond the language's). */
export function utf8ByteLength(text: string): number {
  let bytes = 0;
  for (const ch of text) {
    const cp = ch.codePointAt(0) ?? 0;
    bytes += cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
  }
  return bytes;
}

/**
 * Why `emoji` is not a valid reaction, or null when it is: exactly one extended grapheme cluster
 * (what a reader sees as one symbol: a flag, a skin-toned or ZWJ family emoji is one) of at most
 * `EVENT_LIMITS.emojiBytes` UTF-8 bytes. Which symbols a channel offers is the channel's business:
 * the rule only keeps a reaction one symbol, so the desk can show it as a chip.
 */
export function emojiProblem(emoji: string): string | null {
  if (emoji === '') return 'must be one emoji (one grapheme cluster), not empty';
  if (utf8ByteLength(emoji) > EVENT_LIMITS.emojiBytes) return `must be at most ${EVENT_LIMITS.emojiBytes} bytes of UTF-8`;
  let clusters = 0;
  for (const _ of new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(emoji)) {
    clusters += 1;
    if (clusters > 1) return 'must be one emoji (one grapheme cluster)';
  }
  return null;
}
