import { InvalidNotificationError, parseNotificationJson, parsePulledNotification, parsePushNotification } from '../../src/index.js';

const N = { deliveryId: 'd_abc', workspaceId: 'ws1', integrationId: 'int1', conversationId: 'c_1', messageId: 'm_1' };
const b64 = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64');
const push = (data: unknown) => ({
  message: { data, attributes: { kind: 'delivery' }, messageId: '123', publishTime: '2025-01-01T00:00:00Z' },
  subscription: 'projects/p/subscriptions/s',
});

describe('parsePushNotification', () => {
  test('parsed push body', () => {
    expect(parsePushNotification(push(b64(N)))).toEqual(N);
  });

  test('raw body as string or Buffer; extra fields dropped', () => {
    const body = JSON.stringify(push(b64({ ...N, extra: 1 })));
    expect(parsePushNotification(body)).toEqual(N);
    expect(parsePushNotification(Buffer.from(body))).toEqual(N);
  });

  test('url-safe base64 without padding is accepted', () => {
    const data = Buffer.from(JSON.stringify({ ...N, deliveryId: 'd_?>' })).toString('base64url');
    expect(parsePushNotification(push(data)).deliveryId).toBe('d_?>');
  });

  test.each([
    ['not JSON', 'nope{'],
    ['no message', { subscription: 's' }],
    ['message not an object', { message: 'x' }],
    ['missing data', push(undefined)],
    ['empty data', push('')],
    ['data not base64', push('***')],
    ['data not JSON', push(b64('hello'))],
    ['data JSON array', push(b64([N]))],
    ['data not UTF-8', push(Buffer.from([0xff, 0xfe, 0xfd]).toString('base64'))],
    ['missing field', push(b64({ ...N, messageId: undefined }))],
    ['empty field', push(b64({ ...N, workspaceId: '' }))],
    ['number field', push(b64({ ...N, conversationId: 7 }))],
    ['deliveryId too long', push(b64({ ...N, deliveryId: 'd'.repeat(129) }))],
    ['null', null],
  ])('invalid: %s', (_name, body) => {
    expect(() => parsePushNotification(body)).toThrow(InvalidNotificationError);
  });

  test('the error is typed and names the problem', () => {
    try {
      parsePushNotification(push(b64({ ...N, integrationId: 1 })));
      throw new Error('expected a throw');
    } catch (e) {
      expect(e).toBeInstanceOf(InvalidNotificationError);
      expect((e as InvalidNotificationError).code).toBe('invalid_notification');
      expect((e as Error).message).toContain('integrationId');
    }
  });
});

describe('parsePulledNotification', () => {
  test('client-library message with a Buffer', () => {
    expect(parsePulledNotification({ data: Buffer.from(JSON.stringify(N)) })).toEqual(N);
  });

  test('a plain Uint8Array, as message or as data', () => {
    const bytes = new TextEncoder().encode(JSON.stringify(N));
    expect(parsePulledNotification(bytes)).toEqual(N);
    expect(parsePulledNotification({ data: bytes })).toEqual(N);
  });

  test('REST pull: base64 string', () => {
    expect(parsePulledNotification({ data: b64(N) })).toEqual(N);
    expect(parsePulledNotification(b64(N))).toEqual(N);
  });

  test('a JSON string', () => {
    expect(parsePulledNotification({ data: JSON.stringify(N) })).toEqual(N);
  });

  test.each([
    ['empty buffer', { data: Buffer.alloc(0) }],
    ['empty string', { data: '' }],
    ['no data', {}],
    ['number', { data: 5 }],
    ['bad base64', { data: 'a' }],
    ['bad JSON', { data: Buffer.from('{') }],
    ['bad field', { data: Buffer.from(JSON.stringify({ ...N, deliveryId: null })) }],
  ])('invalid: %s', (_name, message) => {
    expect(() => parsePulledNotification(message as { data?: unknown })).toThrow(InvalidNotificationError);
  });
});

test('parseNotificationJson validates an already decoded object', () => {
  expect(parseNotificationJson(N)).toEqual(N);
  expect(() => parseNotificationJson('x')).toThrow(InvalidNotificationError);
});
