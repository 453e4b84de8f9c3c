/** Shared bits of the local stack and the test runner: project, ports, env, build. */
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { emulatorJvmEnv, offlineEmulatorEnv } from './emulator-env.mjs';
import { writeLocalFirebaseConfig } from './local-firebase-config.mjs';
import { REGION } from './region.cjs';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const PROJECT_ID = JSON.parse(readFileSync(join(ROOT, '.firebaserc'), 'utf8')).projects.default;
const firebaseJson = JSON.parse(readFileSync(join(ROOT, 'firebase.json'), 'utf8'));
const hostPort = (name) => `${firebaseJson.emulators[name].host}:${firebaseJson.emulators[name].port}`;

export const HOSTS = {
  hosting: hostPort('hosting'),
  functions: hostPort('functions'),
  firestore: hostPort('firestore'),
  auth: hostPort('auth'),
  pubsub: hostPort('pubsub'),
  tasks: hostPort('tasks'),
  // Not named by --only: firebase-tools starts these two beside the Functions emulator.
  eventarc: hostPort('eventarc'),
  logging: hostPort('logging'),
  hub: hostPort('hub'),
};
/** The functions' region (functions/src/platform/region.ts, read by ./region.cjs). */
export { REGION };
export const BASE_URL = `http://${HOSTS.hosting}`;
export const FUNCTIONS_URL = `http://${HOSTS.functions}/${PROJECT_ID}/${REGION}`;
/** The service's emulators (what the bench runs: it does not need the console's sign-in). */
export const SERVICE_EMULATORS = 'functions,firestore,pubsub,hosting,tasks';
/** The local stack and the tests: the service plus the Auth emulator the console signs in with. */
export const EMULATORS = `${SERVICE_EMULATORS},auth`;
/** The workspace console, served by Hosting next to the API. */
export const CONSOLE_URL = `${BASE_URL}/console/`;

/** Everything the emulators and the functions they run need, offline or not. */
export function emulatorEnv(extra = {}) {
  return {
    ...process.env,
    ...offlineEmulatorEnv(join(ROOT, '.emulators')),
    ...emulatorJvmEnv(),
    // Make sure every child (firebase-tools, the functions runtime, jest) runs on the Node 22 we install.
    METADATA_SERVER_DETECTION: 'none',
    PATH: `${join(ROOT, 'node_modules', '.bin')}:${process.env.PATH ?? ''}`,
    ...extra,
  };
}

/**
 * The functions build, the same two steps as `npm run build --workspace functions`: tsc into
 * `libDir`, then the handler bundles into `libDir/bundles` (with `typeCheck: false`, tsc only emits). The one build the tests, the local
 * stack and the bench (which builds into its own directory) share. It also builds the console
 * bundle Hosting serves at /console/ (scripts/build-console.mjs), so every stack serves the
 * current console.
 */
export function buildFunctions(libDir = join(ROOT, 'functions', 'lib'), { typeCheck = true } = {}) {
  execFileSync(process.execPath, [join(ROOT, 'scripts', 'build-console.mjs')], { stdio: 'inherit', cwd: ROOT });
  // From nothing: a module left over from an earlier layout would otherwise be deployed and loadable.
  rmSync(libDir, { recursive: true, force: true });
  // `typeCheck: false` (npm test, whose static phase type-checks functions/src with everything else)
  // only emits: the type check is most of tsc's time.
  const tscArgs = ['-p', join(ROOT, 'functions', 'tsconfig.json'), '--outDir', libDir, ...(typeCheck ? [] : ['--noCheck'])];
  execFileSync(join(ROOT, 'node_modules', '.bin', 'tsc'), tscArgs, { stdio: 'inherit', cwd: ROOT });
  execFileSync(process.execPath, [join(ROOT, 'scripts', 'bundle-functions.mjs'), libDir], { stdio: 'inherit', cwd: ROOT });
}

/**
 * `--config firebase.local.json`, the file written now: firebase.json with the emulators' origins
 * in the console's Content-Security-Policy, which the deployed firebase.json does not allow
 * (./local-firebase-config.mjs). For every `firebase emulators:*` that serves the console.
 */
export function localConfigArgs() {
  return writeLocalFirebaseConfig(ROOT, firebaseJson);
}

export function firebaseBin() {
  return join(ROOT, 'node_modules', '.bin', 'firebase');
}
