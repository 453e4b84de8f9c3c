/**
 * Helpers for the SDK end-to-end tests: the SDK (from sdk/src) against the emulator stack, through
 * Hosting (API_BASE_URL). Conversations are started with the SDK itself; operator replies are
 * written as the console writes them (shared helpers); notifications are pulled raw from a real
 * Pub/Sub emulator subscription, so the tests parse them with the SDK exactly as a connector does.
 */
import { randomUUID } from 'node:crypto';
import type { Message, Subscription, Topic } from '@google-cloud/pubsub';
import { ConnectorClient, parsePulledNotification, type Clock, type ConnectorClientOptions, type DeliveryNotification, type PullSubscription } from '../../src/index.js';
import type { TestSubscription } from '../../src/testing/index.js';
import type { DocumentData } from 'firebase-admin/firestore';
import * as stack from '../../../test/integration/helpers/stack';
import { projectId, type TestIntegration, type TestIntegrationOptions } from '../../../test/integration/helpers/stack';
import * as emulator from '../../../test/integration/helpers/deliveries';
import { eventually, fileFixture, listenTo, pubsubClient } from '../../../test/integration/helpers/deliveries';
import { deliveryDocOf, mirrorOf, onTestService, testService } from './target';

export { closePubSub, eventually, sleep } from '../../../test/integration/helpers/deliveries';
export { adminDb, closeStack, type TestIntegration } from '../../../test/integration/helpers/stack';
export {
  allowAttachments,
  allowLifecycle,
  allowStarts,
  deskStart,
  erasureAudit,
  erasureDone,
  followMergedInto,
  messageDoc,
  messageDocs,
  notificationPublished,
  onTestService,
  replyHistory,
  replyReactions,
  requestErasure,
  requestLifecycle,
  storedImageSha256,
  startDeliveryDoc,
  sweepAt,
  writeReplyWithFiles,
  type DeskStart,
  type ErasureAudit,
  type LifecycleEntry,
  type StoredAttachment,
} from './target';

// ------------------------------------------------------------------ each step on the chosen target (./target.ts)

/** The API base URL of the target: Hosting of the emulator stack, or the test service. */
export function apiBaseUrl(): string {
  return onTestService ? testService().baseUrl : stack.apiBaseUrl();
}

/** The topics of this file on the test service, by path: an integration created with one delivers its notifications there. */
const serviceTopics = new Map<string, ServiceTopic>();

/** A topic on the test service: its integration's `subscription()`, consumed into `messages` unless created with `listen: false`. */
interface ServiceTopic extends RawTopic {
  listen: boolean;
  integrationId?: string;
  serviceSubscription?: TestSubscription;
}

/** A fresh integration (on the emulators: a fresh workspace unless given, as the admin CLI does). */
export async function createTestIntegration(options: TestIntegrationOptions = {}): Promise<TestIntegration> {
  if (!onTestService) return stack.createTestIntegration(options);
  const service = testService();
  const created = await service.createIntegration({ ...(options.workspaceId === undefined ? {} : { workspaceId: options.workspaceId }), ...(options.active === undefined ? {} : { active: options.active }) });
  if (options.topic !== undefined) topicIntegrations.set(options.topic, created.integrationId);
  const topic = options.topic === undefined ? undefined : serviceTopics.get(options.topic);
  if (topic !== undefined) {
    const subscription = service.subscription(created.integrationId);
    topic.integrationId = created.integrationId;
    topic.serviceSubscription = subscription;
    if (topic.listen) {
      subscription.on('message', (value) => {
        const message = value as RawMessage & { ack(): void };
        topic.messages.push(message);
        message.ack();
      });
    }
  }
  return created;
}

/** An operator reply with `text` in the conversation (on the emulators: written as the console writes it); its message id. */
export async function writeReply(setup: { integration: TestIntegration; conversationId: string }, text: string): Promise<string> {
  if (!onTestService) return emulator.writeReply(setup, text);
  return Promise.resolve(testService().reply({ conversationId: setup.conversationId, text }).messageId);
}

