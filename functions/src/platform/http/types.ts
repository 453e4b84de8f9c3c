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

export interface HttpResponse {
  status(code: number): HttpResponse;
  setHeader(name: string, value: string | number): unknown;
  send(body: string | Buffer): unknown;
  readonly headersSent: boolean;
}

/** What an endpoint returns on success; errors are thrown as ApiError. */
export interface HttpResult {
  status: number;
  /** JSON, or the bytes of a binary answer (sent as they are, with `headers`). */
  body: unknown;
  /** Headers of a binary answer (`body` a Buffer): its Content-Type and the rest. */
  headers?: Record<string, string>;
}
