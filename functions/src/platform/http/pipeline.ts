import * as logger from '../log';
import {
  ApiError,
  BadRequestError,
  MethodNotAllowedError,
  PayloadTooLargeError,
  UnsupportedMediaTypeError,
} from '../../rules/errors';
import { errorMessage } from '../failures';
import { config } from '../config';
import { Deadline } from './deadline';
import { newRequestId } from './request-id';
import { newSpanId, newTraceId, parseTraceparent } from '../trace';
import { sendError, sendResult, toApiError } from './respond';
import { isStreamed, sendStreamed, StreamedBodyMismatch } from './streamed-body';
import { RECEIVED_AT, type HttpRequest, type HttpResponse, type HttpResult } from './types';

/** docs/contract.md#limits: JSON request bodies are limited to 65536 bytes, measured on the raw bytes. */
export const MAX_JSON_BYTES = 65_536;
/** docs/contract.md#limits: a multipart request is at most 21 MB. */
export const MAX_MULTIPART_BYTES = 21 * 1024 * 1024;

export type MediaType = 'application/json' | 'multipart/form-data';

/**
 * What the pipeline needs of an authenticated caller: the ids its log line names. The feature that
 * authenticates (integrations/auth.ts) returns more; the pipeline hands that on unchanged, so the
 * platform knows no feature's type.
 */
export interface Caller {
  workspaceId: string;
  integrationId: string;
  /** Non-secret display prefix of the presented key. */
  presentedKeyPrefix: string;
}

export interface RequestContext<Auth extends Caller = Caller> {
  requestId: string;
  /** What `EndpointOptions.authenticate` resolved the request's key to. */
  auth: Auth;
  /** The request's time budget: call `deadline.assertTimeLeft()` right before committing a write. */
  deadline: Deadline;
  /** Structured fields added by the handler to the request's log line (ids only, never secrets). */
  logFields: Record<string, string | number | boolean>;
  /** Sets headers on the answer, whatever it turns out to be (ignored once an answer was sent, e.g. after the deadline's 503). */
  setHeaders: (headers: Readonly<Record<string, string>>) => void;
  /**
   * The request's trace (docs/operations.md#tracing): the caller's valid `traceparent`, or a new
   * trace (a malformed header is ignored). A handler about a delivery sets `logFields.deliveryId`,
   * and the log lines then name the delivery's trace instead (../log.ts).
   */
  trace: { traceId: string; spanId: string; parentSpanId: string | null };
}

export interface ParsedRequest {
  mediaType: MediaType;
  /** Full Content-Type header (multipart needs its boundary). */
  contentType: string;
  rawBody: Buffer;
  /** The parsed JSON body, for `application/json`. */
  json: unknown;
}

export interface EndpointOptions<Auth extends Caller> {
  name: string;
  /** The one method the endpoint accepts (default POST; `PUT /v1/channel` replaces a resource); any other is 405 naming it in `Allow`. */
  method?: 'POST' | 'PUT';
  accepts: readonly MediaType[];
  /** The `Authorization` header -> the caller, or throws the 401/403. */
  authenticate: (authorization: string | undefined) => Promise<Auth>;
  /**
   * Runs right after the key is accepted, before any other check: headers it sets are on every
   * answer from then on, errors included (the rate-limit headers of /v1/messages).
   */
  afterAuthenticate?: (auth: Auth, setHeaders: RequestContext['setHeaders']) => void;
}

