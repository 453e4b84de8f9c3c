/**
 * The console's pure attachment helpers (console/src/attachments.ts) and the customer id it reads
 * display names by (console/src/format.ts), against the service's own id function.
 */
import {
  acceptAttribute,
  ATTACHMENT_MAX_BYTES,
  capabilityProblem,
  fileProblem,
  limitsText,
  readCapability,
  uploadErrorText,
  type AttachmentCapability,
} from '../../../console/src/attachments';
import { customerDocId, personLabel, replyProblem } from '../../../console/src/format';
import { customerIdFor } from '../../../functions/src/platform/ids';

const MB = 1024 * 1024;
const CAP: AttachmentCapability = { contentTypes: ['image/png', 'application/pdf'], maxBytes: 2 * MB, maxCount: 2 };

describe('the capability, checked as the rules check it', () => {
  test.each([
    [{ contentTypes: [], maxBytes: MB, maxCount: 1 }, 'at least one'],
    [{ contentTypes: ['image/svg+xml'], maxBytes: MB, maxCount: 1 }, 'listed file types'],
    [{ contentTypes: ['image/png', 'image/png'], maxBytes: MB, maxCount: 1 }, 'each once'],
    [{ contentTypes: ['image/png'], maxBytes: ATTACHMENT_MAX_BYTES + 1, maxCount: 1 }, '10 MB'],
    [{ contentTypes: ['image/png'], maxBytes: 0, maxCount: 1 }, '1 byte'],
    [{ contentTypes: ['image/png'], maxBytes: 1.5, maxCount: 1 }, '1 byte'],
    [{ contentTypes: ['image/png'], maxBytes: MB, maxCount: 6 }, '1 to 5'],
    [{ contentTypes: ['image/png'], maxBytes: MB, maxCount: 0 }, '1 to 5'],
  ])('%j is refused (%s)', (capability, words) => {
    expect(capabilityProblem(capability)).toContain(words);
    expect(readCapability(capability)).toBeUndefined();
  });

  test('a valid one is read back exactly (extra fields dropped); absent means text only', () => {
    expect(capabilityProblem(CAP)).toBeUndefined();
    expect(readCapability({ ...CAP, extra: 1 })).toEqual(CAP);
    expect(readCapability(undefined)).toBeUndefined();
    expect(readCapability({ contentTypes: ['text/plain'], maxBytes: ATTACHMENT_MAX_BYTES, maxCount: 5 })).toBeDefined();
  });

  test('the limits an operator sees before choosing, and the file chooser filter', () => {
    expect(limitsText(CAP)).toBe('PNG, PDF; up to 2 MB each, 2 files per reply (4 MB in all).');
    expect(limitsText({ contentTypes: ['text/plain'], maxBytes: 10 * MB, maxCount: 5 })).toBe('plain text; up to 10 MB each, 5 files per reply (20 MB in all).');
    expect(acceptAttribute(CAP)).toBe('image/png,.png,application/pdf,.pdf');
  });
});

describe('a chosen file before upload', () => {
  const file = (name: string, size: number, type: string) => ({ name, size, type });
  test('fits: type, size and count within the capability', () => {
    expect(fileProblem(file('a.png', MB, 'image/png'), CAP, [])).toBeUndefined();
    expect(fileProblem(file('a.bin', MB, ''), CAP, [])).toBeUndefined(); // no declared type: the service sniffs
  });
  test('refused with the reason', () => {
    expect(fileProblem(file('a.png', MB, 'image/png'), CAP, [1, 1])).toBe('At most 2 files per reply.');
    expect(fileProblem(file('big.pdf', 2 * MB + 1, 'application/pdf'), CAP, [])).toBe('big.pdf is larger than 2 MB.');
    expect(fileProblem(file('e.png', 0, 'image/png'), CAP, [])).toBe('e.png is empty.');
    expect(fileProblem(file('a.gif', 10, 'image/gif'), CAP, [])).toBe('a.gif is GIF; this integration accepts PNG, PDF.');
    const five: AttachmentCapability = { contentTypes: ['application/pdf'], maxBytes: 10 * MB, maxCount: 5 };
    expect(fileProblem(file('c.pdf', 10 * MB, 'application/pdf'), five, [10 * MB, 1])).toBe("A reply's files may total at most 20 MB.");
  });
  test('a reply with files may have no text; without files it needs some', () => {
    expect(replyProblem('', 1)).toBeUndefined();
    expect(replyProblem('  ', 0)).toBe('Write a reply first.');
  });
});

test('upload errors say what the envelope says', () => {
  expect(uploadErrorText(415, JSON.stringify({ error: { code: 'unsupported_attachment_type', message: 'image/gif is not accepted' } }))).toBe('image/gif is not accepted (unsupported_attachment_type)');
  expect(uploadErrorText(502, '<html>')).toBe('The upload failed (HTTP 502).');
  expect(uploadErrorText(0, '')).toContain('Cannot reach');
});

test('the customer id is the service\'s (so the console finds the display name by id)', async () => {
  for (const [integration, external] of [['int-1', 'cust-1'], ['ä/ü', '😀 x'], ['', '']] as const) {
    await expect(customerDocId(integration, external)).resolves.toBe(customerIdFor(integration, external));
  }
  expect(personLabel('cust-1', 'Ada')).toBe('Ada (cust-1)');
  expect(personLabel('cust-1', undefined)).toBe('cust-1');
});
