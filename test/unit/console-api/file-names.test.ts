/**
 * The one rule for what of a file name is shown (functions/src/contract/file-names.ts) and where
 * the service applies it: the stored upload name (console-api/rules.ts `uploadName`) and
 * `Content-Disposition` (platform/http/file-headers.ts). The claim and the console apply the same
 * function (`shownFileName`); their suites check it end to end.
 */
import { ATTACHMENT_LIMITS } from '../../../functions/src/contract';
import { DEFAULT_FILE_NAME, shownFileName, withoutInvisibleCharacters } from '../../../functions/src/contract/file-names';
import { uploadName } from '../../../functions/src/console-api/rules';
import { contentDisposition, storedFileHeaders } from '../../../functions/src/rules/file-headers';

describe('withoutInvisibleCharacters removes each class of invisible character', () => {
  test.each([
    ['bidi embeddings and overrides U+202A-202E', ['\u202A', '\u202B', '\u202C', '\u202D', '\u202E']],
    ['bidi isolates U+2066-2069', ['\u2066', '\u2067', '\u2068', '\u2069']],
    ['bidi marks U+200E, U+200F and the Arabic letter mark U+061C', ['\u200E', '\u200F', '\u061C']],
    ['zero-width space, non-joiner, joiner U+200B-200D', ['\u200B', '\u200C', '\u200D']],
    ['the byte order mark / zero-width no-break space U+FEFF and the word joiner U+2060', ['\uFEFF', '\u2060']],
    ['other format and default-ignorable characters (soft hyphen, variation selector, tag, Hangul filler, combining grapheme joiner)', ['\u00AD', '\uFE0F', '\u{E0041}', '\u3164', '\u034F']],
  ])('%s', (_class, characters) => {
    for (const c of characters) {
      expect(withoutInvisibleCharacters(`invoice${c}gnp.exe`)).toBe('invoicegnp.exe');
      expect(withoutInvisibleCharacters(`${c}${c}`)).toBe('');
    }
  });

  test('the reported name no longer reads as a PNG', () => {
    expect(withoutInvisibleCharacters('invoice\u202Egnp.exe')).toBe('invoicegnp.exe');
  });

  test('keeps everything visible: right-to-left letters, accents, emoji, spaces, punctuation', () => {
    for (const name of ['فاتورة.pdf', 'חשבונית 2026.pdf', 'Rechnung März (1).pdf', 'e\u0301te\u0301.txt', 'report 😀.png', '報告書.pdf']) {
      expect(withoutInvisibleCharacters(name)).toBe(name);
    }
  });

  test('shownFileName trims and names an empty result', () => {
    expect(shownFileName(' \u202E notes.txt \u200B')).toBe('notes.txt');
    expect(shownFileName('\u202E\u2066\u200B')).toBe(DEFAULT_FILE_NAME);
    expect(shownFileName('')).toBe('attachment');
  });
});

describe('where the service applies it', () => {
  test('the stored upload name (and so the upload answer and the claim of a new reply)', () => {
    expect(uploadName('invoice\u202Egnp.exe')).toBe('invoicegnp.exe');
    expect(uploadName('C:\\tmp\\\u2067a\u2069\u200B.pdf')).toBe('a.pdf');
    expect(uploadName('\u202E\uFEFF')).toBe(DEFAULT_FILE_NAME);
  });

  test('Content-Disposition, also for a name stored before the rule', () => {
    expect(contentDisposition('invoice\u202Egnp.exe')).toBe(`attachment; filename="invoicegnp.exe"; filename*=UTF-8''invoicegnp.exe`);
    expect(contentDisposition('\u202E\u200B', 'inline')).toBe(`inline; filename="attachment"; filename*=UTF-8''attachment`);
  });

  test("every stored file's answer is a sandbox that loads nothing, not sniffed", () => {
    const headers = storedFileHeaders('application/pdf', 'a.pdf', 'attachment');
    expect(headers['Content-Security-Policy']).toBe("sandbox; default-src 'none'");
    expect(headers['X-Content-Type-Options']).toBe('nosniff');
  });
});

describe('the shortening of a long name (docs/console.md#console-endpoints)', () => {
  test('an extension of up to 16 code points is kept', () => {
    const extension = `.${'e'.repeat(15)}`;
    const name = uploadName(`${'n'.repeat(300)}${extension}`);
    expect([...name]).toHaveLength(ATTACHMENT_LIMITS.name);
    expect(name.endsWith(`n${extension}`)).toBe(true);
  });

  test('what follows the last dot is cut with the rest when it is longer than 16 code points', () => {
    const name = uploadName(`${'n'.repeat(300)}.${'e'.repeat(16)}`);
    expect(name).toBe('n'.repeat(ATTACHMENT_LIMITS.name));
  });

  test('invisible characters are removed before the name is measured', () => {
    const name = uploadName(`${'n\u200B'.repeat(200)}.pdf`);
    expect(name).toBe(`${'n'.repeat(200)}.pdf`);
  });
});
