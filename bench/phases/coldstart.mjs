/**
 * Phase "coldstart" (no emulator): what a function's cold start costs in module loading, in a
 * fresh Node process, against loading firebase-functions + firebase-admin alone.
 *
 * A function instance loads functions/lib/index.js, which only declares the functions; each
 * function's wrapper (functions/src/lazy.ts) requires its handler's bundle (lib/bundles/, built by
 * scripts/bundle-functions.mjs) on its first invocation. So a function's cold start is index.js
 * followed by that bundle, loaded here in that order in one process, exactly as the wrapper's
 * `require` does. The target (<= 1.2x) applies to the HTTP functions. index.js alone (what every
 * instance loads before its first invocation) and the delivery triggers are reported too. The
 * probe also lists which of the service's own modules each target loaded (require.cache, plus the
 * sources each loaded bundle inlines, from its source map), to check that loading is per function,
 * and that @google-cloud/pubsub is not loaded by the HTTP functions.
 *
 * Then the compile cache `npm test` gives every process it starts (NODE_COMPILE_CACHE, Node's
 * on-disk V8 code cache; scripts/test.mjs): the delivery functions' loading with a primed cache
 * against the same loading without, in the same repetition. The emulator starts a process per
 * concurrent request of a function, about 75 in a full test run, and each loads the same modules.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ROOT } from '../../scripts/lib/emulators.mjs';
import { FUNCTIONS_LIB } from '../lib/build.mjs';
import { log, output, pick } from '../lib/session.mjs';
import { summarize } from '../lib/stats.mjs';

const lib = (...path) => join(FUNCTIONS_LIB, ...path);
const TARGETS = {
  baseline: { load: ['firebase-functions/v2/https', 'firebase-admin/app', 'firebase-admin/firestore'] },
  'messages (index.js + bundles/messages/http.js)': { http: true, load: [lib('index.js'), lib('bundles', 'messages', 'http.js')] },
  'claim/start/complete/failDelivery (index.js + bundles/deliveries/http.js)': { http: true, load: [lib('index.js'), lib('bundles', 'deliveries', 'http.js')] },
  'index.js alone (every instance, before its first invocation)': { load: [lib('index.js')] },
  'delivery triggers (index.js + bundles/deliveries/triggers.js)': { load: [lib('index.js'), lib('bundles', 'deliveries', 'triggers.js')] },
};

/**
 * What a loaded bundle inlines, from its source map: our modules as their tsc paths under lib/
 * (src/messages/multipart.ts -> messages/multipart.js), so the per-function checks see through the bundle,
 * and the npm packages it carries.
 */
const inlined = new Map();
function bundleContents(ownPath) {
  if (!inlined.has(ownPath)) {
    const file = lib(ownPath);
    const { sources } = JSON.parse(readFileSync(`${file}.map`, 'utf8'));
    const src = join(ROOT, 'functions', 'src'); // the bundles are built from the sources in place
    const own = [];
    const packages = new Set();
    for (const source of sources.map((s) => join(dirname(file), s))) {
      const pkg = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(source)?.[1];
      if (pkg) packages.add(pkg);
      else own.push(relative(src, source).replace(/\.ts$/, '.js'));
    }
    inlined.set(ownPath, { own, packages: [...packages] });
  }
  return inlined.get(ownPath);
}

/** Runs in the fresh process: modules are resolved from functions/lib, as the runtime does. */
const PROBE = `
const paths = JSON.parse(process.argv[1]);
const lib = ${JSON.stringify(FUNCTIONS_LIB)};
const resolve = (m) => require.resolve(m, { paths: [lib] });
const before = process.memoryUsage();
const c0 = process.cpuUsage();
const t0 = performance.now();
for (const m of paths) require(resolve(m));
const ms = performance.now() - t0;
const cpu = process.cpuUsage(c0);
const after = process.memoryUsage();
const loaded = Object.keys(require.cache);
process.stdout.write(JSON.stringify({
  ms,
  cpuMs: (cpu.user + cpu.system) / 1000,
  rss: after.rss - before.rss,
  heapUsed: after.heapUsed - before.heapUsed,
  modules: loaded.length,
  own: loaded.filter((k) => k.startsWith(lib + '/')).map((k) => k.slice(lib.length + 1)).sort(),
  busboyLoaded: loaded.some((k) => k.includes('/node_modules/busboy/')),
  pubsubLoaded: loaded.some((k) => k.includes('/@google-cloud/pubsub/')),
}));
`;

