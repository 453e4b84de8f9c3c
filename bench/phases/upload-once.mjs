/**
 * One repetition of the console upload measurement, in a fresh process (started by store.mjs inside
 * the Firestore emulator session, like multipart-once.mjs):
 * `node --expose-gc upload-once.mjs <workspaceId> <conversationId> <uid> <out.json>`.
 *
 * A `POST /console/v1/attachments` with one PDF of 10 MiB less one byte (see FILE_BYTES) is
 * handled in-process by the upload handler (console-api/upload.ts `receiveUpload`: multipart
 * parse, membership, the conversation's capability, sniffing, SHA-256, the upload record, the
 * object written to the local store). The ID token check in front of it (console-api/http.ts) is
 * the Auth emulator's work and is not part of this figure. CPU time (process.cpuUsage, all
 * threads) against one SHA-256 pass over the same bytes, the floor; peak extra RSS (VmHWM, reset
 * just before the call) against the request size. The request body exists before the call, as
 * the runtime buffers it, and is not counted.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { FUNCTIONS_LIB } from '../lib/build.mjs';
import { db } from '../lib/service.mjs';
import { sleep } from '../lib/stats.mjs';

const require = createRequire(import.meta.url);
const { receiveUpload } = require(join(FUNCTIONS_LIB, 'console-api', 'upload.js'));
const { parseUploadBody } = require(join(FUNCTIONS_LIB, 'console-api', 'multipart.js'));
const { sniffAttachmentType } = require(join(FUNCTIONS_LIB, 'deliveries', 'sniff.js'));
const { Deadline } = require(join(FUNCTIONS_LIB, 'platform', 'http', 'deadline.js'));
const [workspaceId, conversationId, uid, out] = process.argv.slice(2);
// One byte under 10 MiB: busboy reports a file that reaches its `fileSize` limit exactly as
// truncated, and console-api/multipart.ts sets that limit to the maximum itself, so a file of
// exactly 10 MiB is refused 413 there (messages/multipart.ts sets maximum + 1). The figure is per MB.
const FILE_BYTES = 10 * 1024 * 1024 - 1;
const cpuMs = (usage) => (usage.user + usage.system) / 1000;
const peakRssBytes = () => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? NaN) * 1024;
const resetPeakRss = () => writeFileSync('/proc/self/clear_refs', '5');

/** The console's multipart body: the two text fields, then the file. */
function uploadBody(bytes) {
  const boundary = `----bench${randomBytes(8).toString('hex')}`;
  const field = (name, value) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
  const head = `${field('workspaceId', workspaceId)}${field('conversationId', conversationId)}--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="invoice.pdf"\r\nContent-Type: application/pdf\r\n\r\n`;
  return { body: Buffer.concat([Buffer.from(head), bytes, Buffer.from(`\r\n--${boundary}--\r\n`)]), contentType: `multipart/form-data; boundary=${boundary}` };
}

async function upload({ body, contentType }) {
  const headers = { 'content-type': contentType };
  const req = { method: 'POST', headers, rawBody: body, get: (name) => headers[name.toLowerCase()] };
  const result = await receiveUpload(req, { uid, deadline: new Deadline(Date.now() + 60_000), logFields: {} });
  if (result.status !== 201) throw new Error(`upload: ${result.status} ${JSON.stringify(result.body)}`);
  return result;
}

const pdf = (size) => Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(size - 9)]);
// Warm-up: code paths, the Firestore channel, the store's directory.
await upload(uploadBody(pdf(1024)));

const request = uploadBody(pdf(FILE_BYTES));
const mb = request.body.length / 1e6;
globalThis.gc?.();
await sleep(100);
const before = process.memoryUsage();
resetPeakRss();
const c0 = process.cpuUsage();
const t0 = performance.now();
await upload(request);
const wallMs = performance.now() - t0;
const handlerCpuMs = cpuMs(process.cpuUsage(c0));
const peakRss = peakRssBytes();

const cpuOf = async (fn) => {
  const c = process.cpuUsage();
  const value = await fn();
  return { ms: cpuMs(process.cpuUsage(c)), value };
};
// The floor: one SHA-256 pass over the same bytes (the service must hash every file anyway).
const shaCpuMs = (await cpuOf(() => createHash('sha256').update(request.body).digest())).ms;
// Where the handler's CPU goes, again on the same bytes: the multipart parser, then sniffing.
const parsed = await cpuOf(() => parseUploadBody(request.contentType, request.body));
const sniffCpuMs = (await cpuOf(() => sniffAttachmentType(parsed.value.file.bytes))).ms;

writeFileSync(
  out,
  JSON.stringify({
    requestBytes: request.body.length,
    handlerCpuMs,
    handlerCpuMsPerMB: handlerCpuMs / mb,
    sha256CpuMsPerMB: shaCpuMs / mb,
    cpuRatio: handlerCpuMs / shaCpuMs,
    multipartParseCpuRatio: parsed.ms / shaCpuMs,
    sniffCpuRatio: sniffCpuMs / shaCpuMs,
    wallMs,
    peakExtraRssBytes: Math.max(0, peakRss - before.rss),
    rssRatio: Math.max(0, peakRss - before.rss) / request.body.length,
  }),
);
await db().terminate();
process.exit(0);
