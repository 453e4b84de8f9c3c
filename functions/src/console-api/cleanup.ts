/**
 * The unused-upload cleanup (docs/data-model.md#attachment-uploads): an upload no reply took within
 * 24 hours is deleted, its object first, then its record, so that no object is ever left without
 * the record that names it. Scheduled every 10 minutes (index.ts `cleanUpUnusedUploads`; the local
 * stack runs it itself, scripts/stack.mjs).
 *
 * Bounded and resumable: each run reads the due uploads one shard at a time, a page at a time
 * (`QUERIES.unusedUploadsOfShard`), until the shards are empty or its time budget is spent; what it
 * did not reach is still due at the next run. Each upload goes in three idempotent steps:
 *
 * 1. a transaction claims it for deletion (`usedBy` = `CLEANUP_CLAIM`), only if no reply took it
 *    and it is due. From then on the reply trigger refuses it (`attachment_rejected`: it is used,
 *    ../deliveries/reply.ts), so a reply sequenced meanwhile can never point at a deleted object;
 *    a reply that took it first wins (the transaction sees `usedBy` and leaves it);
 * 2. the object is removed (nothing when it is gone already);
 * 3. the record is deleted.
 *
 * A run cut off after step 1 or 2 finds the upload again (`cleanupAt` is still set) and finishes it.
 */
import * as logger from '../platform/log';
import type { Firestore } from 'firebase-admin/firestore';
import { config } from '../platform/config';
import { db } from '../platform/firebase';
import type { ImageStore } from '../platform/object-store';
import { groupQuery, QUERIES } from '../platform/queries';
import { allShards, forEachLimit } from '../platform/shards';
import { objectStore } from './objects';

/**
 * What `usedBy` holds while the cleanup deletes an upload: not a message id (a document id never
 * contains a slash), so no reply can ever take it.
 */
export const CLEANUP_CLAIM = 'cleanup/unused';

/** Uploads read per query page. */
const PAGE_SIZE = 100;
/** Uploads deleted at a time. */
const CONCURRENCY = 8;
/** Time a run spends before it stops (its schedule's timeout is far longer). */
const RUN_BUDGET_MS = 60_000;

export interface CleanupRun {
  /** Uploads whose object and record were deleted by this run. */
  deleted: number;
  /** Uploads a reply took between the query and the claim (left as they are). */
  skipped: number;
  /** True when every shard was read to its end (nothing due is left). */
  complete: boolean;
}

/** Steps 1 to 3 for one upload; whether it was deleted. */
async function deleteIfUnused(firestore: Firestore, store: ImageStore, path: string, now: number): Promise<boolean> {
  const ref = firestore.doc(path);
  const storagePath = await firestore.runTransaction(async (tx) => {
    const snap = await tx.get(ref);
    const usedBy: unknown = snap.get('usedBy');
    const cleanupAt: unknown = snap.get('cleanupAt');
    const storagePath: unknown = snap.get('storagePath');
    if (!snap.exists || (usedBy !== null && usedBy !== undefined && usedBy !== CLEANUP_CLAIM)) return null;
    if (typeof cleanupAt !== 'number' || cleanupAt > now) return null;
    if (usedBy !== CLEANUP_CLAIM) tx.update(ref, { usedBy: CLEANUP_CLAIM });
    return typeof storagePath === 'string' ? storagePath : '';
  });
  if (storagePath === null) return false;
  // A record without a path (never written by the service) has no object to remove.
  if (storagePath !== '') await store.remove(storagePath);
  await ref.delete();
  return true;
}

/**
 * One run: deletes the uploads due at `now` (unused, `cleanupAt` passed), within `budgetMs`.
 * `shardCount`: the shards to read (`QUEUE_SHARDS`, raised only: every shard below it is read).
 */
export async function cleanUnusedUploads(
  firestore: Firestore,
  store: ImageStore,
  options: { now: number; shardCount: number; budgetMs?: number; pageSize?: number },
): Promise<CleanupRun> {
  const stopAt = Date.now() + (options.budgetMs ?? RUN_BUDGET_MS);
  const run: CleanupRun = { deleted: 0, skipped: 0, complete: false };
  for (const shard of allShards(options.shardCount)) {
    for (;;) {
      if (Date.now() >= stopAt) return run;
      const page = await groupQuery(firestore, QUERIES.unusedUploadsOfShard, shard, options.now).limit(options.pageSize ?? PAGE_SIZE).get();
      const skippedBefore = run.skipped;
      await forEachLimit(page.docs, CONCURRENCY, async (doc) => {
        if (await deleteIfUnused(firestore, store, doc.ref.path, options.now)) run.deleted += 1;
        else run.skipped += 1;
      });
      // A page of skipped uploads only (taken by replies meanwhile) leaves the index by itself;
      // stop reading this shard rather than read the same page again.
      if (page.size < (options.pageSize ?? PAGE_SIZE) || run.skipped - skippedBefore === page.size) break;
    }
  }
  run.complete = true;
  return run;
}

/** The scheduled entry point (index.ts `cleanUpUnusedUploads`). */
export async function onUploadCleanup(): Promise<void> {
  const run = await cleanUnusedUploads(db(), objectStore(), { now: Date.now(), shardCount: config().queueShards });
  logger.info('uploads.cleanup', { ...run });
}
