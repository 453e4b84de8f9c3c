/**
 * Phase "store", run inside `firebase emulators:exec --only firestore` (no functions emulator, so no
 * trigger adds work or noise): the handlers called in-process with counting (instrument.mjs).
 *
 * - counts: Firestore transactions, round trips, documents read and written per operation,
 *   cold and warm key lookup (target: one transaction per operation, 0 reads for a warm key);
 * - scale: cost per delivery (claim + start + complete) with 10, 100, 1,000 conversations in the
 *   workspace (target: flat);
 * - pending: the catch-up list (a page of 10 claimable deliveries) with 10 vs 1,000 finished
 *   deliveries per conversation before them (target: flat);
 * - multipart: CPU time per MB of a 3-image (~20 MB) message against SHA-256 of the same bytes,
 *   and peak extra memory against the request size (target <= 2x).
 */
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describePattern, measure, oldShape, replay } from '../lib/instrument.mjs';
import { multipartMessage, png } from '../lib/images.mjs';
import { BENCH_DIR } from '../lib/stack-config.mjs';
import { bulkDeliveries, bulkFinishedThenPending, call, callOk, db, HANDLERS, incomingMessages, listPendingDeliveries, messageBody, newConversations, reactionBody, typingBody, newDeliveries, newIntegration, pendingQuery, queueDocument, retrying } from '../lib/service.mjs';
import { log, pick, runSections } from '../lib/session.mjs';
import { median, sleep, summarize } from '../lib/stats.mjs';
import { performance } from 'node:perf_hooks';

/** No functions emulator in this session: the topic is only needed for replies to be enabled. */
const TOPIC = 'projects/demo-support-desk/topics/bench-unused';
const COUNT_FIELDS = ['transactions', 'attempts', 'rpcs', 'roundTrips', 'docsRead', 'docsReadOutsideTx', 'docsWritten', 'lookups', 'queries'];

/**
 * Counts and in-process time of one kind of operation, and (a diagnostic for the overhead figures)
 * the time of its recorded transaction replayed directly, as often as it was measured.
 */
async function summarizeMeasurements(list) {
  const counts = {};
  for (const field of COUNT_FIELDS) counts[field] = summarize(list.map((m) => m.counts[field]));
  const pattern = list[list.length - 1].pattern;
  const direct = [];
  // A read without a transaction (the attachment check) has nothing to replay.
  for (let i = 0; pattern !== null && i < Math.max(3, list.length); i++) {
    const t0 = performance.now();
    await retrying(() => replay(db(), pattern));
    direct.push(performance.now() - t0);
  }
  const ms = list.map((m) => m.ms);
  if (pattern === null) return { counts, ms: summarize(ms), pattern: describePattern(pattern) };
  return { counts, ms: summarize(ms), directTxMs: summarize(direct), inProcessRatio: Number((median(ms) / median(direct)).toFixed(3)), pattern: describePattern(pattern) };
}

let retried503 = 0;

/**
 * Runs a counted operation; a 503 (the emulator's "Transaction lock timeout") is retried with the
 * same request, as the SDK does, and only the successful attempt is kept (the retries are counted).
 */
async function expectStatus(run, statuses, what) {
  for (let attempt = 1; ; attempt++) {
    const m = await run();
    if (m.value.status === 503 && attempt < 5) {
      retried503++;
      await sleep(200 * attempt);
      continue;
    }
    if (!statuses.includes(m.value.status)) throw new Error(`${what}: ${m.value.status} ${JSON.stringify(m.value.body)}`);
    return m;
  }
}

// ------------------------------------------------------------------------------------ counts

