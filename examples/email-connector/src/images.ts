/** Which attachments of an incoming mail go to the API as images (pure). */
import type { OmittedAttachment } from './text.js';

/** The API's image limits: at most 3 per message, 10 MB each, 20 MB together. */
const IMAGE_LIMITS = { maxImages: 3, maxBytesEach: 10 * 1024 * 1024, maxBytesTotal: 20 * 1024 * 1024 } as const;

export type ImageContentType = 'image/png' | 'image/jpeg' | 'image/webp';

/**
 * The image type of some bytes, judged by their signature as the service does (a declared
 * content type can lie). Animated WebP is not accepted by the service, so it is not an image here.
 */
export function sniffImageType(bytes: Uint8Array): ImageContentType | undefined {
  const starts = (sig: readonly number[], at = 0) => sig.every((b, i) => bytes[at + i] === b);
  if (starts([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png';
  if (starts([0xff, 0xd8, 0xff])) return 'image/jpeg';
  if (starts([0x52, 0x49, 0x46, 0x46]) && starts([0x57, 0x45, 0x42, 0x50], 8)) {
    // VP8X extended header: flags byte at offset 20, bit 1 = animation.
    const animated = starts([0x56, 0x50, 0x38, 0x58], 12) && ((bytes[20] ?? 0) & 0x02) !== 0;
    return animated ? undefined : 'image/webp';
  }
  return undefined;
}

/** An attachment as the connector sees it (a subset of mailparser's). */
export interface MailAttachment {
  filename?: string | undefined;
  contentType: string;
  content: Uint8Array;
}

export interface SelectedImage {
  data: Uint8Array;
  contentType: ImageContentType;
  filename: string;
}

/**
 * Splits the attachments into the images to send (PNG/JPEG/static WebP by their bytes, in mail
 * order, at most 3, within the size limits) and the rest, each with the reason it is not sent.
 */
export function selectImages(attachments: readonly MailAttachment[]): { images: SelectedImage[]; omitted: OmittedAttachment[] } {
  const images: SelectedImage[] = [];
  const omitted: OmittedAttachment[] = [];
  let total = 0;
  attachments.forEach((attachment, index) => {
    const filename = attachment.filename?.trim() || `attachment-${index + 1}`;
    const size = attachment.content.byteLength;
    const describe = (reason: string): OmittedAttachment => ({ filename, contentType: attachment.contentType, size, reason });
    const type = sniffImageType(attachment.content);
    if (type === undefined) return void omitted.push(describe('not a PNG, JPEG or WebP image'));
    if (images.length >= IMAGE_LIMITS.maxImages) return void omitted.push(describe(`more than ${IMAGE_LIMITS.maxImages} images`));
    if (size > IMAGE_LIMITS.maxBytesEach) return void omitted.push(describe('over 10 MB'));
    if (total + size > IMAGE_LIMITS.maxBytesTotal) return void omitted.push(describe('images over 20 MB together'));
    total += size;
    images.push({ data: attachment.content, contentType: type, filename });
  });
  return { images, omitted };
}
