/**
 * POST /v1/messages: every error of docs/contract.md#errors that applies to incoming messages, the JSON
 * field limits (docs/contract.md#limits) at and one past each boundary, and strictness (docs/contract.md#incoming-messages, docs/contract.md#errors).
 * After every rejected request nothing is written: no document besides the integration itself,
 * no image file.
 */
import { generateKey } from '../../../functions/src/integrations/keys';
import { expectAccepted, expectError, guardNoWrites } from '../helpers/assertions';
import { MESSAGES_PATH, newMessage, readConversationDoc, readMessageDoc, repeatChar, type WireMessage } from '../helpers/messages';
import { apiBaseUrl, closeStack, createTestIntegration, postJson, request, type TestIntegration } from '../helpers/stack';

jest.setTimeout(60_000);
afterAll(closeStack);

/** An astral character: 1 code point, 2 UTF-16 units, 4 UTF-8 bytes. Limits count code points. */
const SMILE = '😀';

let shared: TestIntegration;
beforeAll(async () => {
  shared = await createTestIntegration();
});

/** Sends `body` with a fresh integration and asserts a 400 naming `field`, with nothing written. */
async function expectRejected(body: unknown, status: number, code: string, mentions: string[], options: { raw?: boolean } = {}): Promise<string> {
  const integ = await createTestIntegration();
  const check = await guardNoWrites(integ);
  const res = await postJson(MESSAGES_PATH, body, { key: integ.key, ...options });
  const message = expectError(res, status, code);
  for (const m of mentions) expect(message).toContain(m);
  await check();
  return message;
}

describe('401 invalid_key: missing, malformed and unknown keys all get the same body', () => {
  const cases: Array<[string, Record<string, string>]> = [
    ['no Authorization header', {}],
    ['empty Authorization header', { authorization: '' }],
    ['Bearer without a key', { authorization: 'Bearer ' }],
    ['a malformed key', { authorization: 'Bearer not-a-key' }],
    ['another scheme', { authorization: `Basic ${Buffer.from('user:pass').toString('base64')}` }],
    ['a well-formed unknown key', { authorization: `Bearer ${generateKey('sdk_test_')}` }],
    ['a well-formed unknown live key', { authorization: `Bearer ${generateKey('sdk_live_')}` }],
  ];

  test.each(cases)('%s', async (_name, headers) => {
    const check = await guardNoWrites(shared);
    const res = await postJson(MESSAGES_PATH, newMessage(), { headers });
    expectError(res, 401, 'invalid_key');
    expect(res.body).toEqual({ error: { code: 'invalid_key', message: 'Missing, malformed, unknown or revoked integration key.' } });
    await check();
  });

  test('a valid key with one character changed is unknown', async () => {
    const integ = await createTestIntegration();
    const last = integ.key.at(-1) === 'A' ? 'B' : 'A';
    const res = await postJson(MESSAGES_PATH, newMessage(), { key: `${integ.key.slice(0, -1)}${last}` });
    expectError(res, 401, 'invalid_key');
  });

  test('the key is checked before the content type and the body', async () => {
    const res = await postJson(MESSAGES_PATH, 'not json', { raw: true, contentType: 'text/plain' });
    expectError(res, 401, 'invalid_key');
  });
});

describe('403: inactive integration or disabled source', () => {
  test('integration_inactive', async () => {
    const integ = await createTestIntegration({ active: false });
    const check = await guardNoWrites(integ);
    const message = expectError(await postJson(MESSAGES_PATH, newMessage(), { key: integ.key }), 403, 'integration_inactive');
    expect(message).toMatch(/inactive/);
    await check();
  });

  test('source_disabled', async () => {
    const integ = await createTestIntegration({ sourceEnabled: false });
    const check = await guardNoWrites(integ);
    const message = expectError(await postJson(MESSAGES_PATH, newMessage(), { key: integ.key }), 403, 'source_disabled');
    expect(message).toMatch(/disabled/);
    await check();
  });
});

