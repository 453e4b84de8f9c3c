/**
 * The console upload's multipart parser (functions/src/console-api/multipart.ts) at its size
 * boundary: a file of exactly the per-file limit is accepted whole, one byte more is 413
 * `attachment_too_large` (busboy marks a file that reaches its `fileSize` limit as truncated).
 */
import { ATTACHMENT_LIMITS } from '../../../functions/src/contract';
import { parseUploadBody } from '../../../functions/src/console-api/multipart';

const BOUNDARY = '----upload-boundary';

function uploadBody(fileBytes: number): Buffer {
  const field = (name: string, value: string) => `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
  const head = `${field('workspaceId', 'ws_1')}${field('conversationId', 'c_1')}--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="big.pdf"\r\nContent-Type: application/pdf\r\n\r\n`;
  return Buffer.concat([Buffer.from(head), Buffer.alloc(fileBytes, 0x41), Buffer.from(`\r\n--${BOUNDARY}--\r\n`)]);
}

const parse = (fileBytes: number) => parseUploadBody(`multipart/form-data; boundary=${BOUNDARY}`, uploadBody(fileBytes));

test('a file of exactly the per-file limit is accepted whole', async () => {
  const parsed = await parse(ATTACHMENT_LIMITS.maxBytesPerFile);
  expect(parsed.file.bytes.length).toBe(ATTACHMENT_LIMITS.maxBytesPerFile);
  expect(parsed.file.filename).toBe('big.pdf');
});

test('one byte over the limit is 413 attachment_too_large', async () => {
  await expect(parse(ATTACHMENT_LIMITS.maxBytesPerFile + 1)).rejects.toMatchObject({ status: 413, code: 'attachment_too_large' });
});
