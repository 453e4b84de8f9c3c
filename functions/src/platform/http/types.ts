/**
 * The slice of the Cloud Functions (express) request/response this service uses. Keeping to it
 * decouples handlers from express and lets tests drive them with plain objects.
 */
/** Where the runtime hook (http/runtime.ts) keeps a request's arrival time, epoch ms. */
export const RECEIVED_AT = Symbol.for('support-desk.receivedAt');

export interface HttpRequest {
  method: string;
  headers: Record<string, string | string[] | undefined>;
  /** The unparsed body, buffered by the Cloud Functions runtime. */
  rawBody?: Buffer;
  /** Arrival time, stamped by the runtime hook before the runtime reads the body. */
  [RECEIVED_AT]?: number;
}

/** The response: also a writable stream, for a streamed body (./streamed-body.ts). */
export interface HttpResponse extends NodeJS.WritableStream {
  status(code: number): HttpResponse;
  setHeader(name: string, value: string | number): unknown;
  send(body: string | Buffer): unknown;
  readonly headersSent: boolean;
  /** Cuts the response off (the client sees an incomplete body). */
  destroy(error?: Error): unknown;
}

/** What an endpoint returns on success; errors are thrown as ApiError. */
export interface HttpResult {
  status: number;
  /**
   * JSON, or the bytes of a binary answer (sent as they are, with `headers`): a Buffer, or a
   * `StreamedBody` (./streamed-body.ts) for a stored file sent as it is read.
   */
  body: unknown;
  /** Headers of a binary answer (`body` a Buffer or a `StreamedBody`): its Content-Type and the rest. */
  headers?: Record<string, string>;
}
