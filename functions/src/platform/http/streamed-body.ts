/**
 * A stored file answered as a stream (docs/decisions.md#stored-files-are-streamed): the headers
 * first, then the bytes as they are read, never the whole file in memory. The integrity rule of a
 * buffered answer still holds: a client never receives a complete 200 whose bytes differ from what
 * the headers announce, because the last chunk is held back until the length (and the SHA-256, when
 * one is announced) are known to match; on a mismatch or a read error the response is destroyed,
 * and the client sees an incomplete body (docs/contract.md#fetch-an-attachment).
 */
import { createHash, type Hash } from 'node:crypto';
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { HttpResponse, HttpResult } from './types';

/** Why a streamed body was cut off: the bytes read are not the ones announced. */
export class StreamedBodyMismatch extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StreamedBodyMismatch';
  }
}

/** What the bytes of a streamed body must be: their length, and their SHA-256 (lowercase hex) when known. */
export interface ExpectedBytes {
  length: number;
  sha256Hex?: string;
}

/**
 * Passes bytes through unchanged while counting and hashing them, and holds back the last chunk
 * until the end: it is released only when the total length and the digest match `expected`;
 * otherwise the stream fails, so whatever consumes it never gets the complete bytes. More bytes
 * than announced fail as soon as they arrive. Pure (no I/O).
 */
export class VerifyingPassThrough extends Transform {
  private held: Buffer | null = null;
  private received = 0;
  private readonly hash: Hash | null;

  constructor(private readonly expected: ExpectedBytes) {
    super();
    this.hash = expected.sha256Hex === undefined ? null : createHash('sha256');
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.received += chunk.length;
    if (this.received > this.expected.length) {
      callback(new StreamedBodyMismatch(`read more than the announced ${this.expected.length} bytes`));
      return;
    }
    this.hash?.update(chunk);
    const previous = this.held;
    this.held = chunk;
    callback(null, previous ?? undefined);
  }

  override _flush(callback: TransformCallback): void {
    if (this.received !== this.expected.length) {
      callback(new StreamedBodyMismatch(`read ${this.received} bytes, ${this.expected.length} announced`));
      return;
    }
    if (this.hash !== null && this.hash.digest('hex') !== this.expected.sha256Hex) {
      callback(new StreamedBodyMismatch('the bytes read do not have the announced SHA-256'));
      return;
    }
    callback(null, this.held ?? undefined);
  }
}

/**
 * The body of an `HttpResult` that is streamed (./respond.ts `sendResult`): `Content-Length` is
 * `expected.length`, and the bytes pass through a `VerifyingPassThrough`. The pipeline (./pipeline.ts
 * `answerWithin`) logs an ERROR naming the request's fields when the body had to be cut off.
 */
export class StreamedBody {
  constructor(
    /** The bytes, read as they are sent; destroyed when the answer is not sent. */
    readonly stream: Readable,
    readonly expected: ExpectedBytes,
  ) {}
}

// Sending a streamed answer lives here rather than in ./respond.ts: every instance loads respond.ts
// (index.js installs the runtime hooks), while only the handler bundles that serve files need this.
/**
 * Sends a result whose body is a `StreamedBody`: status, headers and `Content-Length`, then the
 * bytes through a `VerifyingPassThrough`. Resolves once the answer is complete, or with the reason
 * it was cut off (a mismatch, a read error, the client gone): the response is then destroyed, so
 * the client has an incomplete body, never a complete wrong one (./streamed-body.ts).
 */
export async function sendStreamed(res: HttpResponse, result: HttpResult & { body: StreamedBody }): Promise<Error | null> {
  const { stream, expected } = result.body;
  res.status(result.status);
  for (const [name, value] of Object.entries(result.headers ?? {})) res.setHeader(name, value);
  res.setHeader('Content-Length', String(expected.length));
  try {
    // pipeline destroys every stream on a failure: the store's read, and the response.
    await pipeline(stream, new VerifyingPassThrough(expected), res);
    return null;
  } catch (err) {
    res.destroy();
    return err instanceof Error ? err : new Error(String(err));
  }
}

export const isStreamed = (result: HttpResult): result is HttpResult & { body: StreamedBody } => result.body instanceof StreamedBody;
