/**
 * Phase `privacy` (inside `firebase emulators:exec --only firestore`; docs/privacy.md), the
 * service's own code in-process (functions/src/privacy/*), counted at the Admin SDK
 * (lib/instrument.mjs):
 *
 * 1. erasure: one customer with 1,000 messages (10 conversations of 100) erased with
 *    `runErasure`, in a workspace where 10 other customers wrote one message each ("small") and in
 *    one where 1,000 other customers wrote 10 each, 10,000 messages ("large"). Each repetition
 *    writes a fresh target customer into both workspaces, waits for the emulator to settle, and
 *    erases the two in rotating order (6 repetitions, so each goes first equally often);
 *    the ratios (large / small: time, documents read) are paired by repetition. Target <= 1.25
 *    each. Both workspaces live in the one emulator database throughout, so the emulator's own
 *    scan of the `messages` collection group (it has no indexes; production reads an index range)
 *    costs both alike; how much that scan grows with the 10,000 messages is measured on its own
 *    (`groupQueryScan`: the erasure's query for one customer, timed before and after the large
 *    workspace is written).
 * 2. retention: documents deleted per second by the retention job (`runRetention` with a one-day
 *    period over data two days old, deleting due documents as it does on the emulators, run until
 *    its pass is done) / raw batched deletes per second (500 per batch, sequential) of as many
 *    documents of the same shape. Reported.
 *
 * Quick: 200 messages per target, 1,000 other messages, fewer repetitions.
 */
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { FUNCTIONS_LIB } from '../lib/build.mjs';
import { measure } from '../lib/instrument.mjs';
import { BENCH_DIR } from '../lib/stack-config.mjs';
import { log, pick, runSections } from '../lib/session.mjs';
import { mapLimit, median, sleep, summarize, zipWith } from '../lib/stats.mjs';

const require = createRequire(import.meta.url);
if (!process.env.FIRESTORE_EMULATOR_HOST) throw new Error('run inside `firebase emulators:exec` (FIRESTORE_EMULATOR_HOST is not set)');
process.env.GCLOUD_PROJECT ??= 'demo-support-desk';
process.env.METADATA_SERVER_DETECTION ??= 'none';
const lib = (path) => require(join(FUNCTIONS_LIB, path));
const { db } = lib('platform/firebase.js');
const { runErasure } = lib('privacy/erasure.js');
const { runRetention } = lib('privacy/retention.js');
const { createImageStore, imagePath } = lib('platform/object-store.js');
const { customerIdFor, conversationIdFor } = lib('platform/ids.js');
const { groupQuery, QUERIES } = lib('platform/queries.js');
const { Timestamp } = require(require.resolve('firebase-admin/firestore', { paths: [FUNCTIONS_LIB] }));

const store = createImageStore({ kind: 'local', dir: join(BENCH_DIR, 'privacy-objects') });
/** Stored objects written or removed at once by the bench's own fixtures and blind baseline. */
const OBJECT_REMOVALS_AT_ONCE = 16;
/** Each workspace has its own integration (customer ids hash the integration id, as in production). */
const integrationOf = (ws) => `int-${ws}`;
const DAY = 86_400_000;
const TARGET_MESSAGES = pick(1000, 200);
const TARGET_CONVERSATIONS = 10;
const LARGE_OTHERS = pick(1000, 100);
const OTHER_MESSAGES_EACH = 10;
const REPS = pick(6, 2);
/** After writing a repetition's fixtures, before timing: the emulator is still busy with the writes for a while. */
const SETTLE_MS = pick(3_000, 1_000);

/** The bytes of each stored image of the retention with files (a small PNG's size), and their hash. */
const IMAGE_BYTES = Buffer.alloc(2048, 7);
const IMAGE_SHA256 = createHash('sha256').update(IMAGE_BYTES).digest('hex');
/** The stored objects the messages of `docs` name. */
const objectPathsOf = (docs) => docs.flatMap(([, data]) => (data.images ?? []).map((image) => image.path));

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

/**
 * Customers, their conversations (the customer the only one, as the messages handler records it in
 * `customerIds`) and their inbound messages, shaped as messages/store.ts writes them.
 */
