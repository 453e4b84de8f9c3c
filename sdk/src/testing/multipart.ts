/**
 * The `multipart/form-data` body of `POST /v1/messages` (docs/contract.md#limits), parsed as the
 * service parses it (functions/src/messages/multipart.ts): exactly one text field `payload` and up
 * to 3 file fields `images`; anything else is a 400 `invalid_multipart`, a 4th image
 * `too_many_images`, an image over 10 MB 413 `image_too_large`.
 */
import { apiError, type ApiError } from './errors.js';

export const IMAGE_LIMITS = { maxImages: 3, maxBytesEach: 10 * 1024 * 1024, maxBytesTotal: 20 * 1024 * 1024 } as const;
/** docs/contract.md#limits: the JSON body (and the multipart `payload`) is at most 65536 bytes. */
export const MAX_JSON_BYTES = 65_536;

export interface MultipartBody {
  payload: Buffer;
  images: { fileName: string; contentType: string; bytes: Buffer }[];
}

const invalid = (message: string): ApiError => apiError(400, 'invalid_multipart', message);

function param(header: string, name: string): string | undefined {
  const match = new RegExp(`(?:^|;)\\s*${name}="([^"]*)"|(?:^|;)\\s*${name}=([^;\\s]+)`, 'i').exec(header);
  return match?.[1] ?? match?.[2];
}

/** Parses the buffered body; `contentType` carries the boundary. */
export function parseMultipart(contentType: string, raw: Buffer): MultipartBody {
  const boundary = param(contentType, 'boundary');
  if (boundary === undefined || boundary === '') throw invalid('multipart body: Multipart: Boundary not found (a boundary parameter is required).');
  const delimiter = Buffer.from(`--${boundary}`);
  let position = raw.indexOf(delimiter);
  if (position < 0) throw invalid('multipart body: Unexpected end of form.');
  let payload: Buffer | undefined;
  const images: MultipartBody['images'] = [];
  let fields = 0;
  for (;;) {
    position += delimiter.length;
    if (raw.subarray(position, position + 2).toString('latin1') === '--') break;
    const headerEnd = raw.indexOf('\r\n\r\n', position);
    if (headerEnd < 0) throw invalid('multipart body: Unexpected end of form.');
    const headers = raw.subarray(position, headerEnd).toString('latin1').split('\r\n').filter((l) => l !== '');
    const next = raw.indexOf(Buffer.concat([Buffer.from('\r\n'), delimiter]), headerEnd + 4);
    if (next < 0) throw invalid('multipart body: Unexpected end of form.');
    const content = raw.subarray(headerEnd + 4, next);
    position = next + 2;
    const disposition = headers.find((h) => h.toLowerCase().startsWith('content-disposition:')) ?? '';
    const name = param(disposition, 'name') ?? '';
    const fileName = param(disposition, 'filename');
    if (fileName === undefined) {
      fields += 1;
      if (fields > 1) throw invalid("multipart body: only one text field, 'payload', is allowed.");
      if (name !== 'payload') throw invalid(`multipart field '${name}' is not allowed: send the JSON in 'payload' and files in 'images'.`);
      payload = content;
    } else {
      if (name !== 'images') throw invalid(`multipart file field '${name}' is not allowed: files go in 'images'.`);
      if (images.length >= IMAGE_LIMITS.maxImages) throw apiError(400, 'too_many_images', `images: ${images.length + 1} images; at most ${IMAGE_LIMITS.maxImages} images per message`);
      if (content.length > IMAGE_LIMITS.maxBytesEach) throw apiError(413, 'image_too_large', `images[${images.length}]: exceeds ${IMAGE_LIMITS.maxBytesEach} bytes.`);
      const type = headers.find((h) => h.toLowerCase().startsWith('content-type:'));
      images.push({ fileName, contentType: type === undefined ? 'application/octet-stream' : type.slice(type.indexOf(':') + 1).trim(), bytes: content });
    }
  }
  if (payload === undefined) throw invalid("multipart body: the text field 'payload' (the message JSON) is missing.");
  if (payload.length > MAX_JSON_BYTES) throw apiError(413, 'payload_too_large', `payload: exceeds ${MAX_JSON_BYTES} bytes.`);
  return { payload, images };
}

