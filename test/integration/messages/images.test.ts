/**
 * POST /v1/messages with images (multipart/form-data): formats sniffed from the bytes, content
 * addressed storage, every image limit of docs/contract.md#limits at and one past the boundary, and
 * malformed multipart bodies. After every rejected request nothing is written.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { expectAccepted, expectError, guardNoWrites } from '../helpers/assertions';
import { MESSAGES_PATH, newMessage, readMessageDoc, type WireMessage } from '../helpers/messages';
import {
  closeStack,
  createTestIntegration,
  imageFilePath,
  listImageFiles,
  messageParts,
  multipartBody,
  postMultipart,
  type ImagePart,
  type MultipartPart,
  type TestIntegration,
} from '../helpers/stack';
import { jpeg, png, webpAnimated, webpExtended, webpLossless, webpLossy } from '../../unit/fixtures/image-bytes';

jest.setTimeout(60_000);
afterAll(closeStack);

const MB10 = 10 * 1024 * 1024;
const MB20 = 20 * 1024 * 1024;
const MB21 = 21 * 1024 * 1024;
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const GIF = Buffer.concat([Buffer.from('GIF89a', 'latin1'), Buffer.from([1, 0, 1, 0, 0x80, 0, 0]), Buffer.alloc(20)]);

// Big images are built once per file.
const PNG_10MB = png(1024, 768, { totalBytes: MB10 });
const JPEG_10MB = jpeg(800, 600, { totalBytes: MB10 });
const PNG_10MB_PLUS_1 = png(1024, 768, { totalBytes: MB10 + 1 });

/** A message without text (images alone are a valid message). */
const imageOnly = (): WireMessage => {
  const { message: _m, ...rest } = newMessage();
  return rest;
};

async function sendRejected(parts: MultipartPart[], status: number, code: string, mentions: string[] = []): Promise<string> {
  const integ = await createTestIntegration();
  const check = await guardNoWrites(integ);
  const res = await postMultipart(MESSAGES_PATH, parts, { key: integ.key });
  const message = expectError(res, status, code);
  for (const m of mentions) expect(message).toContain(m);
  await check();
  return message;
}

async function sendAccepted(integ: TestIntegration, payload: WireMessage, images: Array<Buffer | ImagePart>, options: { preamble?: Buffer } = {}) {
  const res = await postMultipart(MESSAGES_PATH, messageParts(payload, images), { key: integ.key, ...options });
  const body = expectAccepted(res, 201);
  const stored = await readMessageDoc(integ.workspaceId, body.conversationId, body.messageId);
  return { body, stored, images: (stored?.images ?? []) as Array<Record<string, unknown>> };
}

describe('accepted formats, stored under their message and content hash', () => {
  const formats: Array<[string, Buffer, string, string, [number, number]]> = [
    ['PNG', png(640, 480), 'png', 'image/png', [640, 480]],
    ['JPEG (baseline)', jpeg(1024, 768), 'jpeg', 'image/jpeg', [1024, 768]],
    ['JPEG (progressive)', jpeg(300, 200, { sof: 0xc2 }), 'jpeg', 'image/jpeg', [300, 200]],
    ['WebP (lossy)', webpLossy(320, 240), 'webp', 'image/webp', [320, 240]],
    ['WebP (lossless)', webpLossless(100, 50), 'webp', 'image/webp', [100, 50]],
    ['WebP (extended, static)', webpExtended(200, 100), 'webp', 'image/webp', [200, 100]],
  ];
  test.each(formats)('%s', async (_name, bytes, ext, contentType, [width, height]) => {
    const integ = await createTestIntegration();
    const { body, images } = await sendAccepted(integ, newMessage(), [{ data: bytes, contentType, filename: '../../etc/passwd' }]);
    // One object per message and image: the message's (deterministic) id is in the path.
    const path = `workspaces/${integ.workspaceId}/conversations/${body.conversationId}/messages/${body.messageId}/images/${sha256(bytes)}.${ext}`;
    expect(images).toEqual([{ path, sha256: sha256(bytes), contentType, width, height, bytes: bytes.length }]);
    // The client's filename is never used: the only file is at the derived path, with the same bytes.
    expect(await listImageFiles(`workspaces/${integ.workspaceId}`)).toEqual([path]);
    expect(Buffer.compare(await readFile(imageFilePath(path)), bytes)).toBe(0);
  });

  test('a message without the `message` key but with an image is 201 with null text', async () => {
    const integ = await createTestIntegration();
    const { stored } = await sendAccepted(integ, imageOnly(), [png(10, 10)]);
    expect(stored).toMatchObject({ direction: 'inbound', text: null });
  });

  test('a message with empty text and an image is accepted', async () => {
    const integ = await createTestIntegration();
    const { stored } = await sendAccepted(integ, newMessage({ message: { text: '' } }), [png(10, 10)]);
    expect(stored?.text).toBeNull();
  });

  test('three images are accepted, in order', async () => {
    const integ = await createTestIntegration();
    const three = [png(1, 1), jpeg(2, 2), webpLossy(3, 3)];
    const { images } = await sendAccepted(integ, newMessage(), three);
    expect(images.map((i) => i.sha256)).toEqual(three.map(sha256));
    expect(images.map((i) => i.contentType)).toEqual(['image/png', 'image/jpeg', 'image/webp']);
    expect(await listImageFiles(`workspaces/${integ.workspaceId}`)).toHaveLength(3);
  });

  test('the same image twice in one message is stored once and listed twice', async () => {
    const integ = await createTestIntegration();
    const image = png(5, 5);
    const { images } = await sendAccepted(integ, newMessage(), [image, image]);
    expect(images).toHaveLength(2);
    expect(await listImageFiles(`workspaces/${integ.workspaceId}`)).toHaveLength(1);
  });
});

