/**
 * runPullLoop against a real local HTTP server playing the service, on a subscription object with
 * the @google-cloud/pubsub interface (an EventEmitter that emits `message` / `error` and has
 * `close()`; messages with `data`, `ack()`, `nack()`). The service side is real HTTP; only the
 * Pub/Sub side is this small stand-in, as it is an interface the loop takes, not our service.
 */
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import type { Subscription } from '@google-cloud/pubsub';
import { ConnectorClient, runPullLoop, type PullLoopEvent, type PullSubscription } from '../../src/index.js';
import { errorReply, fakeSleep, KEY, reply, startServer, type RecordedRequest, type TestServer } from './helpers/server.js';
import { fakeClock, trackedFetch, type FakeClock } from './helpers/clock.js';

// The real client library's Subscription is accepted where the loop wants a PullSubscription (a compile-time check).
export const acceptsPubSubSubscription = (s: Subscription): PullSubscription => s;

class FakeSubscription extends EventEmitter {
  closed = false;
  async close(): Promise<void> {
    this.closed = true;
  }
}

interface FakeMessage {
  id: string;
  data: Buffer;
  attributes: Record<string, string>;
  acks: Array<'ack' | 'nack'>;
  ack(): void;
  nack(): void;
}
let nextId = 0;
function message(data: unknown): FakeMessage {
  const acks: Array<'ack' | 'nack'> = [];
  return {
    id: `msg-${++nextId}`,
    data: Buffer.from(typeof data === 'string' ? data : JSON.stringify(data)),
    attributes: {},
    acks,
    ack: () => acks.push('ack'),
    nack: () => acks.push('nack'),
  };
}
const notification = (deliveryId: string) => ({ deliveryId, workspaceId: 'ws', integrationId: 'int', conversationId: `c_${deliveryId}`, messageId: `m_${deliveryId}` });
const ready = (deliveryId: string) => ({
  status: 'ready',
  leaseId: `lease-${deliveryId}`,
  leaseExpiresAt: Date.now() + 120_000,
  message: { text: `reply ${deliveryId}`, recipient: { externalConversationId: 'chat', externalCustomerId: 'cust' } },
});

type Route = (req: RecordedRequest, res: ServerResponse) => void;
let server: TestServer;
let client: ConnectorClient;
let subscription: FakeSubscription;
let events: PullLoopEvent[];
/** The time of the tests that wait (provider durations, the pending-list interval, stopTimeoutMs): it moves when the code is idle. */
let clock: FakeClock;
const deliveryOf = (req: RecordedRequest) => (req.json as { deliveryId: string }).deliveryId;
const callsFor = (deliveryId: string) => server.requests.filter((r) => r.json !== undefined && deliveryOf(r) === deliveryId).map((r) => r.path.replace('/v1/deliveries/', ''));

/** The service: an empty pending list, and every delivery sent unless a route says otherwise. */
function serve(routes: Partial<Record<'claim' | 'start' | 'complete' | 'fail' | 'pending', Route>> = {}): void {
  server.setHandler((req, res) => {
    const op = req.path.replace('/v1/deliveries/', '') as keyof typeof routes;
    const custom = routes[op];
    if (custom) return custom(req, res);
    if (op === 'pending') return reply(res, 200, { deliveries: [], nextCursor: null });
    if (op === 'claim') return reply(res, 200, ready(deliveryOf(req)));
    if (op === 'start') return reply(res, 200, { status: 'sending' });
    if (op === 'complete') return reply(res, 200, { status: 'sent' });
    if (op === 'fail') {
      const { outcome } = req.json as { outcome: string };
      return reply(res, 200, { status: outcome === 'retry' ? 'queued' : outcome });
    }
    return errorReply(res, 404, 'not_found');
  });
}

