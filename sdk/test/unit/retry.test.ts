import {
  BACKOFF_BASE_MS,
  BACKOFF_MAX_MS,
  ConnectorClient,
  ConnectorNetworkError,
  ConnectorTimeoutError,
  DEFAULT_RETRY_LIMIT,
  MAX_RETRY_AFTER_MS,
  NEVER_RETRY_STATUSES,
  RETRY_METHODS,
  RETRY_STATUSES,
  ServiceUnavailableError,
  TooManyRequestsError,
} from '../../src/index.js';
import { backoffDelayMs, parseRetryAfterMs } from '../../src/internal/retry.js';
import { closedPortUrl, errorReply, fakeSleep, KEY, reply, startServer, type TestServer } from './helpers/server.js';

const ok = { conversationId: 'c_1', messageId: 'm_1', duplicate: false };
const msg = { eventId: 'evt-1', externalConversationId: 'chat-1', sender: { externalId: 'u-1' }, text: 'hi' };

let server: TestServer;
beforeEach(async () => {
  server = await startServer();
});
afterEach(async () => {
  await server.close();
});

function client(extra: Partial<ConstructorParameters<typeof ConnectorClient>[0]> = {}) {
  const s = fakeSleep();
  const c = new ConnectorClient({ integrationKey: KEY, baseUrl: server.url, sleep: s.sleep, random: () => 0.5, ...extra });
  return { c, delays: s.delays };
}

describe('retry policy constants', () => {
  test('are exported with the documented values', () => {
    expect(DEFAULT_RETRY_LIMIT).toBe(3);
    // PUT: `PUT /v1/channel` replaces what it names, so a retry is as safe as a POST with its idempotency key.
    expect(RETRY_METHODS).toEqual(['POST', 'PUT']);
    expect(RETRY_STATUSES).toEqual([429, 502, 503, 504]);
    expect(NEVER_RETRY_STATUSES).toEqual([400, 401, 403, 404, 409, 413, 415]);
    expect(MAX_RETRY_AFTER_MS).toBe(30_000);
    expect(BACKOFF_BASE_MS).toBeGreaterThan(0);
    expect(BACKOFF_MAX_MS).toBeGreaterThan(BACKOFF_BASE_MS);
    expect(Object.isFrozen(RETRY_STATUSES)).toBe(true);
  });

  test('backoff is exponential, capped, and jittered within [step/2, step]', () => {
    const p = { backoffBaseMs: 100, backoffMaxMs: 1000 };
    expect(backoffDelayMs(1, p, () => 0)).toBe(50);
    expect(backoffDelayMs(1, p, () => 0.999999)).toBe(100);
    expect(backoffDelayMs(2, p, () => 0)).toBe(100);
    expect(backoffDelayMs(3, p, () => 1)).toBe(400);
    expect(backoffDelayMs(10, p, () => 1)).toBe(1000);
    expect(backoffDelayMs(10, p, () => 0)).toBe(500);
    for (let i = 0; i < 50; i++) {
      const d = backoffDelayMs(2, p);
      expect(d).toBeGreaterThanOrEqual(100);
      expect(d).toBeLessThanOrEqual(200);
    }
  });

  test('Retry-After: seconds, HTTP-date, garbage', () => {
    expect(parseRetryAfterMs('7', 0)).toBe(7000);
    expect(parseRetryAfterMs(' 0 ', 0)).toBe(0);
    expect(parseRetryAfterMs('1.5', 0)).toBe(1500);
    const now = Date.parse('2025-01-01T00:00:00Z');
    expect(parseRetryAfterMs('Wed, 01 Jan 2025 00:00:10 GMT', now)).toBe(10_000);
    expect(parseRetryAfterMs('Tue, 31 Dec 2024 00:00:10 GMT', now)).toBe(0);
    expect(parseRetryAfterMs('-5', 0)).toBeUndefined();
    expect(parseRetryAfterMs('soon', 0)).toBeUndefined();
    expect(parseRetryAfterMs(null, 0)).toBeUndefined();
  });

  test('invalid retry options are rejected', () => {
    expect(() => client({ retry: -1 })).toThrow(RangeError);
    expect(() => client({ retry: { limit: 1.5 } })).toThrow(RangeError);
    expect(() => client({ retry: { backoffBaseMs: Number.NaN } })).toThrow(RangeError);
  });
});

