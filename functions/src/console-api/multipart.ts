/**
 * The body of `POST /console/v1/attachments` (docs/console.md#console-endpoints): `multipart/form-data`
 * with the text fields `workspaceId` and `conversationId` and one file field `file`. Both runtimes
 * buffer the body before the function runs (`req.rawBody`), so busboy is fed it at once and the
 * file's chunks are views of that buffer (`joinChunks`: the file is not copied). Every limit of
 * busboy is set; a breach, an unknown field or a second file is a 4xx, never a partial parse.
 */
import busboy from 'busboy';
import { ATTACHMENT_LIMITS } from '../contract';
import { BadRequestError, PayloadTooLargeError } from '../rules/errors';
import { joinChunks } from '../messages/multipart';

/** The multipart framing allowed beyond the file (two short fields, part headers, boundaries). */
const UPLOAD_FRAMING_BYTES = 64 * 1024;
/** The largest body read at all: a maximum-size file and its framing. A larger body is refused unread. */
const MAX_UPLOAD_BODY_BYTES = ATTACHMENT_LIMITS.maxBytesPerFile + UPLOAD_FRAMING_BYTES;

export interface UploadBody {
  workspaceId: string;
  conversationId: string;
  file: {
    bytes: Buffer;
    /** The part's file name as sent (UTF-8), if any. */
    filename: string | undefined;
    /** The part's declared Content-Type (never trusted: compared with the bytes). */
    declaredType: string | undefined;
  };
}

const FIELDS = ['workspaceId', 'conversationId'] as const;
/** A text field's longest value: a document id is at most 1500 bytes. */
const MAX_FIELD_BYTES = 1500;

/**
 * The body with the file part's missing or empty file name read as `.`. A browser sends
 * `filename=""` for a File whose name is empty, Node's FormData leaves the parameter out; busboy
 * takes a part without a non-empty `filename` for a text field, which refused the upload as "too
 * many text fields" although the part is the file. busboy reads `.` as a file with an empty name
 * (its basename), which ./rules.ts `uploadName` names `attachment` as documented. Only the part
 * headers change (a delimiter never occurs inside a part), and only the Content-Disposition of a
 * part named `file`; the body is returned as it is when there is nothing to change.
 */
export function withEmptyFileNamesNamed(contentType: string, body: Buffer): Buffer {
  const boundary = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  const value = boundary?.[1] ?? boundary?.[2];
  if (value === undefined) return body;
  const delimiter = Buffer.from(`--${value}`, 'latin1');
  const pieces: Buffer[] = [];
  let copied = 0;
  let from = 0;
  for (let at = body.indexOf(delimiter); at !== -1; at = body.indexOf(delimiter, from)) {
    from = at + delimiter.length;
    if (at !== 0 && (body[at - 1] !== 0x0a || body[at - 2] !== 0x0d)) continue; // not at a line start: not a delimiter
    const headerEnd = body.indexOf('\r\n\r\n', from, 'latin1');
    if (headerEnd === -1) break;
    const header = body.toString('latin1', from, headerEnd);
    const renamed = header.replace(/^(content-disposition:[^\r\n]*)$/gim, (line: string) => {
      if (!/;\s*name\s*=\s*(?:"file"|file)\s*(?:;|$)/i.test(line)) return line;
      if (/;\s*filename\*?\s*=/i.test(line)) return line.replace(/(;\s*filename\s*=\s*)""/i, '$1"."');
      return `${line}; filename="."`;
    });
    if (renamed !== header) {
      pieces.push(body.subarray(copied, from), Buffer.from(renamed, 'latin1'));
      copied = headerEnd;
    }
    from = headerEnd;
  }
  if (pieces.length === 0) return body;
  pieces.push(body.subarray(copied));
  return Buffer.concat(pieces);
}

const invalid = (detail: string) => new BadRequestError('invalid_multipart', `multipart body: ${detail} (send the text fields workspaceId and conversationId and one file field 'file').`);

/** Parses the upload's body; throws the 400/413 of the first problem. */
export function parseUploadBody(contentType: string, rawBody: Buffer): Promise<UploadBody> {
  if (rawBody.length > MAX_UPLOAD_BODY_BYTES) {
    return Promise.reject(new PayloadTooLargeError('attachment_too_large', `The upload is ${rawBody.length} bytes; a file is at most ${ATTACHMENT_LIMITS.maxBytesPerFile} bytes.`));
  }
  return new Promise((resolve, reject) => {
    let bb: busboy.Busboy;
    try {
      bb = busboy({
        headers: { 'content-type': contentType },
        // `fileSize` one over the limit: busboy flags a file that reaches its limit as truncated, and a
        // file of exactly the limit is allowed (as the incoming images' parser does, messages/multipart.ts).
        // Browsers send the file name as raw UTF-8 in the part's header; busboy's default reads it as latin1.
        defParamCharset: 'utf8',
        defCharset: 'utf8',
        limits: { fields: FIELDS.length, fieldSize: MAX_FIELD_BYTES, files: 1, fileSize: ATTACHMENT_LIMITS.maxBytesPerFile + 1, parts: FIELDS.length + 2, headerPairs: 20 },
      });
    } catch (err) {
      reject(invalid(err instanceof Error ? err.message : 'unreadable'));
      return;
    }
    let failure: Error | undefined;
    const fail = (err: Error): void => {
      failure ??= err;
    };
    const fields = new Map<string, string>();
    let file: UploadBody['file'] | undefined;

    bb.on('field', (name, value, info) => {
      if (!(FIELDS as readonly string[]).includes(name)) return fail(invalid(`the field '${name}' is not allowed`));
      if (fields.has(name)) return fail(invalid(`the field '${name}' is given twice`));
      if (info.valueTruncated) return fail(invalid(`the field '${name}' is too long`));
      fields.set(name, value);
    });
    bb.on('file', (name, stream, info) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let truncated = false;
      stream.on('data', (chunk: Buffer) => {
        size += chunk.length;
        chunks.push(chunk);
      });
      stream.on('limit', () => {
        truncated = true;
      });
      // A body that ends inside the file makes busboy destroy its stream with an error; unhandled, it would crash the instance.
      stream.on('error', (err: Error) => fail(invalid(err.message)));
      stream.on('close', () => {
        if (name !== 'file') return fail(invalid(`the file field '${name}' is not allowed`));
        if (truncated) return fail(new PayloadTooLargeError('attachment_too_large', `file: exceeds ${ATTACHMENT_LIMITS.maxBytesPerFile} bytes.`));
        file = { bytes: joinChunks(chunks, size), filename: info.filename, declaredType: info.mimeType };
      });
    });
    bb.on('filesLimit', () => fail(invalid('only one file is allowed')));
    bb.on('fieldsLimit', () => fail(invalid('too many text fields')));
    bb.on('partsLimit', () => fail(invalid('too many parts')));
    bb.on('error', (err: unknown) => reject(failure ?? invalid(err instanceof Error ? err.message : 'malformed')));
    bb.on('close', () => {
      if (failure) return reject(failure);
      const workspaceId = fields.get('workspaceId');
      const conversationId = fields.get('conversationId');
      if (workspaceId === undefined || conversationId === undefined) return reject(invalid('workspaceId and conversationId are required'));
      if (file === undefined) return reject(invalid("the file field 'file' is missing"));
      resolve({ workspaceId, conversationId, file });
    });
    bb.end(withEmptyFileNamesNamed(contentType, rawBody));
  });
}
