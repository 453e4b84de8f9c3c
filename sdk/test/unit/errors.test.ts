import { inspect } from 'node:util';
import {
  BadRequestError,
  ConflictError,
  ConnectorApiError,
  ConnectorClient,
  ConnectorError,
  ConnectorNetworkError,
  ForbiddenError,
  NotFoundError,
  PayloadTooLargeError,
  ServiceUnavailableError,
  TooManyRequestsError,
  UnauthorizedError,
  UnexpectedResponseError,
  UnsupportedMediaTypeError,
} from '../../src/index.js';
import { closedPortUrl, errorReply, fakeSleep, KEY, reply, startServer, type TestServer } from './helpers/server.js';

let server: TestServer;
beforeEach(async () => {
  server = await startServer();
});
afterEach(async () => {
  await server.close();
});

const claim = { deliveryId: 'd_1', requestId: 'r_1' };
const newClient = (baseUrl = server.url) => new ConnectorClient({ integrationKey: KEY, baseUrl, sleep: fakeSleep().sleep, retry: 0 });

function expectNoKey(value: unknown): void {
  const texts = [
    String(value),
    inspect(value, { depth: Infinity, showHidden: true }),
    JSON.stringify(value) ?? '',
    value instanceof Error ? `${value.message}\n${value.stack ?? ''}` : '',
  ];
  for (const t of texts) {
    expect(t).not.toContain(KEY);
    expect(t).not.toContain(KEY.slice(9, 30)); // not even the secret part
  }
}

describe('status-mapped errors', () => {
  test.each([
    [400, BadRequestError, 'invalid_request'],
    [401, UnauthorizedError, 'invalid_key'],
    [403, ForbiddenError, 'integration_inactive'],
    [404, NotFoundError, 'delivery_not_found'],
    [409, ConflictError, 'lease_lost'],
    [413, PayloadTooLargeError, 'payload_too_large'],
    [415, UnsupportedMediaTypeError, 'unsupported_media_type'],
    [429, TooManyRequestsError, 'rate_limited'],
    [503, ServiceUnavailableError, 'lease_busy'],
  ] as const)('%i -> %p', async (status, Ctor, code) => {
    server.setHandler((_req, res) => errorReply(res, status, code, `details for ${code}`, { 'x-request-id': `req-${status}`, 'retry-after': '3' }));
    const err = await newClient().deliveries.claim(claim).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Ctor);
    expect(err).toBeInstanceOf(ConnectorApiError);
    expect(err).toBeInstanceOf(ConnectorError);
    expect(err).toBeInstanceOf(Error);
    const e = err as ConnectorApiError;
    expect(e.name).toBe(Ctor.name);
    expect(e.status).toBe(status);
    expect(e.code).toBe(code);
    expect(e.message).toBe(`POST /v1/deliveries/claim failed with ${status} ${code}: details for ${code}`);
    expect(e.retryAfterMs).toBe(3000);
    expect(e.requestId).toBe(`req-${status}`);
    expect(e.method).toBe('POST');
    expect(e.path).toBe('/v1/deliveries/claim');
    expect(e.attempts).toBe(1);
    expectNoKey(e);
  });

  test('an envelope without message, and no Retry-After / X-Request-Id', async () => {
    server.setHandler((_req, res) => reply(res, 409, { error: { code: 'event_conflict' } }));
    const e = (await newClient().deliveries.claim(claim).catch((x: unknown) => x)) as ConflictError;
    expect(e.message).toBe('POST /v1/deliveries/claim failed with 409 event_conflict');
    expect(e.retryAfterMs).toBeUndefined();
    expect(e.requestId).toBeUndefined();
  });

  test('a non-JSON error body gets code http_<status>; other statuses give the base class', async () => {
    server.setHandler((_req, res) => reply(res, 405, '<html>Method Not Allowed</html>'));
    const e = (await newClient().deliveries.claim(claim).catch((x: unknown) => x)) as ConnectorApiError;
    expect(e.constructor).toBe(ConnectorApiError);
    expect(e).toMatchObject({ status: 405, code: 'http_405' });
  });

  test('a redirect is not followed (the key is not sent elsewhere)', async () => {
    const other = await startServer((_req, res) => reply(res, 200, { status: 'skip', reason: 'x' }));
    try {
      server.setHandler((_req, res) => reply(res, 307, '', { location: `${other.url}/v1/deliveries/claim` }));
      await expect(newClient().deliveries.claim(claim)).rejects.toMatchObject({ status: 307, code: 'http_307' });
      expect(other.requests).toHaveLength(0);
    } finally {
      await other.close();
    }
  });

  test('a 2xx that is not JSON or lacks fields -> UnexpectedResponseError, not retried', async () => {
    server.setHandler((_req, res) => reply(res, 200, 'hello'));
    await expect(newClient().deliveries.start({ deliveryId: 'd', leaseId: 'l' })).rejects.toMatchObject({ name: 'UnexpectedResponseError', code: 'invalid_json', status: 200 });
    server.setHandler((_req, res) => reply(res, 200, { status: 'leased' }));
    await expect(newClient().deliveries.start({ deliveryId: 'd', leaseId: 'l' })).rejects.toBeInstanceOf(UnexpectedResponseError);
    server.setHandler((_req, res) => reply(res, 200, { status: 'ready', leaseId: 'l' }));
    await expect(newClient().deliveries.claim(claim)).rejects.toBeInstanceOf(UnexpectedResponseError);
    server.setHandler((_req, res) => reply(res, 201, { conversationId: 'c' }));
    await expect(newClient().messages.send({ externalConversationId: 'x', sender: { externalId: 'y' }, text: 't' })).rejects.toBeInstanceOf(
      UnexpectedResponseError,
    );
  });
});