async function counts() {
  const n = pick(10, 4);
  const integration = await newIntegration(TOPIC);
  const key = integration.key;
  const op = (name, body) => measure(() => call(HANDLERS[name], { key, body }));
  const result = {};

  // The first authenticated request of the process: the key cache is cold.
  const coldConversation = `chat-cold-${randomUUID().slice(0, 8)}`;
  result['message (cold key cache)'] = await summarizeMeasurements([await expectStatus(() => op('message', messageBody(coldConversation)), [201], 'cold message')]);

  const newConv = [];
  for (let i = 0; i < n; i++) newConv.push(await expectStatus(() => op('message', messageBody(`chat-new-${randomUUID().slice(0, 8)}`)), [201], 'message'));
  result['message, new conversation'] = await summarizeMeasurements(newConv);

  const existing = [];
  const dupBodies = [];
  for (let i = 0; i < n; i++) {
    const body = messageBody(coldConversation);
    dupBodies.push(body);
    existing.push(await expectStatus(() => op('message', body), [201], 'message'));
  }
  result['message, existing conversation'] = await summarizeMeasurements(existing);
  const dups = [];
  for (const body of dupBodies) dups.push(await expectStatus(() => op('message', body), [200], 'duplicate'));
  result['message, duplicate eventId'] = await summarizeMeasurements(dups);

  // Message events (POST /v1/messages/events) on the messages above: a reaction applied at once
  // (added, then taken back, alternately), and a typing event (no target, one document).
  const reactions = [];
  for (let i = 0; i < n; i++) reactions.push(await expectStatus(() => op('event', reactionBody(coldConversation, dupBodies[0].eventId, i % 2 === 1)), [201], 'reaction'));
  result['message event: reaction'] = await summarizeMeasurements(reactions);
  const typing = [];
  for (let i = 0; i < n; i++) typing.push(await expectStatus(() => op('event', typingBody(coldConversation)), [201], 'typing'));
  result['message event: typing'] = await summarizeMeasurements(typing);

  const small = [png(640, 480, 2_000), png(800, 600, 3_000), png(1024, 768, 4_000)];
  const multi = [];
  for (let i = 0; i < n; i++) {
    const { body, contentType } = multipartMessage(coldConversation, small);
    multi.push(await expectStatus(() => measure(() => call(incomingMessages, { key, rawBody: body, contentType })), [201], 'multipart'));
  }
  result['message, multipart with 3 images'] = await summarizeMeasurements(multi);

  // Deliveries: one reply per conversation, so each one is claimable at once.
  const conversations = await newDeliveries(integration, await newConversations(integration, 2 * n), 1);
  const deliveryIds = conversations.map((c) => c.deliveryIds[0]);
  const ok = [];
  const claims = [];
  for (const deliveryId of deliveryIds) {
    const body = { deliveryId, requestId: randomUUID() };
    claims.push(await expectStatus(() => op('claim', body), [200], 'claim'));
  }
  const leases = claims.map((c) => c.value.body.leaseId);
  for (const [i, deliveryId] of deliveryIds.entries()) ok.push(await expectStatus(() => op('start', { deliveryId, leaseId: leases[i] }), [200], 'start'));
  const half = deliveryIds.slice(0, n);
  const extend = [];
  for (const [i, deliveryId] of half.entries()) extend.push(await expectStatus(() => op('extend', { deliveryId, leaseId: leases[i] }), [200], 'extend'));
  // The attachment fetch's Firestore part: the delivery read and its lease checked (a reply without
  // files, so the answer is 404 attachment_not_found once the lease is found live; no file is read).
  const attachment = [];
  for (const [i, deliveryId] of half.entries()) attachment.push(await expectStatus(() => op('attachment', { deliveryId, leaseId: leases[i], attachmentId: 'a_none' }), [404], 'attachment'));
  const complete = [];
  for (const [i, deliveryId] of half.entries()) complete.push(await expectStatus(() => op('complete', { deliveryId, leaseId: leases[i], providerMessageIds: [`p-${i}`] }), [200], 'complete'));
  const receipt = [];
  for (const deliveryId of half) receipt.push(await expectStatus(() => op('receipt', { deliveryId, status: 'delivered' }), [200], 'receipt'));
  const failRetry = [];
  const failFailed = [];
  for (const [j, deliveryId] of deliveryIds.slice(n).entries()) {
    const leaseId = leases[n + j];
    const outcome = j % 2 === 0 ? 'retry' : 'failed';
    const m = await expectStatus(() => op('fail', { deliveryId, leaseId, outcome, code: 'provider_rejected' }), [200], 'fail');
    (outcome === 'retry' ? failRetry : failFailed).push(m);
  }
  result.claim = await summarizeMeasurements(claims);
  result.start = await summarizeMeasurements(ok);
  result.extend = await summarizeMeasurements(extend);
  result['attachment (lease check)'] = await summarizeMeasurements(attachment);
  result.complete = await summarizeMeasurements(complete);
  result.receipt = await summarizeMeasurements(receipt);
  result['fail (retry)'] = await summarizeMeasurements(failRetry);
  result['fail (failed)'] = await summarizeMeasurements(failFailed);
  return result;
}

