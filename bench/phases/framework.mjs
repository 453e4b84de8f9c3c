/**
 * Phase `framework` (inside `firebase emulators:exec --only firestore`): multipart memory on the
 * production runtime.
 *
 * The `messages` function runs in Google's functions framework (scripts/lib/framework.mjs, the
 * pinned version, NODE_ENV=production), which buffers every request body before our handler
 * runs. N maximum-size uploads (3 PNGs of 6.9 MB, a request just under 21 MB) are sent at once
 * and the function process's peak RSS is read from the kernel (VmHWM of /proc/<pid>/status,
 * reset before each run). Reported: per-upload extra memory / request size (the slope of peak RSS
 * over N), and peak RSS at the configured concurrency / the configured memory limit (goal <= 0.8),
 * both read from the built function's own options (`__endpoint`), so the figure always checks
 * what is deployed.
 *
 * Then the same for the attachment fetch (`getDeliveryAttachment`): N fetches at once of
 * maximum-size files (10 MiB, a different stored file per delivery, each under its own live
 * lease) for N = 1, 2, 4, 8 and its configured concurrency; peak RSS at the concurrency / its
 * memory limit (goal <= 0.8), every fetch 200 with the whole file.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ROOT, buildFunctions } from '../../scripts/lib/emulators.mjs';
import { startFunction } from '../../scripts/lib/framework.mjs';
import { multipartMessage, png } from '../lib/images.mjs';
import { BENCH_DIR } from '../lib/stack-config.mjs';
import { QUICK, log, runSections } from '../lib/session.mjs';
import { attachmentDeliveries, callOk, HANDLERS, newIntegration } from '../lib/service.mjs';
import { startStoreServer } from '../lib/store-http.mjs';
import { performance } from 'node:perf_hooks';

const require = createRequire(import.meta.url);
const EACH_IMAGE = 6_900_000;
const PORT = 5290;
const MB = 1024 * 1024;

const status = (pid) => readFileSync(`/proc/${pid}/status`, 'utf8');
const kb = (text, field) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(text)?.[1] ?? NaN) * 1024;
const resetPeak = (pid) => writeFileSync(`/proc/${pid}/clear_refs`, '5');

buildFunctions();
const lib = join(ROOT, 'functions', 'lib');
// The options the deploy uses, as firebase-functions records them on the exported function.
const endpoint = require(join(lib, 'index.js')).messages.__endpoint;
const limitBytes = endpoint.availableMemoryMb * MB;
const concurrency = endpoint.concurrency;
const { createIntegration } = require(join(lib, 'integrations', 'admin.js'));
const { db } = require(join(lib, 'platform', 'firebase.js'));
const { key } = await createIntegration(db(), { workspaceId: `ws-bench-${randomUUID().slice(0, 8)}`, name: 'bench framework', createdBy: 'bench', keyPrefix: 'sdk_test_' });

const fn = await startFunction({
  target: 'messages',
  port: PORT,
  env: { IMAGE_STORE: 'local', LOCAL_IMAGE_DIR: join(BENCH_DIR, 'framework-images'), MESSAGES_PER_MINUTE_DEFAULT: '1000000' },
  logFile: join(BENCH_DIR, 'framework-messages.log'),
});

// Each upload in its own conversation, as separate customers would send them (uploads to one
// conversation contend for its document; that is not what this measures).
const conversation = () => `chat-mem-${randomUUID().slice(0, 8)}`;
const bigMessage = () => multipartMessage(conversation(), [png(4000, 3000, EACH_IMAGE), png(3000, 4000, EACH_IMAGE), png(4096, 4096, EACH_IMAGE)]);
// One connection per upload (no keep-alive): a pooled connection the server closed while idle
// between runs would fail the next upload with EPIPE, which is the client's problem, not the function's.
const post = ({ body, contentType }) =>
  new Promise((resolve) => {
    const req = http.request(`${fn.url}/`, { method: 'POST', agent: false, headers: { authorization: `Bearer ${key}`, 'content-type': contentType, 'content-length': body.length } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('error', (err) => resolve(`transport error: ${err.code ?? err.message}`));
    req.end(body);
  });

/** Least-squares slope of `ys` over `xs`. */
function slopeOf(xs, ys) {
  const mean = (v) => v.reduce((a, b) => a + b, 0) / v.length;
  const mx = mean(xs);
  const my = mean(ys);
  return xs.reduce((acc, x, i) => acc + (x - mx) * (ys[i] - my), 0) / xs.reduce((acc, x) => acc + (x - mx) ** 2, 0);
}