/** The latest delivery of reply `messageId` once `predicate` holds (on the emulators: the reply's mirror). */
export function waitForMirror(setup: { integration: TestIntegration; conversationId: string }, messageId: string, predicate: (mirror: DocumentData) => boolean = () => true): Promise<DocumentData> {
  if (!onTestService) return emulator.waitForMirror(setup, messageId, predicate);
  return eventually(async () => {
    // The reply's own delivery (the mirror is never an edit's or an unsend's).
    const view = testService()
      .deliveries({ conversationId: setup.conversationId })
      .filter((d) => d.messageId === messageId && d.kind === undefined)
      .at(-1);
    const mirror = view === undefined ? undefined : mirrorOf(view);
    return Promise.resolve(mirror !== undefined && predicate(mirror) ? mirror : undefined);
  }, `the delivery of reply ${messageId}`);
}

/** The delivery's record (the fields both targets show: status, attempts, provider ids, error, notBefore, lastFail). */
export async function readDeliveryDoc(workspaceId: string, deliveryId: string): Promise<DocumentData | undefined> {
  if (!onTestService) return emulator.readDeliveryDoc(workspaceId, deliveryId);
  const view = testService().deliveries().find((d) => d.deliveryId === deliveryId);
  return Promise.resolve(view === undefined ? undefined : deliveryDocOf(view));
}

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

/** A received notification message, as both targets deliver it (a Pub/Sub `Message` is one). */
export type RawMessage = Pick<Message, 'id' | 'data' | 'attributes'>;

/** A pull subscription on either target: a Pub/Sub `Subscription`, or the test service's `subscription()`. */
export interface RawSubscription extends PullSubscription {
  readonly isOpen: boolean;
}

export interface RawTopic {
  topicPath: string;
  subscriptionName: string;
  /** The Pub/Sub subscription (emulator stack only: a scenario on both targets uses `pull`). */
  subscription: Subscription;
  /** The subscription on either target (on the test service: its integration's `subscription()`, once an integration is created with this topic). */
  pull: RawSubscription;
  /** Every message received so far (acknowledged), in arrival order. */
  messages: RawMessage[];
  /**
   * Waits for the `nth` (1-based) message whose notification is about reply `messageId`, and
   * returns it as received from Pub/Sub (a `Message` with `data` as a Buffer).
   */
  waitFor(messageId: string, nth?: number, timeoutMs?: number): Promise<RawMessage>;
  /** Messages about reply `messageId` received so far. */
  about(messageId: string): RawMessage[];
  /** Publishes raw data to the topic (e.g. something that is not a notification). */
  publish(data: Buffer): Promise<unknown>;
  close(): Promise<void>;
}

const replyIdOf = (m: RawMessage): string | undefined => {
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
  if (onTestService) {
    // The test service has no topics: an integration created with this one (createTestIntegration)
    // delivers its notifications here through the service's `subscription()`.
    const topic = serviceRawTopic(name, options.listen !== false);
    serviceTopics.set(topic.topicPath, topic);
    return topic;
  }
  const [topic] = await pubsubClient().createTopic(name);
  const [subscription] = await topic.createSubscription(`${name}-sub`, { ackDeadlineSeconds: 10 });
  return emulatorRawTopic(topic, subscription, name, options.listen !== false);
}

function serviceRawTopic(name: string, listen: boolean): ServiceTopic {
  const messages: RawMessage[] = [];
  const about = (messageId: string) => messages.filter((m) => replyIdOf(m) === messageId);
  const topic: ServiceTopic = {
    listen,
    topicPath: `test-service/topics/${name}`,
    subscriptionName: `${name}-sub`,
    get subscription(): Subscription {
      throw new Error('the test service has no Pub/Sub subscription (use `pull`): this scenario runs on the emulator stack only');
    },
    get pull(): RawSubscription {
      if (topic.serviceSubscription === undefined) throw new Error(`no integration was created with topic ${topic.topicPath} yet`);
      return topic.serviceSubscription;
    },
    messages,
    about,
    publish: (data) => {
      if (topic.integrationId === undefined) return Promise.reject(new Error(`no integration was created with topic ${topic.topicPath} yet`));
      testService().publish(topic.integrationId, data);
      return Promise.resolve();
    },
    waitFor: (messageId, nth = 1, timeoutMs = 30_000) => eventually(async () => Promise.resolve(about(messageId)[nth - 1]), `notification #${nth} of reply ${messageId}`, timeoutMs),
    close: async () => {
      await topic.serviceSubscription?.close();
    },
  };
  return topic;
}

