/**
 * Where the local stack (`npm start`) listens: read from this repository's firebase.json and
 * .firebaserc, the files the stack itself starts from, so that the example follows a stack moved
 * to other ports instead of talking to whatever owns the usual ones. Outside the repository (a
 * copy of the example) there is no stack to default to: `undefined`, and the caller asks for the
 * environment variables instead.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * `{ apiBaseUrl, pubsubEmulatorHost, firestoreEmulatorHost, projectId }` of the local stack, or
 * undefined when this is not a checkout of the repository.
 * @param {string} root the repository root (tests pass another one)
 */
export function localStack(root = REPO_ROOT) {
  let emulators;
  let projectId;
  try {
    emulators = JSON.parse(readFileSync(join(root, 'firebase.json'), 'utf8')).emulators;
    projectId = JSON.parse(readFileSync(join(root, '.firebaserc'), 'utf8')).projects.default;
  } catch {
    return undefined;
  }
  const host = (name) => {
    const e = emulators?.[name];
    return e && typeof e.host === 'string' && Number.isInteger(e.port) ? `${e.host}:${e.port}` : undefined;
  };
  const hosting = host('hosting');
  const pubsub = host('pubsub');
  const firestore = host('firestore');
  if (hosting === undefined || pubsub === undefined || firestore === undefined || typeof projectId !== 'string') return undefined;
  return { apiBaseUrl: `http://${hosting}`, pubsubEmulatorHost: pubsub, firestoreEmulatorHost: firestore, projectId };
}
