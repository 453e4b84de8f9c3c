#!/usr/bin/env node
/**
 * The phases of `npm test` that need the emulator stack, run by scripts/test.mjs inside
 * `firebase emulators:exec` (which sets the emulators' hosts in the environment):
 *
 * 1. the `@serial` integration suites, one at a time (scripts/lib/test-suites.mjs), while the static
 *    checks and unit tests still run beside the stack;
 * 2. waits until those checks passed (scripts/test.mjs writes TEST_CHECKS_PASSED_FILE; it stops
 *    this process group if they fail);
 * 3. the other integration suites, in parallel Jest workers;
 * 4. the framework phase (scripts/framework-phase.mjs): the HTTP suites on the production runtime;
 *    its function processes start once the checks passed, its parallel suites beside step 3, its
 *    @serial suites once step 3 is over.
 *
 * Writes each phase's times to .local/test-logs/stack-phases.json for the runner's summary.
 * Arguments: as scripts/test.mjs (positional ones select suites, flags go to Jest).
 */
import { spawn } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './lib/emulators.mjs';
import { jestResultArgs, stopJestIfItHangs } from './lib/test-results.mjs';
import { STACK_WORKERS, integrationSuites, parseTestArgs, phaseTimer, splitSerial, waitForFile } from './lib/test-suites.mjs';

const { flags, selects } = parseTestArgs(process.argv.slice(2));
const phases = (process.env.TEST_PHASES ?? 'integration,framework').split(',');
/** The run's start (scripts/test.mjs), so that these phases line up with the runner's. */
const origin = Number(process.env.TEST_STARTED_AT ?? Date.now());
const logDir = join(ROOT, '.local', 'test-logs');
const timesFile = join(logDir, 'stack-phases.json');
writeFileSync(timesFile, '[]\n');
const { phase } = phaseTimer(origin, (timeline) => writeFileSync(timesFile, JSON.stringify(timeline, null, 2) + '\n'));

function run(cmd, args) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: ROOT, stdio: 'inherit', env: process.env });
    stopJestIfItHangs(child, args);
    child.on('close', (code, signal) => (code === 0 ? resolve() : reject(new Error(`${args.slice(0, 4).join(' ')} ... failed (exit ${code ?? signal})`))));
  });
}

const jest = join(ROOT, 'node_modules', '.bin', 'jest');

/** The framework phase's gates: its parallel suites wait for the first, its @serial ones for the second. */
const frameworkGate = join(logDir, 'framework-gate');
const frameworkSerialGate = join(logDir, 'framework-serial-gate');
for (const gate of [frameworkGate, frameworkSerialGate]) rmSync(gate, { force: true });

let framework;
let status = 1;
try {
  const { parallel, serial } = phases.includes('integration') ? splitSerial(integrationSuites().filter(selects)) : { parallel: [], serial: [] };
  const checksFile = process.env.TEST_CHECKS_PASSED_FILE;
  const checks = checksFile === undefined ? Promise.resolve() : waitForFile(checksFile);
  // The framework phase's function processes start as soon as the checks passed, beside the
  // @serial suites' tail: twelve Node processes loading their code, which would otherwise be on
  // the critical path. They serve nothing until its gates open.
  if (phases.includes('framework')) {
    framework = checks.then(() => {
      console.log('▶ framework phase: starting its functions');
      return new Promise((resolve) => {
        const child = spawn(process.execPath, [join(ROOT, 'scripts', 'framework-phase.mjs'), ...process.argv.slice(2)], { cwd: ROOT, stdio: 'inherit', env: { ...process.env, FRAMEWORK_RUN_GATE: frameworkGate, FRAMEWORK_SERIAL_GATE: frameworkSerialGate } });
        child.on('close', (code) => resolve({ code: code ?? 1 }));
      });
    });
  }
  // The @serial suites first, while the static checks and unit tests still run beside them: they
  // mostly wait (the soak's minute of traffic, the sweeper's clock), and on a fresh database the
  // jobs that scan every workspace (the health roll-up) have little to scan. They share nothing with
  // the checks, which only read the tree.
  if (serial.length > 0) {
    await phase(`integration: ${serial.length} @serial suites, one at a time`, () => run(jest, ['--selectProjects', 'integration', '--runInBand', ...jestResultArgs('integration-serial'), '--runTestsByPath', ...serial, ...flags]));
  }
  await phase('waiting for the static checks and unit tests', () => checks);
  // The framework phase's parallel suites run beside the integration phase's: both kinds share the
  // stack by design, and together they fill the time both spend waiting on the emulators.
  writeFileSync(frameworkGate, '');
  if (parallel.length > 0) {
    await phase(`integration: ${parallel.length} suites, ${STACK_WORKERS} workers`, () =>
      run(jest, ['--selectProjects', 'integration', `--maxWorkers=${STACK_WORKERS}`, ...jestResultArgs('integration'), '--runTestsByPath', ...parallel, ...flags]),
    );
  }
  writeFileSync(frameworkSerialGate, '');
  if (framework !== undefined) {
    await phase('framework phase (rest of its suites)', async () => {
      const { code } = await framework;
      if (code !== 0) throw new Error(`framework phase failed (exit ${code})`);
    });
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
