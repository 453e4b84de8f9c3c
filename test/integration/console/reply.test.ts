/**
 * The console path end to end: an operator signed in with Firebase Auth writes a reply through the
 * Firestore client SDK under the real firestore.rules, and it flows to a notification on the
 * integration's topic, through claim/start/complete, back to the `delivery` mirror the console
 * reads with the same client.
 *
 * Unlike rules.test.ts this uses the MAIN project (the functions' triggers only fire there): the
 * test environment loads the real firestore.rules into it (the same file the emulator started
 * with) and never clears its data.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { initializeTestEnvironment, type RulesTestEnvironment } from '@firebase/rules-unit-testing';
import { addDoc, collection, doc, getDoc, serverTimestamp, updateDoc, type Firestore } from 'firebase/firestore';
import { adminDb, firestoreEmulatorHost, projectId } from '../helpers/stack';
import { eventually, op, sharedConversationFixture, type ConversationSetup } from '../helpers/deliveries';

let env: RulesTestEnvironment;
let setup: ConversationSetup;
const uid = `operator-${randomUUID()}`;

// Registered before the beforeAll below, so `setup` is there when it runs.
sharedConversationFixture((first) => {
  setup = first;
});

beforeAll(async () => {
  const [host, port] = firestoreEmulatorHost().split(':');
  env = await initializeTestEnvironment({
    projectId: projectId(),
    firestore: { rules: readFileSync(join(__dirname, '..', '..', '..', 'firestore.rules'), 'utf8'), host: host ?? '127.0.0.1', port: Number(port) },
  });
  // Provisioning (Admin SDK) makes the signed-in user an operator of the workspace.
  await adminDb().collection('workspaces').doc(setup.integration.workspaceId).collection('members').doc(uid).set({ role: 'operator' });
});

afterAll(async () => {
  await env?.cleanup(); // deletes the client apps only; no clearFirestore() on the main project
});

test('a reply written by a signed-in operator with the client SDK is notified, delivered and mirrored back', async () => {
  const consoleDb = env.authenticatedContext(uid).firestore() as unknown as Firestore;
  const messages = collection(consoleDb, 'workspaces', setup.integration.workspaceId, 'conversations', setup.conversationId, 'messages');
  const reply = await addDoc(messages, { direction: 'outbound', author: { type: 'operator', uid }, text: 'Hello from the console ✓', createdAt: serverTimestamp() });

  const [notification] = await setup.topic.pull(1, 20_000);
  expect(notification).toEqual({
    deliveryId: expect.stringMatching(/^d_/),
    workspaceId: setup.integration.workspaceId,
    integrationId: setup.integration.integrationId,
    conversationId: setup.conversationId,
    messageId: reply.id,
  });
  const deliveryId = notification!.deliveryId;
  const key = setup.integration.key;
  const claim = await op('claim', key, { deliveryId, requestId: randomUUID() });
  expect(claim.body).toMatchObject({ status: 'ready', message: { text: 'Hello from the console ✓', recipient: { externalConversationId: setup.externalConversationId, externalCustomerId: setup.customerId } } });
  const leaseId = (claim.body as { leaseId: string }).leaseId;
  expect((await op('start', key, { deliveryId, leaseId })).body).toEqual({ status: 'sending' });
  expect((await op('complete', key, { deliveryId, leaseId, providerMessageIds: ['prov-1'] })).body).toEqual({ status: 'sent' });

  // The console reads the mirror with its own client, under the rules.
  const mirror = await eventually(async () => {
    const delivery = (await getDoc(doc(messages, reply.id))).get('delivery') as { status?: string } | undefined;
    return delivery?.status === 'sent' ? delivery : undefined;
  }, 'the sent mirror, read by the console');
  expect(mirror).toEqual({
    deliveryId,
    status: 'sent',
    providerMessageIds: ['prov-1'],
    updatedAt: expect.anything(),
    // When it became sent: the window of an edit or unsend counts from it (docs/contract.md#edits-and-unsends).
    sentAt: expect.anything(),
    // The reply's trace id, shown by the console (docs/operations.md#tracing).
    traceId: expect.stringMatching(/^[0-9a-f]{32}$/),
    // The attempt log, as the console shows it (docs/decisions.md#attempt-log).
    attempts: [
      { at: expect.anything(), event: 'claimed' },
      { at: expect.anything(), event: 'started' },
      { at: expect.anything(), event: 'sent' },
    ],
  });

  // And cannot edit it afterwards.
  await expect(updateDoc(doc(messages, reply.id), { text: 'edited' })).rejects.toMatchObject({ code: 'permission-denied' });
});