/** The probes' environment: without a compile cache unless a probe asks for one (the bench may itself run under npm test's). */
const probeEnv = { ...process.env, NODE_OPTIONS: '' };
delete probeEnv.NODE_COMPILE_CACHE;

function probe(modules, env = {}) {
  const t0 = performance.now();
  const out = execFileSync(process.execPath, ['-e', PROBE, JSON.stringify(modules)], { cwd: ROOT, encoding: 'utf8', env: { ...probeEnv, ...env } });
  return { ...JSON.parse(out), processMs: performance.now() - t0 };
}

const reps = pick(11, 5);
const names = Object.keys(TARGETS);
const runs = Object.fromEntries(names.map((n) => [n, []]));
for (let rep = 0; rep < reps; rep++) {
  // Rotate the order so no target always runs first (file cache, CPU frequency).
  for (let i = 0; i < names.length; i++) {
    const name = names[(rep + i) % names.length];
    runs[name].push(probe(TARGETS[name].load));
  }
}
log(`coldstart: ${reps} fresh processes per target`);

const base = runs.baseline;
const result = {};
for (const name of names) {
  const r = runs[name];
  // Each loaded bundle stands for the modules it inlines (the same in every repetition).
  const bundles = [...new Set(r.flatMap((x) => x.own))].filter((m) => m.startsWith('bundles/')).map(bundleContents);
  result[name] = {
    modules: TARGETS[name].load,
    http: TARGETS[name].http === true,
    loadMs: summarize(r.map((x) => x.ms)),
    loadCpuMs: summarize(r.map((x) => x.cpuMs)),
    processMs: summarize(r.map((x) => x.processMs)),
    rssBytes: summarize(r.map((x) => x.rss), 0),
    heapUsedBytes: summarize(r.map((x) => x.heapUsed), 0),
    moduleCount: summarize(r.map((x) => x.modules), 0),
    // Ratios per repetition: each target against the baseline process of the same repetition.
    timeRatio: summarize(r.map((x, i) => x.ms / base[i].ms)),
    // CPU time is less disturbed than wall time by other work on a busy machine.
    cpuRatio: summarize(r.map((x, i) => x.cpuMs / base[i].cpuMs)),
    rssRatio: summarize(r.map((x, i) => x.rss / base[i].rss)),
    heapRatio: summarize(r.map((x, i) => x.heapUsed / base[i].heapUsed)),
    // The same modules load in every repetition; the union would show it if they did not.
    ownModules: [...new Set([...r.flatMap((x) => x.own), ...bundles.flatMap((b) => b.own)])].sort(),
    busboyLoaded: r.some((x) => x.busboyLoaded) || bundles.some((b) => b.packages.includes('busboy')),
    pubsubLoaded: r.some((x) => x.pubsubLoaded),
  };
}
// The compile cache: primed by one load, as the first of npm test's function processes primes it.
const cacheDir = mkdtempSync(join(tmpdir(), 'bench-compile-cache-'));
const withCache = { NODE_COMPILE_CACHE: cacheDir };
const cachedTarget = TARGETS['claim/start/complete/failDelivery (index.js + bundles/deliveries/http.js)'].load;
const pairs = [];
try {
  probe(cachedTarget, withCache);
  for (let rep = 0; rep < reps; rep++) {
    // Alternate which goes first.
    const [first, second] = rep % 2 === 0 ? [{}, withCache] : [withCache, {}];
    const a = probe(cachedTarget, first);
    const b = probe(cachedTarget, second);
    pairs.push(rep % 2 === 0 ? { plain: a, cached: b } : { plain: b, cached: a });
  }
} finally {
  rmSync(cacheDir, { recursive: true, force: true });
}
log(`coldstart: ${reps} pairs with and without the compile cache`);
const compileCache = {
  modules: cachedTarget,
  loadCpuMs: summarize(pairs.map((p) => p.cached.cpuMs)),
  plainLoadCpuMs: summarize(pairs.map((p) => p.plain.cpuMs)),
  cpuRatio: summarize(pairs.map((p) => p.cached.cpuMs / p.plain.cpuMs)),
  timeRatio: summarize(pairs.map((p) => p.cached.ms / p.plain.ms)),
};
output({ reps, targets: result, compileCache });
