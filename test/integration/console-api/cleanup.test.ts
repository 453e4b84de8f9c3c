/**
 * The unused-upload cleanup (functions/src/console-api/cleanup.ts, docs/data-model.md#attachment-uploads)
 * against the Firestore emulator and the functions' local object store, run in-process as the
 * schedule runs it: it deletes exactly the uploads no reply took whose 24 hours are over (object,
 * then record), leaves used and recent ones, is idempotent, finishes an upload a cut-off run
 * claimed, and stops within its page budget leaving the rest for the next run.
 *
 * @serial runs the unused-upload cleanup for every workspace at now + 24 h: it deletes the uploads other suites are about to use
 */
import { existsSync } from 'node:fs';
import { SHARD_COUNTS } from '../../../functions/src/contract';
import { CLEANUP_CLAIM, cleanUnusedUploads } from '../../../functions/src/console-api/cleanup';
import { attachmentPath, createImageStore } from '../../../functions/src/platform/object-store';
import { adminDb, closeStack, createTestIntegration, imageFilePath, testImageDir } from '../helpers/stack';
import { seedUpload } from '../helpers/console-uploads';

const DAY = 24 * 3600 * 1000;
const store = () => createImageStore({ kind: 'local', dir: testImageDir() });
/** The conversation of each seeded upload (its record is gone once deleted). */
const paths = new Map<string, string>();
const seed = async (conversationId: string, name: string, createdAt: number) => {
  const u = await seedUpload(workspaceId, conversationId, 'op', file(name), { createdAt });
  paths.set(u.attachmentId, conversationId);
  return u;
};
const file = (name: string) => ({ bytes: Buffer.from(`text of ${name}\n`), name, type: 'text/plain' });

let workspaceId: string;
const recordOf = (attachmentId: string) => adminDb().doc(`workspaces/${workspaceId}/attachmentUploads/${attachmentId}`);
/** Whether the upload's record and its object (at the per-upload path) are there. */
const exists = async (u: { attachmentId: string }) => {
  const record = await recordOf(u.attachmentId).get();
  const conversationId = String(record.get('conversationId') ?? paths.get(u.attachmentId));
  return { record: record.exists, object: existsSync(imageFilePath(attachmentPath(workspaceId, conversationId, u.attachmentId))) };
};

beforeAll(async () => {
  ({ workspaceId } = await createTestIntegration());
});

afterAll(async () => {
  await closeStack();
});

/** A run as the schedule makes it, at `now` (the uploads of other suites may be due too: counts are at least). */
const run = (now: number, budget: { pageSize?: number; budgetMs?: number } = {}) => cleanUnusedUploads(adminDb(), store(), { now, shardCount: SHARD_COUNTS.queue.default, ...budget });

test('deletes the unused uploads older than 24 h (object and record) and nothing else; a second run finds nothing of them', async () => {
  const now = Date.now();
  const old = await seed('c_one', 'old.txt', now - DAY - 60_000);
  const oldOtherConversation = await seed('c_two', 'old2.txt', now - 2 * DAY);
  const recent = await seed('c_one', 'recent.txt', now - DAY + 60_000);
  const used = await seed('c_one', 'used.txt', now - 3 * DAY);
  // What the reply trigger does when a reply takes it (deliveries/reply.ts markUploadUsed).
  const { markUploadUsed } = await import('../../../functions/src/deliveries/reply');
  await recordOf(used.attachmentId).update(markUploadUsed('m_reply'));

  const first = await run(now);
  expect(first.complete).toBe(true);
  expect(first.deleted).toBeGreaterThanOrEqual(2);
  expect(await exists(old)).toEqual({ record: false, object: false });
  expect(await exists(oldOtherConversation)).toEqual({ record: false, object: false });
  expect(await exists(recent)).toEqual({ record: true, object: true });
  expect(await exists(used)).toEqual({ record: true, object: true });

  // Idempotent: nothing of this workspace is due any more, and what is left stays.
  await run(now);
  expect(await exists(recent)).toEqual({ record: true, object: true });
  expect(await exists(used)).toEqual({ record: true, object: true });
  // A day later the recent one is due too; the used one never is.
  await run(now + DAY);
  expect(await exists(recent)).toEqual({ record: false, object: false });
  expect(await exists(used)).toEqual({ record: true, object: true });
});

test('finishes an upload a cut-off run had claimed (its object already gone)', async () => {
  const now = Date.now();
  const claimed = await seed('c_three', 'claimed.txt', now - 2 * DAY);
  await recordOf(claimed.attachmentId).update({ usedBy: CLEANUP_CLAIM });
  await store().remove(attachmentPath(workspaceId, 'c_three', claimed.attachmentId));
  await run(now);
  expect(await exists(claimed)).toEqual({ record: false, object: false });
});

test('a run stops at its budget leaving the rest due; the next one pages through them (2 a page) to the end', async () => {
  const now = Date.now() + 10 * DAY; // after everything other suites seeded, so this run's work is known to include these
  const many = await Promise.all(Array.from({ length: 5 }, (_, i) => seed('c_four', `many-${i}.txt`, now - 2 * DAY)));
  const cut = await run(now, { budgetMs: 0 });
  expect(cut).toEqual({ deleted: 0, skipped: 0, complete: false });
  for (const u of many) expect(await exists(u)).toEqual({ record: true, object: true });
  const next = await run(now, { pageSize: 2 });
  expect(next.complete).toBe(true);
  expect(next.deleted).toBeGreaterThanOrEqual(many.length);
  for (const u of many) expect(await exists(u)).toEqual({ record: false, object: false });
});
