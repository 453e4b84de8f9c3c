/**
 * At-least-once events (test/integration/reliability/README.md): every trigger and every Pub/Sub message may come twice, late
 * or never, and the service must still deliver each reply once, in order.
 *
 *  - the reply trigger delivered twice and out of order: `sequenceAndPublish` (the trigger's work)
 *    run in-process for every reply of a conversation, twice each, concurrently and in reverse
 *    order, also racing the real trigger: one delivery per reply, seq in reply order;
 *  - Pub/Sub duplicates: one notification processed by several connectors at once and again
 *    later, including a real redelivery through the topic: the provider is called once;
 *  - a topic deleted between two publishes: the first reply was notified and is still delivered;
 *    the second is recorded `topic_not_found` (delivery and reply mirror) instead of blocking the
 *    conversation; a later reply, once the topic exists again, is delivered without waiting;
 *  - a retry whose re-notification is lost (its Cloud Task is due in an hour and never runs
 *    here): the sweeper, run in-process with a clock past the due time, finds the outbox entry
 *    and publishes it, once.
 *
 * @serial runs the global sweeper as of an hour ahead: it would expire, re-notify and publish every other suite's deliveries
 */
import { randomUUID } from 'node:crypto';
import { FieldValue } from 'firebase-admin/firestore';
import { PubSub } from '@google-cloud/pubsub';
import { deliveryIdFor } from '../../../functions/src/platform/ids';
import { OUTBOX_STALE_AFTER_MS, sweep } from '../../../functions/src/deliveries/sweep';
import { OUTBOX } from '../../../functions/src/deliveries/store';
import { toApiError } from '../../../functions/src/platform/http/respond';
import { sequenceAndPublish } from '../../../functions/src/deliveries/sequencing';
import { ConnectorClient, type ProcessDeliveryResult } from '../../../sdk/src/index';
import { adminDb, apiBaseUrl, createTestIntegration, integrationRef, projectId } from '../helpers/stack';
import {
  conversationDeliveries,
  createTestTopic,
  deliveryDoc,
  deliveryDocRef,
  deliveryTestFile,
  eventually,
  mirrorOnceStatus,
  notificationsFor,
  replyAndNotify,
  replyAndSequence,
  sleep,
  waitForMirror,
  waitForNotifications,
  type ConversationSetup,
  listenTo,
} from '../helpers/deliveries';

/**
 * One run of the reply trigger, as the platform runs it (`retry: true`): a run that fails with a
 * transient error (the emulator aborts or drops contended transactions: ten runs race here) is
 * run again; anything else fails the test.
 */
async function triggerRun(workspaceId: string, conversationId: string, messageId: string): ReturnType<typeof sequenceAndPublish> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await sequenceAndPublish(adminDb(), workspaceId, conversationId, messageId);
    } catch (err) {
      if (toApiError(err).unexpected || attempt >= 5) throw err;
      await sleep(200 * attempt);
    }
  }
}
import { countingProvider, expectNoKeyMaterialInLogs } from './support';

jest.setTimeout(120_000);

const file = deliveryTestFile();
let pubsub: PubSub;
beforeAll(() => {
  pubsub = file.track(new PubSub({ projectId: projectId() }));
});

const keys = new Set<string>();
async function conversation(options: Parameters<typeof file.ownConversation>[0] = {}): Promise<ConversationSetup> {
  const setup = await file.ownConversation(options);
  keys.add(setup.integration.key);
  return setup;
}

const connector = (key: string, retry = 3): ConnectorClient =>
  new ConnectorClient({ integrationKey: key, baseUrl: apiBaseUrl(), timeoutMs: 20_000, retry: { limit: retry }, sleep: async () => undefined });

const messagesOf = (setup: ConversationSetup) =>
  adminDb().collection('workspaces').doc(setup.integration.workspaceId).collection('conversations').doc(setup.conversationId).collection('messages');

