import { ConflictError, ConnectorClient, NotFoundError } from '../../src/index.js';
import { errorReply, fakeSleep, KEY, reply, startServer, type TestServer } from './helpers/server.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const READY = {
  status: 'ready',
  leaseId: 'lease-1',
  leaseExpiresAt: 1_900_000_120_000,
  message: { text: 'Your order shipped', recipient: { externalConversationId: 'chat-1', externalCustomerId: 'cust-1' } },
};

let server: TestServer;
let delays: number[];
let client: ConnectorClient;
beforeEach(async () => {
  server = await startServer();
  const s = fakeSleep();
  delays = s.delays;
  client = new ConnectorClient({ integrationKey: KEY, baseUrl: server.url, sleep: s.sleep });
});
afterEach(async () => {
  await server.close();
});

describe('deliveries.claim', () => {
  test('ready: typed lease, message and recipient', async () => {
    server.setHandler((_req, res) => reply(res, 200, { ...READY, extra: 'ignored' }));
    const result = await client.deliveries.claim({ deliveryId: 'd_1', requestId: 'req-1' });
    expect(result).toEqual(READY);
    const req = server.requests[0]!;
    expect(req.path).toBe('/v1/deliveries/claim');
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.json).toEqual({ deliveryId: 'd_1', requestId: 'req-1' });
  });

  test('skip: reason', async () => {
    server.setHandler((_req, res) => reply(res, 200, { status: 'skip', reason: 'waiting_for_previous' }));
    await expect(client.deliveries.claim({ deliveryId: 'd_1' })).resolves.toEqual({ status: 'skip', reason: 'waiting_for_previous' });
  });

  test('generates one requestId when omitted and reuses it on retries (503 lease_busy, then a lost answer)', async () => {
    server.setHandler((_req, res, i) => {
      if (i === 0) errorReply(res, 503, 'lease_busy', 'busy', { 'retry-after': '5' });
      else if (i === 1) res.socket?.destroy(); // the answer is lost
      else reply(res, 200, READY);
    });
    await client.deliveries.claim({ deliveryId: 'd_1' });
    const ids = server.requests.map((r) => (r.json as { requestId: string }).requestId);
    expect(ids).toHaveLength(3);
    expect(ids[0]).toMatch(UUID);
    expect(new Set(ids).size).toBe(1);
    expect(delays[0]).toBe(5000);
  });

  test('two claim calls get two different requestIds', async () => {
    server.setHandler((_req, res) => reply(res, 200, READY));
    await client.deliveries.claim({ deliveryId: 'd_1' });
    await client.deliveries.claim({ deliveryId: 'd_1' });
    const [a, b] = server.requests.map((r) => (r.json as { requestId: string }).requestId);
    expect(a).not.toBe(b);
  });

  test('404 delivery_not_found', async () => {
    server.setHandler((_req, res) => errorReply(res, 404, 'delivery_not_found'));
    await expect(client.deliveries.claim({ deliveryId: 'nope' })).rejects.toBeInstanceOf(NotFoundError);
    expect(server.requests).toHaveLength(1);
  });
});

