/**
 * A deployment without `IMAGE_BUCKET` (docs/decisions.md#http-layer, docs/operations.md): the instance keeps
 * serving, text messages are accepted, and a message with images gets a 503
 * `image_store_unavailable` with `Retry-After`, while the function logs an ERROR naming the
 * setting. Never a crash loop: the configuration is not fatal at load time. The console function's
 * upload likewise answers 503 and leaves no upload record behind (docs/console.md#console-endpoints).
 */
import { expectAccepted, expectError } from '../integration/helpers/assertions';
import { eventually } from '../integration/helpers/deliveries';
import { newMessage } from '../integration/helpers/messages';
import { closeStack, createTestIntegration, messageParts, postJson, postMultipart, workspaceDocPaths } from '../integration/helpers/stack';
import { allowAttachments, newMember } from '../integration/helpers/console-uploads';
import { png } from '../unit/fixtures/image-bytes';
import { startFunction, type FrameworkFunction } from './support';

jest.setTimeout(60_000);

let fn: FrameworkFunction;
let consoleFn: FrameworkFunction;
beforeAll(async () => {
  fn = await startFunction('messages', { IMAGE_STORE: 'gcs', IMAGE_BUCKET: '' });
  consoleFn = await startFunction('consoleApi', { IMAGE_STORE: 'gcs', IMAGE_BUCKET: '' });
});
afterAll(async () => {
  await fn.stop();
  await consoleFn.stop();
  await closeStack();
});

test("the console function's upload is a 503 with Retry-After, and its record is removed again (nothing stored)", async () => {
  const integ = await createTestIntegration();
  await allowAttachments(integ.workspaceId, integ.integrationId, { contentTypes: ['image/png'], maxBytes: 100_000, maxCount: 1 });
  const sent = await postJson('/', newMessage(), { key: integ.key, baseUrl: fn.url, skipContractCheck: true });
  const { conversationId } = sent.body as { conversationId: string };
  const member = await newMember(integ.workspaceId);
  const before = await workspaceDocPaths(integ.workspaceId);
  const form = new FormData();
  form.append('workspaceId', integ.workspaceId);
  form.append('conversationId', conversationId);
  form.append('file', new Blob([new Uint8Array(png(8, 8))], { type: 'image/png' }), 'a.png');
  const res = await fetch(`${consoleFn.url}/console/v1/attachments`, { method: 'POST', headers: { authorization: `Bearer ${member.idToken}` }, body: form });
  const body = (await res.json()) as { error?: { code?: string } };
  expect({ status: res.status, code: body.error?.code, retryAfter: res.headers.get('retry-after') }).toEqual({ status: 503, code: 'image_store_unavailable', retryAfter: '60' });
  expect((await workspaceDocPaths(integ.workspaceId)).filter((p) => !p.startsWith('members/'))).toEqual(before.filter((p) => !p.startsWith('members/')));
});

test('text messages are accepted; a message with images is a 503 naming no internals, and an ERROR log names IMAGE_BUCKET', async () => {
  const integ = await createTestIntegration();
  expectAccepted(await postJson('/', newMessage(), { key: integ.key, baseUrl: fn.url, skipContractCheck: true }), 201);

  const before = await workspaceDocPaths(integ.workspaceId);
  const parts = messageParts(newMessage(), [{ data: png(32, 32), contentType: 'image/png', filename: 'a.png' }]);
  for (let attempt = 0; attempt < 2; attempt++) {
    const res = await postMultipart('/', parts, { key: integ.key, baseUrl: fn.url, skipContractCheck: true });
    const message = expectError(res, 503, 'image_store_unavailable');
    expect(res.headers.get('retry-after')).toBe('60');
    expect(message).not.toMatch(/IMAGE_BUCKET|bucket/i);
  }
  expect(await workspaceDocPaths(integ.workspaceId)).toEqual(before);

  // The log travels through the process's stderr pipe, which may arrive after the HTTP answer.
  // (At ERROR, firebase-functions' logger puts a stack trace into `message`, for Error Reporting.)
  const errorLines = () => fn.output().split('\n').filter((line) => line.includes('image_store.misconfigured'));
  const errors = await eventually(async () => (errorLines().length >= 2 ? errorLines() : undefined), 'two image_store.misconfigured log lines', 10_000);
  expect(errors).toHaveLength(2);
  for (const line of errors) {
    const entry = JSON.parse(line) as Record<string, unknown>;
    expect(entry).toMatchObject({ severity: 'ERROR', setting: 'IMAGE_BUCKET', message: expect.stringContaining('image_store.misconfigured') });
  }
  // Still the same healthy process: a text message after the refusals is accepted.
  expectAccepted(await postJson('/', newMessage(), { key: integ.key, baseUrl: fn.url, skipContractCheck: true }), 201);
});
