/** Readiness probe and demo seeding for the local stack (talks to the emulators only). */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { BASE_URL, HOSTS, PROJECT_ID, ROOT } from './emulators.mjs';

const require = createRequire(import.meta.url);
export const DEMO = {
  workspaceId: 'demo-workspace',
  integrationId: 'demo-connector',
  topicName: 'connector-notifications',
  subscriptionName: 'connector-notifications-pull',
  // Console logins (Auth emulator only; local demo passwords, never a real account).
  users: [
    { email: 'admin@demo.test', password: 'demo-admin-password', role: 'admin' },
    { email: 'operator@demo.test', password: 'demo-operator-password', role: 'operator' },
  ],
};

/**
 * Creates an email/password user on the Auth emulator (or finds the existing one, with persisted
 * data) and returns its uid. The emulator accepts any API key.
 */
async function emulatorUser(email, password) {
  const base = `http://${HOSTS.auth}/identitytoolkit.googleapis.com/v1/accounts`;
  const call = async (op) => {
    const res = await fetch(`${base}:${op}?key=local-emulator-api-key`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ email, password, returnSecureToken: true }),
    });
    return { ok: res.ok, body: await res.json() };
  };
  let result = await call('signUp');
  if (!result.ok && result.body?.error?.message === 'EMAIL_EXISTS') result = await call('signInWithPassword');
  if (!result.ok) throw new Error(`Auth emulator: cannot create ${email}: ${JSON.stringify(result.body?.error ?? result.body)}`);
  return result.body.localId;
}

/** Points this process's Google clients at the emulators. */
export function useEmulators() {
  process.env.FIRESTORE_EMULATOR_HOST ??= HOSTS.firestore;
  process.env.PUBSUB_EMULATOR_HOST ??= HOSTS.pubsub;
  process.env.GCLOUD_PROJECT ??= PROJECT_ID;
  // No metadata server locally: skip the lookup (and its warnings) in the Google auth library.
  process.env.METADATA_SERVER_DETECTION ??= 'none';
}

/** Waits until the API answers through Hosting with our JSON envelope (functions loaded). */
export async function waitForStack(_env, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer yet';
  while (Date.now() < deadline) {
    try {
      const res = await fetch(`${BASE_URL}/v1/messages`, { method: 'POST', signal: AbortSignal.timeout(5000) });
      const body = await res.text();
      if (res.status === 401 && body.includes('"invalid_key"')) return;
      last = `HTTP ${res.status}`;
    } catch (err) {
      last = err instanceof Error ? err.message : String(err);
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
  throw new Error(`the API did not come up within ${timeoutMs / 1000}s (${last})`);
}

/** Creates (or re-keys) the demo integration and its topic + pull subscription. */
export async function seedDemo() {
  useEmulators();
  const { initializeApp, getApps } = require('firebase-admin/app');
  const { getFirestore } = require('firebase-admin/firestore');
  const { PubSub } = require('@google-cloud/pubsub');
  const adminOps = require(join(ROOT, 'functions', 'lib', 'integrations', 'admin.js'));
  if (getApps().length === 0) initializeApp({ projectId: PROJECT_ID });
  const db = getFirestore();

  const pubsub = new PubSub({ projectId: PROJECT_ID });
  const topic = pubsub.topic(DEMO.topicName);
  const [topicExists] = await topic.exists();
  if (!topicExists) await topic.create();
  const subscription = topic.subscription(DEMO.subscriptionName);
  const [subExists] = await subscription.exists();
  if (!subExists) await subscription.create();
  const topicPath = `projects/${PROJECT_ID}/topics/${DEMO.topicName}`;

  await db.collection('workspaces').doc(DEMO.workspaceId).set({ name: 'Demo workspace' }, { merge: true });
  let issued;
  try {
    issued = await adminOps.createIntegration(db, {
      workspaceId: DEMO.workspaceId,
      integrationId: DEMO.integrationId,
      name: 'Demo connector',
      topic: topicPath,
      createdBy: 'local-stack',
      keyPrefix: 'sdk_test_',
    });
  } catch (err) {
    // ALREADY_EXISTS (persisted data): issue a fresh key and revoke the old one.
    if (err?.code !== 6) throw err;
    issued = await adminOps.rotateKey(db, DEMO.workspaceId, DEMO.integrationId, 'sdk_test_', 0);
  }
  await pubsub.close();

  // Console users: an Auth account each and their membership (provisioning, Admin SDK).
  const logins = [];
  for (const user of DEMO.users) {
    const uid = await emulatorUser(user.email, user.password);
    await db.collection('workspaces').doc(DEMO.workspaceId).collection('members').doc(uid).set({ role: user.role, email: user.email });
    logins.push({ ...user, uid });
  }
  return { ...issued, topic: topicPath, subscription: DEMO.subscriptionName, logins };
}
