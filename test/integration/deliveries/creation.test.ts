/**
 * Creation and publication (docs/contract.md#notifications): one delivery per operator
 * reply even if the trigger runs twice or out of order, the identifiers-only notification, replies
 * disabled, and a missing topic recorded without blocking the conversation forever.
 */
import { randomUUID } from 'node:crypto';
import { FieldValue, type Timestamp } from 'firebase-admin/firestore';
import { deliveryIdFor } from '../../../functions/src/platform/ids';
import { OUTBOX } from '../../../functions/src/deliveries/store';
import { sequenceAndPublish } from '../../../functions/src/deliveries/sequencing';
import { adminDb, createTestIntegration, projectId } from '../helpers/stack';
import {
  claimReady,
  conversationDeliveries,
  deliveryDoc,
  deliverFully,
  deliveryTestFile,
  eventually,
  expectSkip,
  readReply,
  replyAndNotify,
  waitForMirror,
  writeReply,
  type ConversationSetup,
  listenTo,
} from '../helpers/deliveries';

const { ownConversation: conversation } = deliveryTestFile();

const messagesOf = (setup: ConversationSetup) =>
  adminDb().collection('workspaces').doc(setup.integration.workspaceId).collection('conversations').doc(setup.conversationId).collection('messages');

async function outboxEntriesFor(deliveryId: string): Promise<number> {
  return (await adminDb().collection(OUTBOX).where('deliveryId', '==', deliveryId).get()).size;
}

test('the notification carries exactly the five identifiers of spec 2.4 (no text, no recipient)', async () => {
  const setup = await conversation();
  const text = `secret reply text ${randomUUID()}`;
  const messageId = await writeReply(setup, text);
  const raw = await new Promise<{ data: string; attributes: Record<string, string> }>((resolve) => {
    const onMessage = (m: { data: Buffer; attributes: Record<string, string>; ack(): void }) => {
      setup.topic.subscription.off('message', onMessage);
      resolve({ data: m.data.toString('utf8'), attributes: m.attributes });
    };
    setup.topic.subscription.on('message', onMessage);
  });
  const payload = JSON.parse(raw.data) as Record<string, unknown>;
  expect(payload).toEqual({
    deliveryId: deliveryIdFor(setup.conversationId, messageId),
    workspaceId: setup.integration.workspaceId,
    integrationId: setup.integration.integrationId,
    conversationId: setup.conversationId,
    messageId,
  });
  expect(Object.keys(payload).sort()).toEqual(['conversationId', 'deliveryId', 'integrationId', 'messageId', 'workspaceId']);
  expect(Object.values(payload).every((v) => typeof v === 'string')).toBe(true);
  expect(raw.data).not.toContain('secret reply text');
  expect(raw.data).not.toContain(setup.customerId);
  expect(JSON.stringify(raw.attributes)).not.toContain('secret reply text');
});

test('the trigger running again for a reply (sequentially and concurrently) creates no second delivery, seq or notification', async () => {
  const setup = await conversation();
  const { messageId, deliveryId } = await replyAndNotify(setup, 'only once');
  const ws = setup.integration.workspaceId;

  // Re-run after the trigger ran: nothing.
  expect(await sequenceAndPublish(adminDb(), ws, setup.conversationId, messageId)).toEqual({ created: [], rejected: [], outboxIds: [] });
  // Twice concurrently: nothing.
  const again = await Promise.all([0, 1].map(() => sequenceAndPublish(adminDb(), ws, setup.conversationId, messageId)));
  expect(again).toEqual([
    { created: [], rejected: [], outboxIds: [] },
    { created: [], rejected: [], outboxIds: [] },
  ]);
  expect(await outboxEntriesFor(deliveryId)).toBe(0);
  const deliveries = await conversationDeliveries(setup);
  expect(deliveries.map((d) => [d.deliveryId, d.seq])).toEqual([[deliveryId, 1]]);
  expect(setup.topic.received.filter((n) => n.messageId === messageId)).toHaveLength(1);

  // A new reply racing its own trigger with two more in-process runs: still exactly one delivery, seq 2.
  const second = await writeReply(setup, 'raced');
  const raced = await Promise.all([0, 1].map(() => sequenceAndPublish(adminDb(), ws, setup.conversationId, second)));
  const createdByUs = raced.flatMap((r) => r.created);
  expect(createdByUs.length).toBeLessThanOrEqual(1);
  await waitForMirror(setup, second);
  const after = await eventually(async () => {
    const all = await conversationDeliveries(setup);
    return all.length >= 2 ? all : undefined;
  }, 'two deliveries');
  expect(after.map((d) => [d.messageId, d.seq])).toEqual([
    [messageId, 1],
    [second, 2],
  ]);
  await eventually(async () => (setup.topic.received.some((n) => n.messageId === second) ? true : undefined), 'the notification of the raced reply');
  expect(setup.topic.received.filter((n) => n.messageId === second)).toHaveLength(1);
});

