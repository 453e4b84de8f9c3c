/**
 * Shards for queue-like indexes (docs/capacity.md). Firestore sustains about 500 writes/s on one
 * range of an index over a monotonically increasing field (a due time, a timestamp), so every such
 * index leads with a shard field: N shards are N ranges, N x 500 writes/s. Pure.
 *
 * Shard counts are configuration (platform/config.ts, within the ranges of the contract's
 * `SHARD_COUNTS`), except the conversation list's, which the console reads too and which is the
 * contract's `CONVERSATION_LIST_SHARDS`. They may be raised at any time (documents keep their
 * shard; readers query every shard below the current count, which includes the old ones) but never
 * lowered: documents in shards at or above a lowered count would not be read.
 */

// The shard of an id is part of the contract (the console reads the conversation list's shards).
export { allShards, shardOf } from '../contract';

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
