#!/usr/bin/env node
/**
 * `npm test`: every check of the project, in the order that finishes soonest on two cores.
 *
 *   build ─┬─ type check ─┬─ unit tests ─────────────────────────────────────┐
 *          │              └─ ESLint (the same programs), madge, knip ─┬─ sdk on node 24 ───────────────────────┐
 *          ├─ @standalone integration suites (no emulator) ───────────┼─────┤                                   │
 *          └─ emulators ─┬─ production runtime ─ @serial integration ─┴─────┴─ other integration suites ─ monitoring filters
 *                        │                        suites, one at a time          (parallel workers)
 *                        └─ @own-project integration suites (the rules suites), one at a time, at the checks' niceness
 *
 * The build comes first (the emulators and the production runtime load the built functions, Hosting
 * the console bundle). The emulators, then the HTTP functions on the production runtime
 * (scripts/test-stack.mjs), start while the static checks and unit tests run, and the few
 * integration suites that cannot share the stack (`@serial`, scripts/lib/test-suites.mjs) run on it
 * meanwhile: they mostly wait, the checks mostly compute. So do the suites that work in a Firestore
 * project of their own (`@own-project`), at the checks' niceness. The other integration suites (and the
 * runtime's own, test/framework), each in a workspace of its own, then run in parallel Jest
 * workers, once the checks passed (a type error stops everything at once). Fails on any failure
 * and prints each phase's wall time at the end.
 *
 * Positional arguments select integration suites by path (regular expressions);
 * arguments that start with '-' go to every Jest run (e.g. `npm test -- -t duplicate`).
 * TEST_PHASES=integration skips the static checks and unit tests (static, or static,unit, skips the
 * stack); the default, and CI, runs everything. TEST_WORKERS sets the integration workers;
 * TEST_CHECK_NICENESS sets the static checks' niceness (default 10, scripts/lib/test-suites.mjs `checkNiceness`);
 * TEST_RUN_LIMIT_S bounds the whole run (default 3600 s), and a Jest run that does not exit after
 * its tests is stopped (scripts/lib/test-results.mjs `stopJestIfItHangs`).
 */
import { spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { BASE_URL, EMULATORS, FUNCTIONS_URL, PROJECT_ID, ROOT, buildFunctions, emulatorEnv, firebaseBin, localConfigArgs } from './lib/emulators.mjs';
import { NODE_24_VERSION, node24Binary } from './lib/node24.mjs';
import { stopProcessTree } from './lib/process-tree.mjs';
import { jestResultArgs, printFailures, resetTestResults, stopJestIfItHangs } from './lib/test-results.mjs';
import { checkNiceness, integrationSuites, nicedCommand, parseTestArgs, phaseTimer, splitSuites, waitForFile } from './lib/test-suites.mjs';

/**
 * Node's on-disk code cache for every process this run starts (inherited through the
 * environment): the Functions emulator starts a process per concurrent event of each trigger
 * (about 15 in a full run), the production runtime twelve, the desk CLI suites dozens, and each
 * compiles the same modules. With the cache primed, a delivery function's module loading takes 0.78 of the CPU
 * (bench: `npm run bench -- --quick --only coldstart`, the compile-cache row). A quiet optimisation:
 * Node falls back to compiling when the cache is missing or stale. Set NODE_COMPILE_CACHE yourself
 * to use another directory, or NODE_DISABLE_COMPILE_CACHE=1 to turn it off.
 */
process.env.NODE_COMPILE_CACHE ??= join(ROOT, '.local', 'node-compile-cache');

const extra = process.argv.slice(2);
const phases = (process.env.TEST_PHASES ?? 'static,unit,integration').split(',');
const bin = (name) => join(ROOT, 'node_modules', '.bin', name);
const rel = (path) => path.replace(ROOT + '/', '');
/** Jest workers of the unit phase (see where it runs). */
const UNIT_WORKERS = 2;
/** The run's start (epoch ms): every phase time, the stack phases' too, counts from it. */
const startedAt = Date.now();
const since = (t) => ((Date.now() - t) / 1000).toFixed(1);
/** Each phase's start and end (seconds since the run began), printed at the end. */
const { timeline, phase } = phaseTimer(startedAt);
const children = new Set();

/** The static checks' niceness (scripts/lib/test-suites.mjs `checkNiceness`). */
let CHECK_NICENESS;
try {
  CHECK_NICENESS = checkNiceness();
} catch (err) {
  console.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
}

/**
 * Runs `cmd args` to completion with inherited output; rejects on a non-zero exit. `niced`: at
 * CHECK_NICENESS. `onMessage`: with an IPC channel, called with each message the process sends.
 */
function run(cmd, args, { env = process.env, label = [rel(cmd), ...args].join(' '), niced = false, onMessage } = {}) {
  return new Promise((resolve, reject) => {
    const [file, argv] = nicedCommand(cmd, args, niced ? CHECK_NICENESS : 0);
    const child = spawn(file, argv, { cwd: ROOT, stdio: onMessage === undefined ? 'inherit' : ['inherit', 'inherit', 'inherit', 'ipc'], env });
    if (onMessage !== undefined) child.on('message', onMessage);
    children.add(child);
    stopJestIfItHangs(child, args);
    child.on('close', (code, signal) => {
      children.delete(child);
      if (code === 0) resolve();
      else reject(new Error(`${label} failed (exit ${code ?? signal})`));
    });
  });
}

/** Runs one of the static checks: at CHECK_NICENESS. */
const runCheck = (cmd, args) => run(cmd, args, { niced: true });

function printTimeline() {
  console.log('\nPhase times (wall clock; overlapping phases ran at the same time):');
  for (const { name, from, to } of timeline.sort((a, b) => a.from - b.from)) {
    console.log(`  ${name.padEnd(34)} ${(to - from).toFixed(1).padStart(6)} s   (${from.toFixed(0).padStart(4)} s - ${to.toFixed(0).padStart(4)} s)`);
  }
  console.log(`  ${'total'.padEnd(34)} ${since(startedAt).padStart(6)} s`);
}

function fail(err) {
  console.error(`\n✗ ${err instanceof Error ? err.message : String(err)}`);
  // The emulators (and every process they started) included.
  for (const child of children) stopProcessTree(child.pid);
  printTimeline();
  printFailures();
  process.exit(1);
}

/**
 * The whole run's limit (TEST_RUN_LIMIT_S, seconds). Past it, every process is stopped and the
 * failures recorded so far are printed: a CI job stopped at its own limit prints nothing more, and
 * a hung phase must say which it was. The slowest whole run on record took about 18 minutes.
 */
const RUN_LIMIT_S = Number(process.env.TEST_RUN_LIMIT_S ?? 3600);
setTimeout(() => fail(new Error(`npm test did not finish within ${RUN_LIMIT_S} s (TEST_RUN_LIMIT_S): stopped`)), RUN_LIMIT_S * 1000).unref();

const needsStack = phases.includes('integration');
resetTestResults();

await phase('build', async () => {
  // Emit only: the one type check of every TypeScript file is the static phase's (tsconfig.json
  // covers functions/src, sdk/src and the tests), not this build's.
  buildFunctions(undefined, { typeCheck: false });
  // The SDK's dist: the example connector (examples/connector) runs on the built package.
  await run(bin('tsc'), ['-p', join('sdk', 'tsconfig.build.json'), '--noCheck']);
}).catch(fail);

// ------------------------------------------------------------------------ static checks and units

// Node 24 for the SDK's second pass, fetched (once, into .local/) while the other phases run.
const node24Fetch = phases.includes('unit') ? node24Binary(join(ROOT, '.local', 'node24')) : Promise.resolve(null);
node24Fetch.catch(() => undefined); // awaited (and its failure reported) by the phase
/**
 * The type check and ESLint: one process on the same TypeScript programs (scripts/check-static.mjs),
 * at CHECK_NICENESS. `typeChecked` settles when its type check passed (it says so over IPC), `done`
 * when it exits (exit 2: type errors, 1: ESLint errors): ESLint's type-aware rules then find the
 * checker's work done instead of building and checking the same programs again (0.72 of the CPU of
 * tsc and ESLint apart, measured in docs/toolchain.md#static-checks).
 */
function startStaticCheck() {
  let passed = () => {};
  const typeChecked = new Promise((resolve) => (passed = resolve));
  const done = run(process.execPath, [join(ROOT, 'scripts', 'check-static.mjs')], {
    label: 'scripts/check-static.mjs',
    niced: true,
    onMessage: (message) => {
      if (message?.typeCheck === 'passed') passed();
    },
  });
  // A process that ends before its type check passed failed it.
  return { typeChecked: Promise.race([typeChecked, done.then(() => { throw new Error('scripts/check-static.mjs ended without a type check'); })]), done };
}
const staticCheck = phases.includes('static') ? startStaticCheck() : null;
const typeCheck = staticCheck ? phase('type check', () => staticCheck.typeChecked) : Promise.resolve();
const lint = staticCheck
  ? phase('lint (eslint, import cycles, unused code)', async () => {
      await staticCheck.done;
      await runCheck(bin('madge'), ['--circular', '--no-spinner', '--extensions', 'ts', '--ts-config', join('functions', 'tsconfig.json'), join('functions', 'src')]);
      await runCheck(bin('madge'), ['--circular', '--no-spinner', '--extensions', 'ts', '--ts-config', join('console', 'tsconfig.json'), join('console', 'src')]);
      await runCheck(bin('madge'), ['--circular', '--no-spinner', '--extensions', 'ts', '--ts-config', join('sdk', 'tsconfig.build.json'), join('sdk', 'src')]);
      await runCheck(bin('knip'), ['--no-progress']);
    })
  : Promise.resolve();
// The unit tests start once the type check passed, beside ESLint's rules and the rest of the lint:
// the type check holds one core, and the other would otherwise idle until the lint is over.
// `kit`: the SDK end-to-end scenarios on the SDK's test service (parity, jest.config.cjs); no emulators needed.
// Two workers, not Jest's default of one on two cores: the kit's suites mostly wait on their
// connectors' timers, so a second worker halves the phase (121 s -> 61 s measured alone) and
// takes it off the critical path. A --maxWorkers given to npm test comes later and wins.
const unit = typeCheck.then(() =>
  phases.includes('unit') ? phase('unit tests', () => run(bin('jest'), ['--selectProjects', 'unit', 'kit', 'rules-sdk', `--maxWorkers=${UNIT_WORKERS}`, ...jestResultArgs('unit'), ...extra])) : undefined,
);
/** The static checks and the unit tests: the parallel integration suites wait for them. */
const checks = Promise.all([typeCheck, lint, unit]);
// The SDK's own tests (its unit tests and the kit scenarios) again on Node 24: its engines say
// >=22.12, and everything above ran on the repository's Node 22 (scripts/lib/node24.mjs). Once the
// static checks passed, beside the rest of the unit tests and the integration phase: nothing waits
// on it. The unit phase's last minute and the @serial suites mostly wait on timers (a fresh-clone
// run used 1.0-1.4 of the two cores between the lint's end and the unit tests'), and this pass
// takes that time instead of a minute of the parallel suites' cores.
const node24Pass = phases.includes('unit') ? Promise.all([typeCheck, lint]).then(() => phase('sdk on node 24', () => sdkOnNode24())) : Promise.resolve();
// A failure stops the run at once, as any check's does (fail() stops the stack too).
node24Pass.catch(fail);

/**
 * Jest on a Node 24 binary, with it first on PATH too (a test that starts `node` by name gets it):
 * the SDK's unit tests (project `unit`, sdk/ only) and the kit scenarios. Skipped, with a note,
 * on a platform that has no pinned Node 24 (scripts/lib/node24.mjs); CI runs it.
 */
async function sdkOnNode24() {
  const node24 = await node24Fetch;
  if (node24 === null) {
    console.log(`sdk on node 24: skipped, no pinned Node ${NODE_24_VERSION} for ${process.platform}-${process.arch} (set NODE24_BIN to run it)`);
    return;
  }
  const env = { ...process.env, PATH: `${dirname(node24)}:${process.env.PATH ?? ''}` };
  // Three workers: the slow suites (the conformance runner's, the packed tarball's) mostly wait on
  // child processes and timers; the same 31 s of CPU took 62 s of wall time on two workers, 47 s on
  // three (measured alone on two busy cores).
  const jestArgs = [join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js'), '--selectProjects', 'unit', 'kit', '--testPathPatterns', '/sdk/test/', '--maxWorkers=3', ...jestResultArgs('sdk-node24'), ...extra];
  await run(node24, jestArgs, { env, label: `jest on Node ${NODE_24_VERSION} (sdk/test)` });
}

if (!needsStack) {
  await checks.catch(fail);
  await node24Pass;
  printTimeline();
  process.exit(0);
}

// ---------------------------------------------------------------------------------- the stack

const imageDir = join(ROOT, '.local', 'test-images');
rmSync(imageDir, { recursive: true, force: true });
mkdirSync(imageDir, { recursive: true });
const logDir = join(ROOT, '.local', 'test-logs');
mkdirSync(logDir, { recursive: true });
/** Written once the static checks, the unit tests and the @standalone suites passed: the parallel stack phases wait for it (scripts/test-stack.mjs). */
const checksPassed = join(logDir, 'checks-passed');
rmSync(checksPassed, { force: true });
const stackDoneFile = join(logDir, 'stack-done');
rmSync(stackDoneFile, { force: true });
/** The first port of the `@standalone` suites' function processes: above the parallel lane's (from 5260, 20 per worker: 5339 with four). */
const STANDALONE_FRAMEWORK_PORT = 5340;

const env = emulatorEnv({
  LOCAL_IMAGE_DIR: imageDir,
  TEST_IMAGE_DIR: imageDir,
  API_BASE_URL: BASE_URL,
  FUNCTIONS_URL,
  // The default per-integration rate limit is raised for tests; the 429 test sets its own limit.
  MESSAGES_PER_MINUTE_DEFAULT: '100000',
  // A short unclaimed expiry (docs/contract.md#liveness), so that its test shows the configured value at work
  // (test/integration/deliveries/liveness.test.ts); nothing else stays claimable that long.
  UNCLAIMED_EXPIRY: '20m',
  // Short key caches, so that the revocation and rotation suites wait seconds, not the default 20 s;
  // their bounds scale with these (test/integration/helpers/stack.ts `revocationBoundMs`).
  KEY_CACHE_TTL_MS: '2000',
  KEY_NEGATIVE_CACHE_TTL_MS: '1000',
  // Everything `emulators:exec` prints (the emulators, the functions' logs, Jest) is shown as usual
  // and also written here, so the security suite can check that no key material ever reaches a log
  // (test/integration/reliability/security.test.ts reads it while it runs).
  EMULATOR_LOG_FILE: join(logDir, 'emulators.log'),
  TEST_CHECKS_PASSED_FILE: checksPassed,
  TEST_PHASES: phases.join(','),
  TEST_STARTED_AT: String(startedAt),
});

const log = createWriteStream(env.EMULATOR_LOG_FILE, { flags: 'w' });
const stackSpawnedAt = (Date.now() - startedAt) / 1000;
const stackCommand = [process.execPath, join(ROOT, 'scripts', 'test-stack.mjs'), ...extra].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(' ');
// detached: its own process group, so that a failed check stops firebase-tools and every emulator.
const stack = spawn(firebaseBin(), ['emulators:exec', ...localConfigArgs(), '--project', PROJECT_ID, '--only', EMULATORS, stackCommand], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
children.add(stack);
for (const [from, to] of [[stack.stdout, process.stdout], [stack.stderr, process.stderr]]) {
  from.on('data', (chunk) => {
    to.write(chunk);
    log.write(chunk);
  });
}
const stackDone = new Promise((resolve) => stack.on('close', (code, signal) => resolve([code, signal])));

// The `@standalone` suites (scripts/lib/test-suites.mjs): no emulator, mostly the clock. From now,
// beside the checks and the stack's start, instead of holding one of the parallel lane's workers
// while they wait. Their own framework ports (test/framework/support.ts), apart from that lane's.
const { flags: jestFlags, selects } = parseTestArgs(extra);
const standaloneSuites = splitSuites(integrationSuites().filter(selects)).standalone;
const standalone =
  standaloneSuites.length === 0
    ? Promise.resolve()
    : phase(`integration: ${standaloneSuites.length} @standalone suite${standaloneSuites.length === 1 ? '' : 's'}`, () =>
        run(bin('jest'), ['--selectProjects', 'integration', 'framework', '--runInBand', ...jestResultArgs('integration-standalone'), '--runTestsByPath', ...standaloneSuites, ...jestFlags], {
          // The project emulators:exec sets for the stack's suites (the stack's helpers read it).
          env: { ...env, GCLOUD_PROJECT: PROJECT_ID, FRAMEWORK_TEST_PORT: String(STANDALONE_FRAMEWORK_PORT) },
        }),
      );

await Promise.all([checks, standalone]).catch(fail);
writeFileSync(checksPassed, `${new Date().toISOString()}\n`);

// scripts/test-stack.mjs writes its status here when it is done: the emulators are then stopped at
// once (their orderly shutdown takes about half a minute and checks nothing).
const stackStatus = await Promise.race([
  stackDone.then(([exitCode, exitSignal]) => ({ exitCode, exitSignal })),
  waitForFile(stackDoneFile).then(() => ({ exitCode: Number(readFileSync(stackDoneFile, 'utf8').trim()), exitSignal: null })),
]);
stopProcessTree(stack.pid);
await stackDone;
children.delete(stack);
const { exitCode: code, exitSignal: signal } = stackStatus;
await new Promise((resolve) => log.end(resolve));
// The stack phases' own times (scripts/test-stack.mjs writes them).
const stackTimes = join(logDir, 'stack-phases.json');
if (existsSync(stackTimes)) {
  const stackPhases = JSON.parse(readFileSync(stackTimes, 'utf8'));
  // Until the first of them began, the emulators were starting.
  if (stackPhases.length > 0) timeline.push({ name: 'emulators starting', from: stackSpawnedAt, to: Math.min(...stackPhases.map((p) => p.from)) });
  timeline.push(...stackPhases);
}
if (code !== 0) fail(new Error(`firebase emulators:exec failed (exit ${code ?? signal}); its output is in ${rel(env.EMULATOR_LOG_FILE)}`));
await node24Pass;

// The monitoring's log filters against the lines the whole integration phase captured
// (test/monitoring/filters.test.ts, docs/operations.md#monitoring): a renamed log field fails
// here. Only after a full integration phase: a run limited to some suites (extra arguments)
// captures only some of the lines the filters must match.
if (phases.includes('integration') && extra.length === 0) {
  await phase('monitoring filters', () => run(bin('jest'), ['--selectProjects', 'monitoring', ...jestResultArgs('monitoring')], { env: { ...process.env, EMULATOR_LOG_FILE: env.EMULATOR_LOG_FILE } })).catch(fail);
}
printTimeline();
