/**
 * One repetition of the multipart measurement, in a fresh process (started by store.mjs inside
 * the Firestore emulator session): `node --expose-gc multipart-once.mjs <integration key> <out.json>`.
 *
 * A POST /v1/messages with 3 images of 6.9 MB (20.7 MB request, under the 20 MiB image limit) is
 * handled in-process: CPU time (process.cpuUsage, all threads) against one SHA-256 pass over the
 * same bytes, and peak extra memory against the request size: RSS from the kernel's high-water
 * mark (VmHWM, reset just before the call), arrayBuffers sampled every millisecond and at the end.
 */
import { createHash, randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { clearInterval, setInterval } from 'node:timers';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { FUNCTIONS_LIB } from '../lib/build.mjs';
import { multipartMessage, png } from '../lib/images.mjs';
import { call, callOk, db, incomingMessages } from '../lib/service.mjs';
import { sleep } from '../lib/stats.mjs';

const require = createRequire(import.meta.url);
const { parseMultipart } = require(join(FUNCTIONS_LIB, 'messages', 'multipart.js'));
const { inspectImage } = require(join(FUNCTIONS_LIB, 'rules', 'images.js'));
const { withSha256 } = require(join(FUNCTIONS_LIB, 'messages', 'image-store.js'));
const [key, out] = process.argv.slice(2);
const EACH_IMAGE = 6_900_000;
const cpuMs = (usage) => (usage.user + usage.system) / 1000;
const peakRssBytes = () => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? NaN) * 1024;
const resetPeakRss = () => writeFileSync('/proc/self/clear_refs', '5');

const conversation = `chat-mp-${randomUUID().slice(0, 8)}`;
// Warm-up: code paths, key cache, Firestore channel, the image store directory.
const warm = multipartMessage(conversation, [png(10, 10), png(10, 10, 32), png(10, 10, 64)]);
await callOk(incomingMessages, { key, rawBody: warm.body, contentType: warm.contentType });

// The request body exists before the handler runs (the runtime buffered it): not counted as extra.
const { body, contentType } = multipartMessage(conversation, [png(4000, 3000, EACH_IMAGE), png(3000, 4000, EACH_IMAGE), png(4096, 4096, EACH_IMAGE)]);
const mb = body.length / 1e6;
globalThis.gc?.();
await sleep(100);
const before = process.memoryUsage();
let peakArrayBuffers = before.arrayBuffers;
const sample = () => {
  peakArrayBuffers = Math.max(peakArrayBuffers, process.memoryUsage().arrayBuffers);
};
const timer = setInterval(sample, 1);
resetPeakRss();
const c0 = process.cpuUsage();
const t0 = performance.now();
const res = await call(incomingMessages, { key, rawBody: body, contentType });
const wallMs = performance.now() - t0;
const handlerCpuMs = cpuMs(process.cpuUsage(c0));
sample();
clearInterval(timer);
const peakRss = peakRssBytes();
if (res.status !== 201) throw new Error(`multipart: ${res.status} ${JSON.stringify(res.body)}`);

// The floor: one SHA-256 pass over the same bytes (the service must hash every image anyway).
const cpuOf = async (fn) => {
  const c = process.cpuUsage();
  const value = await fn();
  return { ms: cpuMs(process.cpuUsage(c)), value };
};
const shaCpuMs = (await cpuOf(() => createHash('sha256').update(body).digest())).ms;
// Where the handler's CPU goes, again on the same bytes: the multipart parser and image inspection.
const parsed = await cpuOf(() => parseMultipart(contentType, body));
const inspectCpuMs = (await cpuOf(() => parsed.value.images.map((bytes, i) => withSha256(inspectImage(bytes, `images[${i}]`), bytes)))).ms;

writeFileSync(
  out,
  JSON.stringify({
    requestBytes: body.length,
    handlerCpuMs,
    handlerCpuMsPerMB: handlerCpuMs / mb,
    sha256CpuMsPerMB: shaCpuMs / mb,
    cpuRatio: handlerCpuMs / shaCpuMs,
    multipartParseCpuRatio: parsed.ms / shaCpuMs,
    inspectImagesCpuRatio: inspectCpuMs / shaCpuMs,
    wallMs,
    peakExtraRssBytes: Math.max(0, peakRss - before.rss),
    peakExtraArrayBuffersBytes: Math.max(0, peakArrayBuffers - before.arrayBuffers),
    rssRatio: Math.max(0, peakRss - before.rss) / body.length,
    arrayBuffersRatio: Math.max(0, peakArrayBuffers - before.arrayBuffers) / body.length,
  }),
);
await db().terminate();
process.exit(0);
