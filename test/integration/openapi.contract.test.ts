/**
 * The contract check in `send()` (helpers/stack.ts -> helpers/openapi.ts) is active, and the
 * responses the document describes as exceptions really look like that: the runtime's own
 * text/html 400 and 415 (its body parser runs before the service), and the 405 every path answers
 * for other methods (with `Allow: POST`; HEAD without a body). Every request here goes through
 * `send()`, so each response is also validated against openapi/openapi.yaml.
 */
import { ContractViolation } from './helpers/openapi';
import { closeStack, createTestIntegration, postJson, request, type TestIntegration } from './helpers/stack';

afterAll(closeStack);

const PATHS = ['/v1/messages', '/v1/deliveries/claim', '/v1/deliveries/start', '/v1/deliveries/complete', '/v1/deliveries/fail'];

let integration: TestIntegration;
beforeAll(async () => {
  integration = await createTestIntegration();
});

test('send() fails a test on a response the document does not describe', async () => {
  await expect(request('/v1/not-an-endpoint', { method: 'POST', key: integration.key })).rejects.toThrow(ContractViolation);
  const res = await request('/v1/not-an-endpoint', { method: 'POST', key: integration.key, skipContractCheck: true });
  expect(res.status).toBe(404);
});

test.each(PATHS)('%s: every other method is a documented 405 with Allow: POST', async (path) => {
  for (const method of ['GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD']) {
    const res = await request(path, { method, key: integration.key });
    expect([method, res.status, res.headers.get('allow')]).toEqual([method, 405, 'POST']);
  }
});

describe.each(PATHS)('%s: the platform answers some malformed bodies itself (documented text/html variants)', (path) => {
  const cases: Array<[string, string | Buffer, Record<string, string>, number]> = [
    ['malformed JSON', '{"deliveryId": ', {}, 400],
    ['a bare JSON scalar', '123', {}, 400],
    ['an unknown charset', '{}', { 'content-type': 'application/json; charset=latin1' }, 415],
    ['an unknown Content-Encoding', '{}', { 'content-encoding': 'bogus' }, 415],
  ];
  test.each(cases)('%s', async (_name, body, headers, status) => {
    const res = await postJson(path, body, { key: integration.key, raw: true, headers });
    expect(res.status).toBe(status);
    expect(res.headers.get('content-type') ?? '').toMatch(/^text\/html/);
  });
});