/** Delivers every delivery of a conversation with one connector, oldest first, and returns the texts the provider got, in order. */
async function deliverAll(setup: ConversationSetup, expected: number): Promise<string[]> {
  const provider = countingProvider();
  for (let round = 0; round < expected * 3; round++) {
    const pending = (await conversationDeliveries(setup)).filter((d) => !['sent', 'failed', 'unknown'].includes(d.status as string));
    if (pending.length === 0) break;
    // Try them newest first: later ones must be skipped (waiting_for_previous) until their turn.
    for (const d of [...pending].reverse()) await connector(setup.integration.key, 0).processDelivery(d.deliveryId as string, provider.send).catch(() => undefined);
  }
  expect(provider.maxCallsPerLease()).toBeLessThanOrEqual(1);
  return provider.calls.map((c) => c.text);
}

test('the reply trigger twice and out of order: 5 replies sequenced by 10 concurrent runs in reverse order -> one delivery each, seq in reply order, one notification each', async () => {
  const setup = await conversation();
  // Written invisible to the trigger (it reacts to new outbound messages only), then made replies:
  // this test decides when, how often and in which order "the trigger" runs.
  const refs = Array.from({ length: 5 }, () => messagesOf(setup).doc());
  for (const [i, ref] of refs.entries()) {
    await ref.create({ direction: 'draft', author: { type: 'operator', uid: 'operator-1' }, text: `reply ${i + 1}`, createdAt: FieldValue.serverTimestamp() });
  }
  for (const ref of refs) await ref.update({ direction: 'outbound' });
  const ids = refs.map((r) => r.id);
  const ws = setup.integration.workspaceId;

  const runs = [...ids].reverse().flatMap((id) => [id, id]);
  const results = await Promise.all(runs.map((id) => triggerRun(ws, setup.conversationId, id)));
  const created = results.flatMap((r) => r.created);
  expect(results.flatMap((r) => r.rejected)).toEqual([]);
  // Every delivery was created exactly once, whichever run won.
  expect([...created].sort()).toEqual(ids.map((id) => deliveryIdFor(setup.conversationId, id)).sort());

  const deliveries = await conversationDeliveries(setup);
  expect(deliveries.map((d) => [d.messageId, d.seq])).toEqual(ids.map((id, i) => [id, i + 1]));
  for (const id of ids) await waitForNotifications(setup.topic, deliveryIdFor(setup.conversationId, id), 1);
  // A negative check (no second notification of any): bounded, a few publish latencies.
  await sleep(1_500);
  for (const id of ids) expect(notificationsFor(setup.topic, deliveryIdFor(setup.conversationId, id))).toHaveLength(1);

  // And they go out in reply order, whatever order the connector tries them in.
  expect(await deliverAll(setup, 5)).toEqual(['reply 1', 'reply 2', 'reply 3', 'reply 4', 'reply 5']);
});

test('the real trigger racing duplicated, reversed in-process runs: 4 replies written back to back -> still one delivery each, in reply order', async () => {
  const setup = await conversation();
  const ids: string[] = [];
  for (let i = 1; i <= 4; i++) {
    const ref = messagesOf(setup).doc();
    await ref.create({ direction: 'outbound', author: { type: 'operator', uid: 'operator-1' }, text: `raced ${i}`, createdAt: FieldValue.serverTimestamp() });
    ids.push(ref.id);
  }
  const ws = setup.integration.workspaceId;
  await Promise.all([...ids].reverse().flatMap((id) => [triggerRun(ws, setup.conversationId, id), triggerRun(ws, setup.conversationId, id)]));
  for (const id of ids) await waitForMirror(setup, id);
  const deliveries = await eventually(async () => {
    const all = await conversationDeliveries(setup);
    return all.length >= 4 ? all : undefined;
  }, 'four deliveries');
  // A negative check (no fifth, duplicate delivery from a late trigger run): bounded.
  await sleep(1_000);
  expect((await conversationDeliveries(setup)).map((d) => [d.messageId, d.seq])).toEqual(ids.map((id, i) => [id, i + 1]));
  expect(deliveries).toHaveLength(4);
  for (const id of ids) await waitForNotifications(setup.topic, deliveryIdFor(setup.conversationId, id), 1);
  // A negative check (no second notification of any): bounded, a few publish latencies.
  await sleep(1_000);
  for (const id of ids) expect(notificationsFor(setup.topic, deliveryIdFor(setup.conversationId, id))).toHaveLength(1);
});

