/**
 * The headers of an answer that is a stored file's bytes (a connector's attachment download, the
 * console's media): its type (text with its charset), a safe Content-Disposition, never a shared
 * cache, never sniffed, and never a document of the origin that serves it (a sandbox CSP). Pure.
 */
import { withoutInvisibleCharacters } from '../contract/file-names';

/**
 * The Content-Security-Policy of every stored file: should a browser ever render one as a document
 * (opened directly, a type misread), it is a sandbox of an opaque origin without scripts, forms or
 * plugins, and may load nothing (docs/decisions.md#the-console-function-uploads-media-unused-uploads).
 */
const STORED_FILE_CSP = "sandbox; default-src 'none'";

/**
 * A file name safe in a header (docs/contract.md#fetch-an-attachment): no bidi controls or
 * invisible characters (removed: functions/src/contract/file-names.ts, also from names stored before that
 * rule), no control characters, quotes, backslashes or path separators; the ASCII fallback replaces the rest, `filename*`
 * (RFC 6266 / RFC 8187) carries the name in UTF-8. `inline` for what the console shows in the
 * page (its media), `attachment` for a download. Pure.
 */
export function contentDisposition(name: string, disposition: 'attachment' | 'inline' = 'attachment'): string {
  const unsafe = (c: string): boolean => { const code = c.codePointAt(0) ?? 0; return code < 0x20 || code === 0x7f || c === '"' || c === '\\' || c === '/'; };
  const cleaned = [...withoutInvisibleCharacters(name)].map((c) => (unsafe(c) ? '_' : c)).join('').trim() || 'attachment';
  const ascii = [...cleaned].map((c) => (/[\u0020-\u007e]/u.test(c) ? c : '_')).join('');
  const encoded = encodeURIComponent(cleaned).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `${disposition}; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

/** The headers every stored-file answer carries, for a file of `contentType` named `name`. */
export function storedFileHeaders(contentType: string, name: string, disposition: 'attachment' | 'inline'): Record<string, string> {
  return {
    'Content-Type': contentType === 'text/plain' ? 'text/plain; charset=utf-8' : contentType,
    'Content-Disposition': contentDisposition(name, disposition),
    'Cache-Control': 'private, no-store',
    'X-Content-Type-Options': 'nosniff',
    'Content-Security-Policy': STORED_FILE_CSP,
  };
}

/** Base64 of the bytes a lowercase hex string spells (no Buffer: the rules run outside Node too). */
function hexToBase64(hex: string): string {
  const bytes = (hex.match(/../g) ?? []).map((pair) => String.fromCharCode(parseInt(pair, 16)));
  return btoa(bytes.join(''));
}

/**
 * The headers of a connector's attachment download (docs/contract.md#fetch-an-attachment): a
 * stored file's (`storedFileHeaders`, as a download), its SHA-256 as the strong `ETag` and as
 * `Repr-Digest` (RFC 9530). The service's download and the SDK's test service answer these.
 */
export function attachmentDownloadHeaders(file: { contentType: string; name: string; sha256: string }): Record<string, string> {
  return { ...storedFileHeaders(file.contentType, file.name, 'attachment'), ETag: `"${file.sha256}"`, 'Repr-Digest': `sha-256=:${hexToBase64(file.sha256)}:` };
}
