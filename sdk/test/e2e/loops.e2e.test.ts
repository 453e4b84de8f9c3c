/**
 * The SDK's delivery loops on the real stack: `runPullLoop` on a real @google-cloud/pubsub
 * subscription of the Pub/Sub emulator, and `createPushHandler` behind a real Pub/Sub PUSH
 * subscription of the emulator posting to a local HTTP endpoint; both deliver replies written as
 * the console writes them, through the API on the Functions emulator. On the test service
 * (./target.ts): its `subscription()` and `pushTo`.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createPushHandler, runPullLoop, type ProviderSendInput, type PullLoopEvent, type PushOutcome } from '../../src/index.js';
import {
  closePubSub,
  closeStack,
  createPushIntegration,
  createRawTopic,
  createTestIntegration,
  eventually,
  redeliveredAfterAck,
  sdkClient,
  startConversation,
  waitForMirror,
  writeReply,
  type RawMessage,
} from './helpers';

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
  const received: (RawMessage & { ackId: string })[] = [];
  topic.pull.on('message', (m) => received.push(m as RawMessage & { ackId: string }));
  // No start-up catch-up: the reply must come through its notification (the list could find it first).
  const loop = runPullLoop(client, topic.pull, p.send, { catchUpOnStart: false, onEvent: (e) => events.push(e) });
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
  expect(topic.pull.isOpen).toBe(false);
  // Both messages were acked (stop() flushed the acks), not merely dropped: an acked message never
  // comes back (`redeliveredAfterAck` says how each target shows it).
  expect(received.length).toBeGreaterThanOrEqual(2);
  expect(await redeliveredAfterAck(topic, received)).toEqual([]);
});

test('createPushHandler behind a real Pub/Sub push subscription: the reply is sent and the push acked with 204', async () => {
  const push = await createPushIntegration();
  const { integration } = push;
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
  await push.pushTo(pushEndpoint);
  try {
    const conversation = await startConversation(client, integration);
    const replyId = await writeReply(conversation, 'Pushed to you.');
    await waitForMirror(conversation, replyId, (m) => m.status === 'sent');
    const outcome = await eventually(async () => outcomes.find((o) => o.notification?.messageId === replyId), 'the push outcome');
    expect(outcome).toMatchObject({ status: 204, action: 'ack', result: { kind: 'sent' } });
    expect(p.sent.map((s) => s.text)).toEqual(['Pushed to you.']);
    expect(statuses).toContain(204);
  } finally {
    await push.close();
    await new Promise<void>((resolve) => endpoint.close(() => resolve()));
  }
});
