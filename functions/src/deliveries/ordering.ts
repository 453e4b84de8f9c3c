/**
 * Per-conversation ordering without queries (docs/contract.md#ordering: replies are delivered in
 * order). Pure functions, no I/O.
 *
 * Each conversation's queue document (`deliveryQueues/{conversationId}`) keeps, next to its
 * sequencing cursor, the map `pending: { "<seq>": "<deliveryId>" }` of its deliveries that are not
 * terminal yet. A delivery enters the map in the transaction that creates it and leaves it in the
 * transaction that makes it terminal, so the map is exact at every commit. Every ordering question
 * is then one read of one document by id:
 *
 *  - may delivery `seq` be claimed?   only if no pending seq is lower (`hasUnfinishedBefore`);
 *  - whom does a terminal one release? the lowest pending seq left, if it was blocked by this one
 *    (`releaseFrom`).
 *
 * Why not queries: a query inside a transaction costs an index scan that grows with the workspace
 * and, on the Firestore emulator, locks the whole collection, so delivery transactions of
 * unrelated conversations serialise (bench/README.md, "Throughput"). A document read does
 * neither. The map holds only unfinished deliveries, so its size is the conversation's backlog,
 * not its history; `pending` is exempt from indexing (firestore.indexes.json) because its keys
 * are never queried.
 */

/** Unfinished deliveries of one conversation by sequence number. */
export type PendingDeliveries = ReadonlyMap<number, string>;

export interface QueuedDelivery {
  seq: number;
  deliveryId: string;
}

/**
 * Reads the stored `pending` map. Returns null when the field is absent: a queue document written
 * before the map existed (see ./store.ts `readDeliveryQueue`, which rebuilds it).
 * Entries that are not `"<positive integer>": "<string>"` are ignored: only this module writes them.
 */
export function parsePending(value: unknown): PendingDeliveries | null {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return null;
  const pending = new Map<number, string>();
  for (const [key, deliveryId] of Object.entries(value as Record<string, unknown>)) {
    const seq = Number(key);
    if (Number.isSafeInteger(seq) && seq > 0 && String(seq) === key && typeof deliveryId === 'string') pending.set(seq, deliveryId);
  }
  return pending;
}

/** The stored form of one entry (Firestore map keys are strings). */
export const pendingKey = (seq: number): string => String(seq);

/** The stored form of a whole map (the inverse of `parsePending`). */
export function storedPending(pending: PendingDeliveries): Record<string, string> {
  return Object.fromEntries([...pending].map(([seq, deliveryId]) => [pendingKey(seq), deliveryId]));
}

/** True when a delivery earlier than `seq` in the conversation is not terminal. */
export function hasUnfinishedBefore(pending: PendingDeliveries, seq: number): boolean {
  for (const other of pending.keys()) if (other < seq) return true;
  return false;
}

/** The lowest pending delivery, or null when the conversation has nothing pending. */
export function head(pending: PendingDeliveries): QueuedDelivery | null {
  let best: QueuedDelivery | null = null;
  for (const [seq, deliveryId] of pending) if (best === null || seq < best.seq) best = { seq, deliveryId };
  return best;
}

/**
 * Delivery `seq` became terminal: the delivery this releases, i.e. the new head when `seq` was
 * the head (every later delivery waited behind it). Null when `seq` was not the head (an earlier
 * delivery still blocks the rest: e.g. a later delivery failed because its notification could not
 * be published) or when nothing is left.
 */
export function releaseFrom(pending: PendingDeliveries, seq: number): QueuedDelivery | null {
  if (hasUnfinishedBefore(pending, seq)) return null;
  const rest = new Map(pending);
  rest.delete(seq);
  return head(rest);
}
