#!/usr/bin/env node
/**
 * `npm test`: type check, lint, unit tests, then the integration suites against the official
 * emulators (real HTTP through Hosting and the Functions emulator), then the HTTP contract suites
 * again on the production runtime (functions framework, scripts/framework-phase.mjs). Fails on
 * any failure. Extra arguments are passed to every Jest run (e.g. `npm test -- -t duplicate`).
 */
import { spawn, spawnSync } from 'node:child_process';
import { createWriteStream, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { BASE_URL, EMULATORS, FUNCTIONS_URL, PROJECT_ID, ROOT, buildFunctions, emulatorEnv, firebaseBin } from './lib/emulators.mjs';

const extra = process.argv.slice(2);
const bin = (name) => join(ROOT, 'node_modules', '.bin', name);
const run = (cmd, args, env = process.env) => {
  const result = spawnSync(cmd, args, { cwd: ROOT, stdio: 'inherit', env });
  if (result.status !== 0) {
    console.error(`\n✗ ${[cmd.replace(ROOT + '/', ''), ...args].join(' ')} failed (exit ${result.status ?? result.signal})`);
    process.exit(result.status || 1);
  }
};

// TEST_PHASES=integration (or framework, or integration,framework) skips the static checks and
// unit tests (quicker local iterations); the default, and CI, runs everything.
const phases = (process.env.TEST_PHASES ?? 'static,unit,integration,framework').split(',');
console.log('▶ build');
buildFunctions();
// The SDK's dist: the example connector (examples/connector) runs on the built package.
run(bin('tsc'), ['-p', join(ROOT, 'sdk', 'tsconfig.build.json')]);
if (phases.includes('static')) {
  console.log('▶ type check');
  run(bin('tsc'), ['-p', 'tsconfig.json', '--noEmit']);
  // The console (console/src) is browser code: its own tsconfig with the DOM library.
  run(bin('tsc'), ['-p', join('console', 'tsconfig.json')]);
  console.log('▶ lint');
  run(bin('eslint'), ['.']);
}
if (phases.includes('unit')) {
  console.log('▶ unit tests');
  run(bin('jest'), ['--selectProjects', 'unit', ...extra]);
}
if (!phases.includes('integration') && !phases.includes('framework')) process.exit(0);

console.log('▶ integration tests (official emulators), then the framework phase');
const imageDir = join(ROOT, '.local', 'test-images');
rmSync(imageDir, { recursive: true, force: true });
mkdirSync(imageDir, { recursive: true });
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
});
const quote = (args) => args.map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(' ');
const commands = [];
if (phases.includes('integration')) commands.push(quote([bin('jest'), '--selectProjects', 'integration', '--runInBand', ...extra]));
if (phases.includes('framework')) commands.push(quote([process.execPath, join(ROOT, 'scripts', 'framework-phase.mjs'), ...extra]));

// Everything `emulators:exec` prints (the emulators, the functions' logs, Jest) is shown as usual
// and also written to EMULATOR_LOG_FILE, so the security suite can check that no key material
// ever reaches a log (test/integration/reliability/security.test.ts reads it while it runs).
const logDir = join(ROOT, '.local', 'test-logs');
mkdirSync(logDir, { recursive: true });
env.EMULATOR_LOG_FILE = join(logDir, 'emulators.log');
const log = createWriteStream(env.EMULATOR_LOG_FILE, { flags: 'w' });
const child = spawn(firebaseBin(), ['emulators:exec', '--project', PROJECT_ID, '--only', EMULATORS, commands.join(' && ')], { cwd: ROOT, env, stdio: ['inherit', 'pipe', 'pipe'] });
for (const [from, to] of [[child.stdout, process.stdout], [child.stderr, process.stderr]]) {
  from.on('data', (chunk) => {
    to.write(chunk);
    log.write(chunk);
  });
}
const [code, signal] = await new Promise((resolve) => child.on('close', (c, s) => resolve([c, s])));
await new Promise((resolve) => log.end(resolve));
if (code !== 0) {
  console.error(`\n✗ firebase emulators:exec failed (exit ${code ?? signal}); its output is in ${env.EMULATOR_LOG_FILE.replace(ROOT + '/', '')}`);
  process.exit(code || 1);
}

// The monitoring's log filters against the lines the whole integration phase captured
// (test/monitoring/filters.test.ts, docs/operations.md#monitoring): a renamed log field fails
// here. Only after a full integration phase: a run limited to some suites (extra arguments)
// captures only some of the lines the filters must match.
if (phases.includes('integration') && extra.length === 0) {
  console.log('▶ monitoring filters against the captured log lines');
  run(bin('jest'), ['--selectProjects', 'monitoring'], { ...process.env, EMULATOR_LOG_FILE: env.EMULATOR_LOG_FILE });
}
