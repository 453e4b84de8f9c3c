/**
 * parseMultipart on hand-built bodies: part limits (a full message of payload + 3 images is
 * valid), and the payload's exact bytes, so invalid UTF-8 can be rejected strictly downstream.
 */
import { joinChunks, parseMultipart } from '../../../functions/src/messages/multipart';
import { ApiError } from '../../../functions/src/rules/errors';
import { multipartBody, type MultipartPart } from '../../integration/helpers/multipart';
import { png } from '../fixtures/image-bytes';

const parse = (parts: MultipartPart[]) => {
  const { body, contentType } = multipartBody(parts);
  return parseMultipart(contentType, body);
};
const image = (n: number): MultipartPart => ({ name: 'images', data: png(n, n), filename: `${n}.png`, contentType: 'image/png' });

async function rejection(promise: Promise<unknown>): Promise<ApiError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected a rejection');
}

describe('parseMultipart: parts', () => {
  test('payload + 3 images is a valid body', async () => {
    const parsed = await parse([{ name: 'payload', data: '{}' }, image(1), image(2), image(3)]);
    expect(parsed.images.map((b, i) => b.equals(png(i + 1, i + 1)))).toEqual([true, true, true]);
    expect(parsed.payload.toString()).toBe('{}');
  });

  test('a 4th image is too_many_images', async () => {
    const err = await rejection(parse([{ name: 'payload', data: '{}' }, image(1), image(2), image(3), image(4)]));
    expect([err.status, err.code]).toEqual([400, 'too_many_images']);
  });

  test('images before the payload are fine', async () => {
    const parsed = await parse([image(1), image(2), image(3), { name: 'payload', data: '{}' }]);
    expect(parsed.images).toHaveLength(3);
  });

  test('a body that ends inside a file part is invalid_multipart (and does not crash the process)', async () => {
    const { body, contentType } = multipartBody([{ name: 'payload', data: '{}' }, image(1)]);
    const cut = body.subarray(0, body.length - 40); // the closing boundary and the end of the image are missing
    const err = await rejection(parseMultipart(contentType, cut));
    expect([err.status, err.code]).toEqual([400, 'invalid_multipart']);
    await new Promise((resolve) => setImmediate(resolve)); // an unhandled 'error' event would surface here
  });

  test('a missing payload is invalid_multipart', async () => {
    const err = await rejection(parse([image(1)]));
    expect([err.status, err.code]).toEqual([400, 'invalid_multipart']);
    expect(err.message).toContain('payload');
  });
});

describe('parseMultipart: payload bytes', () => {
  test('UTF-8 text without a declared charset arrives byte for byte', async () => {
    const json = Buffer.from(JSON.stringify({ text: 'Grüße 😀 – ça va?' }), 'utf8');
    const parsed = await parse([{ name: 'payload', data: json }]);
    expect(parsed.payload.equals(json)).toBe(true);
  });

  test('invalid UTF-8 without a declared charset is kept as is (not replaced by U+FFFD)', async () => {
    const json = Buffer.concat([Buffer.from('{"text":"'), Buffer.from([0xff, 0xfe, 0xc0, 0xaf]), Buffer.from('"}')]);
    const parsed = await parse([{ name: 'payload', data: json }]);
    expect(parsed.payload.equals(json)).toBe(true);
  });

  test.each(['text/plain; charset=utf-8', 'application/json; charset=UTF-8'])('a declared %s is honoured', async (contentType) => {
    const text = JSON.stringify({ text: 'Grüße – é' });
    const parsed = await parse([{ name: 'payload', data: Buffer.from(text, 'utf8'), contentType }]);
    expect(parsed.payload.toString('utf8')).toBe(text);
  });

  test('invalid UTF-8 under a declared charset=utf-8 is invalid_json (busboy would have replaced it with U+FFFD)', async () => {
    const json = Buffer.concat([Buffer.from('{"text":"ok '), Buffer.from([0xe2, 0x82]), Buffer.from('"}')]);
    const err = await rejection(parse([{ name: 'payload', data: json, contentType: 'text/plain; charset=utf-8' }]));
    expect([err.status, err.code]).toEqual([400, 'invalid_json']);
    expect(err.message).toContain('payload');
  });

  test('a U+FFFD really sent under a declared charset=utf-8 is kept', async () => {
    const json = Buffer.from(JSON.stringify({ text: 'garbled \uFFFD as received' }), 'utf8');
    const parsed = await parse([{ name: 'payload', data: json, contentType: 'text/plain; charset=utf-8' }]);
    expect(parsed.payload.equals(json)).toBe(true);
  });

  test('a declared latin1 charset is converted to UTF-8', async () => {
    const parsed = await parse([{ name: 'payload', data: Buffer.from('{"text":"caf\u00e9"}', 'latin1'), contentType: 'text/plain; charset=iso-8859-1' }]);
    expect(parsed.payload.toString('utf8')).toBe('{"text":"café"}');
  });

  test('65536 payload bytes (multi-byte text) are accepted, 65537 are 413', async () => {
    const of = (size: number) => {
      const base = Buffer.from(`{"text":"${'é'.repeat(20_000)}"}`, 'utf8');
      return Buffer.concat([base, Buffer.alloc(size - base.length, 0x20)]);
    };
    expect((await parse([{ name: 'payload', data: of(65_536) }])).payload.length).toBe(65_536);
    const err = await rejection(parse([{ name: 'payload', data: of(65_537) }]));
    expect([err.status, err.code]).toEqual([413, 'payload_too_large']);
  });
});

describe('images are views of the buffered body, not copies', () => {
  test('a large image of a single-buffer body shares its memory and has its exact bytes', async () => {
    const big = Buffer.alloc(3 * 1024 * 1024, 7);
    const data = Buffer.concat([png(100, 100), big]);
    const { body, contentType } = multipartBody([{ name: 'payload', data: '{}' }, { name: 'images', data, filename: 'a.png', contentType: 'image/png' }]);
    const parsed = await parseMultipart(contentType, body);
    const [img] = parsed.images;
    expect(img?.equals(data)).toBe(true);
    expect(img?.buffer).toBe(body.buffer);
  });

  test('joinChunks: consecutive views become one view; other chunks are concatenated', () => {
    // Small buffers share Node's pool, so sharing is shown by writing through the source.
    const whole = Buffer.from('abcdefgh');
    const view = joinChunks([whole.subarray(1, 3), whole.subarray(3, 5), whole.subarray(5)], 7);
    const gap = joinChunks([whole.subarray(0, 2), whole.subarray(3, 5)], 4);
    expect([view.toString(), gap.toString()]).toEqual(['bcdefgh', 'abde']);
    whole.write('X', 1);
    expect([view.toString(), gap.toString()]).toEqual(['Xcdefgh', 'abde']);
    const separate = joinChunks([Buffer.from('ab'), Buffer.from('cd')], 4);
    expect(separate.toString()).toBe('abcd');
    expect(joinChunks([], 0).length).toBe(0);
  });
});
