#!/usr/bin/env node
/**
 * `npm start`: the whole local stack on the official emulators (offline-capable), seeded with a
 * demo workspace, an integration, its Pub/Sub topic and a pull subscription, and two console users
 * (an admin and an operator). Prints the console URL and logins, the base URL, the integration key
 * and the commands to run the example connector or pull notifications. Ctrl-C stops everything.
 *
 *   npm start                 clean start (default)
 *   npm start -- --persist    keep emulator data in .local/emulator-data between runs
 */
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { BASE_URL, CONSOLE_URL, EMULATORS, HOSTS, PROJECT_ID, REGION, ROOT, buildFunctions, emulatorEnv, firebaseBin, localConfigArgs } from './lib/emulators.mjs';
import { seedDemo, waitForStack } from './lib/seed.mjs';

const persist = process.argv.includes('--persist');
const dataDir = join(ROOT, '.local', 'emulator-data');
const imageDir = join(ROOT, '.local', 'images');
mkdirSync(imageDir, { recursive: true });

console.log('Building functions...');
buildFunctions();

const args = ['emulators:start', ...localConfigArgs(), '--project', PROJECT_ID, '--only', EMULATORS];
if (persist) {
  mkdirSync(dataDir, { recursive: true });
  args.push('--import', dataDir, '--export-on-exit', dataDir);
}
const env = emulatorEnv({ LOCAL_IMAGE_DIR: imageDir });
// detached: its own process group, so one signal reaches firebase-tools and every emulator it spawned.
const child = spawn(firebaseBin(), args, { cwd: ROOT, env, stdio: ['ignore', 'inherit', 'inherit'], detached: true });

let stopping = false;
function stop(signal) {
  if (stopping) return;
  stopping = true;
  console.log(`\nStopping the local stack (${signal})...`);
  try {
    process.kill(-child.pid, 'SIGINT');
  } catch {
    /* already gone */
  }
  // firebase-tools exports data and stops its emulators on SIGINT; force after a grace period.
  setTimeout(() => {
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }, persist ? 30_000 : 10_000).unref();
}
process.on('SIGINT', () => stop('SIGINT'));
process.on('SIGTERM', () => stop('SIGTERM'));
child.on('exit', (code) => {
  process.exit(stopping ? 0 : (code ?? 1));
});

/**
 * The scheduled functions (index.ts `onSchedule`), which the Functions emulator loads but never
 * runs: its Pub/Sub bridge refuses their HTTP signature. The local stack runs them itself every
 * minute, as Cloud Scheduler does in production, through the emulator's trigger route, so that
 * lease expiry, re-notification, unclaimed expiry, the console's integration health, retention
 * (which deletes expired documents itself here: the emulator runs no TTL) and the cleanup of
 * unused reply uploads work here too.
 */
const SCHEDULED_FUNCTIONS = ['sweepDeliveries', 'rollUpIntegrationHealth', 'applyRetention', 'cleanUpUnusedUploads'];
const SCHEDULE_EVERY_MS = 60_000;
const warnedSchedules = new Set();
async function runSchedules() {
  await Promise.all(
    SCHEDULED_FUNCTIONS.map(async (name) => {
      const url = `http://${HOSTS.functions}/functions/projects/${PROJECT_ID}/triggers/${REGION}-${name}-0`;
      try {
        const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
        if (!response.ok) throw new Error(`HTTP ${response.status}`);
      } catch (err) {
        if (warnedSchedules.has(name)) return;
        warnedSchedules.add(name);
        console.warn(`[schedule] could not run ${name} (${err instanceof Error ? err.message : String(err)}); retrying every minute`);
      }
    }),
  );
}

/**
 * Every emulator the stack runs (firebase-tools adds Eventarc and Logging to --only's list) and
 * the hub that coordinates them, for the banner: the address from firebase.json (HOSTS, so a stack
 * on shifted ports prints its own) and, where a client needs one, the variable through which the
 * Admin and Google Cloud SDKs find that emulator.
 */
const EMULATOR_LINES = [
  ['Hosting', HOSTS.hosting, 'the base URL: API and console'],
  ['Functions', HOSTS.functions, ''],
  ['Firestore', HOSTS.firestore, 'FIRESTORE_EMULATOR_HOST'],
  ['Auth', HOSTS.auth, 'FIREBASE_AUTH_EMULATOR_HOST'],
  ['Pub/Sub', HOSTS.pubsub, 'PUBSUB_EMULATOR_HOST'],
  ['Tasks', HOSTS.tasks, 'CLOUD_TASKS_EMULATOR_HOST'],
  ['Eventarc', HOSTS.eventarc, 'CLOUD_EVENTARC_EMULATOR_HOST'],
  ['Logging', HOSTS.logging, ''],
  ['Hub', HOSTS.hub, 'FIREBASE_EMULATOR_HUB'],
];

try {
  await waitForStack(env, 180_000);
  const demo = await seedDemo(env);
  await runSchedules();
  setInterval(() => void runSchedules(), SCHEDULE_EVERY_MS);
  console.log(`
==================================================================
 Local stack is up (project ${PROJECT_ID}, functions in ${REGION})

 Console:          ${CONSOLE_URL}
${demo.logins.map((l) => `   ${l.role.padEnd(9)} ${l.email} / ${l.password}`).join('\n')}
                   (workspace ${demo.workspaceId})

 Base URL:         ${BASE_URL}
 Integration key:  ${demo.key}
                   (workspace ${demo.workspaceId}, integration ${demo.integrationId})
 Topic:            ${demo.topic} (subscription ${demo.subscription})

 Emulators (ports from firebase.json):
${EMULATOR_LINES.map(([name, host, note]) => `   ${name.padEnd(10)} ${host.padEnd(16)} ${note}`.trimEnd()).join('\n')}

 Send a message:
   curl -sS -X POST ${BASE_URL}/v1/messages \\
     -H "Authorization: Bearer ${demo.key}" -H 'Content-Type: application/json' \\
     -d '{"eventId":"evt-1","externalConversationId":"chat-1","sender":{"externalId":"cust-1"},"message":{"text":"Hello"}}'

 Deliver replies written in the console (example connector; it also posts a first message):
   INTEGRATION_KEY=${demo.key} API_BASE_URL=${BASE_URL} \\
     GCLOUD_PROJECT=${PROJECT_ID} PUBSUB_EMULATOR_HOST=${HOSTS.pubsub} SUBSCRIPTION=${demo.subscription} \\
     npm run example:connector

 Pull delivery notifications yourself instead:
   npm run pull -- --subscription ${demo.subscription}

 Scheduled functions (${SCHEDULED_FUNCTIONS.join(', ')}) run every minute.
 Images are stored in ${imageDir} (no Storage emulator offline).
 Ctrl-C stops everything.
==================================================================
`);
} catch (err) {
  console.error(`Local stack failed to start: ${err instanceof Error ? err.message : String(err)}`);
  stop('startup failure');
}
