/**
 * Security (test/integration/reliability/README.md).
 *
 *  - Key material never reaches a log: keys are used on every endpoint on success and error
 *    paths, presented in malformed ways, sent inside bodies, rotated and revoked; then every line
 *    the emulators printed so far (the `emulators:exec` output that scripts/test.mjs tees to
 *    EMULATOR_LOG_FILE, the functions' logs included) is scanned for each key and for any
 *    16-character window of its secret part, and for anything shaped like a key at all.
 *  - Tenancy: another integration's delivery is 404 on all four operations, even with its real
 *    lease, and changes nothing; its conversation, customer and eventId stay its own.
 *  - Revocation: a key used (and so cached) on every endpoint, then rotated with no overlap, is
 *    refused (401) by every endpoint within the cache window (KEY_CACHE_TTL_MS, default 20 s, short
 *    on the test stack; docs/contract.md#authentication allows 30 s): the bound is the configured
 *    TTL plus a margin (helpers/stack.ts `revocationBoundMs`).
 */
import { randomUUID } from 'node:crypto';
import { rotateKey } from '../../../functions/src/integrations/admin';
import { adminDb, createTestIntegration, keyCacheTtls, messageParts, multipartBody, postJson, revocationBoundMs, workspaceDocPaths, type TestIntegration } from '../helpers/stack';
import { claimReady, deliveryDoc, deliveryTestFile, expectApiError, expectOk, expectSent, op, replyAndNotify } from '../helpers/deliveries';
import { ENDPOINTS, expectNoKeyMaterialInLogs, findKeyMaterial, flushedEmulatorLog, rawRequest, redactLeaks, secretOf, withoutAccessLogUsers } from './support';

jest.setTimeout(120_000);

const file = deliveryTestFile();
/** Every key this file created (revoked ones included). */
const keys: string[] = [];

async function integrationWithKey(options: Parameters<typeof createTestIntegration>[0] = {}): Promise<TestIntegration> {
  const integ = await createTestIntegration(options);
  keys.push(integ.key);
  return integ;
}

const json = (key: string | undefined, body: unknown, extra: Record<string, string> = {}) => ({
  headers: { 'content-type': 'application/json', ...(key === undefined ? {} : { authorization: `Bearer ${key}` }), ...extra },
  body: typeof body === 'string' ? body : JSON.stringify(body),
});

test('another integration\'s delivery is 404 on all four operations, even with its real lease, and nothing changes', async () => {
  const owner = await file.ownConversation();
  keys.push(owner.integration.key);
  const { deliveryId } = await replyAndNotify(owner, 'for the owner only');
  const lease = await claimReady(owner.integration.key, deliveryId);
  expectOk(await op('start', owner.integration.key, { deliveryId, leaseId: lease.leaseId }), { status: 'sending' });
  const before = await deliveryDoc(owner, deliveryId);

  const sameWorkspace = await integrationWithKey({ workspaceId: owner.integration.workspaceId });
  const elsewhere = await integrationWithKey();
  for (const intruder of [sameWorkspace, elsewhere]) {
    expectApiError(await op('claim', intruder.key, { deliveryId, requestId: randomUUID() }), 404, 'delivery_not_found');
    expectApiError(await op('start', intruder.key, { deliveryId, leaseId: lease.leaseId }), 404, 'delivery_not_found');
    expectApiError(await op('complete', intruder.key, { deliveryId, leaseId: lease.leaseId, providerMessageIds: ['stolen'] }), 404, 'delivery_not_found');
    expectApiError(await op('fail', intruder.key, { deliveryId, leaseId: lease.leaseId, outcome: 'failed', code: 'stolen' }), 404, 'delivery_not_found');
    // Exactly what an id that does not exist gets.
    expectApiError(await op('claim', intruder.key, { deliveryId: `d_${randomUUID()}`, requestId: 'r' }), 404, 'delivery_not_found');
  }
  expect(await deliveryDoc(owner, deliveryId)).toEqual(before);
  // The owner still holds it.
  expectSent(await op('complete', owner.integration.key, { deliveryId, leaseId: lease.leaseId, providerMessageIds: ['p-1'] }), deliveryId);
});