/** Operator replies written while invisible to the reply trigger, then made visible: the test decides which "trigger" runs when. */
async function hiddenReplies(setup: ConversationSetup, count: number): Promise<Array<{ id: string; createdAt: Timestamp }>> {
  const refs = Array.from({ length: count }, () => messagesOf(setup).doc());
  for (const [i, ref] of refs.entries()) {
    await ref.create({ direction: 'draft', author: { type: 'operator', uid: 'operator-1' }, text: `reply ${i + 1}`, createdAt: FieldValue.serverTimestamp() });
  }
  for (const ref of refs) await ref.update({ direction: 'outbound' });
  return Promise.all(refs.map(async (ref) => ({ id: ref.id, createdAt: (await ref.get()).get('createdAt') as Timestamp })));
}

// The trigger passes the reply's `createdAt` from its event, and sequencing then reads the recent
// replies beside its transaction; without it (or when that page cannot show everything since the
// last sequenced reply) the exact query runs in the transaction. Both must give the same order.
describe.each([
  ['with the event createdAt (recent replies read beside the transaction)', true],
  ['without it (the exact query in the transaction)', false],
])('sequencing %s', (_name, withCreatedAt) => {
  test('out of order: sequencing the second reply first still gives the first reply seq 1 (seq order == createdAt order)', async () => {
    const setup = await conversation();
    const key = setup.integration.key;
    const [first, second] = (await hiddenReplies(setup, 2)) as [{ id: string; createdAt: Timestamp }, { id: string; createdAt: Timestamp }];
    const ws = setup.integration.workspaceId;
    const run = (reply: { id: string; createdAt: Timestamp }) => sequenceAndPublish(adminDb(), ws, setup.conversationId, reply.id, withCreatedAt ? reply.createdAt : undefined);

    // The later reply's trigger runs first: it sequences both, in reply order.
    expect(await run(second)).toEqual({
      created: [deliveryIdFor(setup.conversationId, first.id), deliveryIdFor(setup.conversationId, second.id)],
      rejected: [],
      // Each new delivery's `created` notification, which the trigger publishes right after the commit.
      outboxIds: [expect.stringMatching(new RegExp(`^${deliveryIdFor(setup.conversationId, first.id)}@\\d+$`)), expect.stringMatching(new RegExp(`^${deliveryIdFor(setup.conversationId, second.id)}@\\d+$`))],
    });
    // The earlier reply's trigger comes late: nothing left to do.
    expect(await run(first)).toEqual({ created: [], rejected: [], outboxIds: [] });
    const deliveries = await conversationDeliveries(setup);
    expect(deliveries.map((d) => [d.messageId, d.seq])).toEqual([
      [first.id, 1],
      [second.id, 2],
    ]);
    // Both notifications were published and their outbox entries deleted (the safety net is gone once published).
    await eventually(async () => (setup.topic.received.filter((n) => n.conversationId === setup.conversationId).length >= 2 ? true : undefined), 'both notifications');
    await eventually(async () => ((await outboxEntriesFor(deliveryIdFor(setup.conversationId, second.id))) === 0 ? true : undefined), 'outbox entry deleted');
    // And the order holds for the connector: the second waits for the first.
    await expectSkip(key, deliveryIdFor(setup.conversationId, second.id), 'waiting_for_previous');
    await deliverFully(key, deliveryIdFor(setup.conversationId, first.id));
    await claimReady(key, deliveryIdFor(setup.conversationId, second.id));
  });

  test('a burst of unsequenced replies larger than the recent page: all of them, in reply order, by the last one\'s trigger', async () => {
    const setup = await conversation();
    // One reply sequenced first, so the burst lies after a known last position.
    const { messageId: before } = await replyAndNotify(setup, 'before the burst');
    const burst = await hiddenReplies(setup, 8);
    const lastOfBurst = burst[burst.length - 1] as { id: string; createdAt: Timestamp };
    const result = await sequenceAndPublish(adminDb(), setup.integration.workspaceId, setup.conversationId, lastOfBurst.id, withCreatedAt ? lastOfBurst.createdAt : undefined);
    expect(result.created).toEqual(burst.map((r) => deliveryIdFor(setup.conversationId, r.id)));
    expect((await conversationDeliveries(setup)).map((d) => [d.messageId, d.seq])).toEqual([[before, 1], ...burst.map((r, i) => [r.id, i + 2])]);
  });
});