function emulatorRawTopic(topic: Topic, subscription: Subscription, name: string, listen: boolean): RawTopic {
  const messages: Message[] = [];
  // Not listened to: the scenario's consumer (the SDK's pull loop) opens it, with its own 'error' listener.
  const listening = listen
    ? listenTo(subscription, (message) => {
        messages.push(message);
        message.ack();
      })
    : undefined;
  const about = (messageId: string) => messages.filter((m) => replyIdOf(m) === messageId);
  return {
    topicPath: `projects/${projectId()}/topics/${name}`,
    subscriptionName: `${name}-sub`,
    subscription,
    pull: subscription,
    messages,
    about,
    publish: (data) => topic.publishMessage({ data }),
    waitFor(messageId, nth = 1, timeoutMs = 30_000) {
      return eventually(async () => about(messageId)[nth - 1], `notification #${nth} of reply ${messageId}`, timeoutMs);
    },
    async close() {
      if (listening !== undefined) await listening.close();
      else {
        subscription.removeAllListeners('message');
        await subscription.close();
      }
    },
  };
}

/** The integration created with each topic path on the test service (createTestIntegration). */
const topicIntegrations = new Map<string, string>();

export interface LateTopic {
  topicPath: string;
  /** Creates the topic's subscription now (not listened to: for a consumer of its own); what was published before is not on it. */
  subscribe(): Promise<RawTopic>;
  /** Deletes the subscription and the topic (on the emulators). */
  close(): Promise<void>;
}

/**
 * A topic with no subscription yet: what is published to it is dropped, as Pub/Sub drops a
 * topic's messages while no subscription exists (on the test service: an integration with no
 * `subscription()` yet).
 */
