/**
 * createReceiptTracker against a real local HTTP server playing the service: a `sent` result of
 * processDelivery is remembered, and the channel's reports become receipt calls for its delivery,
 * with its traceparent.
 */
import {
  ConflictError,
  ConnectorClient,
  createReceiptTracker,
  DEFAULT_RECEIPT_MEMORY_ENTRIES,
  HELD_RECEIPT_MAX_AGE_MS,
  MAX_HELD_RECEIPTS,
  parsePulledNotification,
  type HeldReceiptOutcome,
  type ProcessDeliveryResult,
  type ReceiptStore,
  type TrackedDelivery,
} from '../../src/index.js';
import { errorReply, fakeSleep, KEY, reply, startServer, type TestServer } from './helpers/server.js';

const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const NOTIFICATION = { deliveryId: 'd_1', workspaceId: 'ws', integrationId: 'int', conversationId: 'c_1', messageId: 'm_1' };
const READY = {
  status: 'ready',
  leaseId: 'lease-1',
  leaseExpiresAt: 1_900_000_120_000,
  message: { text: 'Hello', recipient: { externalConversationId: 'chat-1', externalCustomerId: 'cust-1' } },
};

let server: TestServer;
let client: ConnectorClient;

/** The service: every delivery claimed, started and completed; receipts taken (or a route of the test). */
function serve(receipt: Parameters<TestServer['setHandler']>[0] = (_q, res) => reply(res, 200, { status: 'sent' })): void {
  server.setHandler((req, res, n) => {
    const op = req.path.replace('/v1/deliveries/', '');
    if (op === 'claim') return reply(res, 200, { ...READY, leaseId: `lease-${(req.json as { deliveryId: string }).deliveryId}` });
    if (op === 'start') return reply(res, 200, { status: 'sending' });
    if (op === 'complete') return reply(res, 200, { status: 'sent' });
    if (op === 'receipt') return receipt(req, res, n);
    return errorReply(res, 404, 'not_found');
  });
}
const receipts = () => server.requests.filter((r) => r.path === '/v1/deliveries/receipt');
const sent = (deliveryId: string, providerMessageIds: string[]): ProcessDeliveryResult => ({ kind: 'sent', deliveryId, leaseId: `lease-${deliveryId}`, providerMessageIds });

beforeEach(async () => {
  server = await startServer();
  client = new ConnectorClient({ integrationKey: KEY, baseUrl: server.url, sleep: fakeSleep().sleep, retry: 1 });
});
afterEach(async () => {
  await server.close();
});

test('a sent result of processDelivery is remembered; a report becomes a receipt for its delivery, with its traceparent and the provider id', async () => {
  serve();
  const tracker = createReceiptTracker(client);
  const notification = parsePulledNotification({ data: Buffer.from(JSON.stringify(NOTIFICATION)), attributes: { traceparent: TRACEPARENT } });
  const result = await client.processDelivery(notification, () => ['wamid.1', 'wamid.2']);
  expect(result.kind).toBe('sent');
  expect(await tracker.remember(result, notification)).toBe(true);

  expect(await tracker.report('wamid.2', 'delivered', { at: 1_900_000_200_000 })).toEqual({ status: 'reported', deliveryId: 'd_1', result: { status: 'sent' } });
  expect(await tracker.report('wamid.1', 'failed', { code: 'undeliverable' })).toEqual({ status: 'reported', deliveryId: 'd_1', result: { status: 'sent' } });
  expect(receipts().map((r) => [r.json, r.headers.traceparent])).toEqual([
    [{ deliveryId: 'd_1', status: 'delivered', providerMessageId: 'wamid.2', at: 1_900_000_200_000 }, TRACEPARENT],
    [{ deliveryId: 'd_1', status: 'failed', providerMessageId: 'wamid.1', code: 'undeliverable' }, TRACEPARENT],
  ]);
});

test('without a (well-formed) traceparent the receipt carries none; results other than sent are not remembered', async () => {
  serve();
  const tracker = createReceiptTracker(client);
  expect(await tracker.remember(sent('d_2', ['p-2']))).toBe(true);
  expect(await tracker.remember(sent('d_3', ['p-3']), NOTIFICATION)).toBe(true);
  expect(await tracker.remember(sent('d_5', ['p-5']), { traceparent: 'garbage' })).toBe(true);
  expect(await tracker.remember({ kind: 'skipped', deliveryId: 'd_4', reason: 'waiting_for_previous' })).toBe(false);
  expect(await tracker.remember(undefined)).toBe(false);
  await tracker.report('p-2', 'read');
  await tracker.report('p-3', 'delivered');
  await tracker.report('p-5', 'delivered');
  expect(receipts().map((r) => [(r.json as { deliveryId: string }).deliveryId, r.headers.traceparent])).toEqual([
    ['d_2', undefined],
    ['d_3', undefined],
    ['d_5', undefined],
  ]);
});

