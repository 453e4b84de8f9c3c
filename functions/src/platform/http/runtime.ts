/**
 * What the HTTP runtime does before our handlers run, made to follow our contract (docs/contract.md#errors
 * and docs/contract.md#time-budget).
 *
 * Both runtimes that serve our HTTP functions (Google's functions framework in production, the
 * Functions emulator locally) are Express apps that parse every body with body-parser *before*
 * calling the function. A body it cannot parse (malformed JSON, a bare JSON scalar, an unknown
 * charset or Content-Encoding, a body over its size limit) never reaches our code: Express's
 * final handler answers with an HTML page, and in development mode with a stack trace.
 *
 * Both build their server after loading our module (index.js), with `http.createServer(app)`
 * (directly, or through `app.listen`). `installRuntimeHooks` wraps `http.createServer` once, at
 * load time, so that the app it is given
 * - gets a four-argument Express error handler at the end of its stack, which answers those
 *   failures with our envelope, `X-Request-Id` and a request log line; and
 * - stamps each request with its arrival time, so the request's time budget (deadline.ts)
 *   includes the time the runtime spent receiving the body.
 *
 * This module is loaded by index.js itself, so it stays small: no zod, no Firestore.
 */
// The default import is the real module object (a namespace import would be a copy, and patching
// a copy would not reach the runtime's own `http.createServer` call).
import http from 'node:http';
import * as logger from 'firebase-functions/logger';
import { type ApiError, BadRequestError, MethodNotAllowedError, PayloadTooLargeError, ServiceUnavailableError, UnsupportedMediaTypeError } from '../../rules/errors';
import { newRequestId } from './request-id';
import { sendError, TRANSIENT_RETRY_AFTER_SECONDS } from './respond';
import { RECEIVED_AT, type HttpRequest, type HttpResponse } from './types';

interface BodyParserFailure {
  type?: unknown;
  status?: unknown;
  charset?: unknown;
  encoding?: unknown;
}

const field = (err: unknown, name: keyof BodyParserFailure): unknown =>
  typeof err === 'object' && err !== null ? (err as BodyParserFailure)[name] : undefined;

/**
 * Our answer to a failure of the runtime's body parser (body-parser's `err.type`, with its
 * `status` as the fallback). Pure. The messages say what to change and never echo the body.
 */
export function apiErrorForUnreadableBody(err: unknown): ApiError {
  const type = field(err, 'type');
  const status = field(err, 'status');
  switch (type) {
    case 'entity.parse.failed':
      return new BadRequestError('invalid_json', 'body: is not valid JSON; send a JSON object.');
    case 'charset.unsupported':
      return new UnsupportedMediaTypeError('unsupported_media_type', 'Only the utf-8 charset is supported.');
    case 'encoding.unsupported':
      return new UnsupportedMediaTypeError('unsupported_media_type', 'Content-Encoding is not supported: send the body uncompressed, or gzip or deflate.');
    case 'entity.too.large':
      return new PayloadTooLargeError('payload_too_large', 'Request body exceeds the size limit (64 KB for JSON, 21 MB for multipart).');
    case 'parameters.too.many':
    case 'querystring.parse.rangeError':
      return new UnsupportedMediaTypeError('unsupported_media_type', 'Content-Type application/x-www-form-urlencoded is not supported: use application/json.');
    case 'request.size.invalid':
    case 'request.aborted':
      return new BadRequestError('invalid_request', 'body: ended before its declared Content-Length.');
    default:
      break;
  }
  if (status === 413) return new PayloadTooLargeError('payload_too_large', 'Request body exceeds the size limit (64 KB for JSON, 21 MB for multipart).');
  if (status === 415) return new UnsupportedMediaTypeError('unsupported_media_type', 'The request body cannot be read in its declared Content-Type or Content-Encoding.');
  // A zlib failure on a declared gzip/deflate body, or anything else body-parser calls a client error.
  if (typeof status === 'number' && status >= 400 && status < 500) return new BadRequestError('invalid_request', 'body: could not be read (does it match its Content-Encoding?).');
  return new ServiceUnavailableError('temporarily_unavailable', 'Temporary failure; retry after the indicated delay.', TRANSIENT_RETRY_AFTER_SECONDS);
}

type ExpressishRequest = HttpRequest & { path?: string };

/** The Express error handler appended to the runtime's app (four parameters make it one). */
function answerUnreadableBody(err: unknown, req: ExpressishRequest, res: HttpResponse, next: (err: unknown) => void): void {
  if (res.headersSent) {
    next(err);
    return;
  }
  const requestId = newRequestId();
  // The pipeline's order holds here too: a method other than POST is 405 whatever its body.
  const error = req.method === 'POST' ? apiErrorForUnreadableBody(err) : new MethodNotAllowedError('method_not_allowed', 'Every endpoint accepts POST only.');
  res.setHeader('X-Request-Id', requestId);
  sendError(res, error);
  const fields = {
    requestId,
    endpoint: process.env.FUNCTION_TARGET ?? req.path ?? 'unknown',
    status: error.status,
    errorCode: error.code,
    bodyParserError: String(field(err, 'type') ?? 'unknown'),
    durationMs: Date.now() - (req[RECEIVED_AT] ?? Date.now()),
  };
  if (error.status >= 500) logger.warn('request', fields);
  else logger.info('request', fields);
}

interface ExpressLikeApp {
  (req: http.IncomingMessage, res: http.ServerResponse): void;
  use(handler: typeof answerUnreadableBody): unknown;
}

const isExpressApp = (listener: unknown): listener is ExpressLikeApp =>
  typeof listener === 'function' && typeof (listener as { use?: unknown }).use === 'function';

let installed = false;

/** Idempotent: wraps `http.createServer` once per process. */
export function installRuntimeHooks(): void {
  if (installed) return;
  installed = true;
  const createServer = http.createServer.bind(http) as (...args: unknown[]) => http.Server;
  const hooked = (...args: unknown[]): http.Server => {
    const index = args.findIndex(isExpressApp);
    const app = args[index];
    if (!isExpressApp(app)) return createServer(...args);
    app.use(answerUnreadableBody);
    const stamped = (req: http.IncomingMessage, res: http.ServerResponse): void => {
      (req as ExpressishRequest)[RECEIVED_AT] = Date.now();
      app(req, res);
    };
    return createServer(...args.map((a, i) => (i === index ? stamped : a)));
  };
  (http as { createServer: unknown }).createServer = hooked;
}
