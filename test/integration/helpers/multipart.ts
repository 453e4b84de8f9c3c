/**
 * Hand-built multipart/form-data bodies, so tests control every byte (boundaries, preambles,
 * part headers, invalid bytes). Pure: no I/O, usable from unit tests too.
 */
import { randomUUID } from 'node:crypto';

export interface MultipartPart {
  /** Form field name (`payload` or `images` for the messages endpoint). */
  name: string;
  data: string | Buffer;
  /** Present for file parts. */
  filename?: string;
  /** Declared Content-Type of the part (a file type, or a text field declaring its charset). */
  contentType?: string;
}

export interface ImagePart {
  data: Buffer;
  /** Declared content type (default application/octet-stream). */
  contentType?: string;
  filename?: string;
}

/** Parts of a messages request: `payload` (JSON, stringified unless a string) then each file as `images`. */
export function messageParts(payload: unknown, images: ReadonlyArray<Buffer | ImagePart> = []): MultipartPart[] {
  const parts: MultipartPart[] = [];
  if (payload !== undefined) parts.push({ name: 'payload', data: typeof payload === 'string' ? payload : JSON.stringify(payload) });
  images.forEach((image, i) => {
    const part = Buffer.isBuffer(image) ? { data: image } : image;
    parts.push({ name: 'images', data: part.data, filename: part.filename ?? `image-${i}.bin`, contentType: part.contentType ?? 'application/octet-stream' });
  });
  return parts;
}

/** Encodes a multipart/form-data body by hand, so tests control every byte. */
export function multipartBody(parts: readonly MultipartPart[], options: { boundary?: string; preamble?: Buffer } = {}): { body: Buffer; contentType: string } {
  const boundary = options.boundary ?? `----test${randomUUID().replace(/-/g, '')}`;
  const chunks: Buffer[] = [];
  if (options.preamble) chunks.push(options.preamble, Buffer.from('\r\n'));
  for (const part of parts) {
    let head = `--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"`;
    if (part.filename !== undefined) head += `; filename="${part.filename}"`;
    head += '\r\n';
    if (part.contentType !== undefined) head += `Content-Type: ${part.contentType}\r\n`;
    head += '\r\n';
    chunks.push(Buffer.from(head, 'utf8'), typeof part.data === 'string' ? Buffer.from(part.data, 'utf8') : part.data, Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}