describe('the declared content type is not trusted: bytes are sniffed', () => {
  test('declared image/png but actually JPEG is accepted and stored as JPEG', async () => {
    const integ = await createTestIntegration();
    const bytes = jpeg(40, 30);
    const { images } = await sendAccepted(integ, newMessage(), [{ data: bytes, contentType: 'image/png', filename: 'photo.png' }]);
    expect(images[0]).toMatchObject({ contentType: 'image/jpeg', width: 40, height: 30, path: expect.stringMatching(/\.jpeg$/) });
  });

  test('declared image/png but actually GIF is 400 unsupported_image', async () => {
    const message = await sendRejected(messageParts(newMessage(), [{ data: GIF, contentType: 'image/png', filename: 'x.png' }]), 400, 'unsupported_image', ['images[0]']);
    expect(message).toContain('GIF');
  });

  test.each<[string, Buffer]>([
    ['plain text', Buffer.from('hello, this is not an image')],
    ['an empty file', Buffer.alloc(0)],
    ['a PDF', Buffer.from('%PDF-1.7\n%\u00e2\u00e3\n1 0 obj\n<<>>\nendobj\n', 'latin1')],
  ])('%s is 400 unsupported_image', async (_name, data) => {
    await sendRejected(messageParts(newMessage(), [{ data, contentType: 'image/jpeg' }]), 400, 'unsupported_image', ['images[0]']);
  });

  test('animated WebP is 400 unsupported_image', async () => {
    const message = await sendRejected(messageParts(newMessage(), [webpAnimated(64, 64)]), 400, 'unsupported_image', ['images[0]']);
    expect(message).toMatch(/animated/i);
  });

  test('the index of the bad image is named', async () => {
    await sendRejected(messageParts(newMessage(), [png(1, 1), jpeg(1, 1), GIF]), 400, 'unsupported_image', ['images[2]']);
  });
});

describe('broken and hostile images', () => {
  test.each<[string, Buffer]>([
    ['truncated PNG', png(100, 100).subarray(0, 20)],
    ['truncated JPEG', jpeg(100, 100).subarray(0, 30)],
    ['truncated WebP', webpLossy(100, 100).subarray(0, 20)],
    ['PNG with a corrupted IHDR CRC', (() => { const b = Buffer.from(png(10, 10)); b[20] = (b[20] ?? 0) ^ 0xff; return b; })()],
  ])('%s is 400 invalid_image', async (_name, data) => {
    await sendRejected(messageParts(newMessage(), [data]), 400, 'invalid_image', ['images[0]']);
  });

  test('a decompression bomb header (tiny file, huge dimensions) is rejected fast, without decoding', async () => {
    const bomb = png(1_000_000, 1_000_000);
    expect(bomb.length).toBeLessThan(100);
    const started = Date.now();
    const message = await sendRejected(messageParts(newMessage(), [bomb]), 400, 'image_too_large_dimensions', ['images[0]', '1000000x1000000']);
    expect(message).toContain('16384');
    // Decoding a 10^12-pixel image would never end (nor fit in memory): any bound well below the
    // suite's timeout shows it was refused from its header. 20 s leaves room for a loaded CI machine.
    expect(Date.now() - started).toBeLessThan(20_000);
  });
});