function customerDocs(ws, externalIds, perCustomer, conversationsEach, createdAt, { withImages = false } = {}) {
  const docs = [];
  const integrationId = integrationOf(ws);
  for (const externalId of externalIds) {
    const customerId = customerIdFor(integrationId, externalId);
    docs.push([`workspaces/${ws}/customers/${customerId}`, { integrationId, externalId, lastSeenAt: Timestamp.fromMillis(createdAt), createdAt: Timestamp.fromMillis(createdAt) }]);
    const inEach = Math.ceil(perCustomer / conversationsEach);
    for (let c = 0; c < conversationsEach; c++) {
      const external = `${externalId}-chat-${c}`;
      const conversationId = conversationIdFor(integrationId, external);
      docs.push([`workspaces/${ws}/conversations/${conversationId}`, { integrationId, externalConversationId: external, customerIds: [customerId], lastMessageAt: Timestamp.fromMillis(createdAt), createdAt: Timestamp.fromMillis(createdAt), listShard: 0 }]);
      for (let m = 0; m < inEach; m++) {
        // With images: one stored object each, as an incoming image is stored (one object per message).
        const images = withImages ? [{ path: imagePath(ws, conversationId, `m_${c}_${m}`, IMAGE_SHA256, 'png'), sha256: IMAGE_SHA256, contentType: 'image/png', size: IMAGE_BYTES.length, width: 1, height: 1 }] : [];
        docs.push([`workspaces/${ws}/conversations/${conversationId}/messages/m_${c}_${m}`, {
          direction: 'inbound', integrationId, kind: 'message', text: 'x'.repeat(200), images,
          sender: { externalId, displayName: null, kind: 'customer', customerId }, createdAt: Timestamp.fromMillis(createdAt + m),
        }]);
      }
    }
  }
  return docs;
}

/** Erases `externalId` of `ws` to the end, counted: time, documents read (billed, at the SDK), steps. */
async function erase(ws, externalId, label) {
  const id = `er-${label}-${externalId}`;
  await db().doc(`workspaces/${ws}/erasures/${id}`).set({ integrationId: integrationOf(ws), externalCustomerId: externalId, requestedAt: Timestamp.now(), requestedBy: 'bench' });
  const m = await measure(async () => {
    const total = { steps: 0, reads: 0, deleted: 0, done: false };
    while (!total.done) {
      const r = await runErasure(db(), store, ws, id, 60_000);
      Object.assign(total, { steps: total.steps + r.steps, reads: total.reads + r.reads, deleted: total.deleted + r.deleted, done: r.done });
    }
    return total;
  });
  const audit = (await db().doc(`workspaces/${ws}/erasures/${id}`).get()).data();
  if (audit.status !== 'done' || audit.counts.messages !== TARGET_MESSAGES) throw new Error(`${label}: erasure ended ${audit.status} with ${JSON.stringify(audit.counts)}`);
  return { ms: m.ms, docsRead: m.counts.docsRead, serviceReads: m.value.reads, steps: m.value.steps, deleted: m.value.deleted, rpcs: m.counts.rpcs, queries: m.counts.queries, transactions: m.counts.transactions, counts: audit.counts };
}

/** The erasure's first query (one customer's messages, a page) timed alone, `n` times: the emulator's collection-group scan. */
async function timeGroupQuery(ws, customerExternalId, n) {
  const query = groupQuery(db(), QUERIES.messagesOfCustomer, customerIdFor(integrationOf(ws), customerExternalId), Timestamp.now()).limit(100);
  const times = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await query.get();
    times.push(performance.now() - t0);
  }
  return median(times);
}

