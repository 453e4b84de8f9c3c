/**
 * Pub/Sub push authentication: `createPushHandler` (and `verifyPubSubOidcToken`) against tokens
 * signed here with locally generated RSA keys, whose JWKS a real local HTTP server publishes the
 * way Google does (`Cache-Control: max-age`). The clock is fake; the fetch is the real one, counted.
 */
import { createHmac, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  ConnectorClient,
  ConnectorError,
  createPushHandler,
  DEFAULT_OIDC_JWKS_URL,
  OIDC_CLOCK_SKEW_MS,
  OIDC_JWKS_MIN_REFETCH_MS,
  OIDC_JWKS_FAILURE_BACKOFF_MS,
  OIDC_JWKS_STALE_MAX_MS,
  PushAuthenticationError,
  verifyPubSubOidcToken,
  type FetchLike,
  type PubSubOidcOptions,
  type PushHandler,
  type PushHandlerOptions,
  type PushOutcome,
} from '../../src/index.js';
import { fakeSleep, KEY, reply, startServer, type TestServer } from './helpers/server.js';

const AUDIENCE = 'https://connector.example.com/pubsub/replies';
const SERVICE_ACCOUNT = 'push-invoker@my-project.iam.gserviceaccount.com';
const NOTIFICATION = { deliveryId: 'd_1', workspaceId: 'ws', integrationId: 'int', conversationId: 'c_1', messageId: 'm_1' };
const ENVELOPE = {
  message: { data: Buffer.from(JSON.stringify(NOTIFICATION)).toString('base64'), messageId: '123', attributes: {} },
  subscription: 'projects/p/subscriptions/replies',
};

interface TestKey {
  kid: string;
  privateKey: KeyObject;
  publicKey: KeyObject;
}
const rsa = (kid: string, modulusLength = 2048): TestKey => ({ kid, ...generateKeyPairSync('rsa', { modulusLength }) });
const jwk = (key: TestKey) => ({ ...key.publicKey.export({ format: 'jwk' }), kid: key.kid, alg: 'RS256', use: 'sig' });

let current: TestKey;
let rotated: TestKey;
let weak: TestKey;
beforeAll(() => {
  current = rsa('key-1');
  rotated = rsa('key-2');
  weak = rsa('weak-1', 1024);
});

const b64 = (value: unknown): string => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

/** A JWT as Pub/Sub sends it: RS256 with `key`, or whatever header / signature a test needs. */
function token(claims: unknown, options: { key?: TestKey; header?: Record<string, unknown>; signature?: (data: string) => string } = {}): string {
  const key = options.key ?? current;
  const data = `${b64(options.header ?? { alg: 'RS256', kid: key.kid, typ: 'JWT' })}.${b64(claims)}`;
  const signature = options.signature ? options.signature(data) : sign('RSA-SHA256', Buffer.from(data), key.privateKey).toString('base64url');
  return `${data}.${signature}`;
}

let time: number;
const now = () => time;
const seconds = () => Math.floor(time / 1000);
/** The claims of a good Pub/Sub push token at the fake clock's time. */
const claims = (overrides: Record<string, unknown> = {}) => ({
  iss: 'https://accounts.google.com',
  aud: AUDIENCE,
  azp: '1234567890',
  sub: '1234567890',
  email: SERVICE_ACCOUNT,
  email_verified: true,
  iat: seconds() - 5,
  exp: seconds() + 3595,
  ...overrides,
});
const bearer = (overrides: Record<string, unknown> = {}) => `Bearer ${token(claims(overrides))}`;

let jwks: TestServer;
let published: TestKey[];
let cacheControl: string | undefined;
let fetches: string[];
let countingFetch: FetchLike;
let service: TestServer;
let endpoint: http.Server;
let url: string;
let handler: PushHandler;
let sent: string[];
let outcomes: PushOutcome[];
let auth: PubSubOidcOptions;

