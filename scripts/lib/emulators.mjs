/** Shared bits of the local stack and the test runner: project, ports, env, build. */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { offlineEmulatorEnv } from './emulator-env.mjs';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const PROJECT_ID = JSON.parse(readFileSync(join(ROOT, '.firebaserc'), 'utf8')).projects.default;
const firebaseJson = JSON.parse(readFileSync(join(ROOT, 'firebase.json'), 'utf8'));
const hostPort = (name) => `${firebaseJson.emulators[name].host}:${firebaseJson.emulators[name].port}`;

export const HOSTS = {
  hosting: hostPort('hosting'),
  functions: hostPort('functions'),
  firestore: hostPort('firestore'),
  pubsub: hostPort('pubsub'),
  hub: hostPort('hub'),
};
export const REGION = 'europe-central2';
export const BASE_URL = `http://${HOSTS.hosting}`;
export const FUNCTIONS_URL = `http://${HOSTS.functions}/${PROJECT_ID}/${REGION}`;
export const EMULATORS = 'functions,firestore,pubsub,hosting,tasks';

/** Everything the emulators and the functions they run need, offline or not. */
export function emulatorEnv(extra = {}) {
  return {
    ...process.env,
    ...offlineEmulatorEnv(join(ROOT, '.emulators')),
    // Make sure every child (firebase-tools, the functions runtime, jest) runs on the Node 22 we install.
    METADATA_SERVER_DETECTION: 'none',
    PATH: `${join(ROOT, 'node_modules', '.bin')}:${process.env.PATH ?? ''}`,
    ...extra,
  };
}

/** The same two steps as `npm run build --workspace functions`: tsc into functions/lib, then the handler bundles. */
export function buildFunctions() {
  execFileSync(join(ROOT, 'node_modules', '.bin', 'tsc'), ['-p', join(ROOT, 'functions', 'tsconfig.json')], { stdio: 'inherit', cwd: ROOT });
  execFileSync(process.execPath, [join(ROOT, 'scripts', 'bundle-functions.mjs')], { stdio: 'inherit', cwd: ROOT });
}

export function firebaseBin() {
  return join(ROOT, 'node_modules', '.bin', 'firebase');
}