async function erasure() {
  const now = Date.now() - 60_000;
  const stamp = Date.now().toString(36);
  const ws = { small: `ws-privacy-small-${stamp}`, large: `ws-privacy-large-${stamp}` };
  await writeAll(customerDocs(ws.small, Array.from({ length: 10 }, (_, i) => `other-${i}`), 1, 1, now));
  // A probe customer that is never erased: the group query alone, before and after the large workspace exists.
  await writeAll(customerDocs(ws.small, ['probe'], 100, 1, now));
  await timeGroupQuery(ws.small, 'probe', 5);
  const probeBefore = await timeGroupQuery(ws.small, 'probe', 20);
  await writeAll(customerDocs(ws.large, Array.from({ length: 10 }, (_, i) => `other-${i}`), 1, 1, now));
  await writeAll(customerDocs(ws.large, Array.from({ length: LARGE_OTHERS - 10 }, (_, i) => `other-${i + 10}`), OTHER_MESSAGES_EACH, 1, now));
  // The 10 customers the two workspaces share wrote 1 message each; the other customers of the
  // large workspace 10 each: 10 + 990 x 10 (quick: 10 + 90 x 10) other messages.
  const otherMessages = { small: 10, large: 10 + (LARGE_OTHERS - 10) * OTHER_MESSAGES_EACH };
  const probeAfter = await timeGroupQuery(ws.small, 'probe', 20);
  log(`privacy: the erasure's group query alone: ${probeBefore.toFixed(1)} ms before, ${probeAfter.toFixed(1)} ms after the large workspace was written`);

  // Warm-up (code paths, channels): one small erasure, not measured.
  await writeAll(customerDocs(ws.small, ['warm-up'], TARGET_MESSAGES, TARGET_CONVERSATIONS, now));
  await erase(ws.small, 'warm-up', 'small');

  const runs = { small: [], large: [] };
  for (let rep = 0; rep < REPS; rep++) {
    const target = `target-${rep}`;
    for (const size of ['small', 'large']) await writeAll(customerDocs(ws[size], [target], TARGET_MESSAGES, TARGET_CONVERSATIONS, now));
    // Without the pause, whichever erasure ran first was the slower one in 4 of 5 pairs (full run
    // of 2026-11-25 16:13): the emulator was still absorbing the 2,022 documents just written.
    await sleep(SETTLE_MS);
    const order = rep % 2 === 0 ? ['small', 'large'] : ['large', 'small'];
    for (const size of order) runs[size].push(await erase(ws[size], target, size));
    log(`privacy: erasure ${rep + 1}/${REPS}: small ${runs.small[rep].ms.toFixed(0)} ms, ${runs.small[rep].docsRead} read; large ${runs.large[rep].ms.toFixed(0)} ms, ${runs.large[rep].docsRead} read`);
  }
  const of = (size, field) => runs[size].map((r) => r[field]);
  return {
    targetMessages: TARGET_MESSAGES,
    targetConversations: TARGET_CONVERSATIONS,
    otherMessages,
    otherCustomers: { small: 10, large: LARGE_OTHERS },
    repetitions: REPS,
    timeRatio: summarize(zipWith((l, s) => l / s, of('large', 'ms'), of('small', 'ms'))),
    docsReadRatio: summarize(zipWith((l, s) => l / s, of('large', 'docsRead'), of('small', 'docsRead'))),
    small: { ms: summarize(of('small', 'ms'), 1), docsRead: summarize(of('small', 'docsRead'), 0), serviceReads: summarize(of('small', 'serviceReads'), 0), steps: summarize(of('small', 'steps'), 0), deleted: summarize(of('small', 'deleted'), 0), rpcs: summarize(of('small', 'rpcs'), 0) },
    large: { ms: summarize(of('large', 'ms'), 1), docsRead: summarize(of('large', 'docsRead'), 0), serviceReads: summarize(of('large', 'serviceReads'), 0), steps: summarize(of('large', 'steps'), 0), deleted: summarize(of('large', 'deleted'), 0), rpcs: summarize(of('large', 'rpcs'), 0) },
    counts: runs.large[0].counts,
    groupQueryScan: { beforeMs: probeBefore, afterMs: probeAfter, ratio: probeAfter / probeBefore, documentsInGroupAfter: otherMessages.small + otherMessages.large + 100 + TARGET_MESSAGES * 2 },
  };
}

/** The retention job over workspace `ws`, run after run until its pass is done (as the schedule would), timed. */
async function passToEnd(ws) {
  const t0 = performance.now();
  const total = { deleted: 0, objects: 0, reads: 0, runs: 0 };
  for (;;) {
    const stats = await runRetention(db(), store, { deleteDue: true, workspaceIds: [ws] });
    total.deleted += stats.deleted;
    total.objects += stats.objectsDeleted;
    total.reads += stats.reads;
    total.runs += 1;
    const state = (await db().doc(`workspaces/${ws}/settings/retentionState`).get()).data();
    if (state.cursor === null) break;
  }
  return { ms: performance.now() - t0, ...total };
}

