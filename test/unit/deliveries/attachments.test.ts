/** Reply attachments, the pure rules (docs/contract.md#attachments): the capability, the reply's re-check, parts and resend. */
import { parseAttachmentCapability } from '../../../functions/src/contract';
import { attachmentsVerdict, resendParts, type UploadRecord } from '../../../functions/src/deliveries/reply';
import { contentDisposition } from '../../../functions/src/deliveries/http';

const where = { workspaceId: 'ws', conversationId: 'c1' };
const sha = 'a'.repeat(64);
const upload = (over: Partial<UploadRecord> = {}): UploadRecord => ({ workspaceId: 'ws', conversationId: 'c1', contentType: 'image/png', size: 100, sha256: sha, storagePath: 'p', usedBy: null, ...over });
const ref = { attachmentId: 'a_1', name: 'x.png', contentType: 'image/png' as const, size: 100, sha256: sha };
const capability = { contentTypes: ['image/png' as const], maxBytes: 1000, maxCount: 2 };

describe('parseAttachmentCapability', () => {
  test('a valid capability', () => {
    expect(parseAttachmentCapability({ contentTypes: ['image/png', 'text/plain'], maxBytes: 10 * 1024 * 1024, maxCount: 5 })).toEqual({ contentTypes: ['image/png', 'text/plain'], maxBytes: 10485760, maxCount: 5 });
  });
  test.each([
    ['absent', undefined],
    ['an unknown type', { contentTypes: ['image/svg+xml'], maxBytes: 1, maxCount: 1 }],
    ['no type', { contentTypes: [], maxBytes: 1, maxCount: 1 }],
    ['a repeated type', { contentTypes: ['image/png', 'image/png'], maxBytes: 1, maxCount: 1 }],
    ['maxBytes over 10 MB', { contentTypes: ['image/png'], maxBytes: 10485761, maxCount: 1 }],
    ['maxCount 0', { contentTypes: ['image/png'], maxBytes: 1, maxCount: 0 }],
    ['maxCount 6', { contentTypes: ['image/png'], maxBytes: 1, maxCount: 6 }],
    ['a fractional maxBytes', { contentTypes: ['image/png'], maxBytes: 1.5, maxCount: 1 }],
  ])('%s is text only (null)', (_name, value) => {
    expect(parseAttachmentCapability(value)).toBeNull();
  });
});

describe('attachmentsVerdict', () => {
  const uploads = new Map([['a_1', upload()]]);
  test('no files: accepted with none; files without the capability: attachments_unsupported', () => {
    expect(attachmentsVerdict(undefined, null, uploads, where)).toEqual({ accepted: true, attachments: [] });
    expect(attachmentsVerdict([ref], null, uploads, where)).toEqual({ accepted: false, code: 'attachments_unsupported' });
  });
  test('a file uploaded to this conversation, fitting the capability, is accepted', () => {
    expect(attachmentsVerdict([ref], capability, uploads, where)).toEqual({ accepted: true, attachments: [ref] });
  });
  test('an upload belongs to one reply: used by this reply it is accepted again, used by another (or claimed by the cleanup) it is rejected', () => {
    const mine = { ...where, messageId: 'm1' };
    expect(attachmentsVerdict([ref], capability, new Map([['a_1', upload({ usedBy: 'm1' })]]), mine)).toEqual({ accepted: true, attachments: [ref] });
    expect(attachmentsVerdict([ref], capability, new Map([['a_1', upload({ usedBy: 'm2' })]]), mine)).toEqual({ accepted: false, code: 'attachment_rejected' });
    expect(attachmentsVerdict([ref], capability, new Map([['a_1', upload({ usedBy: 'cleanup/unused' })]]), mine)).toEqual({ accepted: false, code: 'attachment_rejected' });
  });
  test.each([
    ['unknown upload', [{ ...ref, attachmentId: 'a_2' }], uploads],
    ['another conversation', [ref], new Map([['a_1', upload({ conversationId: 'c2' })]])],
    ['another workspace', [ref], new Map([['a_1', upload({ workspaceId: 'ws2' })]])],
    ['a lying size', [{ ...ref, size: 99 }], uploads],
    ['a lying type', [{ ...ref, contentType: 'application/pdf' }], uploads],
    ['a type outside the capability', [{ ...ref, contentType: 'image/gif' }], new Map([['a_1', upload({ contentType: 'image/gif' })]])],
    ['over maxBytes', [{ ...ref, size: 2000 }], new Map([['a_1', upload({ size: 2000 })]])],
    ['over maxCount', [ref, { ...ref, attachmentId: 'a_2' }, { ...ref, attachmentId: 'a_3' }], new Map([['a_1', upload()], ['a_2', upload()], ['a_3', upload()]])],
    ['the same file twice', [ref, ref], uploads],
  ])('%s: attachment_rejected', (_name, files, records) => {
    expect(attachmentsVerdict(files, capability, records, where)).toEqual({ accepted: false, code: 'attachment_rejected' });
  });
  test('more than 20 MB together: attachment_rejected', () => {
    const big = { contentTypes: ['image/png' as const], maxBytes: 10 * 1024 * 1024, maxCount: 3 };
    const size = 7 * 1024 * 1024;
    const records = new Map(['a_1', 'a_2', 'a_3'].map((id) => [id, upload({ size })]));
    const files = ['a_1', 'a_2', 'a_3'].map((attachmentId) => ({ ...ref, attachmentId, size }));
    expect(attachmentsVerdict(files, big, records, where)).toEqual({ accepted: false, code: 'attachment_rejected' });
    expect(attachmentsVerdict(files.slice(0, 2), big, records, where)).toMatchObject({ accepted: true });
  });
});

describe('resendParts', () => {
  const a = { ...ref, attachmentId: 'a_1' };
  const b = { ...ref, attachmentId: 'a_2' };
  test('only the parts not reported sent', () => {
    expect(resendParts({ text: 'hi', attachments: [a, b], parts: [{ part: 'text', status: 'sent' }, { part: 'a_1', status: 'sent' }, { part: 'a_2', status: 'failed' }] })).toEqual({ text: '', textSent: true, attachments: [b] });
    expect(resendParts({ text: 'hi', attachments: [a, b], parts: [{ part: 'a_2', status: 'sent' }] })).toEqual({ text: 'hi', textSent: false, attachments: [a] });
  });
  test('no report: everything; everything reported sent: everything again', () => {
    expect(resendParts({ text: 'hi', attachments: [a] })).toEqual({ text: 'hi', textSent: false, attachments: [a] });
    expect(resendParts({ text: 'hi', attachments: [a], parts: [{ part: 'text', status: 'sent' }, { part: 'a_1', status: 'sent' }] })).toEqual({ text: 'hi', textSent: false, attachments: [a] });
  });
});

test('contentDisposition sanitises the name and carries it in UTF-8', () => {
  expect(contentDisposition('Rechnung "März"/2026.pdf')).toBe(`attachment; filename="Rechnung _M_rz__2026.pdf"; filename*=UTF-8''Rechnung%20_M%C3%A4rz_%2F2026.pdf`.replace('%2F', '_'));
  expect(contentDisposition('\u0000')).toBe(`attachment; filename="_"; filename*=UTF-8''_`);
});