test('replies written in quick succession with the real triggers: seq order == createdAt order, one delivery each', async () => {
  const setup = await conversation();
  const ids: string[] = [];
  for (let i = 0; i < 4; i++) ids.push(await writeReply(setup, `quick ${i}`));
  const deliveries = await eventually(async () => {
    const all = await conversationDeliveries(setup);
    return all.length >= ids.length ? all : undefined;
  }, 'four deliveries');
  expect(deliveries).toHaveLength(ids.length);
  const createdAt = await Promise.all(ids.map(async (id) => ((await readReply(setup, id))?.createdAt as Timestamp).toMillis()));
  const byCreatedAt = ids.map((id, i) => ({ id, at: createdAt[i] as number })).sort((x, y) => x.at - y.at || (x.id < y.id ? -1 : 1));
  expect(deliveries.map((d) => d.messageId)).toEqual(byCreatedAt.map((r) => r.id));
  expect(deliveries.map((d) => d.seq)).toEqual([1, 2, 3, 4]);
});

test('a reply that shows up after later replies were sequenced is still delivered (after them), never dropped', async () => {
  const setup = await conversation();
  const ws = setup.integration.workspaceId;
  // An earlier reply that the sequencer cannot see yet (e.g. a console write delayed in flight).
  const late = messagesOf(setup).doc();
  await late.create({ direction: 'draft', author: { type: 'operator', uid: 'operator-1' }, text: 'late', createdAt: FieldValue.serverTimestamp() });
  const { messageId: onTime } = await replyAndNotify(setup, 'on time');
  await late.update({ direction: 'outbound' });
  // Its trigger runs now.
  const result = await sequenceAndPublish(adminDb(), ws, setup.conversationId, late.id);
  expect(result.created).toEqual([deliveryIdFor(setup.conversationId, late.id)]);
  expect((await conversationDeliveries(setup)).map((d) => [d.messageId, d.seq])).toEqual([
    [onTime, 1],
    [late.id, 2],
  ]);
  await waitForMirror(setup, late.id);
});

test('replies disabled (integration without a topic): the reply is marked failed / replies_disabled and no delivery is created', async () => {
  const integration = await createTestIntegration();
  const setup = await conversation({ integration });
  const messageId = await writeReply(setup, 'nobody will deliver this');
  const mirror = await waitForMirror(setup, messageId);
  expect(mirror).toEqual({ status: 'failed', error: { outcome: 'failed', code: 'replies_disabled' }, updatedAt: expect.anything() });
  expect(await conversationDeliveries(setup)).toEqual([]);
  expect((await adminDb().collection('workspaces').doc(integration.workspaceId).collection('deliveries').get()).size).toBe(0);
});

test('a reply refused while replies are off keeps the unfinished deliveries in the queue: the next reply still waits for them', async () => {
  const setup = await conversation();
  const ws = setup.integration.workspaceId;
  const first = await replyAndNotify(setup, 'sent before replies were turned off');
  const integrationDoc = adminDb().doc(`workspaces/${ws}/integrations/${setup.integration.integrationId}`);
  const queueDoc = adminDb().doc(`workspaces/${ws}/deliveryQueues/${setup.conversationId}`);

  await integrationDoc.update({ 'replies.enabled': false });
  const refused = await writeReply(setup, 'written while replies are off');
  expect(await waitForMirror(setup, refused)).toMatchObject({ status: 'failed', error: { outcome: 'failed', code: 'replies_disabled' } });
  // Sequencing moved the queue's position past the refused reply, and nothing else: the first
  // delivery is still unfinished (the queue document stores the map as `pending`).
  const queue = (await queueDoc.get()).data();
  expect(queue?.lastReplyId).toBe(refused);
  expect(queue?.pending).toEqual({ '1': first.deliveryId });

  await integrationDoc.update({ 'replies.enabled': true });
  const next = await replyAndNotify(setup, 'after replies are on again');
  expect(await deliveryDoc(setup, next.deliveryId)).toMatchObject({ seq: 2, status: 'queued' });
  expect((await deliveryDoc(setup, next.deliveryId)).head).toBeUndefined();
  await expectSkip(setup.integration.key, next.deliveryId, 'waiting_for_previous');
  await deliverFully(setup.integration.key, first.deliveryId);
  await deliverFully(setup.integration.key, next.deliveryId);
});

