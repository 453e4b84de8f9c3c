/**
 * The `multipart/form-data` body of `POST /v1/messages` (docs/contract.md#limits), parsed as the
 * service parses it (functions/src/messages/multipart.ts): exactly one text field `payload` and up
 * to 3 file fields `images`; anything else is a 400 `invalid_multipart`, a 4th image
 * `too_many_images`, an image over 10 MB 413 `image_too_large`.
 */
import { apiError, type ApiError } from './errors.js';
import { assertImageCount, IMAGE_LIMITS } from '../internal/rules/images.js';

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
      // The service's count rule (rules/images.ts), before the file is read.
      assertImageCount(images.length + 1);
      if (content.length > IMAGE_LIMITS.maxBytesEach) throw apiError(413, 'image_too_large', `images[${images.length}]: exceeds ${IMAGE_LIMITS.maxBytesEach} bytes.`);
      const type = headers.find((h) => h.toLowerCase().startsWith('content-type:'));
      images.push({ fileName, contentType: type === undefined ? 'application/octet-stream' : type.slice(type.indexOf(':') + 1).trim(), bytes: content });
    }
  }
  if (payload === undefined) throw invalid("multipart body: the text field 'payload' (the message JSON) is missing.");
  if (payload.length > MAX_JSON_BYTES) throw apiError(413, 'payload_too_large', `payload: exceeds ${MAX_JSON_BYTES} bytes.`);
  return { payload, images };
}
