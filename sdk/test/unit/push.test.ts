/**
 * createPushHandler as a real `node:http` listener receiving Pub/Sub push envelopes, with a real
 * local HTTP server playing the service: 204 acks, 503 asks Pub/Sub to redeliver.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConnectorClient, createPushHandler, MAX_PUSH_BODY_BYTES, ProviderRetryableError, type PushHandler } from '../../src/index.js';
import { errorReply, fakeSleep, KEY, reply, startServer, type TestServer } from './helpers/server.js';

const NOTIFICATION = { deliveryId: 'd_1', workspaceId: 'ws', integrationId: 'int', conversationId: 'c_1', messageId: 'm_1' };
const envelope = (data: unknown) => ({
  message: { data: Buffer.from(typeof data === 'string' ? data : JSON.stringify(data)).toString('base64'), messageId: '123', attributes: {} },
  subscription: 'projects/p/subscriptions/replies',
});

let service: TestServer;
let endpoint: http.Server;
let url: string;
let handler: PushHandler;
let sent: string[];
let events: Array<{ type: string }>;

function serve(claim?: (res: http.ServerResponse) => void): void {
  service.setHandler((req, res) => {
    const op = req.path.replace('/v1/deliveries/', '');
    if (op === 'claim' && claim) return claim(res);
    if (op === 'claim') return reply(res, 200, { status: 'ready', leaseId: 'l-1', leaseExpiresAt: Date.now() + 120_000, message: { text: 'hi', recipient: { externalConversationId: 'chat', externalCustomerId: 'cust' } } });
    if (op === 'start') return reply(res, 200, { status: 'sending' });
    if (op === 'complete') return reply(res, 200, { status: 'sent' });
    if (op === 'fail') return reply(res, 200, { status: 'queued' });
    return errorReply(res, 404, 'not_found');
  });
}

beforeEach(async () => {
  service = await startServer();
  const client = new ConnectorClient({ integrationKey: KEY, baseUrl: service.url, sleep: fakeSleep().sleep, retry: 1 });
  sent = [];
  events = [];
  handler = createPushHandler(
    client,
    ({ text }) => {
      if (text === 'later') throw new ProviderRetryableError('later');
      sent.push(text);
      return ['p-1'];
    },
    // These tests are about delivery, not authentication (oidc.test.ts, and the tests below): opt out explicitly.
    { auth: 'none', onEvent: (e) => events.push(e) },
  );
  endpoint = http.createServer((req, res) => void handler(req, res));
  await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/pubsub`;
});
afterEach(async () => {
  await new Promise<void>((resolve) => endpoint.close(() => resolve()));
  await service.close();
});

const push = (body: string, method = 'POST') => fetch(url, { method, headers: { 'content-type': 'application/json' }, ...(method === 'GET' ? {} : { body }) });

test('a push envelope is delivered and answered 204 (ack); the events are reported', async () => {
  serve();
  const res = await push(JSON.stringify(envelope(NOTIFICATION)));
  expect(res.status).toBe(204);
  expect(sent).toEqual(['hi']);
  expect(events.map((e) => e.type)).toEqual(['claimed', 'started', 'completed', 'handled']);
  expect(events.at(-1)).toMatchObject({ status: 204, action: 'ack', notification: NOTIFICATION, result: { kind: 'sent' } });
});

test('send receives the push envelope`s traceparent attribute', async () => {
  serve();
  const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
  const client = new ConnectorClient({ integrationKey: KEY, baseUrl: service.url, sleep: fakeSleep().sleep, retry: 1 });
  const traces: Array<[string | undefined, string | undefined]> = [];
  const traced = createPushHandler(client, ({ traceparent, traceId }) => {
    traces.push([traceparent, traceId]);
    return ['p-1'];
  }, { auth: 'none' });
  const body = envelope(NOTIFICATION);
  expect((await traced.handleBody({ ...body, message: { ...body.message, attributes: { traceparent: TRACEPARENT } } })).status).toBe(204);
  expect((await traced.handleBody(body)).status).toBe(204);
  expect(traces).toEqual([
    [TRACEPARENT, '4bf92f3577b34da6a3ce929d0e0e4736'],
    [undefined, undefined],
  ]);
});

test('a transient service error answers 503 (Pub/Sub redelivers); a 404 and junk answer 204', async () => {
  serve((res) => errorReply(res, 503, 'temporarily_unavailable', 'busy', { 'retry-after': '1' }));
  const busy = await push(JSON.stringify(envelope(NOTIFICATION)));
  expect(busy.status).toBe(503);
  expect(busy.headers.get('retry-after')).toBe('10');
  serve((res) => errorReply(res, 404, 'delivery_not_found'));
  expect((await push(JSON.stringify(envelope(NOTIFICATION)))).status).toBe(204);
  const before = service.requests.length;
  expect((await push('not json')).status).toBe(204);
  expect((await push(JSON.stringify(envelope('not a notification')))).status).toBe(204);
  expect(service.requests.length).toBe(before);
  expect(sent).toEqual([]);
});

test('a provider retry is acked (the service re-queues it): retry_scheduled', async () => {
  service.setHandler((req, res) => {
    const op = req.path.replace('/v1/deliveries/', '');
    if (op === 'claim') return reply(res, 200, { status: 'ready', leaseId: 'l-1', leaseExpiresAt: Date.now() + 120_000, message: { text: 'later', recipient: { externalConversationId: 'c', externalCustomerId: 'u' } } });
    if (op === 'start') return reply(res, 200, { status: 'sending' });
    return reply(res, 200, { status: 'queued' });
  });
  const outcome = await handler.handleBody(envelope(NOTIFICATION));
  expect(outcome).toMatchObject({ status: 204, action: 'ack', result: { kind: 'retry_scheduled', deliveryStatus: 'queued' } });
});

test('not POST: 405; a body over the limit: 413 (both with the error envelope)', async () => {
  serve();
  const get = await push('', 'GET');
  expect(get.status).toBe(405);
  expect(get.headers.get('allow')).toBe('POST');
  expect(await get.json()).toEqual({ error: { code: 'method_not_allowed', message: expect.any(String) } });
  const big = await push('x'.repeat(MAX_PUSH_BODY_BYTES + 1));
  expect(big.status).toBe(413);
  expect(await big.json()).toMatchObject({ error: { code: 'payload_too_large' } });
  expect(service.requests).toEqual([]);
});

test('handleBody accepts an already parsed body (Express, Connect) and never rejects', async () => {
  serve();
  await expect(handler.handleBody(envelope(NOTIFICATION))).resolves.toMatchObject({ status: 204, result: { kind: 'sent' } });
  await expect(handler.handleBody(null)).resolves.toMatchObject({ status: 204, action: 'ack', error: expect.objectContaining({ name: 'InvalidNotificationError' }) });
});

test('with { send, unsend }: an unsend pushed with attribute kind runs the unsend callback with the target; a bad provider is refused when the handler is made', async () => {
  const target = { deliveryId: 'd_0', providerMessageIds: ['wamid.1'] };
  serve((res) => reply(res, 200, { status: 'ready', kind: 'unsend', leaseId: 'l-1', leaseExpiresAt: Date.now() + 120_000, message: { recipient: { externalConversationId: 'chat', externalCustomerId: 'cust' } }, target }));
  const client = new ConnectorClient({ integrationKey: KEY, baseUrl: service.url, sleep: fakeSleep().sleep, retry: 1 });
  const unsent: unknown[] = [];
  const own = createPushHandler(client, { send: () => ['never'], unsend: ({ target: t }) => void unsent.push(t) }, { auth: 'none' });
  const server = http.createServer((req, res) => void own(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const body = { ...envelope(NOTIFICATION), message: { ...envelope(NOTIFICATION).message, attributes: { kind: 'unsend' } } };
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(res.status).toBe(204);
    expect(unsent).toEqual([target]);
    expect(service.requests.find((r) => r.path === '/v1/deliveries/complete')?.json).toMatchObject({ providerMessageIds: ['wamid.1'] });
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  expect(() => createPushHandler(client, { edit: () => undefined } as never, { auth: 'none' })).toThrow('createPushHandler needs a provider send function or { send, edit?, unsend? }');
});
