/**
 * Helpers for the SDK end-to-end tests: the SDK (from sdk/src) against the emulator stack, through
 * Hosting (API_BASE_URL). Conversations are started with the SDK itself; operator replies are
 * written as the console writes them (shared helpers); notifications are pulled raw from a real
 * Pub/Sub emulator subscription, so the tests parse them with the SDK exactly as a connector does.
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import type { Message, Subscription } from '@google-cloud/pubsub';
import { ConnectorClient, parsePulledNotification, type Clock, type ConnectorClientOptions, type DeliveryNotification } from '../../src/index.js';
import { apiBaseUrl, createTestIntegration, projectId, type TestIntegration } from '../../../test/integration/helpers/stack';
import { eventually, fileFixture, pubsubClient, writeReply } from '../../../test/integration/helpers/deliveries';

export { closePubSub, eventually, readDeliveryDoc, sleep, waitForMirror, writeReply } from '../../../test/integration/helpers/deliveries';
export { adminDb, apiBaseUrl, closeStack, createTestIntegration, type TestIntegration } from '../../../test/integration/helpers/stack';

/** An SDK client for `key` on the API host. Retries never wait long in tests. */
export function sdkClient(key: string, options: Partial<ConnectorClientOptions> = {}): ConnectorClient {
  return new ConnectorClient({ integrationKey: key, baseUrl: apiBaseUrl(), timeoutMs: 20_000, ...options });
}

/**
 * A clock that runs `factor` times as fast as real time from now on (its timers fire after
 * 1/factor of their delay): the SDK under it keeps a real 120 s lease in seconds. The service's
 * own time stays real, so what a lease gains from an extension is the real time since the claim.
 */
export function fastClock(factor: number): Clock {
  const origin = Date.now();
  return {
    now: () => origin + (Date.now() - origin) * factor,
    setTimeout: (callback, ms) => setTimeout(callback, ms / factor),
    clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout> | undefined),
  };
}

export interface RawTopic {
  topicPath: string;
  subscriptionName: string;
  subscription: Subscription;
  /** Every message received so far (acknowledged), in arrival order. */
  messages: Message[];
  /**
   * Waits for the `nth` (1-based) message whose notification is about reply `messageId`, and
   * returns it as received from Pub/Sub (a `Message` with `data` as a Buffer).
   */
  waitFor(messageId: string, nth?: number, timeoutMs?: number): Promise<Message>;
  /** Messages about reply `messageId` received so far. */
  about(messageId: string): Message[];
  /** Publishes raw data to the topic (e.g. something that is not a notification). */
  publish(data: Buffer): Promise<string>;
  close(): Promise<void>;
}

const replyIdOf = (m: Message): string | undefined => {
  try {
    return (JSON.parse(m.data.toString('utf8')) as { messageId?: string }).messageId;
  } catch {
    return undefined;
  }
};

/**
 * A fresh topic with one streaming-pull subscription; messages are kept raw. `listen: false`
 * creates the subscription without consuming it (for a consumer of its own, e.g. the example).
 */
export async function createRawTopic(options: { listen?: boolean } = {}): Promise<RawTopic> {
  const name = `sdk-e2e-${randomUUID()}`;
  const [topic] = await pubsubClient().createTopic(name);
  const [subscription] = await topic.createSubscription(`${name}-sub`, { ackDeadlineSeconds: 10 });
  const messages: Message[] = [];
  if (options.listen !== false) {
    subscription.on('message', (message: Message) => {
      messages.push(message);
      message.ack();
    });
  }
  const about = (messageId: string) => messages.filter((m) => replyIdOf(m) === messageId);
  return {
    topicPath: `projects/${projectId()}/topics/${name}`,
    subscriptionName: `${name}-sub`,
    subscription,
    messages,
    about,
    publish: (data) => topic.publishMessage({ data }),
    waitFor(messageId, nth = 1, timeoutMs = 30_000) {
      return eventually(async () => about(messageId)[nth - 1], `notification #${nth} of reply ${messageId}`, timeoutMs);
    },
    async close() {
      subscription.removeAllListeners('message');
      await subscription.close();
    },
  };
}

export interface Conversation {
  integration: TestIntegration;
  conversationId: string;
  externalConversationId: string;
  customerId: string;
}

/** A customer writes in a fresh external chat (through the SDK); the conversation it created. */
export async function startConversation(client: ConnectorClient, integration: TestIntegration): Promise<Conversation> {
  const externalConversationId = `chat-${randomUUID()}`;
  const customerId = `cust-${randomUUID().slice(0, 8)}`;
  const sent = await client.messages.send({ externalConversationId, sender: { externalId: customerId, displayName: 'Ada' }, text: 'Hello, I need help' });
  return { integration, conversationId: sent.conversationId, externalConversationId, customerId };
}

export interface DeliveryStack {
  topic: RawTopic;
  integration: TestIntegration;
  client: ConnectorClient;
}

export interface NewDelivery {
  conversation: Conversation;
  replyId: string;
  /** The reply's notification as pulled from the topic, parsed by the SDK. */
  notification: DeliveryNotification;
}

export interface SdkDeliveryFixture {
  /** A fresh conversation with one operator reply, in the file's integration. */
  newDelivery: (text?: string) => Promise<NewDelivery>;
}

/**
 * One integration whose replies go to a fresh raw topic, for all tests of a file (made in its
 * beforeAll, which passes it to `onReady`, and closed in its afterAll: see `fileFixture`); each
 * test takes its own conversation.
 */
export function sdkDeliveryFixture(onReady?: (stack: DeliveryStack) => void): SdkDeliveryFixture {
  const stack = fileFixture(async ({ track }): Promise<DeliveryStack> => {
    const topic = track(await createRawTopic());
    const integration = await createTestIntegration({ topic: topic.topicPath });
    return { topic, integration, client: sdkClient(integration.key) };
  }, onReady);
  return {
    newDelivery: async (text = 'We are on it!') => {
      const { client, integration, topic } = stack();
      const conversation = await startConversation(client, integration);
      const { replyId, message } = await replyAndWait(topic, conversation, text);
      return { conversation, replyId, notification: parsePulledNotification(message) };
    },
  };
}

/** Writes an operator reply in `conversation` and waits for its notification; returns both, raw. */
export async function replyAndWait(topic: RawTopic, conversation: Conversation, text: string): Promise<{ replyId: string; message: Message }> {
  const replyId = await writeReply(conversation, text);
  return { replyId, message: await topic.waitFor(replyId) };
}

/** The notification the service should publish for a reply of `conversation`. */
export function expectedNotification(conversation: Conversation, replyId: string): Omit<DeliveryNotification, 'deliveryId'> & { deliveryId: unknown } {
  return {
    deliveryId: expect.stringMatching(/^d_/),
    workspaceId: conversation.integration.workspaceId,
    integrationId: conversation.integration.integrationId,
    conversationId: conversation.conversationId,
    messageId: replyId,
  };
}

/** `http://127.0.0.1:<port>` where nothing listens (a port just released by the OS). */
export async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return `http://127.0.0.1:${address.port}`;
}
