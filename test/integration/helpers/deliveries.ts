/**
 * Helpers for delivery integration tests: a real Pub/Sub topic + subscription on the emulator,
 * conversations created through the real API, operator replies written as the console writes
 * them, and polling for what the triggers do.
 */
import { randomUUID } from 'node:crypto';
import { FieldValue, type DocumentData, type DocumentReference } from 'firebase-admin/firestore';
import { PubSub, type Message, type Subscription } from '@google-cloud/pubsub';
import { adminDb, closeStack, createTestIntegration, postJson, projectId, type ApiResponse, type TestIntegration } from './stack';
import { retryAfterSecondsFromMs } from '../../../functions/src/rules/errors';

export interface Notification {
  deliveryId: string;
  workspaceId: string;
  integrationId: string;
  conversationId: string;
  messageId: string;
}

let pubsub: PubSub | undefined;
/** The one Pub/Sub client of a test file (the SDK end-to-end helpers use it too): `closePubSub` closes it. */
export function pubsubClient(): PubSub {
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

/** A streaming pull opened by `listenTo`: `close()` stops it and waits for the acknowledgements. */
export interface Listening {
  close(): Promise<void>;
}

/**
 * Streams `subscription`'s messages to `onMessage` (which acknowledges them) until `close()`.
 *
 * Every streaming pull of the tests opens here, for its 'error' listener: it stays for the
 * subscription's whole life, after `close()` too. The client library emits a stream's failed
 * reconnection as 'error', and an 'error' with no listener throws out of the event loop, failing
 * whichever suite that Jest worker runs at that moment ("Unhandled error. (TypeError: Cannot read
 * properties of undefined (reading 'GrpcClient'))": a reconnection timer of an earlier suite's
 * subscription, firing after its modules were torn down, seen in CI). An error while listening is
 * printed (the test then times out waiting, and this says why); after `close()` it is expected.
 */
export function listenTo(subscription: Subscription, onMessage: (message: Message) => void): Listening {
  let closed = false;
  subscription.on('error', (err: unknown) => {
    if (!closed) console.error(`subscription ${subscription.name}: ${err instanceof Error ? err.message : String(err)}`);
  });
  subscription.on('message', onMessage);
  return {
    async close() {
      closed = true;
      subscription.removeAllListeners('message');
      await subscription.close();
    },
  };
}

/** What each notification carried, by delivery id: its JSON body and its attributes. */
export interface Published {
  body: Record<string, unknown>;
  attributes: Record<string, string>;
}

/** A second subscription on `topicPath` that keeps each notification's attributes too, by delivery id (`createTestTopic` keeps bodies only). */
export async function attributeLog(topicPath: string): Promise<{ seen: Map<string, Published[]>; close(): Promise<void> }> {
  const [subscription] = await pubsubClient().topic(topicPath).createSubscription(`attrs-${randomUUID()}`, { ackDeadlineSeconds: 10 });
  const seen = new Map<string, Published[]>();
  const listening = listenTo(subscription, (message) => {
    const body = JSON.parse(message.data.toString('utf8')) as Record<string, unknown>;
    const id = String(body.deliveryId);
    seen.set(id, [...(seen.get(id) ?? []), { body, attributes: { ...message.attributes } }]);
    message.ack();
  });
  return { seen, close: () => listening.close() };
}

/** A fresh topic with one streaming-pull subscription on the Pub/Sub emulator. */
export async function createTestTopic(): Promise<TestTopic> {
  const name = `t-${randomUUID()}`;
  const [topic] = await pubsubClient().createTopic(name);
  const [subscription] = await topic.createSubscription(`${name}-sub`, { ackDeadlineSeconds: 10 });
  const received: Notification[] = [];
  let consumed = 0;
  const listening = listenTo(subscription, (message) => {
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
    close: () => listening.close(),
  };
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Polls `probe` until it returns a value other than undefined (or fails after `timeoutMs`). The
 * default is for a trigger's work: the emulator runs a trigger's first invocation in a new worker
 * process and queues events behind the ones before them, so on a loaded machine (the @serial lane
 * beside the static checks) the wait reached 15 s; a passing wait costs only its own time.
 */
export async function eventually<T>(probe: () => Promise<T | undefined>, what: string, timeoutMs = 30_000): Promise<T> {
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

// ------------------------------------------------------------------------------------ test file fixtures

/** Something a test file opens and must close before Jest can exit (a topic's streaming pull, a client). */
export interface Closable {
  close(): Promise<void>;
}

// Function properties, not methods: they do not use `this`, so tests may destructure them.
export interface DeliveryTestFile {
  /** Closes `opened` in the file's afterAll (once, however often it is tracked); returns it. */
  track: <T extends Closable>(opened: T) => T;
  /** A new conversation with its own integration and topic (or those in `options`); its topic is tracked. */
  ownConversation: (options?: Parameters<typeof setupConversation>[0]) => Promise<ConversationSetup>;
}

/**
 * Registers the afterAll of a test file that uses Pub/Sub: closes what it tracked (last opened
 * first), then the Pub/Sub client and the stack's Firestore client. Open subscriptions and clients
 * keep Jest from exiting, and a file that forgets one of them only shows up as a hang at the end.
 */
export function deliveryTestFile(): DeliveryTestFile {
  const opened: Closable[] = [];
  afterAll(async () => {
    for (const item of [...opened].reverse()) await item.close();
    await closePubSub();
    await closeStack();
  });
  const track = <T extends Closable>(item: T): T => {
    if (!opened.includes(item)) opened.push(item);
    return item;
  };
  return {
    track,
    // The topic is tracked before the integration and conversation are made, so that a failure
    // there still leaves nothing open.
    ownConversation: async (options = {}) => {
      const topic = track(options.topic ?? (await createTestTopic()));
      return setupConversation({ ...options, topic });
    },
  };
}

/**
 * Resources made once for all tests of a file, in a beforeAll (an integration and its topic take
 * seconds of emulator time; tests stay independent by each using its own conversation). `create`
 * tracks what it opens, which the file's afterAll closes (see `deliveryTestFile`). `onReady` gets
 * the value in the same beforeAll, for a file whose tests read it through plain `let` bindings.
 * Returns an accessor for tests and for hooks registered after this call.
 */
export function fileFixture<T>(create: (file: DeliveryTestFile) => Promise<T>, onReady?: (value: T) => void): () => T {
  const file = deliveryTestFile();
  let value: T | undefined;
  beforeAll(async () => {
    value = await create(file);
    onReady?.(value);
  });
  return () => {
    // At module level (before beforeAll ran) or after a failed create: say so instead of an undefined.
    if (value === undefined) throw new Error('the file fixture is not set up: use it inside tests or later hooks');
    return value;
  };
}

export interface SharedConversations {
  /** A new conversation (new customer, new external chat) in the shared integration and topic. */
  conversation: () => Promise<ConversationSetup>;
}

/**
 * One integration with replies to one topic for the whole test file, and a first conversation in
 * it; ordering is per conversation, so tests that each take their own conversation do not wait on
 * each other. Registers the file's beforeAll (which passes the first conversation to `onReady`)
 * and afterAll.
 */
export function sharedConversationFixture(onReady?: (first: ConversationSetup) => void): SharedConversations {
  const first = fileFixture((file) => file.ownConversation(), onReady);
  return {
    conversation: () => setupConversation({ topic: first().topic, integration: first().integration }),
  };
}

/** Writes an operator reply exactly as the console does (docs/data-model.md); returns its message id. */
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
export function op(name: 'claim' | 'start' | 'extend' | 'complete' | 'fail' | 'receipt' | 'pending' | 'attachment', key: string, body: unknown): Promise<ApiResponse> {
  return postJson(`/v1/deliveries/${name}`, body, { key });
}

// ------------------------------------------------------------------------------------ delivery suite helpers

export interface ReadyClaim {
  status: 'ready';
  leaseId: string;
  leaseExpiresAt: number;
  message: { text: string; recipient: { externalConversationId: string; externalCustomerId: string } };
}

/** Fails with the response in the message when `res` is not `status` (so a failure says why). */
export function expectHttp(res: ApiResponse, status: number): void {
  const context = `HTTP ${res.status}: ${res.text.slice(0, 500)}`;
  expect({ status: res.status, context }).toEqual({ status, context });
}

/** Asserts a 200 whose body equals `body` exactly. */
export function expectOk(res: ApiResponse, body: unknown): void {
  expectHttp(res, 200);
  expect(res.body).toEqual(body);
}

/**
 * Asserts the error envelope of docs/contract.md#errors: exactly `{ error: { code, message? } }`, JSON,
 * with the given status and code. Returns the message.
 */
export function expectApiError(res: ApiResponse, status: number, code: string): string {
  expectHttp(res, status);
  expect(res.headers.get('content-type') ?? '').toMatch(/^application\/json/);
  const body = res.body as { error?: { code?: unknown; message?: unknown } };
  expect(Object.keys(body)).toEqual(['error']);
  expect(Object.keys(body.error ?? {}).every((k) => k === 'code' || k === 'message')).toBe(true);
  expect(body.error?.code).toBe(code);
  return typeof body.error?.message === 'string' ? body.error.message : '';
}

/** The `Retry-After` header of a 503, as whole seconds (asserts it is a positive integer). */
export function retryAfterSeconds(res: ApiResponse): number {
  const header = res.headers.get('retry-after');
  expect(header).toMatch(/^[1-9][0-9]*$/);
  return Number(header);
}

/**
 * `call`, with the wall-clock moments just before it was sent and just after it was answered: the
 * service ran it at some moment in between (the emulators share this host's clock).
 */
export async function timedCall<T>(call: () => Promise<T>): Promise<{ result: T; sentAt: number; answeredAt: number }> {
  const sentAt = Date.now();
  const result = await call();
  return { result, sentAt, answeredAt: Date.now() };
}

/**
 * Asserts that the 503's `Retry-After` counts the seconds to `dueAt` from a moment of the call
 * (`retryAfterSecondsFromMs`): bounds from the call's own timing, so that a slow answer on a busy
 * machine cannot fail it, and a wrong count still does.
 */
export function expectRetryAfterUntil(timed: { result: ApiResponse; sentAt: number; answeredAt: number }, dueAt: number): void {
  const seconds = retryAfterSeconds(timed.result);
  expect(seconds).toBeGreaterThanOrEqual(retryAfterSecondsFromMs(dueAt - timed.answeredAt));
  expect(seconds).toBeLessThanOrEqual(retryAfterSecondsFromMs(dueAt - timed.sentAt));
}

/** Claims and asserts `ready`; returns the claim body. */
export async function claimReady(key: string, deliveryId: string, requestId: string = randomUUID()): Promise<ReadyClaim> {
  const res = await op('claim', key, { deliveryId, requestId });
  expectHttp(res, 200);
  expect(res.body).toMatchObject({ status: 'ready' });
  return res.body as ReadyClaim;
}

/**
 * The connector fails `deliveryId` for good (`recipient_unreachable`), then, once `reply`'s mirror
 * shows it, an operator asks for a resend as the console writes it (`resend: { requestedAt, uid }`).
 */
export async function failAndRequestResend(key: string, deliveryId: string, reply: DocumentReference): Promise<void> {
  const claim = await claimReady(key, deliveryId);
  expectOk(await op('fail', key, { deliveryId, leaseId: claim.leaseId, outcome: 'failed', code: 'recipient_unreachable' }), { status: 'failed' });
  await eventually(async () => ((await reply.get()).get('delivery.status') === 'failed' ? true : undefined), 'the failed mirror');
  await reply.update({ resend: { requestedAt: FieldValue.serverTimestamp(), uid: 'operator-1' } });
}

/** Claims and asserts a `skip` with `reason`. */
export async function expectSkip(key: string, deliveryId: string, reason: string, requestId: string = randomUUID()): Promise<void> {
  expectOk(await op('claim', key, { deliveryId, requestId }), { status: 'skip', reason });
}

/** Every notification received so far for one delivery (the topic's list is never cleared). */
/** A reply mirror's attempt log as `event` or `event:code` strings, oldest first (docs/decisions.md#attempt-log). */
export function attemptEvents(mirror: DocumentData | undefined): string[] {
  const attempts = (mirror?.attempts ?? []) as Array<{ event: string; code?: string }>;
  return attempts.map((a) => (a.code === undefined ? a.event : `${a.event}:${a.code}`));
}

export function notificationsFor(topic: TestTopic, deliveryId: string): Notification[] {
  return topic.received.filter((n) => n.deliveryId === deliveryId);
}

/** Waits until `count` notifications in total were received for `deliveryId`; returns them. */
export function waitForNotifications(topic: TestTopic, deliveryId: string, count: number, timeoutMs = 20_000): Promise<Notification[]> {
  return eventually(async () => {
    const found = notificationsFor(topic, deliveryId);
    return found.length >= count ? found : undefined;
  }, `${count} notification(s) for ${deliveryId}`, timeoutMs);
}

export interface Reply {
  messageId: string;
  deliveryId: string;
}

/** Writes an operator reply and waits for its first notification; returns the ids. */
export async function replyAndNotify(setup: ConversationSetup, text: string): Promise<Reply> {
  const messageId = await writeReply(setup, text);
  const notification = await eventually(async () => setup.topic.received.find((n) => n.messageId === messageId), `the notification of reply ${messageId}`, 20_000);
  return { messageId, deliveryId: notification.deliveryId };
}

/** Writes an operator reply and waits for the trigger to create its delivery (mirror present). */
export async function replyAndSequence(setup: ConversationSetup, text: string): Promise<Reply> {
  const messageId = await writeReply(setup, text);
  const mirror = await waitForMirror(setup, messageId);
  return { messageId, deliveryId: mirror.deliveryId as string };
}

export const deliveryDocRef = (workspaceId: string, deliveryId: string) =>
  adminDb().collection('workspaces').doc(workspaceId).collection('deliveries').doc(deliveryId);

/** The stored delivery record (asserts it exists). */
export async function deliveryDoc(setup: Pick<ConversationSetup, 'integration'>, deliveryId: string): Promise<DocumentData> {
  const data = await readDeliveryDoc(setup.integration.workspaceId, deliveryId);
  expect(data).toBeDefined();
  return data as DocumentData;
}

/** Every delivery record of a conversation, by seq. */
export async function conversationDeliveries(setup: Pick<ConversationSetup, 'integration' | 'conversationId'>): Promise<DocumentData[]> {
  const snap = await adminDb()
    .collection('workspaces')
    .doc(setup.integration.workspaceId)
    .collection('deliveries')
    .where('conversationId', '==', setup.conversationId)
    .get();
  return snap.docs.map((d) => d.data()).sort((a, b) => (a.seq as number) - (b.seq as number));
}

/**
 * Test fixture for time: moves the current lease's expiry to `expiresAt` (default: 1 s ago), as if
 * the 120 s had passed: on the record (the state machine compares it with the server clock) and on
 * its check document (`deliveryChecks/`, where the sweeper finds due lease expiries), together.
 */
export async function setLeaseExpiry(setup: Pick<ConversationSetup, 'integration'>, deliveryId: string, expiresAt = Date.now() - 1_000): Promise<void> {
  const batch = adminDb().batch();
  batch.update(deliveryDocRef(setup.integration.workspaceId, deliveryId), { 'lease.expiresAt': expiresAt });
  batch.update(adminDb().collection('deliveryChecks').doc(deliveryId), { dueAt: expiresAt });
  await batch.commit();
}

/** The reply mirror of a reply once `predicate` holds (polls). */
export function mirrorOnceStatus(setup: ConversationSetup, messageId: string, status: string): Promise<DocumentData> {
  return waitForMirror(setup, messageId, (m) => m.status === status);
}

/** A delivery the caller works through: claim, start, complete; returns the lease used. */
export async function deliverFully(key: string, deliveryId: string, providerMessageIds: string[] = [`p-${randomUUID()}`]): Promise<ReadyClaim> {
  const claim = await claimReady(key, deliveryId);
  expectOk(await op('start', key, { deliveryId, leaseId: claim.leaseId }), { status: 'sending' });
  expectSent(await op('complete', key, { deliveryId, leaseId: claim.leaseId, providerMessageIds }), deliveryId);
  return claim;
}

/**
 * A `complete` (or final `fail`) answered `status` (default `sent`), with or without `next`: when
 * the conversation has a claimable delivery behind this one, the answer names it (its five
 * identifiers, another delivery). Tests about `next` itself assert it exactly.
 */
export function expectSent(res: ApiResponse, deliveryId: string, status: 'sent' | 'failed' | 'unknown' = 'sent'): void {
  expectHttp(res, 200);
  const { next, ...rest } = res.body as { next?: unknown };
  expect(rest).toEqual({ status });
  if (next !== undefined) {
    expect(next).toEqual({ deliveryId: expect.stringMatching(/^d_/), workspaceId: expect.any(String), integrationId: expect.any(String), conversationId: expect.any(String), messageId: expect.any(String) });
    expect((next as { deliveryId: string }).deliveryId).not.toBe(deliveryId);
  }
}

/**
 * Maps with at most `limit` calls in flight. The Functions emulator starts one worker process per
 * concurrent request, so a wide Promise.all of HTTP calls pays many cold starts; a few in flight
 * reuse warm workers.
 */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i] as T, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