beforeEach(async () => {
  time = Date.UTC(2025, 0, 15, 12, 0, 0);
  published = [current];
  cacheControl = 'public, max-age=300, must-revalidate, no-transform';
  jwks = await startServer((_req, res) => reply(res, 200, { keys: published.map(jwk) }, cacheControl === undefined ? {} : { 'cache-control': cacheControl }));
  // A new function per test: the key cache is per fetch function and URL, so every test starts empty.
  fetches = [];
  countingFetch = (input, init) => {
    fetches.push(input);
    return fetch(input, init);
  };
  auth = { audience: AUDIENCE, serviceAccountEmail: SERVICE_ACCOUNT, jwksUrl: `${jwks.url}/oauth2/v3/certs`, fetch: countingFetch, now };

  service = await startServer((req, res) => {
    const op = req.path.replace('/v1/deliveries/', '');
    if (op === 'claim') return reply(res, 200, { status: 'ready', leaseId: 'l-1', leaseExpiresAt: Date.now() + 120_000, message: { text: 'hi', recipient: { externalConversationId: 'chat', externalCustomerId: 'cust' } } });
    if (op === 'start') return reply(res, 200, { status: 'sending' });
    return reply(res, 200, { status: 'sent' });
  });
  const client = new ConnectorClient({ integrationKey: KEY, baseUrl: service.url, sleep: fakeSleep().sleep, retry: 0 });
  sent = [];
  outcomes = [];
  handler = createPushHandler(
    client,
    ({ text }) => {
      sent.push(text);
      return ['p-1'];
    },
    { auth, onEvent: (e) => e.type === 'handled' && outcomes.push(e) },
  );
  endpoint = http.createServer((req, res) => void handler(req, res));
  await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/pubsub/replies`;
});
afterEach(async () => {
  await new Promise<void>((resolve) => endpoint.close(() => resolve()));
  await service.close();
  await jwks.close();
});

const push = (authorization?: string) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...(authorization === undefined ? {} : { authorization }) }, body: JSON.stringify(ENVELOPE) });

/** Refused with 401 and `code`, and nothing processed: no call to the service, no send, not acked. */
async function expectRefused(authorization: string | undefined, code: string): Promise<void> {
  const [requestsBefore, sentBefore] = [service.requests.length, [...sent]];
  const res = await push(authorization);
  expect(res.status).toBe(401);
  expect(res.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
  expect(await res.json()).toEqual({ error: { code, message: expect.any(String) } });
  expect(service.requests.slice(requestsBefore)).toEqual([]);
  expect(sent).toEqual(sentBefore);
  expect(outcomes.at(-1)).toMatchObject({ status: 401, action: 'nack', error: expect.objectContaining({ name: 'PushAuthenticationError', code }) });
  expect(outcomes.at(-1)?.notification).toBeUndefined();
}

test('a valid token is accepted: the delivery is processed and acked (204)', async () => {
  const res = await push(bearer());
  expect(res.status).toBe(204);
  expect(sent).toEqual(['hi']);
  expect(outcomes).toEqual([expect.objectContaining({ status: 204, action: 'ack', result: expect.objectContaining({ kind: 'sent' }) })]);
  expect(fetches).toEqual([auth.jwksUrl]);
});

test('the issuer may be spelled without the scheme, and the clock may be off by less than the skew allowance', async () => {
  expect(OIDC_CLOCK_SKEW_MS).toBe(60_000);
  expect((await push(bearer({ iss: 'accounts.google.com' }))).status).toBe(204);
  // Expired 30 s ago and issued 30 s ahead: both within the 60 s allowance.
  expect((await push(bearer({ exp: seconds() - 30, iat: seconds() + 30 }))).status).toBe(204);
  expect(sent).toEqual(['hi', 'hi']);
});

describe('refused with 401 and the reason, nothing processed', () => {
  test.each([
    ['wrong audience', () => bearer({ aud: 'https://other.example.com/pubsub' }), 'invalid_audience'],
    ['an audience array (Google sends one string)', () => bearer({ aud: [AUDIENCE] }), 'invalid_audience'],
    ['wrong email (another service account of the same audience)', () => bearer({ email: 'someone-else@my-project.iam.gserviceaccount.com' }), 'invalid_email'],
    ['no email', () => bearer({ email: undefined }), 'invalid_email'],
    ['email_verified false', () => bearer({ email_verified: false }), 'email_not_verified'],
    ['email_verified "true" (a string)', () => bearer({ email_verified: 'true' }), 'email_not_verified'],
    ['not issued by Google', () => bearer({ iss: 'https://evil.example.com' }), 'invalid_issuer'],
    ['expired (beyond the skew)', () => bearer({ iat: seconds() - 3700, exp: seconds() - 61 }), 'token_expired'],
    ['iat in the future (beyond the skew)', () => bearer({ iat: seconds() + 61, exp: seconds() + 3600 }), 'token_not_yet_valid'],
    ['nbf in the future', () => bearer({ nbf: seconds() + 300 }), 'token_not_yet_valid'],
    ['no exp', () => bearer({ exp: undefined }), 'malformed_token'],
    ['unsigned (alg none)', () => `Bearer ${token(claims(), { header: { alg: 'none', kid: 'key-1' }, signature: () => '' })}`, 'unsupported_algorithm'],
    [
      'HS256 keyed with the public key (algorithm confusion)',
      () => `Bearer ${token(claims(), { header: { alg: 'HS256', kid: 'key-1' }, signature: (data) => createHmac('sha256', current.publicKey.export({ type: 'spki', format: 'pem' })).update(data).digest('base64url') })}`,
      'unsupported_algorithm',
    ],
    ['RS512', () => `Bearer ${token(claims(), { header: { alg: 'RS512', kid: 'key-1' } })}`, 'unsupported_algorithm'],
    [
      'tampered payload (another email under the original signature)',
      () => {
        const [header, , signature] = token(claims()).split('.');
        return `Bearer ${header}.${b64(claims({ email: 'attacker@evil.iam.gserviceaccount.com' }))}.${signature}`;
      },
      'invalid_signature',
    ],
    [
      'tampered signature',
      () => {
        const jwt = token(claims());
        const at = jwt.lastIndexOf('.') + 20;
        return `Bearer ${jwt.slice(0, at)}${jwt[at] === 'A' ? 'B' : 'A'}${jwt.slice(at + 1)}`;
      },
      'invalid_signature',
    ],
    ['signed by another key under a published kid', () => `Bearer ${token(claims(), { key: { ...rotated, kid: 'key-1' } })}`, 'invalid_signature'],
    ['no signature', () => `Bearer ${token(claims(), { signature: () => '' })}`, 'invalid_signature'],
    ['a published RSA key shorter than 2048 bits', () => `Bearer ${token(claims(), { key: weak })}`, 'unknown_key'],
    ['critical header parameters', () => `Bearer ${token(claims(), { header: { alg: 'RS256', kid: 'key-1', crit: ['b64'], b64: false } })}`, 'malformed_token'],
    ['no kid', () => `Bearer ${token(claims(), { header: { alg: 'RS256' } })}`, 'malformed_token'],
    ['missing header', () => undefined, 'missing_token'],
    ['malformed header: another scheme', () => `Basic ${Buffer.from('user:pass').toString('base64')}`, 'malformed_token'],
    ['malformed header: not a JWT', () => 'Bearer not-a-jwt', 'malformed_token'],
    ['malformed header: two parts', () => `Bearer ${b64({ alg: 'RS256', kid: 'key-1' })}.${b64(claims())}`, 'malformed_token'],
    ['malformed header: the JWT header is not JSON', () => `Bearer ${b64('not json')}.${b64(claims())}.c2ln`, 'malformed_token'],
    ['malformed header: the JWT payload is not an object', () => `Bearer ${token([1, 2])}`, 'malformed_token'],
    ['malformed header: an oversized token', () => `Bearer ${token(claims({ pad: 'x'.repeat(7_000) }))}`, 'malformed_token'],
  ])('%s', async (_name, header, code) => {
    published = [current, weak];
    await expectRefused(header(), code);
  });
});

test('an unknown kid: the keys are fetched again (Google may have rotated), then the token is refused; at most one such refetch per interval', async () => {
  expect((await push(bearer())).status).toBe(204);
  expect(fetches).toHaveLength(1);
  // Within the interval, an unknown kid does not fetch: a flood of made-up kids costs nothing.
  await expectRefused(`Bearer ${token(claims(), { key: rotated })}`, 'unknown_key');
  expect(fetches).toHaveLength(1);
  time += OIDC_JWKS_MIN_REFETCH_MS;
  await expectRefused(`Bearer ${token(claims(), { key: rotated })}`, 'unknown_key');
  expect(fetches).toHaveLength(2);
  await expectRefused(`Bearer ${token(claims(), { key: { ...rotated, kid: 'made-up' } })}`, 'unknown_key');
  expect(fetches).toHaveLength(2);
  // Google publishes the new key: after the interval, the refetch finds it.
  published = [current, rotated];
  time += OIDC_JWKS_MIN_REFETCH_MS;
  expect((await push(`Bearer ${token(claims(), { key: rotated })}`)).status).toBe(204);
  expect(fetches).toHaveLength(3);
  expect(sent).toEqual(['hi', 'hi']);
});

test('concurrent requests with a new kid share one refetch, and all of them get the new key', async () => {
  expect((await push(bearer())).status).toBe(204);
  published = [current, rotated];
  time += OIDC_JWKS_MIN_REFETCH_MS;
  const statuses = await Promise.all(Array.from({ length: 5 }, () => push(`Bearer ${token(claims(), { key: rotated })}`).then((r) => r.status)));
  expect(statuses).toEqual(Array(5).fill(204));
  expect(fetches).toHaveLength(2);
});

describe('the key cache', () => {
  test('many requests, concurrent or not, fetch the keys once', async () => {
    const statuses = await Promise.all(Array.from({ length: 8 }, () => push(bearer()).then((r) => r.status)));
    for (let i = 0; i < 4; i += 1) statuses.push((await push(bearer())).status);
    expect(statuses).toEqual(Array(12).fill(204));
    expect(fetches).toHaveLength(1);
  });

  test('kept for Cache-Control max-age, fetched again after it', async () => {
    expect((await push(bearer())).status).toBe(204);
    time += 299_000;
    expect((await push(bearer())).status).toBe(204);
    expect(fetches).toHaveLength(1);
    time += 1_000;
    expect((await push(bearer())).status).toBe(204);
    expect(fetches).toHaveLength(2);
    // The new set replaced the old one: a key Google withdrew is no longer accepted.
    published = [rotated];
    time += 300_000;
    await expectRefused(bearer(), 'unknown_key');
    expect(fetches).toHaveLength(3);
  });

  test('without max-age (or with no-store) the keys are still kept for the refetch interval, not fetched per request', async () => {
    cacheControl = 'no-store';
    expect((await push(bearer())).status).toBe(204);
    time += OIDC_JWKS_MIN_REFETCH_MS - 1;
    expect((await push(bearer())).status).toBe(204);
    expect(fetches).toHaveLength(1);
    time += 1;
    expect((await push(bearer())).status).toBe(204);
    expect(fetches).toHaveLength(2);
  });

  test('keys that cannot be fetched: 503 jwks_unavailable (Pub/Sub redelivers), nothing processed; the next request tries again', async () => {
    jwks.setHandler((_req, res) => reply(res, 500, 'down'));
    const res = await push(bearer());
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('10');
    expect(await res.json()).toMatchObject({ error: { code: 'jwks_unavailable' } });
    // What went wrong is the connector's to log (the handled event), not the caller's to read.
    expect(String(outcomes[0]?.error)).toContain('answered 500');
    jwks.setHandler((_req, res) => reply(res, 200, { not: 'a jwks' }));
    // The next fetch waits for the failure backoff; meanwhile the failure is answered without one.
    expect(await (await push(bearer())).json()).toMatchObject({ error: { code: 'jwks_unavailable' } });
    expect(fetches).toHaveLength(1);
    time += OIDC_JWKS_FAILURE_BACKOFF_MS;
    expect(await (await push(bearer())).json()).toMatchObject({ error: { code: 'jwks_unavailable' } });
    expect(fetches).toHaveLength(2);
    expect(outcomes.map((o) => [o.status, o.action])).toEqual([
      [503, 'nack'],
      [503, 'nack'],
      [503, 'nack'],
    ]);
    expect(service.requests).toEqual([]);
    jwks.setHandler((_req, res) => reply(res, 200, { keys: [jwk(current)] }));
    time += OIDC_JWKS_FAILURE_BACKOFF_MS;
    expect((await push(bearer())).status).toBe(204);
    expect(fetches).toHaveLength(3);
  });

  test('many unauthenticated requests while the keys cannot be fetched make one fetch per backoff, not one each', async () => {
    jwks.setHandler((_req, res) => reply(res, 500, 'down'));
    for (let i = 0; i < 20; i++) expect((await push(bearer({ sub: `forged-${i}` }))).status).toBe(503);
    expect(fetches).toHaveLength(1);
  });

  test('keys past their max-age are still used while a refresh fails (at most OIDC_JWKS_STALE_MAX_MS), then refused', async () => {
    expect((await push(bearer())).status).toBe(204);
    jwks.setHandler((_req, res) => reply(res, 503, 'maintenance'));
    time += 300_000;
    expect((await push(bearer())).status).toBe(204);
    expect(fetches).toHaveLength(2);
    time += OIDC_JWKS_FAILURE_BACKOFF_MS - 1;
    expect((await push(bearer())).status).toBe(204);
    expect(fetches).toHaveLength(2);
    time += OIDC_JWKS_STALE_MAX_MS;
    expect((await push(bearer())).status).toBe(503);
    expect(fetches).toHaveLength(3);
  });

  test('a key set over 64 KiB is refused unread: 503 jwks_unavailable', async () => {
    jwks.setHandler((_req, res) => reply(res, 200, { keys: [jwk(current)], padding: 'x'.repeat(70 * 1024) }));
    const res = await push(bearer());
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ error: { code: 'jwks_unavailable' } });
    expect(String(outcomes.at(-1)?.error)).toContain('65536 bytes');
  });

  test("the 503 echoes no configuration to the caller: the jwksUrl goes to the handled event (the connector's log), not the answer", async () => {
    const configured = new URL(auth.jwksUrl ?? '');
    configured.search = '?token=s3cr3t';
    const events: Array<{ type: string; error?: unknown }> = [];
    const leaky = createPushHandler(new ConnectorClient({ integrationKey: KEY, baseUrl: service.url, retry: 0 }), () => ['p-1'], { auth: { ...auth, jwksUrl: configured.href }, onEvent: (e) => events.push(e) });
    jwks.setHandler((_req, res) => reply(res, 500, 'down'));
    const server = http.createServer((req, res) => void leaky(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: bearer() }, body: JSON.stringify(ENVELOPE) });
      const text = await res.text();
      expect(res.status).toBe(503);
      expect(JSON.parse(text)).toEqual({ error: { code: 'jwks_unavailable', message: "Google's signing keys are unavailable; the push will be retried" } });
      expect(text).not.toContain(configured.host);
      // The event keeps where it failed, without the query.
      const handled = String(events.find((e) => e.type === 'handled')?.error);
      expect(handled).toContain(`${configured.host}${configured.pathname}`);
      expect(handled).not.toContain('s3cr3t');
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  test('a jwksUrl with credentials is refused when the handler is created', () => {
    const withCredentials = new URL(auth.jwksUrl ?? '');
    withCredentials.username = 'keyuser';
    withCredentials.password = 'hunter2';
    expect(() => createPushHandler(new ConnectorClient({ integrationKey: KEY, baseUrl: service.url }), () => ['p-1'], { auth: { ...auth, jwksUrl: withCredentials.href } })).toThrow(/jwksUrl must not carry credentials/);
  });
});

describe('handleBody (other frameworks) authenticates too', () => {
  test('with the Authorization header: processed; without: 401, not processed', async () => {
    await expect(handler.handleBody(ENVELOPE)).resolves.toMatchObject({ status: 401, action: 'nack', error: expect.objectContaining({ code: 'missing_token' }) });
    await expect(handler.handleBody(ENVELOPE, null)).resolves.toMatchObject({ status: 401 });
    expect(service.requests).toEqual([]);
    await expect(handler.handleBody(ENVELOPE, bearer())).resolves.toMatchObject({ status: 204, action: 'ack', result: { kind: 'sent' } });
    expect(sent).toEqual(['hi']);
  });
});

describe('configuration', () => {
  const client = { processDelivery: () => Promise.reject(new Error('processDelivery ran')) };
  const send = () => ['p'];
  /** What a JavaScript caller (no type check) could pass. */
  const untyped = (options: unknown) => options as PushHandlerOptions;

  test('no auth option: createPushHandler throws at construction, naming the explicit opt-out', () => {
    expect(() => createPushHandler(client, send, untyped({}))).toThrow(/options\.auth.*'none'/);
    expect(() => createPushHandler(client, send, untyped(undefined))).toThrow(TypeError);
  });

  test('an unusable auth option throws at construction', () => {
    expect(() => createPushHandler(client, send, { auth: { audience: '', serviceAccountEmail: SERVICE_ACCOUNT } })).toThrow(/audience/);
    expect(() => createPushHandler(client, send, untyped({ auth: { audience: AUDIENCE } }))).toThrow(/serviceAccountEmail/);
    expect(() => createPushHandler(client, send, { auth: { audience: AUDIENCE, serviceAccountEmail: SERVICE_ACCOUNT, jwksUrl: 'ftp://keys' } })).toThrow(/jwksUrl/);
    expect(() => createPushHandler(client, send, untyped({ auth: 'None' }))).toThrow(TypeError);
  });

  test("auth: 'none' is the explicit opt-out: a request without a token is processed", async () => {
    const open = createPushHandler(client, send, { auth: 'none' });
    const outcome = await open.handleBody(ENVELOPE);
    // Processed: processDelivery ran (and threw, a non-transient error: acked), no authentication refusal.
    expect(outcome).toMatchObject({ status: 204, action: 'ack', notification: NOTIFICATION, error: expect.objectContaining({ message: 'processDelivery ran' }) });
  });
});

describe('verifyPubSubOidcToken (standalone)', () => {
  const untypedOidc = (options: unknown) => options as PubSubOidcOptions;
  test('returns the verified claims; the key cache is shared by calls with the same fetch and URL', async () => {
    const verified = await verifyPubSubOidcToken(bearer(), auth);
    expect(verified).toEqual(claims());
    await verifyPubSubOidcToken(bearer(), { ...auth });
    expect(fetches).toHaveLength(1);
  });

  test('throws a PushAuthenticationError (a ConnectorError) with the code; never the token in the message', async () => {
    const header = bearer({ aud: 'https://other.example.com' });
    const error: unknown = await verifyPubSubOidcToken(header, auth).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PushAuthenticationError);
    expect(error).toBeInstanceOf(ConnectorError);
    expect(error).toMatchObject({ name: 'PushAuthenticationError', code: 'invalid_audience' });
    expect((error as Error).message).not.toContain(header.slice(7, 40));
    expect((error as Error).message).not.toContain(AUDIENCE);
  });

  test('unusable options: TypeError; the keys default to Google', async () => {
    await expect(verifyPubSubOidcToken(bearer(), untypedOidc({ audience: AUDIENCE }))).rejects.toThrow(TypeError);
    expect(DEFAULT_OIDC_JWKS_URL).toBe('https://www.googleapis.com/oauth2/v3/certs');
    const asked: string[] = [];
    const offline: FetchLike = async (input) => {
      asked.push(input);
      throw new Error('offline');
    };
    await expect(verifyPubSubOidcToken(bearer(), { audience: AUDIENCE, serviceAccountEmail: SERVICE_ACCOUNT, fetch: offline, now })).rejects.toMatchObject({ code: 'jwks_unavailable' });
    expect(asked).toEqual([DEFAULT_OIDC_JWKS_URL]);
  });
});
