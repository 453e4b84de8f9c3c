#!/usr/bin/env node
/**
 * `npm run smoke -- --base URL [--fallback URL] [--key K]`: a short, safe conformance pass against
 * any deployment (production right after a deploy, or the local stack), printed as a table.
 *
 * Checks (each on the base host; the first three on the fallback host too):
 *   message      a new JSON message                       -> 201 with ids, duplicate false
 *   duplicate    the same request again                   -> 200, duplicate true, the same ids
 *   malformed    malformed JSON                           -> 400 invalid_json envelope
 *   upload       a maximum-size multipart (3 PNGs, ~21 MB) -> 201
 *   unknown      claim of a delivery that does not exist  -> 404 delivery_not_found envelope
 * Every response must carry X-Request-Id. 429/503 are retried after Retry-After (capped), a request
 * that got no answer after a second (3 tries in all).
 *
 * Safe for production: one dedicated integration (its key), one fixed conversation, and images
 * whose bytes are deterministic: content-addressed storage keeps one copy however often it runs.
 * The key comes from SMOKE_INTEGRATION_KEY (preferred: never in a process list or a CI log) or
 * --key; only its non-secret prefix is printed. No packages: Node 22 built-ins and scripts/lib/png.mjs.
 * Exit codes: 0 all passed, 1 a check failed, 2 bad arguments.
 */
import { createHash, randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { PNG_OVERHEAD_BYTES, pngWithData } from './lib/png.mjs';

const USAGE = 'usage: npm run smoke -- --base URL [--fallback URL] [--key K]   (or the key in SMOKE_INTEGRATION_KEY)';
const MAX_MULTIPART = 21 * 1024 * 1024;
const MAX_IMAGE = 10 * 1024 * 1024;
const MAX_IMAGES_TOTAL = 20 * 1024 * 1024;
const RETRY_AFTER_CAP_S = 10;
const ATTEMPTS = 3;

function parseArgs(argv) {
  const options = {};
  for (let i = 0; i < argv.length; i++) {
    const [name, inline] = argv[i].split('=', 2);
    const value = inline ?? argv[++i];
    if (!['--base', '--fallback', '--key'].includes(name) || value === undefined) return null;
    options[name.slice(2)] = value.replace(/\/+$/, '');
  }
  return options;
}

const options = parseArgs(process.argv.slice(2));
const key = process.env.SMOKE_INTEGRATION_KEY || options?.key;
if (!options?.base || !key) {
  console.error(USAGE);
  process.exit(2);
}
for (const url of [options.base, options.fallback].filter(Boolean)) {
  if (!/^https?:\/\/[^/]+/.test(url)) {
    console.error(`not an http(s) URL: ${url}\n${USAGE}`);
    process.exit(2);
  }
}

// ------------------------------------------------------------------------------------ images

/** `length` deterministic bytes: SHA-256 in counter mode over a seed. */
function deterministicBytes(seed, length) {
  const out = Buffer.alloc(length);
  for (let offset = 0, counter = 0; offset < length; counter++) {
    offset += createHash('sha256').update(`${seed}:${counter}`).digest().copy(out, offset);
  }
  return out;
}

/** A structurally valid PNG of exactly `bytes` bytes claiming 4000 x 3000 pixels. */
const png = (seed, bytes) => pngWithData(4000, 3000, deterministicBytes(seed, bytes - PNG_OVERHEAD_BYTES));

function multipart(payload, images) {
  const boundary = `smoke-${randomUUID()}`;
  const parts = [Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="payload"\r\nContent-Type: application/json\r\n\r\n${JSON.stringify(payload)}\r\n`)];
  images.forEach((data, i) => {
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="images"; filename="smoke-${i}.png"\r\nContent-Type: image/png\r\n\r\n`), data, Buffer.from('\r\n'));
  });
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** Payload + 3 images, the request just under 21 MB and the images within their limits. */
function maximumUpload(payload) {
  const overhead = multipart(payload, [Buffer.alloc(0), Buffer.alloc(0), Buffer.alloc(0)]).body.length;
  const each = Math.min(MAX_IMAGE, Math.floor(MAX_IMAGES_TOTAL / 3), Math.floor((MAX_MULTIPART - overhead - 1024) / 3));
  return multipart(payload, [0, 1, 2].map((i) => png(`support-desk-smoke-image-${i}`, each)));
}