describe('image dimension limits: 16384 per side, 40 megapixels', () => {
  test.each<[string, Buffer]>([
    ['PNG 16384 x 1', png(16384, 1)],
    ['JPEG 1 x 16384', jpeg(1, 16384)],
    // VP8L stores width - 1 in 14 bits, so 16384 is the largest WebP side there is.
    ['WebP (lossless) 16384 x 2', webpLossless(16384, 2)],
    ['PNG 8000 x 5000 (exactly 40 megapixels)', png(8000, 5000)],
  ])('%s is accepted', async (_name, data) => {
    const integ = await createTestIntegration();
    const { images } = await sendAccepted(integ, newMessage(), [data]);
    expect(images).toHaveLength(1);
  });

  test.each<[string, Buffer]>([
    ['PNG 16385 x 1', png(16385, 1)],
    ['JPEG 1 x 16385', jpeg(1, 16385)],
    ['WebP 7000 x 7000 (over 40 megapixels)', webpExtended(7000, 7000, { lossless: true })],
    ['PNG 8000 x 5001 (over 40 megapixels)', png(8000, 5001)],
  ])('%s is 400 image_too_large_dimensions', async (_name, data) => {
    await sendRejected(messageParts(newMessage(), [data]), 400, 'image_too_large_dimensions', ['images[0]']);
  });
});

describe('image count and byte limits', () => {
  test('4 images is 400 too_many_images', async () => {
    await sendRejected(messageParts(newMessage(), [png(1, 1), png(1, 2), png(1, 3), png(1, 4)]), 400, 'too_many_images', ['images', '3']);
  });

  test('an image of exactly 10 MB is accepted', async () => {
    const integ = await createTestIntegration();
    expect(PNG_10MB.length).toBe(MB10);
    const { images } = await sendAccepted(integ, imageOnly(), [PNG_10MB]);
    expect(images[0]).toMatchObject({ bytes: MB10, sha256: sha256(PNG_10MB) });
    expect(Buffer.compare(await readFile(imageFilePath(String(images[0]?.path))), PNG_10MB)).toBe(0);
  });

  test('an image of 10 MB + 1 byte is 413 image_too_large', async () => {
    await sendRejected(messageParts(newMessage(), [PNG_10MB_PLUS_1]), 413, 'image_too_large', ['images[0]']);
  });

  test('two images of 10 MB each (exactly 20 MB together) are accepted', async () => {
    const integ = await createTestIntegration();
    const { images } = await sendAccepted(integ, imageOnly(), [PNG_10MB, JPEG_10MB]);
    expect(images.map((i) => i.bytes)).toEqual([MB10, MB10]);
  });

  test('three images over 20 MB together (each within 10 MB, request within 21 MB) is 413 images_too_large', async () => {
    const parts = messageParts(newMessage(), [PNG_10MB, JPEG_10MB, png(1, 1)]);
    expect(multipartBody(parts).body.length).toBeLessThanOrEqual(MB21);
    const message = await sendRejected(parts, 413, 'images_too_large', ['images']);
    expect(message).toContain(String(MB20));
  });

  test('a multipart request of exactly 21 MB is accepted', async () => {
    const integ = await createTestIntegration();
    const parts = messageParts(imageOnly(), [PNG_10MB, JPEG_10MB]);
    // Fill up to exactly 21 MB with a preamble (bytes before the first boundary, ignored by parsers).
    const fill = MB21 - multipartBody(parts, { boundary: 'b0undary', preamble: Buffer.alloc(0) }).body.length;
    const preamble = Buffer.alloc(fill, 0x20);
    expect(multipartBody(parts, { boundary: 'b0undary', preamble }).body.length).toBe(MB21);
    const res = await postMultipart(MESSAGES_PATH, parts, { key: integ.key, boundary: 'b0undary', preamble });
    expectAccepted(res, 201);
  });

  test('a multipart request of 21 MB + 1 byte is 413 payload_too_large', async () => {
    const integ = await createTestIntegration();
    const check = await guardNoWrites(integ);
    const parts = messageParts(imageOnly(), [PNG_10MB, JPEG_10MB]);
    const fill = MB21 + 1 - multipartBody(parts, { boundary: 'b0undary', preamble: Buffer.alloc(0) }).body.length;
    const preamble = Buffer.alloc(fill, 0x20);
    expect(multipartBody(parts, { boundary: 'b0undary', preamble }).body.length).toBe(MB21 + 1);
    const res = await postMultipart(MESSAGES_PATH, parts, { key: integ.key, boundary: 'b0undary', preamble });
    const message = expectError(res, 413, 'payload_too_large');
    expect(message).toContain(String(MB21));
    await check();
  });

  test('a payload field over 65536 bytes is 413 payload_too_large', async () => {
    const payload = JSON.stringify(newMessage()) + ' '.repeat(65_536);
    await sendRejected([{ name: 'payload', data: payload }, ...messageParts(undefined, [png(1, 1)])], 413, 'payload_too_large', ['payload']);
  });
});

