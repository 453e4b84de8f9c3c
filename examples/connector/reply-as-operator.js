#!/usr/bin/env node
/**
 * Local-stack helper (not part of a connector): writes an operator reply into a conversation
 * exactly as the support console does, so the service creates a delivery and notifies the
 * connector. Talks to the Firestore EMULATOR only.
 *
 *   node examples/connector/reply-as-operator.js [--wait] <conversationId> "<reply text>"
 *   node examples/connector/reply-as-operator.js --edit <conversationId> <messageId> "<new text>"
 *   node examples/connector/reply-as-operator.js --unsend <conversationId> <messageId>
 *
 * With --wait it then waits (up to 30 s) until the reply's delivery status, as the console
 * shows it, is final (sent, failed or unknown) and prints it. --edit / --unsend write the
 * console's request on a sent reply (the integration needs `replies.lifecycle`: `npm run desk --
 * capabilities`, docs/cli.md) and wait the same way for the request's entry in the reply's
 * `edits` / `unsends` history.
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
const USAGE = [
  'usage: node examples/connector/reply-as-operator.js [--wait] <conversationId> "<reply text>"',
  '       node examples/connector/reply-as-operator.js --edit <conversationId> <messageId> "<new text>"',
  '       node examples/connector/reply-as-operator.js --unsend <conversationId> <messageId>',
].join('\n');
// --edit / --unsend: a request on a sent reply (always waited for).
const lifecycle = args[0] === '--edit' ? 'edit' : args[0] === '--unsend' ? 'unsend' : undefined;
const wait = args[0] === '--wait' || lifecycle !== undefined;
const [conversationId, second, third] = wait ? args.slice(1) : args;
const messageId = lifecycle === undefined ? undefined : second;
const text = lifecycle === undefined ? second : third;
if (!conversationId || (lifecycle === undefined ? !text : !messageId || (lifecycle === 'edit' && !text))) {
  console.error(USAGE);
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
const FINAL = ['sent', 'failed', 'unknown'];
if (lifecycle !== undefined) {
  // What the console writes (firestore.rules: one request per write, the server's time, the operator's uid).
  const reply = conversation.collection('messages').doc(messageId);
  const before = (await reply.get()).get(lifecycle === 'edit' ? 'edits' : 'unsends')?.length ?? 0;
  const request = { requestedAt: FieldValue.serverTimestamp(), uid: 'example-operator' };
  await reply.update(lifecycle === 'edit' ? { edit: { text, ...request } } : { unsend: request });
  console.log(`[operator] ${lifecycle} of message ${messageId} requested`);
  const deadline = Date.now() + 30_000;
  let entry;
  do {
    await new Promise((resolve) => setTimeout(resolve, 250));
    entry = ((await reply.get()).get(lifecycle === 'edit' ? 'edits' : 'unsends') ?? [])[before];
  } while (!FINAL.includes(entry?.status) && Date.now() < deadline);
  const error = entry?.error ? ` (${entry.error.outcome}: ${entry.error.code})` : '';
  console.log(`[operator] ${lifecycle} delivery ${entry?.deliveryId ?? '(none)'} of message ${messageId}: ${entry?.status ?? 'not taken yet'}${error}`);
  if (!FINAL.includes(entry?.status)) process.exitCode = 1;
  await db.terminate();
  process.exit();
}
const reply = conversation.collection('messages').doc();
await reply.create({ direction: 'outbound', author: { type: 'operator', uid: 'example-operator' }, text, createdAt: FieldValue.serverTimestamp() });
console.log(`[operator] replied in ${conversationId}: message ${reply.id}`);
if (wait) {
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
