/**
 * The content type of an uploaded reply attachment, from its bytes (docs/contract.md#attachments):
 * the declared type is never trusted. PNG, JPEG, static WebP, GIF and PDF by their signatures;
 * `text/plain` for valid UTF-8 without NUL (a file that is none of these is refused). Pure.
 */
import type { AttachmentContentType } from '../contract';

const startsWith = (bytes: Uint8Array, signature: readonly number[], at = 0): boolean =>
  bytes.length >= at + signature.length && signature.every((b, i) => bytes[at + i] === b);
const ascii = (text: string): number[] => [...text].map((c) => c.charCodeAt(0));

/** A WebP without animation: a `VP8 `/`VP8L` image, or `VP8X` whose animation flag (bit 1 of the flags byte) is clear. */
function isStaticWebp(bytes: Uint8Array): boolean | null {
  if (!startsWith(bytes, ascii('RIFF')) || !startsWith(bytes, ascii('WEBP'), 8)) return null;
  if (startsWith(bytes, ascii('VP8 '), 12) || startsWith(bytes, ascii('VP8L'), 12)) return true;
  if (startsWith(bytes, ascii('VP8X'), 12) && bytes.length > 20) return ((bytes[20] ?? 0) & 0x02) === 0;
  return false;
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/** Valid UTF-8 without a NUL byte. */
function isPlainText(bytes: Uint8Array): boolean {
  if (bytes.includes(0)) return false;
  try {
    utf8.decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/**
 * The attachment type `bytes` are, or null when they are none of the six (including an animated
 * WebP and an empty file).
 */
export function sniffAttachmentType(bytes: Uint8Array): AttachmentContentType | null {
  if (bytes.length === 0) return null;
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png';
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return 'image/jpeg';
  if (startsWith(bytes, ascii('GIF87a')) || startsWith(bytes, ascii('GIF89a'))) return 'image/gif';
  if (startsWith(bytes, ascii('%PDF-'))) return 'application/pdf';
  const webp = isStaticWebp(bytes);
  if (webp !== null) return webp ? 'image/webp' : null;
  return isPlainText(bytes) ? 'text/plain' : null;
}
