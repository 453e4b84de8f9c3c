import { isConnectFailure as isConnectFailureForTest } from '../../src/internal/transport.js';
import { ConnectorClient, ConnectorNetworkError, ConnectorTimeoutError } from '../../src/index.js';
import { closedPortUrl, errorReply, fakeSleep, KEY, reply, startServer, type TestServer } from './helpers/server.js';

let primary: TestServer;
let fallback: TestServer;
beforeEach(async () => {
  primary = await startServer((_req, res) => reply(res, 200, { status: 'sending' }));
  fallback = await startServer((_req, res) => reply(res, 200, { status: 'sending' }));
});
afterEach(async () => {
  await primary.close();
  await fallback.close();
});

const start = { deliveryId: 'd', leaseId: 'l' };
function client(baseUrl: string, extra: Partial<ConstructorParameters<typeof ConnectorClient>[0]> = {}) {
  const s = fakeSleep();
  return { c: new ConnectorClient({ integrationKey: KEY, baseUrl, fallbackBaseUrl: fallback.url, sleep: s.sleep, ...extra }), delays: s.delays };
}

describe('fallback host', () => {
  test('connection refused on the default host -> the same attempt goes to the fallback, no wait', async () => {
    const { c, delays } = client(await closedPortUrl());
    await expect(c.deliveries.start(start)).resolves.toEqual({ status: 'sending' });
    expect(fallback.requests).toHaveLength(1);
    expect(fallback.requests[0]?.path).toBe('/v1/deliveries/start');
    expect(fallback.requests[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(delays).toEqual([]);
  });

  test('DNS failure on the default host -> fallback', async () => {
    const { c } = client('http://no-such-host.invalid');
    await expect(c.deliveries.start(start)).resolves.toEqual({ status: 'sending' });
    expect(fallback.requests).toHaveLength(1);
  });

  test('the default host is tried first on every call', async () => {
    const { c } = client(primary.url);
    await c.deliveries.start(start);
    await c.deliveries.start(start);
    expect(primary.requests).toHaveLength(2);
    expect(fallback.requests).toHaveLength(0);
  });

  test('NOT after a timeout: the retry goes to the default host again', async () => {
    primary.setHandler((_req, res, i) => (i === 0 ? undefined : reply(res, 200, { status: 'sending' })));
    // 500 ms, not 60: on two busy cores (CI's Node 24 pass beside the integration suites) the
    // answered retry itself once took over 60 ms, timed out too, and made a third request.
    const { c } = client(primary.url, { timeoutMs: 500 });
    await c.deliveries.start(start);
    expect(primary.requests).toHaveLength(2);
    expect(fallback.requests).toHaveLength(0);
  });

  test('NOT after the connection dropped once the request was sent', async () => {
    primary.setHandler((_req, res, i) => (i === 0 ? res.socket?.destroy() : reply(res, 200, { status: 'sending' })));
    const { c } = client(primary.url);
    await c.deliveries.start(start);
    expect(primary.requests).toHaveLength(2);
    expect(fallback.requests).toHaveLength(0);
  });

  test('NOT on an HTTP error (503 is retried on the default host)', async () => {
    primary.setHandler((_req, res, i) => (i === 0 ? errorReply(res, 503, 'busy', undefined, { 'retry-after': '1' }) : reply(res, 200, { status: 'sending' })));
    const { c } = client(primary.url);
    await c.deliveries.start(start);
    expect(primary.requests).toHaveLength(2);
    expect(fallback.requests).toHaveLength(0);
  });

  test('NOT on a timeout with every attempt: ConnectorTimeoutError, fallback untouched', async () => {
    primary.setHandler(() => undefined);
    const { c } = client(primary.url, { timeoutMs: 40, retry: 1 });
    await expect(c.deliveries.start(start)).rejects.toBeInstanceOf(ConnectorTimeoutError);
    expect(fallback.requests).toHaveLength(0);
  });

  test('both hosts unreachable -> retried with backoff, then ConnectorNetworkError', async () => {
    const dead = await closedPortUrl();
    const s = fakeSleep();
    const c = new ConnectorClient({ integrationKey: KEY, baseUrl: dead, fallbackBaseUrl: await closedPortUrl(), sleep: s.sleep, retry: 2 });
    const err = await c.deliveries.start(start).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectorNetworkError);
    expect(err).toMatchObject({ code: 'connect_failed', attempts: 3, requestMayHaveArrived: false });
    expect(s.delays).toHaveLength(2);
  });

  test('retries after a fallback answer start again from the default host', async () => {
    fallback.setHandler((_req, res) => errorReply(res, 503, 'busy', undefined, { 'retry-after': '1' }));
    const deadThenAlive = await closedPortUrl();
    const { c } = client(deadThenAlive, { retry: 1 });
    await expect(c.deliveries.start(start)).rejects.toMatchObject({ status: 503 });
    expect(fallback.requests).toHaveLength(2); // default refused twice, fallback answered twice
  });

  test('connect-failure detection walks causes and AggregateErrors', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    const unreachable = Object.assign(new Error('connect ENETUNREACH'), { code: 'ENETUNREACH' });
    const reset = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
    expect(isConnectFailureForTest(new TypeError('fetch failed', { cause: refused }))).toBe(true);
    expect(isConnectFailureForTest(new TypeError('fetch failed', { cause: new AggregateError([refused, unreachable]) }))).toBe(true);
    expect(isConnectFailureForTest(new TypeError('fetch failed', { cause: new AggregateError([refused, reset]) }))).toBe(false);
    expect(isConnectFailureForTest(new TypeError('fetch failed', { cause: reset }))).toBe(false);
    expect(isConnectFailureForTest(Object.assign(new Error('x'), { code: 'UND_ERR_SOCKET' }))).toBe(false);
    expect(isConnectFailureForTest(new Error('timeout'))).toBe(false);
  });
});
