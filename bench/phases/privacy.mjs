/**
 * Privacy phase (docs/privacy.md): run inside `firebase emulators:exec --only firestore`.
 *
 * 1. Erasure cost grows with the customer's data, not the workspace's: one customer with 1,000
 *    messages (10 conversations of 100) erased in a workspace where 10 other customers wrote one
 *    message each, and again in one where other customers wrote 10,000 messages. Reported: the
 *    time and documents-read ratios (large / small), each to be <= 1.25.
 * 2. Retention job throughput: documents deleted per second by the job (a pass with a one-day
 *    period over data two days old, deleting as the emulator stand-in does) / raw batched deletes
 *    per second (500 per batch) of the same number of documents.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { FUNCTIONS_LIB } from '../lib/build.mjs';
import { BENCH_DIR } from '../lib/stack-config.mjs';

const require = createRequire(import.meta.url);
if (!process.env.FIRESTORE_EMULATOR_HOST) throw new Error('run inside `firebase emulators:exec` (FIRESTORE_EMULATOR_HOST is not set)');
process.env.GCLOUD_PROJECT ??= 'demo-support-desk';
process.env.METADATA_SERVER_DETECTION ??= 'none';
const lib = (path) => require(join(FUNCTIONS_LIB, path));
const { db } = lib('platform/firebase.js');
const { runErasure } = lib('privacy/erasure.js');
const { runRetention } = lib('privacy/retention.js');
const { createImageStore } = lib('messages/image-store.js');
const { customerIdFor, conversationIdFor } = lib('platform/ids.js');
const { Timestamp } = require(require.resolve('firebase-admin/firestore', { paths: [FUNCTIONS_LIB] }));

const quick = process.env.BENCH_QUICK === '1';
const store = createImageStore({ kind: 'local', dir: join(BENCH_DIR, 'privacy-objects') });
const INTEGRATION = 'int-bench';
const DAY = 86_400_000;

/** Writes `docs` ([path, data]) in batches of 500, 4 batches at a time. */
async function writeAll(docs) {
  const batches = [];
  for (let i = 0; i < docs.length; i += 500) batches.push(docs.slice(i, i + 500));
  for (let i = 0; i < batches.length; i += 4) {
    await Promise.all(
      batches.slice(i, i + 4).map((chunk) => {
        const batch = db().batch();
        for (const [path, data] of chunk) batch.set(db().doc(path), data);
        return batch.commit();
      }),
    );
  }
}

/** A workspace: `customers` customers each writing `perCustomer` messages in `conversationsEach` conversations of their own. */
function workspaceDocs(ws, customers, perCustomer, conversationsEach, createdAt) {
  const docs = [];
  for (const [externalId, count, conversations] of customers.map((c) => [c, perCustomer, conversationsEach])) {
    const customerId = customerIdFor(INTEGRATION, externalId);
    docs.push([`workspaces/${ws}/customers/${customerId}`, { integrationId: INTEGRATION, externalId, lastSeenAt: Timestamp.fromMillis(createdAt), createdAt: Timestamp.fromMillis(createdAt) }]);
    for (let c = 0; c < conversations; c++) {
      const external = `${externalId}-chat-${c}`;
      const conversationId = conversationIdFor(INTEGRATION, external);
      docs.push([`workspaces/${ws}/conversations/${conversationId}`, { integrationId: INTEGRATION, externalConversationId: external, customerIds: [customerId], lastMessageAt: Timestamp.fromMillis(createdAt), createdAt: Timestamp.fromMillis(createdAt), listShard: 0 }]);
      const inThis = Math.ceil(count / conversations);
      for (let m = 0; m < inThis; m++) {
        docs.push([`workspaces/${ws}/conversations/${conversationId}/messages/m_${c}_${m}`, {
          direction: 'inbound', integrationId: INTEGRATION, kind: 'message', text: 'x'.repeat(200), images: [],
          sender: { externalId, displayName: null, kind: 'customer', customerId }, createdAt: Timestamp.fromMillis(createdAt + m),
        }]);
      }
    }
  }
  return docs;
}