describe('the integration key stays secret', () => {
  test('it is sent as a bearer token on every call', async () => {
    server.setHandler((req, res) => {
      if (req.path === '/v1/messages') reply(res, 201, { conversationId: 'c', messageId: 'm', duplicate: false });
      else reply(res, 200, { status: 'sent' });
    });
    const c = newClient();
    await c.messages.send({ externalConversationId: 'x', sender: { externalId: 'y' }, text: 't' });
    await c.deliveries.complete({ deliveryId: 'd', leaseId: 'l', providerMessageIds: ['p'] });
    expect(server.requests.map((r) => r.headers.authorization)).toEqual([`Bearer ${KEY}`, `Bearer ${KEY}`]);
    expect(server.requests[0]?.headers['user-agent']).toBe(`support-desk-connector-sdk/0.2.0 node/${process.versions.node}`);
  });

  test('not in the client: toString, inspect, JSON.stringify, own properties', () => {
    const c = new ConnectorClient({ integrationKey: KEY, baseUrl: 'https://api.example.com/', fallbackBaseUrl: 'https://alt.example.com' });
    expectNoKey(c);
    expectNoKey(c.messages);
    expectNoKey(c.deliveries);
    expect(JSON.parse(JSON.stringify(c))).toEqual({
      baseUrl: 'https://api.example.com',
      fallbackBaseUrl: 'https://alt.example.com',
      timeoutMs: 30_000,
      retry: expect.objectContaining({ limit: 3 }),
    });
    expect(String(c)).toBe('ConnectorClient(https://api.example.com)');
    for (const obj of [c, c.messages, c.deliveries]) {
      for (const k of Reflect.ownKeys(obj)) expect(String((obj as unknown as Record<PropertyKey, unknown>)[k])).not.toContain(KEY);
    }
  });

  test('not in HTTP errors, even if the server echoes it', async () => {
    server.setHandler((_req, res) => errorReply(res, 401, 'invalid_key', `bad key ${KEY}`));
    const e = await newClient().deliveries.claim(claim).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(UnauthorizedError);
    expect((e as Error).message).toContain('[redacted]');
    expectNoKey(e);
  });

  test('not in network errors', async () => {
    const e = await newClient(await closedPortUrl()).deliveries.claim(claim).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ConnectorNetworkError);
    expectNoKey(e);
  });

  test('not in a network error built from a fetch that puts it in its message', async () => {
    const c = new ConnectorClient({
      integrationKey: KEY,
      baseUrl: server.url,
      retry: 0,
      fetch: async (_url, init) => {
        throw new Error(`boom with ${(init.headers as Record<string, string>).authorization}`);
      },
    });
    const e = await c.deliveries.claim(claim).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ConnectorNetworkError);
    expect((e as Error).message).toContain('[redacted]');
    expectNoKey(e);
  });

  test('constructor validation never echoes the key', () => {
    const bad = `${KEY}\n`;
    let caught: unknown;
    try {
      new ConnectorClient({ integrationKey: bad, baseUrl: 'https://x.example' });
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(TypeError);
    expectNoKey(caught);
    expect(() => new ConnectorClient({ integrationKey: '', baseUrl: 'https://x.example' })).toThrow('integrationKey is required');
    expect(() => new ConnectorClient({ integrationKey: KEY, baseUrl: 'ftp://x.example' })).toThrow(TypeError);
    expect(() => new ConnectorClient({ integrationKey: KEY, baseUrl: 'not a url' })).toThrow(TypeError);
    expect(() => new ConnectorClient({ integrationKey: KEY, baseUrl: 'https://u:p@x.example' })).toThrow(TypeError);
    expect(() => new ConnectorClient({ integrationKey: KEY, baseUrl: 'https://x.example', timeoutMs: 0 })).toThrow(RangeError);
  });
});

describe('client options', () => {
  test('a base URL with a path prefix keeps it', async () => {
    server.setHandler((_req, res) => reply(res, 200, { status: 'sending' }));
    const c = new ConnectorClient({ integrationKey: KEY, baseUrl: `${server.url}/api/` });
    await c.deliveries.start({ deliveryId: 'd', leaseId: 'l' });
    expect(server.requests[0]?.path).toBe('/api/v1/deliveries/start');
  });

  test('an injected fetch is used for every attempt', async () => {
    server.setHandler((_req, res, i) => (i === 0 ? errorReply(res, 503, 'busy', undefined, { 'retry-after': '1' }) : reply(res, 200, { status: 'sending' })));
    const calls: string[] = [];
    const c = new ConnectorClient({
      integrationKey: KEY,
      baseUrl: server.url,
      sleep: fakeSleep().sleep,
      fetch: (url, init) => {
        calls.push(url);
        return fetch(url, init);
      },
    });
    await c.deliveries.start({ deliveryId: 'd', leaseId: 'l' });
    expect(calls).toEqual([`${server.url}/v1/deliveries/start`, `${server.url}/v1/deliveries/start`]);
  });
});