async function until(what: string, check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

beforeEach(async () => {
  server = await startServer();
  const http = trackedFetch();
  clock = fakeClock({ busy: () => http.inFlight() > 0 });
  client = new ConnectorClient({ integrationKey: KEY, baseUrl: server.url, sleep: fakeSleep().sleep, retry: 1, fetch: http.fetch });
  subscription = new FakeSubscription();
  events = [];
});
afterEach(async () => {
  await server.close();
});

const handled = () => events.filter((e): e is Extract<PullLoopEvent, { type: 'handled' }> => e.type === 'handled');

test('a notification is delivered (claim, start, provider once, complete) and acked; every step is reported', async () => {
  serve();
  const sent: string[] = [];
  const loop = runPullLoop(client, subscription, ({ deliveryId }) => {
    sent.push(deliveryId);
    return [`p-${deliveryId}`];
  }, { catchUpOnStart: false, onEvent: (e) => events.push(e) });
  const m = message(notification('d_1'));
  subscription.emit('message', m);
  await until('the ack', () => m.acks.length > 0);
  expect(m.acks).toEqual(['ack']);
  expect(sent).toEqual(['d_1']);
  expect(callsFor('d_1')).toEqual(['claim', 'start', 'complete']);
  expect(events.map((e) => e.type)).toEqual(['claimed', 'started', 'completed', 'handled']);
  expect(events.slice(0, 3).every((e) => 'via' in e && e.via === 'notification')).toBe(true);
  expect(handled()[0]).toMatchObject({ via: 'notification', action: 'ack', messageId: m.id, notification: notification('d_1'), result: { kind: 'sent', providerMessageIds: ['p-d_1'] } });
  await loop.stop();
  expect(subscription.closed).toBe(true);
  expect(subscription.listenerCount('message')).toBe(0);
  expect(events.at(-1)).toEqual({ type: 'stopped', abandoned: 0 });
  // A late error of the closed subscription (a stream retry scheduled before the close) is neither
  // an unhandled 'error' event (EventEmitter would throw it) nor reported after `stopped`.
  expect(subscription.listenerCount('error')).toBe(1);
  expect(() => subscription.emit('error', new Error('late stream retry'))).not.toThrow();
  expect(events.at(-1)).toEqual({ type: 'stopped', abandoned: 0 });
});

test("an answer's `next` is processed at once (via 'next', nothing to ack), chained while each end names the next", async () => {
  // d_1's complete names d_2, d_2's final fail names d_3; d_3 completes without a next.
  const nextOf: Record<string, string> = { d_1: 'd_2', d_2: 'd_3' };
  serve({
    complete: (req, res) => {
      const next = nextOf[deliveryOf(req)];
      reply(res, 200, { status: 'sent', ...(next === undefined ? {} : { next: notification(next) }) });
    },
  });
  const sent: string[] = [];
  const loop = runPullLoop(client, subscription, ({ deliveryId }) => {
    sent.push(deliveryId);
    return [`p-${deliveryId}`];
  }, { catchUpOnStart: false, concurrency: 1, onEvent: (e) => events.push(e) });
  const m = message(notification('d_1'));
  subscription.emit('message', m);
  await until('the chain', () => handled().length === 3);
  expect(sent).toEqual(['d_1', 'd_2', 'd_3']);
  expect(handled().map((e) => [e.notification.deliveryId, e.via, e.action])).toEqual([
    ['d_1', 'notification', 'ack'],
    ['d_2', 'next', 'none'],
    ['d_3', 'next', 'none'],
  ]);
  expect(m.acks).toEqual(['ack']);
  expect(callsFor('d_2')).toEqual(['claim', 'start', 'complete']);
  // d_2's own notification arrives afterwards: acknowledged without a claim (the loop finished it).
  const late = message(notification('d_2'));
  subscription.emit('message', late);
  expect(late.acks).toEqual(['ack']);
  expect(events.at(-1)).toEqual({ type: 'duplicate_notification', action: 'ack', notification: notification('d_2'), messageId: late.id, finished: true });
  expect(callsFor('d_2')).toEqual(['claim', 'start', 'complete']);
  await loop.stop();
  expect(events.at(-1)).toEqual({ type: 'stopped', abandoned: 0 });
});

test('a notification of a delivery still waiting (skipped) or re-queued (retry_scheduled) is processed again: only finished ones are remembered', async () => {
  let claims = 0;
  serve({ claim: (req, res) => (++claims === 1 ? reply(res, 200, { status: 'skip', reason: 'waiting_for_previous' }) : reply(res, 200, ready(deliveryOf(req)))) });
  const loop = runPullLoop(client, subscription, ({ deliveryId }) => [`p-${deliveryId}`], { catchUpOnStart: false, onEvent: (e) => events.push(e) });
  const first = message(notification('d_9'));
  subscription.emit('message', first);
  await until('the skip', () => first.acks.length > 0);
  const second = message(notification('d_9'));
  subscription.emit('message', second);
  await until('the send', () => second.acks.length > 0);
  expect(callsFor('d_9')).toEqual(['claim', 'claim', 'start', 'complete']);
  expect(handled().map((e) => e.result?.kind)).toEqual(['skipped', 'sent']);
  await loop.stop();
});

test('send receives the pulled message`s traceparent; a pending-list item has none', async () => {
  const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
  serve({ pending: (_q, res) => reply(res, 200, { deliveries: [notification('d_2')], nextCursor: null }) });
  const inputs: Array<{ deliveryId: string; traceparent?: string; traceId?: string }> = [];
  const loop = runPullLoop(client, subscription, ({ deliveryId, traceparent, traceId }) => {
    inputs.push({ deliveryId, ...(traceparent === undefined ? {} : { traceparent }), ...(traceId === undefined ? {} : { traceId }) });
    return [`p-${deliveryId}`];
  }, { catchUpOnStart: false, catchUpIntervalMs: 0, onEvent: (e) => events.push(e) });
  const m = message(notification('d_1'));
  m.attributes = { traceparent: TRACEPARENT };
  subscription.emit('message', m);
  await until('the ack', () => m.acks.length > 0);
  await loop.catchUp();
  await loop.stop();
  expect(inputs).toEqual([{ deliveryId: 'd_1', traceparent: TRACEPARENT, traceId: '4bf92f3577b34da6a3ce929d0e0e4736' }, { deliveryId: 'd_2' }]);
});

test('junk is acked with an invalid_notification event and never reaches the service (no unhandled rejection)', async () => {
  serve();
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  try {
    const loop = runPullLoop(client, subscription, () => ['p'], { catchUpOnStart: false, onEvent: (e) => events.push(e) });
    const junk = [message('not json'), message({ deliveryId: 'd_1' }), message('')];
    for (const m of junk) subscription.emit('message', m);
    expect(junk.map((m) => m.acks)).toEqual([['ack'], ['ack'], ['ack']]);
    expect(events).toEqual(junk.map((m) => ({ type: 'invalid_notification', action: 'ack', messageId: m.id, error: expect.objectContaining({ name: 'InvalidNotificationError' }) })));
    await loop.stop();
    await new Promise((resolve) => setImmediate(resolve));
    expect(unhandled).toEqual([]);
    expect(server.requests).toEqual([]);
  } finally {
    process.off('unhandledRejection', onUnhandled);
  }
});

test.each<[string, 'ack' | 'nack', string, Route]>([
  ['503 temporarily_unavailable (after the retries)', 'nack', 'error', (_q, res) => errorReply(res, 503, 'temporarily_unavailable', 'busy', { 'retry-after': '1' })],
  // Another claim's live lease, a retry time not yet due: the service notifies again, so no retry and an ack.
  ['503 lease_busy', 'ack', 'skipped', (_q, res) => errorReply(res, 503, 'lease_busy', 'busy', { 'retry-after': '90' })],
  ['503 retry_delayed', 'ack', 'skipped', (_q, res) => errorReply(res, 503, 'retry_delayed', 'later', { 'retry-after': '60' })],
  ['429', 'nack', 'error', (_q, res) => errorReply(res, 429, 'rate_limited', 'slow down', { 'retry-after': '1' })],
  ['a network failure', 'nack', 'error', (_q, res) => res.destroy()],
  ['404 (a delivery of another integration)', 'ack', 'error', (_q, res) => errorReply(res, 404, 'delivery_not_found')],
  ['401 (a revoked key)', 'ack', 'error', (_q, res) => errorReply(res, 401, 'invalid_key')],
  ['skip waiting_for_previous', 'ack', 'skipped', (_q, res) => reply(res, 200, { status: 'skip', reason: 'waiting_for_previous' })],
  ['skip already_sent', 'ack', 'already_finished', (_q, res) => reply(res, 200, { status: 'skip', reason: 'already_sent' })],
])('claim answering %s: %s (%s)', async (_name, action, kind, claim) => {
  serve({ claim });
  const loop = runPullLoop(client, subscription, () => ['p'], { catchUpOnStart: false, onEvent: (e) => events.push(e) });
  const m = message(notification('d_1'));
  subscription.emit('message', m);
  await until('the ack or nack', () => m.acks.length > 0);
  expect(m.acks).toEqual([action]);
  const [done] = handled();
  if (kind === 'error') expect(done).toMatchObject({ action, error: expect.objectContaining({ name: expect.any(String) }) });
  else expect(done).toMatchObject({ action, result: { kind } });
  await loop.stop();
});

test('provider outcomes are all acked: retry_scheduled, failed, unknown (the service owns what comes next)', async () => {
  serve();
  const { ProviderPermanentError, ProviderRetryableError } = await import('../../src/index.js');
  const loop = runPullLoop(client, subscription, ({ deliveryId }) => {
    if (deliveryId === 'd_r') throw new ProviderRetryableError('later', { code: 'rate_limited', retryAfterMs: 5_000 });
    if (deliveryId === 'd_f') throw new ProviderPermanentError('blocked', { code: 'recipient_blocked' });
    throw new Error('socket hang up');
  }, { catchUpOnStart: false, onEvent: (e) => events.push(e) });
  const ms = ['d_r', 'd_f', 'd_u'].map((id) => message(notification(id)));
  for (const m of ms) subscription.emit('message', m);
  await until('three acks', () => ms.every((m) => m.acks.length > 0));
  expect(ms.map((m) => m.acks)).toEqual([['ack'], ['ack'], ['ack']]);
  const kinds = Object.fromEntries(handled().map((e) => [e.notification.deliveryId, e.result?.kind]));
  expect(kinds).toEqual({ d_r: 'retry_scheduled', d_f: 'failed', d_u: 'unknown' });
  await loop.stop();
});

test('concurrency is bounded; waiting messages are processed in turn', async () => {
  serve();
  let running = 0;
  let most = 0;
  const loop = runPullLoop(client, subscription, async ({ deliveryId }) => {
    running++;
    most = Math.max(most, running);
    await clock.sleep(40);
    running--;
    return [`p-${deliveryId}`];
  }, { concurrency: 2, catchUpOnStart: false, clock });
  const ms = Array.from({ length: 6 }, (_, i) => message(notification(`d_${i}`)));
  for (const m of ms) subscription.emit('message', m);
  await clock.runUntil('six acks', () => ms.every((m) => m.acks.length > 0));
  expect(most).toBe(2);
  expect(ms.map((m) => m.acks)).toEqual(ms.map(() => ['ack']));
  await loop.stop();
});

/** A notification of `deliveryId` in conversation `conversationId` (the others each have their own). */
const inConversation = (deliveryId: string, conversationId: string) => ({ ...notification(deliveryId), conversationId });

test('one delivery per conversation at a time: a notification of a busy conversation waits for its turn without a claim, other conversations go on', async () => {
  serve();
  const gates = new Map<string, () => void>();
  const loop = runPullLoop(client, subscription, ({ deliveryId }) => new Promise<string[]>((resolve) => gates.set(deliveryId, () => resolve([`p-${deliveryId}`]))), {
    catchUpOnStart: false,
    onEvent: (e) => events.push(e),
  });
  const [a1, a2, b1] = [message(inConversation('d_a1', 'c_a')), message(inConversation('d_a2', 'c_a')), message(inConversation('d_b1', 'c_b'))];
  for (const m of [a1, a2, b1]) subscription.emit('message', m);
  // c_b is not held up by c_a; d_a2 is not claimed while d_a1 runs.
  await until('both conversations at the provider', () => gates.has('d_a1') && gates.has('d_b1'));
  expect(callsFor('d_a2')).toEqual([]);
  expect(loop.active).toBe(2);
  gates.get('d_b1')!();
  await until('b1 acked', () => b1.acks.length > 0);
  expect(callsFor('d_a2')).toEqual([]);
  // d_a1 ends without naming a next: d_a2's turn, and its claim.
  gates.get('d_a1')!();
  await until('a2 at the provider', () => gates.has('d_a2'));
  expect(a1.acks).toEqual(['ack']);
  gates.get('d_a2')!();
  await until('a2 acked', () => a2.acks.length > 0);
  expect([a1, a2, b1].map((m) => m.acks)).toEqual([['ack'], ['ack'], ['ack']]);
  expect(callsFor('d_a2')).toEqual(['claim', 'start', 'complete']);
  await loop.stop();
});

test("a notification waiting for its conversation is acknowledged without a claim when its predecessor's end took it as `next`", async () => {
  serve({ complete: (req, res) => reply(res, 200, { status: 'sent', ...(deliveryOf(req) === 'd_1' ? { next: inConversation('d_2', 'c_x') } : {}) }) });
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const sent: string[] = [];
  const loop = runPullLoop(client, subscription, async ({ deliveryId }) => {
    if (deliveryId === 'd_1') await gate;
    sent.push(deliveryId);
    return [`p-${deliveryId}`];
  }, { catchUpOnStart: false, onEvent: (e) => events.push(e) });
  const first = message(inConversation('d_1', 'c_x'));
  const second = message(inConversation('d_2', 'c_x'));
  subscription.emit('message', first);
  await until('the provider call of d_1', () => callsFor('d_1').includes('start'));
  subscription.emit('message', second);
  release();
  await until('both acks', () => first.acks.length > 0 && second.acks.length > 0);
  expect(sent).toEqual(['d_1', 'd_2']);
  expect([first.acks, second.acks]).toEqual([['ack'], ['ack']]);
  // One claim of d_2 in all: the one its `next` made; its own notification waited and found it finished.
  expect(callsFor('d_2')).toEqual(['claim', 'start', 'complete']);
  expect(handled().map((e) => [e.notification.deliveryId, e.via])).toEqual([
    ['d_1', 'notification'],
    ['d_2', 'next'],
  ]);
  expect(events.filter((e) => e.type === 'duplicate_notification')).toEqual([{ type: 'duplicate_notification', action: 'ack', notification: inConversation('d_2', 'c_x'), messageId: second.id, finished: true }]);
  await loop.stop();
});

test('a second notification of a delivery in progress waits for it and shares its outcome (one claim)', async () => {
  serve();
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const loop = runPullLoop(client, subscription, async () => {
    await gate;
    return ['p'];
  }, { catchUpOnStart: false, onEvent: (e) => events.push(e) });
  const first = message(notification('d_1'));
  const duplicate = message(notification('d_1'));
  subscription.emit('message', first);
  await until('the provider call', () => callsFor('d_1').includes('start'));
  subscription.emit('message', duplicate);
  release();
  await until('both acks', () => first.acks.length > 0 && duplicate.acks.length > 0);
  expect([first.acks, duplicate.acks]).toEqual([['ack'], ['ack']]);
  expect(callsFor('d_1')).toEqual(['claim', 'start', 'complete']);
  expect(events.find((e) => e.type === 'duplicate_notification')).toEqual({ type: 'duplicate_notification', action: 'ack', notification: notification('d_1'), messageId: duplicate.id });
  await loop.stop();
});

test('catch-up: at start-up the pending list is walked (every page) and each delivery processed, without a message to ack', async () => {
  serve({
    pending: (req, res) => {
      const cursor = (req.json as { cursor?: string }).cursor;
      if (cursor === undefined) reply(res, 200, { deliveries: [notification('d_a'), notification('d_b')], nextCursor: 'page-2' });
      else reply(res, 200, { deliveries: [notification('d_c')], nextCursor: null });
    },
  });
  const loop = runPullLoop(client, subscription, ({ deliveryId }) => [`p-${deliveryId}`], { onEvent: (e) => events.push(e) });
  await until('the catch-up', () => events.some((e) => e.type === 'catch_up'));
  await until('three deliveries', () => handled().length === 3);
  expect(events.find((e) => e.type === 'catch_up')).toEqual({ type: 'catch_up', found: 3, started: 3 });
  expect(handled().map((e) => [e.notification.deliveryId, e.via, e.action, e.result?.kind])).toEqual([
    ['d_a', 'catch_up', 'none', 'sent'],
    ['d_b', 'catch_up', 'none', 'sent'],
    ['d_c', 'catch_up', 'none', 'sent'],
  ]);
  await loop.stop();
});

test('catch-up: periodically; a delivery already in progress, or of a conversation in progress, is not claimed; a failing list is reported and tried again', async () => {
  let pendingCalls = 0;
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  serve({
    pending: (_req, res) => {
      pendingCalls++;
      if (pendingCalls === 1) errorReply(res, 403, 'integration_inactive');
      // d_later: another delivery of d_busy's conversation, not started while d_busy runs either.
      else reply(res, 200, { deliveries: [notification('d_busy'), inConversation('d_later', 'c_d_busy')], nextCursor: null });
    },
  });
  const loop = runPullLoop(client, subscription, async () => {
    await gate;
    return ['p'];
  }, { catchUpIntervalMs: 50, onEvent: (e) => events.push(e), clock });
  await clock.runUntil('the failed walk', () => events.some((e) => e.type === 'catch_up_failed'));
  expect(events.find((e) => e.type === 'catch_up_failed')).toMatchObject({ error: { status: 403, code: 'integration_inactive' } });
  const m = message(notification('d_busy'));
  subscription.emit('message', m);
  await clock.runUntil('the provider call', () => callsFor('d_busy').includes('start'));
  await clock.runUntil('two more walks', () => pendingCalls >= 4);
  expect(events.filter((e) => e.type === 'catch_up').every((e) => e.type === 'catch_up' && e.found === 2 && e.started === 0)).toBe(true);
  expect(callsFor('d_later')).toEqual([]);
  release();
  await clock.runUntil('the ack', () => m.acks.length > 0);
  expect(callsFor('d_busy').filter((c) => c === 'claim')).toHaveLength(1);
  await loop.stop();
});

test.each([
  // Concurrency 1 and another conversation: it waits for a slot.
  ['a slot', { concurrency: 1 }, notification('d_2')],
  // The same conversation, slots to spare: it waits for its conversation's turn.
  ["its conversation's turn", {}, inConversation('d_2', 'c_d_1')],
] as const)('stop(): no new message taken, one waiting for %s nacked, the delivery in progress finishes and is acked, then close()', async (_waitsFor, limits, waitingNotification) => {
  serve();
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const loop = runPullLoop(client, subscription, async () => {
    await gate;
    return ['p'];
  }, { ...limits, catchUpOnStart: false, onEvent: (e) => events.push(e) });
  const inProgress = message(notification('d_1'));
  const waiting = message(waitingNotification);
  subscription.emit('message', inProgress);
  subscription.emit('message', waiting);
  await until('the provider call', () => callsFor('d_1').includes('start'));
  const stopped = loop.stop();
  await until('the waiting message nacked', () => waiting.acks.length > 0);
  expect(waiting.acks).toEqual(['nack']);
  expect(subscription.listenerCount('message')).toBe(0);
  expect(subscription.closed).toBe(false); // still waiting for d_1
  release();
  await stopped;
  expect(inProgress.acks).toEqual(['ack']);
  expect(subscription.closed).toBe(true);
  expect(callsFor('d_2')).toEqual([]);
  expect(events.at(-1)).toEqual({ type: 'stopped', abandoned: 0 });
  await expect(loop.stop()).resolves.toBeUndefined(); // twice is fine
});

test('stop() gives up waiting after stopTimeoutMs and still closes the subscription', async () => {
  serve();
  const seen: PullLoopEvent[] = [];
  const loop = runPullLoop(client, subscription, () => new Promise<string[]>(() => undefined), {
    catchUpOnStart: false,
    stopTimeoutMs: 50,
    delivery: { extendLease: false, providerTimeoutMs: 400 },
    onEvent: (e) => seen.push(e),
    clock,
  });
  const m = message(notification('d_hang'));
  subscription.emit('message', m);
  await clock.runUntil('the provider call', () => callsFor('d_hang').includes('start'));
  await clock.run(loop.stop());
  expect(subscription.closed).toBe(true);
  expect(m.acks).toEqual([]); // never acked: Pub/Sub redelivers it after its ack deadline
  expect(seen.at(-1)).toEqual({ type: 'stopped', abandoned: 1 });
  // The abandoned delivery still ends by itself (its provider timeout), after the loop stopped.
  await clock.runUntil('the abandoned delivery to end', () => seen.some((e) => e.type === 'handled'));
  expect(seen.find((e) => e.type === 'handled')).toMatchObject({ result: { kind: 'unknown', code: 'provider_timeout' } });
  expect(m.acks).toEqual([]); // the subscription is closed: nothing is acked any more
});

test('subscription errors are reported; a throwing observer changes nothing; bad arguments are refused', async () => {
  serve();
  const seen: string[] = [];
  const loop = runPullLoop(client, subscription, () => ['p'], {
    catchUpOnStart: false,
    onEvent: (e) => {
      seen.push(e.type);
      throw new Error('observer bug');
    },
  });
  subscription.emit('error', new Error('stream reset'));
  const m = message(notification('d_1'));
  subscription.emit('message', m);
  await until('the ack', () => m.acks.length > 0);
  expect(m.acks).toEqual(['ack']);
  expect(seen[0]).toBe('subscription_error');
  await loop.stop();
  expect(() => runPullLoop(client, {} as PullSubscription, () => ['p'])).toThrow(TypeError);
  expect(() => runPullLoop(client, subscription, () => ['p'], { concurrency: 0 })).toThrow(RangeError);
});
