#!/usr/bin/env node
/**
 * `npm run bench` (full, about 6 minutes on 2 cores) or `npm run bench -- --quick` (smoke, about
 * 2 minutes, smaller sizes). Builds the functions and the SDK (into .local/bench/build, see
 * lib/build.mjs), runs the phases, and writes
 * bench/results/latest.{json,md} (quick: bench/results/quick.{json,md}). See bench/README.md.
 *
 * Phases without emulators run first; then two emulator sessions back to back under one hold of
 * the shared lock (`flock /tmp/emulators.lock`: the emulators use fixed ports), released at once:
 * `store` (Firestore emulator only) and `stack` (the whole stack plus the bench's no-op function).
 * `--only coldstart,images,sdk,store,framework,starts,stack,privacy` runs a subset (the report then has only those);
 * `--no-build` reuses the previous bench build; `--full-drain` lets the throughput drain run until
 * every reply is delivered instead of stopping at its time limit (see README: Throughput).
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { clearInterval, clearTimeout, setInterval, setTimeout } from 'node:timers';
import { SERVICE_EMULATORS, PROJECT_ID, ROOT, emulatorEnv, firebaseBin } from '../scripts/lib/emulators.mjs';
import { build } from './lib/build.mjs';
import { renderMarkdown } from './lib/report.mjs';
import { BENCH_DIR, writeBenchConfig } from './lib/stack-config.mjs';

const args = process.argv.slice(2);
if (args.includes('--help') || args.includes('-h')) {
  console.log(`Usage: npm run bench [-- options]   (bench/README.md)

  --quick            smoke run: smaller sizes, fewer repetitions (writes bench/results/quick.{json,md})
  --only a,b         only these phases: coldstart images sdk store framework privacy starts stack
  --no-build         reuse the previous bench build
  --full-drain       let the throughput drain run up to 30 min

Environment:
  BENCH_SECTIONS=a,b        only these sections of each phase (e.g. overhead of stack)
  BENCH_EMULATOR_LOCK=file  the lock the emulator sessions take (default /tmp/emulators.lock); run the bench bare, never inside flock
  BENCH_COMPARE_REV=rev     compare the Firestore counts with bench/results/latest.json of rev (default HEAD)`);
  process.exit(0);
}
const quick = args.includes('--quick');
const fullDrain = args.includes('--full-drain');
const onlyArg = args.find((a) => a.startsWith('--only'));
const only = onlyArg ? (onlyArg.includes('=') ? onlyArg.split('=')[1] : args[args.indexOf(onlyArg) + 1]).split(',') : null;
const wanted = (phase) => only === null || only.includes(phase);
const LOCK = process.env.BENCH_EMULATOR_LOCK ?? '/tmp/emulators.lock';
const RESULTS = join(ROOT, 'bench', 'results');
const PARTS = join(BENCH_DIR, 'parts');
const node = process.execPath;
const started = performance.now();
const timings = {};
const failures = [];

rmSync(PARTS, { recursive: true, force: true });
mkdirSync(PARTS, { recursive: true });
mkdirSync(RESULTS, { recursive: true });
const phaseEnv = (name, extra = {}) => ({
  ...process.env,
  BENCH_QUICK: quick ? '1' : '0',
  BENCH_FULL_DRAIN: fullDrain ? '1' : '0',
  BENCH_OUT: join(PARTS, `${name}.json`),
  NODE_OPTIONS: '--disable-warning=MODULE_TYPELESS_PACKAGE_JSON',
  ...extra,
});

function step(name, fn) {
  const t0 = performance.now();
  console.log(`▶ ${name}`);
  const value = fn();
  timings[name] = Number(((performance.now() - t0) / 1000).toFixed(1));
  return value;
}

function runNode(name, script, extraArgs = []) {
  step(name, () => {
    const r = spawnSync(node, [...extraArgs, join(ROOT, 'bench', 'phases', script)], { cwd: ROOT, stdio: 'inherit', env: phaseEnv(name) });
    if (r.status !== 0) failures.push(`phase ${name} (exit ${r.status ?? r.signal})`);
  });
}

const quote = (s) => `'${String(s).replace(/'/g, `'\\''`)}'`;

/**
 * The emulator sessions, back to back under one hold of the shared lock (one wait, no gap for
 * another run to slip into). Each session is `firebase emulators:exec` of one phase script; the
 * phase's stdout (the functions' request logs are noisy) goes to .local/bench/<phase>.log, the
 * emulators' output to .local/bench/<phase>-emulators.log, progress lines to the terminal.
 */
