/** The console function's pure rules (functions/src/console-api/rules.ts, docs/console.md#console-endpoints). */
import { ATTACHMENT_LIMITS, type AttachmentCapability } from '../../../functions/src/contract';
import { DEFAULT_UPLOAD_NAME, parseMediaQuery, uploadName, uploadRefusal, type UploadFacts } from '../../../functions/src/console-api/rules';
import { rewriteMatches } from '../../../scripts/lib/framework.mjs';

describe('uploadName', () => {
  test.each([
    ['report.pdf', 'report.pdf'],
    ['C:\\Users\\ana\\report.pdf', 'report.pdf'],
    ['../../etc/passwd', 'passwd'],
    ['  spaced name.txt  ', 'spaced name.txt'],
    ['tab\there\u0000.png', 'tabhere.png'],
    ['Rechnung %221%22.pdf', 'Rechnung "1".pdf'],
    ['line%0Abreak.txt', 'linebreak.txt'],
    ['e\u0301te\u0301.txt', 'été.txt'],
    ['', DEFAULT_UPLOAD_NAME],
    [undefined, DEFAULT_UPLOAD_NAME],
    ['..', DEFAULT_UPLOAD_NAME],
    ['\u0001\u0002', DEFAULT_UPLOAD_NAME],
  ])('%j -> %j', (raw, expected) => {
    expect(uploadName(raw)).toBe(expected);
  });

  test('a long name is cut to the limit in code points, keeping its extension', () => {
    const name = uploadName(`${'😀'.repeat(300)}.jpeg`);
    expect([...name]).toHaveLength(ATTACHMENT_LIMITS.name);
    expect(name.endsWith('😀.jpeg')).toBe(true);
    const noExtension = uploadName('x'.repeat(400));
    expect(noExtension).toBe('x'.repeat(ATTACHMENT_LIMITS.name));
    // An "extension" longer than 16 code points is not kept whole.
    expect(uploadName(`a.${'b'.repeat(300)}`)).toHaveLength(ATTACHMENT_LIMITS.name);
  });
});

describe('uploadRefusal', () => {
  const capability: AttachmentCapability = { contentTypes: ['image/png', 'application/pdf'], maxBytes: 1000, maxCount: 2 };
  const facts = (over: Partial<UploadFacts> = {}): UploadFacts => ({ sniffed: 'image/png', declared: 'image/png', size: 10, capability, ...over });
  const refusal = (over: Partial<UploadFacts>) => {
    const err = uploadRefusal(facts(over));
    return err === null ? null : { status: err.status, code: err.code };
  };

  test('a file of an accepted type within maxBytes is stored', () => {
    expect(refusal({})).toBeNull();
    expect(refusal({ size: 1000 })).toBeNull();
    // The declared type is no claim about our types when it is none of them.
    expect(refusal({ declared: 'application/octet-stream', sniffed: 'application/pdf' })).toBeNull();
    expect(refusal({ declared: undefined })).toBeNull();
    expect(refusal({ declared: 'IMAGE/PNG; name=x' })).toBeNull();
  });

  test.each<[string, Partial<UploadFacts>, { status: number; code: string }]>([
    ['no capability (before anything else)', { capability: null, sniffed: null }, { status: 409, code: 'attachments_unsupported' }],
    ['an empty file', { size: 0 }, { status: 400, code: 'invalid_request' }],
    ['bytes of no accepted kind', { sniffed: null }, { status: 415, code: 'unsupported_attachment_type' }],
    ['a lying type: declared PNG, bytes PDF', { declared: 'image/png', sniffed: 'application/pdf' }, { status: 415, code: 'unsupported_attachment_type' }],
    ['a lying type: declared PNG, bytes text', { declared: 'image/png', sniffed: 'text/plain' }, { status: 415, code: 'unsupported_attachment_type' }],
    ['a type outside the capability', { declared: 'image/gif', sniffed: 'image/gif' }, { status: 415, code: 'unsupported_attachment_type' }],
    ['over maxBytes', { size: 1001 }, { status: 413, code: 'attachment_too_large' }],
  ])('%s', (_name, over, expected) => {
    expect(refusal(over)).toEqual(expected);
  });
});

describe('parseMediaQuery', () => {
  const base = { workspaceId: 'ws', conversationId: 'c1' };
  test('an image of a message, or an attachment', () => {
    expect(parseMediaQuery({ ...base, messageId: 'm1', image: '2' })).toEqual({ kind: 'image', ...base, messageId: 'm1', index: 2 });
    expect(parseMediaQuery({ ...base, attachmentId: 'a_x' })).toEqual({ kind: 'attachment', ...base, attachmentId: 'a_x' });
  });
  test.each([
    ['nothing', {}],
    ['no conversation', { workspaceId: 'ws', attachmentId: 'a_x' }],
    ['a workspace id Firestore cannot store', { ...base, workspaceId: 'a/b', attachmentId: 'a_x' }],
    ['neither kind', base],
    ['both kinds', { ...base, messageId: 'm1', image: '0', attachmentId: 'a_x' }],
    ['a message without an index', { ...base, messageId: 'm1' }],
    ['a negative index', { ...base, messageId: 'm1', image: '-1' }],
    ['a padded index', { ...base, messageId: 'm1', image: '01' }],
    ['a repeated parameter', { ...base, attachmentId: ['a_x', 'a_y'] }],
    ['an over-long attachment id', { ...base, attachmentId: `a_${'x'.repeat(200)}` }],
  ])('%s is 400 invalid_request', (_name, query) => {
    expect(() => parseMediaQuery(query)).toThrow(expect.objectContaining({ status: 400, code: 'invalid_request' }));
  });
});

describe("the test router matches rewrites as Hosting does", () => {
  test.each([
    ['/v1/messages', '/v1/messages', true],
    ['/v1/messages', '/v1/messages/x', false],
    ['/console/v1/**', '/console/v1/attachments', true],
    ['/console/v1/**', '/console/v1/media', true],
    ['/console/v1/**', '/console/index.html', false],
  ])('%s ~ %s: %s', (source, path, matches) => {
    expect(rewriteMatches(source, path)).toBe(matches);
  });
});