test('incoming data is per integration: the same eventId, conversation and sender under another integration (same workspace) touch nothing of the first', async () => {
  const first = await integrationWithKey();
  const second = await integrationWithKey({ workspaceId: first.workspaceId });
  const message = { eventId: `evt-${randomUUID()}`, externalConversationId: 'shared-chat', sender: { externalId: 'shared-customer' }, message: { text: 'hello' } };
  const a = await postJson('/v1/messages', message, { key: first.key });
  expect(a.status).toBe(201);
  const pathsAfterFirst = await workspaceDocPaths(first.workspaceId);
  // Same eventId, other content, other integration: not a conflict, not a duplicate: its own message.
  const b = await postJson('/v1/messages', { ...message, message: { text: 'something else' } }, { key: second.key });
  expect(b.status).toBe(201);
  const ids = (res: typeof a) => res.body as { conversationId: string; messageId: string };
  expect(ids(b).conversationId).not.toBe(ids(a).conversationId);
  expect(ids(b).messageId).not.toBe(ids(a).messageId);
  const pathsAfterSecond = await workspaceDocPaths(first.workspaceId);
  // Everything the first created is still there, and the second added only documents of its own.
  expect(pathsAfterSecond).toEqual(expect.arrayContaining(pathsAfterFirst));
  const added = pathsAfterSecond.filter((p) => !pathsAfterFirst.includes(p));
  expect(added.length).toBeGreaterThanOrEqual(4);
  for (const path of added.filter((p) => !p.startsWith('integrations/'))) {
    const data = (await adminDb().doc(`workspaces/${first.workspaceId}/${path}`).get()).data() ?? {};
    expect([path, data.integrationId]).toEqual([path, second.integrationId]);
  }
  // The first integration's retry is still its own duplicate.
  const again = await postJson('/v1/messages', message, { key: first.key });
  expect([again.status, again.body]).toEqual([200, { ...ids(a), duplicate: true }]);
});

test('a key used and cached on every endpoint, then rotated with no overlap, is refused (401) by every endpoint within the key cache TTL (<= 30 s); the new key works', async () => {
  const bound = revocationBoundMs();
  const integ = await integrationWithKey();
  const old = integ.key;
  // Use it everywhere, so every function instance has it cached.
  const first = await rawRequest('/v1/messages', json(old, { eventId: randomUUID(), externalConversationId: 'c', sender: { externalId: 's' }, message: { text: 'cached' } }));
  expect(first.status).toBe(201);
  for (const path of ENDPOINTS.slice(1)) expect((await rawRequest(path, json(old, { deliveryId: 'd_none', requestId: 'r', leaseId: 'l', providerMessageIds: ['p'], outcome: 'failed', code: 'x' }))).status).toBeLessThan(500);
  for (const path of ENDPOINTS.slice(1)) expect((await rawRequest(path, json(old, {}))).status).toBe(400);

  const rotated = await rotateKey(adminDb(), integ.workspaceId, integ.integrationId, 'sdk_test_', 0);
  keys.push(rotated.key);
  const revokedAt = Date.now();
  const refusedAfter = new Map<string, number>();
  // Polls a little past the bound, so that a late refusal fails the bound below (with its time) rather than the loop.
  while (refusedAfter.size < ENDPOINTS.length && Date.now() - revokedAt < bound + 5_000) {
    for (const path of ENDPOINTS) {
      if (refusedAfter.has(path)) continue;
      const res = await rawRequest(path, json(old, {}));
      if (res.status === 401) refusedAfter.set(path, Date.now() - revokedAt);
      else expect(res.status).toBe(400); // still the cached integration: the (empty) body is what is wrong
    }
    if (refusedAfter.size < ENDPOINTS.length) await new Promise((resolve) => setTimeout(resolve, 500));
  }
  console.log(`revocation: refused after ${JSON.stringify(Object.fromEntries(refusedAfter))} ms (KEY_CACHE_TTL_MS ${keyCacheTtls().positiveMs}; limit ${bound})`);
  expect([...refusedAfter.keys()].sort()).toEqual([...ENDPOINTS].sort());
  for (const ms of refusedAfter.values()) expect(ms).toBeLessThanOrEqual(bound);
  // Refused for good, with the same body as any unknown key; the new key works.
  for (const path of ENDPOINTS) expectApiError(await postJson(path, {}, { key: old }), 401, 'invalid_key');
  expect((await postJson('/v1/messages', { eventId: randomUUID(), externalConversationId: 'c', sender: { externalId: 's' }, message: { text: 'new key' } }, { key: rotated.key })).status).toBe(201);
});