describe('405 for methods other than POST', () => {
  test.each(['GET', 'PUT', 'PATCH', 'DELETE'])('%s', async (method) => {
    const check = await guardNoWrites(shared);
    const res = await request(MESSAGES_PATH, { method, key: shared.key, ...(method === 'GET' || method === 'DELETE' ? {} : { body: JSON.stringify(newMessage()), contentType: 'application/json' }) });
    expectError(res, 405, 'method_not_allowed');
    expect(res.headers.get('allow')).toBe('POST');
    await check();
  });
});

describe('415 unsupported content types', () => {
  const cases: Array<[string, string | null]> = [
    ['no Content-Type', null],
    ['text/plain', 'text/plain'],
    ['application/x-www-form-urlencoded', 'application/x-www-form-urlencoded'],
    ['application/xml', 'application/xml'],
    ['application/octet-stream', 'application/octet-stream'],
  ];
  test.each(cases)('%s', async (_name, contentType) => {
    const check = await guardNoWrites(shared);
    const res = await postJson(MESSAGES_PATH, JSON.stringify(newMessage()), { key: shared.key, raw: true, contentType });
    const message = expectError(res, 415, 'unsupported_media_type');
    expect(message).toMatch(/application\/json|utf-8/);
    await check();
  });

  test('known platform limitation: application/json with a non-UTF-8 charset is refused by the framework body parser with a 4xx', async () => {
    // The Cloud Functions framework decodes application/json by its charset before our code runs:
    // a non-utf-* charset is its 415, a utf-16 charset makes it fail to parse (400). Either way a
    // 4xx that writes nothing, but not in our envelope.
    for (const [charset, status] of [['iso-8859-1', 415], ['utf-16', 400]] as const) {
      const integ = await createTestIntegration();
      const check = await guardNoWrites(integ);
      // Plain fetch: this response is the framework's, not the API's.
      const res = await fetch(`${apiBaseUrl()}${MESSAGES_PATH}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${integ.key}`, 'content-type': `application/json; charset=${charset}` },
        body: JSON.stringify(newMessage()),
      });
      await res.arrayBuffer();
      expect({ charset, status: res.status }).toEqual({ charset, status });
      await check();
    }
  });

  test('a valueless Content-Type parameter (application/json; charset) is a 415 naming it, not an "empty body"', async () => {
    const integ = await createTestIntegration();
    const check = await guardNoWrites(integ);
    const res = await postJson(MESSAGES_PATH, newMessage(), { key: integ.key, contentType: 'application/json; charset' });
    expect(expectError(res, 415, 'unsupported_media_type')).toMatch(/parameter 'charset' is malformed/);
    await check();
  });

  test('application/json with an explicit utf-8 charset and odd casing is accepted', async () => {
    const integ = await createTestIntegration();
    const res = await postJson(MESSAGES_PATH, newMessage(), { key: integ.key, contentType: 'Application/JSON; Charset="UTF-8"' });
    expectAccepted(res, 201);
  });
});

describe('413: JSON bodies over 65536 bytes, measured on the raw bytes', () => {
  /** A valid body of exactly `size` bytes: multi-byte text plus trailing JSON whitespace. */
  function bodyOfSize(size: number): Buffer {
    const json = JSON.stringify(newMessage({ message: { text: repeatChar(SMILE, 5000) + repeatChar('é', 5000) } }));
    const bytes = Buffer.byteLength(json);
    if (bytes > size) throw new Error('base body too large');
    return Buffer.concat([Buffer.from(json), Buffer.alloc(size - bytes, 0x20)]);
  }

  test('exactly 65536 bytes is accepted', async () => {
    const integ = await createTestIntegration();
    const body = bodyOfSize(65_536);
    expect(body.length).toBe(65_536);
    expectAccepted(await postJson(MESSAGES_PATH, body, { key: integ.key, raw: true }), 201);
  });

  test('65537 bytes is 413 payload_too_large', async () => {
    const integ = await createTestIntegration();
    const check = await guardNoWrites(integ);
    const body = bodyOfSize(65_537);
    // The text has 10000 code points but 30000 bytes: only the byte count exceeds a limit.
    const message = expectError(await postJson(MESSAGES_PATH, body, { key: integ.key, raw: true }), 413, 'payload_too_large');
    expect(message).toContain('65536');
    await check();
  });

  test('a much larger JSON body (1 MB) is 413 too', async () => {
    const integ = await createTestIntegration();
    const check = await guardNoWrites(integ);
    const body = Buffer.concat([Buffer.from(JSON.stringify(newMessage())), Buffer.alloc(1024 * 1024, 0x20)]);
    expectError(await postJson(MESSAGES_PATH, body, { key: integ.key, raw: true }), 413, 'payload_too_large');
    await check();
  });
});

