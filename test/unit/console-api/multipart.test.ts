/**
 * The console upload's multipart parser (functions/src/console-api/multipart.ts) at its size
 * boundary: a file of exactly the per-file limit is accepted whole, one byte more is 413
 * `attachment_too_large` (busboy marks a file that reaches its `fileSize` limit as truncated).
 */
import { ATTACHMENT_LIMITS } from '../../../functions/src/contract';
import { parseUploadBody, withEmptyFileNamesNamed } from '../../../functions/src/console-api/multipart';
import { uploadName } from '../../../functions/src/console-api/rules';

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

describe('an empty file name (filename="")', () => {
  const body = (disposition: string, before = '') => {
    const field = (name: string, value: string) => `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
    return Buffer.from(`${before}${field('workspaceId', 'ws_1')}${field('conversationId', 'c_1')}--${BOUNDARY}\r\nContent-Disposition: ${disposition}\r\nContent-Type: text/plain\r\n\r\nhello "filename=""" \r\n--${BOUNDARY}--\r\n`);
  };
  const parseBody = (b: Buffer) => parseUploadBody(`multipart/form-data; boundary=${BOUNDARY}`, b);

  test('is the file, with an empty name (which the upload names attachment), its bytes untouched', async () => {
    const parsed = await parseBody(body('form-data; name="file"; filename=""'));
    expect(parsed.file.filename).toBe('');
    expect(uploadName(parsed.file.filename)).toBe('attachment');
    expect(parsed.file.bytes.toString()).toBe('hello "filename=""" ');
    expect({ workspaceId: parsed.workspaceId, conversationId: parsed.conversationId }).toEqual({ workspaceId: 'ws_1', conversationId: 'c_1' });
  });

  test('is found after an empty preamble and in any letter case', async () => {
    const parsed = await parseBody(body('form-data; name="file"; FILENAME=""', '\r\n'));
    expect(parsed.file.filename).toBe('');
  });

  test('a body whose file has a name, or without a boundary, is given to the parser as it is', () => {
    const b = uploadBody(10);
    expect(withEmptyFileNamesNamed(`multipart/form-data; boundary=${BOUNDARY}`, b)).toBe(b);
    expect(withEmptyFileNamesNamed('multipart/form-data', b)).toBe(b);
  });

  test("a file part without a filename parameter (what Node's FormData sends for an empty name) is the file too", async () => {
    const parsed = await parseBody(body('form-data; name="file"'));
    expect(parsed.file.filename).toBe('');
    expect(parsed.file.bytes.toString()).toBe('hello "filename=""" ');
  });

  test('only the part named file is touched: another part with an empty file name stays a text field (and is refused)', async () => {
    await expect(parseBody(body('form-data; name="note"; filename=""'))).rejects.toMatchObject({ status: 400, code: 'invalid_multipart' });
  });
});
