/**
 * The SDK's delivery loops on the real stack: `runPullLoop` on a real @google-cloud/pubsub
 * subscription of the Pub/Sub emulator, and `createPushHandler` behind a real Pub/Sub PUSH
 * subscription of the emulator posting to a local HTTP endpoint; both deliver replies written as
 * the console writes them, through the API on the Functions emulator.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { createPushHandler, runPullLoop, type ProviderSendInput, type PullLoopEvent, type PushOutcome } from '../../src/index.js';
import { closePubSub, closeStack, createRawTopic, createTestIntegration, eventually, sdkClient, startConversation, waitForMirror, writeReply } from './helpers';
import type { Message } from '@google-cloud/pubsub';
import { pubsubClient } from '../../../test/integration/helpers/deliveries';
import { projectId } from '../../../test/integration/helpers/stack';

jest.setTimeout(120_000);

afterAll(async () => {
  await closePubSub();
  await closeStack();
});

const provider = () => {
  const sent: ProviderSendInput[] = [];
  return { sent, send: (input: ProviderSendInput) => (sent.push(input), [`prov-${input.deliveryId.slice(-8)}`]) };
};

test('runPullLoop on a real subscription: a reply is sent and acked (not redelivered); junk is acked; stop() closes the subscription', async () => {
  const topic = await createRawTopic({ listen: false });
  const integration = await createTestIntegration({ topic: topic.topicPath });
  const client = sdkClient(integration.key);
  const conversation = await startConversation(client, integration);
  const p = provider();
  const events: PullLoopEvent[] = [];
  // The ack ids of what the loop receives (a second listener that only looks), to ask the emulator about them later.
  const received: Message[] = [];
  topic.subscription.on('message', (m: Message) => received.push(m));
  // No start-up catch-up: the reply must come through its notification (the list could find it first).
  const loop = runPullLoop(client, topic.subscription, p.send, { catchUpOnStart: false, onEvent: (e) => events.push(e) });
  try {
    const replyId = await writeReply(conversation, 'Your parcel left the warehouse.');
    await waitForMirror(conversation, replyId, (m) => m.status === 'sent');
    const handled = await eventually(
      async () => events.find((e): e is Extract<PullLoopEvent, { type: 'handled' }> => e.type === 'handled' && e.notification.messageId === replyId && e.result?.kind === 'sent'),
      'the handled event',
    );
    expect(p.sent.filter((s) => s.deliveryId === handled.notification.deliveryId)).toHaveLength(1);
    expect(p.sent[0]).toMatchObject({ text: 'Your parcel left the warehouse.', recipient: { externalConversationId: conversation.externalConversationId } });

    await topic.publish(Buffer.from('{"not":"a notification"}'));
    await eventually(async () => events.find((e) => e.type === 'invalid_notification'), 'the junk message');
    expect(events.filter((e) => e.type === 'invalid_notification')).toHaveLength(1);
    expect(events.filter((e) => e.type === 'handled' && e.via === 'notification' && e.notification.messageId === replyId)).toHaveLength(1);
  } finally {
    await loop.stop();
  }
  expect(events.at(-1)).toEqual({ type: 'stopped', abandoned: 0 });
  expect(topic.subscription.isOpen).toBe(false);
  // Both messages were acked on the emulator (stop() flushed the acks), not merely dropped: instead of
  // waiting out the 10 s ack deadline, every ack id the loop received is made due again now (ack
  // deadline 0, which would put an unacked message straight back), and the subscription's backlog
  // is pulled until it has answered empty several times in a row: an acked message never comes back.
  expect(received.length).toBeGreaterThanOrEqual(2);
  await emulatorPubSub(`${topic.subscriptionName}:modifyAckDeadline`, { ackIds: received.map((m) => m.ackId), ackDeadlineSeconds: 0 });
  let emptyPulls = 0;
  const redelivered: string[] = [];
  while (emptyPulls < 5) {
    const { receivedMessages = [] } = (await emulatorPubSub(`${topic.subscriptionName}:pull`, { maxMessages: 10, returnImmediately: true })) as { receivedMessages?: Array<{ message: { messageId: string } }> };
    redelivered.push(...receivedMessages.map((r) => r.message.messageId));
    emptyPulls = receivedMessages.length === 0 ? emptyPulls + 1 : 0;
    if (redelivered.length > 0) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  expect(redelivered).toEqual([]);
});

/** A REST call of the Pub/Sub emulator on a subscription of this project (`name:verb`). */
async function emulatorPubSub(subscriptionAndVerb: string, body: unknown): Promise<unknown> {
  const host = process.env.PUBSUB_EMULATOR_HOST;
  if (host === undefined) throw new Error('PUBSUB_EMULATOR_HOST is not set (firebase emulators:exec sets it)');
  const res = await fetch(`http://${host}/v1/projects/${projectId()}/subscriptions/${subscriptionAndVerb}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await res.text();
  if (!res.ok) throw new Error(`Pub/Sub emulator ${subscriptionAndVerb}: ${res.status} ${text}`);
  return text === '' ? {} : JSON.parse(text);
}

test('createPushHandler behind a real Pub/Sub push subscription: the reply is sent and the push acked with 204', async () => {
  const name = `push-${randomUUID()}`;
  const [topic] = await pubsubClient().createTopic(name);
  const integration = await createTestIntegration({ topic: `projects/${projectId()}/topics/${name}` });
  const client = sdkClient(integration.key);
  const p = provider();
  const outcomes: PushOutcome[] = [];
  // The Pub/Sub emulator sends no OIDC token (the token check is unit-tested: sdk/test/unit/push-auth.test.ts).
  const handler = createPushHandler(client, p.send, { auth: 'none', onEvent: (e) => e.type === 'handled' && outcomes.push(e) });
  const statuses: number[] = [];
  const endpoint = http.createServer((req, res) => {
    res.on('finish', () => statuses.push(res.statusCode));
    void handler(req, res);
  });
  await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
  const pushEndpoint = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/pubsub/replies`;
  const [subscription] = await topic.createSubscription(`push-${randomUUID()}`, { pushConfig: { pushEndpoint }, ackDeadlineSeconds: 10 });
  try {
    const conversation = await startConversation(client, integration);
    const replyId = await writeReply(conversation, 'Pushed to you.');
    await waitForMirror(conversation, replyId, (m) => m.status === 'sent');
    const outcome = await eventually(async () => outcomes.find((o) => o.notification?.messageId === replyId), 'the push outcome');
    expect(outcome).toMatchObject({ status: 204, action: 'ack', result: { kind: 'sent' } });
    expect(p.sent.map((s) => s.text)).toEqual(['Pushed to you.']);
    expect(statuses).toContain(204);
  } finally {
    await subscription.delete().catch(() => undefined);
    await topic.delete().catch(() => undefined);
    await new Promise<void>((resolve) => endpoint.close(() => resolve()));
  }
});
