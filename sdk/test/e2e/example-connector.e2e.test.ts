/**
 * The runnable example (examples/connector) against the emulator stack: its processing loop
 * imported and driven in-process, and `main.js` run as a real Node.js process on the BUILT SDK
 * (sdk/dist, as `npm run example:connector` does). Each test has its own integration, topic and
 * subscription. On the test service (./target.ts) the imported loop receives the service's
 * `subscription()` as its Pub/Sub client's (`exampleDeps`); two scenarios stay on the emulators
 * (see `emulatorOnly`).
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { randomUUID } from 'node:crypto';
import {
  allowStarts,
  closePubSub,
  closeStack,
  createLateTopic,
  createRawTopic,
  createTestIntegration,
  deskStart,
  eventually,
  exampleConnectionEnv,
  exampleDeps,
  followMergedInto,
  notificationPublished,
  onTestService,
  sdkClient,
  startConversation,
  startDeliveryDoc,
  waitForMirror,
  writeReply,
  type RawTopic,
  type TestIntegration,
} from './helpers';
import { hostingUrl, projectId } from '../../../test/integration/helpers/stack';

const ROOT = resolve(__dirname, '..', '..', '..');
const EXAMPLE_DIR = join(ROOT, 'examples', 'connector');

/** The parts of examples/connector/connector.js this test uses (the example is plain JS). */
interface ExampleEvent {
  type: string;
  action?: 'ack' | 'nack' | 'none';
  notification?: { deliveryId: string; messageId: string };
  result?: { kind: string; [k: string]: unknown };
  error?: Error & { code?: string };
  deliveryId?: string;
  status?: string;
  via?: string;
}
interface ExampleModule {
  loadConfig(env: Record<string, string | undefined>, stack?: unknown): Record<string, unknown>;
  createFakeProvider(options: { write: (line: string) => void }): unknown;
  runConnector(
    config: Record<string, unknown>,
    deps: { send: unknown; pubsub?: unknown; onEvent: (event: ExampleEvent) => void },
  ): Promise<{ incoming: { conversationId: string; messageId: string; duplicate: boolean; eventId: string }; stop(): Promise<void> }>;
}

// The first calls of a run meet cold functions in the emulator; triggers and Pub/Sub add seconds.
jest.setTimeout(180_000);
/**
 * How long a delivery may take here: the first claim, start and complete of a file each wake a cold
 * functions-emulator worker (5 s each was seen with three suites running), so 20 s was too tight.
 */
const DELIVERY_WAIT_MS = 45_000;

let topic: RawTopic;
let integration: TestIntegration;
beforeEach(async () => {
  topic = await createRawTopic({ listen: false }); // the example is the subscriber
  integration = await createTestIntegration({ topic: topic.topicPath });
});
afterEach(async () => {
  await topic?.close();
});
afterAll(async () => {
  await closePubSub();
  await closeStack();
});

/**
 * Scenarios of the emulator stack only: the example's configuration defaults ARE the local emulator
 * stack (examples/connector/local-stack.js reads firebase.json; no service is involved), and
 * `main.js` runs as another process with a Pub/Sub client of its own, which cannot be handed the
 * test service's in-process subscription.
 */
const emulatorOnly = onTestService ? test.skip : test;

const exampleEnv = (extra: Record<string, string> = {}): Record<string, string | undefined> => ({
  INTEGRATION_KEY: integration.key,
  ...exampleConnectionEnv(topic),
  EXTERNAL_CONVERSATION_ID: `example-chat-${randomUUID()}`,
  CUSTOMER_ID: 'example-customer-7',
  ...extra,
});

const importExample = async (): Promise<ExampleModule> => {
  // A non-literal specifier: the example is plain ESM JavaScript without type declarations.
  const examplePath = join(EXAMPLE_DIR, 'connector.js');
  return (await import(examplePath)) as ExampleModule;
};

