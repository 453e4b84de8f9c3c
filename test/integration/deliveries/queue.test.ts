/**
 * The per-conversation ordering map (`deliveryQueues/{conversationId}.pending`, see
 * functions/src/rules/ordering.ts): it holds exactly the unfinished deliveries after every
 * operation, a queue document written before the map existed is rebuilt without losing order,
 * and a later delivery that ends first (its notification could not be published) releases nobody.
 */
import { FieldValue } from 'firebase-admin/firestore';
import { PubSub } from '@google-cloud/pubsub';
import { adminDb, projectId } from '../helpers/stack';
import { claimReady, type ConversationSetup, deliverFully, deliveryDoc, deliveryTestFile, expectOk, expectSent, expectSkip, op, replyAndNotify, waitForMirror, waitForNotifications, writeReply } from '../helpers/deliveries';

// The first test of a run pays the functions' cold starts (about 10 s each on a busy machine).
jest.setTimeout(180_000);

// Each test has an integration and topic of its own (the last one deletes its topic).
const { ownConversation: conversation } = deliveryTestFile();

const queueRef = (setup: ConversationSetup) =>
  adminDb().collection('workspaces').doc(setup.integration.workspaceId).collection('deliveryQueues').doc(setup.conversationId);

/** The stored `pending` map (undefined when the field is absent). */
async function pending(setup: ConversationSetup): Promise<unknown> {
  return (await queueRef(setup).get()).get('pending') as unknown;
}

test('pending holds exactly the unfinished deliveries of the conversation after each operation', async () => {
  const setup = await conversation();
  const key = setup.integration.key;
  const a = await replyAndNotify(setup, 'A');
  const b = await replyAndNotify(setup, 'B');
  const c = await replyAndNotify(setup, 'C');
  expect(await pending(setup)).toEqual({ '1': a.deliveryId, '2': b.deliveryId, '3': c.deliveryId });

  await deliverFully(key, a.deliveryId);
  expect(await pending(setup)).toEqual({ '2': b.deliveryId, '3': c.deliveryId });

  const claimB = await claimReady(key, b.deliveryId);
  // A lease is not an end: B stays pending.
  expect(await pending(setup)).toEqual({ '2': b.deliveryId, '3': c.deliveryId });
  expectSent(await op('fail', key, { deliveryId: b.deliveryId, leaseId: claimB.leaseId, outcome: 'failed', code: 'recipient_blocked' }), b.deliveryId, 'failed');
  expect(await pending(setup)).toEqual({ '3': c.deliveryId });

  const claimC = await claimReady(key, c.deliveryId);
  expectOk(await op('start', key, { deliveryId: c.deliveryId, leaseId: claimC.leaseId }), { status: 'sending' });
  expectSent(await op('fail', key, { deliveryId: c.deliveryId, leaseId: claimC.leaseId, outcome: 'unknown', code: 'provider_timeout' }), c.deliveryId, 'unknown');
  expect(await pending(setup)).toEqual({});
});

test('a queue document without `pending` (written before the map existed) is rebuilt in the transaction that finds it; order holds', async () => {
  const setup = await conversation();
  const key = setup.integration.key;
  const a = await replyAndNotify(setup, 'A');
  const b = await replyAndNotify(setup, 'B');
  const claimA = await claimReady(key, a.deliveryId);
  await queueRef(setup).update({ pending: FieldValue.delete() });
  expect(await pending(setup)).toBeUndefined();

  // B must still wait for A: the claim rebuilds the map from the deliveries and writes it back.
  await expectSkip(key, b.deliveryId, 'waiting_for_previous');
  expect(await pending(setup)).toEqual({ '1': a.deliveryId, '2': b.deliveryId });

  // Completing A wakes B (a second notification), and B is then ready.
  expectOk(await op('start', key, { deliveryId: a.deliveryId, leaseId: claimA.leaseId }), { status: 'sending' });
  expectSent(await op('complete', key, { deliveryId: a.deliveryId, leaseId: claimA.leaseId, providerMessageIds: ['pa'] }), a.deliveryId);
  await waitForNotifications(setup.topic, b.deliveryId, 2);
  expect(await pending(setup)).toEqual({ '2': b.deliveryId });

  // A rebuild by the reply trigger: the next reply's sequencing finds the map gone again.
  await queueRef(setup).update({ pending: FieldValue.delete() });
  const c = await replyAndNotify(setup, 'C');
  expect(await pending(setup)).toEqual({ '2': b.deliveryId, '3': c.deliveryId });
  await expectSkip(key, c.deliveryId, 'waiting_for_previous');
  await deliverFully(key, b.deliveryId);
  await deliverFully(key, c.deliveryId);
  expect(await pending(setup)).toEqual({});
});

test('a later delivery that fails first (topic deleted) leaves the map; the earlier one is still delivered and releases nobody', async () => {
  const setup = await conversation();
  const key = setup.integration.key;
  const a = await replyAndNotify(setup, 'A');
  const claimA = await claimReady(key, a.deliveryId);

  // The owner deletes the topic: B's notification cannot be published, so B fails on its own
  // while A (earlier, leased) is unfinished.
  const pubsub = new PubSub({ projectId: projectId() });
  try {
    await pubsub.topic(setup.topic.topicPath).delete();
  } finally {
    await pubsub.close();
  }
  const bReply = await writeReply(setup, 'B');
  const mirrorB = await waitForMirror(setup, bReply, (m) => m.status === 'failed');
  expect(mirrorB).toMatchObject({ error: { outcome: 'failed', code: 'topic_not_found' } });
  expect(await pending(setup)).toEqual({ '1': a.deliveryId });

  expectOk(await op('start', key, { deliveryId: a.deliveryId, leaseId: claimA.leaseId }), { status: 'sending' });
  expectSent(await op('complete', key, { deliveryId: a.deliveryId, leaseId: claimA.leaseId, providerMessageIds: ['pa'] }), a.deliveryId);
  expect(await pending(setup)).toEqual({});
  // B is untouched by A's end: still failed, not woken.
  expect(await deliveryDoc(setup, mirrorB.deliveryId as string)).toMatchObject({ status: 'failed', waiting: false });
});
