/**
 * The one rule for what of a file name is shown (docs/console.md#console-endpoints), shared by the
 * service (the stored upload name, the claim's `message.attachments[].name`, `Content-Disposition`)
 * and the console (every name it displays). Pure; the contract's index re-exports it.
 */

/**
 * Characters that change how a name looks without being seen themselves: the Unicode format
 * characters (general category Cf: the bidi embeddings and overrides U+202A-202E, the isolates
 * U+2066-2069, the marks U+200E/U+200F and U+061C, the zero-width U+200B-200D, U+2060, U+FEFF,
 * the soft hyphen, tags) and the other default-ignorable code points (variation selectors, the
 * combining grapheme joiner, Hangul fillers). A right-to-left override makes `invoice‮gnp.exe`
 * read "invoiceexe.png"; a zero-width character makes two names that look the same differ.
 */
const INVISIBLE = /[\p{Cf}\p{Default_Ignorable_Code_Point}]/gu;

/**
 * `name` without bidi controls and invisible characters (`INVISIBLE`): what a reader sees is then
 * what the name is. Everything visible is kept, right-to-left letters included (their direction
 * comes from the letters, not from controls). May return an empty string; each caller names an
 * empty result (`attachment`).
 */
export function withoutInvisibleCharacters(name: string): string {
  return name.replace(INVISIBLE, '');
}

/** The name of a file whose name is empty once cleaned. */
export const DEFAULT_FILE_NAME = 'attachment';

/**
 * A stored or given file name as it is shown and handed on (the claim, the console): without
 * invisible characters (`withoutInvisibleCharacters`), trimmed, `attachment` when nothing is left.
 * Also applied on read, so that names stored before the rule are shown honestly too.
 */
export function shownFileName(name: string): string {
  return withoutInvisibleCharacters(name).trim() || DEFAULT_FILE_NAME;
}
