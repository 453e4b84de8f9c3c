#!/usr/bin/env node
/**
 * The framework phase of `npm test`: the HTTP contract suites again, this time against the
 * production runtime. Runs inside `firebase emulators:exec` (scripts/test.mjs), after the
 * emulator phase, so the Firestore and Pub/Sub emulators (and the emulated triggers that create
 * deliveries) are up.
 *
 * Each HTTP function is served by Google's functions framework in its own process with
 * NODE_ENV=production (scripts/lib/framework.mjs), behind a small router that applies
 * firebase.json's Hosting rewrites. The suites run unchanged with API_BASE_URL pointing at that
 * router: those the operation catalogue lists for each operation (functions/src/operations.ts
 * `suites`), plus the runtime's own below; test/framework/ adds what only this runtime can show
 * (deadlines with injected hangs, a missing image bucket). A full run fails when an operation's
 * path got no request through the router: every operation is served on this runtime too.
 *
 * With FRAMEWORK_RUN_GATE and FRAMEWORK_SERIAL_GATE (file paths; scripts/test-stack.mjs sets them)
 * the processes start at once, the parallel suites wait until the first file exists and the
 * @serial suites until the second does.
 *
 * Positional arguments filter the suites (regular expressions, like Jest's); arguments that start
 * with '-' are passed to Jest.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './lib/emulators.mjs';
import { frameworkSuites, hostingRewrites, startFunction, startRouter } from './lib/framework.mjs';
import { jestResultArgs, recordFailure, stopJestIfItHangs } from './lib/test-results.mjs';
import { STACK_WORKERS, parseTestArgs, splitSerial, waitForFile } from './lib/test-suites.mjs';

const FRAMEWORK_SUITES = frameworkSuites();

const ROUTER_PORT = Number(process.env.FRAMEWORK_ROUTER_PORT ?? 5200);
const { flags, filters, selects } = parseTestArgs(process.argv.slice(2));
const suites = FRAMEWORK_SUITES.filter(selects);
const missing = suites.filter((s) => !existsSync(join(ROOT, s)));
if (missing.length > 0) throw new Error(`framework phase: no such suite: ${missing.join(', ')}`);
if (suites.length === 0) {
  console.log('▶ framework phase: no suite matches the filter; skipped');
  process.exit(0);
}

console.log(`▶ framework phase: ${suites.length} suites on @google-cloud/functions-framework (NODE_ENV=production)`);
const logDir = join(ROOT, '.local', 'test-logs');
const functionEnv = {
  IMAGE_STORE: 'local',
  ...(process.env.TEST_IMAGE_DIR ? { LOCAL_IMAGE_DIR: process.env.TEST_IMAGE_DIR } : {}),
};
const rewrites = hostingRewrites();
const functions = [];
let router;
let status = 1;
try {
  // All at once: each process spends its start-up loading modules, and one at a time that was
  // twelve start-ups in a row.
  const started = await Promise.allSettled(
    rewrites.map(({ target }, i) => startFunction({ target, port: ROUTER_PORT + 1 + i, env: functionEnv, logFile: join(logDir, `framework-${target}.log`) })),
  );
  for (const result of started) if (result.status === 'fulfilled') functions.push(result.value);
  const failed = started.find((result) => result.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
  router = await startRouter({ port: ROUTER_PORT, routes: rewrites.map((r, i) => ({ path: r.path, url: functions[i].url })) });
  const requested = new Map(rewrites.map((r) => [r.path, 0]));
  router.onRequest((path) => requested.set(path, (requested.get(path) ?? 0) + 1));
  const messagesUrl = functions[rewrites.findIndex((r) => r.target === 'messages')].url;
  const env = {
    ...process.env,
    API_BASE_URL: router.url,
    // The one direct call of the suites (`${functionsUrl()}/messages`): the framework serves its function on every path.
    FUNCTIONS_URL: messagesUrl,
    TEST_RUNTIME: 'framework',
  };
  // Started early by scripts/test-stack.mjs: the processes come up while the integration phase
  // still runs. The parallel suites wait for its @serial suites to be over (they then run beside
  // its parallel ones), the @serial suites here for the whole integration phase to be over.
  const waitFor = async (gate, what) => {
    if (gate === undefined || existsSync(gate)) return;
    console.log(`▶ framework phase: waiting for ${what}`);
    await waitForFile(gate);
  };
  // Asynchronous: the router lives in this process, so its event loop must keep running.
  const jest = (args) =>
    new Promise((resolve) => {
      const child = spawn(join(ROOT, 'node_modules', '.bin', 'jest'), ['--selectProjects', 'integration', 'framework', ...args, ...flags], { cwd: ROOT, stdio: 'inherit', env });
      stopJestIfItHangs(child, args);
      child.on('close', (code) => resolve(code ?? 1));
    });
  // As in the integration phase (scripts/lib/test-suites.mjs): parallel workers, then the @serial suites alone.
  const { parallel, serial } = splitSerial(suites);
  await waitFor(process.env.FRAMEWORK_RUN_GATE, "the integration phase's @serial suites");
  status = parallel.length > 0 ? await jest([`--maxWorkers=${STACK_WORKERS}`, ...jestResultArgs('framework'), '--runTestsByPath', ...parallel]) : 0;
  if (status === 0 && serial.length > 0) {
    await waitFor(process.env.FRAMEWORK_SERIAL_GATE, 'the integration phase to end');
    status = await jest(['--runInBand', ...jestResultArgs('framework-serial'), '--runTestsByPath', ...serial]);
  }
  const unserved = [...requested].filter(([, count]) => count === 0).map(([path]) => path);
  if (filters.length === 0 && status === 0 && unserved.length > 0) {
    const message = `no suite requested ${unserved.join(', ')} on the framework: list a suite that calls it in the operation's catalogue entry (functions/src/operations.ts)`;
    console.error(`✖ framework phase: ${message}`);
    recordFailure('framework', message);
    status = 1;
  }
} catch (err) {
  // Before or between its Jest runs (a function process that did not start, the router): no
  // Jest result says so, hence the record for the final summary.
  const message = `could not run its suites: ${err instanceof Error ? err.message : String(err)}`;
  console.error(`✖ framework phase: ${message}`);
  recordFailure('framework', message);
  status = 1;
} finally {
  await router?.close();
  await Promise.all(functions.map((f) => f.stop()));
}
process.exit(status);