function header(req: HttpRequest, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * The accepted media type of a request's Content-Type, or a 415. Parameters must be `name=value`
 * (an empty one, as in `application/json;`, is tolerated): a valueless `charset` would otherwise
 * reach us as an empty body (the platform's body parser skips a header it cannot parse) and be
 * answered with a misleading "must not be empty".
 */
export function parseMediaType(contentType: string | undefined, accepts: readonly MediaType[]): MediaType {
  const expected = accepts.join(' or ');
  if (contentType === undefined || contentType.trim() === '') {
    throw new UnsupportedMediaTypeError('unsupported_media_type', `Content-Type is required: use ${expected}.`);
  }
  const [type, ...params] = contentType.split(';').map((p) => p.trim());
  const mediaType = (type ?? '').toLowerCase();
  const accepted = accepts.find((a) => a === mediaType);
  if (!accepted) throw new UnsupportedMediaTypeError('unsupported_media_type', `Content-Type '${mediaType}' is not supported: use ${expected}.`);
  const malformed = params.find((p) => p !== '' && !/^[^=\s]+=/.test(p));
  if (malformed !== undefined) {
    throw new UnsupportedMediaTypeError('unsupported_media_type', `Content-Type parameter '${malformed.slice(0, 40)}' is malformed: use name=value (e.g. charset=utf-8).`);
  }
  const charset = params.find((p) => p.toLowerCase().startsWith('charset='));
  if (charset && !/^charset="?utf-8"?$/i.test(charset)) {
    throw new UnsupportedMediaTypeError('unsupported_media_type', 'Only the utf-8 charset is supported.');
  }
  return accepted;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/** Parses a JSON body strictly from its raw bytes: invalid UTF-8 and malformed JSON are 400s. */
export function parseJsonBody(raw: Buffer, what = 'body'): unknown {
  if (raw.length === 0) throw new BadRequestError('invalid_json', `${what}: must not be empty.`);
  let textBody: string;
  try {
    textBody = strictUtf8.decode(raw);
  } catch {
    throw new BadRequestError('invalid_json', `${what}: is not valid UTF-8.`);
  }
  try {
    return JSON.parse(textBody) as unknown;
  } catch (err) {
    const detail = err instanceof SyntaxError ? err.message : 'malformed';
    throw new BadRequestError('invalid_json', `${what}: is not valid JSON (${detail}).`);
  }
}

/**
 * The trace fields of a request's log lines: the request's span, and its trace unless the handler
 * named a delivery (whose own trace ../log.ts then uses; the trace a caller sent stays visible as
 * `callerTraceId`, normally the same one: the SDK sends the notification's back).
 */
function traceFields(trace: RequestContext['trace'], logFields: RequestContext['logFields']): Record<string, string> {
  const parent = trace.parentSpanId === null ? {} : { parentSpanId: trace.parentSpanId };
  if (typeof logFields.deliveryId !== 'string') return { traceId: trace.traceId, spanId: trace.spanId, ...parent };
  return { spanId: trace.spanId, ...parent, ...(trace.parentSpanId === null ? {} : { callerTraceId: trace.traceId }) };
}

const errorName = (err: unknown): string => (err instanceof ApiError ? err.code : err instanceof Error ? err.name : typeof err);

/**
 * Wraps an endpoint with the checks every endpoint shares, in this order: method (405), key
 * (401/403), content type (415), size (413), JSON syntax (400). Every error, expected or not,
 * leaves through `sendError`, so the envelope is uniform and no stack trace is ever sent.
 * The whole request runs within its time budget (`REQUEST_DEADLINE_MS` from arrival): when the
 * budget is spent first, the answer is our 503 `deadline_exceeded` (docs/contract.md#time-budget).
 */
export function endpoint<Auth extends Caller>(
  options: EndpointOptions<Auth>,
  handle: (request: ParsedRequest, context: RequestContext<Auth>) => Promise<HttpResult>,
): (req: HttpRequest, res: HttpResponse) => Promise<void> {
  return async (req, res) => {
    const startedAt = performance.now();
    const method = options.method ?? 'POST';
    const requestId = newRequestId();
    const deadline = new Deadline((req[RECEIVED_AT] ?? Date.now()) + config().requestDeadlineMs);
    res.setHeader('X-Request-Id', requestId);
    const logFields: RequestContext['logFields'] = {};
    const traceparent = header(req, 'traceparent');
    const caller = parseTraceparent(traceparent);
    const trace: RequestContext['trace'] = { traceId: caller?.traceId ?? newTraceId(), spanId: newSpanId(), parentSpanId: caller?.spanId ?? null };
    // Ignored, never refused: tracing must not break a delivery; the line says why the trace is new.
    if (traceparent !== undefined && caller === null) logFields.traceparentIgnored = true;
    const setHeaders: RequestContext['setHeaders'] = (headers) => {
      if (res.headersSent) return;
      for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
    };
    const answer = async (): Promise<HttpResult> => {
      if (req.method !== method) throw new MethodNotAllowedError('method_not_allowed', `${options.name} accepts ${method} only.`);
      const auth = await options.authenticate(header(req, 'authorization'));
      logFields.integrationId = auth.integrationId;
      logFields.workspaceId = auth.workspaceId;
      logFields.keyPrefix = auth.presentedKeyPrefix;
      options.afterAuthenticate?.(auth, setHeaders);
      const contentType = header(req, 'content-type') ?? '';
      const mediaType = parseMediaType(contentType, options.accepts);
      const rawBody = req.rawBody ?? Buffer.alloc(0);
      const limit = mediaType === 'application/json' ? MAX_JSON_BYTES : MAX_MULTIPART_BYTES;
      if (rawBody.length > limit) {
        throw new PayloadTooLargeError('payload_too_large', `Request body is ${rawBody.length} bytes; the limit for ${mediaType} is ${limit} bytes.`);
      }
      const json = mediaType === 'application/json' ? parseJsonBody(rawBody) : undefined;
      return handle({ mediaType, contentType, rawBody, json }, { requestId, auth, deadline, logFields, setHeaders, trace });
    };
    await answerWithin(res, deadline, { requestId, endpoint: options.name, startedAt, fields: () => ({ ...traceFields(trace, logFields), ...logFields }), allow: method }, answer);
  };
}

/** What the log lines of one request name (./pipeline.ts `endpoint`, the console function). */
export interface RequestLine {
  requestId: string;
  /** The endpoint's name in the log (`POST /v1/messages`). */
  endpoint: string;
  /** `performance.now()` at arrival in the handler (the line's `durationMs`). */
  startedAt: number;
  /** The line's other fields (ids, trace), read when a line is written: handlers add to them as they go. Never a key, token or body. */
  fields: () => Record<string, unknown>;
  /** The methods a 405 names in `Allow` (default POST). */
  allow?: string;
}

/**
 * Answers a request with what `answer` resolves to, within `deadline`, and writes its log line:
 * the result (a JSON body or bytes), or, for anything thrown, the error envelope (`sendError`;
 * unknown failures become 503, never 500, and are logged with their class and message). When the
 * budget is spent first the answer is our 503 `deadline_exceeded` (docs/contract.md#time-budget),
 * and how the abandoned work ended is logged when it does. Shared by every HTTP endpoint.
 */
export async function answerWithin(res: HttpResponse, deadline: Deadline, line: RequestLine, answer: () => Promise<HttpResult>): Promise<void> {
  const { requestId, endpoint: name } = line;
  let status = 500;
  let errorCode: string | undefined;
  let bodyCutOff: string | undefined;
  try {
    const result = await deadline.race(answer(), (late) => {
      // The client already has its 503. Work that still commits is found by the retry (same
      // eventId / requestId / lease); work that gave up at `assertTimeLeft` wrote nothing.
      if (late.status === 'fulfilled' && isStreamed(late.value)) late.value.body.stream.destroy();
      logger.warn('request.finished_after_deadline', { requestId, endpoint: name, ...line.fields(), outcome: late.status === 'fulfilled' ? 'completed' : errorName(late.reason) });
    });
    status = result.status;
    if (isStreamed(result)) {
      // A streamed file (./streamed-body.ts): once its headers are out, a failure can only cut the
      // body off. Bytes other than the announced ones, or a failed read, are ours to fix: ERROR;
      // a client that went away is not.
      const cutOff = await sendStreamed(res, result);
      if (cutOff !== null) {
        bodyCutOff = errorName(cutOff);
        const clientGone = (cutOff as { code?: unknown }).code === 'ERR_STREAM_PREMATURE_CLOSE' && !(cutOff instanceof StreamedBodyMismatch);
        const fields = { requestId, endpoint: name, ...line.fields(), errorName: bodyCutOff, errorMessage: errorMessage(cutOff) };
        if (clientGone) logger.info('request.body_not_received', fields);
        else logger.error('request.body_cut_off', fields);
      }
    } else {
      sendResult(res, result);
    }
  } catch (err) {
    const { error, unexpected } = toApiError(err);
    status = error.status;
    errorCode = error.code;
    if (unexpected) {
      // Unexpected: log the error class and message (never the request body, never the key).
      logger.error('request.unexpected_error', { requestId, endpoint: name, ...line.fields(), errorName: errorName(err), errorMessage: errorMessage(err) });
    }
    if (!res.headersSent) sendError(res, error, line.allow);
  } finally {
    const fields = { requestId, endpoint: name, status, ...(errorCode ? { errorCode } : {}), ...(bodyCutOff ? { bodyCutOff } : {}), ...line.fields(), durationMs: Math.round(performance.now() - line.startedAt) };
    if (status >= 500 || bodyCutOff !== undefined) logger.warn('request', fields);
    else logger.info('request', fields);
  }
}