describe('deliveries.start / complete / fail', () => {
  test('start sends exactly { deliveryId, leaseId } and returns sending | sent', async () => {
    server.setHandler((_req, res, i) => reply(res, 200, { status: i === 0 ? 'sending' : 'sent' }));
    await expect(client.deliveries.start({ deliveryId: 'd', leaseId: 'l' })).resolves.toEqual({ status: 'sending' });
    await expect(client.deliveries.start({ deliveryId: 'd', leaseId: 'l' })).resolves.toEqual({ status: 'sent' });
    expect(server.requests[0]?.path).toBe('/v1/deliveries/start');
    expect(server.requests[0]?.json).toEqual({ deliveryId: 'd', leaseId: 'l' });
  });

  test('start 409 lease_lost is a ConflictError, not retried', async () => {
    server.setHandler((_req, res) => errorReply(res, 409, 'lease_lost'));
    await expect(client.deliveries.start({ deliveryId: 'd', leaseId: 'l' })).rejects.toBeInstanceOf(ConflictError);
    expect(server.requests).toHaveLength(1);
  });

  test('complete sends the provider ids and returns sent; retried with the same body', async () => {
    server.setHandler((_req, res, i) => (i === 0 ? errorReply(res, 503, 'contention', undefined, { 'retry-after': '1' }) : reply(res, 200, { status: 'sent' })));
    await expect(client.deliveries.complete({ deliveryId: 'd', leaseId: 'l', providerMessageIds: ['p1', 'p2'] })).resolves.toEqual({ status: 'sent' });
    expect(server.requests.map((r) => r.path)).toEqual(['/v1/deliveries/complete', '/v1/deliveries/complete']);
    expect(server.requests.map((r) => r.json)).toEqual([
      { deliveryId: 'd', leaseId: 'l', providerMessageIds: ['p1', 'p2'] },
      { deliveryId: 'd', leaseId: 'l', providerMessageIds: ['p1', 'p2'] },
    ]);
  });

  test('fail sends only the given fields and returns the status', async () => {
    server.setHandler((_req, res, i) => reply(res, 200, { status: ['queued', 'failed', 'unknown', 'sent'][i] }));
    await expect(client.deliveries.fail({ deliveryId: 'd', leaseId: 'l', outcome: 'retry', code: 'rate_limited', retryAfterMs: 60_000 })).resolves.toEqual({
      status: 'queued',
    });
    await expect(client.deliveries.fail({ deliveryId: 'd', leaseId: 'l', outcome: 'failed', code: 'blocked' })).resolves.toEqual({ status: 'failed' });
    await expect(client.deliveries.fail({ deliveryId: 'd', leaseId: 'l', outcome: 'unknown', code: 'timeout', providerMessageIds: ['p1'] })).resolves.toEqual({
      status: 'unknown',
    });
    await expect(client.deliveries.fail({ deliveryId: 'd', leaseId: 'l', outcome: 'failed', code: 'x' })).resolves.toEqual({ status: 'sent' });
    expect(server.requests.map((r) => r.json)).toEqual([
      { deliveryId: 'd', leaseId: 'l', outcome: 'retry', code: 'rate_limited', retryAfterMs: 60_000 },
      { deliveryId: 'd', leaseId: 'l', outcome: 'failed', code: 'blocked' },
      { deliveryId: 'd', leaseId: 'l', outcome: 'unknown', code: 'timeout', providerMessageIds: ['p1'] },
      { deliveryId: 'd', leaseId: 'l', outcome: 'failed', code: 'x' },
    ]);
    expect(server.requests.every((r) => r.path === '/v1/deliveries/fail')).toBe(true);
  });
});

describe('deliveries.extend', () => {
  test('sends exactly { deliveryId, leaseId } to /v1/deliveries/extend and returns the new expiry', async () => {
    server.setHandler((_req, res) => reply(res, 200, { leaseExpiresAt: 1_900_000_240_000 }));
    await expect(client.deliveries.extend({ deliveryId: 'd', leaseId: 'l' })).resolves.toEqual({ leaseExpiresAt: 1_900_000_240_000 });
    expect(server.requests.map((r) => [r.path, r.json])).toEqual([['/v1/deliveries/extend', { deliveryId: 'd', leaseId: 'l' }]]);
  });

  test.each(['lease_lost', 'lease_limit_reached', 'delivery_finished'])('409 %s is a ConflictError with its code, not retried', async (code) => {
    server.setHandler((_req, res) => errorReply(res, 409, code));
    await expect(client.deliveries.extend({ deliveryId: 'd', leaseId: 'l' })).rejects.toMatchObject({ name: 'ConflictError', status: 409, code });
    expect(server.requests).toHaveLength(1);
    expect(delays).toEqual([]);
  });

  test('503 is retried with the same body; an answer without a numeric leaseExpiresAt is an UnexpectedResponseError', async () => {
    server.setHandler((_req, res, i) => (i === 0 ? errorReply(res, 503, 'temporarily_unavailable', 'busy', { 'retry-after': '1' }) : reply(res, 200, { leaseExpiresAt: 5 })));
    await expect(client.deliveries.extend({ deliveryId: 'd', leaseId: 'l' })).resolves.toEqual({ leaseExpiresAt: 5 });
    expect(server.requests.map((r) => r.json)).toEqual([{ deliveryId: 'd', leaseId: 'l' }, { deliveryId: 'd', leaseId: 'l' }]);
    expect(delays).toEqual([1000]);
    server.setHandler((_req, res) => reply(res, 200, { leaseExpiresAt: 'soon' }));
    await expect(client.deliveries.extend({ deliveryId: 'd', leaseId: 'l' })).rejects.toMatchObject({ name: 'UnexpectedResponseError', code: 'unexpected_response' });
  });
});

