/**
 * Recall before send (docs/decisions.md#recall-before-send-cancel) through the real reply-update trigger, the one delivery
 * transition, outbox and Pub/Sub: the console writes `cancel: { requestedAt, uid }` on an operator
 * reply (firestore.rules allows only that; console/rules.test.ts), the service fails a queued or
 * leased-not-started delivery with `cancelled` (releasing the next reply) or answers `too_late`.
 */
import { FieldValue } from 'firebase-admin/firestore';
import { cancelReply } from '../../../functions/src/deliveries/cancel';
import { adminDb, createTestIntegration } from '../helpers/stack';
import { attemptEvents, claimReady, type ConversationSetup, deliverFully, deliveryDoc, deliveryTestFile, expectApiError, expectOk, expectSent, expectSkip, op, readReply, replyAndNotify, replyAndSequence, setupConversation, sleep, waitForMirror, waitForNotifications } from '../helpers/deliveries';

const file = deliveryTestFile();
let shared: ConversationSetup | undefined;
/** A new conversation in one integration and topic shared by the file (ordering is per conversation). */
async function conversation(): Promise<ConversationSetup> {
  shared ??= await file.ownConversation();
  return setupConversation({ topic: shared.topic, integration: shared.integration });
}

const replyRef = (setup: ConversationSetup, messageId: string) =>
  adminDb().collection('workspaces').doc(setup.integration.workspaceId).collection('conversations').doc(setup.conversationId).collection('messages').doc(messageId);

/** What the console writes (the only other reply field a member may change: console/rules.test.ts). */
async function requestCancel(setup: ConversationSetup, messageId: string): Promise<void> {
  await replyRef(setup, messageId).update({ cancel: { requestedAt: FieldValue.serverTimestamp(), uid: 'operator-1' } });
}

const checkExists = async (deliveryId: string): Promise<boolean> => (await adminDb().collection('deliveryChecks').doc(deliveryId).get()).exists;

test('queued -> failed `cancelled`: the mirror shows it, its liveness check is gone, and the next reply is released and delivered', async () => {
  const setup = await conversation();
  const key = setup.integration.key;
  const first = await replyAndNotify(setup, 'oops, wrong customer');
  const second = await replyAndNotify(setup, 'the right answer');
  await expectSkip(key, second.deliveryId, 'waiting_for_previous');
  expect(await checkExists(first.deliveryId)).toBe(true);

  await requestCancel(setup, first.messageId);
  const mirror = await waitForMirror(setup, first.messageId, (m) => m.status === 'failed');
  expect(mirror).toMatchObject({ deliveryId: first.deliveryId, status: 'failed', error: { outcome: 'failed', code: 'cancelled' }, cancel: { status: 'cancelled' } });
  expect(attemptEvents(mirror)).toEqual(['failed:cancelled']);
  expect(await deliveryDoc(setup, first.deliveryId)).toMatchObject({ status: 'failed', error: { code: 'cancelled' }, cancel: { status: 'cancelled' } });
  expect(await checkExists(first.deliveryId)).toBe(false);
  await expectSkip(key, first.deliveryId, 'already_failed');

  // The second was waiting behind it: woken (a second notification), then delivered.
  await waitForNotifications(setup.topic, second.deliveryId, 2);
  await deliverFully(key, second.deliveryId, ['p-second']);
  await waitForMirror(setup, second.messageId, (m) => m.status === 'sent');
  // Cancelling never came back to the first.
  expect(await notificationsAfter(setup, first.deliveryId)).toBe(1);
});

test('leased, not started -> failed `cancelled`; a start under the old lease is 409 delivery_finished; the next reply is released', async () => {
  const setup = await conversation();
  const key = setup.integration.key;
  const first = await replyAndNotify(setup, 'leased, then recalled');
  const claim = await claimReady(key, first.deliveryId);
  const second = await replyAndSequence(setup, 'after the recalled one');

  await requestCancel(setup, first.messageId);
  const mirror = await waitForMirror(setup, first.messageId, (m) => m.status === 'failed');
  expect(mirror).toMatchObject({ error: { code: 'cancelled' }, cancel: { status: 'cancelled' } });
  expect(attemptEvents(mirror)).toEqual(['claimed', 'failed:cancelled']);
  expectApiError(await op('start', key, { deliveryId: first.deliveryId, leaseId: claim.leaseId }), 409, 'delivery_finished');
  expect(await checkExists(first.deliveryId)).toBe(false);

  expect((await deliveryDoc(setup, second.deliveryId)).head).toBe(true);
  await deliverFully(key, second.deliveryId);
  await waitForMirror(setup, second.messageId, (m) => m.status === 'sent');
});

