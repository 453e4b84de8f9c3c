/**
 * Phase "sdk" (no emulator): the SDK's per-call overhead and its installed size.
 *
 * - `client.deliveries.start(...)` against a hand-written `fetch` of the same request (same URL,
 *   headers and JSON body, response parsed), both against a tiny node:http server in another
 *   process answering a fixed JSON. Target <= 1.1x.
 * - `npm pack --dry-run --json` of the SDK package (sdk/ as built by the bench): unpacked size and file count, against the JavaScript
 *   that actually runs (dist/*.js).
 */
import { execFileSync, fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { SDK_DIR, SDK_ENTRY } from '../lib/build.mjs';
import { log, output, pick } from '../lib/session.mjs';
import { median, summarize } from '../lib/stats.mjs';
import { performance } from 'node:perf_hooks';

if (process.argv[2] === 'server') {
  // The server: fixed answer, as the service's start answers.
  const { createServer } = await import('node:http');
  const answer = Buffer.from(JSON.stringify({ status: 'sending' }));
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': answer.length, 'x-request-id': 'req_bench' });
      res.end(answer);
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => process.send(server.address().port));
} else {
  const { ConnectorClient } = await import(pathToFileURL(SDK_ENTRY).href);
  const server = fork(new URL(import.meta.url).pathname, ['server'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const port = await new Promise((resolve) => server.once('message', resolve));
  const baseUrl = `http://127.0.0.1:${port}`;
  const key = `sdk_test_${'A'.repeat(43)}`;
  const client = new ConnectorClient({ integrationKey: key, baseUrl });
  const input = { deliveryId: 'd_benchbenchbenchbenchbenchbench12', leaseId: 'l_benchbenchbenchbenchbench' };

  const viaSdk = async () => {
    const r = await client.deliveries.start(input);
    if (r.status !== 'sending') throw new Error('unexpected');
  };
  // What a connector author would write by hand for the same call.
  const viaFetch = async () => {
    const res = await fetch(`${baseUrl}/v1/deliveries/start`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(input),
    });
    const body = await res.json();
    if (res.status !== 200 || body.status !== 'sending') throw new Error('unexpected');
  };

  const timed = async (fn) => {
    const t0 = performance.now();
    await fn();
    return (performance.now() - t0) * 1000;
  };
  /** One repetition: `calls` pairs, interleaved call by call (order alternating), so drift hits both alike. */
  async function repetition(calls) {
    const a = [];
    const b = [];
    for (let i = 0; i < calls; i++) {
      if (i % 2 === 0) {
        a.push(await timed(viaSdk));
        b.push(await timed(viaFetch));
      } else {
        b.push(await timed(viaFetch));
        a.push(await timed(viaSdk));
      }
    }
    return { sdk: median(a), fetch: median(b) };
  }

  const reps = pick(9, 5);
  const calls = pick(600, 300);
  await repetition(300); // warm-up: JIT and keep-alive connections for both
  const sdk = [];
  const raw = [];
  for (let rep = 0; rep < reps; rep++) {
    const r = await repetition(calls);
    sdk.push(r.sdk);
    raw.push(r.fetch);
  }
  server.kill();
  log(`sdk: ${reps} x ${calls} calls each way`);

  const [pack] = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: SDK_DIR, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }));
  const runtimeJs = pack.files.filter((f) => /^dist\/.*\.js$/.test(f.path)).reduce((n, f) => n + f.size, 0);
  output({
    callsPerRep: calls,
    sdkStartMicros: summarize(sdk, 1),
    fetchMicros: summarize(raw, 1),
    ratio: summarize(sdk.map((s, i) => s / raw[i])),
    package: {
      name: pack.name,
      version: pack.version,
      tarballBytes: pack.size,
      unpackedBytes: pack.unpackedSize,
      files: pack.entryCount,
      runtimeJsBytes: runtimeJs,
      unpackedToRuntimeJs: Number((pack.unpackedSize / runtimeJs).toFixed(2)),
      runtimeDependencies: Object.keys(JSON.parse(readFileSync(join(SDK_DIR, 'package.json'), 'utf8')).dependencies ?? {}).length,
    },
  });
}