// ------------------------------------------------------------------------------------ scale

/** claim + start + complete of one delivery, counted; returns the per-delivery totals. */
async function deliverCounted(key, deliveryId) {
  const total = { ms: 0, opMs: [], patterns: [], counts: Object.fromEntries(COUNT_FIELDS.map((f) => [f, 0])) };
  const add = (m) => {
    total.ms += m.ms;
    total.opMs.push(m.ms);
    total.patterns.push(m.pattern);
    for (const f of COUNT_FIELDS) total.counts[f] += m.counts[f];
    return m.value.body;
  };
  const claimBody = { deliveryId, requestId: randomUUID() };
  const claim = add(await expectStatus(() => measure(() => call(HANDLERS.claim, { key, body: claimBody })), [200], 'claim'));
  if (claim.status !== 'ready') throw new Error(`claim: ${JSON.stringify(claim)}`);
  add(await expectStatus(() => measure(() => call(HANDLERS.start, { key, body: { deliveryId, leaseId: claim.leaseId } })), [200], 'start'));
  add(await expectStatus(() => measure(() => call(HANDLERS.complete, { key, body: { deliveryId, leaseId: claim.leaseId, providerMessageIds: ['p-1'] } })), [200], 'complete'));
  return total;
}

/**
 * One workspace per size (10, 100, 1,000 conversations, 3 deliveries each), built up front; then
 * the same number of deliveries is delivered in each, interleaved round by round (the order
 * rotating), so a slow moment of the machine hits every size alike. Ratios are paired by round.
 */
