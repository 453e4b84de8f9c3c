#!/usr/bin/env node
/**
 * The phases of `npm test` that need the emulator stack, run by scripts/test.mjs inside
 * `firebase emulators:exec` (which sets the emulators' hosts in the environment):
 *
 * 1. waits for the HTTP functions on the production runtime, which scripts/test.mjs started while the
 *    emulators started (@google-cloud/functions-framework, one process per function, behind a
 *    router that applies firebase.json's rewrites and hands every other path to the Hosting
 *    emulator: scripts/lib/framework.mjs), and checks that they were given the emulator addresses
 *    `emulators:exec` gave this process. The suites call the service
 *    there: what production runs (its body parsing, one instance serving concurrent requests), and
 *    a process per function instead of the Functions emulator's process per concurrent request.
 *    The Functions emulator runs the triggers, and the HTTP functions behind Hosting for the
 *    smoke suite's pass through Hosting (docs/architecture.md#runtimes-emulator-and-production);
 * 2. the `@serial` integration suites, one at a time (scripts/lib/test-suites.mjs), while the static
 *    checks and unit tests still run beside the stack;
 * 3. waits until those checks passed (scripts/test.mjs writes TEST_CHECKS_PASSED_FILE; it stops
 *    this process group if they fail);
 * 4. the other integration suites and the runtime's own (test/framework), in parallel Jest workers
 *    (a full run then fails in scripts/test.mjs if an operation's path got no request).
 *
 * Writes each phase's times to .local/test-logs/stack-phases.json for the runner's summary.
 * Arguments: as scripts/test.mjs (positional ones select suites, flags go to Jest).
 */
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './lib/emulators.mjs';
import { jestResultArgs, recordFailure, stopJestIfItHangs } from './lib/test-results.mjs';
import { STACK_WORKERS, integrationSuites, parseTestArgs, phaseTimer, splitSuites, waitForFile } from './lib/test-suites.mjs';

const { flags, selects } = parseTestArgs(process.argv.slice(2));
const phases = (process.env.TEST_PHASES ?? 'integration').split(',');
/** The run's start (scripts/test.mjs), so that these phases line up with the runner's. */
const origin = Number(process.env.TEST_STARTED_AT ?? Date.now());
const logDir = join(ROOT, '.local', 'test-logs');
const timesFile = join(logDir, 'stack-phases.json');
writeFileSync(timesFile, '[]\n');
const { phase } = phaseTimer(origin, (timeline) => writeFileSync(timesFile, JSON.stringify(timeline, null, 2) + '\n'));

function run(cmd, args, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: ROOT, stdio: 'inherit', env });
    stopJestIfItHangs(child, args);
    child.on('close', (code, signal) => (code === 0 ? resolve() : reject(new Error(`${args.slice(0, 4).join(' ')} ... failed (exit ${code ?? signal})`))));
  });
}

const jest = join(ROOT, 'node_modules', '.bin', 'jest');

/**
 * The router of the production runtime scripts/test.mjs started beside the emulators, once it
 * answers (TEST_RUNTIME_READY_FILE holds its URL). Its processes were given the emulators'
 * addresses before the emulators were up (RUNTIME_EMULATOR_ENV): they must be the ones
 * `emulators:exec` gave this process.
 */
async function productionRuntime() {
  const given = JSON.parse(process.env.RUNTIME_EMULATOR_ENV ?? '{}');
  const differ = Object.entries(given).filter(([name, value]) => process.env[name] !== value);
  if (differ.length > 0) {
    const message = `the production runtime was given other emulator addresses than emulators:exec set: ${differ.map(([name, value]) => `${name}=${value} (exec: ${process.env[name] ?? 'unset'})`).join(', ')}`;
    recordFailure('production-runtime', message);
    throw new Error(message);
  }
  const readyFile = process.env.TEST_RUNTIME_READY_FILE;
  if (readyFile === undefined) throw new Error('TEST_RUNTIME_READY_FILE is not set: run the stack phases with npm test');
  await waitForFile(readyFile);
  const url = readFileSync(readyFile, 'utf8').trim();
  if (url === 'failed') throw new Error('the production runtime did not start (scripts/test.mjs says why)');
  return url;
}

let status = 1;
try {
  const suites = phases.includes('integration') ? integrationSuites().filter(selects) : [];
  // The `@standalone` suites ran from the start of the run, beside the static checks (scripts/test.mjs).
  const { parallel, serial } = splitSuites(suites);
  const checksFile = process.env.TEST_CHECKS_PASSED_FILE;
  const checks = checksFile === undefined ? Promise.resolve() : waitForFile(checksFile);
  let env = process.env;
  if (suites.length > 0) {
    const url = await phase('waiting for the production runtime', () => productionRuntime());
    env = {
      ...process.env,
      API_BASE_URL: url,
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
  status = 0;
} catch (err) {
  console.error(`✗ ${err instanceof Error ? err.message : String(err)}`);
} finally {
  // The runner (scripts/test.mjs) stops the emulators as soon as this file says we are done: their
  // own orderly shutdown takes half a minute and checks nothing.
  writeFileSync(join(logDir, 'stack-done'), `${status}\n`);
}
process.exit(status);