emulatorOnly('loadConfig: INTEGRATION_KEY is required; the rest defaults to where this stack listens (demo-* projects use the emulator)', async () => {
  const example = await importExample();
  expect(() => example.loadConfig({})).toThrow(expect.objectContaining({ name: 'ConfigError', message: expect.stringContaining('INTEGRATION_KEY') }));
  // The stack the tests run on is the one `npm start` runs: its API (Hosting, which `npm start`
  // serves; the suites call the same functions through the router) and Pub/Sub emulator are the defaults.
  expect(example.loadConfig({ INTEGRATION_KEY: 'k' })).toMatchObject({
    apiBaseUrl: hostingUrl(),
    integrationKey: 'k',
    projectId: projectId(),
    subscription: 'connector-notifications-pull',
    pubsubEmulatorHost: process.env.PUBSUB_EMULATOR_HOST,
    providerTimeoutMs: undefined,
  });
  expect(example.loadConfig({ INTEGRATION_KEY: 'k', GCLOUD_PROJECT: 'prod-project' }).pubsubEmulatorHost).toBeUndefined();
  // A copy outside the repository has no stack to default to: it asks instead of guessing ports.
  expect(() => example.loadConfig({ INTEGRATION_KEY: 'k' }, null)).toThrow(expect.objectContaining({ name: 'ConfigError', message: expect.stringContaining('API_BASE_URL') }));
  expect(() => example.loadConfig({ INTEGRATION_KEY: 'k', PROVIDER_TIMEOUT_MS: '-1' })).toThrow('PROVIDER_TIMEOUT_MS');
});

test('the processing loop (imported): startup message, replies delivered through the fake provider, failures and junk handled', async () => {
  const example = await importExample();
  const events: ExampleEvent[] = [];
  const printed: string[] = [];
  const env = exampleEnv({ STARTUP_TEXT: 'Where is my parcel?' });
  const connector = await example.runConnector(example.loadConfig(env), {
    ...exampleDeps(topic),
    send: example.createFakeProvider({ write: (line) => printed.push(line) }),
    onEvent: (event) => events.push(event),
  });
  try {
    // The startup message created the conversation.
    const { incoming } = connector;
    expect(incoming).toEqual({ conversationId: expect.any(String), messageId: expect.any(String), duplicate: false, eventId: expect.any(String) });
    expect(events.map((e) => e.type)).toEqual(['config', 'incoming', 'listening']);
    const conversation = { integration, conversationId: incoming.conversationId };

    // The delivery that did the work: the notification's, or the start-up catch-up's when that
    // listed the fresh reply first (the reply's notification is published as its delivery is
    // created, so the two race). The other path then gets `skipped` or a busy lease: harmless.
    const worked = (e: ExampleEvent, replyId: string) => e.type === 'handled' && e.notification?.messageId === replyId && (e.result?.kind === 'sent' || e.result?.kind === 'failed');
    const deliveryOf = async (replyId: string) => {
      const found = await eventually(async () => events.find((e) => worked(e, replyId)), `the example's delivery of ${replyId}`, DELIVERY_WAIT_MS);
      expect(events.filter((e) => worked(e, replyId))).toHaveLength(1);
      return found;
    };

    // A reply is delivered through the fake provider and completed.
    const replyId = await writeReply(conversation, 'Your parcel is on its way.');
    const delivered = await deliveryOf(replyId);
    expect(delivered).toMatchObject({ result: { kind: 'sent', providerMessageIds: [expect.stringMatching(/^fake-1-/)] } });
    expect(['ack', 'none']).toContain(delivered.action); // none: the start-up catch-up found it first
    // The fake channel's "delivered" webhook: matched to the delivery through the receipt store.
    const deliveryId = delivered.notification?.deliveryId;
    expect(await eventually(async () => events.find((e) => e.type === 'receipt' && e.deliveryId === deliveryId), 'the receipt', 20_000)).toMatchObject({ status: 'delivered' });
    expect(printed).toEqual([expect.stringContaining(`to ${env.EXTERNAL_CONVERSATION_ID} (customer example-customer-7): "Your parcel is on its way." -> fake-1-`)]);
    const mirror = await waitForMirror(conversation, replyId, (m) => m.status === 'sent' && m.receipt !== undefined);
    expect(mirror.receipt).toMatchObject({ status: 'delivered' });

    // A reply the fake provider rejects permanently is reported as failed (and acked).
    const blockedId = await writeReply(conversation, 'Hello? #blocked');
    expect(await deliveryOf(blockedId)).toMatchObject({ action: 'ack', result: { kind: 'failed', outcome: 'failed', code: 'recipient_blocked', deliveryStatus: 'failed' } });

    // Every step of processDelivery reached the example's observer (metrics hooks), with the loop's `via`.
    const steps = events.filter((e) => e.via !== undefined && e.type !== 'handled' && (e as { deliveryId?: string }).deliveryId === delivered.notification?.deliveryId).map((e) => e.type);
    expect(steps).toEqual(expect.arrayContaining(['claimed', 'started', 'completed']));
    await waitForMirror(conversation, blockedId, (m) => m.status === 'failed');

    // Something that is not a notification is acked and reported, not retried.
    await topic.publish(Buffer.from('not json'));
    const junk = await eventually(async () => events.find((e) => e.type === 'invalid_notification'), 'the junk message', 20_000);
    expect(junk).toMatchObject({ action: 'ack', error: { name: 'InvalidNotificationError', code: 'invalid_notification' } });
  } finally {
    await connector.stop();
  }
  expect(events.at(-1)?.type).toBe('stopped');
});

