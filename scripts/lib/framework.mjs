/**
 * The production runtime, locally: each built HTTP function served by Google's functions framework
 * (`@google-cloud/functions-framework`, the version pinned in functions/package.json), one process
 * per function as in production, with NODE_ENV=production, against whatever Firestore/Pub/Sub the
 * environment names (the emulators, in tests and the bench).
 *
 * `startRouter` stands in for Firebase Hosting: it forwards the paths of firebase.json's rewrites
 * to the function processes (and, given a fallback, every other path to the Hosting emulator).
 *
 * Used by `npm test`'s integration phase (scripts/test-stack.mjs: every suite calls the service
 * here), the tests that inject faults (test/framework) and the bench's framework section.
 */
import { spawn } from 'node:child_process';
import { createWriteStream, mkdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ROOT } from './emulators.mjs';

const FUNCTIONS_DIR = join(ROOT, 'functions');
const requireFromFunctions = createRequire(join(FUNCTIONS_DIR, 'package.json'));

/** The framework's CLI, resolved the way the deployed function resolves the package. */
const FRAMEWORK_MAIN = join(dirname(requireFromFunctions.resolve('@google-cloud/functions-framework')), 'main.js');

/** Hosting's rewrites from firebase.json: `/v1/messages` -> `messages`, ... */
function hostingRewrites() {
  const firebaseJson = JSON.parse(readFileSync(join(ROOT, 'firebase.json'), 'utf8'));
  return firebaseJson.hosting.rewrites.map((r) => ({ path: r.source, target: r.function.functionId }));
}

/**
 * The environment a deployed HTTP function sees, minus credentials: production mode, no emulator
 * markers of the Functions emulator (firebase-functions behaves differently under them), the
 * project, and `extra` (emulator hosts, image store, limits).
 */
function frameworkEnv(target, extra = {}) {
  const env = { ...process.env };
  for (const name of Object.keys(env)) {
    if (name === 'FUNCTIONS_EMULATOR' || name.startsWith('FIREBASE_EMULATOR') || name === 'FUNCTIONS_EMULATOR_HOST') delete env[name];
  }
  const projectId = extra.GCLOUD_PROJECT ?? env.GCLOUD_PROJECT ?? 'demo-support-desk';
  return {
    ...env,
    NODE_ENV: 'production',
    GCLOUD_PROJECT: projectId,
    FIREBASE_CONFIG: JSON.stringify({ projectId }),
    FUNCTION_TARGET: target,
    K_SERVICE: target.toLowerCase(),
    FUNCTION_SIGNATURE_TYPE: 'http',
    METADATA_SERVER_DETECTION: 'none',
    ...extra,
  };
}

/**
 * How long a function process may take to answer its first request. npm test starts twelve at once
 * beside the static checks and the unit tests; in the framework phase of earlier runs, beside three
 * Jest workers and the SDK's Node 24 pass, one took over 30 s (the bound until then). A process
 * that never starts still fails here.
 */
const START_LIMIT_MS = 90_000;

/**
 * Starts `functions-framework --target=<target> --port=<port>` in functions/ (the built lib/), and
 * resolves once it answers HTTP. Its output goes to `logFile` (and is kept for `output()`); with
 * `echo`, each complete line is also passed to it (npm test prints them into the stack's log).
 */
export async function startFunction({ target, port, env = {}, logFile, echo }) {
  // A leftover process on the port would answer the readiness probe in this one's place.
  await assertPortFree(port);
  const child = spawn(process.execPath, [FRAMEWORK_MAIN, `--target=${target}`, `--port=${port}`, '--signature-type=http'], {
    cwd: FUNCTIONS_DIR,
    env: frameworkEnv(target, env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let log;
  if (logFile) {
    mkdirSync(join(logFile, '..'), { recursive: true });
    log = createWriteStream(logFile, { flags: 'w' });
  }
  for (const stream of [child.stdout, child.stderr]) {
    let partial = '';
    stream.on('data', (chunk) => {
      output += chunk;
      log?.write(chunk);
      if (echo === undefined) return;
      // Whole lines only: the two streams of twelve processes share one log.
      const lines = (partial + chunk).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) echo(line);
    });
  }
  let exited = null;
  child.on('exit', (code, signal) => {
    exited = { code, signal };
  });
  const url = `http://127.0.0.1:${port}`;
  const startedAt = Date.now();
  for (;;) {
    if (exited) throw new Error(`functions-framework --target=${target} exited (${exited.code ?? exited.signal}) before serving:\n${output.slice(-2000)}`);
    if (await answers(url)) break;
    if (Date.now() - startedAt > START_LIMIT_MS) {
      child.kill('SIGKILL');
      throw new Error(`functions-framework --target=${target} did not answer on ${url} within ${START_LIMIT_MS / 1000} s:\n${output.slice(-2000)}`);
    }
    await sleep(100);
  }
  return {
    target,
    url,
    pid: child.pid,
    output: () => output,
    async stop() {
      if (exited) return;
      const done = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const forced = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await done;
      clearTimeout(forced);
      await new Promise((resolve) => (log ? log.end(resolve) : resolve()));
    },
  };
}

function assertPortFree(port) {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', () => reject(new Error(`port ${port} is in use (a leftover functions-framework or router process?)`)));
    probe.listen(port, () => probe.close(resolve));
  });
}

