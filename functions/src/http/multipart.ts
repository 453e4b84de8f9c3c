import busboy from 'busboy';
import { BadRequestError, PayloadTooLargeError } from '../errors';
import { IMAGE_LIMITS, assertImageCount } from '../domain/images';
import { MAX_JSON_BYTES } from './pipeline';

export interface MultipartFile {
  fieldName: string;
  data: Buffer;
}

export interface MultipartBody {
  payload: string;
  images: Buffer[];
}

/**
 * Parses a `multipart/form-data` body already buffered by the Cloud Functions runtime (so it is
 * fed to busboy with `end(rawBody)`). Exactly one text field `payload` and up to 3 file fields
 * `images`. Busboy's limits default to Infinity; each is set here and a breach is a 4xx.
 */
export function parseMultipart(contentType: string, rawBody: Buffer): Promise<MultipartBody> {
  return new Promise((resolve, reject) => {
    let bb: busboy.Busboy;
    try {
      bb = busboy({
        headers: { 'content-type': contentType },
        limits: {
          fields: 1,
          fieldSize: MAX_JSON_BYTES + 1,
          files: IMAGE_LIMITS.maxImages,
          fileSize: IMAGE_LIMITS.maxBytesEach + 1,
          parts: IMAGE_LIMITS.maxImages + 1,
          headerPairs: 20,
        },
      });
    } catch (err) {
      reject(new BadRequestError('invalid_multipart', `multipart body: ${err instanceof Error ? err.message : 'unreadable'} (a boundary parameter is required).`));
      return;
    }
    let failure: Error | undefined;
    const fail = (err: Error) => {
      failure ??= err;
    };
    let payload: string | undefined;
    const images: Buffer[] = [];

    bb.on('field', (name, value, info) => {
      if (name !== 'payload') return fail(new BadRequestError('invalid_multipart', `multipart field '${name}' is not allowed: send the JSON in 'payload' and files in 'images'.`));
      if (info.valueTruncated || Buffer.byteLength(value) > MAX_JSON_BYTES) {
        return fail(new PayloadTooLargeError('payload_too_large', `payload: exceeds ${MAX_JSON_BYTES} bytes.`));
      }
      payload = value;
    });
    bb.on('file', (name, stream, _info) => {
      const index = images.length;
      const chunks: Buffer[] = [];
      let size = 0;
      let truncated = false;
      stream.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size <= IMAGE_LIMITS.maxBytesEach) chunks.push(chunk);
      });
      stream.on('limit', () => {
        truncated = true;
      });
      stream.on('close', () => {
        if (name !== 'images') return fail(new BadRequestError('invalid_multipart', `multipart file field '${name}' is not allowed: files go in 'images'.`));
        if (truncated || size > IMAGE_LIMITS.maxBytesEach) {
          return fail(new PayloadTooLargeError('image_too_large', `images[${index}]: exceeds ${IMAGE_LIMITS.maxBytesEach} bytes.`));
        }
        images[index] = Buffer.concat(chunks, size);
      });
      images.push(Buffer.alloc(0));
    });
    bb.on('filesLimit', () => {
      try {
        assertImageCount(IMAGE_LIMITS.maxImages + 1);
      } catch (err) {
        fail(err as Error);
      }
    });
    bb.on('fieldsLimit', () => fail(new BadRequestError('invalid_multipart', "multipart body: only one text field, 'payload', is allowed.")));
    bb.on('partsLimit', () => fail(new BadRequestError('invalid_multipart', `multipart body: at most one 'payload' and ${IMAGE_LIMITS.maxImages} 'images' parts are allowed.`)));
    bb.on('error', (err: unknown) => {
      reject(failure ?? new BadRequestError('invalid_multipart', `multipart body: ${err instanceof Error ? err.message : 'malformed'}.`));
    });
    bb.on('close', () => {
      if (failure) return reject(failure);
      if (payload === undefined) return reject(new BadRequestError('invalid_multipart', "multipart body: the text field 'payload' (the message JSON) is missing."));
      resolve({ payload, images });
    });
    bb.end(rawBody);
  });
}