test('a missing topic is recorded (failed / topic_not_found) on the delivery and the reply; once the topic exists the next reply is delivered', async () => {
  const topicName = `missing-${randomUUID()}`;
  const topicPath = `projects/${projectId()}/topics/${topicName}`;
  const integration = await createTestIntegration({ topic: topicPath });
  const setup = await conversation({ integration });
  const key = integration.key;
  const first = await writeReply(setup, 'published into the void');
  const mirror = await waitForMirror(setup, first, (m) => m.status === 'failed');
  const deliveryId = deliveryIdFor(setup.conversationId, first);
  expect(mirror).toEqual({
    deliveryId,
    status: 'failed',
    updatedAt: expect.anything(),
    error: { outcome: 'failed', code: 'topic_not_found' },
    attempts: [{ at: expect.anything(), event: 'failed', code: 'topic_not_found' }],
    traceId: expect.stringMatching(/^[0-9a-f]{32}$/),
  });
  expect((await conversationDeliveries(setup))[0]).toMatchObject({ deliveryId, status: 'failed', error: { outcome: 'failed', code: 'topic_not_found' } });
  await expectSkip(key, deliveryId, 'already_failed');
  // Not retried forever: the outbox entry is gone.
  expect(await outboxEntriesFor(deliveryId)).toBe(0);
  // The next reply does not hang behind it: it fails the same clear way.
  const stillMissing = await writeReply(setup, 'still no topic');
  expect(await waitForMirror(setup, stillMissing, (m) => m.status === 'failed')).toMatchObject({ error: { outcome: 'failed', code: 'topic_not_found' } });

  // The owner creates the topic: the next reply is notified and ready (not waiting_for_previous).
  const { PubSub } = await import('@google-cloud/pubsub');
  const pubsub = new PubSub({ projectId: projectId() });
  try {
    const [created] = await pubsub.createTopic(topicName);
    // Where the service records the topic's health on the integration (`replies.topicStatus`, the
    // console contract), the console's "check again" (removing the status) makes it re-check now.
    const integrationDoc = adminDb().doc(`workspaces/${integration.workspaceId}/integrations/${integration.integrationId}`);
    if ((await integrationDoc.get()).get('replies.topicStatus') !== undefined) {
      await integrationDoc.update({ 'replies.topicStatus': FieldValue.delete() });
      await eventually(async () => ((await integrationDoc.get()).get('replies.topicStatus') === 'ok' ? true : undefined), 'the topic re-check');
    }
    const [subscription] = await created.createSubscription(`${topicName}-sub`);
    const received: string[] = [];
    const listening = listenTo(subscription, (m) => {
      received.push(JSON.parse(m.data.toString('utf8')).deliveryId as string);
      m.ack();
    });
    try {
      const second = await writeReply(setup, 'now with a topic');
      const secondId = deliveryIdFor(setup.conversationId, second);
      await eventually(async () => (received.includes(secondId) ? true : undefined), 'the notification of the second reply');
      await deliverFully(key, secondId);
    } finally {
      await listening.close();
    }
  } finally {
    await pubsub.close();
  }
});

test('a reply longer than 10000 characters is marked failed / invalid_reply and does not block the conversation', async () => {
  const setup = await conversation();
  const tooLong = await writeReply(setup, 'x'.repeat(10_001));
  expect(await waitForMirror(setup, tooLong)).toMatchObject({ status: 'failed', error: { outcome: 'failed', code: 'invalid_reply' } });
  const exact = await replyAndNotify(setup, '😀'.repeat(10_000));
  const claim = await claimReady(setup.integration.key, exact.deliveryId);
  expect([...claim.message.text]).toHaveLength(10_000);
  expect((await conversationDeliveries(setup)).map((d) => d.messageId)).toEqual([exact.messageId]);
});
