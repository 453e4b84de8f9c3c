/**
 * Reply attachments, the pure part (no DOM, no Firebase): the integration's capability
 * (`replies.attachments`, docs/data-model.md; its limits and parser are the contract module's) and
 * its checks in words, as the rules make them, the limits an
 * operator is shown before uploading, what the console checks of a chosen file before it uploads
 * it (the service sniffs the bytes and decides), and the media URL of a stored file.
 * Unit-tested in test/unit/console/attachments.test.ts.
 */

import { ATTACHMENT_CONTENT_TYPES, ATTACHMENT_LIMITS, parseAttachmentCapability, type AttachmentCapability, type AttachmentContentType } from '../../functions/src/contract';
import { shownFileName } from '../../functions/src/contract/file-names';

export { ATTACHMENT_CONTENT_TYPES, type AttachmentCapability };
/** `maxBytes` of one file is at most this (10 MB; the contract's). */
export const ATTACHMENT_MAX_BYTES = ATTACHMENT_LIMITS.maxBytesPerFile;
/** `maxCount` is 1..this. */
export const ATTACHMENT_MAX_COUNT = ATTACHMENT_LIMITS.maxCount;
/** A reply's files total at most this (20 MB), whatever the capability says. */
const REPLY_ATTACHMENTS_MAX_TOTAL_BYTES = ATTACHMENT_LIMITS.maxTotalBytes;

/** A file uploaded for a reply: the service's 201 answer, which the reply's `attachments` repeat. */
export interface UploadedAttachment {
  attachmentId: string;
  name: string;
  contentType: string;
  size: number;
  sha256: string;
}

const LABELS: Record<AttachmentContentType, string> = {
  'image/png': 'PNG',
  'image/jpeg': 'JPEG',
  'image/webp': 'WebP (static)',
  'image/gif': 'GIF',
  'application/pdf': 'PDF',
  'text/plain': 'plain text',
};

/** "PNG", "PDF", ... for people. */
export function contentTypeLabel(type: string): string {
  return (LABELS as Record<string, string | undefined>)[type] ?? type;
}

/** The capability of an integration document's `replies.attachments`, or undefined (text only) when absent or not valid. */
export function readCapability(value: unknown): AttachmentCapability | undefined {
  return parseAttachmentCapability(value) ?? undefined;
}

/** Why a capability would be refused (the rules' checks, in words), or undefined when it is valid. */
export function capabilityProblem(c: { contentTypes?: unknown; maxBytes?: unknown; maxCount?: unknown }): string | undefined {
  const types = c.contentTypes;
  if (!Array.isArray(types) || types.length === 0) return 'Choose at least one file type.';
  if (!types.every((t) => (ATTACHMENT_CONTENT_TYPES as readonly unknown[]).includes(t)) || new Set(types).size !== types.length) return 'Only the listed file types, each once.';
  if (typeof c.maxBytes !== 'number' || !Number.isSafeInteger(c.maxBytes) || c.maxBytes < 1 || c.maxBytes > ATTACHMENT_MAX_BYTES) return `The size limit is 1 byte to ${formatMegabytes(ATTACHMENT_MAX_BYTES)} per file.`;
  if (typeof c.maxCount !== 'number' || !Number.isSafeInteger(c.maxCount) || c.maxCount < 1 || c.maxCount > ATTACHMENT_MAX_COUNT) return `The number of files is 1 to ${ATTACHMENT_MAX_COUNT} per reply.`;
  return undefined;
}

/** Megabytes for people ("10 MB", "2.5 MB"); 1 MB = 1024 × 1024 bytes, as the limits are set. */
function formatMegabytes(bytes: number): string {
  const mb = bytes / (1024 * 1024);
  return `${Number.isInteger(mb) ? mb : mb.toFixed(1)} MB`;
}

/** What an operator is told before choosing files: "PNG, PDF; up to 10 MB each, 3 files per reply (20 MB in all)." */
export function limitsText(c: AttachmentCapability): string {
  const total = Math.min(REPLY_ATTACHMENTS_MAX_TOTAL_BYTES, c.maxBytes * c.maxCount);
  return `${c.contentTypes.map(contentTypeLabel).join(', ')}; up to ${formatMegabytes(c.maxBytes)} each, ${c.maxCount} file${c.maxCount === 1 ? '' : 's'} per reply (${formatMegabytes(total)} in all).`;
}

/** The `accept` attribute of the file input: the capability's types plus their usual extensions. */
export function acceptAttribute(c: AttachmentCapability): string {
  const extensions: Record<AttachmentContentType, string> = { 'image/png': '.png', 'image/jpeg': '.jpg,.jpeg', 'image/webp': '.webp', 'image/gif': '.gif', 'application/pdf': '.pdf', 'text/plain': '.txt,.log,.csv' };
  return c.contentTypes.flatMap((t) => [t, extensions[t]]).join(',');
}

/**
 * Why a chosen file cannot be attached next to `current` (sizes of the files already attached), or
 * undefined. The declared type is only a hint (an unknown one is left to the service, which sniffs
 * the bytes); size and count are exact.
 */
export function fileProblem(file: { name: string; size: number; type: string }, c: AttachmentCapability, current: readonly number[]): string | undefined {
  const name = shownFileName(file.name);
  if (current.length >= c.maxCount) return `At most ${c.maxCount} file${c.maxCount === 1 ? '' : 's'} per reply.`;
  if (file.size === 0) return `${name} is empty.`;
  if (file.size > c.maxBytes) return `${name} is larger than ${formatMegabytes(c.maxBytes)}.`;
  const total = current.reduce((a, b) => a + b, 0) + file.size;
  if (total > REPLY_ATTACHMENTS_MAX_TOTAL_BYTES) return `A reply's files may total at most ${formatMegabytes(REPLY_ATTACHMENTS_MAX_TOTAL_BYTES)}.`;
  if (file.type !== '' && !(c.contentTypes as readonly string[]).includes(file.type)) return `${name} is ${contentTypeLabel(file.type)}; this integration accepts ${c.contentTypes.map(contentTypeLabel).join(', ')}.`;
  return undefined;
}

/** The human sentence of an upload's error envelope (`{"error":{"code","message"}}`), or of a non-JSON answer. */
export function uploadErrorText(status: number, body: string): string {
  try {
    const parsed = JSON.parse(body) as { error?: { code?: unknown; message?: unknown } };
    const code = typeof parsed.error?.code === 'string' ? parsed.error.code : undefined;
    const message = typeof parsed.error?.message === 'string' ? parsed.error.message : undefined;
    if (code !== undefined || message !== undefined) return `${message ?? 'Refused'}${code === undefined ? '' : ` (${code})`}`;
  } catch {
    // not the envelope (e.g. a proxy's page)
  }
  if (status === 0) return 'Cannot reach the service; check the connection and try again.';
  return `The upload failed (HTTP ${status}).`;
}

/** Images are shown as thumbnails; the other types as a link that opens the file. */
export function isImage(contentType: string | undefined): boolean {
  return typeof contentType === 'string' && contentType.startsWith('image/');
}