async function scale() {
  const sizes = pick([10, 100, 1000], [10, 100]);
  const perConversation = 3;
  const sampleConversations = 10; // x 3 deliveries = 30 deliveries measured per size
  const workspaces = [];
  for (const size of sizes) {
    const t0 = performance.now();
    const integration = await newIntegration(TOPIC);
    const conversations = await bulkDeliveries(integration, size, perConversation);
    // Spread the sample over the whole workspace.
    const step = Math.floor(size / sampleConversations);
    workspaces.push({ size, integration, sample: conversations.filter((_, i) => i % step === 0).slice(0, sampleConversations), perDelivery: [] });
    log(`scale: workspace of ${size} conversations ready (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
  }
  // Warm-up in a workspace of its own (JIT, channels), and each workspace's key cache.
  const warm = await newIntegration(TOPIC);
  for (const c of await bulkDeliveries(warm, 5, 2)) for (const id of c.deliveryIds) await deliverCounted(warm.key, id);
  for (const w of workspaces) await callOk(incomingMessages, { key: w.integration.key, body: messageBody('warm-up') });

  let round = 0;
  for (let seq = 0; seq < perConversation; seq++) {
    for (let i = 0; i < sampleConversations; i++, round++) {
      for (let k = 0; k < workspaces.length; k++) {
        const w = workspaces[(round + k) % workspaces.length];
        w.perDelivery.push(await deliverCounted(w.integration.key, w.sample[i].deliveryIds[seq]));
        // The claim's ordering read alone (the queue document by id, no transaction, no
        // handler): if anything grew with the workspace, this separates Firestore from the service.
        const t0 = performance.now();
        await queueDocument(w.integration, w.sample[i].conversationId).get();
        (w.queryMs ??= []).push(performance.now() - t0);
        // The same three transactions (same reads and writes, same documents) replayed directly,
        // in order, so the delivery ends as it was: how much the emulator itself slows down as the
        // workspace grows, for exactly this work.
        // The same three transactions in the shape they had before one read wave (instrument.mjs
        // `oldShape`: 3 + 2 + 4 round trips): the baseline of "ms per delivery, new / before".
        // The two replays take turns going first.
        const patterns = w.perDelivery[w.perDelivery.length - 1].patterns;
        const timed = async (shape) => {
          const t = performance.now();
          for (const pattern of patterns) await retrying(() => replay(db(), shape(pattern)));
          return performance.now() - t;
        };
        const asIs = (pattern) => pattern;
        let directMs;
        let oldShapeMs;
        if (round % 2 === 0) {
          directMs = await timed(asIs);
          oldShapeMs = await timed(oldShape);
        } else {
          oldShapeMs = await timed(oldShape);
          directMs = await timed(asIs);
        }
        (w.directMs ??= []).push(directMs);
        (w.oldShapeMs ??= []).push(oldShapeMs);
        // Its round trips: each read wave and the commit, of each of the three transactions.
        (w.oldShapeRoundTrips ??= []).push(patterns.reduce((n, p) => n + oldShape(p).waves.length + 1, 0));
      }
    }
  }
  const base = workspaces[0].perDelivery;
  const result = [];
  for (const w of workspaces) {
    const totalDeliveries = (await db().collection('workspaces').doc(w.integration.workspaceId).collection('deliveries').count().get()).data().count;
    result.push({
      conversations: w.size,
      deliveriesInWorkspace: totalDeliveries,
      measuredDeliveries: w.perDelivery.length,
      ms: summarize(w.perDelivery.map((d) => d.ms)),
      // Paired by round: this size's delivery against the smallest workspace's in the same round.
      timeRatio: summarize(w.perDelivery.map((d, i) => d.ms / base[i].ms)),
      // Per operation (claim, start, complete): which one grows, if any.
      opTimeRatio: Object.fromEntries(['claim', 'start', 'complete'].map((op, j) => [op, summarize(w.perDelivery.map((d, i) => d.opMs[j] / base[i].opMs[j]))])),
      queryOnlyMs: summarize(w.queryMs),
      queryOnlyRatio: summarize(w.queryMs.map((q, i) => q / workspaces[0].queryMs[i])),
      directMs: summarize(w.directMs),
      directRatio: summarize(w.directMs.map((d, i) => d / workspaces[0].directMs[i])),
      // Paired by delivery: the handlers in-process (new) / their transactions replayed in the old shape.
      oldShapeMs: summarize(w.oldShapeMs),
      toOldShape: summarize(w.perDelivery.map((d, i) => d.ms / w.oldShapeMs[i])),
      // The floor of that figure on this emulator: the same transactions, new shape / old shape, both
      // replayed directly (no handler), paired by delivery: what fewer round trips alone buy.
      directToOldShape: summarize(w.directMs.map((d, i) => d / w.oldShapeMs[i])),
      oldShapeRoundTrips: summarize(w.oldShapeRoundTrips),
      oldShapePattern: w.perDelivery[0].patterns.map((p) => describePattern(oldShape(p))),
      counts: Object.fromEntries(COUNT_FIELDS.map((f) => [f, summarize(w.perDelivery.map((d) => d.counts[f]))])),
      // Deliveries whose claim found the key cache expired (TTL 20 s) and looked the key up again.
      keyCacheRefreshes: w.perDelivery.filter((d) => d.counts.docsReadOutsideTx > 0).length,
    });
  }
  return result;
}

// ------------------------------------------------------------------------------------ pending

/** The catch-up list's cost as finished deliveries pile up: 10 conversations, each with one claimable delivery. */
async function pending() {
  const sizes = [10, pick(1000, 200)];
  const lists = [];
  for (const finished of sizes) {
    const integration = await newIntegration(TOPIC);
    await bulkFinishedThenPending(integration, 10, finished);
    lists.push({ finished, integration, ms: [], queryMs: [], counts: [] });
  }
  const list = async (w) => {
    const m = await measure(() => callOk(listPendingDeliveries, { key: w.integration.key, body: { limit: 10 } }, [200]));
    if (m.value.deliveries.length !== 10) throw new Error(`pending listed ${m.value.deliveries.length} of 10`);
    return m;
  };
  for (const w of lists) for (let i = 0; i < 5; i++) await list(w); // warm-up, key caches
  for (let round = 0; round < pick(30, 10); round++) {
    for (let k = 0; k < lists.length; k++) {
      const w = lists[(round + k) % lists.length];
      const m = await list(w);
      w.ms.push(m.ms);
      w.counts.push(m.counts.docsRead);
      // The same Firestore query alone: the emulator scans a collection for a query where
      // production reads an index range, so this shows how much of any growth is the emulator's.
      const t0 = performance.now();
      await pendingQuery(w.integration, 10);
      w.queryMs.push(performance.now() - t0);
    }
  }
  const base = lists[0];
  return lists.map((w) => ({
    finishedPerConversation: w.finished,
    ms: summarize(w.ms),
    timeRatio: summarize(w.ms.map((v, i) => v / base.ms[i])),
    queryMs: summarize(w.queryMs),
    queryRatio: summarize(w.queryMs.map((v, i) => v / base.queryMs[i])),
    docsRead: summarize(w.counts),
  }));
}

// ------------------------------------------------------------------------------------ multipart

/**
 * Each repetition in a fresh process (multipart-once.mjs): the allocator then has no freed memory
 * of earlier repetitions to hand out again, so the peak RSS shows what the request really needs.
 */
async function multipart() {
  const reps = pick(5, 3);
  const integration = await newIntegration();
  const rows = [];
  for (let rep = 0; rep < reps; rep++) {
    const out = join(BENCH_DIR, `multipart-${rep}.json`);
    const r = spawnSync(process.execPath, ['--expose-gc', join(dirname(fileURLToPath(import.meta.url)), 'multipart-once.mjs'), integration.key, out], {
      env: process.env,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    if (r.status !== 0) throw new Error(`multipart repetition ${rep + 1} failed (exit ${r.status ?? r.signal})`);
    const row = JSON.parse(readFileSync(out, 'utf8'));
    rows.push(row);
    log(`multipart rep ${rep + 1}/${reps}: ${row.handlerCpuMs.toFixed(0)} ms CPU (${row.cpuRatio.toFixed(2)}x SHA-256), peak +${(row.peakExtraRssBytes / 1e6).toFixed(1)} MB RSS, +${(row.peakExtraArrayBuffersBytes / 1e6).toFixed(1)} MB arrayBuffers`);
  }
  const fields = Object.keys(rows[0]).filter((f) => typeof rows[0][f] === 'number' && f !== 'requestBytes');
  return {
    requestBytes: median(rows.map((r) => r.requestBytes)),
    images: 3,
    ...Object.fromEntries(fields.map((f) => [f, summarize(rows.map((r) => r[f]))])),
  };
}

// ------------------------------------------------------------------------------- console upload

/**
 * The console's upload handler (console-api/upload.ts), measured like the incoming multipart
 * message: each repetition in a fresh process (upload-once.mjs), a 10 MiB PDF for a conversation
 * of an integration with the attachments capability, uploaded by a member of the workspace.
 */
async function upload() {
  const reps = pick(5, 3);
  const integration = await newIntegration(TOPIC);
  await db().doc(`workspaces/${integration.workspaceId}/integrations/${integration.integrationId}`).update({ 'replies.attachments': { contentTypes: ['application/pdf'], maxBytes: 10 * 1024 * 1024, maxCount: 5 } });
  const [conversation] = await newConversations(integration, 1);
  const uid = 'bench-operator';
  await db().doc(`workspaces/${integration.workspaceId}/members/${uid}`).set({ role: 'operator' });
  const rows = [];
  for (let rep = 0; rep < reps; rep++) {
    const out = join(BENCH_DIR, `upload-${rep}.json`);
    const r = spawnSync(process.execPath, ['--expose-gc', join(dirname(fileURLToPath(import.meta.url)), 'upload-once.mjs'), integration.workspaceId, conversation.conversationId, uid, out], {
      env: process.env,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    if (r.status !== 0) throw new Error(`upload repetition ${rep + 1} failed (exit ${r.status ?? r.signal})`);
    const row = JSON.parse(readFileSync(out, 'utf8'));
    rows.push(row);
    log(`upload rep ${rep + 1}/${reps}: ${row.handlerCpuMs.toFixed(0)} ms CPU (${row.cpuRatio.toFixed(2)}x SHA-256), peak +${(row.peakExtraRssBytes / 1e6).toFixed(1)} MB RSS`);
  }
  const fields = Object.keys(rows[0]).filter((f) => typeof rows[0][f] === 'number' && f !== 'requestBytes');
  return {
    requestBytes: median(rows.map((r) => r.requestBytes)),
    ...Object.fromEntries(fields.map((f) => [f, summarize(rows.map((r) => r[f]))])),
  };
}

// ------------------------------------------------------------------------------------ main

// ------------------------------------------------------------------------------ txCosts

/**
 * The emulator's cost model for a transaction, against its smallest one (read one document, commit
 * nothing), on documents of a bench collection of their own: what one more sequential read wave,
 * one more document in a wave, and more written documents each add. It says what fewer round trips
 * can buy here when the documents written stay the same (docs/decisions.md, "Delivery: one read
 * wave"). The cases take turns going first, round by round.
 */
async function txCosts() {
  const n = pick(200, 60);
  const col = db().collection('benchTxCosts');
  const body = (i) => ({ seq: i, text: 'x'.repeat(200), lease: { leaseId: 'l'.repeat(30), expiresAt: Date.now() }, status: 'queued', attempts: 1 });
  const refs = (name) => Array.from({ length: n }, (_, i) => col.doc(`${name}-${i}`));
  const [a, b, c] = [refs('a'), refs('b'), refs('c')];
  const written = Array.from({ length: 5 }, (_, k) => refs(`w${k}`));
  const writer = db().bulkWriter();
  for (const ref of [...a, ...b, ...c, ...written.flat()]) void writer.set(ref, body(0));
  await writer.close();
  const writes = (tx, i, count) => {
    tx.set(a[i], body(i));
    for (let k = 0; k < count - 1; k++) tx.set(written[k][i], body(i));
  };
  const cases = {
    'read 1 -> commit 0': (i) => db().runTransaction(async (tx) => void (await tx.get(a[i]))),
    'read 1 -> commit 1': (i) => db().runTransaction(async (tx) => { await tx.get(a[i]); writes(tx, i, 1); }),
    'read 1 -> commit 3': (i) => db().runTransaction(async (tx) => { await tx.get(a[i]); writes(tx, i, 3); }),
    'read 1 -> commit 6': (i) => db().runTransaction(async (tx) => { await tx.get(a[i]); writes(tx, i, 6); }),
    'read 3 in one wave -> commit 1': (i) => db().runTransaction(async (tx) => { await tx.getAll(a[i], b[i], c[i]); writes(tx, i, 1); }),
    'read 1 -> read 2 -> commit 1': (i) => db().runTransaction(async (tx) => { await tx.get(a[i]); await tx.getAll(b[i], c[i]); writes(tx, i, 1); }),
  };
  const names = Object.keys(cases);
  const ms = Object.fromEntries(names.map((name) => [name, []]));
  for (let round = 0; round < 3; round++) {
    for (let i = 0; i < n; i++) {
      const offset = (i + round) % names.length;
      for (let j = 0; j < names.length; j++) {
        const name = names[(j + offset) % names.length];
        const t0 = performance.now();
        await retrying(() => cases[name](i));
        ms[name].push(performance.now() - t0);
      }
    }
  }
  const base = ms[names[0]];
  // Each case against the smallest one, paired by round and document.
  return Object.fromEntries(names.map((name) => [name, { ms: summarize(ms[name]), toBase: summarize(ms[name].map((t, k) => t / base[k])) }]));
}

await runSections('store', { counts, multipart, upload, scale, pending, txCosts }, { extra: () => ({ retried503 }), close: () => db().terminate() });