async function emulatorSessions(sessions, timeoutMs) {
  const t0 = performance.now();
  console.log(`▶ emulator sessions: ${sessions.map((s) => s.name).join(', ')} (waiting for ${LOCK})`);
  const marker = (name) => join(BENCH_DIR, `${name}.started`);
  const script = ['status=0'];
  for (const s of sessions) {
    rmSync(marker(s.name), { force: true });
    const phase = `${quote(node)} ${s.nodeFlags ?? ''} ${quote(join(ROOT, 'bench', 'phases', `${s.name}.mjs`))} > ${quote(join(BENCH_DIR, `${s.name}.log`))}`;
    script.push(`echo '▶ ${s.name}' >&2`, `: > ${quote(marker(s.name))}`);
    script.push(`BENCH_OUT=${quote(join(PARTS, `${s.name}.json`))} ${[firebaseBin(), 'emulators:exec', '--project', PROJECT_ID, ...s.firebaseArgs, phase].map(quote).join(' ')} > ${quote(join(BENCH_DIR, `${s.name}-emulators.log`))} || status=1`);
  }
  script.push('exit $status');
  const scriptFile = join(BENCH_DIR, 'sessions.sh');
  writeFileSync(scriptFile, `${script.join('\n')}\n`);
  const env = emulatorEnv(phaseEnv('sessions', { IMAGE_STORE: 'local', LOCAL_IMAGE_DIR: join(BENCH_DIR, 'images'), MESSAGES_PER_MINUTE_DEFAULT: '1000000' }));
  const child = spawn('flock', [LOCK, 'sh', scriptFile], { cwd: ROOT, env, stdio: ['ignore', 'inherit', 'inherit'], detached: true });
  // The time limit counts from the moment the lock is taken: waiting for other runs is not ours.
  let timer;
  const lockPoll = setInterval(() => {
    if (!existsSync(marker(sessions[0].name))) return;
    clearInterval(lockPoll);
    console.log(`  lock taken after ${((performance.now() - t0) / 1000).toFixed(0)} s`);
    timer = setTimeout(() => {
      console.error(`✗ emulator sessions: not finished after ${timeoutMs / 1000} s; stopping them`);
      try {
        process.kill(-child.pid, 'SIGINT');
      } catch {
        /* gone */
      }
    }, timeoutMs);
  }, 250);
  const code = await new Promise((resolve) => child.on('exit', (c, s) => resolve(c ?? s)));
  clearTimeout(timer);
  clearInterval(lockPoll);
  const endedAt = performance.timeOrigin + performance.now();
  const startedAt = sessions.map((s) => (existsSync(marker(s.name)) ? statSync(marker(s.name)).mtimeMs : null));
  if (startedAt[0] !== null) timings['emulator lock wait'] = Number(Math.max(0, (startedAt[0] - (performance.timeOrigin + t0)) / 1000).toFixed(1));
  sessions.forEach((s, i) => {
    if (startedAt[i] === null) return;
    const end = startedAt[i + 1] ?? endedAt;
    timings[`${s.name} (emulator session)`] = Number(((end - startedAt[i]) / 1000).toFixed(1));
  });
  if (code !== 0) {
    failures.push(`emulator sessions (exit ${code}; see .local/bench/*.log)`);
    console.error(`✗ an emulator session failed (exit ${code}); see .local/bench/*.log. The report keeps what was measured.`);
  }
}