async function erasureRun(label, others, otherMessagesEach) {
  const ws = `ws-privacy-${label}-${Date.now()}`;
  const now = Date.now() - 60_000;
  const target = 'target-customer';
  await writeAll(workspaceDocs(ws, [target], quick ? 200 : 1000, 10, now));
  const otherIds = Array.from({ length: others }, (_, i) => `other-${i}`);
  await writeAll(workspaceDocs(ws, otherIds, otherMessagesEach, 1, now));
  const id = `er-${label}`;
  await db().doc(`workspaces/${ws}/erasures/${id}`).set({ integrationId: INTEGRATION, externalCustomerId: target, requestedAt: Timestamp.now(), requestedBy: 'bench' });
  const t0 = performance.now();
  let total = { steps: 0, reads: 0, deleted: 0, done: false };
  while (!total.done) {
    const r = await runErasure(db(), store, ws, id, 60_000);
    total = { steps: total.steps + r.steps, reads: total.reads + r.reads, deleted: total.deleted + r.deleted, done: r.done };
  }
  const ms = performance.now() - t0;
  const audit = (await db().doc(`workspaces/${ws}/erasures/${id}`).get()).data();
  return { label, otherMessages: others * otherMessagesEach, ms: Math.round(ms), steps: total.steps, reads: total.reads, deleted: total.deleted, counts: audit.counts, docsPerStep: Number((total.deleted / total.steps).toFixed(1)) };
}

async function retentionRun() {
  const n = quick ? 1000 : 3000;
  const old = Date.now() - 2 * DAY;
  const customers = Array.from({ length: n / 100 }, (_, i) => `ret-${i}`);
  const wsJob = `ws-retention-job-${Date.now()}`;
  const docs = workspaceDocs(wsJob, customers, 100, 1, old);
  await writeAll(docs);
  await db().doc(`workspaces/${wsJob}/settings/retention`).set({ days: 1 });
  const t0 = performance.now();
  let deleted = 0;
  let reads = 0;
  for (;;) {
    const stats = await runRetention(db(), store, { deleteDue: true, workspaceIds: [wsJob] });
    deleted += stats.deleted;
    reads += stats.reads;
    const state = (await db().doc(`workspaces/${wsJob}/settings/retentionState`).get()).data();
    if (state.cursor === null) break;
  }
  const jobMs = performance.now() - t0;

  const wsRaw = `ws-retention-raw-${Date.now()}`;
  const raw = workspaceDocs(wsRaw, customers, 100, 1, old);
  await writeAll(raw);
  const t1 = performance.now();
  for (let i = 0; i < raw.length; i += 500) {
    const batch = db().batch();
    for (const [path] of raw.slice(i, i + 500)) batch.delete(db().doc(path));
    await batch.commit();
  }
  const rawMs = performance.now() - t1;
  const jobRate = deleted / (jobMs / 1000);
  const rawRate = raw.length / (rawMs / 1000);
  return { documents: docs.length, deleted, reads, jobMs: Math.round(jobMs), jobDeletesPerSecond: Math.round(jobRate), rawMs: Math.round(rawMs), rawDeletesPerSecond: Math.round(rawRate), ratio: Number((jobRate / rawRate).toFixed(2)) };
}

const small = await erasureRun('small', 10, 1);
const large = await erasureRun('large', quick ? 100 : 1000, 10);
const erasure = {
  small,
  large,
  timeRatio: Number((large.ms / small.ms).toFixed(2)),
  readsRatio: Number((large.reads / small.reads).toFixed(2)),
};
const retention = await retentionRun();
const result = { erasure, retention };
console.log(JSON.stringify(result, null, 2));
if (process.env.BENCH_OUT) writeFileSync(process.env.BENCH_OUT, JSON.stringify(result, null, 2));
process.exit(0);
