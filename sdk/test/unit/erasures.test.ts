/**
 * client.erasures and processErasures against a real local HTTP server that keeps a pending list
 * the way the service documents it (oldest first, paged by cursor, acknowledged ones leave it).
 */
import { ConnectorClient, NotFoundError, processErasures, UnexpectedResponseError, type ErasureNotice } from '../../src/index.js';
import { errorReply, fakeSleep, KEY, reply, startServer, type RecordedRequest, type TestServer } from './helpers/server.js';

let server: TestServer;
let client: ConnectorClient;
beforeEach(async () => {
  server = await startServer();
  client = new ConnectorClient({ integrationKey: KEY, baseUrl: server.url, sleep: fakeSleep().sleep });
});
afterEach(async () => {
  await server.close();
});

const erasure = (n: number): ErasureNotice => ({ erasureId: `er-${n}`, externalCustomerId: `cust-${n}`, externalConversationIds: [`chat-${n}`], requestedAt: 1_900_000_000_000 + n });

/**
 * A tiny model of the service's side: `pending` pages over the unacknowledged erasures (the
 * cursor is the last listed id), `ack` removes one (404 for an id it never had).
 */
function serviceWith(all: ErasureNotice[]) {
  const acked = new Set<string>();
  const handler = (req: RecordedRequest, res: import('node:http').ServerResponse) => {
    const body = (req.json ?? {}) as { limit?: number; cursor?: string; erasureId?: string };
    if (req.path === '/v1/erasures/pending') {
      const limit = body.limit ?? 50;
      const from = body.cursor === undefined ? 0 : all.findIndex((e) => e.erasureId === body.cursor) + 1;
      const open = all.slice(from).filter((e) => !acked.has(e.erasureId));
      const page = open.slice(0, limit);
      reply(res, 200, { erasures: page, nextCursor: open.length > limit ? page[page.length - 1]!.erasureId : null });
    } else if (req.path === '/v1/erasures/ack') {
      if (!all.some((e) => e.erasureId === body.erasureId)) return errorReply(res, 404, 'erasure_not_found', 'no such erasure of this integration');
      acked.add(body.erasureId!);
      reply(res, 200, { acknowledged: true });
    } else errorReply(res, 404, 'not_found');
  };
  return { handler, acked };
}

