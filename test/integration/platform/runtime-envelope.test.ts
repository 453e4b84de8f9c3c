/**
 * Bodies the functions runtime parses before our code runs (docs/contract.md#errors,
 * docs/contract.md#time-budget). Google's functions framework, which production runs and the
 * suites call (scripts/test-stack.mjs), runs body-parser first, as the Functions emulator of
 * `npm start` does; whatever it refuses must still get our envelope with the right status and
 * `X-Request-Id`, never an HTML page, a stack trace or a local path. Every endpoint, because each
 * is its own function (its own runtime process in production): the message and the four
 * transitions with every case, the other operations with three.
 */
import { gzipSync } from 'node:zlib';
import { expectAccepted, expectError, guardNoWrites } from '../helpers/assertions';
import { MESSAGES_PATH, newMessage } from '../helpers/messages';
import { closeStack, createTestIntegration, postJson, type ApiResponse, type TestIntegration } from '../helpers/stack';

jest.setTimeout(120_000);
afterAll(closeStack);

const ENDPOINTS = [MESSAGES_PATH, '/v1/deliveries/claim', '/v1/deliveries/start', '/v1/deliveries/complete', '/v1/deliveries/fail'];

let integ: TestIntegration;
beforeAll(async () => {
  integ = await createTestIntegration();
});

/** No trace of the implementation in a response: no HTML, no stack frame, no file path. */
function expectNothingInternal(res: ApiResponse): void {
  expect(res.text).not.toMatch(/<html|<pre|<!DOCTYPE/i);
  expect(res.text).not.toMatch(/\bat [\w.<>]+ \(|node:internal|node_modules|\/work\/|\/home\/|\/workspace\/|\.js:\d+/);
}

async function expectEnvelope(res: ApiResponse, status: number, code: string): Promise<void> {
  expectError(res, status, code);
  expectNothingInternal(res);
}

describe.each(ENDPOINTS)('%s', (path) => {
  const cases: Array<[string, string | Buffer, Record<string, string>, number, string]> = [
    ['malformed JSON', '{"eventId":', {}, 400, 'invalid_json'],
    ['a bare JSON number', '123', {}, 400, 'invalid_json'],
    ['a bare JSON string', '"hello"', {}, 400, 'invalid_json'],
    ['JSON null', 'null', {}, 400, 'invalid_json'],
    ['an unsupported charset (latin1)', '{}', { 'content-type': 'application/json; charset=latin1' }, 415, 'unsupported_media_type'],
    ['an unknown charset', '{}', { 'content-type': 'application/json; charset=x-unknown-1' }, 415, 'unsupported_media_type'],
    ['an unsupported Content-Encoding', '{}', { 'content-encoding': 'compress' }, 415, 'unsupported_media_type'],
    ['a body that is not what its Content-Encoding says (not gzip)', '{"a":1}', { 'content-encoding': 'gzip' }, 400, 'invalid_request'],
  ];

  test.each(cases)('%s: the envelope, with X-Request-Id', async (_name, body, headers, status, code) => {
    const check = await guardNoWrites(integ);
    const res = await postJson(path, body, { raw: true, key: integ.key, headers });
    await expectEnvelope(res, status, code);
    await check();
  });

  test('another method with a body the parser refuses: 405, as for any other method', async () => {
    const res = await postJson(path, '{"eventId":', { raw: true, key: integ.key, method: 'PUT' });
    await expectEnvelope(res, 405, 'method_not_allowed');
    expect(res.headers.get('allow')).toBe('POST');
  });

  test('malformed JSON without a key: still the envelope (never HTML)', async () => {
    const res = await postJson(path, '{"eventId":', { raw: true });
    expect([400, 401]).toContain(res.status);
    expectError(res, res.status);
    expectNothingInternal(res);
  });
});

/**
 * The other operations (each its own function as well): what the parser refuses, and another
 * method, answered with the envelope. Fewer cases than above, which already show every refusal
 * on a message and on the delivery transitions; these show each function's runtime answers at all.
 * (This suite is the first the catalogue lists for these operations: functions/src/operations.ts.)
 */
const OTHER_ENDPOINTS = [
  '/v1/messages/events',
  '/v1/deliveries/extend',
  '/v1/deliveries/pending',
  '/v1/deliveries/receipt',
  '/v1/deliveries/attachment',
  '/v1/erasures/pending',
  '/v1/erasures/ack',
];

test.each(OTHER_ENDPOINTS)('%s: malformed JSON 400, a latin1 charset 415, another method 405, each the envelope with X-Request-Id; nothing written', async (path) => {
  const check = await guardNoWrites(integ);
  await expectEnvelope(await postJson(path, '{"deliveryId":', { raw: true, key: integ.key }), 400, 'invalid_json');
  await expectEnvelope(await postJson(path, '{}', { raw: true, key: integ.key, headers: { 'content-type': 'application/json; charset=latin1' } }), 415, 'unsupported_media_type');
  const other = await postJson(path, '{}', { raw: true, key: integ.key, method: 'PUT' });
  await expectEnvelope(other, 405, 'method_not_allowed');
  expect(other.headers.get('allow')).toBe('POST');
  await check();
});

describe('body sizes beyond the runtime parser', () => {
  test('a 33 MB JSON body (over the platform limit of 32 MB): 413 envelope', async () => {
    const check = await guardNoWrites(integ);
    const body = `{"pad":"${'x'.repeat(33 * 1024 * 1024)}"}`;
    const res = await postJson(MESSAGES_PATH, body, { raw: true, key: integ.key });
    await expectEnvelope(res, 413, 'payload_too_large');
    await check();
  });

  test('a 33 MB body on a delivery operation: 413 envelope', async () => {
    const body = `{"deliveryId":"${'x'.repeat(33 * 1024 * 1024)}"}`;
    const res = await postJson('/v1/deliveries/claim', body, { raw: true, key: integ.key });
    await expectEnvelope(res, 413, 'payload_too_large');
  });
});

describe('what the parser accepts still reaches the service', () => {
  test('a gzip-compressed JSON message is accepted, and its duplicate recognised', async () => {
    // Its own integration: the others must stay empty (guardNoWrites).
    const accepting = await createTestIntegration();
    const message = newMessage();
    const body = gzipSync(Buffer.from(JSON.stringify(message)));
    const first = await postJson(MESSAGES_PATH, body, { raw: true, key: accepting.key, headers: { 'content-encoding': 'gzip' } });
    const created = expectAccepted(first, 201);
    const again = await postJson(MESSAGES_PATH, message, { key: accepting.key });
    expect(expectAccepted(again, 200)).toEqual({ ...created, duplicate: true });
  });

  test('UTF-16 JSON (the parser decodes it) is still refused by our charset rule: 415', async () => {
    const bytes = Buffer.from(`\ufeff${JSON.stringify(newMessage())}`, 'utf16le');
    const check = await guardNoWrites(integ);
    const res = await postJson(MESSAGES_PATH, bytes, { raw: true, key: integ.key, contentType: 'application/json; charset=utf-16' });
    await expectEnvelope(res, 415, 'unsupported_media_type');
    await check();
  });
});