function answers(url) {
  return new Promise((resolve) => {
    const req = http.request(url, { method: 'GET', timeout: 1_000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(true));
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => {
      req.destroy();
      resolve(false);
    });
    req.end();
  });
}

/**
 * Whether a rewrite's `source` matches `path`: exactly, or, for a source ending in `/**` (the
 * console function's `/console/v1/**`), every path below that prefix, as Hosting's globs do.
 */
export function rewriteMatches(source, path) {
  return source.endsWith('/**') ? path.startsWith(source.slice(0, -2)) : source === path;
}

/**
 * A stand-in for Hosting's rewrites: forwards each route's path to its function's URL, streaming
 * both ways (the body is not buffered here, as Hosting does not hand the function a parsed body).
 * `routes`: [{ path: '/v1/messages', url: 'http://127.0.0.1:5101' }, { path: '/console/v1/**', ... }, ...],
 * first match wins. Any other path goes to `fallback` (the Hosting emulator: the console's page,
 * `/__/firebase/init.json`), or is answered 404 without one.
 */
function startRouter({ port, routes, fallback }) {
  const listeners = [];
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const route = routes.find((r) => rewriteMatches(r.path, path));
    const target = route !== undefined ? new URL(route.url) : fallback !== undefined ? new URL(fallback) : undefined;
    for (const listener of listeners) listener(route?.path ?? path);
    if (!target) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('no rewrite for this path');
      return;
    }
    const upstream = http.request(
      { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: { ...req.headers, host: `${target.hostname}:${target.port}` } },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end('upstream failed');
    });
    req.pipe(upstream);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${port}`,
        /** Calls `listener(path)` for every request the router receives (before forwarding it): the matched rewrite's source, else the path. */
        onRequest: (listener) => void listeners.push(listener),
        close: () => new Promise((done) => server.close(done)),
      }),
    );
  });
}

/**
 * The HTTP half of the service on the production runtime: one functions-framework process per
 * rewrite of firebase.json (started together: each spends its start-up loading modules) behind
 * the router, from `port` + 1 on. `fallback` receives every other path (the Hosting emulator).
 * `requested` counts the requests each rewrite received, so that a run can show every operation
 * was served. `env`: the processes' extra environment; `echo`: as `startFunction`'s (their one log).
 */
export async function startProductionRuntime({ port, env = {}, echo, fallback }) {
  const rewrites = hostingRewrites();
  const started = await Promise.allSettled(rewrites.map(({ target }, i) => startFunction({ target, port: port + 1 + i, env, echo })));
  const functions = started.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  const stopFunctions = () => Promise.all(functions.map((f) => f.stop()));
  const failed = started.find((result) => result.status === 'rejected');
  if (failed !== undefined) {
    await stopFunctions();
    throw failed.reason;
  }
  const router = await startRouter({ port, routes: rewrites.map((r, i) => ({ path: r.path, url: functions[i].url })), fallback });
  const requested = new Map(rewrites.map((r) => [r.path, 0]));
  router.onRequest((path) => {
    if (requested.has(path)) requested.set(path, requested.get(path) + 1);
  });
  return {
    url: router.url,
    /** The rewrites' paths that no request reached. */
    unserved: () => [...requested].filter(([, count]) => count === 0).map(([path]) => path),
    async stop() {
      await router.close();
      await stopFunctions();
    },
  };
}