describe('deliveries.receipt', () => {
  test('sends exactly the given fields to /v1/deliveries/receipt and returns { status: sent }', async () => {
    server.setHandler((_req, res) => reply(res, 200, { status: 'sent' }));
    await expect(client.deliveries.receipt({ deliveryId: 'd_1', status: 'read', at: 1_900_000_000_000 })).resolves.toEqual({ status: 'sent' });
    await client.deliveries.receipt({ deliveryId: 'd_1', status: 'failed', code: 'recipient_unreachable', providerMessageId: 'p-2' });
    expect(server.requests.map((r) => [r.path, r.json])).toEqual([
      ['/v1/deliveries/receipt', { deliveryId: 'd_1', status: 'read', at: 1_900_000_000_000 }],
      ['/v1/deliveries/receipt', { deliveryId: 'd_1', status: 'failed', code: 'recipient_unreachable', providerMessageId: 'p-2' }],
    ]);
  });

  test('409 delivery_not_sent is a ConflictError, not retried', async () => {
    server.setHandler((_req, res) => errorReply(res, 409, 'delivery_not_sent', 'the delivery is queued: receipts are taken for sent deliveries only'));
    await expect(client.deliveries.receipt({ deliveryId: 'd_1', status: 'delivered' })).rejects.toMatchObject({ name: 'ConflictError', status: 409, code: 'delivery_not_sent' });
    expect(server.requests).toHaveLength(1);
    expect(delays).toEqual([]);
  });

  test('an answer other than { status: sent } is an UnexpectedResponseError', async () => {
    server.setHandler((_req, res) => reply(res, 200, { status: 'queued' }));
    await expect(client.deliveries.receipt({ deliveryId: 'd_1', status: 'delivered' })).rejects.toMatchObject({ name: 'UnexpectedResponseError', code: 'unexpected_response' });
  });
});

describe('deliveries.pending', () => {
  const n = (id: string) => ({ deliveryId: id, workspaceId: 'ws', integrationId: 'int', conversationId: 'c', messageId: `m-${id}` });

  test('iterates over the pages, sending each nextCursor back, until it is null', async () => {
    const pages = [
      { deliveries: [n('d1'), n('d2')], nextCursor: 'c1' },
      { deliveries: [n('d3')], nextCursor: 'c2' },
      { deliveries: [], nextCursor: null },
    ];
    server.setHandler((_req, res) => reply(res, 200, pages.shift()));
    const seen: string[][] = [];
    for await (const page of client.deliveries.pending({ limit: 2 })) seen.push(page.deliveries.map((d) => d.deliveryId));
    expect(seen).toEqual([['d1', 'd2'], ['d3'], []]);
    expect(server.requests.map((r) => [r.path, r.json])).toEqual([
      ['/v1/deliveries/pending', { limit: 2 }],
      ['/v1/deliveries/pending', { limit: 2, cursor: 'c1' }],
      ['/v1/deliveries/pending', { limit: 2, cursor: 'c2' }],
    ]);
  });

  test('an item that is not a notification, or a missing nextCursor, is an UnexpectedResponseError', async () => {
    server.setHandler((_req, res) => reply(res, 200, { deliveries: [{ deliveryId: 'd1' }], nextCursor: null }));
    await expect(client.deliveries.pending().next()).rejects.toMatchObject({ name: 'UnexpectedResponseError' });
    server.setHandler((_req, res) => reply(res, 200, { deliveries: [] }));
    await expect(client.deliveries.pending().next()).rejects.toMatchObject({ name: 'UnexpectedResponseError' });
  });

  test('400 invalid_cursor is a BadRequestError (not retried)', async () => {
    server.setHandler((_req, res) => errorReply(res, 400, 'invalid_cursor', 'cursor: not a cursor of this list'));
    await expect(client.deliveries.pending().next()).rejects.toMatchObject({ name: 'BadRequestError', code: 'invalid_cursor' });
    expect(server.requests).toHaveLength(1);
  });
});
