/**
 * Operator resend (docs/decisions.md#operator-resend) through the real reply-update trigger, outbox and Pub/Sub: the
 * console writes `resend: { requestedAt, uid }` on a failed/unknown reply (firestore.rules allows
 * only that; console/rules.test.ts), the service creates a new delivery at the end of the
 * conversation's queue and mirrors it with the previous outcome kept.
 */
import { FieldValue } from 'firebase-admin/firestore';
import { resendReply } from '../../../functions/src/deliveries/resend';
import { adminDb } from '../helpers/stack';
import { attemptEvents, claimReady, conversationDeliveries, type ConversationSetup, deliverFully, deliveryDoc, eventually, expectOk, expectSent, expectSkip, op, replyAndNotify, sharedConversationFixture, waitForMirror, waitForNotifications } from '../helpers/deliveries';

const { conversation } = sharedConversationFixture();

const replyRef = (setup: ConversationSetup, messageId: string) =>
  adminDb().collection('workspaces').doc(setup.integration.workspaceId).collection('conversations').doc(setup.conversationId).collection('messages').doc(messageId);

/** What the console writes (the only reply field a member may change: console/rules.test.ts). */
async function requestResend(setup: ConversationSetup, messageId: string): Promise<void> {
  await replyRef(setup, messageId).update({ resend: { requestedAt: FieldValue.serverTimestamp(), uid: 'operator-1' } });
}

/** A reply whose delivery the connector failed for good. */
async function failedReply(setup: ConversationSetup, text: string): Promise<{ messageId: string; deliveryId: string }> {
  const reply = await replyAndNotify(setup, text);
  const claim = await claimReady(setup.integration.key, reply.deliveryId);
  expectOk(await op('start', setup.integration.key, { deliveryId: reply.deliveryId, leaseId: claim.leaseId }), { status: 'sending' });
  expectSent(await op('fail', setup.integration.key, { deliveryId: reply.deliveryId, leaseId: claim.leaseId, outcome: 'failed', code: 'recipient_blocked' }), reply.deliveryId, 'failed');
  await waitForMirror(setup, reply.messageId, (m) => m.status === 'failed');
  return reply;
}

test('failed -> resend: a new delivery is notified and sent; the previous one is kept (record and delivery.previous); a second request does nothing', async () => {
  const setup = await conversation();
  const key = setup.integration.key;
  const first = await failedReply(setup, 'blocked the first time');

  await requestResend(setup, first.messageId);
  const mirror = await waitForMirror(setup, first.messageId, (m) => m.deliveryId !== first.deliveryId);
  const resentId = mirror.deliveryId as string;
  expect(mirror).toMatchObject({
    status: 'queued',
    previous: { deliveryId: first.deliveryId, status: 'failed', error: { outcome: 'failed', code: 'recipient_blocked' } },
  });
  expect(attemptEvents(mirror.previous)).toEqual(['claimed', 'started', 'failed:recipient_blocked']);
  expect(mirror.attempts).toBeUndefined();
  // The new delivery: same text, next seq of the conversation, notified like any other.
  const resent = await deliveryDoc(setup, resentId);
  const previous = await deliveryDoc(setup, first.deliveryId);
  expect(resent).toMatchObject({ messageId: first.messageId, text: 'blocked the first time', status: 'queued', seq: previous.seq + 1, attempts: 0, head: true });
  expect(previous).toMatchObject({ status: 'failed', error: { code: 'recipient_blocked' } });
  await waitForNotifications(setup.topic, resentId, 1);

  // A second request while the resend is unfinished (two clicks, or a retried trigger): nothing.
  await requestResend(setup, first.messageId);
  expect(await resendReply(adminDb(), setup.integration.workspaceId, setup.conversationId, first.messageId)).toEqual({ kind: 'ignored', reason: 'not_finished' });

  await deliverFully(key, resentId, ['p-resent']);
  const sent = await waitForMirror(setup, first.messageId, (m) => m.status === 'sent');
  expect(sent).toMatchObject({ deliveryId: resentId, providerMessageIds: ['p-resent'], previous: { deliveryId: first.deliveryId, status: 'failed' } });
  expect(attemptEvents(sent)).toEqual(['claimed', 'started', 'sent']);
  // Exactly two deliveries for the reply; the first stays failed, and a late claim of it is skipped.
  expect((await conversationDeliveries(setup)).filter((d) => d.messageId === first.messageId).map((d) => [d.deliveryId, d.status])).toEqual([
    [first.deliveryId, 'failed'],
    [resentId, 'sent'],
  ]);
  await expectSkip(key, first.deliveryId, 'already_failed');
  // A request after it was sent does nothing either.
  expect(await resendReply(adminDb(), setup.integration.workspaceId, setup.conversationId, first.messageId)).toEqual({ kind: 'ignored', reason: 'not_finished' });
});

test('the resent delivery joins the end of the queue: it waits for a later reply that is still in progress', async () => {
  const setup = await conversation();
  const key = setup.integration.key;
  const first = await failedReply(setup, 'first, failed');
  const second = await replyAndNotify(setup, 'second, in progress');
  const claimSecond = await claimReady(key, second.deliveryId);

  await requestResend(setup, first.messageId);
  const resentId = (await waitForMirror(setup, first.messageId, (m) => m.deliveryId !== first.deliveryId)).deliveryId as string;
  expect((await deliveryDoc(setup, resentId)).head).toBeUndefined();
  await waitForNotifications(setup.topic, resentId, 1);
  await expectSkip(key, resentId, 'waiting_for_previous');

  expectOk(await op('start', key, { deliveryId: second.deliveryId, leaseId: claimSecond.leaseId }), { status: 'sending' });
  expectSent(await op('complete', key, { deliveryId: second.deliveryId, leaseId: claimSecond.leaseId, providerMessageIds: ['p-2'] }), second.deliveryId);
  // Woken by the second's completion, then delivered.
  await waitForNotifications(setup.topic, resentId, 2);
  await deliverFully(key, resentId);
  await waitForMirror(setup, first.messageId, (m) => m.status === 'sent' && m.deliveryId === resentId);
});

test('an unknown outcome may be resent too; a retried trigger for the same request creates nothing more', async () => {
  const setup = await conversation();
  const key = setup.integration.key;
  const reply = await replyAndNotify(setup, 'timed out at the provider');
  const claim = await claimReady(key, reply.deliveryId);
  expectOk(await op('start', key, { deliveryId: reply.deliveryId, leaseId: claim.leaseId }), { status: 'sending' });
  expectSent(await op('fail', key, { deliveryId: reply.deliveryId, leaseId: claim.leaseId, outcome: 'unknown', code: 'provider_timeout' }), reply.deliveryId, 'unknown');
  await waitForMirror(setup, reply.messageId, (m) => m.status === 'unknown');

  await requestResend(setup, reply.messageId);
  const mirror = await waitForMirror(setup, reply.messageId, (m) => m.deliveryId !== reply.deliveryId);
  expect(mirror.previous).toMatchObject({ deliveryId: reply.deliveryId, status: 'unknown', error: { outcome: 'unknown', code: 'provider_timeout' } });
  // The trigger delivered at least once: running the same request again finds the resend done.
  const again = await resendReply(adminDb(), setup.integration.workspaceId, setup.conversationId, reply.messageId);
  expect(again).toEqual({ kind: 'ignored', reason: 'not_finished' });
  await eventually(async () => ((await conversationDeliveries(setup)).length === 2 ? true : undefined), 'two deliveries for the reply');
  expect((await conversationDeliveries(setup)).map((d) => d.status)).toEqual(['unknown', 'queued']);
});
