/**
 * Export of one customer (docs/privacy.md#export) through the real trigger and the admins-only
 * download, and the CLI's `erase` command (docs/privacy.md#erasure).
 *
 * @serial runs deleteExpiredExports for every workspace at now + 7 days: it deletes the exports other suites are reading
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { FieldValue } from 'firebase-admin/firestore';
import { adminDb, functionsUrl, projectId } from '../helpers/stack';
import { deliverFully, deliveryTestFile, eventually, replyAndNotify } from '../helpers/deliveries';
import { localStore, send, ws } from './helpers';
import { signedUpUser } from '../helpers/auth-emulator';
import { deleteExpiredExports, exportFilePath } from '../../../functions/src/privacy/export';

const file = deliveryTestFile();
const run = promisify(execFile);
const CLI = join(__dirname, '..', '..', '..', 'functions', 'lib', 'cli', 'integrations.js');

/** A new user of the Auth emulator (a signed-in console user): `uid|idToken`. */
async function idToken(uid: string): Promise<string> {
  const user = await signedUpUser(`${uid}-${randomUUID().slice(0, 6)}@example.test`, 'secret-123');
  return `${user.uid}|${user.idToken}`;
}

const download = (workspaceId: string, exportId: string, token?: string) =>
  fetch(`${functionsUrl()}/downloadExport?workspaceId=${encodeURIComponent(workspaceId)}&exportId=${encodeURIComponent(exportId)}`, { headers: token ? { authorization: `Bearer ${token}` } : {} });

test('the export file: the customer, their conversations, messages with image references, deliveries with attempts and receipts; admins only', async () => {
  const setup = await file.ownConversation();
  const { integration } = setup;
  await send(integration, setup.externalConversationId, setup.customerId, { withImage: true, metadata: { orderId: 'A-1' } });
  const reply = await replyAndNotify(setup, 'exported answer');
  await deliverFully(integration.key, reply.deliveryId);
  const otherCustomerConversation = `other-${randomUUID()}`;
  await send(integration, otherCustomerConversation, `someone-else-${randomUUID()}`, { text: 'not theirs' });

  const [adminUid, adminToken] = (await idToken('admin')).split('|') as [string, string];
  const [operatorUid, operatorToken] = (await idToken('operator')).split('|') as [string, string];
  await ws(integration.workspaceId).collection('members').doc(adminUid).set({ role: 'admin' });
  await ws(integration.workspaceId).collection('members').doc(operatorUid).set({ role: 'operator' });

  const exportId = `ex-${randomUUID()}`;
  await ws(integration.workspaceId).collection('exports').doc(exportId).create({ integrationId: integration.integrationId, externalCustomerId: setup.customerId, requestedAt: FieldValue.serverTimestamp(), requestedBy: adminUid });
  // The export trigger's first run starts its worker process: in the @serial lane, beside the
  // static checks, it once began more than 15 s after the request (the export itself took 1.9 s).
  const done = await eventually(async () => {
    const d = (await ws(integration.workspaceId).collection('exports').doc(exportId).get()).data();
    return d?.status === 'done' ? d : undefined;
  }, 'the export', 45_000);
  expect(done).toMatchObject({ counts: { conversations: 1, messages: 3, deliveries: 1 }, file: { bytes: expect.any(Number) as number, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) as string } });
  expect(done.fileExpiresAt - done.finishedAt).toBe(7 * 86_400_000);

  const res = await download(integration.workspaceId, exportId, adminToken);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toContain('application/x-ndjson');
  const lines = (await res.text()).trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
  expect(lines.map((l) => l.type)).toEqual(['customer', 'conversation', 'message', 'message', 'message', 'delivery']);
  expect(lines[0]).toMatchObject({ externalId: setup.customerId });
  expect(lines[1]).toMatchObject({ externalConversationId: setup.externalConversationId, soleCustomer: true, needsReply: false }); // answered by the reply
  // The search index is not the customer's data (it may name another customer): not exported.
  expect(lines[1]).not.toHaveProperty('searchKeys');
  // The conversation's connector metadata is its data: exported with it.
  expect(lines[1]).toMatchObject({ metadata: { orderId: 'A-1' } });
  const withImage = lines.find((l) => l.type === 'message' && Array.isArray(l.images) && l.images.length > 0) as { images: Array<{ path: string; sha256: string }> } | undefined;
  expect(withImage?.images[0]).toMatchObject({ path: expect.any(String) as string, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) as string });
  expect(lines[5]).toMatchObject({ deliveryId: reply.deliveryId, status: 'sent', attemptLog: expect.any(Array) as unknown[] });
  expect(JSON.stringify(lines)).not.toContain('not theirs');

  expect((await download(integration.workspaceId, exportId)).status).toBe(401);
  expect((await download(integration.workspaceId, exportId, operatorToken)).status).toBe(403);
  expect((await download(integration.workspaceId, `nope-${randomUUID()}`, adminToken)).status).toBe(404);
  const denied = await download(integration.workspaceId, exportId, operatorToken);
  expect(await denied.json()).toEqual({ error: { code: 'not_an_admin', message: expect.any(String) as string } });

  // Seven days later the retention job deletes the file and the document.
  expect((await localStore().get(exportFilePath(integration.workspaceId, exportId))) !== null).toBe(true);
  await deleteExpiredExports(adminDb(), localStore(), Date.now() + 7 * 86_400_000 + 1);
  expect((await localStore().get(exportFilePath(integration.workspaceId, exportId))) !== null).toBe(false);
  expect((await ws(integration.workspaceId).collection('exports').doc(exportId).get()).exists).toBe(false);
});

test('npm run integrations -- erase: writes the erasure as the console does, waits, prints the audit', async () => {
  const setup = await file.ownConversation();
  const { stdout } = await run(process.execPath, [CLI, 'erase', '--workspace', setup.integration.workspaceId, '--integration', setup.integration.integrationId, '--customer', setup.customerId, '--json'], {
    env: { ...process.env, GCLOUD_PROJECT: projectId() },
  });
  const audit = JSON.parse(stdout) as Record<string, unknown>;
  expect(audit).toMatchObject({ status: 'done', counts: { conversations: 1, messages: 1, images: 0, attachments: 0, deliveries: 0 } });
  const stored = (await ws(setup.integration.workspaceId).collection('erasures').doc(String(audit.erasureId)).get()).data();
  expect(stored).toMatchObject({ integrationId: setup.integration.integrationId, externalCustomerId: setup.customerId, requestedBy: 'cli', status: 'done' });
});
