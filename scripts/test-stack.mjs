#!/usr/bin/env node
/**
 * The phases of `npm test` that need the emulator stack, run by scripts/test.mjs inside
 * `firebase emulators:exec` (which sets the emulators' hosts in the environment):
 *
 * 1. the HTTP functions start on the production runtime (@google-cloud/functions-framework, one
 *    process per function, behind a router that applies firebase.json's rewrites and hands every
 *    other path to the Hosting emulator: scripts/lib/framework.mjs). The suites call the service
 *    there: what production runs (its body parsing, one instance serving concurrent requests), and
 *    a process per function instead of the Functions emulator's process per concurrent request.
 *    The Functions emulator runs the triggers, and the HTTP functions behind Hosting for the
 *    smoke suite's pass through Hosting (docs/architecture.md#runtimes-emulator-and-production);
 * 2. the `@serial` integration suites, one at a time (scripts/lib/test-suites.mjs), while the static
 *    checks and unit tests still run beside the stack; from the start, beside all of it, the
 *    `@own-project` suites (in Firestore projects of their own), one at a time at the checks' niceness;
 * 3. waits until those checks passed (scripts/test.mjs writes TEST_CHECKS_PASSED_FILE; it stops
 *    this process group if they fail);
 * 4. the other integration suites and the runtime's own (test/framework), in parallel Jest workers;
 *    a full run then fails if an operation's path got no request.
 *
 * Writes each phase's times to .local/test-logs/stack-phases.json for the runner's summary.
 * Arguments: as scripts/test.mjs (positional ones select suites, flags go to Jest).
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './lib/emulators.mjs';
import { startProductionRuntime } from './lib/framework.mjs';
import { jestResultArgs, recordFailure, stopJestIfItHangs } from './lib/test-results.mjs';
import { STACK_WORKERS, checkNiceness, integrationSuites, nicedCommand, parseTestArgs, phaseTimer, splitSuites, waitForFile } from './lib/test-suites.mjs';

/** The router's port; the function processes take the ports above it. */
const ROUTER_PORT = Number(process.env.FRAMEWORK_ROUTER_PORT ?? 5200);

const { flags, filters, selects } = parseTestArgs(process.argv.slice(2));
const phases = (process.env.TEST_PHASES ?? 'integration').split(',');
/** The run's start (scripts/test.mjs), so that these phases line up with the runner's. */
const origin = Number(process.env.TEST_STARTED_AT ?? Date.now());
const logDir = join(ROOT, '.local', 'test-logs');
const timesFile = join(logDir, 'stack-phases.json');
writeFileSync(timesFile, '[]\n');
const { phase } = phaseTimer(origin, (timeline) => writeFileSync(timesFile, JSON.stringify(timeline, null, 2) + '\n'));

/** Runs `cmd args` to completion with inherited output; rejects on a non-zero exit. `nice`: its niceness (`nicedCommand`). */
function run(cmd, args, env, nice = 0) {
  return new Promise((resolve, reject) => {
    const [file, argv] = nicedCommand(cmd, args, nice);
    const child = spawn(file, argv, { cwd: ROOT, stdio: 'inherit', env });
    stopJestIfItHangs(child, args);
    child.on('close', (code, signal) => (code === 0 ? resolve() : reject(new Error(`${args.slice(0, 4).join(' ')} ... failed (exit ${code ?? signal})`))));
  });
}

const jest = join(ROOT, 'node_modules', '.bin', 'jest');
/** The `@own-project` suites' niceness: the static checks' (scripts/test.mjs validated it before starting this file). */
const OWN_PROJECT_NICENESS = checkNiceness();

