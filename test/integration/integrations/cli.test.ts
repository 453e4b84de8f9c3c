import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { hashKey } from '../../../functions/src/integrations/keys';
import { adminDb, closeStack, integrationRef, postJson } from '../helpers/stack';

const run = promisify(execFile);
const CLI = join(__dirname, '..', '..', '..', 'functions', 'lib', 'cli', 'integrations.js');

async function cli(...args: string[]): Promise<Record<string, unknown>> {
  const { stdout } = await run(process.execPath, [CLI, ...args, '--json'], { env: process.env });
  return JSON.parse(stdout) as Record<string, unknown>;
}

const message = () => ({ eventId: randomUUID(), externalConversationId: 'cli-chat', sender: { externalId: 'cust' }, message: { text: 'hi' } });

afterAll(closeStack);

describe('admin CLI against the emulators', () => {
  test('create prints the key once, stores only its hash, and the key works', async () => {
    const workspaceId = `ws_${randomUUID()}`;
    const created = await cli('create', '--workspace', workspaceId, '--name', 'CLI test', '--topic', 'projects/demo-support-desk/topics/cli-test');
    const key = String(created.key);
    expect(key).toMatch(/^sdk_test_[A-Za-z0-9_-]{43}$/);
    const doc = (await integrationRef(workspaceId, String(created.integrationId)).get()).data();
    expect(doc).toMatchObject({ active: true, sourceEnabled: true, keyHash: hashKey(key), replies: { enabled: true, topic: 'projects/demo-support-desk/topics/cli-test' } });
    expect(JSON.stringify(doc)).not.toContain(key.slice(9));
    expect((await postJson('/v1/messages', message(), { key })).status).toBe(201);
  });

  test('deactivate answers 403 integration_inactive (after the key cache), activate restores', async () => {
    const workspaceId = `ws_${randomUUID()}`;
    const created = await cli('create', '--workspace', workspaceId, '--name', 'CLI test');
    const integrationId = String(created.integrationId);
    await cli('deactivate', '--workspace', workspaceId, '--integration', integrationId);
    expect((await integrationRef(workspaceId, integrationId).get()).get('active')).toBe(false);
    // A fresh key was never looked up by the functions, so there is no cached entry to wait out.
    const res = await postJson('/v1/messages', message(), { key: String(created.key) });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: { code: 'integration_inactive', message: expect.any(String) } });
    await cli('activate', '--workspace', workspaceId, '--integration', integrationId);
    expect((await integrationRef(workspaceId, integrationId).get()).get('active')).toBe(true);
  });

  test('rotate with no overlap revokes the old key; the new key works', async () => {
    const workspaceId = `ws_${randomUUID()}`;
    const created = await cli('create', '--workspace', workspaceId, '--name', 'CLI test');
    const rotated = await cli('rotate', '--workspace', workspaceId, '--integration', String(created.integrationId), '--overlap-hours', '0');
    expect(rotated.key).not.toBe(created.key);
    expect(rotated.previousKeyExpiresAt).toBeNull();
    expect((await postJson('/v1/messages', message(), { key: String(rotated.key) })).status).toBe(201);
    // The old key was never used, so no instance has it cached: it is refused at once.
    expect((await postJson('/v1/messages', message(), { key: String(created.key) })).status).toBe(401);
  });

  test('bad usage exits non-zero with a message and writes nothing', async () => {
    const workspaceId = `ws_${randomUUID()}`;
    await expect(run(process.execPath, [CLI, 'create', '--workspace', workspaceId, '--name', 'x', '--topic', 'not-a-topic'], { env: process.env })).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining('Invalid topic'),
    });
    const docs = await adminDb().collection('workspaces').doc(workspaceId).collection('integrations').get();
    expect(docs.size).toBe(0);
  });
});