test('no key material in any log line the emulators printed: keys used on every path, malformed, inside bodies, inactive and revoked', async () => {
  const integ = await integrationWithKey();
  const inactive = await integrationWithKey({ active: false });
  const k = integ.key;
  const presented = [
    `Bearer ${k}`,
    `bearer  ${k}`,
    `Bearer ${k} trailing-junk`,
    `Basic ${Buffer.from(`user:${k}`).toString('base64')}`,
    `Basic ${Buffer.from(`${k}:`).toString('base64')}`,
    k,
    `Bearer ${k}x`,
    `Bearer ${k.slice(0, -1)}`,
    `Bearer ${k.slice(0, -1)}${k.endsWith('A') ? 'B' : 'A'}`,
    `Token ${k}`,
    `Bearer ${inactive.key}`,
  ];
  const message = () => ({ eventId: randomUUID(), externalConversationId: 'sec-chat', sender: { externalId: 'sec-customer' }, message: { text: 'hi' } });
  for (const path of ENDPOINTS) {
    for (const authorization of presented) {
      const body = path === '/v1/messages' ? message() : { deliveryId: 'd_none', requestId: 'r', leaseId: 'l' };
      expect((await rawRequest(path, { headers: { 'content-type': 'application/json', authorization }, body: JSON.stringify(body) })).status).toBeLessThan(500);
    }
    // The key where it does not belong: other headers, and inside the body (as a value, as a property name, as a whole body).
    const inBody = [
      JSON.stringify({ ...message(), message: { text: `my key is ${k}` } }),
      JSON.stringify({ ...message(), [k]: true }),
      JSON.stringify({ deliveryId: k, requestId: k, leaseId: k }),
      JSON.stringify({ deliveryId: 'd_none', leaseId: 'l', outcome: 'failed', code: k }),
      k,
      `{"eventId": "${k}"`,
    ];
    for (const body of inBody) {
      expect((await rawRequest(path, { headers: { 'content-type': 'application/json', authorization: `Bearer ${k}`, 'x-api-key': k }, body })).status).toBeLessThan(500);
    }
    // Wrong method and content type with the key.
    expect((await rawRequest(path, { method: 'PUT', headers: { authorization: `Bearer ${k}` } })).status).toBe(405);
    expect((await rawRequest(path, { headers: { authorization: `Bearer ${k}`, 'content-type': 'text/plain' }, body: k })).status).toBe(415);
  }
  // Multipart with the key in the payload, a file name and an image part.
  const { body, contentType } = multipartBody([...messageParts({ ...message(), message: { text: k } }), { name: 'images', data: Buffer.from(k), filename: `${k}.png`, contentType: 'image/png' }]);
  expect((await rawRequest('/v1/messages', { headers: { 'content-type': contentType, authorization: `Bearer ${k}` }, body })).status).toBe(400);

  // A revoked key, presented again and again.
  const rotated = await rotateKey(adminDb(), integ.workspaceId, integ.integrationId, 'sdk_test_', 0);
  keys.push(rotated.key);
  for (const path of ENDPOINTS) expect((await rawRequest(path, json(rotated.key, {}))).status).toBe(400);

  const { lines, basicUserEchoes } = await expectNoKeyMaterialInLogs(keys);
  expect(lines).toBeGreaterThan(100);
  // The one place a key can show up is not the service's: the Hosting emulator's access log
  // prints the user name of Basic credentials, so the key sent as `Basic base64(key:)` is echoed
  // there (a client misusing its key; the production front end does not log it).
  console.log(`key scan: ${lines} log lines, ${keys.length} keys, clean; Hosting emulator access-log echoes of a key sent as the Basic user: ${basicUserEchoes}`);
  // Nothing shaped like a key at all, whatever test created it (full keys only: windows need the
  // key), outside the emulator's Basic user field (a client sending its key as Basic credentials).
  const { log } = withoutAccessLogUsers(await flushedEmulatorLog());
  const shaped = log.split('\n').filter((line) => /sdk_(live|test)_[A-Za-z0-9_-]{43}/.test(line));
  expect(shaped.map((l) => l.replace(/(sdk_(live|test)_[A-Za-z0-9_-]{4})[A-Za-z0-9_-]{39}/g, '$1…').slice(0, 200))).toEqual([]);
  // The display prefix is what the logs carry instead (docs/decisions.md#keys: prefix + 4 characters).
  expect(log).toContain(`"keyPrefix":"${k.slice(0, 'sdk_test_'.length + 4)}"`);
  expect(findKeyMaterial(`x ${secretOf(k).slice(3, 19)} y`, [k])).toHaveLength(1); // the scan itself finds a window
  expect(redactLeaks(findKeyMaterial(k, [k]))).not.toContain(secretOf(k).slice(0, 16));
});
