/**
 * POST /v1/messages: the per-integration incoming rate (docs/contract.md#rate-limit): 429 with
 * Retry-After once the budget is spent, per integration, and the RateLimit-* headers on every
 * answer after the key.
 *
 * The budget is kept per function instance. npm test serves the messages function from one process
 * (the production runtime, scripts/test-stack.mjs), so other suites' requests beside this one do
 * not split it; through the Functions emulator, which starts an instance per concurrent request,
 * this suite had to run alone.
 */
import { generateKey } from '../../../functions/src/integrations/keys';
import { expectAccepted, expectError } from '../helpers/assertions';
import { MESSAGES_PATH, newMessage } from '../helpers/messages';
import { closeStack, createTestIntegration, postJson, workspaceDocPaths, type ApiResponse } from '../helpers/stack';

jest.setTimeout(60_000);
afterAll(closeStack);

describe('429 when the integration exceeds its incoming rate', () => {
  test('with messagesPerMinute 2 the third message in a row is 429 with Retry-After', async () => {
    const integ = await createTestIntegration({ messagesPerMinute: 2 });
    expectAccepted(await postJson(MESSAGES_PATH, newMessage(), { key: integ.key }), 201);
    expectAccepted(await postJson(MESSAGES_PATH, newMessage(), { key: integ.key }), 201);
    const pathsBefore = await workspaceDocPaths(integ.workspaceId);
    const res = await postJson(MESSAGES_PATH, newMessage(), { key: integ.key });
    const message = expectError(res, 429, 'rate_limited');
    expect(message).toContain('2 per minute');
    const retryAfter = res.headers.get('retry-after');
    expect(retryAfter).toMatch(/^[1-9][0-9]*$/);
    // One token per 30 s refills: the wait is positive and at most 30 s.
    expect(Number(retryAfter)).toBeLessThanOrEqual(30);
    expect(await workspaceDocPaths(integ.workspaceId)).toEqual(pathsBefore);
  });

  test('the limit is per integration: another integration is not affected', async () => {
    const limited = await createTestIntegration({ messagesPerMinute: 1 });
    const other = await createTestIntegration();
    expectAccepted(await postJson(MESSAGES_PATH, newMessage(), { key: limited.key }), 201);
    expectError(await postJson(MESSAGES_PATH, newMessage(), { key: limited.key }), 429, 'rate_limited');
    expectAccepted(await postJson(MESSAGES_PATH, newMessage(), { key: other.key }), 201);
  });
});

describe('RateLimit-* headers on every /v1/messages answer after the key (decisions 10)', () => {
  /** The three headers as integers (asserts each is a non-negative integer). */
  function rateHeaders(res: ApiResponse): { limit: number; remaining: number; reset: number } {
    const read = (name: string): number => {
      const value = res.headers.get(name);
      expect({ name, value }).toEqual({ name, value: expect.stringMatching(/^[0-9]+$/) });
      return Number(value);
    };
    return { limit: read('ratelimit-limit'), remaining: read('ratelimit-remaining'), reset: read('ratelimit-reset') };
  }

  test('201, 200 duplicate, 400 and 429 carry Limit, Remaining and Reset; on the 429 Remaining is 0 and Reset equals Retry-After', async () => {
    const integ = await createTestIntegration({ messagesPerMinute: 3 });
    const first = newMessage();
    const created = await postJson(MESSAGES_PATH, first, { key: integ.key });
    expectAccepted(created, 201);
    expect(rateHeaders(created)).toEqual({ limit: 3, remaining: 2, reset: expect.any(Number) });
    // One token used of 3 per minute: full again within 20 s.
    expect(rateHeaders(created).reset).toBeGreaterThanOrEqual(1);
    expect(rateHeaders(created).reset).toBeLessThanOrEqual(20);

    const duplicate = await postJson(MESSAGES_PATH, first, { key: integ.key });
    expectAccepted(duplicate, 200);
    expect(rateHeaders(duplicate)).toMatchObject({ limit: 3, remaining: 1 });

    // A schema error is answered after the limiter took its token.
    const invalid = await postJson(MESSAGES_PATH, { ...newMessage(), extra: 1 }, { key: integ.key });
    expectError(invalid, 400, 'invalid_request');
    const last = rateHeaders(invalid);
    expect(last).toMatchObject({ limit: 3, remaining: 0 });
    // No token left: Reset is the wait for the next one (at most 20 s at 3 per minute).
    expect(last.reset).toBeGreaterThanOrEqual(1);
    expect(last.reset).toBeLessThanOrEqual(20);

    const limited = await postJson(MESSAGES_PATH, newMessage(), { key: integ.key });
    expectError(limited, 429, 'rate_limited');
    const headers = rateHeaders(limited);
    expect(headers).toMatchObject({ limit: 3, remaining: 0 });
    expect(String(headers.reset)).toBe(limited.headers.get('retry-after'));
    expect(headers.reset).toBeGreaterThanOrEqual(1);
  });

  test('answers refused before the limiter runs (415) carry the bucket as it is; 401 carries none (no integration is known)', async () => {
    const integ = await createTestIntegration({ messagesPerMinute: 5 });
    const unsupported = await postJson(MESSAGES_PATH, JSON.stringify(newMessage()), { key: integ.key, raw: true, contentType: 'text/plain' });
    expectError(unsupported, 415, 'unsupported_media_type');
    expect(rateHeaders(unsupported)).toEqual({ limit: 5, remaining: 5, reset: 0 });
    const unauthorized = await postJson(MESSAGES_PATH, newMessage(), { headers: { authorization: `Bearer ${generateKey('sdk_test_')}` } });
    expectError(unauthorized, 401, 'invalid_key');
    expect(unauthorized.headers.get('ratelimit-limit')).toBeNull();
    expect(unauthorized.headers.get('ratelimit-remaining')).toBeNull();
  });
});