async function retention() {
  const customers = pick(30, 10);
  const old = Date.now() - 2 * DAY;
  const reps = pick(3, 1);
  const jobRates = [];
  const rawRates = [];
  const readRates = [];
  const filesJobRates = [];
  const filesRawRates = [];
  const filesBlindRates = [];
  const filesCustomers = pick(10, 4);
  const details = [];
  for (let rep = 0; rep < reps; rep++) {
    const externalIds = Array.from({ length: customers }, (_, i) => `ret-${rep}-${i}`);
    const wsJob = `ws-retention-job-${rep}-${Date.now().toString(36)}`;
    const wsRaw = `ws-retention-raw-${rep}-${Date.now().toString(36)}`;
    const wsRead = `ws-retention-read-${rep}-${Date.now().toString(36)}`;
    const docs = customerDocs(wsJob, externalIds, 100, 1, old);
    const raw = customerDocs(wsRaw, externalIds, 100, 1, old);
    const readable = customerDocs(wsRead, externalIds, 100, 1, old);
    await writeAll(docs);
    await writeAll(raw);
    await writeAll(readable);
    await db().doc(`workspaces/${wsJob}/settings/retention`).set({ days: 1 });
    const job = async () => {
      const pass = await passToEnd(wsJob);
      if (pass.deleted !== docs.length) throw new Error(`retention job deleted ${pass.deleted} of ${docs.length}`);
      return pass;
    };
    const batched = async () => {
      const t0 = performance.now();
      for (let i = 0; i < raw.length; i += 500) {
        const batch = db().batch();
        for (const [path] of raw.slice(i, i + 500)) batch.delete(db().doc(path));
        await batch.commit();
      }
      return { ms: performance.now() - t0 };
    };
    // The floor of any job that must read what it deletes: the same documents found by the same
    // queries (the conversations, each one's messages 10 conversations at a time, the customers),
    // then deleted in batches of 500 as the raw baseline does. Nothing decided, nothing stamped.
    const readThenDelete = async () => {
      const t0 = performance.now();
      const conversations = await db().collection(`workspaces/${wsRead}/conversations`).get();
      const refs = conversations.docs.map((d) => d.ref);
      await mapLimit(conversations.docs, 10, async (c) => refs.push(...(await c.ref.collection('messages').get()).docs.map((d) => d.ref)));
      refs.push(...(await db().collection(`workspaces/${wsRead}/customers`).get()).docs.map((d) => d.ref));
      for (let i = 0; i < refs.length; i += 500) {
        const batch = db().batch();
        for (const ref of refs.slice(i, i + 500)) batch.delete(ref);
        await batch.commit();
      }
      if (refs.length !== readable.length) throw new Error(`read-then-delete found ${refs.length} of ${readable.length}`);
      return { ms: performance.now() - t0 };
    };
    // Messages with files: each names one stored image, which the job removes before the message
    // (TTL cannot remove objects, so deployed too this is the job's own work). Against the raw
    // batched deletes of the same documents, and against those plus removing the same objects
    // blind (OBJECT_REMOVALS_AT_ONCE at a time).
    const filesIds = Array.from({ length: filesCustomers }, (_, i) => `retf-${rep}-${i}`);
    const wsFilesJob = `ws-retention-files-job-${rep}-${Date.now().toString(36)}`;
    const wsFilesRaw = `ws-retention-files-raw-${rep}-${Date.now().toString(36)}`;
    const filesDocs = customerDocs(wsFilesJob, filesIds, 100, 1, old, { withImages: true });
    const filesRaw = customerDocs(wsFilesRaw, filesIds, 100, 1, old, { withImages: true });
    await writeAll(filesDocs);
    await writeAll(filesRaw);
    await mapLimit([...objectPathsOf(filesDocs), ...objectPathsOf(filesRaw)], OBJECT_REMOVALS_AT_ONCE, (path) => store.put(path, IMAGE_BYTES, 'image/png'));
    await db().doc(`workspaces/${wsFilesJob}/settings/retention`).set({ days: 1 });
    const filesJob = async () => {
      const pass = await passToEnd(wsFilesJob);
      const expectedObjects = objectPathsOf(filesDocs).length;
      if (pass.deleted !== filesDocs.length || pass.objects !== expectedObjects) throw new Error(`retention job with files deleted ${pass.deleted} of ${filesDocs.length} documents, ${pass.objects} of ${expectedObjects} objects`);
      return pass;
    };
    const filesBlind = async () => {
      const t0 = performance.now();
      for (let i = 0; i < filesRaw.length; i += 500) {
        const batch = db().batch();
        for (const [path] of filesRaw.slice(i, i + 500)) batch.delete(db().doc(path));
        await batch.commit();
      }
      const docsMs = performance.now() - t0;
      await mapLimit(objectPathsOf(filesRaw), OBJECT_REMOVALS_AT_ONCE, (path) => store.remove(path));
      return { docsMs, ms: performance.now() - t0 };
    };

    // Rotating order: job, raw, read (then raw, read, job; read, job, raw), then the two with files.
    const runners = [job, batched, readThenDelete];
    const results = new Map();
    for (let k = 0; k < runners.length; k++) {
      const runner = runners[(k + rep) % runners.length];
      results.set(runner, await runner());
    }
    const filesRunners = rep % 2 === 0 ? [filesJob, filesBlind] : [filesBlind, filesJob];
    for (const runner of filesRunners) results.set(runner, await runner());
    const [a, b, c, f, g] = [results.get(job), results.get(batched), results.get(readThenDelete), results.get(filesJob), results.get(filesBlind)];
    jobRates.push(a.deleted / (a.ms / 1000));
    rawRates.push(raw.length / (b.ms / 1000));
    readRates.push(readable.length / (c.ms / 1000));
    filesJobRates.push(f.deleted / (f.ms / 1000));
    filesRawRates.push(filesRaw.length / (g.docsMs / 1000));
    filesBlindRates.push(filesRaw.length / (g.ms / 1000));
    details.push({ documents: docs.length, jobMs: Math.round(a.ms), jobReads: a.reads, jobRuns: a.runs, rawMs: Math.round(b.ms), readThenDeleteMs: Math.round(c.ms), filesDocuments: filesDocs.length, filesObjects: f.objects, filesJobMs: Math.round(f.ms), filesRawDocsMs: Math.round(g.docsMs), filesRawWithObjectsMs: Math.round(g.ms) });
    log(`privacy: retention ${rep + 1}/${reps}: job ${jobRates.at(-1).toFixed(0)} deleted/s, raw ${rawRates.at(-1).toFixed(0)} deletes/s, read then delete ${readRates.at(-1).toFixed(0)}/s; with files: job ${filesJobRates.at(-1).toFixed(0)} documents/s, raw ${filesRawRates.at(-1).toFixed(0)}/s, raw with the objects ${filesBlindRates.at(-1).toFixed(0)}/s`);
  }
  return {
    documents: details[0].documents,
    repetitions: reps,
    ratio: summarize(zipWith((j, r) => j / r, jobRates, rawRates)),
    // The part that is the job's own: against reading the same documents and deleting them blind.
    ratioToReadThenDelete: summarize(zipWith((j, r) => j / r, jobRates, readRates)),
    // What reading costs on this emulator: read-then-delete against the raw deletes.
    readThenDeleteToRaw: summarize(zipWith((r, w) => r / w, readRates, rawRates)),
    readThenDeletePerSecond: summarize(readRates, 0),
    // Messages with files (one stored image each): the job's documents per second against the raw
    // batched deletes of the same documents, and against those plus the objects removed blind.
    withFiles: {
      documents: details[0].filesDocuments,
      objects: details[0].filesObjects,
      ratio: summarize(zipWith((j, r) => j / r, filesJobRates, filesRawRates)),
      ratioToRawWithObjects: summarize(zipWith((j, r) => j / r, filesJobRates, filesBlindRates)),
      jobDocumentsPerSecond: summarize(filesJobRates, 0),
      rawDeletesPerSecond: summarize(filesRawRates, 0),
      rawWithObjectsPerSecond: summarize(filesBlindRates, 0),
    },
    jobDeletesPerSecond: summarize(jobRates, 0),
    rawDeletesPerSecond: summarize(rawRates, 0),
    runs: details,
  };
}

await runSections('privacy', { erasure, retention }, { close: () => db().terminate() });
