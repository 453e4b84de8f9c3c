import busboy from 'busboy';
import { ConflictError, ConnectorClient } from '../../src/index.js';
import { errorReply, fakeSleep, KEY, reply, type RecordedRequest, startServer, type TestServer } from './helpers/server.js';

interface Part {
  name: string;
  value?: string;
  filename?: string | undefined;
  mimeType?: string;
  data?: Buffer;
}

/** Parses a recorded multipart body with busboy, the parser the service itself uses. */
function parseMultipart(req: RecordedRequest): Promise<Part[]> {
  return new Promise((resolve, reject) => {
    const parts: Part[] = [];
    const bb = busboy({ headers: req.headers as Record<string, string> });
    bb.on('field', (name, value) => parts.push({ name, value }));
    bb.on('file', (name, stream, info) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => parts.push({ name, filename: info.filename, mimeType: info.mimeType, data: Buffer.concat(chunks) }));
    });
    bb.on('close', () => resolve(parts));
    bb.on('error', reject);
    bb.end(req.body);
  });
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
const JPEG = new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3]);

let server: TestServer;
let delays: number[];
let client: ConnectorClient;
beforeEach(async () => {
  server = await startServer((_req, res) => reply(res, 201, { conversationId: 'c_1', messageId: 'm_1', duplicate: false }));
  const s = fakeSleep();
  delays = s.delays;
  client = new ConnectorClient({ integrationKey: KEY, baseUrl: server.url, sleep: s.sleep });
});
afterEach(async () => {
  await server.close();
});

describe('messages.send with text (JSON)', () => {
  test('maps text to message.text and sends application/json', async () => {
    const result = await client.messages.send({
      eventId: 'evt-42',
      externalConversationId: 'chat-9',
      sender: { externalId: 'cust-1', displayName: 'Ann', kind: 'customer' },
      text: 'Hello 👋',
    });
    expect(result).toEqual({ conversationId: 'c_1', messageId: 'm_1', duplicate: false, eventId: 'evt-42' });
    const req = server.requests[0];
    expect(req?.method).toBe('POST');
    expect(req?.path).toBe('/v1/messages');
    expect(req?.headers['content-type']).toBe('application/json');
    expect(req?.json).toEqual({
      eventId: 'evt-42',
      externalConversationId: 'chat-9',
      sender: { externalId: 'cust-1', displayName: 'Ann', kind: 'customer' },
      message: { text: 'Hello 👋' },
    });
  });

  test("the channel's id of the message goes as providerMessageId; without one, no such field", async () => {
    await client.messages.send({ eventId: 'e', providerMessageId: 'wamid.1', externalConversationId: 'c', sender: { externalId: 'u' }, text: 'hi' });
    await client.messages.send({ eventId: 'f', externalConversationId: 'c', sender: { externalId: 'u' }, text: 'hi' });
    expect(server.requests[0]?.json).toEqual({ eventId: 'e', providerMessageId: 'wamid.1', externalConversationId: 'c', sender: { externalId: 'u' }, message: { text: 'hi' } });
    expect(server.requests[1]?.json).not.toHaveProperty('providerMessageId');
  });

  test('optional sender fields are omitted, not sent as null', async () => {
    await client.messages.send({ eventId: 'e', externalConversationId: 'c', sender: { externalId: 'alerts', kind: 'service' }, text: 'disk full' });
    expect(server.requests[0]?.json).toEqual({ eventId: 'e', externalConversationId: 'c', sender: { externalId: 'alerts', kind: 'service' }, message: { text: 'disk full' } });
  });

  test('generates a UUID eventId when omitted and reuses it on every retry', async () => {
    server.setHandler((_req, res, i) =>
      i < 2 ? errorReply(res, i === 0 ? 429 : 503, 'busy', undefined, { 'retry-after': '1' }) : reply(res, 201, { conversationId: 'c', messageId: 'm', duplicate: false }),
    );
    const result = await client.messages.send({ externalConversationId: 'chat', sender: { externalId: 'u' }, text: 'hi' });
    expect(result.eventId).toMatch(UUID);
    const ids = server.requests.map((r) => (r.json as { eventId: string }).eventId);
    expect(ids).toEqual([result.eventId, result.eventId, result.eventId]);
    expect(delays).toEqual([1000, 1000]);
  });

  test('each send call gets its own generated eventId', async () => {
    const a = await client.messages.send({ externalConversationId: 'chat', sender: { externalId: 'u' }, text: 'a' });
    const b = await client.messages.send({ externalConversationId: 'chat', sender: { externalId: 'u' }, text: 'a' });
    expect(a.eventId).not.toBe(b.eventId);
  });

  test('200 duplicate answer -> duplicate: true', async () => {
    server.setHandler((_req, res) => reply(res, 200, { conversationId: 'c_1', messageId: 'm_1', duplicate: true }));
    await expect(client.messages.send({ eventId: 'e', externalConversationId: 'c', sender: { externalId: 'u' }, text: 't' })).resolves.toMatchObject({
      duplicate: true,
    });
  });

  test('duplicate falls back to the status when the body omits it (201 new, 200 duplicate)', async () => {
    server.setHandler((_req, res, i) => reply(res, i === 0 ? 201 : 200, { conversationId: 'c_1', messageId: 'm_1' }));
    const input = { eventId: 'e', externalConversationId: 'c', sender: { externalId: 'u' }, text: 't' };
    expect((await client.messages.send(input)).duplicate).toBe(false);
    expect((await client.messages.send(input)).duplicate).toBe(true);
  });

  test('409 event_conflict is a ConflictError and not retried', async () => {
    server.setHandler((_req, res) => errorReply(res, 409, 'event_conflict', 'eventId reused with different content'));
    await expect(client.messages.send({ eventId: 'e', externalConversationId: 'c', sender: { externalId: 'u' }, text: 'x' })).rejects.toBeInstanceOf(
      ConflictError,
    );
    expect(server.requests).toHaveLength(1);
  });
});

