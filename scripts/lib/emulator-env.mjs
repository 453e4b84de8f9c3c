/**
 * Makes the official emulators run offline on machines that carry the gcloud SDK.
 *
 * firebase-tools downloads its Java emulators from the internet. Where that is impossible but the
 * gcloud SDK ships the same official emulators (Debian google-cloud-cli-*-emulator packages), we
 * point firebase-tools at them through FIRESTORE_EMULATOR_BINARY_PATH / PUBSUB_EMULATOR_BINARY_PATH.
 * The gcloud Firestore jar has no Main-Class, so we build a tiny launcher jar whose manifest names
 * the main class and puts the gcloud jar on its Class-Path.
 *
 * On an ordinary machine with internet and no gcloud emulators, nothing is overridden and
 * firebase-tools downloads the emulators itself.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

const FIRESTORE_MAIN_CLASS = 'com.google.cloud.datastore.emulator.firestore.CloudFirestore';

function findGcloudSdkRoot() {
  const candidates = [];
  if (process.env.CLOUDSDK_ROOT_DIR) candidates.push(process.env.CLOUDSDK_ROOT_DIR);
  for (const dir of (process.env.PATH ?? '').split(':')) {
    const gcloud = join(dir, 'gcloud');
    if (dir && existsSync(gcloud)) candidates.push(resolve(dirname(realpathSync(gcloud)), '..'));
  }
  candidates.push('/usr/lib/google-cloud-sdk', '/usr/share/google-cloud-sdk', '/opt/google-cloud-sdk');
  return candidates.find((root) => existsSync(join(root, 'platform')));
}

/** True when firebase-tools already has its own downloaded copy of the emulator. */
function firebaseToolsHasDownloaded(prefix) {
  const cache = join(homedir(), '.cache', 'firebase', 'emulators');
  if (!existsSync(cache)) return false;
  return execFileSync('ls', [cache], { encoding: 'utf8' }).split('\n').some((f) => f.startsWith(prefix));
}

function buildFirestoreLauncher(gcloudJar, workDir) {
  const launcher = join(workDir, 'firestore-launcher.jar');
  const stamp = join(workDir, 'firestore-launcher.stamp');
  if (existsSync(launcher) && existsSync(stamp) && readFileSync(stamp, 'utf8') === gcloudJar) return launcher;
  const manifestDir = join(workDir, 'launcher-manifest');
  rmSync(manifestDir, { recursive: true, force: true });
  mkdirSync(manifestDir, { recursive: true });
  const manifest = join(manifestDir, 'MANIFEST.MF');
  // Class-Path entries are URLs relative to the launcher unless absolute (file: URL form).
  writeFileSync(manifest, `Manifest-Version: 1.0\nMain-Class: ${FIRESTORE_MAIN_CLASS}\nClass-Path: file:${gcloudJar}\n\n`);
  rmSync(launcher, { force: true });
  execFileSync('jar', ['cfm', launcher, manifest], { stdio: 'inherit' });
  writeFileSync(stamp, gcloudJar);
  return launcher;
}

/**
 * The Firestore emulator's JVM keeps both compilers but inlines less: the server compiler (C2) then
 * compiles smaller units, and its compile threads were about 40% of the emulator's CPU over a test
 * run (69 of 178 CPU-s, from a flight recording). Two A/B pairs of `TEST_PHASES=integration npm test`
 * runs, each back to back: the emulator 147 against 190 and 156 against 199 CPU-s, every process 684
 * against 731 and 710 against 771 (docs/toolchain.md#emulator-jvm). Set through JDK_JAVA_OPTIONS,
 * which only the `java` launcher reads (firebase-tools starts the emulator with `java ... -jar`, so
 * no other variable reaches its command line).
 */
export const FIRESTORE_EMULATOR_JVM_OPTIONS = '-XX:MaxInlineLevel=6 -XX:FreqInlineSize=100 -XX:InlineSmallCode=1000 -XX:MaxNodeLimit=30000';

/**
 * The Pub/Sub emulator's JVM runs the client compiler (C1) only: its load in a test run is light and
 * spread out (a few hundred publishes and pushes), and C2's warm-up is most of what it costs. On the
 * emulator alone, 600 ordered publishes pulled and acked: 3.5 against 7.0 CPU-s; 3,000: 7.8 against
 * 15.7 (docs/toolchain.md#emulator-jvm). Its launch script (gcloud's, and the copy firebase-tools
 * downloads) adds CLOUD_PUBSUB_EMULATOR_OPTS to its `java` line, after JDK_JAVA_OPTIONS.
 */
export const PUBSUB_EMULATOR_JVM_OPTIONS = '-XX:TieredStopAtLevel=1';

/**
 * The emulators' JVM options as environment variables, each unless the environment already sets it
 * (to anything, even empty: `JDK_JAVA_OPTIONS= npm test` runs the Firestore emulator on the JVM's
 * defaults). JAVA_TOOL_OPTIONS is left alone: every JVM and JDK tool would read it.
 * @param {Record<string, string | undefined>} env
 * @returns {Record<string, string>}
 */
export function emulatorJvmEnv(env = process.env) {
  return {
    ...(env.JDK_JAVA_OPTIONS === undefined ? { JDK_JAVA_OPTIONS: FIRESTORE_EMULATOR_JVM_OPTIONS } : {}),
    ...(env.CLOUD_PUBSUB_EMULATOR_OPTS === undefined ? { CLOUD_PUBSUB_EMULATOR_OPTS: PUBSUB_EMULATOR_JVM_OPTIONS } : {}),
  };
}

/**
 * Returns the environment overrides needed for offline emulators (possibly none).
 * @param {string} workDir where the launcher jar is built (gitignored)
 */
export function offlineEmulatorEnv(workDirArg) {
  const workDir = resolve(workDirArg);
  const env = {};
  if (process.env.FIRESTORE_EMULATOR_BINARY_PATH || process.env.PUBSUB_EMULATOR_BINARY_PATH) return env;
  const sdk = findGcloudSdkRoot();
  if (!sdk) return env;
  mkdirSync(workDir, { recursive: true });
  const firestoreJar = join(sdk, 'platform', 'cloud-firestore-emulator', 'cloud-firestore-emulator.jar');
  if (existsSync(firestoreJar) && !firebaseToolsHasDownloaded('cloud-firestore-emulator')) {
    env.FIRESTORE_EMULATOR_BINARY_PATH = buildFirestoreLauncher(firestoreJar, workDir);
  }
  const pubsub = join(sdk, 'platform', 'pubsub-emulator', 'bin', 'cloud-pubsub-emulator');
  if (existsSync(pubsub) && !firebaseToolsHasDownloaded('pubsub-emulator')) {
    env.PUBSUB_EMULATOR_BINARY_PATH = pubsub;
  }
  return env;
}