test('an unknown provider id resolves unknown_message and calls nothing', async () => {
  serve();
  const tracker = createReceiptTracker(client);
  await tracker.remember(sent('d_1', ['p-1']));
  expect(await tracker.report('p-unknown', 'delivered')).toEqual({ status: 'unknown_message', providerMessageId: 'p-unknown' });
  expect(server.requests).toEqual([]);
});

test('after a final receipt (read, failed) the id is forgotten; after delivered it is kept', async () => {
  serve();
  const tracker = createReceiptTracker(client);
  await tracker.remember(sent('d_1', ['p-1']));
  expect((await tracker.report('p-1', 'delivered')).status).toBe('reported');
  expect((await tracker.report('p-1', 'read')).status).toBe('reported');
  expect(await tracker.report('p-1', 'read')).toEqual({ status: 'unknown_message', providerMessageId: 'p-1' });
  expect(receipts()).toHaveLength(2);
});

test('a failed report needs a code (before any call); a service error is thrown and the id kept', async () => {
  serve((_q, res) => errorReply(res, 409, 'delivery_not_sent'));
  const tracker = createReceiptTracker(client);
  await tracker.remember(sent('d_1', ['p-1']));
  await expect(tracker.report('p-1', 'failed')).rejects.toThrow(TypeError);
  expect(server.requests).toEqual([]);
  await expect(tracker.report('p-1', 'read')).rejects.toBeInstanceOf(ConflictError);
  serve();
  expect(await tracker.report('p-1', 'read')).toEqual({ status: 'reported', deliveryId: 'd_1', result: { status: 'sent' } });
});

test('the default store keeps DEFAULT_RECEIPT_MEMORY_ENTRIES ids and forgets the oldest first', async () => {
  serve();
  const tracker = createReceiptTracker(client);
  for (let i = 0; i <= DEFAULT_RECEIPT_MEMORY_ENTRIES; i++) await tracker.remember(sent(`d_${i}`, [`p-${i}`]));
  expect(await tracker.report('p-0', 'delivered')).toEqual({ status: 'unknown_message', providerMessageId: 'p-0' });
  expect(await tracker.report('p-1', 'delivered')).toMatchObject({ status: 'reported', deliveryId: 'd_1' });
  expect(await tracker.report(`p-${DEFAULT_RECEIPT_MEMORY_ENTRIES}`, 'delivered')).toMatchObject({ status: 'reported', deliveryId: `d_${DEFAULT_RECEIPT_MEMORY_ENTRIES}` });
});

test('maxEntries bounds the default store; remembering an id again makes it the newest', async () => {
  serve();
  const tracker = createReceiptTracker(client, { maxEntries: 2 });
  await tracker.remember(sent('d_a', ['a']));
  await tracker.remember(sent('d_b', ['b']));
  await tracker.remember(sent('d_a', ['a'])); // a is now newer than b
  await tracker.remember(sent('d_c', ['c'])); // evicts b
  expect(await tracker.report('b', 'delivered')).toEqual({ status: 'unknown_message', providerMessageId: 'b' });
  expect(await tracker.report('a', 'delivered')).toMatchObject({ status: 'reported', deliveryId: 'd_a' });
  expect(await tracker.report('c', 'delivered')).toMatchObject({ status: 'reported', deliveryId: 'd_c' });
  expect(() => createReceiptTracker(client, { maxEntries: 0 })).toThrow(RangeError);
});