describe('messages.send with images (multipart)', () => {
  test('payload field holds the JSON, repeated images file fields hold the bytes', async () => {
    const blob = new Blob([new Uint8Array([0x52, 0x49, 0x46, 0x46])], { type: 'image/webp' });
    await client.messages.send({
      eventId: 'evt-img',
      externalConversationId: 'chat-1',
      sender: { externalId: 'u-1' },
      text: 'see attached',
      images: [{ data: PNG, contentType: 'image/png', filename: 'screen.png' }, { data: JPEG, contentType: 'image/jpeg' }, { data: blob }],
    });
    const req = server.requests[0]!;
    expect(req.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    const parts = await parseMultipart(req);
    expect(parts.map((p) => p.name)).toEqual(['payload', 'images', 'images', 'images']);
    expect(JSON.parse(parts[0]!.value!)).toEqual({
      eventId: 'evt-img',
      externalConversationId: 'chat-1',
      sender: { externalId: 'u-1' },
      message: { text: 'see attached' },
    });
    expect(parts[1]).toMatchObject({ filename: 'screen.png', mimeType: 'image/png' });
    expect(parts[1]!.data!.equals(PNG)).toBe(true);
    expect(parts[2]).toMatchObject({ filename: 'image-2.jpg', mimeType: 'image/jpeg' });
    expect(parts[2]!.data!.equals(Buffer.from(JPEG))).toBe(true);
    expect(parts[3]).toMatchObject({ filename: 'image-3.webp', mimeType: 'image/webp' });
    expect([...parts[3]!.data!]).toEqual([0x52, 0x49, 0x46, 0x46]);
  });

  test('images only: no message field; unknown type defaults to application/octet-stream', async () => {
    await client.messages.send({ eventId: 'e', externalConversationId: 'c', sender: { externalId: 'u' }, images: [{ data: PNG }] });
    const parts = await parseMultipart(server.requests[0]!);
    expect(JSON.parse(parts[0]!.value!)).toEqual({ eventId: 'e', externalConversationId: 'c', sender: { externalId: 'u' } });
    expect(parts[1]).toMatchObject({ name: 'images', filename: 'image-1', mimeType: 'application/octet-stream' });
  });

  test('an empty filename gets the default name, so the image still arrives as a file', async () => {
    // busboy, the service's parser, reads a part with `filename=""` as a plain field: the image would be lost.
    await client.messages.send({ eventId: 'e', externalConversationId: 'c', sender: { externalId: 'u' }, images: [{ data: PNG, contentType: 'image/png', filename: '' }] });
    const parts = await parseMultipart(server.requests[0]!);
    expect(parts.map((p) => p.name)).toEqual(['payload', 'images']);
    expect(parts[1]).toMatchObject({ name: 'images', filename: 'image-1.png', mimeType: 'image/png' });
    expect(parts[1]!.data!.equals(PNG)).toBe(true);
  });

  test('a retried multipart send repeats the same eventId and the same files', async () => {
    server.setHandler((_req, res, i) =>
      i === 0 ? errorReply(res, 503, 'busy', undefined, { 'retry-after': '2' }) : reply(res, 201, { conversationId: 'c', messageId: 'm', duplicate: false }),
    );
    const sub = PNG.subarray(2, 10); // a view into a larger buffer: only its bytes are sent
    const result = await client.messages.send({ externalConversationId: 'c', sender: { externalId: 'u' }, text: 't', images: [{ data: sub, contentType: 'image/png' }] });
    expect(server.requests).toHaveLength(2);
    const [a, b] = await Promise.all(server.requests.map(parseMultipart));
    expect(JSON.parse(a![0]!.value!).eventId).toBe(result.eventId);
    expect(JSON.parse(b![0]!.value!).eventId).toBe(result.eventId);
    expect(a![1]!.data!.equals(sub)).toBe(true);
    expect(b![1]!.data!.equals(sub)).toBe(true);
    expect(delays).toEqual([2000]);
  });

  test('an empty images array sends JSON', async () => {
    await client.messages.send({ eventId: 'e', externalConversationId: 'c', sender: { externalId: 'u' }, text: 't', images: [] });
    expect(server.requests[0]?.headers['content-type']).toBe('application/json');
  });
});

/**
 * The RateLimit-* headers of /v1/messages: at `RateLimit-Remaining: 0` the next message waits
 * `RateLimit-Reset` seconds (capped like Retry-After) instead of being sent into a 429. A fixed
 * clock makes the waits exact; the fake sleep records them.
 */
describe('messages.send honours the rate-limit headers', () => {
  const NOW = 1_800_000_000_000;
  const created = { conversationId: 'c', messageId: 'm', duplicate: false };
  const limits = (remaining: number, reset: number) => ({ 'ratelimit-limit': '60', 'ratelimit-remaining': String(remaining), 'ratelimit-reset': String(reset) });
  const message = () => ({ externalConversationId: 'chat-1', sender: { externalId: 'u-1' }, text: 'hi' });
  let paced: ConnectorClient;
  let waits: number[];
  beforeEach(() => {
    const s = fakeSleep();
    waits = s.delays;
    paced = new ConnectorClient({ integrationKey: KEY, baseUrl: server.url, sleep: s.sleep, now: () => NOW });
  });

  test('Remaining 0 on a 201: the next message waits Reset seconds before it is sent; Remaining > 0: no wait', async () => {
    server.setHandler((_req, res, i) => reply(res, 201, created, i === 0 ? limits(0, 7) : limits(5, 3)));
    await paced.messages.send(message());
    expect(waits).toEqual([]);
    expect(server.requests).toHaveLength(1);
    await paced.messages.send(message());
    expect(waits).toEqual([7000]);
    expect(server.requests).toHaveLength(2);
    await paced.messages.send(message());
    expect(waits).toEqual([7000]);
  });

  test('the wait is capped like Retry-After (maxRetryAfterMs)', async () => {
    server.setHandler((_req, res) => reply(res, 201, created, limits(0, 3600)));
    await paced.messages.send(message());
    await paced.messages.send(message());
    expect(waits).toEqual([30_000]);
    const strict = new ConnectorClient({ integrationKey: KEY, baseUrl: server.url, sleep: async (ms) => void waits.push(ms), now: () => NOW, retry: { maxRetryAfterMs: 2_000 } });
    await strict.messages.send(message());
    await strict.messages.send(message());
    expect(waits).toEqual([30_000, 2_000]);
  });

  test('a 400 with Remaining 0 pauses the next message too (the budget is per integration, whatever the answer)', async () => {
    server.setHandler((_req, res, i) => (i === 0 ? errorReply(res, 400, 'invalid_request', 'x', limits(0, 2)) : reply(res, 201, created, limits(1, 1))));
    await expect(paced.messages.send(message())).rejects.toMatchObject({ status: 400 });
    await paced.messages.send(message());
    expect(waits).toEqual([2000]);
  });

  test('a 429 (Remaining 0, Reset = Retry-After) is waited for once, not twice', async () => {
    server.setHandler((_req, res, i) =>
      i === 0 ? errorReply(res, 429, 'rate_limited', 'x', { ...limits(0, 4), 'retry-after': '4' }) : reply(res, 201, created, limits(10, 1)),
    );
    await paced.messages.send(message());
    expect(waits).toEqual([4000]);
    expect(server.requests).toHaveLength(2);
  });

  test('only the path that said so is paused: delivery calls are not', async () => {
    server.setHandler((req, res) => (req.path === '/v1/messages' ? reply(res, 201, created, limits(0, 9)) : reply(res, 200, { status: 'sending' })));
    await paced.messages.send(message());
    await paced.deliveries.start({ deliveryId: 'd', leaseId: 'l' });
    expect(waits).toEqual([]);
  });
});
