/**
 * Per-conversation ordering without queries (docs/contract.md#ordering: replies are delivered in
 * order). Pure functions, no I/O.
 *
 * Each conversation's queue document (`deliveryQueues/{conversationId}`) keeps, next to its
 * sequencing cursor, the map of its unfinished deliveries, `{ "<seq>": "<deliveryId>" }` (stored
 * as the field `pending`, UNFINISHED_FIELD: the stored name is kept so that no deployment ever has
 * two versions disagreeing on where the map is). A delivery enters the map in the transaction that
 * creates it (`appendToQueue`) and leaves it in the transaction that makes it terminal, so the map
 * is exact at every commit. Every ordering question is then one read of one document by id:
 *
 *  - may delivery `seq` be claimed?   only if no unfinished seq is lower (`hasUnfinishedBefore`);
 *  - is a new delivery the head?      only if nothing is unfinished (`appendToQueue`);
 *  - whom does a terminal one release? the lowest unfinished seq left, if it was blocked by this
 *    one (`releaseFrom`).
 *
 * Why not queries: a query inside a transaction costs an index scan that grows with the workspace
 * and, on the Firestore emulator, locks the whole collection, so delivery transactions of
 * unrelated conversations serialise (bench/README.md, "Throughput"). A document read does
 * neither. The map holds only unfinished deliveries, so its size is the conversation's backlog,
 * not its history; the field is exempt from indexing (firestore.indexes.json) because its keys
 * are never queried.
 */

/** The queue document's field that holds the map of unfinished deliveries (docs/data-model.md). */
export const UNFINISHED_FIELD = 'pending';

/** Unfinished deliveries of one conversation by sequence number. */
export type UnfinishedDeliveries = ReadonlyMap<number, string>;

export interface QueuedDelivery {
  seq: number;
  deliveryId: string;
}

/**
 * Reads the stored map of unfinished deliveries. Returns null when the field is absent: a queue
 * document written before the map existed (functions/src/deliveries/reads.ts `readDeliveryQueue` rebuilds it).
 * Entries that are not `"<positive integer>": "<string>"` are ignored: only this module writes them.
 */
export function parseUnfinished(value: unknown): UnfinishedDeliveries | null {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return null;
  const unfinished = new Map<number, string>();
  for (const [key, deliveryId] of Object.entries(value as Record<string, unknown>)) {
    const seq = Number(key);
    if (Number.isSafeInteger(seq) && seq > 0 && String(seq) === key && typeof deliveryId === 'string') unfinished.set(seq, deliveryId);
  }
  return unfinished;
}

/** The stored form of one entry's key (Firestore map keys are strings). */
export const unfinishedKey = (seq: number): string => String(seq);

/** The stored form of a whole map (the inverse of `parseUnfinished`). */
export function storedUnfinished(unfinished: UnfinishedDeliveries): Record<string, string> {
  return Object.fromEntries([...unfinished].map(([seq, deliveryId]) => [unfinishedKey(seq), deliveryId]));
}

/** True when a delivery earlier than `seq` in the conversation is not terminal. */
export function hasUnfinishedBefore(unfinished: UnfinishedDeliveries, seq: number): boolean {
  for (const other of unfinished.keys()) if (other < seq) return true;
  return false;
}

/** The lowest unfinished delivery, or null when the conversation has nothing unfinished. */
export function head(unfinished: UnfinishedDeliveries): QueuedDelivery | null {
  let best: QueuedDelivery | null = null;
  for (const [seq, deliveryId] of unfinished) if (best === null || seq < best.seq) best = { seq, deliveryId };
  return best;
}

/** Where a conversation's next delivery goes: the queue's next seq and its unfinished deliveries. */
export interface QueueTail {
  nextSeq: number;
  unfinished: UnfinishedDeliveries;
}

/** A delivery appended to the end of its conversation's queue, and the queue after it. */
export interface AppendedPosition {
  seq: number;
  /** The head rule: it is the conversation's first unfinished delivery (nothing before it blocks it). */
  head: boolean;
  queue: QueueTail;
}

/**
 * Appends `deliveryId` to the end of the queue: it takes the next seq, and it is the head exactly
 * when nothing of the conversation is unfinished. Every delivery before it in the queue has a
 * lower seq, so one unfinished entry, whichever, is enough to make it wait; and an empty map
 * means every earlier delivery is terminal, so nothing will ever release it: it must be claimable
 * at once. The same rule for a new reply and for a resend, which joins the end of the queue like
 * any new delivery (never its old place).
 */
export function appendToQueue(queue: QueueTail, deliveryId: string): AppendedPosition {
  const seq = queue.nextSeq;
  const unfinished = new Map(queue.unfinished);
  unfinished.set(seq, deliveryId);
  return { seq, head: queue.unfinished.size === 0, queue: { nextSeq: seq + 1, unfinished } };
}

/**
 * Delivery `seq` became terminal: the delivery this releases, i.e. the new head when `seq` was
 * the head (every later delivery waited behind it). Null when `seq` was not the head (an earlier
 * delivery still blocks the rest: e.g. a later delivery failed because its notification could not
 * be published) or when nothing is left.
 */
export function releaseFrom(unfinished: UnfinishedDeliveries, seq: number): QueuedDelivery | null {
  if (hasUnfinishedBefore(unfinished, seq)) return null;
  const rest = new Map(unfinished);
  rest.delete(seq);
  return head(rest);
}

/**
 * The queue document's field that holds, for each delivery waiting behind the head, what its
 * release needs besides what the releasing delivery knows: `{ "<seq>": { messageId, waiting } }`.
 * With it, the terminal transition of the head writes the next delivery's wake without reading
 * that delivery first (docs/decisions.md, "Delivery: one read wave"). An entry is written with the
 * delivery when it is appended behind an unfinished one (never for a head, which nothing releases),
 * its `waiting` follows the record's (the claim that answers `waiting_for_previous` sets both),
 * and it goes when its delivery is released or becomes terminal. A delivery without an entry (one
 * created before the field existed, or a map rebuilt) is read before it is released, as before.
 * Not indexed (firestore.indexes.json), like `pending`.
 */
export const RELEASE_FIELD = 'release';

/** What the release of a waiting delivery needs to know of it (see RELEASE_FIELD). */
export interface ReleaseFacts {
  messageId: string;
  /** A claim answered `waiting_for_previous`: its release notifies (`wake`). */
  waiting: boolean;
}

/** Release facts by seq. */
export type ReleaseFactsBySeq = ReadonlyMap<number, ReleaseFacts>;

/** Reads the stored release facts; entries of another shape are ignored (the delivery is then read before its release). */
export function parseReleaseFacts(value: unknown): ReleaseFactsBySeq {
  const facts = new Map<number, ReleaseFacts>();
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return facts;
  for (const [key, entry] of Object.entries(value as Record<string, unknown>)) {
    const seq = Number(key);
    const { messageId, waiting } = (entry ?? {}) as { messageId?: unknown; waiting?: unknown };
    if (Number.isSafeInteger(seq) && seq > 0 && String(seq) === key && typeof messageId === 'string' && typeof waiting === 'boolean') facts.set(seq, { messageId, waiting });
  }
  return facts;
}

/** The stored form of release facts (the inverse of `parseReleaseFacts`). */
export function storedReleaseFacts(facts: ReleaseFactsBySeq): Record<string, ReleaseFacts> {
  return Object.fromEntries([...facts].map(([seq, f]) => [unfinishedKey(seq), { messageId: f.messageId, waiting: f.waiting }]));
}
