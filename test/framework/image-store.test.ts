/**
 * A deployment without `IMAGE_BUCKET` (docs/decisions.md#http-layer, docs/operations.md): the instance keeps
 * serving, text messages are accepted, and a message with images gets a 503
 * `image_store_unavailable` with `Retry-After`, while the function logs an ERROR naming the
 * setting. Never a crash loop: the configuration is not fatal at load time.
 */
import { expectAccepted, expectError } from '../integration/helpers/assertions';
import { eventually } from '../integration/helpers/deliveries';
import { newMessage } from '../integration/helpers/messages';
import { closeStack, createTestIntegration, messageParts, postJson, postMultipart, workspaceDocPaths } from '../integration/helpers/stack';
import { png } from '../unit/fixtures/image-bytes';
import { startFunction, type FrameworkFunction } from './support';

jest.setTimeout(60_000);

let fn: FrameworkFunction;
beforeAll(async () => {
  fn = await startFunction('messages', { IMAGE_STORE: 'gcs', IMAGE_BUCKET: '' });
});
afterAll(async () => {
  await fn.stop();
  await closeStack();
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
