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
 * Firebase, no zod. firestore.rules cannot import it: its copies (the topic pattern, the reply
 * limit) are checked against this file by test/unit/contract/contract.test.ts.
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
} as const;

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

/** Pattern of a fail code (a connector's own reason): snake_case, a letter first. */
export const FAIL_CODE_PATTERN = /^[a-z][a-z0-9_]*$/;

/**
 * An operator reply: 1 to this many code points. The console counts it before writing, the rules
 * refuse a longer one, and the service marks one that got through anyway `invalid_reply`.
 */
export const REPLY_MAX_CODE_POINTS = 10_000;

/** A lease lasts this long from its claim, and from each extension. */
export const LEASE_MS = 120_000;
/** Extensions never move a lease's end later than this after its claim (`lease_limit_reached`). */
export const LEASE_MAX_MS = 15 * 60_000;

/**
 * The topic-name rule of an integration's `replies.topic`: a full Pub/Sub topic name with a valid
 * project id (6-30 characters) and topic id (3-255, a letter first). The service, the admin CLI,
 * the console and firestore.rules (its own copy, checked by a test) apply this one.
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