describe('400 invalid_request names the offending field', () => {
  const base = () => newMessage();
  const cases: Array<[string, (m: WireMessage) => unknown, string[]]> = [
    ['missing eventId', ({ eventId: _e, ...m }) => m, ['eventId']],
    ['eventId not a string', (m) => ({ ...m, eventId: 123 }), ['eventId']],
    ['empty eventId', (m) => ({ ...m, eventId: '' }), ['eventId']],
    ['eventId null', (m) => ({ ...m, eventId: null }), ['eventId']],
    ['missing externalConversationId', ({ externalConversationId: _c, ...m }) => m, ['externalConversationId']],
    ['empty externalConversationId', (m) => ({ ...m, externalConversationId: '' }), ['externalConversationId']],
    ['missing sender', ({ sender: _s, ...m }) => m, ['sender']],
    ['sender not an object', (m) => ({ ...m, sender: 'alice' }), ['sender']],
    ['missing sender.externalId', (m) => ({ ...m, sender: { displayName: 'x' } }), ['sender.externalId']],
    ['empty sender.externalId', (m) => ({ ...m, sender: { externalId: '' } }), ['sender.externalId']],
    ['sender.displayName not a string', (m) => ({ ...m, sender: { ...m.sender, displayName: 42 } }), ['sender.displayName']],
    ['unknown sender.kind', (m) => ({ ...m, sender: { ...m.sender, kind: 'bot' } }), ['sender.kind']],
    ['message not an object', (m) => ({ ...m, message: 'hello' }), ['message']],
    ['message.text not a string', (m) => ({ ...m, message: { text: 7 } }), ['message.text']],
    ['message.text a lone surrogate', (m) => ({ ...m, message: { text: 'a\ud800b' } }), ['message.text', 'well-formed']],
    ['unknown top-level property', (m) => ({ ...m, priority: 'high' }), ['priority']],
    ['images as a JSON property', (m) => ({ ...m, images: [] }), ["'images'"]],
    ['unknown sender property', (m) => ({ ...m, sender: { ...m.sender, email: 'a@b.c' } }), ['sender', "'email'"]],
    ['unknown message property', (m) => ({ ...m, message: { text: 'hi', html: '<b>hi</b>' } }), ['message', "'html'"]],
    ['a JSON array body', () => [], ['body']],
  ];
  test.each(cases)('%s', async (_name, mutate, mentions) => {
    await expectRejected(mutate(base()), 400, 'invalid_request', mentions);
  });

  test('the field path of a nested problem is written with dots', async () => {
    const message = await expectRejected({ ...base(), sender: { externalId: 5 } }, 400, 'invalid_request', []);
    expect(message).toMatch(/^sender\.externalId: /);
  });
});

describe('400 empty_message: a message needs text or an image', () => {
  test.each<[string, (m: WireMessage) => unknown]>([
    ['empty text', (m) => ({ ...m, message: { text: '' } })],
    ['message without text', (m) => ({ ...m, message: {} })],
    ['no message at all', ({ message: _m, ...m }) => m],
  ])('%s', async (_name, mutate) => {
    await expectRejected(mutate(newMessage()), 400, 'empty_message', ['message.text']);
  });
});