test('a custom (asynchronous) store is used for get, set and delete', async () => {
  serve();
  const rows = new Map<string, TrackedDelivery>();
  const log: string[] = [];
  const store: ReceiptStore = {
    get: async (id) => {
      log.push(`get ${id}`);
      return rows.get(id);
    },
    set: async (id, delivery) => {
      log.push(`set ${id}`);
      rows.set(id, delivery);
    },
    delete: async (id) => {
      log.push(`delete ${id}`);
      rows.delete(id);
    },
  };
  const tracker = createReceiptTracker(client, { store });
  await tracker.remember(sent('d_1', ['p-1', 'p-2']), { traceparent: TRACEPARENT });
  expect([...rows]).toEqual([
    ['p-1', { deliveryId: 'd_1', traceparent: TRACEPARENT }],
    ['p-2', { deliveryId: 'd_1', traceparent: TRACEPARENT }],
  ]);
  expect(await tracker.report('p-2', 'read')).toMatchObject({ status: 'reported', deliveryId: 'd_1' });
  expect(receipts()[0]?.headers.traceparent).toBe(TRACEPARENT);
  expect(await tracker.report('p-9', 'delivered')).toEqual({ status: 'unknown_message', providerMessageId: 'p-9' });
  expect(log).toEqual(['set p-1', 'set p-2', 'get p-2', 'delete p-2', 'get p-9']);
  expect([...rows.keys()]).toEqual(['p-1']);
});

test('a late complete of an unknown delivery uses the lease of the unknown result; then its receipts can be tracked', async () => {
  // The README's recipe (docs/contract.md#complete): complete from the delivery's last lease turns `unknown` into `sent`.
  server.setHandler((req, res) => {
    const op = req.path.replace('/v1/deliveries/', '');
    if (op === 'claim') return reply(res, 200, READY);
    if (op === 'start') return reply(res, 200, { status: 'sending' });
    if (op === 'fail') return reply(res, 200, { status: 'unknown' });
    if (op === 'complete' || op === 'receipt') return reply(res, 200, { status: 'sent' });
    return errorReply(res, 404, 'not_found');
  });
  const result = await client.processDelivery(NOTIFICATION, () => {
    throw new Error('socket hang up');
  });
  if (result.kind !== 'unknown') throw new Error(`expected unknown, got ${result.kind}`);
  // Later, the channel confirms the message went out as `wamid.9`:
  expect(await client.deliveries.complete({ deliveryId: result.deliveryId, leaseId: result.leaseId, providerMessageIds: ['wamid.9'] })).toEqual({ status: 'sent' });
  expect(server.requests.at(-1)?.json).toEqual({ deliveryId: 'd_1', leaseId: 'lease-1', providerMessageIds: ['wamid.9'] });
  const tracker = createReceiptTracker(client);
  expect(await tracker.remember({ kind: 'sent', deliveryId: result.deliveryId, leaseId: result.leaseId, providerMessageIds: ['wamid.9'] })).toBe(true);
  expect(await tracker.report('wamid.9', 'delivered')).toMatchObject({ status: 'reported', deliveryId: 'd_1' });
});

test('createReceiptTracker checks its client', () => {
  expect(() => createReceiptTracker({} as never)).toThrow(TypeError);
});