test('a conversation the desk starts by handle: delivered as a template through the fake provider, it joins the direct chat the provider opened; the customer\'s answer and the next reply land in that conversation', async () => {
  const example = await importExample();
  const events: ExampleEvent[] = [];
  const printed: string[] = [];
  // The example declares its channel at start-up (a 24 h window and its templates); an admin lets members start conversations by handle.
  const connector = await example.runConnector(example.loadConfig(exampleEnv({ STARTUP_TEXT: '' })), {
    ...exampleDeps(topic),
    send: example.createFakeProvider({ write: (line) => printed.push(line) }),
    onEvent: (event) => events.push(event),
  });
  try {
    await allowStarts(integration, ['handle']);
    const handle = `grace_${randomUUID().slice(0, 8)}`;
    const chat = `dm-${handle}`;
    // On the windowed channel nobody has written in this conversation yet: the start is a template.
    const started = await deskStart(integration, { to: { kind: 'handle', value: handle }, template: { name: 'order_update', language: 'en-US', params: { name: 'Grace', order: 'A-1001' } } });
    expect(started.reused).toBe(false);

    const sent = await startDeliveryDoc(integration, started, (d) => d.status === 'sent', DELIVERY_WAIT_MS);
    // The SDK gave the provider `start` and the address; the provider opened the direct chat and named it.
    expect(printed).toEqual(
      expect.arrayContaining([
        `[fake-provider] to ${chat} (new customer ${handle}): template order_update (en-US) {"name":"Grace","order":"A-1001"}`,
        expect.stringContaining(`to ${chat} (new customer ${handle}): "Hi Grace, your order A-1001 has shipped." -> fake-`),
      ]),
    );
    // The connector reports `handled` once processDelivery returns, just after the complete the record shows: waited for, not raced.
    await eventually(async () => events.find((e) => e.type === 'handled' && e.notification?.messageId === started.messageId && e.result?.kind === 'sent'), 'the start handled by the connector', DELIVERY_WAIT_MS);
    expect(sent.start).toMatchObject({ to: { kind: 'handle', value: handle }, thread: { externalConversationId: chat, externalCustomerId: handle } });

    // The customer answers in the direct chat (the connector relays the channel's webhook): the conversation the start joined.
    const answer = await sdkClient(integration.key).messages.send({ externalConversationId: chat, sender: { externalId: handle, displayName: 'Grace' }, text: 'Thanks! When does it arrive?' });
    const target = await followMergedInto(integration, started.conversationId);
    if (!onTestService) {
      // On the emulators: the start's delivery moved to the thread's conversation, and the started one points there.
      expect(target).toBe(answer.conversationId);
      expect(sent.conversationId).toBe(answer.conversationId);
    }
    // The operator replies where the console takes them (the window is open now: the customer wrote): it goes to the same chat, in the same conversation.
    const replyId = await writeReply({ integration, conversationId: target }, 'Tomorrow before noon.');
    await waitForMirror({ integration, conversationId: answer.conversationId }, replyId, (m) => m.status === 'sent');
    expect(printed).toEqual(expect.arrayContaining([expect.stringContaining(`to ${chat} (customer ${handle}): "Tomorrow before noon." -> fake-`)]));

    // A start to the same handle again is a reply in that conversation (reused), delivered to the same chat.
    const again = await deskStart(integration, { to: { kind: 'handle', value: handle }, template: { name: 'follow_up', language: 'en-US', params: {} } });
    expect(again).toMatchObject({ reused: true, conversationId: answer.conversationId });
  } finally {
    await connector.stop();
  }
});

/** Collects a child's stdout/stderr lines and lets a test wait for one. */
function lines(child: ChildProcessWithoutNullStreams) {
  const out: string[] = [];
  const err: string[] = [];
  const split = (into: string[]) => {
    let rest = '';
    return (chunk: Buffer) => {
      rest += chunk.toString('utf8');
      const parts = rest.split('\n');
      rest = parts.pop() ?? '';
      into.push(...parts);
    };
  };
  child.stdout.on('data', split(out));
  child.stderr.on('data', split(err));
  const describe = () => `stdout:\n${out.join('\n')}\nstderr:\n${err.join('\n')}`;
  return {
    out,
    err,
    async waitFor(pattern: RegExp, timeoutMs = 25_000): Promise<RegExpMatchArray> {
      try {
        return await eventually(async () => out.map((l) => l.match(pattern)).find((m) => m !== null) ?? undefined, `a line matching ${pattern}`, timeoutMs);
      } catch (error) {
        throw new Error(`${(error as Error).message}\n${describe()}`);
      }
    },
    describe,
  };
}

