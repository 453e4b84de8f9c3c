/**
 * SDK end to end: the fallback host. The default host refuses connections (a closed port), the
 * fallback is the real API host (the emulator stack's Hosting, or the test service: ./target.ts):
 * calls succeed there, and only there.
 */
import { randomUUID } from 'node:crypto';
import { ConnectorNetworkError, type FetchLike } from '../../src/index.js';
import { apiBaseUrl, closedPortUrl, closeStack, createTestIntegration, messageDocs, sdkClient, type TestIntegration } from './helpers';

let integration: TestIntegration;
beforeAll(async () => {
  integration = await createTestIntegration();
});
afterAll(closeStack);

test('default host unreachable -> the same attempt goes to fallbackBaseUrl and succeeds', async () => {
  const closed = await closedPortUrl();
  const urls: string[] = [];
  const recording: FetchLike = (url, init) => {
    urls.push(url);
    return fetch(url, init);
  };
  const sleeps: number[] = [];
  const client = sdkClient(integration.key, {
    baseUrl: closed,
    fallbackBaseUrl: apiBaseUrl(),
    fetch: recording,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
  });
  const input = { eventId: `evt-${randomUUID()}`, externalConversationId: `chat-${randomUUID()}`, sender: { externalId: 'cust-fb' }, text: 'via the fallback host' };

  const sent = await client.messages.send(input);
  expect(sent.duplicate).toBe(false);
  expect(urls).toEqual([`${closed}/v1/messages`, `${apiBaseUrl()}/v1/messages`]);
  expect(sleeps).toEqual([]); // no retry wait: the fallback is part of the same attempt
  expect(await messageDocs(integration, sent.conversationId)).toHaveLength(1);

  // Every call starts with the default host again.
  expect(await client.messages.send(input)).toEqual({ ...sent, duplicate: true });
  expect(urls.slice(2)).toEqual([`${closed}/v1/messages`, `${apiBaseUrl()}/v1/messages`]);

  // Delivery operations use the fallback too (a 404 from the real service proves where it went).
  await expect(client.deliveries.claim({ deliveryId: `d_missing_${randomUUID()}` })).rejects.toMatchObject({ status: 404, code: 'delivery_not_found' });
});

test('without a fallback the same failure is ConnectorNetworkError connect_failed (nothing was sent)', async () => {
  const client = sdkClient(integration.key, { baseUrl: await closedPortUrl(), retry: 0 });
  const err = await client.messages.send({ externalConversationId: 'c', sender: { externalId: 'x' }, text: 'hi' }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(ConnectorNetworkError);
  expect(err).toMatchObject({ code: 'connect_failed', requestMayHaveArrived: false, status: undefined, attempts: 1 });
});
