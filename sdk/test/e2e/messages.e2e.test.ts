/**
 * SDK end to end: `messages.send` against the emulator stack (through Hosting), or the test service
 * (./target.ts): JSON, retries with the same eventId, a generated eventId, images (multipart), a
 * service alert, typed errors. What was stored is read through `messageDoc(s)` on either target.
 */
import { createHash, randomUUID } from 'node:crypto';
import {
  BadRequestError,
  ConflictError,
  ForbiddenError,
  UnauthorizedError,
  type ConnectorClient,
  type FetchLike,
} from '../../src/index.js';
import { jpeg, png, webpAnimated } from '../../../test/unit/fixtures/image-bytes';
import { closeStack, createTestIntegration, messageDoc, messageDocs, sdkClient, storedImageSha256, type TestIntegration } from './helpers';

let integration: TestIntegration;
let client: ConnectorClient;
beforeAll(async () => {
  integration = await createTestIntegration();
  client = sdkClient(integration.key);
});
afterAll(closeStack);

const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const newChat = () => ({ externalConversationId: `chat-${randomUUID()}`, sender: { externalId: `cust-${randomUUID().slice(0, 8)}`, displayName: 'Ada Lovelace' } });

describe('messages.send (JSON)', () => {
  test('201 for a new event, then 200 duplicate for the same eventId: same conversation and message, one document', async () => {
    const input = { ...newChat(), eventId: `evt-${randomUUID()}`, text: 'My order has not arrived.' };
    const first = await client.messages.send(input);
    expect(first).toEqual({ conversationId: expect.any(String), messageId: expect.any(String), duplicate: false, eventId: input.eventId });

    const again = await client.messages.send(input);
    expect(again).toEqual({ ...first, duplicate: true });

    const docs = await messageDocs(integration, first.conversationId);
    expect(docs).toHaveLength(1);
    expect(docs[0]).toMatchObject({ id: first.messageId, direction: 'inbound', kind: 'message', eventId: input.eventId, text: input.text });
    expect(docs[0]?.sender).toMatchObject({ externalId: input.sender.externalId, displayName: 'Ada Lovelace', kind: 'customer' });
  });

  test('an HTTP retry after a lost answer reuses the eventId: the service answers 200 duplicate, nothing is created twice', async () => {
    // The first attempt reaches the service (201) but its answer is "lost"; the SDK retries.
    const bodies: string[] = [];
    const statuses: number[] = [];
    const lossy: FetchLike = async (url, init) => {
      bodies.push(String(init.body));
      const res = await fetch(url, init);
      statuses.push(res.status);
      if (statuses.length === 1) {
        await res.text();
        throw new TypeError('fetch failed', { cause: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }) });
      }
      return res;
    };
    const retrying = sdkClient(integration.key, { fetch: lossy, sleep: async () => undefined });
    const input = { ...newChat(), text: 'Sent once, answered twice' }; // no eventId: generated once per call

    const result = await retrying.messages.send(input);
    expect(statuses).toEqual([201, 200]);
    expect(bodies[1]).toBe(bodies[0]); // same bytes, same generated eventId
    expect(JSON.parse(bodies[0] ?? '{}').eventId).toBe(result.eventId);
    expect(result).toEqual({ conversationId: expect.any(String), messageId: expect.any(String), duplicate: true, eventId: expect.any(String) });
    expect(await messageDocs(integration, result.conversationId)).toHaveLength(1);
  });

  test('without an eventId the SDK generates one per call (a UUID), returned and stored', async () => {
    const chat = newChat();
    const a = await client.messages.send({ ...chat, text: 'first' });
    const b = await client.messages.send({ ...chat, text: 'first' });
    expect(a.eventId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(b.eventId).not.toBe(a.eventId);
    // Two separate calls are two events (same chat): two messages in one conversation.
    expect(b.duplicate).toBe(false);
    expect(b.conversationId).toBe(a.conversationId);
    expect(b.messageId).not.toBe(a.messageId);
    expect((await messageDoc(integration, a.conversationId, a.messageId))?.eventId).toBe(a.eventId);
  });

  test('the same eventId with different content -> ConflictError event_conflict (409), not retried', async () => {
    const input = { ...newChat(), eventId: `evt-${randomUUID()}`, text: 'original' };
    await client.messages.send(input);
    const err = await client.messages.send({ ...input, text: 'edited' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConflictError);
    expect(err).toMatchObject({ status: 409, code: 'event_conflict', attempts: 1, method: 'POST', path: '/v1/messages', requestId: expect.stringMatching(/^req_/) });
  });

  test('a service alert (sender.kind service) is stored as an alert, with no customer', async () => {
    const alert = await client.messages.send({
      externalConversationId: `alerts-${randomUUID()}`,
      sender: { externalId: 'monitoring', displayName: 'Monitoring', kind: 'service' },
      text: 'Payment provider latency above 5 s',
    });
    expect(alert.duplicate).toBe(false);
    const doc = await messageDoc(integration, alert.conversationId, alert.messageId);
    expect(doc).toMatchObject({ kind: 'alert', text: 'Payment provider latency above 5 s', sender: { externalId: 'monitoring', kind: 'service', customerId: null } });
  });
});

