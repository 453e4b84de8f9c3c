/**
 * Shards for queue-like indexes (docs/capacity.md). Firestore sustains about 500 writes/s on one
 * range of an index over a monotonically increasing field (a due time, a timestamp), so every such
 * index leads with a shard field: N shards are N ranges, N x 500 writes/s. Pure.
 *
 * Shard counts are configuration (platform/config.ts). They may be raised at any time (documents
 * keep their shard; readers query every shard below the current count, which includes the old
 * ones) but never lowered: documents in shards at or above a lowered count would not be read.
 */

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

/** 0 .. count-1, for the queries that read every shard. */
export const allShards = (count: number): number[] => Array.from({ length: count }, (_, shard) => shard);

/** Transactions the sweeper runs at a time (each touches one delivery, or one outbox entry). */
export const SWEEP_CONCURRENCY = 16;

/** Runs `fn` over `items` with at most `limit` calls in flight; rejects with the first failure. */
export async function forEachLimit<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await fn(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