const PNG = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const ACCEPTED = 'only PNG, JPEG and static (non-animated) WebP images are accepted';

/**
 * The image's content type judged by its bytes (the declared part type is ignored), or a 400
 * `unsupported_image`. The service also decodes the header's dimensions (functions/src/messages/
 * images.ts); the test service checks the signature only.
 */
export function sniffImage(bytes: Buffer, fieldPath: string): 'image/png' | 'image/jpeg' | 'image/webp' {
  if (bytes.length === 0) throw apiError(400, 'unsupported_image', `${fieldPath}: image is empty; ${ACCEPTED}`);
  if (PNG.every((b, i) => bytes[i] === b)) return 'image/png';
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg';
  if (bytes.subarray(0, 4).toString('latin1') === 'RIFF' && bytes.subarray(8, 12).toString('latin1') === 'WEBP') return 'image/webp';
  throw apiError(400, 'unsupported_image', `${fieldPath}: file is not a recognized image format; ${ACCEPTED}`);
}

/**
 * The image's dimensions from its header, as the service reads them (functions/src/messages/
 * images.ts: PNG's IHDR, JPEG's SOF segment, WebP's VP8 / VP8L / VP8X chunk); a header too short
 * to hold them, or a zero dimension, is a 400 `invalid_image`. The service validates the rest of
 * the file further; the test service reads the dimensions only.
 */
export function imageSize(bytes: Buffer, contentType: 'image/png' | 'image/jpeg' | 'image/webp', fieldPath: string): { width: number; height: number } {
  const invalid = (why: string): ApiError => apiError(400, 'invalid_image', `${fieldPath}: ${why}`);
  const checked = (size: { width: number; height: number }): { width: number; height: number } => {
    if (size.width === 0 || size.height === 0) throw invalid('the image has a zero width or height');
    return size;
  };
  if (contentType === 'image/png') {
    if (bytes.length < 24 || bytes.subarray(12, 16).toString('latin1') !== 'IHDR') throw invalid('the PNG has no IHDR chunk');
    return checked({ width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) });
  }
  if (contentType === 'image/jpeg') {
    let pos = 2;
    while (pos + 4 <= bytes.length) {
      if (bytes[pos] !== 0xff) throw invalid('the JPEG has a corrupt segment');
      const marker = bytes[pos + 1] ?? 0;
      if (marker === 0xff) {
        pos += 1; // fill byte
        continue;
      }
      const length = bytes.readUInt16BE(pos + 2);
      // SOF0..SOF15 except DHT (C4), JPG (C8) and DAC (CC): precision(1) height(2) width(2).
      if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
        if (pos + 9 > bytes.length) break;
        return checked({ width: bytes.readUInt16BE(pos + 7), height: bytes.readUInt16BE(pos + 5) });
      }
      pos += 2 + length;
    }
    throw invalid('the JPEG has no frame header (SOF)');
  }
  const chunk = bytes.subarray(12, 16).toString('latin1');
  if (chunk === 'VP8 ' && bytes.length >= 30) return checked({ width: bytes.readUInt16LE(26) & 0x3fff, height: bytes.readUInt16LE(28) & 0x3fff });
  if (chunk === 'VP8L' && bytes.length >= 25 && bytes[20] === 0x2f) {
    const bits = bytes.readUInt32LE(21);
    return checked({ width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 });
  }
  if (chunk === 'VP8X' && bytes.length >= 30) return checked({ width: bytes.readUIntLE(24, 3) + 1, height: bytes.readUIntLE(27, 3) + 1 });
  throw invalid('the WebP has no VP8, VP8L or VP8X chunk');
}