describe('field limits (docs/contract.md#limits) at and one past the boundary (counted in code points)', () => {
  // Astral characters prove the limits count code points: each is 2 UTF-16 units.
  type Stored = { message: Record<string, unknown> | undefined; conversation: Record<string, unknown> | undefined };
  const limits: Array<[string, number, (m: WireMessage, v: string) => WireMessage, string, (s: Stored) => unknown]> = [
    ['eventId', 128, (m, v) => ({ ...m, eventId: v }), 'eventId', (s) => s.message?.eventId],
    ['externalConversationId', 256, (m, v) => ({ ...m, externalConversationId: v }), 'externalConversationId', (s) => s.conversation?.externalConversationId],
    ['sender.externalId', 256, (m, v) => ({ ...m, sender: { ...m.sender, externalId: v } }), 'sender.externalId', (s) => (s.message?.sender as Record<string, unknown>).externalId],
    ['sender.displayName', 200, (m, v) => ({ ...m, sender: { ...m.sender, displayName: v } }), 'sender.displayName', (s) => (s.message?.sender as Record<string, unknown>).displayName],
    ['message.text', 10_000, (m, v) => ({ ...m, message: { text: v } }), 'message.text', (s) => s.message?.text],
  ];

  test.each(limits)('%s: %i characters is accepted and stored intact', async (_field, max, set, _path, read) => {
    const integ = await createTestIntegration();
    const value = repeatChar(SMILE, max);
    expect(value.length).toBe(2 * max); // UTF-16 units: twice the limit
    const res = await postJson(MESSAGES_PATH, set(newMessage(), value), { key: integ.key });
    const body = expectAccepted(res, 201);
    const stored = {
      message: await readMessageDoc(integ.workspaceId, body.conversationId, body.messageId),
      conversation: await readConversationDoc(integ.workspaceId, body.conversationId),
    };
    expect(read(stored)).toBe(value);
  });

  test.each(limits)('%s: %i + 1 characters is 400 naming the field', async (_field, max, set, path) => {
    const message = await expectRejected(set(newMessage(), repeatChar(SMILE, max + 1)), 400, 'invalid_request', [path]);
    expect(message).toContain(`at most ${max}`);
  });
});

describe('bodies the platform or the pipeline reject before validation', () => {
  test('invalid UTF-8 in a JSON body is 400 invalid_json', async () => {
    const json = Buffer.from(JSON.stringify(newMessage({ message: { text: 'XX' } })));
    const at = json.indexOf('XX');
    json[at] = 0xff; // never valid in UTF-8
    json[at + 1] = 0xfe;
    await expectRejected(json, 400, 'invalid_json', ['UTF-8'], { raw: true });
  });

  test('an overlong UTF-8 encoding is invalid UTF-8 too', async () => {
    const json = Buffer.from(JSON.stringify(newMessage({ message: { text: 'XX' } })));
    const at = json.indexOf('XX');
    json[at] = 0xc0; // overlong encoding of '/'
    json[at + 1] = 0xaf;
    await expectRejected(json, 400, 'invalid_json', ['UTF-8'], { raw: true });
  });

  test('an empty JSON body is 400 invalid_json', async () => {
    await expectRejected('', 400, 'invalid_json', ['body'], { raw: true });
  });

  test('known platform limitation: malformed JSON with Content-Type application/json is a 400 from the framework body parser', async () => {
    // The Cloud Functions framework parses application/json before our code runs and answers
    // malformed JSON itself (HTML, not our envelope). We only assert it is a 400 and writes nothing.
    const integ = await createTestIntegration();
    const check = await guardNoWrites(integ);
    const res = await postJson(MESSAGES_PATH, '{"eventId": "e1", ', { key: integ.key, raw: true });
    expect(res.status).toBe(400);
    await check();
  });
});