describe('a receipt that overtakes its part (multi-part replies): not_yet_sent, held, reported by remember', () => {
  /** A tracker on a fake clock, with what it said about held receipts. */
  function heldTracker() {
    let now = 1_900_000_000_000;
    const held: HeldReceiptOutcome[] = [];
    const tracker = createReceiptTracker(client, { now: () => now, onHeldReceipt: (o) => held.push(o) });
    return { tracker, held, advance: (ms: number) => (now += ms) };
  }

  test('a part announced with sending: its receipt before the completion is not_yet_sent (no call), then reported after the complete, in the order received; a stranger stays unknown_message', async () => {
    serve();
    const { tracker, held } = heldTracker();
    const answers: unknown[] = [];
    const result = await client.processDelivery(NOTIFICATION, async ({ deliveryId }) => {
      // The text part went out; the channel's webhook for it comes before the image part is sent.
      tracker.sending(deliveryId, 'wamid.text');
      answers.push(await tracker.report('wamid.text', 'delivered', { at: 1_900_000_000_500 }));
      answers.push(await tracker.report('wamid.text', 'read'));
      answers.push(await tracker.report('wamid.stranger', 'delivered'));
      tracker.sending(deliveryId, ['wamid.image']);
      return ['wamid.text', 'wamid.image'];
    });
    expect(answers).toEqual([
      { status: 'not_yet_sent', deliveryId: 'd_1', providerMessageId: 'wamid.text' },
      { status: 'not_yet_sent', deliveryId: 'd_1', providerMessageId: 'wamid.text' },
      { status: 'unknown_message', providerMessageId: 'wamid.stranger' },
    ]);
    expect(receipts()).toEqual([]);
    expect(await tracker.remember(result)).toBe(true);
    expect(receipts().map((r) => r.json)).toEqual([
      { deliveryId: 'd_1', status: 'delivered', providerMessageId: 'wamid.text', at: 1_900_000_000_500 },
      { deliveryId: 'd_1', status: 'read', providerMessageId: 'wamid.text' },
    ]);
    expect(server.requests.map((r) => r.path.replace('/v1/deliveries/', ''))).toEqual(['claim', 'start', 'complete', 'receipt', 'receipt']);
    expect(held).toEqual([
      { providerMessageId: 'wamid.text', deliveryId: 'd_1', status: 'delivered', outcome: 'reported', result: { status: 'sent' } },
      { providerMessageId: 'wamid.text', deliveryId: 'd_1', status: 'read', outcome: 'reported', result: { status: 'sent' } },
    ]);
    // `read` was final: the id is forgotten; the other part is remembered.
    expect(await tracker.report('wamid.text', 'read')).toEqual({ status: 'unknown_message', providerMessageId: 'wamid.text' });
    expect(await tracker.report('wamid.image', 'delivered')).toMatchObject({ status: 'reported', deliveryId: 'd_1' });
  });

  test(`a part waits HELD_RECEIPT_MAX_AGE_MS (${HELD_RECEIPT_MAX_AGE_MS} ms) at most: then its held receipts are dropped (expired) and the id is unknown_message`, async () => {
    serve();
    const { tracker, held, advance } = heldTracker();
    tracker.sending('d_1', 'p-1');
    expect(await tracker.report('p-1', 'delivered')).toMatchObject({ status: 'not_yet_sent' });
    advance(HELD_RECEIPT_MAX_AGE_MS);
    // Exactly at the limit it still waits.
    expect(await tracker.report('p-1', 'read')).toMatchObject({ status: 'not_yet_sent' });
    expect(held).toEqual([]);
    advance(1);
    expect(await tracker.report('p-1', 'read')).toEqual({ status: 'unknown_message', providerMessageId: 'p-1' });
    expect(held.map((o) => [o.status, o.outcome, 'reason' in o ? o.reason : ''])).toEqual([
      ['delivered', 'dropped', 'expired'],
      ['read', 'dropped', 'expired'],
    ]);
    // A late remember finds nothing held: no receipt call for them.
    await tracker.remember(sent('d_1', ['p-1']));
    expect(receipts()).toEqual([]);
  });

  test(`at most MAX_HELD_RECEIPTS (${MAX_HELD_RECEIPTS}) receipts are held: the oldest is dropped (overflow)`, async () => {
    serve();
    const { tracker, held } = heldTracker();
    tracker.sending('d_1', 'p-1');
    for (let i = 0; i <= MAX_HELD_RECEIPTS; i++) await tracker.report('p-1', 'delivered', { at: i });
    expect(held).toEqual([{ providerMessageId: 'p-1', deliveryId: 'd_1', status: 'delivered', outcome: 'dropped', reason: 'overflow' }]);
    await tracker.remember(sent('d_1', ['p-1']));
    const reported = receipts().map((r) => (r.json as { at: number }).at);
    expect(reported).toHaveLength(MAX_HELD_RECEIPTS);
    expect(reported[0]).toBe(1);
  });

  test('a delivery that was not sent (failed) drops what was held for its parts (not_sent); a failing receipt call is reported as failed, remember still resolves', async () => {
    serve((_q, res) => errorReply(res, 409, 'delivery_not_sent'));
    const { tracker, held } = heldTracker();
    tracker.sending('d_1', 'p-1');
    await tracker.report('p-1', 'delivered');
    expect(await tracker.remember({ kind: 'failed', deliveryId: 'd_1', leaseId: 'l', outcome: 'failed', code: 'rejected', error: new Error('x'), deliveryStatus: 'failed' })).toBe(false);
    expect(held).toEqual([{ providerMessageId: 'p-1', deliveryId: 'd_1', status: 'delivered', outcome: 'dropped', reason: 'not_sent' }]);
    expect(await tracker.report('p-1', 'read')).toEqual({ status: 'unknown_message', providerMessageId: 'p-1' });

    tracker.sending('d_2', 'p-2');
    await tracker.report('p-2', 'delivered');
    expect(await tracker.remember(sent('d_2', ['p-2']))).toBe(true);
    expect(held.at(-1)).toMatchObject({ providerMessageId: 'p-2', deliveryId: 'd_2', outcome: 'failed', error: expect.any(ConflictError) });
  });

  test('sending checks its arguments', () => {
    const { tracker } = heldTracker();
    expect(() => tracker.sending('', 'p')).toThrow(TypeError);
    expect(() => tracker.sending('d', [''])).toThrow(TypeError);
  });
});
