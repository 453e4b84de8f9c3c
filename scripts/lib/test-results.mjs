/**
 * The failures of a whole `npm test`, printed once at its very end.
 *
 * Each Jest run of the runner (scripts/test.mjs, test-stack.mjs) writes its
 * results as JSON (`jestResultArgs`); `printFailures` lists every failed test and every suite that
 * failed to run, from all of them, after the phase times. A CI log is often read from its tail
 * only, and the phases interleave their output (the unit tests and the SDK's Node 24 pass run beside
 * the integration suites): without this summary, a phase's "failed" may be the only line that says
 * which phase failed, and nothing says which test.
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { ROOT } from './emulators.mjs';
import { stopProcessTree } from './process-tree.mjs';

const RESULTS_DIR = join(ROOT, '.local', 'test-logs', 'jest-results');
/** Lines of each failure message printed in the summary: the assertion and where it failed. */
const MESSAGE_LINES = 12;

/**
 * How long a Jest run may go on once it wrote its results. Jest exits by itself when its tests
 * leave nothing open, within a second; ten times the usual (a few seconds) covers a loaded machine.
 */
const EXIT_GRACE_MS = 30_000;
/** A run stopped by `stopJestIfItHangs` leaves this file beside its results, for the summary. */
export const hungMarker = (outputFile) => outputFile.replace(/\.json$/, '.hung');

/** Empties the results of an earlier run: called once, when `npm test` starts. */
export function resetTestResults() {
  rmSync(RESULTS_DIR, { recursive: true, force: true });
  mkdirSync(RESULTS_DIR, { recursive: true });
}

/** Jest arguments that write a run's results where `printFailures` reads them; `name` says which run. */
export function jestResultArgs(name) {
  // Here too, not only at the start: the stack phases may run without the runner (TEST_PHASES).
  mkdirSync(RESULTS_DIR, { recursive: true });
  const outputFile = join(RESULTS_DIR, `${name}.json`);
  rmSync(hungMarker(outputFile), { force: true });
  return ['--json', `--outputFile=${outputFile}`];
}

/**
 * Stops `child`, a Jest run started with `jestResultArgs` among its `args`, when it is still
 * running EXIT_GRACE_MS after it wrote its results: a handle a test left open (a server, a timer,
 * a child process, a Pub/Sub subscription's retry) keeps Jest alive after "Jest did not exit one
 * second after the test run has completed", forever, and the run would then end at CI's time
 * limit with no summary at all (seen once after two failed tests). The run then fails, even if
 * every test passed: a leaked handle is a defect of the suite. Does nothing for other commands.
 */
export function stopJestIfItHangs(child, args, { graceMs = EXIT_GRACE_MS } = {}) {
  const outputFile = args.find((a) => a.startsWith('--outputFile='))?.slice('--outputFile='.length);
  if (outputFile === undefined) return;
  const startedAt = Date.now();
  let stopTimer;
  const poll = setInterval(() => {
    let written = false;
    try {
      // Written by this run, not left by an earlier one (a stack phase may run without the runner's reset).
      written = statSync(outputFile).mtimeMs >= startedAt - 1000;
    } catch {
      /* not yet */
    }
    if (!written) return;
    clearInterval(poll);
    stopTimer = setTimeout(() => {
      const run = basename(outputFile).replace(/\.json$/, '');
      console.error(`✖ [${run}] Jest did not exit ${graceMs / 1000} s after its tests ended: a handle a test left open keeps it alive; stopped`);
      writeFileSync(hungMarker(outputFile), `${new Date().toISOString()}\n`);
      stopProcessTree(child.pid);
    }, graceMs);
  }, 1000);
  child.on('close', () => {
    clearInterval(poll);
    clearTimeout(stopTimer);
  });
}

// eslint-disable-next-line no-control-regex -- ANSI colour codes are control characters by definition
const ANSI = /\u001b\[[0-9;]*m/g;
/** Stack frames of Jest, Node and libraries: they say nothing about which check failed. */
const NOISE = /^\s*at .*(node_modules|node:internal|<anonymous>)/;
const clip = (message) => message.replace(ANSI, '').split('\n').filter((line) => line.trim() !== '' && !NOISE.test(line)).slice(0, MESSAGE_LINES).map((line) => `      ${line}`).join('\n');

/** A failure recorded by `recordFailure`: `<run>.failure.txt` beside the Jest runs' results. */
const FAILURE_SUFFIX = '.failure.txt';

/**
 * Records a failure that no Jest run reports: a phase that could not start its suites (the
 * production runtime's function processes), or a check made after them (a path no suite requested).
 * The final summary lists it with the failed tests; without it, the summary of such a run named
 * nothing and only a phase's "failed" said which phase it was.
 */
export function recordFailure(run, message, dir = RESULTS_DIR) {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${run}${FAILURE_SUFFIX}`), `${message}\n`);
}

/** The failures recorded in `dir` so far (Jest runs' and `recordFailure`'s), as printable blocks (empty when none failed). */
export function collectFailures(dir = RESULTS_DIR) {
  if (!existsSync(dir)) return [];
  const blocks = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith(FAILURE_SUFFIX)).sort()) {
    blocks.push(`  ✕ [${file.slice(0, -FAILURE_SUFFIX.length)}] ${clip(readFileSync(join(dir, file), 'utf8')).trimStart()}`);
  }
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.json')).sort()) {
    let results;
    try {
      results = JSON.parse(readFileSync(join(dir, file), 'utf8'));
    } catch {
      continue; // a run stopped before it wrote its results: its own output says why
    }
    const run = file.replace(/\.json$/, '');
    for (const suite of results.testResults ?? []) {
      const path = suite.name.replace(ROOT + '/', '');
      const failed = (suite.assertionResults ?? []).filter((a) => a.status === 'failed');
      for (const assertion of failed) blocks.push(`  ✕ [${run}] ${path} › ${assertion.fullName}\n${clip(assertion.failureMessages.join('\n'))}`);
      // A suite that failed without a failed test: it did not load, or an afterAll threw.
      if (failed.length === 0 && suite.status === 'failed') blocks.push(`  ✕ [${run}] ${path} (the suite itself)\n${clip(suite.message ?? '')}`);
    }
    if (existsSync(hungMarker(join(dir, file)))) {
      blocks.push(`  ✕ [${run}] Jest did not exit ${EXIT_GRACE_MS / 1000} s after its tests ended (a handle a test left open); stopped. Run its suites with --detectOpenHandles to find it.`);
    }
  }
  return blocks;
}

/** Prints every recorded failure under one heading; prints nothing when none failed. */
export function printFailures() {
  const blocks = collectFailures();
  if (blocks.length === 0) return;
  console.log(`\nFailed (${blocks.length}):`);
  for (const block of blocks) console.log(block);
}