test('sending -> unchanged, `too_late` on the mirror; the connector completes it; a redelivered trigger writes nothing', async () => {
  const setup = await conversation();
  const key = setup.integration.key;
  const reply = await replyAndNotify(setup, 'already on its way');
  const claim = await claimReady(key, reply.deliveryId);
  expectOk(await op('start', key, { deliveryId: reply.deliveryId, leaseId: claim.leaseId }), { status: 'sending' });

  await requestCancel(setup, reply.messageId);
  const mirror = await waitForMirror(setup, reply.messageId, (m) => m.cancel !== undefined);
  expect(mirror).toMatchObject({ status: 'sending', cancel: { status: 'too_late' } });
  expect(mirror).not.toHaveProperty('error');
  expect(attemptEvents(mirror)).toEqual(['claimed', 'started']);

  // The trigger delivered at least once: the same request again is answered without a write.
  const before = await adminDb().doc(`workspaces/${setup.integration.workspaceId}/deliveries/${reply.deliveryId}`).get();
  const again = await cancelReply(adminDb(), setup.integration.workspaceId, reply.messageId, await readReply(setup, reply.messageId));
  expect(again).toEqual({ kind: 'decided', deliveryId: reply.deliveryId, status: 'too_late', written: false });
  const after = await adminDb().doc(`workspaces/${setup.integration.workspaceId}/deliveries/${reply.deliveryId}`).get();
  expect(after.updateTime?.isEqual(before.updateTime!)).toBe(true);

  expectSent(await op('complete', key, { deliveryId: reply.deliveryId, leaseId: claim.leaseId, providerMessageIds: ['p-1'] }), reply.deliveryId);
  const sent = await waitForMirror(setup, reply.messageId, (m) => m.status === 'sent');
  expect(sent).toMatchObject({ providerMessageIds: ['p-1'], cancel: { status: 'too_late' } });
});

test('a redelivered trigger after a successful cancel keeps `cancelled` and writes nothing', async () => {
  const setup = await conversation();
  const reply = await replyAndSequence(setup, 'recalled once');
  await requestCancel(setup, reply.messageId);
  await waitForMirror(setup, reply.messageId, (m) => m.status === 'failed');
  const again = await cancelReply(adminDb(), setup.integration.workspaceId, reply.messageId, await readReply(setup, reply.messageId));
  expect(again).toEqual({ kind: 'decided', deliveryId: reply.deliveryId, status: 'cancelled', written: false });
});

test('a reply without a delivery (replies disabled): a cancel changes nothing', async () => {
  const integration = await createTestIntegration();
  const setup = await file.ownConversation({ integration });
  const reply = await replyAndSequence(setup, 'nowhere to go');
  const mirror = await waitForMirror(setup, reply.messageId, (m) => m.status === 'failed');
  expect(mirror.error).toEqual({ outcome: 'failed', code: 'replies_disabled' });

  await requestCancel(setup, reply.messageId);
  expect(await cancelReply(adminDb(), setup.integration.workspaceId, reply.messageId, await readReply(setup, reply.messageId))).toEqual({ kind: 'ignored', reason: 'no_delivery' });
  // A negative check (the update trigger writes nothing): no state shows that it ran, so a bounded
  // wait of a few trigger latencies on the emulator (~0.3 s each) stands for "by now".
  await sleep(1_500);
  expect((await readReply(setup, reply.messageId))?.delivery).toEqual(mirror);
});

/** Notifications received so far for one delivery. */
async function notificationsAfter(setup: ConversationSetup, deliveryId: string): Promise<number> {
  // A negative check (no further notification): one outbox publish and its streaming pull take
  // well under this on the emulator; nothing observable marks "none is coming".
  await sleep(500);
  return setup.topic.received.filter((n) => n.deliveryId === deliveryId).length;
}