describe('erasures.pending / ack', () => {
  test('pending sends the documented request and returns the documented page', async () => {
    server.setHandler((_req, res) => reply(res, 200, { erasures: [{ ...erasure(1), extra: 'dropped' }], nextCursor: 'c2' }));
    await expect(client.erasures.pending({ limit: 10, cursor: 'c1' })).resolves.toEqual({ erasures: [erasure(1)], nextCursor: 'c2' });
    expect(server.requests[0]?.path).toBe('/v1/erasures/pending');
    expect(server.requests[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(server.requests[0]?.json).toEqual({ limit: 10, cursor: 'c1' });
  });

  test('pending without options sends an empty object (the service defaults the page size)', async () => {
    server.setHandler((_req, res) => reply(res, 200, { erasures: [], nextCursor: null }));
    await expect(client.erasures.pending()).resolves.toEqual({ erasures: [], nextCursor: null });
    expect(server.requests[0]?.json).toEqual({});
  });

  test('an answer that is not the documented page is an UnexpectedResponseError (not retried)', async () => {
    server.setHandler((_req, res) => reply(res, 200, { erasures: [{ erasureId: 'er-1' }], nextCursor: null }));
    await expect(client.erasures.pending()).rejects.toBeInstanceOf(UnexpectedResponseError);
    server.setHandler((_req, res) => reply(res, 200, { erasures: [], nextCursor: '' }));
    await expect(client.erasures.pending()).rejects.toBeInstanceOf(UnexpectedResponseError);
    expect(server.requests).toHaveLength(2);
  });

  test('ack sends exactly { erasureId }; repeatable; an unknown id is a NotFoundError', async () => {
    const service = serviceWith([erasure(1)]);
    server.setHandler(service.handler);
    await expect(client.erasures.ack({ erasureId: 'er-1' })).resolves.toEqual({ acknowledged: true });
    await expect(client.erasures.ack({ erasureId: 'er-1' })).resolves.toEqual({ acknowledged: true });
    expect(server.requests[0]?.json).toEqual({ erasureId: 'er-1' });
    const error = await client.erasures.ack({ erasureId: 'er-other' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotFoundError);
    expect((error as NotFoundError).code).toBe('erasure_not_found');
  });

  test('a 503 with Retry-After is retried with the same body', async () => {
    server.setHandler((_req, res, i) => (i === 0 ? errorReply(res, 503, 'unavailable', 'busy', { 'retry-after': '1' }) : reply(res, 200, { acknowledged: true })));
    await expect(client.erasures.ack({ erasureId: 'er-1' })).resolves.toEqual({ acknowledged: true });
    expect(server.requests.map((r) => r.json)).toEqual([{ erasureId: 'er-1' }, { erasureId: 'er-1' }]);
  });
});

describe('erasures.pendingItems', () => {
  test('follows the cursors page by page and yields every erasure once, oldest first', async () => {
    const all = [1, 2, 3, 4, 5].map(erasure);
    server.setHandler(serviceWith(all).handler);
    const seen: string[] = [];
    for await (const e of client.erasures.pendingItems({ limit: 2 })) seen.push(e.erasureId);
    expect(seen).toEqual(['er-1', 'er-2', 'er-3', 'er-4', 'er-5']);
    expect(server.requests.map((r) => r.json)).toEqual([{ limit: 2 }, { limit: 2, cursor: 'er-2' }, { limit: 2, cursor: 'er-4' }]);
  });

  test('breaking out stops the listing: no further page is fetched', async () => {
    server.setHandler(serviceWith([1, 2, 3].map(erasure)).handler);
    for await (const e of client.erasures.pendingItems({ limit: 1 })) if (e.erasureId === 'er-1') break;
    expect(server.requests).toHaveLength(1);
  });
});

describe('processErasures', () => {
  test('purges, then acknowledges each; acknowledged erasures leave the list, so a second run finds nothing', async () => {
    const service = serviceWith([1, 2, 3].map(erasure));
    server.setHandler(service.handler);
    const order: string[] = [];
    const purge = (e: ErasureNotice) => {
      order.push(`purge ${e.erasureId} (acked so far: ${service.acked.size})`);
    };
    const result = await processErasures(client, purge, { limit: 2 });
    expect(result).toEqual({ acknowledged: ['er-1', 'er-2', 'er-3'], failed: [] });
    expect(order).toEqual(['purge er-1 (acked so far: 0)', 'purge er-2 (acked so far: 1)', 'purge er-3 (acked so far: 2)']);
    await expect(processErasures(client, purge)).resolves.toEqual({ acknowledged: [], failed: [] });
  });

  test('a purge that throws is not acknowledged and comes again on the next run (at least once); the others go on', async () => {
    const service = serviceWith([1, 2, 3].map(erasure));
    server.setHandler(service.handler);
    const boom = new Error('disk full');
    let attempts = 0;
    const purge = (e: ErasureNotice) => {
      if (e.erasureId === 'er-2' && attempts++ === 0) throw boom;
    };
    const outcomes: string[] = [];
    const first = await processErasures(client, purge, { onErasure: (e, o) => outcomes.push(`${e.erasureId}:${o.acknowledged ? 'acked' : o.step}`) });
    expect(first).toEqual({ acknowledged: ['er-1', 'er-3'], failed: [{ erasureId: 'er-2', step: 'purge', error: boom }] });
    expect(outcomes).toEqual(['er-1:acked', 'er-2:purge', 'er-3:acked']);
    expect([...service.acked].sort()).toEqual(['er-1', 'er-3']);
    await expect(processErasures(client, purge)).resolves.toEqual({ acknowledged: ['er-2'], failed: [] });
  });

  test('a lost ack answer: the erasure stays pending, and the purge runs again for it (it must be idempotent)', async () => {
    const service = serviceWith([erasure(1)]);
    let dropAcks = true;
    server.setHandler((req, res) => {
      // The acks of the first run (and of the client's retries) lose their connection unanswered.
      if (req.path === '/v1/erasures/ack' && dropAcks) return res.socket?.destroy();
      return service.handler(req, res);
    });
    const purged: string[] = [];
    const first = await processErasures(client, (e) => void purged.push(e.erasureId));
    expect(first.acknowledged).toEqual([]);
    expect(first.failed).toMatchObject([{ erasureId: 'er-1', step: 'ack' }]);
    dropAcks = false;
    const second = await processErasures(client, (e) => void purged.push(e.erasureId));
    expect(second).toEqual({ acknowledged: ['er-1'], failed: [] });
    expect(purged).toEqual(['er-1', 'er-1']);
  });

  test('a list that cannot be read rejects', async () => {
    server.setHandler((_req, res) => errorReply(res, 401, 'invalid_key'));
    await expect(processErasures(client, () => undefined)).rejects.toMatchObject({ status: 401, code: 'invalid_key' });
  });
});