// ------------------------------------------------------------------------------------ checks

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** POSTs and reads the answer; retries 429/503 after Retry-After (capped), and no answer after a second. */
async function post(base, path, body, contentType) {
  let notes = '';
  for (let attempt = 1; ; attempt++) {
    const started = performance.now();
    let res;
    try {
      res = await fetch(`${base}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': contentType }, body });
    } catch (err) {
      const failure = `transport error: ${err.cause?.code ?? err.message}`;
      // No answer (a connection cut mid-upload): sent again, as a connector would; every request
      // here is safe to repeat (the same eventId, deterministic images). A deployment that cuts
      // every attempt still fails the check.
      if (attempt < ATTEMPTS) {
        notes += ` (retried after ${failure})`;
        await sleep(1000);
        continue;
      }
      return { status: 0, headers: new globalThis.Headers(), json: undefined, text: failure, ms: performance.now() - started, notes };
    }
    const text = await res.text();
    let json;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    const result = { status: res.status, headers: res.headers, json, text, ms: performance.now() - started, notes };
    if ((res.status !== 429 && res.status !== 503) || attempt >= ATTEMPTS) return result;
    const wait = Math.min(RETRY_AFTER_CAP_S, Number(res.headers.get('retry-after')) || 1);
    notes += ` (retried after ${res.status}, ${wait} s)`;
    await sleep(wait * 1000);
  }
}

const isEnvelope = (json, code) =>
  json !== null && typeof json === 'object' && Object.keys(json).join() === 'error' && json.error?.code === code && (json.error.message === undefined || typeof json.error.message === 'string');

function verdict(res, status, extra = () => null) {
  if (res.status !== status) return `expected ${status}`;
  if (!res.headers.get('x-request-id')) return 'no X-Request-Id';
  return extra();
}

const got = (res) => `${res.status}${res.json?.error?.code ? ` ${res.json.error.code}` : ''}`;
const rows = [];
function record(check, host, expected, res, problem) {
  rows.push({ check, host, expected, got: got(res) + res.notes, ms: Math.round(res.ms), ok: problem === null, problem });
}

const newMessage = () => ({
  eventId: `smoke-${new Date().toISOString()}-${randomUUID().slice(0, 8)}`,
  externalConversationId: 'smoke-conversation',
  sender: { externalId: 'smoke-sender', displayName: 'Smoke test', kind: 'customer' },
  message: { text: 'Smoke test after deploy: please ignore.' },
});

async function messageChecks(base) {
  const message = JSON.stringify(newMessage());
  const first = await post(base, '/v1/messages', message, 'application/json');
  const ids = first.json;
  record('message', base, '201 new', first, verdict(first, 201, () => (typeof ids?.conversationId === 'string' && typeof ids?.messageId === 'string' && ids.duplicate === false ? null : 'unexpected body')));
  const again = await post(base, '/v1/messages', message, 'application/json');
  record('duplicate', base, '200 duplicate', again, verdict(again, 200, () =>
    again.json?.duplicate === true && again.json.conversationId === ids?.conversationId && again.json.messageId === ids?.messageId ? null : 'not the same ids with duplicate: true'));
  const malformed = await post(base, '/v1/messages', '{"eventId":', 'application/json');
  record('malformed', base, '400 invalid_json', malformed, verdict(malformed, 400, () =>
    (malformed.headers.get('content-type') ?? '').startsWith('application/json') && isEnvelope(malformed.json, 'invalid_json') ? null : 'not the JSON error envelope'));
}

async function baseOnlyChecks(base) {
  const { body, contentType } = maximumUpload(newMessage());
  const upload = await post(base, '/v1/messages', body, contentType);
  record(`upload ${(body.length / 1024 / 1024).toFixed(1)} MiB`, base, '201 new', upload, verdict(upload, 201));
  const unknown = await post(base, '/v1/deliveries/claim', JSON.stringify({ deliveryId: `smoke-unknown-${randomUUID()}`, requestId: randomUUID() }), 'application/json');
  record('unknown delivery', base, '404 delivery_not_found', unknown, verdict(unknown, 404, () => (isEnvelope(unknown.json, 'delivery_not_found') ? null : 'not the JSON error envelope')));
}

console.log(`smoke: key ${key.slice(0, 13)}…, base ${options.base}${options.fallback ? `, fallback ${options.fallback}` : ''}`);
await messageChecks(options.base);
await baseOnlyChecks(options.base);
if (options.fallback) await messageChecks(options.fallback);

const columns = [['check', 'check'], ['host', 'host'], ['expected', 'expected'], ['got', 'got'], ['ms', 'ms']];
const cell = (row, field) => String(row[field]);
const widths = columns.map(([field, title]) => Math.max(title.length, ...rows.map((r) => cell(r, field).length)));
const line = (values) => values.map((v, i) => v.padEnd(widths[i])).join('  ');
console.log(`\n${line(columns.map(([, title]) => title))}  ok`);
console.log(`${line(widths.map((w) => '-'.repeat(w)))}  --`);
for (const row of rows) console.log(`${line(columns.map(([field]) => cell(row, field)))}  ${row.ok ? '✓' : `✗ ${row.problem}`}`);
const failed = rows.filter((r) => !r.ok).length;
console.log(`\nsmoke: ${rows.length - failed} passed, ${failed} failed`);
process.exit(failed > 0 ? 1 : 0);