if (!args.includes('--no-build')) step('build (functions, sdk)', build);
if (wanted('coldstart')) runNode('coldstart', 'coldstart.mjs');
if (wanted('images')) runNode('images', 'images.mjs');
if (wanted('sdk')) runNode('sdk', 'sdk.mjs');
const sessions = [];
if (wanted('store')) sessions.push({ name: 'store', nodeFlags: '--expose-gc', firebaseArgs: ['--only', 'firestore'] });
if (wanted('framework')) sessions.push({ name: 'framework', firebaseArgs: ['--only', 'firestore'] });
// Privacy (docs/privacy.md): erasure cost vs workspace size, retention job throughput.
if (wanted('privacy')) sessions.push({ name: 'privacy', firebaseArgs: ['--only', 'firestore'] });
// Taking a start vs sequencing a reply, in-process: Firestore and Pub/Sub, no Functions emulator (no trigger takes the documents first).
if (wanted('starts')) sessions.push({ name: 'starts', firebaseArgs: ['--only', 'firestore,pubsub'] });
if (wanted('stack')) sessions.push({ name: 'stack', firebaseArgs: ['--config', writeBenchConfig(), '--only', SERVICE_EMULATORS] });
if (sessions.length > 0) await emulatorSessions(sessions, (quick ? 420_000 : 1_200_000) + (fullDrain ? 1_800_000 : 0));

const parts = {};
for (const name of ['coldstart', 'images', 'sdk', 'store', 'framework', 'starts', 'stack', 'privacy']) {
  const file = join(PARTS, `${name}.json`);
  if (existsSync(file)) parts[name] = JSON.parse(readFileSync(file, 'utf8'));
}
// The committed results of the previous full run (bench/results/latest.json at HEAD, or at the
// revision BENCH_COMPARE_REV names): each operation's Firestore counts, to check that a change
// left them as they were (report.mjs).
const compareRev = process.env.BENCH_COMPARE_REV ?? 'HEAD';
const previousRun = spawnSync('git', ['show', `${compareRev}:bench/results/latest.json`], { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
const previous = previousRun.status === 0 ? JSON.parse(previousRun.stdout) : null;
const previousCounts = previous?.store?.counts
  ? {
      commit: previous.commit,
      date: previous.date,
      counts: Object.fromEntries(Object.entries(previous.store.counts).map(([name, c]) => [name, Object.fromEntries(['transactions', 'roundTrips', 'rpcs', 'docsRead', 'docsWritten'].map((f) => [f, c.counts[f].median]))])),
    }
  : null;
const result = {
  mode: quick ? 'quick' : fullDrain ? 'full, --full-drain' : 'full',
  date: new Date().toISOString(),
  commit: spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).stdout.trim(),
  workingTreeDirty: spawnSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: ROOT, encoding: 'utf8' }).stdout.trim() !== '',
  machine: { node: process.version, cpus: (await import('node:os')).cpus().length, platform: process.platform },
  secondsByStep: timings,
  totalSeconds: Number(((performance.now() - started) / 1000).toFixed(1)),
  // The run's own time: waiting for the shared emulator lock (other engineers' runs) left out.
  benchSeconds: Number(((performance.now() - started) / 1000 - (timings['emulator lock wait'] ?? 0)).toFixed(1)),
  ...parts,
  ...(previousCounts ? { previous: previousCounts } : {}),
  ...(failures.length > 0 ? { failures } : {}),
};
const base = quick ? 'quick' : fullDrain ? 'full-drain' : 'latest';
writeFileSync(join(RESULTS, `${base}.json`), `${JSON.stringify(result, null, 2)}\n`);
const markdown = renderMarkdown(result);
writeFileSync(join(RESULTS, `${base}.md`), markdown);
console.log(`\n${markdown}`);
if (failures.length > 0) {
  console.error(`✗ failed: ${failures.join('; ')}`);
  process.exitCode = 1;
}
console.log(`Results: bench/results/${base}.json and bench/results/${base}.md (${result.benchSeconds} s, plus ${(result.totalSeconds - result.benchSeconds).toFixed(0)} s waiting for the emulator lock)`);