test('Pub/Sub duplicates: one notification processed by 6 connectors at once, then redelivered through the topic -> the provider is called once', async () => {
  const setup = await conversation();
  const { deliveryId, messageId } = await replyAndNotify(setup, 'exactly one send, please');
  const [notification] = notificationsFor(setup.topic, deliveryId);
  const provider = countingProvider(async (input) => {
    await sleep(300); // a slow provider widens the race
    return [`p-${input.leaseId.slice(-6)}`];
  });
  const outcomes = await Promise.all(
    Array.from({ length: 6 }, () =>
      // A busy lease is not retried: processDelivery returns it as skipped (the service notifies again).
      connector(setup.integration.key)
        .processDelivery(notification as { deliveryId: string }, provider.send)
        .then(
          (r: ProcessDeliveryResult) => (r.kind === 'skipped' ? `skipped ${r.reason}` : r.kind),
          (err: { code?: string }) => `error ${err.code ?? String(err)}`,
        ),
    ),
  );
  expect(outcomes.filter((o) => o === 'sent')).toHaveLength(1);
  // The others were told the delivery is leased (skipped: lease_busy), or already sent: none sent it.
  expect(outcomes.every((o) => ['sent', 'already_finished', 'skipped lease_busy'].includes(o))).toBe(true);
  expect(provider.callsFor(deliveryId)).toBe(1);

  // Pub/Sub redelivers the same message later: a real duplicate through the topic.
  await pubsub.topic(setup.topic.topicPath).publishMessage({ json: notification });
  const [, duplicate] = await waitForNotifications(setup.topic, deliveryId, 2);
  expect(duplicate).toEqual(notification);
  const late = await Promise.all([0, 1].map(() => connector(setup.integration.key).processDelivery(duplicate as { deliveryId: string }, provider.send)));
  expect(late.map((r) => r.kind)).toEqual(['already_finished', 'already_finished']);
  expect(late.map((r) => (r as { reason: string }).reason)).toEqual(['already_sent', 'already_sent']);
  expect(provider.callsFor(deliveryId)).toBe(1);
  expect(await deliveryDoc(setup, deliveryId)).toMatchObject({ status: 'sent', attempts: 1 });
  await mirrorOnceStatus(setup, messageId, 'sent');
});

test('a topic deleted between two publishes: reply 1 (notified) is still delivered, reply 2 is recorded topic_not_found, a later reply is not blocked', async () => {
  const topic = file.track(await createTestTopic());
  const integration = await createTestIntegration({ topic: topic.topicPath });
  const setup = await conversation({ topic, integration });
  const first = await replyAndNotify(setup, 'first, notified before the topic vanished');

  await pubsub.topic(topic.topicPath).delete();
  const secondId = await writeReplyText(setup, 'second, published to a deleted topic');
  const mirror = await waitForMirror(setup, secondId, (m) => m.status === 'failed');
  expect(mirror).toMatchObject({ status: 'failed', error: { outcome: 'failed', code: 'topic_not_found' } });
  const secondDelivery = await deliveryDoc(setup, mirror.deliveryId as string);
  expect(secondDelivery).toMatchObject({ status: 'failed', error: { outcome: 'failed', code: 'topic_not_found' }, seq: 2 });
  // Recorded, not retried forever: no outbox entry is left for it.
  expect((await adminDb().collection(OUTBOX).where('deliveryId', '==', mirror.deliveryId).get()).size).toBe(0);

  // Reply 1 is not held up by the failure of reply 2.
  const provider = countingProvider();
  expect(await connector(setup.integration.key).processDelivery(first.deliveryId, provider.send)).toMatchObject({ kind: 'sent' });

  // The owner recreates the topic; the console asks for a re-check by removing the status.
  const [recreated] = await pubsub.createTopic(topic.topicPath.split('/').pop() as string);
  const [subscription] = await recreated.createSubscription(`resub-${randomUUID()}`);
  const received: Array<{ deliveryId: string }> = [];
  const listening = listenTo(subscription, (m) => {
    received.push(JSON.parse(m.data.toString('utf8')) as { deliveryId: string });
    m.ack();
  });
  try {
    await integrationRef(integration.workspaceId, integration.integrationId).update({
      'replies.topicStatus': FieldValue.delete(),
      'replies.topicMessage': FieldValue.delete(),
      'replies.topicCheckedAt': FieldValue.delete(),
    });
    await eventually(async () => {
      const status = (await integrationRef(integration.workspaceId, integration.integrationId).get()).get('replies.topicStatus') as unknown;
      return status === 'ok' ? true : undefined;
    }, 'the topic re-check');
    const third = await replyAndSequence(setup, 'third, after the topic is back');
    const notified = await eventually(async () => received.find((n) => n.deliveryId === third.deliveryId), 'the third reply notification', 20_000);
    // Ready at once: neither the failed reply 2 nor anything else holds it back.
    expect(await connector(setup.integration.key).processDelivery(notified, provider.send)).toMatchObject({ kind: 'sent' });
    expect(provider.calls.map((c) => c.text)).toEqual(['first, notified before the topic vanished', 'third, after the topic is back']);
  } finally {
    await listening.close();
  }
});

