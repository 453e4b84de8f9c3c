/**
 * The replies-topic residual risk, tried as an attacker would (docs/operations.md#tenant-isolation):
 * the admin of workspace B names the replies topic of workspace A's integration as B's own. B's
 * notifications then reach A's connector. What must hold: A's connector (the example connector,
 * examples/connector, which follows the SDK README's loop) claims with its own key, gets 404
 * `delivery_not_found`, ACKNOWLEDGES the notification and never sees it again (no redelivery
 * loop); B's delivery is untouched and B's own connector still delivers it.
 */
import { join, resolve } from 'node:path';
import { randomUUID } from 'node:crypto';
import { isTransientError, NotFoundError } from '../../../sdk/src/index';
import { closePubSub, closeStack, createRawTopic, createTestIntegration, eventually, sdkClient, sleep, startConversation, waitForMirror, writeReply, type RawTopic } from '../../../sdk/test/e2e/helpers';
import { apiBaseUrl, projectId } from '../helpers/stack';
import { claimReady, readDeliveryDoc } from '../helpers/deliveries';

/** The parts of examples/connector/connector.js this test uses (the example is plain JS; its events are the SDK's runPullLoop events). */
interface ExampleEvent {
  type: string;
  via?: string;
  action?: 'ack' | 'nack' | 'none';
  notification?: { deliveryId: string; messageId: string; integrationId: string };
  result?: { kind: string };
  error?: Error & { status?: number; code?: string };
}
interface ExampleModule {
  loadConfig(env: Record<string, string | undefined>): Record<string, unknown>;
  createFakeProvider(options: { write: (line: string) => void }): unknown;
  runConnector(config: Record<string, unknown>, deps: { send: unknown; onEvent: (event: ExampleEvent) => void }): Promise<{ stop(): Promise<void> }>;
}

jest.setTimeout(120_000);

const EXAMPLE = join(resolve(__dirname, '..', '..', '..'), 'examples', 'connector', 'connector.js');
let topic: RawTopic;

beforeAll(async () => {
  topic = await createRawTopic({ listen: false }); // A's connector is the subscriber
});
afterAll(async () => {
  await topic?.close();
  await closePubSub();
  await closeStack();
});

test("a notification of another workspace's delivery on a connector's topic is answered 404 and acknowledged once, never redelivered; the owner still delivers it", async () => {
  const owner = await createTestIntegration({ topic: topic.topicPath }); // workspace A
  const intruder = await createTestIntegration({ topic: topic.topicPath }); // workspace B names A's topic
  expect(intruder.workspaceId).not.toBe(owner.workspaceId);

  const example = (await import(EXAMPLE)) as ExampleModule;
  const events: ExampleEvent[] = [];
  /** When each event was reported: the ack deadline below counts from the handling of the notification. */
  const handledAt = new Map<ExampleEvent, number>();
  const connector = await example.runConnector(
    example.loadConfig({
      INTEGRATION_KEY: owner.key,
      API_BASE_URL: apiBaseUrl(),
      SUBSCRIPTION: topic.subscriptionName,
      GCLOUD_PROJECT: projectId(),
      PUBSUB_EMULATOR_HOST: process.env.PUBSUB_EMULATOR_HOST,
      EXTERNAL_CONVERSATION_ID: `shared-topic-${randomUUID()}`,
      STARTUP_TEXT: '',
    }),
    {
      send: example.createFakeProvider({ write: () => undefined }),
      onEvent: (event) => {
        events.push(event);
        handledAt.set(event, Date.now());
      },
    },
  );
  try {
    // B's operator replies: B's notification is published to A's topic.
    const conversation = await startConversation(sdkClient(intruder.key), intruder);
    const replyId = await writeReply(conversation, 'Published where it does not belong.');
    const { deliveryId } = (await waitForMirror(conversation, replyId, (m) => typeof m.deliveryId === 'string')) as { deliveryId: string };

    // The message itself (not a catch-up pass, which the owner's connector also walks at start-up).
    const aboutIt = () => events.filter((e) => e.type === 'handled' && e.via === 'notification' && e.notification?.deliveryId === deliveryId);
    const seen = await eventually(async () => aboutIt()[0], "the intruder's notification at the owner's connector", 30_000);
    expect(seen).toMatchObject({ action: 'ack', notification: { integrationId: intruder.integrationId }, error: { status: 404, code: 'delivery_not_found' } });
    expect(isTransientError(seen.error)).toBe(false);

    // Acknowledged: past the subscription's ack deadline (10 s, Pub/Sub's minimum; read from the
    // subscription itself) it has not come back. The deadline runs from the delivery to the
    // connector, which is before it handled it; the margin covers a redelivery's own latency.
    // A negative check: it must wait out the deadline, but no longer than that and the margin.
    const [subscription] = await topic.subscription.getMetadata();
    const ackDeadlineMs = Number(subscription.ackDeadlineSeconds ?? 10) * 1000;
    await sleep(Math.max(0, (handledAt.get(seen) ?? Date.now()) + ackDeadlineMs + 2_000 - Date.now()));
    expect(aboutIt()).toHaveLength(1);

    // The SDK says the same to a connector that follows the README's loops: NotFoundError (404), not transient.
    const notification = { deliveryId, workspaceId: intruder.workspaceId, integrationId: intruder.integrationId, conversationId: conversation.conversationId, messageId: replyId };
    await expect(sdkClient(owner.key).processDelivery(notification, async () => ({ providerMessageIds: ['never'] }))).rejects.toBeInstanceOf(NotFoundError);

    // Nothing of B's delivery changed; B's own key claims it.
    expect(await readDeliveryDoc(intruder.workspaceId, deliveryId)).toMatchObject({ status: 'queued', attempts: 0 });
    await claimReady(intruder.key, deliveryId);
  } finally {
    await connector.stop();
  }
});