export async function createLateTopic(): Promise<LateTopic> {
  const name = `late-sub-${randomUUID()}`;
  if (onTestService) {
    const topicPath = `test-service/topics/${name}`;
    let subscribed: ServiceTopic | undefined;
    return {
      topicPath,
      subscribe: () => {
        const integrationId = topicIntegrations.get(topicPath);
        if (integrationId === undefined) return Promise.reject(new Error(`no integration was created with topic ${topicPath}`));
        subscribed = serviceRawTopic(name, false);
        subscribed.integrationId = integrationId;
        subscribed.serviceSubscription = testService().subscription(integrationId);
        return Promise.resolve(subscribed);
      },
      close: async () => {
        await subscribed?.close();
      },
    };
  }
  const [topic] = await pubsubClient().createTopic(name);
  let subscription: Subscription | undefined;
  return {
    topicPath: `projects/${projectId()}/topics/${name}`,
    subscribe: async () => {
      [subscription] = await topic.createSubscription(`${name}-sub`, { ackDeadlineSeconds: 10 });
      return emulatorRawTopic(topic, subscription, name, false);
    },
    close: async () => {
      await subscription?.delete().catch(() => undefined);
      await topic.delete().catch(() => undefined);
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
export async function replyAndWait(topic: RawTopic, conversation: Conversation, text: string): Promise<{ replyId: string; message: RawMessage }> {
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

/** A URL on which nothing listens (connection refused): see the unit helpers' `closedPortUrl`. */
export { closedPortUrl } from '../unit/helpers/server.js';

/**
 * The ids of messages `received` on `topic` that came back after they were acknowledged: none, if
 * every ack reached the subscription. On the emulators, instead of waiting out the 10 s ack deadline,
 * every ack id is made due again now (ack deadline 0, which would put an unacked message straight
 * back), and the subscription's backlog is pulled until it has answered empty several times in a
 * row; on the test service, what is still outstanding on the subscription (neither acked nor gone).
 */
export async function redeliveredAfterAck(topic: RawTopic, received: readonly (RawMessage & { ackId: string })[]): Promise<string[]> {
  if (onTestService) {
    const subscription = serviceTopics.get(topic.topicPath)?.serviceSubscription;
    if (subscription === undefined) throw new Error(`no integration was created with topic ${topic.topicPath}`);
    const { outstanding } = subscription;
    return outstanding === 0 ? [] : [`${outstanding} message(s) outstanding`];
  }
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
  return redelivered;
}

/** A REST call of the Pub/Sub emulator on a subscription of this project (`name:verb`). */
async function emulatorPubSub(subscriptionAndVerb: string, body: unknown): Promise<unknown> {
  const host = process.env.PUBSUB_EMULATOR_HOST;
  if (host === undefined) throw new Error('PUBSUB_EMULATOR_HOST is not set (firebase emulators:exec sets it)');
  const res = await fetch(`http://${host}/v1/projects/${projectId()}/subscriptions/${subscriptionAndVerb}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await res.text();
  if (!res.ok) throw new Error(`Pub/Sub emulator ${subscriptionAndVerb}: ${res.status} ${text}`);
  return text === '' ? {} : JSON.parse(text);
}

export interface PushIntegration {
  integration: TestIntegration;
  /** Starts delivering the integration's notifications to `endpoint` in the Pub/Sub push format. */
  pushTo(endpoint: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * An integration whose notifications are pushed (on the emulators: a fresh topic with a real
 * Pub/Sub PUSH subscription of the emulator; on the test service: its `pushTo`).
 */
export async function createPushIntegration(): Promise<PushIntegration> {
  if (onTestService) {
    const service = testService();
    const integration = await service.createIntegration();
    let stop: (() => void) | undefined;
    return {
      integration,
      pushTo: (endpoint) => {
        stop = service.pushTo(integration.integrationId, endpoint);
        return Promise.resolve();
      },
      close: () => {
        stop?.();
        return Promise.resolve();
      },
    };
  }
  const name = `push-${randomUUID()}`;
  const [topic] = await pubsubClient().createTopic(name);
  const integration = await stack.createTestIntegration({ topic: `projects/${projectId()}/topics/${name}` });
  let subscription: { delete(): Promise<unknown> } | undefined;
  return {
    integration,
    pushTo: async (pushEndpoint) => {
      [subscription] = await topic.createSubscription(`push-${randomUUID()}`, { pushConfig: { pushEndpoint }, ackDeadlineSeconds: 10 });
    },
    close: async () => {
      await subscription?.delete().catch(() => undefined);
      await topic.delete().catch(() => undefined);
    },
  };
}

/** The parts of a @google-cloud/pubsub client examples/connector's `runConnector` uses (`deps.pubsub`). */
export interface ExamplePubSub {
  subscription(name: string, options?: unknown): RawSubscription & { readonly name: string; exists(): Promise<[boolean]> };
}

/**
 * What examples/connector's `runConnector` needs besides its config to receive `topic`'s
 * notifications: nothing on the emulators (it opens its own Pub/Sub client on the emulator, from
 * SUBSCRIPTION and PUBSUB_EMULATOR_HOST); on the test service, a Pub/Sub client whose one
 * subscription is the topic's (`pull`), passed as `deps.pubsub`.
 */
export function exampleDeps(topic: RawTopic): { pubsub?: ExamplePubSub } {
  if (!onTestService) return {};
  return {
    pubsub: {
      subscription: (name) => {
        const pull = topic.pull;
        const subscription = {
          name,
          exists: () => Promise.resolve([true] as [boolean]),
          get isOpen() {
            return pull.isOpen;
          },
          on: (event: 'message' | 'error', listener: (value: unknown) => void) => {
            pull.on(event, listener);
            return subscription;
          },
          removeListener: (event: 'message' | 'error', listener: (value: unknown) => void) => {
            pull.removeListener(event, listener);
            return subscription;
          },
          close: () => pull.close(),
        };
        return subscription;
      },
    },
  };
}

/**
 * The example connector's environment for where `topic`'s notifications are: the API, the
 * subscription, its project and the Pub/Sub emulator. On the test service the project is a name
 * only (not a `demo-` project, so no emulator is looked for): `exampleDeps` hands the subscription over.
 */
export function exampleConnectionEnv(topic: RawTopic): Record<string, string | undefined> {
  return {
    API_BASE_URL: apiBaseUrl(),
    SUBSCRIPTION: topic.subscriptionName,
    GCLOUD_PROJECT: onTestService ? 'test-service' : projectId(),
    PUBSUB_EMULATOR_HOST: onTestService ? undefined : process.env.PUBSUB_EMULATOR_HOST,
  };
}