test('a reply notified while no subscription existed is delivered by the catch-up at start-up, and its conversation goes on', async () => {
  // Replies go to a topic nobody subscribes to yet: Pub/Sub drops their notifications.
  const lateTopic = await createLateTopic();
  const late = await createTestIntegration({ topic: lateTopic.topicPath });
  try {
    const { conversationId, externalConversationId, customerId } = await startConversation(sdkClient(late.key), late);
    const conversation = { integration: late, conversationId };
    const lost = await writeReply(conversation, 'You missed this one.');
    const queued = await waitForMirror(conversation, lost, (m) => m.status === 'queued');
    // The connector's subscription is created now, after the notification was published (the
    // mirror says `queued` before the outbox publishes: subscribing then could still catch it).
    await notificationPublished(queued.deliveryId as string);
    const subscribed = await lateTopic.subscribe();
    const example = await importExample();
    const events: ExampleEvent[] = [];
    const connector = await example.runConnector(
      example.loadConfig({ ...exampleEnv({ STARTUP_TEXT: '' }), ...exampleConnectionEnv(subscribed), INTEGRATION_KEY: late.key }),
      { ...exampleDeps(subscribed), send: example.createFakeProvider({ write: () => undefined }), onEvent: (event) => events.push(event) },
    );
    try {
      const caughtUp = await eventually(async () => events.find((e) => e.type === 'handled' && e.notification?.messageId === lost), 'the catch-up delivery', DELIVERY_WAIT_MS);
      expect(caughtUp).toMatchObject({ via: 'catch_up', action: 'none', result: { kind: 'sent' } });
      await waitForMirror(conversation, lost, (m) => m.status === 'sent');
      // The connector declared a 24 h window at start-up (after the customer wrote): the customer
      // writes again, which opens it (docs/contract.md#windows).
      await sdkClient(late.key).messages.send({ externalConversationId, sender: { externalId: customerId }, text: 'Thanks!' });
      // The next reply of the conversation is notified to the new subscription and delivered.
      const next = await writeReply(conversation, 'And this one arrives normally.');
      const delivered = await eventually(async () => events.find((e) => e.type === 'handled' && e.notification?.messageId === next), 'the next delivery', DELIVERY_WAIT_MS);
      expect(delivered).toMatchObject({ via: 'notification', action: 'ack', result: { kind: 'sent' } });
    } finally {
      await connector.stop();
    }
  } finally {
    await lateTopic.close();
  }
});

emulatorOnly('main.js runs as a real process on the built SDK: message at startup, reply printed by the fake provider, clean stop on SIGINT', async () => {
  expect({ built: existsSync(join(ROOT, 'sdk', 'dist', 'index.js')), hint: 'npm run build --workspace sdk (npm test builds it)' }).toMatchObject({ built: true });
  const env = exampleEnv();
  const child = spawn(process.execPath, [join(EXAMPLE_DIR, 'main.js')], { cwd: ROOT, env: { ...process.env, ...env } });
  const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
  const output = lines(child);
  try {
    await output.waitFor(/^\[connector\] waiting for delivery notifications/);
    const [, conversationId] = await output.waitFor(/^\[connector\] incoming message accepted: conversationId=(\S+) messageId=\S+ duplicate=false/);
    const replyId = await writeReply({ integration, conversationId: conversationId! }, 'Hi from the operator!');
    await output.waitFor(new RegExp(`^\\[fake-provider\\] to ${env.EXTERNAL_CONVERSATION_ID} \\(customer example-customer-7\\): "Hi from the operator!" -> fake-1-`));
    // By its notification, or by the start-up catch-up when that pending-list read comes after the reply.
    const [, deliveryId] = await output.waitFor(/^\[connector\] delivery (d_\S+)(?: \(found by the catch-up\))?: sent \(provider ids: fake-1-\S+\)$/);
    await output.waitFor(new RegExp(`^\\[connector\\] delivery ${deliveryId}: receipt delivered$`));
    await waitForMirror({ integration, conversationId: conversationId! }, replyId, (m) => m.status === 'sent');
  } finally {
    child.kill('SIGINT');
  }
  expect(await exited).toBe(0);
  expect(output.out.at(-1)).toBe('[connector] stopped');
  expect(output.err).toEqual([]);
}, 120_000);