test('a retry whose re-notification is lost: the sweeper (clock past the due time) publishes the outbox entry left behind, once', async () => {
  const setup = await conversation();
  const { deliveryId } = await replyAndNotify(setup, 'temporarily rejected, then forgotten');
  const client = connector(setup.integration.key);
  const claim = await client.deliveries.claim({ deliveryId });
  if (claim.status !== 'ready') throw new Error('expected ready');
  await client.deliveries.start({ deliveryId, leaseId: claim.leaseId });
  // The longest retry delay: its Cloud Task is due in an hour and never runs during the test,
  // exactly like a task that was lost (or an enqueue that failed).
  expect(await client.deliveries.fail({ deliveryId, leaseId: claim.leaseId, outcome: 'retry', code: 'provider_busy', retryAfterMs: 3_600_000 })).toEqual({ status: 'queued' });
  const doc = await deliveryDoc(setup, deliveryId);
  const dueAt = doc.notBefore as number;
  const entries = async () => (await adminDb().collection(OUTBOX).where('deliveryId', '==', deliveryId).get()).docs;
  expect((await entries()).map((e) => e.get('reason'))).toEqual(['retry']);
  // A negative check (the retry's notification is not published before its due time): bounded.
  await sleep(1_500);
  expect(notificationsFor(setup.topic, deliveryId)).toHaveLength(1);

  // An hour later the notification still has not gone out: the sweeper finds it.
  const later = dueAt + OUTBOX_STALE_AFTER_MS + 1_000;
  for (let i = 0; i < 5 && (await entries()).length > 0; i++) await sweep(adminDb(), later);
  expect(await entries()).toHaveLength(0);
  const [, renotified] = await waitForNotifications(setup.topic, deliveryId, 2);
  expect(renotified).toMatchObject({ deliveryId, messageId: doc.messageId, conversationId: setup.conversationId });

  // Once published it is gone: the next sweep publishes nothing more for it.
  await sweep(adminDb(), later);
  // A negative check (this sweep published nothing more): bounded, a few publish latencies.
  await sleep(1_500);
  expect(notificationsFor(setup.topic, deliveryId)).toHaveLength(2);

  // The connector acts on it when the retry time has come (the fixture moves notBefore, as the clock would).
  await deliveryDocRef(setup.integration.workspaceId, deliveryId).update({ notBefore: Date.now() - 1_000 });
  const provider = countingProvider();
  expect(await connector(setup.integration.key).processDelivery(renotified as { deliveryId: string }, provider.send)).toMatchObject({ kind: 'sent' });
  expect(await deliveryDoc(setup, deliveryId)).toMatchObject({ status: 'sent', attempts: 2 });
  expect(provider.callsFor(deliveryId)).toBe(1);
});

test('no key material of these integrations in the emulator log', async () => {
  await expectNoKeyMaterialInLogs([...keys]);
});

/** Writes an operator reply (console shape) and returns its id without waiting for anything. */
async function writeReplyText(setup: ConversationSetup, text: string): Promise<string> {
  const ref = messagesOf(setup).doc();
  await ref.create({ direction: 'outbound', author: { type: 'operator', uid: 'operator-1' }, text, createdAt: FieldValue.serverTimestamp() });
  return ref.id;
}
