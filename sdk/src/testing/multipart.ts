/**
 * The `multipart/form-data` body of `POST /v1/messages` (docs/contract.md#limits), parsed as the
 * service parses it (functions/src/messages/multipart.ts): exactly one text field `payload` and up
 * to 3 file fields `images`; anything else is a 400 `invalid_multipart`, a 4th image
 * `too_many_images`, an image over 10 MB 413 `image_too_large`.
 */
import { ApiError } from './rules.js';

export const IMAGE_LIMITS = { maxImages: 3, maxBytesEach: 10 * 1024 * 1024, maxBytesTotal: 20 * 1024 * 1024 } as const;
/** docs/contract.md#limits: the JSON body (and the multipart `payload`) is at most 65536 bytes. */
export const MAX_JSON_BYTES = 65_536;

export interface MultipartBody {
  payload: Buffer;
  images: { fileName: string; contentType: string; bytes: Buffer }[];
}

const invalid = (message: string): ApiError => new ApiError(400, 'invalid_multipart', message);

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
      if (images.length >= IMAGE_LIMITS.maxImages) throw new ApiError(400, 'too_many_images', `images: ${images.length + 1} images; at most ${IMAGE_LIMITS.maxImages} images per message`);
      if (content.length > IMAGE_LIMITS.maxBytesEach) throw new ApiError(413, 'image_too_large', `images[${images.length}]: exceeds ${IMAGE_LIMITS.maxBytesEach} bytes.`);
      const type = headers.find((h) => h.toLowerCase().startsWith('content-type:'));
      images.push({ fileName, contentType: type === undefined ? 'application/octet-stream' : type.slice(type.indexOf(':') + 1).trim(), bytes: content });
    }
  }
  if (payload === undefined) throw invalid("multipart body: the text field 'payload' (the message JSON) is missing.");
  if (payload.length > MAX_JSON_BYTES) throw new ApiError(413, 'payload_too_large', `payload: exceeds ${MAX_JSON_BYTES} bytes.`);
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
  if (bytes.length === 0) throw new ApiError(400, 'unsupported_image', `${fieldPath}: image is empty; ${ACCEPTED}`);
  if (PNG.every((b, i) => bytes[i] === b)) return 'image/png';
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg';
  if (bytes.subarray(0, 4).toString('latin1') === 'RIFF' && bytes.subarray(8, 12).toString('latin1') === 'WEBP') return 'image/webp';
  throw new ApiError(400, 'unsupported_image', `${fieldPath}: file is not a recognized image format; ${ACCEPTED}`);
}
