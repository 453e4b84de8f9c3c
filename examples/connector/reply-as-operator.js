#!/usr/bin/env node
/**
 * Local-stack helper (not part of a connector): writes an operator reply into a conversation
 * exactly as the support console does, so the service creates a delivery and notifies the
 * connector. Talks to the Firestore EMULATOR only.
 *
 *   node examples/connector/reply-as-operator.js [--wait] <conversationId> "<reply text>"
 *
 * With --wait it then waits (up to 30 s) until the reply's delivery status, as the console
 * shows it, is final (sent, failed or unknown) and prints it.
 *
 * Text only, written with admin rights as a fixed operator. For the console's own writes under
 * the rules (a signed-in operator), with files, cancel, resend and the integration's capabilities,
 * use the desk CLI: `npm run desk -- reply <conversationId> --text "..." --file <path>`
 * (docs/cli.md).
 *
 * Environment: FIRESTORE_EMULATOR_HOST and GCLOUD_PROJECT (default: the local stack's, from the
 * repository's firebase.json and .firebaserc), WORKSPACE_ID (default demo-workspace, the
 * workspace `npm start` seeds).
 */
import { initializeApp } from 'firebase-admin/app';
import { FieldValue, getFirestore } from 'firebase-admin/firestore';
import { localStack } from './local-stack.js';

const args = process.argv.slice(2);
const wait = args[0] === '--wait';
const [conversationId, text] = wait ? args.slice(1) : args;
if (!conversationId || !text) {
  console.error('usage: node examples/connector/reply-as-operator.js [--wait] <conversationId> "<reply text>"');
  process.exit(2);
}
// The local stack's Firestore emulator and project, from the repository's firebase.json / .firebaserc.
const stack = localStack();
if (stack !== undefined) process.env.FIRESTORE_EMULATOR_HOST ??= stack.firestoreEmulatorHost;
if (!process.env.FIRESTORE_EMULATOR_HOST) {
  console.error('FIRESTORE_EMULATOR_HOST is required (no local stack to default to): this helper only writes to the emulator');
  process.exit(2);
}
// No GCP metadata server next to the emulators: skip the auth library's lookup (and its warning).
process.env.METADATA_SERVER_DETECTION ??= 'none';
const projectId = process.env.GCLOUD_PROJECT ?? stack?.projectId ?? 'demo-support-desk';
const workspaceId = process.env.WORKSPACE_ID ?? 'demo-workspace';

const db = getFirestore(initializeApp({ projectId }));
const conversation = db.collection('workspaces').doc(workspaceId).collection('conversations').doc(conversationId);
if (!(await conversation.get()).exists) {
  console.error(`no conversation ${conversationId} in workspace ${workspaceId} (Firestore emulator ${process.env.FIRESTORE_EMULATOR_HOST})`);
  process.exit(1);
}
const reply = conversation.collection('messages').doc();
await reply.create({ direction: 'outbound', author: { type: 'operator', uid: 'example-operator' }, text, createdAt: FieldValue.serverTimestamp() });
console.log(`[operator] replied in ${conversationId}: message ${reply.id}`);
if (wait) {
  const FINAL = ['sent', 'failed', 'unknown'];
  const deadline = Date.now() + 30_000;
  let delivery;
  do {
    await new Promise((resolve) => setTimeout(resolve, 250));
    delivery = (await reply.get()).get('delivery');
  } while (!FINAL.includes(delivery?.status) && Date.now() < deadline);
  const details = [delivery?.providerMessageIds?.length ? `provider ids ${delivery.providerMessageIds.join(', ')}` : '', delivery?.error ? `${delivery.error.outcome}: ${delivery.error.code}` : '']
    .filter(Boolean)
    .join('; ');
  console.log(`[operator] delivery ${delivery?.deliveryId ?? '(none yet)'} of message ${reply.id}: ${delivery?.status ?? 'not created'}${details ? ` (${details})` : ''}`);
  if (!FINAL.includes(delivery?.status)) process.exitCode = 1;
}
await db.terminate();
