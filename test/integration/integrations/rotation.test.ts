/**
 * Key rotation with overlap (admin CLI `rotate`, docs/data-model.md "Key rotation"): during the
 * overlap both keys work; once `previousKey.expiresAt` has passed the old key is refused at once
 * (every cached lookup carries that expiry and is checked on each request); an overlap ended early
 * by rewriting `expiresAt` takes effect within the key cache TTL (KEY_CACHE_TTL_MS, short on the test
 * stack; <= 30 s, docs/contract.md#authentication): the bound is the configured TTL plus a margin.
 */
import { randomUUID } from 'node:crypto';
import { rotateKey } from '../../../functions/src/integrations/admin';
import { adminDb, closeStack, createTestIntegration, integrationRef, postJson, revocationBoundMs, type ApiResponse } from '../helpers/stack';
import { eventually, sleep } from '../helpers/deliveries';

afterAll(async () => {
  await closeStack();
});

function message(key: string): Promise<ApiResponse> {
  return postJson('/v1/messages', { eventId: randomUUID(), externalConversationId: `chat-${randomUUID()}`, sender: { externalId: 'c-1' }, message: { text: 'hi' } }, { key });
}

const statusAndCode = (res: ApiResponse) => ({ status: res.status, code: (res.body as { error?: { code?: string } }).error?.code });

test('both keys work during the overlap; the old key is refused as soon as the overlap has passed', async () => {
  const integration = await createTestIntegration();
  const overlapMs = 6_000;
  const rotated = await rotateKey(adminDb(), integration.workspaceId, integration.integrationId, 'sdk_test_', overlapMs);
  expect(rotated.key).not.toBe(integration.key);
  const stored = (await integrationRef(integration.workspaceId, integration.integrationId).get()).data();
  expect(stored?.previousKey).toEqual({ hash: expect.stringMatching(/^[0-9a-f]{64}$/), prefix: expect.stringMatching(/^sdk_test_/), expiresAt: rotated.previousKeyExpiresAt });

  expect((await message(integration.key)).status).toBe(201);
  expect((await message(rotated.key)).status).toBe(201);

  await sleep(Math.max(0, (rotated.previousKeyExpiresAt ?? 0) - Date.now()) + 200);
  // No waiting for the key cache: the cached lookup of the old key carries its expiry.
  expect(statusAndCode(await message(integration.key))).toEqual({ status: 401, code: 'invalid_key' });
  expect((await message(rotated.key)).status).toBe(201);
});

test('ending the overlap early (previousKey.expiresAt rewritten into the past) takes effect within the key cache TTL (<= 30 s)', async () => {
  const bound = revocationBoundMs();
  const integration = await createTestIntegration();
  expect((await message(integration.key)).status).toBe(201); // cached as the current key
  const rotated = await rotateKey(adminDb(), integration.workspaceId, integration.integrationId, 'sdk_test_'); // default 24 h overlap
  expect((await message(integration.key)).status).toBe(201);
  expect((await message(rotated.key)).status).toBe(201);

  const endedAt = Date.now();
  await integrationRef(integration.workspaceId, integration.integrationId).update({ 'previousKey.expiresAt': endedAt - 1_000 });
  const refused = await eventually(async () => {
    const res = await message(integration.key);
    return res.status === 401 ? res : undefined;
  }, 'the old key to be refused', bound);
  expect(statusAndCode(refused)).toEqual({ status: 401, code: 'invalid_key' });
  expect(Date.now() - endedAt).toBeLessThan(bound);
  expect((await message(rotated.key)).status).toBe(201);
}, 60_000);