/** N uploads at once; the function process's peak RSS (kernel high-water mark) while they run. */
async function uploadsAtOnce(n) {
  const bodies = Array.from({ length: n }, bigMessage);
  await sleep(500);
  const baseline = kb(status(fn.pid), 'VmRSS');
  resetPeak(fn.pid);
  const statuses = await Promise.all(bodies.map(post));
  const peak = kb(status(fn.pid), 'VmHWM');
  const ok = statuses.filter((s) => s === 201).length;
  log(`framework: ${n} uploads at once: ${ok}/${n} accepted, peak RSS ${(peak / MB).toFixed(0)} MiB (idle before: ${(baseline / MB).toFixed(0)} MiB)`);
  return { n, accepted: ok, statuses, baselineRssBytes: baseline, peakRssBytes: peak };
}

await runSections(
  'framework',
  {
    multipartMemory: async () => {
      // Warm-up: code paths, key cache, Firestore channel, image directory.
      await post(multipartMessage(conversation(), [png(10, 10)]));
      await post(bigMessage());
      await sleep(1_000);
      const idleRssBytes = kb(status(fn.pid), 'VmRSS');
      const requestBytes = bigMessage().body.length;
      const counts = [...new Set([1, 2, 4, ...(QUICK ? [] : [8]), concurrency])].sort((a, b) => a - b);
      const runs = [];
      for (const n of counts) runs.push(await uploadsAtOnce(n));
      // Least-squares slope of peak RSS over N: what each upload in flight adds.
      const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
      const xs = runs.map((r) => r.n);
      const ys = runs.map((r) => r.peakRssBytes);
      const mx = mean(xs);
      const my = mean(ys);
      const slope = xs.reduce((acc, x, i) => acc + (x - mx) * (ys[i] - my), 0) / xs.reduce((acc, x) => acc + (x - mx) ** 2, 0);
      const atConcurrency = runs.find((r) => r.n === concurrency);
      return {
        memoryLimitBytes: limitBytes,
        memory: `${endpoint.availableMemoryMb} MiB`,
        concurrency,
        maxInstances: endpoint.maxInstances ?? null,
        requestBytes,
        idleRssBytes,
        perUploadExtraBytes: slope,
        perUploadExtraRatio: slope / requestBytes,
        peakAtConcurrencyBytes: atConcurrency.peakRssBytes,
        peakToLimitRatio: atConcurrency.peakRssBytes / limitBytes,
        allAccepted: runs.every((r) => r.accepted === r.n),
        runs,
        nodeHeap: 'node defaults (no --max-old-space-size); request bodies are Buffers, outside the V8 heap',
      };
    },
    attachmentMemory: async () => {
      const SIZE = 10 * 1024 * 1024;
      const options = require(join(lib, 'index.js')).getDeliveryAttachment.__endpoint;
      const limit = options.availableMemoryMb * MB;
      const atOnce = options.concurrency;
      const storeDir = join(BENCH_DIR, 'framework-attachments');
      const integration = await newIntegration('projects/demo-support-desk/topics/bench-framework-attachments');
      // A different file per delivery (as separate replies would have), each under its own lease.
      const deliveries = await attachmentDeliveries(integration, atOnce, { size: SIZE, storeDir, distinct: true });
      const leases = [];
      for (const d of deliveries) {
        const claim = await callOk(HANDLERS.claim, { key: integration.key, body: { deliveryId: d.deliveryId, requestId: randomUUID() } });
        if (claim.status !== 'ready' || claim.message.attachments?.length !== 1) throw new Error(`attachment claim: ${JSON.stringify(claim)}`);
        leases.push({ deliveryId: d.deliveryId, leaseId: claim.leaseId, attachmentId: claim.message.attachments[0].attachmentId });
      }
      const att = await startFunction({
        target: 'getDeliveryAttachment',
        port: PORT + 1,
        env: { IMAGE_STORE: 'local', LOCAL_IMAGE_DIR: storeDir },
        logFile: join(BENCH_DIR, 'framework-attachment.log'),
      });
      try {
        const fetchOne = (lease) =>
          new Promise((resolve) => {
            const body = Buffer.from(JSON.stringify(lease));
            const req = http.request(`${att.url}/`, { method: 'POST', agent: false, headers: { authorization: `Bearer ${integration.key}`, 'content-type': 'application/json', 'content-length': body.length } }, (res) => {
              let bytes = 0;
              res.on('data', (chunk) => {
                bytes += chunk.length;
              });
              res.on('end', () => resolve(res.statusCode === 200 && bytes === SIZE ? 200 : `${res.statusCode}, ${bytes} bytes`));
            });
            req.on('error', (err) => resolve(`transport error: ${err.code ?? err.message}`));
            req.end(body);
          });
        // Warm-up: code paths, key cache, Firestore channel.
        for (const lease of leases.slice(0, 2)) await fetchOne(lease);
        await sleep(1_000);
        const idleRssBytes = kb(status(att.pid), 'VmRSS');
        const counts = [...new Set([1, 2, 4, ...(QUICK ? [] : [8]), atOnce])].sort((a, b) => a - b);
        const runs = [];
        for (const n of counts) {
          await sleep(500);
          resetPeak(att.pid);
          const statuses = await Promise.all(leases.slice(0, n).map(fetchOne));
          const peak = kb(status(att.pid), 'VmHWM');
          const ok = statuses.filter((s) => s === 200).length;
          log(`framework: ${n} attachment fetches at once: ${ok}/${n} complete, peak RSS ${(peak / MB).toFixed(0)} MiB`);
          runs.push({ n, ok, statuses, peakRssBytes: peak });
        }
        // Without the emulators' proxies: one fetch at a time from the function on the framework
        // against the same object read directly from the store over HTTP, alternating (as 4c).
        const server = await startStoreServer(storeDir);
        const timing = { fetch: [], direct: [] };
        try {
          const download = async (url, init) => {
            const t0 = performance.now();
            const res = await fetch(url, init);
            const bytes = (await res.arrayBuffer()).byteLength;
            if (res.status !== 200 || bytes !== SIZE) throw new Error(`attachment timing: HTTP ${res.status}, ${bytes} bytes`);
            return performance.now() - t0;
          };
          const fetchIt = () => download(`${att.url}/`, { method: 'POST', headers: { authorization: `Bearer ${integration.key}`, 'content-type': 'application/json' }, body: JSON.stringify(leases[0]) });
          const directIt = () => download(server.urlOf(deliveries[0].path));
          await fetchIt();
          await directIt();
          for (let i = 0; i < (QUICK ? 10 : 30); i++) {
            if (i % 2 === 0) {
              timing.fetch.push(await fetchIt());
              timing.direct.push(await directIt());
            } else {
              timing.direct.push(await directIt());
              timing.fetch.push(await fetchIt());
            }
          }
        } finally {
          server.stop();
        }
        const median = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
        const slope = slopeOf(runs.map((r) => r.n), runs.map((r) => r.peakRssBytes));
        const atConcurrency = runs.find((r) => r.n === atOnce);
        return {
          memoryLimitBytes: limit,
          memory: `${options.availableMemoryMb} MiB`,
          concurrency: atOnce,
          fileBytes: SIZE,
          idleRssBytes,
          perFetchExtraBytes: slope,
          perFetchExtraRatio: slope / SIZE,
          peakAtConcurrencyBytes: atConcurrency.peakRssBytes,
          peakToLimitRatio: atConcurrency.peakRssBytes / limit,
          allComplete: runs.every((r) => r.ok === r.n),
          runs,
          fetchMs: median(timing.fetch),
          directMs: median(timing.direct),
          fetchToDirect: median(timing.fetch) / median(timing.direct),
          pairedFetchToDirect: timing.fetch.map((f, i) => f / timing.direct[i]),
        };
      } finally {
        await att.stop();
      }
    },
  },
  {
    close: async () => {
      await fn.stop();
      await db().terminate();
    },
  },
);