describe('retries against a real server', () => {
  test.each([429, 503])('%i with Retry-After is retried after exactly that delay, same body each time', async (status) => {
    server.setHandler((_req, res, i) => (i < 2 ? errorReply(res, status, 'busy', 'try later', { 'retry-after': '2' }) : reply(res, 201, ok)));
    const { c, delays } = client();
    await expect(c.messages.send(msg)).resolves.toEqual({ ...ok, eventId: 'evt-1' });
    expect(server.requests).toHaveLength(3);
    expect(delays).toEqual([2000, 2000]);
    const bodies = server.requests.map((r) => r.body.toString());
    expect(new Set(bodies).size).toBe(1);
  });

  test('Retry-After above MAX_RETRY_AFTER_MS is capped', async () => {
    server.setHandler((_req, res, i) => (i === 0 ? errorReply(res, 503, 'lease_busy', undefined, { 'retry-after': '3600' }) : reply(res, 200, { status: 'sending' })));
    const { c, delays } = client();
    await c.deliveries.start({ deliveryId: 'd1', leaseId: 'l1' });
    expect(delays).toEqual([MAX_RETRY_AFTER_MS]);
  });

  test('the cap is configurable (retry.maxRetryAfterMs)', async () => {
    server.setHandler((_req, res, i) => (i === 0 ? errorReply(res, 429, 'rate_limited', undefined, { 'retry-after': '60' }) : reply(res, 201, ok)));
    const { c, delays } = client({ retry: { maxRetryAfterMs: 5000 } });
    await c.messages.send(msg);
    expect(delays).toEqual([5000]);
  });

  test('Retry-After as HTTP-date uses the injected clock', async () => {
    const now = Date.parse('2030-05-05T10:00:00Z');
    server.setHandler((_req, res, i) =>
      i === 0 ? errorReply(res, 503, 'busy', undefined, { 'retry-after': new Date(now + 4000).toUTCString() }) : reply(res, 201, ok),
    );
    const { c, delays } = client({ now: () => now });
    await c.messages.send(msg);
    expect(delays).toEqual([4000]);
  });

  test('without Retry-After: jittered exponential backoff', async () => {
    server.setHandler((_req, res, i) => (i < 3 ? errorReply(res, 503, 'unavailable') : reply(res, 201, ok)));
    const { c, delays } = client({ retry: { backoffBaseMs: 100, backoffMaxMs: 300 } });
    await c.messages.send(msg);
    // random() = 0.5 -> 3/4 of each step: 100, 200, 300 (capped)
    expect(delays).toEqual([75, 150, 225]);
  });

  test('502 and 504 from the front end are retried', async () => {
    server.setHandler((_req, res, i) => (i === 0 ? reply(res, 502, '<html>bad gateway</html>') : i === 1 ? reply(res, 504, 'timeout') : reply(res, 201, ok)));
    const { c } = client();
    await c.messages.send(msg);
    expect(server.requests).toHaveLength(3);
  });

  test('gives up after the limit and throws the last error with attempts and Retry-After', async () => {
    server.setHandler((_req, res) => errorReply(res, 503, 'retry_delayed', 'not yet', { 'retry-after': '9', 'x-request-id': 'req-9' }));
    const { c, delays } = client();
    const err = await c.deliveries.claim({ deliveryId: 'd1', requestId: 'r1' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServiceUnavailableError);
    const e = err as ServiceUnavailableError;
    expect(e.status).toBe(503);
    expect(e.code).toBe('retry_delayed');
    expect(e.retryAfterMs).toBe(9000);
    expect(e.requestId).toBe('req-9');
    expect(e.attempts).toBe(DEFAULT_RETRY_LIMIT + 1);
    expect(server.requests).toHaveLength(DEFAULT_RETRY_LIMIT + 1);
    expect(delays).toEqual([9000, 9000, 9000]);
  });

  test('retry limit 0 disables retries', async () => {
    server.setHandler((_req, res) => errorReply(res, 429, 'rate_limited', undefined, { 'retry-after': '1' }));
    const { c, delays } = client({ retry: 0 });
    await expect(c.messages.send(msg)).rejects.toBeInstanceOf(TooManyRequestsError);
    expect(server.requests).toHaveLength(1);
    expect(delays).toEqual([]);
  });

  test('methods without POST disables retries', async () => {
    server.setHandler((_req, res) => errorReply(res, 503, 'busy'));
    const { c } = client({ retry: { methods: [] } });
    await expect(c.messages.send(msg)).rejects.toBeInstanceOf(ServiceUnavailableError);
    expect(server.requests).toHaveLength(1);
  });

  test.each([400, 401, 403, 404, 409, 413, 415])('%i is never retried, even with Retry-After or when listed in retry.statuses', async (status) => {
    server.setHandler((_req, res) => errorReply(res, status, 'nope', undefined, { 'retry-after': '1' }));
    const { c, delays } = client({ retry: { statuses: [status, 503] } });
    await expect(c.messages.send(msg)).rejects.toMatchObject({ status, code: 'nope', attempts: 1 });
    expect(server.requests).toHaveLength(1);
    expect(delays).toEqual([]);
  });

  test('500 is not retried by default (the service never answers 500)', async () => {
    server.setHandler((_req, res) => reply(res, 500, 'oops'));
    const { c } = client();
    await expect(c.messages.send(msg)).rejects.toMatchObject({ status: 500, code: 'http_500' });
    expect(server.requests).toHaveLength(1);
  });

  test('a reset after the request was sent is retried (on the same host) with backoff', async () => {
    server.setHandler((_req, res, i) => (i === 0 ? res.socket?.destroy() : reply(res, 201, ok)));
    const { c, delays } = client({ retry: { backoffBaseMs: 40, backoffMaxMs: 40 } });
    await c.messages.send(msg);
    expect(server.requests).toHaveLength(2);
    expect(delays).toEqual([30]);
  });

  test('connection refused is retried and finally throws ConnectorNetworkError', async () => {
    const { c, delays } = client({ baseUrl: await closedPortUrl(), retry: 2 });
    const err = await c.messages.send(msg).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectorNetworkError);
    expect(err).toMatchObject({ status: undefined, code: 'connect_failed', requestMayHaveArrived: false, attempts: 3 });
    expect(delays).toHaveLength(2);
  });

  test('a timeout is retried; the last one throws ConnectorTimeoutError', async () => {
    server.setHandler(() => undefined); // never answers
    // Long enough for each request to reach the server on a loaded machine (both are counted below).
    const { c } = client({ timeoutMs: 400, retry: 1 });
    const err = await c.messages.send(msg).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectorTimeoutError);
    expect(err).toBeInstanceOf(ConnectorNetworkError);
    expect(err).toMatchObject({ code: 'timeout', requestMayHaveArrived: true, attempts: 2 });
    expect(server.requests).toHaveLength(2);
    expect(server.requests[0]?.body.toString()).toBe(server.requests[1]?.body.toString());
  });

  test('a slow body counts against the timeout too', async () => {
    server.setHandler((_req, res, i) => {
      if (i === 0) {
        res.writeHead(201, { 'content-type': 'application/json' });
        res.write('{"conversationId":'); // and never finishes
      } else reply(res, 201, ok);
    });
    // Long enough for the second, complete answer to arrive in time on a loaded machine (at 80 ms
    // a fresh-clone CI run timed that one out too and made a third request).
    const { c } = client({ timeoutMs: 1_000 });
    await expect(c.messages.send(msg)).resolves.toMatchObject(ok);
    expect(server.requests).toHaveLength(2);
  });

  test('an aborted signal stops the call and a pending retry wait', async () => {
    server.setHandler((_req, res) => errorReply(res, 503, 'busy', undefined, { 'retry-after': '1' }));
    const controller = new AbortController();
    const reason = new Error('shutting down');
    const c = new ConnectorClient({
      integrationKey: KEY,
      baseUrl: server.url,
      sleep: async () => {
        controller.abort(reason);
      },
    });
    await expect(c.messages.send(msg, { signal: controller.signal })).rejects.toBe(reason);
    expect(server.requests).toHaveLength(1);
  });

  test('the default sleep really waits (briefly) and honours abort', async () => {
    server.setHandler((_req, res, i) => (i === 0 ? errorReply(res, 503, 'busy', undefined, { 'retry-after': '0.02' }) : reply(res, 201, ok)));
    const c = new ConnectorClient({ integrationKey: KEY, baseUrl: server.url });
    const t0 = Date.now();
    await c.messages.send(msg);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(15);

    server.setHandler((_req, res) => errorReply(res, 503, 'busy', undefined, { 'retry-after': '20' }));
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('stop')), 30);
    await expect(c.messages.send(msg, { signal: controller.signal })).rejects.toThrow('stop');
  });
});
