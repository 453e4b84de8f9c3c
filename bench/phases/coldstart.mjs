/**
 * Phase "coldstart" (no emulator): time and memory to load the functions' code in a fresh Node
 * process, against loading firebase-functions + firebase-admin alone. Every HTTP function
 * instance loads the whole codebase (functions/lib/index.js), so that is the figure the target
 * (<= 1.2x) applies to; the two handler modules are measured on their own too. Also checks that
 * @google-cloud/pubsub is not loaded (require.cache) by the HTTP code.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { ROOT } from '../../scripts/lib/emulators.mjs';
import { FUNCTIONS_LIB } from '../lib/build.mjs';
import { log, output, pick } from '../lib/session.mjs';
import { summarize } from '../lib/stats.mjs';
import { performance } from 'node:perf_hooks';

const TARGETS = {
  baseline: ['firebase-functions/v2/https', 'firebase-admin/app', 'firebase-admin/firestore'],
  'functions/lib/index.js (every function)': [join(FUNCTIONS_LIB, 'index.js')],
  'handlers/messages.js': [join(FUNCTIONS_LIB, 'handlers', 'messages.js')],
  'handlers/deliveries.js': [join(FUNCTIONS_LIB, 'handlers', 'deliveries.js')],
};

/** Runs in the fresh process: modules are resolved from functions/lib, as the runtime does. */
const PROBE = `
const paths = JSON.parse(process.argv[1]);
const resolve = (m) => require.resolve(m, { paths: [${JSON.stringify(FUNCTIONS_LIB)}] });
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
  pubsubLoaded: loaded.some((k) => k.includes('/@google-cloud/pubsub/')),
}));
`;

function probe(modules) {
  const t0 = performance.now();
  const out = execFileSync(process.execPath, ['-e', PROBE, JSON.stringify(modules)], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } });
  return { ...JSON.parse(out), processMs: performance.now() - t0 };
}

const reps = pick(11, 5);
const names = Object.keys(TARGETS);
const runs = Object.fromEntries(names.map((n) => [n, []]));
for (let rep = 0; rep < reps; rep++) {
  // Rotate the order so no target always runs first (file cache, CPU frequency).
  for (let i = 0; i < names.length; i++) {
    const name = names[(rep + i) % names.length];
    runs[name].push(probe(TARGETS[name]));
  }
}
log(`coldstart: ${reps} fresh processes per target`);

const base = runs.baseline;
const result = {};
for (const name of names) {
  const r = runs[name];
  result[name] = {
    modules: TARGETS[name],
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
    pubsubLoaded: r.some((x) => x.pubsubLoaded),
  };
}
output({ reps, targets: result });