describe('messages.send with images (multipart)', () => {
  const PNG = png(2, 3);
  const JPEG = jpeg(4, 5);

  test('PNG + JPEG with text: 201, sniffed and stored; an identical retry is a duplicate', async () => {
    const input = {
      ...newChat(),
      eventId: `evt-${randomUUID()}`,
      text: 'Here are screenshots',
      images: [
        { data: PNG, contentType: 'image/png', filename: 'screen.png' },
        { data: new Blob([new Uint8Array(JPEG)], { type: 'image/jpeg' }) }, // Blob input, default filename
      ],
    };
    const sent = await client.messages.send(input);
    expect(sent.duplicate).toBe(false);

    const doc = await messageDoc(integration, sent.conversationId, sent.messageId);
    expect(doc?.text).toBe('Here are screenshots');
    const images = doc?.images as Array<Record<string, unknown>>;
    expect(images).toEqual([
      expect.objectContaining({ contentType: 'image/png', width: 2, height: 3, bytes: PNG.length, sha256: sha256(PNG) }),
      expect.objectContaining({ contentType: 'image/jpeg', width: 4, height: 5, bytes: JPEG.length, sha256: sha256(JPEG) }),
    ]);
    // The bytes that arrived are exactly the bytes given to the SDK.
    expect(await storedImageSha256(images[0] ?? {})).toBe(sha256(PNG));
    expect(await storedImageSha256(images[1] ?? {})).toBe(sha256(JPEG));

    expect(await client.messages.send(input)).toEqual({ ...sent, duplicate: true });
  });

  test('a multipart retry after a lost answer sends the same payload and files again: 200 duplicate', async () => {
    const statuses: number[] = [];
    const lossy: FetchLike = async (url, init) => {
      expect(init.body).toBeInstanceOf(FormData);
      const res = await fetch(url, init);
      statuses.push(res.status);
      if (statuses.length === 1) {
        await res.text();
        throw new TypeError('fetch failed', { cause: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }) });
      }
      return res;
    };
    const retrying = sdkClient(integration.key, { fetch: lossy, sleep: async () => undefined });
    const result = await retrying.messages.send({ ...newChat(), text: 'screenshot attached', images: [{ data: PNG, contentType: 'image/png' }] });
    expect(statuses).toEqual([201, 200]);
    expect(result.duplicate).toBe(true);
    const docs = await messageDocs(integration, result.conversationId);
    expect(docs).toHaveLength(1);
    expect(docs[0]).toMatchObject({ eventId: result.eventId, images: [expect.objectContaining({ sha256: sha256(PNG) })] });
  });

  test('images alone (no text) are a message; the declared type does not matter, the bytes do', async () => {
    const sent = await client.messages.send({ ...newChat(), images: [{ data: PNG }] }); // application/octet-stream
    const doc = await messageDoc(integration, sent.conversationId, sent.messageId);
    expect(doc).toMatchObject({ text: null, images: [expect.objectContaining({ contentType: 'image/png', width: 2, height: 3 })] });
  });

  test('a file that is not an image -> BadRequestError (400), not retried', async () => {
    const err = await client.messages
      .send({ ...newChat(), text: 'see attachment', images: [{ data: new TextEncoder().encode('definitely not an image'), contentType: 'image/png' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BadRequestError);
    expect(err).toMatchObject({ status: 400, attempts: 1 });
  });
});

// The image rules are the service's own (functions/src/rules/images.ts) on both targets: the test
// service once accepted both of these, which the service refuses.
describe('messages.send: the image rules, the same on both targets', () => {
  test('an animated WebP -> BadRequestError unsupported_image, nothing stored', async () => {
    const chat = newChat();
    const err = await client.messages.send({ ...chat, eventId: `evt-${randomUUID()}`, text: 'look', images: [{ data: webpAnimated(4, 4) }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BadRequestError);
    expect(err).toMatchObject({ status: 400, code: 'unsupported_image', attempts: 1 });
  });

  test('a PNG whose header claims a side of 16385 pixels -> BadRequestError image_too_large_dimensions', async () => {
    const err = await client.messages.send({ ...newChat(), text: 'huge', images: [{ data: png(16385, 1) }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BadRequestError);
    expect(err).toMatchObject({ status: 400, code: 'image_too_large_dimensions' });
    // The largest side the service takes is accepted on both.
    const sent = await client.messages.send({ ...newChat(), images: [{ data: png(16384, 1) }] });
    expect(sent.duplicate).toBe(false);
  });
});

describe('messages.send errors', () => {
  test('no text and no images -> BadRequestError empty_message', async () => {
    const err = await client.messages.send({ ...newChat() }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BadRequestError);
    expect(err).toMatchObject({ status: 400, code: 'empty_message' });
  });

  test('unknown key -> UnauthorizedError invalid_key; the key is not in the error', async () => {
    const key = `sdk_test_${randomUUID().replace(/-/g, '')}`;
    const err = await sdkClient(key).messages.send({ ...newChat(), text: 'hi' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnauthorizedError);
    expect(err).toMatchObject({ status: 401, code: 'invalid_key', attempts: 1 });
    expect(JSON.stringify(err) + String(err) + (err as Error).stack).not.toContain(key);
  });

  test('inactive integration -> ForbiddenError integration_inactive', async () => {
    const inactive = await createTestIntegration({ active: false });
    const err = await sdkClient(inactive.key).messages.send({ ...newChat(), text: 'hi' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ForbiddenError);
    expect(err).toMatchObject({ status: 403, code: 'integration_inactive' });
  });
});