describe('malformed multipart bodies', () => {
  test('missing payload part is 400 naming payload', async () => {
    await sendRejected(messageParts(undefined, [png(1, 1)]), 400, 'invalid_multipart', ['payload']);
  });

  test('a text field with another name is 400', async () => {
    await sendRejected([{ name: 'message', data: JSON.stringify(newMessage()) }], 400, 'invalid_multipart', ["'message'"]);
  });

  test('an extra text field besides payload is 400', async () => {
    await sendRejected([...messageParts(newMessage()), { name: 'note', data: 'hi' }], 400, 'invalid_multipart');
  });

  test('a file field with another name is 400', async () => {
    await sendRejected([...messageParts(newMessage()), { name: 'image', data: png(1, 1), filename: 'a.png', contentType: 'image/png' }], 400, 'invalid_multipart', ["'image'"]);
  });

  test('two payload fields are 400', async () => {
    await sendRejected([...messageParts(newMessage()), ...messageParts(newMessage())], 400, 'invalid_multipart', ['payload']);
  });

  test('invalid JSON in payload is 400 invalid_json naming payload', async () => {
    await sendRejected([{ name: 'payload', data: '{"eventId": "e1",' }, ...messageParts(undefined, [png(1, 1)])], 400, 'invalid_json', ['payload']);
  });

  test('invalid UTF-8 in payload is 400 invalid_json naming payload', async () => {
    const json = Buffer.from(JSON.stringify(newMessage({ message: { text: 'XX' } })));
    const at = json.indexOf('XX');
    json[at] = 0xff;
    json[at + 1] = 0xfe;
    await sendRejected([{ name: 'payload', data: json }], 400, 'invalid_json', ['payload', 'UTF-8']);
  });

  test('non-ASCII text in payload is decoded as UTF-8 (with or without a declared charset)', async () => {
    const integ = await createTestIntegration();
    const text = 'Grüße 😀 – ça va?';
    for (const contentType of [undefined, 'text/plain; charset=utf-8', 'application/json; charset=UTF-8']) {
      const msg = newMessage({ message: { text } });
      const res = await postMultipart(MESSAGES_PATH, [{ name: 'payload', data: JSON.stringify(msg), ...(contentType ? { contentType } : {}) }], { key: integ.key });
      const body = expectAccepted(res, 201);
      expect((await readMessageDoc(integ.workspaceId, body.conversationId, body.messageId))?.text).toBe(text);
    }
  });

  test('schema errors in payload name the field', async () => {
    await sendRejected(messageParts({ ...newMessage(), sender: { externalId: '' } }, [png(1, 1)]), 400, 'invalid_request', ['sender.externalId']);
  });

  test('empty message (no text, no images) in multipart is 400 empty_message', async () => {
    await sendRejected(messageParts(imageOnly()), 400, 'empty_message');
  });

  test('multipart without a boundary is 400', async () => {
    const integ = await createTestIntegration();
    const check = await guardNoWrites(integ);
    const res = await postMultipart(MESSAGES_PATH, messageParts(newMessage()), { key: integ.key, contentType: 'multipart/form-data' });
    expectError(res, 400, 'invalid_multipart');
    await check();
  });

  test('a body that does not match its boundary is 400', async () => {
    const integ = await createTestIntegration();
    const check = await guardNoWrites(integ);
    const res = await postMultipart(MESSAGES_PATH, messageParts(newMessage()), { key: integ.key, contentType: 'multipart/form-data; boundary=something-else' });
    expectError(res, 400);
    await check();
  });
});
