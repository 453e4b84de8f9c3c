/**
 * PUT /v1/channel (docs/contract.md#channel) through real HTTP: the channel is stored on the
 * integration document and answered; a body names what it replaces; the same body again changes
 * nothing; every refusal is 400 `invalid_request` naming the field with nothing written; the key,
 * the method and the messages' rate limit as for POST /v1/messages.
 */
import { createTestIntegration, integrationRef, postJson, request, type ApiResponse, type TestIntegration } from '../helpers/stack';
import { deliveryTestFile, expectApiError } from '../helpers/deliveries';

deliveryTestFile();

const put = (key: string, body: unknown): Promise<ApiResponse> => postJson('/v1/channel', body, { key, method: 'PUT' });

const orderUpdate = { name: 'order_update', language: 'en-US', params: [{ name: 'order', maxLength: 32 }], preview: 'Your order {{order}} has shipped.' };
const welcome = { name: 'welcome', language: 'pt-BR', params: [], preview: 'Olá! Como podemos ajudar?' };

/** The integration document's `channel` field as stored (undefined when none). */
const storedChannel = async (integration: TestIntegration): Promise<unknown> => (await integrationRef(integration.workspaceId, integration.integrationId).get()).get('channel') as unknown;

test('stores and answers the channel; a body with only the window keeps the templates; the same body again changes nothing', async () => {
  const integration = await createTestIntegration();
  const first = await put(integration.key, { window: { seconds: 86_400 }, templates: [orderUpdate, welcome] });
  expect(first.status).toBe(200);
  const channel = first.body as { window: unknown; templates: unknown; updatedAt: number };
  expect(channel).toEqual({ window: { seconds: 86_400 }, templates: [orderUpdate, welcome], updatedAt: expect.any(Number) as number });
  expect(first.headers.get('ratelimit-limit')).not.toBeNull();
  expect(await storedChannel(integration)).toEqual(channel);

  // The same body again: the same answer, updatedAt kept.
  const again = await put(integration.key, { window: { seconds: 86_400 }, templates: [orderUpdate, welcome] });
  expect(again.status).toBe(200);
  expect(again.body).toEqual(channel);
  expect(await storedChannel(integration)).toEqual(channel);

  // Only the window: the templates stay.
  const windowOnly = await put(integration.key, { window: null });
  expect(windowOnly.status).toBe(200);
  const after = windowOnly.body as { updatedAt: number };
  expect(after).toEqual({ window: null, templates: [orderUpdate, welcome], updatedAt: expect.any(Number) as number });
  expect(after.updatedAt).toBeGreaterThanOrEqual(channel.updatedAt);
  // Only the templates: the window stays.
  const templatesOnly = await put(integration.key, { templates: [] });
  expect(templatesOnly.body).toMatchObject({ window: null, templates: [] });
  expect(await storedChannel(integration)).toEqual(templatesOnly.body);
  // Nothing else of the integration changed.
  expect((await integrationRef(integration.workspaceId, integration.integrationId).get()).get('active')).toBe(true);
});

test.each([
  ['neither field', {}, 'body: must name window, templates or both'],
  ['an unknown property', { window: null, extra: 1 }, "unknown property 'extra'"],
  ['a window out of range', { window: { seconds: 30 } }, 'window.seconds'],
  ['a window above seven days', { window: { seconds: 604_801 } }, 'window.seconds'],
  ['a pair twice', { templates: [orderUpdate, { ...orderUpdate, language: 'en-us' }] }, 'templates[1]: duplicates templates[0]'],
  ['a param the preview does not use', { templates: [{ ...orderUpdate, preview: 'Shipped.' }] }, "templates[0].preview: does not use param 'order'"],
  ['an unknown placeholder', { templates: [{ ...orderUpdate, preview: '{{order}} arrives {{ eta }}' }] }, 'templates[0].preview: placeholder {{eta}} names no param'],
  ['too many templates', { templates: Array.from({ length: 201 }, (_, i) => ({ ...welcome, name: `t${i}` })) }, 'templates'],
  ['too many params', { templates: [{ ...orderUpdate, params: Array.from({ length: 21 }, (_, i) => ({ name: `p${i}` })), preview: Array.from({ length: 21 }, (_, i) => `{{p${i}}}`).join(' ') }] }, 'templates[0].params'],
  ['a language that is no BCP 47 tag', { templates: [{ ...orderUpdate, language: 'en_US' }] }, 'templates[0].language'],
])('%s: 400 invalid_request naming the field, nothing written', async (_, body, field) => {
  const integration = await createTestIntegration();
  const stored = (await put(integration.key, { window: { seconds: 3600 }, templates: [welcome] })).body;
  const message = expectApiError(await put(integration.key, body), 400, 'invalid_request');
  expect(message).toContain(field);
  expect(await storedChannel(integration)).toEqual(stored);
});

test('a refused first body leaves the integration without a channel', async () => {
  const integration = await createTestIntegration();
  expectApiError(await put(integration.key, { window: { seconds: 59 } }), 400, 'invalid_request');
  expect(await storedChannel(integration)).toBeUndefined();
});

test('401 without a valid key, 403 for an inactive integration, 405 for POST (Allow: PUT), 415 for a form; nothing written', async () => {
  const integration = await createTestIntegration();
  const inactive = await createTestIntegration({ active: false });
  const body = { window: { seconds: 86_400 } };
  expectApiError(await put('sdk_test_' + 'x'.repeat(43), body), 401, 'invalid_key');
  expectApiError(await postJson('/v1/channel', body, { method: 'PUT' }), 401, 'invalid_key');
  expectApiError(await put(inactive.key, body), 403, 'integration_inactive');
  const post = await postJson('/v1/channel', body, { key: integration.key });
  expectApiError(post, 405, 'method_not_allowed');
  expect(post.headers.get('allow')).toBe('PUT');
  expectApiError(await request('/v1/channel', { key: integration.key, method: 'GET' }), 405, 'method_not_allowed');
  expectApiError(await postJson('/v1/channel', 'window=1', { key: integration.key, method: 'PUT', raw: true, contentType: 'application/x-www-form-urlencoded' }), 415, 'unsupported_media_type');
  expect(await storedChannel(integration)).toBeUndefined();
  expect(await storedChannel(inactive)).toBeUndefined();
});

test('429 rate_limited with Retry-After over the integration limit (the budget of POST /v1/messages)', async () => {
  const limited = await createTestIntegration({ messagesPerMinute: 1 });
  expect((await put(limited.key, { window: { seconds: 600 } })).status).toBe(200);
  const refused = await put(limited.key, { window: { seconds: 900 } });
  expectApiError(refused, 429, 'rate_limited');
  expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
  expect(refused.headers.get('ratelimit-remaining')).toBe('0');
  expect(await storedChannel(limited)).toMatchObject({ window: { seconds: 600 } });
});
