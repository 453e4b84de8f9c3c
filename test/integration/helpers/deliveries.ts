/**
 * Helpers for delivery integration tests: a real Pub/Sub topic + subscription on the emulator,
 * conversations created through the real API, operator replies written as the console writes
 * them, and polling for what the triggers do.
 */
import { randomUUID } from 'node:crypto';
import { FieldValue, type DocumentData } from 'firebase-admin/firestore';
import { PubSub, type Subscription } from '@google-cloud/pubsub';
import { adminDb, createTestIntegration, postJson, projectId, type ApiResponse, type TestIntegration } from './stack';

export interface Notification {
  deliveryId: string;
  workspaceId: string;
  integrationId: string;
  conversationId: string;
  messageId: string;
}

let pubsub: PubSub | undefined;
function client(): PubSub {
  pubsub ??= new PubSub({ projectId: projectId() });
  return pubsub;
}

export async function closePubSub(): Promise<void> {
  await pubsub?.close();
  pubsub = undefined;
}

export interface TestTopic {
  topicPath: string;
  subscription: Subscription;
  /** Everything received so far (acknowledged), in arrival order; never cleared. */
  received: Notification[];
  /** Waits up to `waitMs` until at least `min` new notifications arrived; returns and consumes them. */
  pull(min?: number, waitMs?: number): Promise<Notification[]>;
  close(): Promise<void>;
}

/** A fresh topic with one streaming-pull subscription on the Pub/Sub emulator. */
export async function createTestTopic(): Promise<TestTopic> {
  const name = `t-${randomUUID()}`;
  const [topic] = await client().createTopic(name);
  const [subscription] = await topic.createSubscription(`${name}-sub`, { ackDeadlineSeconds: 10 });
  const received: Notification[] = [];
  let consumed = 0;
  subscription.on('message', (message: { data: Buffer; ack(): void }) => {
    received.push(JSON.parse(message.data.toString('utf8')) as Notification);
    message.ack();
  });
  return {
    topicPath: `projects/${projectId()}/topics/${name}`,
    subscription,
    received,
    async pull(min = 1, waitMs = 15_000) {
      const deadline = Date.now() + waitMs;
      while (received.length - consumed < min && Date.now() < deadline) await sleep(100);
      const fresh = received.slice(consumed);
      consumed = received.length;
      return fresh;
    },
    async close() {
      subscription.removeAllListeners('message');
      await subscription.close();
    },
  };
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `probe` until it returns a value other than undefined (or fails after `timeoutMs`). */
export async function eventually<T>(probe: () => Promise<T | undefined>, what: string, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(150);
  }
}

export interface ConversationSetup {
  integration: TestIntegration;
  topic: TestTopic;
  conversationId: string;
  externalConversationId: string;
  customerId: string;
}

/** An integration with replies to a fresh topic, and a conversation started by a customer through the API. */
export async function setupConversation(options: { topic?: TestTopic; integration?: TestIntegration } = {}): Promise<ConversationSetup> {
  const topic = options.topic ?? (await createTestTopic());
  const integration = options.integration ?? (await createTestIntegration({ topic: topic.topicPath }));
  const externalConversationId = `chat-${randomUUID()}`;
  const customerId = `cust-${randomUUID().slice(0, 8)}`;
  const res = await postJson(
    '/v1/messages',
    { eventId: randomUUID(), externalConversationId, sender: { externalId: customerId }, message: { text: 'Hello, I need help' } },
    { key: integration.key },
  );
  if (res.status !== 201) throw new Error(`could not create a conversation: ${res.status} ${res.text}`);
  const conversationId = (res.body as { conversationId: string }).conversationId;
  return { integration, topic, conversationId, externalConversationId, customerId };
}

/** Writes an operator reply exactly as the console does (decisions 3); returns its message id. */
export async function writeReply(setup: Pick<ConversationSetup, 'integration' | 'conversationId'>, text: string): Promise<string> {
  const ref = adminDb()
    .collection('workspaces')
    .doc(setup.integration.workspaceId)
    .collection('conversations')
    .doc(setup.conversationId)
    .collection('messages')
    .doc();
  await ref.create({ direction: 'outbound', author: { type: 'operator', uid: 'operator-1' }, text, createdAt: FieldValue.serverTimestamp() });
  return ref.id;
}

export async function readReply(setup: Pick<ConversationSetup, 'integration' | 'conversationId'>, messageId: string): Promise<DocumentData | undefined> {
  const snap = await adminDb()
    .collection('workspaces')
    .doc(setup.integration.workspaceId)
    .collection('conversations')
    .doc(setup.conversationId)
    .collection('messages')
    .doc(messageId)
    .get();
  return snap.data();
}

/** Waits for the trigger to mirror a delivery onto the reply; returns the mirror. */
export function waitForMirror(setup: Pick<ConversationSetup, 'integration' | 'conversationId'>, messageId: string, predicate: (mirror: DocumentData) => boolean = () => true): Promise<DocumentData> {
  return eventually(async () => {
    const mirror = (await readReply(setup, messageId))?.delivery as DocumentData | undefined;
    return mirror && predicate(mirror) ? mirror : undefined;
  }, `the delivery mirror of reply ${messageId}`);
}

export async function readDeliveryDoc(workspaceId: string, deliveryId: string): Promise<DocumentData | undefined> {
  return (await adminDb().collection('workspaces').doc(workspaceId).collection('deliveries').doc(deliveryId).get()).data();
}

/** Calls a delivery operation through Hosting. */
export function op(name: 'claim' | 'start' | 'complete' | 'fail', key: string, body: unknown): Promise<ApiResponse> {
  return postJson(`/v1/deliveries/${name}`, body, { key });
}
