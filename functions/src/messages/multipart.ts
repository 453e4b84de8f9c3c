import busboy from 'busboy';
import { BadRequestError, PayloadTooLargeError } from '../rules/errors';
import { IMAGE_LIMITS, assertImageCount } from '../rules/images';
import { MAX_JSON_BYTES } from '../platform/http/pipeline';

export interface MultipartBody {
  /** The raw bytes of the `payload` field (JSON, to be decoded strictly as UTF-8). */
  payload: Buffer;
  images: Buffer[];
}

interface RawPayload {
  /** The `payload` field as busboy decoded it (see `payloadBytes`). */
  value: string;
  truncated: boolean;
}

const NON_ASCII = /[\u0080-\uffff]/;
const BEYOND_LATIN1 = /[\u0100-\uffff]/;

/**
 * Busboy turns text fields into strings: with the part's declared charset, or else `defCharset`.
 * To validate UTF-8 strictly (invalid UTF-8 is a 400, not silently U+FFFD), fields without a
 * declared charset are read as latin1, which maps bytes to code units one to one. Which case a
 * value came from is only ambiguous when it is non-ASCII and within latin1; then a second pass
 * with another default tells: only a declared charset yields the same string under both.
 * A declared charset is honoured as declared (RFC 7578 4.4).
 */
async function payloadBytes(raw: RawPayload, contentType: string, rawBody: Buffer): Promise<Buffer> {
  const { value } = raw;
  if (!NON_ASCII.test(value)) return Buffer.from(value, 'latin1');
  if (BEYOND_LATIN1.test(value)) return declared(value, rawBody); // only a declared charset gives these
  const underUtf8Default = await readPayloadField(contentType, rawBody, 'utf8');
  return underUtf8Default === value ? Buffer.from(value, 'utf8') : Buffer.from(value, 'latin1');
}

/**
 * A value decoded with the part's declared charset. Busboy decodes leniently, so bytes invalid in
 * that charset (e.g. invalid UTF-8 under `charset=utf-8`) became U+FFFD. A U+FFFD that really was
 * sent is in the body as its UTF-8 bytes, so the value re-encoded must appear there verbatim;
 * otherwise something was replaced, and that is invalid input, never silently U+FFFD.
 */
function declared(value: string, rawBody: Buffer): Buffer {
  const bytes = Buffer.from(value, 'utf8');
  if (value.includes('\uFFFD') && !rawBody.includes(bytes)) {
    throw new BadRequestError('invalid_json', 'payload: is not valid in its declared charset.');
  }
  return bytes;
}

/** Second, light pass: only the `payload` field (file parts are skipped unread). */
function readPayloadField(contentType: string, rawBody: Buffer, defCharset: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    let payload: string | undefined;
    const bb = busboy({ headers: { 'content-type': contentType }, defCharset, limits: { fields: 1, fieldSize: MAX_JSON_BYTES + 1, parts: IMAGE_LIMITS.maxImages + 2 } });
    bb.on('field', (name, value) => {
      if (name === 'payload') payload ??= value;
    });
    bb.on('error', () => resolve(undefined));
    bb.on('close', () => resolve(payload));
    bb.end(rawBody);
  });
}

/**
 * Parses a `multipart/form-data` body already buffered by the Cloud Functions runtime (so it is
 * fed to busboy with `end(rawBody)`). Exactly one text field `payload` and up to 3 file fields
 * `images`. Busboy's limits default to Infinity; each is set here and a breach is a 4xx.
 */
export async function parseMultipart(contentType: string, rawBody: Buffer): Promise<MultipartBody> {
  const { payload, images } = await parseParts(contentType, rawBody);
  const bytes = payload.truncated ? null : await payloadBytes(payload, contentType, rawBody);
  if (bytes === null || bytes.length > MAX_JSON_BYTES) {
    throw new PayloadTooLargeError('payload_too_large', `payload: exceeds ${MAX_JSON_BYTES} bytes.`);
  }
  return { payload: bytes, images };
}

/**
 * One buffer of a file's chunks. Busboy is fed the whole buffered body at once, so the chunks are
 * consecutive views of that body: then the file is one view too (no copy; a 20 MB upload would
 * otherwise hold its images twice). Anything else (chunks from separate buffers) is concatenated.
 */
export function joinChunks(chunks: readonly Buffer[], size: number): Buffer {
  const first = chunks[0];
  if (first === undefined) return Buffer.alloc(0);
  let end = first.byteOffset + first.length;
  for (const chunk of chunks.slice(1)) {
    if (chunk.buffer !== first.buffer || chunk.byteOffset !== end) return Buffer.concat(chunks, size);
    end += chunk.length;
  }
  return Buffer.from(first.buffer, first.byteOffset, end - first.byteOffset);
}

function parseParts(contentType: string, rawBody: Buffer): Promise<{ payload: RawPayload; images: Buffer[] }> {
  return new Promise((resolve, reject) => {
    let bb: busboy.Busboy;
    try {
      bb = busboy({
        headers: { 'content-type': contentType },
        // Fields without a declared charset arrive byte for byte (see payloadBytes).
        defCharset: 'latin1',
        limits: {
          fields: 1,
          fieldSize: MAX_JSON_BYTES + 1,
          files: IMAGE_LIMITS.maxImages,
          fileSize: IMAGE_LIMITS.maxBytesEach + 1,
          // busboy emits 'partsLimit' when the count *reaches* the limit (and stops parsing there),
          // so the limit is one above the largest valid body (payload + maxImages files): a 5th part
          // is still parsed, so a 4th image is reported as too_many_images by 'filesLimit' first.
          parts: IMAGE_LIMITS.maxImages + 2,
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
    let payload: RawPayload | undefined;
    const images: Buffer[] = [];

    bb.on('field', (name, value, info) => {
      if (name !== 'payload') return fail(new BadRequestError('invalid_multipart', `multipart field '${name}' is not allowed: send the JSON in 'payload' and files in 'images'.`));
      // The byte limit is checked on the decoded bytes (parseMultipart); busboy flags anything longer.
      payload = { value, truncated: info.valueTruncated };
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
      // A body that ends inside a file part makes busboy destroy the file stream with an error
      // ('Unexpected end of form'); unhandled, that error would crash the whole instance.
      stream.on('error', (err: Error) => fail(new BadRequestError('invalid_multipart', `multipart body: ${err.message}.`)));
      stream.on('close', () => {
        if (name !== 'images') return fail(new BadRequestError('invalid_multipart', `multipart file field '${name}' is not allowed: files go in 'images'.`));
        if (truncated || size > IMAGE_LIMITS.maxBytesEach) {
          return fail(new PayloadTooLargeError('image_too_large', `images[${index}]: exceeds ${IMAGE_LIMITS.maxBytesEach} bytes.`));
        }
        images[index] = joinChunks(chunks, size);
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
