/**
 * The contract check in `send()` (helpers/stack.ts -> helpers/openapi.ts) is active, and the 405
 * every path answers for other methods really looks as documented (with `Allow: POST`; HEAD
 * without a body). Every request here goes through `send()`, so each response is also validated
 * against openapi/openapi.yaml. (Bodies the runtime's parser refuses get the envelope like any
 * other error: platform/runtime-envelope.test.ts.)
 */
import { ContractViolation } from '../helpers/openapi';
import { closeStack, createTestIntegration, request, type TestIntegration } from '../helpers/stack';

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
