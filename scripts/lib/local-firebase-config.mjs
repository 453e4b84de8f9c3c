/**
 * The Firebase configuration of the local stack: firebase.json with the emulators' origins added
 * to the console's Content-Security-Policy, and nothing else changed.
 *
 * WHY two configurations: served from 127.0.0.1/localhost, the console talks to the Auth,
 * Firestore and Functions emulators, each on a port of its own (console/src/firebase.ts), so its
 * policy must allow `connect-src http://127.0.0.1:<port>`. The deployed console must not: a
 * production policy that allows local origins lets a page script (an injected one included) reach
 * whatever listens on the operator's machine. firebase.json is what `firebase deploy` serves, so it
 * holds the strict policy; `npm start` and `npm test` start the emulators with `--config` on the
 * file written here (firebase.local.json, git-ignored, next to firebase.json because firebase-tools
 * resolves every path in a config from the config's directory).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The file name of the local configuration, in the repository's root. */
const LOCAL_FIREBASE_CONFIG = 'firebase.local.json';

/** The emulators the console itself reaches from the browser (console/src/firebase.ts). */
const CONSOLE_EMULATORS = ['auth', 'firestore', 'functions'];

/** `http://<host>:<port>` for each emulator the console reaches, under both names of the loopback host. */
export function emulatorOrigins(firebaseJson) {
  const origins = [];
  for (const name of CONSOLE_EMULATORS) {
    const emulator = firebaseJson.emulators?.[name];
    if (!emulator?.port) throw new Error(`firebase.json: emulators.${name}.port is missing`);
    // The console names the emulators by the host it was loaded from: 127.0.0.1 or localhost.
    for (const host of ['127.0.0.1', 'localhost']) origins.push(`http://${host}:${emulator.port}`);
  }
  return origins;
}

/** `policy` with `sources` appended to its `connect-src` directive (which it must have). */
export function withConnectSources(policy, sources) {
  const directives = policy.split(';').map((d) => d.trim());
  const i = directives.findIndex((d) => d.startsWith('connect-src '));
  if (i < 0) throw new Error(`no connect-src in the Content-Security-Policy "${policy}"`);
  directives[i] = [directives[i], ...sources].join(' ');
  return directives.join('; ');
}

/** The Content-Security-Policy values of firebase.json's Hosting headers. */
export function contentSecurityPolicies(firebaseJson) {
  return (firebaseJson.hosting?.headers ?? []).flatMap((rule) => rule.headers.filter((h) => h.key === 'Content-Security-Policy').map((h) => h.value));
}

/** firebase.json as the local stack serves it: every policy with a connect-src also allows the emulators. */
export function localFirebaseConfig(firebaseJson) {
  const origins = emulatorOrigins(firebaseJson);
  const headers = (firebaseJson.hosting?.headers ?? []).map((rule) => ({
    ...rule,
    headers: rule.headers.map((h) => (h.key === 'Content-Security-Policy' && /(^|;\s*)connect-src /.test(h.value) ? { ...h, value: withConnectSources(h.value, origins) } : h)),
  }));
  return { ...firebaseJson, hosting: { ...firebaseJson.hosting, headers } };
}

/** Writes the local configuration into `root`; the arguments that make firebase-tools use it. */
export function writeLocalFirebaseConfig(root, firebaseJson) {
  writeFileSync(join(root, LOCAL_FIREBASE_CONFIG), `${JSON.stringify(localFirebaseConfig(firebaseJson), null, 2)}\n`);
  return ['--config', LOCAL_FIREBASE_CONFIG];
}