let runtime;
let status = 1;
try {
  const suites = phases.includes('integration') ? integrationSuites().filter(selects) : [];
  // The `@standalone` suites ran from the start of the run, beside the static checks (scripts/test.mjs).
  const { parallel, serial, ownProject } = splitSuites(suites);
  const checksFile = process.env.TEST_CHECKS_PASSED_FILE;
  const checks = checksFile === undefined ? Promise.resolve() : waitForFile(checksFile);
  // The `@own-project` suites (the rules suites, in Firestore projects of their own) from now until
  // they are done, beside everything else: at the static checks' niceness, they take what the
  // stack, the checks and the unit tests leave of the two cores (the @serial suites' tail mostly
  // waits, with a core idle for 10-20 s) instead of a parallel worker's share later.
  const ownProjectRun =
    ownProject.length === 0
      ? Promise.resolve()
      : phase(`integration: ${ownProject.length} @own-project suites, one at a time at nice ${OWN_PROJECT_NICENESS}`, () =>
          run(jest, ['--selectProjects', 'integration', '--runInBand', ...jestResultArgs('integration-own-project'), '--runTestsByPath', ...ownProject, ...flags], process.env, OWN_PROJECT_NICENESS),
        );
  // Awaited after the parallel lane; a failure is reported then, and stops nothing before.
  ownProjectRun.catch(() => undefined);
  let env = process.env;
  if (suites.length > 0) {
    runtime = await phase('production runtime starting (functions-framework)', () =>
      startProductionRuntime({
        port: ROUTER_PORT,
        env: { IMAGE_STORE: 'local', ...(process.env.TEST_IMAGE_DIR ? { LOCAL_IMAGE_DIR: process.env.TEST_IMAGE_DIR } : {}) },
        // Into the stack's output, so into EMULATOR_LOG_FILE, where the suites that read the
        // service's log lines look: marked as the Functions emulator marks its functions' lines.
        echo: (line) => process.stdout.write(`>  ${line}\n`),
        fallback: process.env.API_BASE_URL,
      }).catch((err) => {
        // Before any Jest run: no Jest result would name it in the final summary.
        recordFailure('production-runtime', `could not start: ${err instanceof Error ? err.message : String(err)}`);
        throw err;
      }),
    );
    env = {
      ...process.env,
      API_BASE_URL: runtime.url,
      // The Hosting emulator (and behind it the Functions emulator's HTTP functions): the smoke suite's second pass.
      HOSTING_URL: process.env.API_BASE_URL,
    };
  }
  // The @serial suites first, while the static checks and unit tests still run beside them: they
  // mostly wait (the soak's half-minute of traffic, the sweeper's clock), and on a fresh database the
  // jobs that scan every workspace (the health roll-up) have little to scan. They share nothing with
  // the checks, which only read the tree.
  if (serial.length > 0) {
    await phase(`integration: ${serial.length} @serial suites, one at a time`, () =>
      run(jest, ['--selectProjects', 'integration', 'framework', '--runInBand', ...jestResultArgs('integration-serial'), '--runTestsByPath', ...serial, ...flags], env),
    );
  }
  await phase('waiting for the static checks, unit tests and @standalone suites', () => checks);
  if (parallel.length > 0) {
    await phase(`integration: ${parallel.length} suites, ${STACK_WORKERS} workers`, () =>
      run(jest, ['--selectProjects', 'integration', 'framework', `--maxWorkers=${STACK_WORKERS}`, ...jestResultArgs('integration'), '--runTestsByPath', ...parallel, ...flags], env),
    );
  }
  await ownProjectRun;
  // Every operation is served on the production runtime: a full run in which one of firebase.json's
  // rewrites got no request has lost the suite that calls it.
  const unserved = runtime?.unserved() ?? [];
  if (filters.length === 0 && unserved.length > 0) {
    const message = `no suite requested ${unserved.join(', ')}: the operation's suites (functions/src/operations.ts) no longer call it`;
    recordFailure('integration', message);
    throw new Error(message);
  }
  status = 0;
} catch (err) {
  console.error(`✗ ${err instanceof Error ? err.message : String(err)}`);
} finally {
  await runtime?.stop();
  // The runner (scripts/test.mjs) stops the emulators as soon as this file says we are done: their
  // own orderly shutdown takes half a minute and checks nothing.
  writeFileSync(join(logDir, 'stack-done'), `${status}\n`);
}
process.exit(status);
