/**
 * The test service's HTTP front: the loopback server, and what every request goes through before
 * and after its operation's handler (./operations.ts): the path, the method, the key, the fault
 * queue (`inject`), the media type, the size limit and JSON, then the answer in the service's
 * envelope and headers, recorded for `calls()`.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { apiError, ApiError } from './errors.js';
import { sha256Hex } from './ids.js';
import { MAX_JSON_BYTES, parseMultipart } from './multipart.js';
import type { Answer, Handlers } from './operations.js';
import { sweep } from './outbox.js';
import { rateLimitHeaders } from '../internal/rules/rate-limit.js';
import { rateLimitState } from './rate-limit.js';
import { REQUESTS } from './requests.generated.js';
import { notifyWaiters, type Integration, type ServiceState } from './state.js';
import type { FaultSpec, OperationId } from './types.js';

/** docs/contract.md#limits: a multipart request is at most 21 MB. */
const MAX_MULTIPART_BYTES = 21 * 1024 * 1024;
const INVALID_KEY_MESSAGE = 'Missing, malformed, unknown or revoked integration key.';
const KEY_PATTERN = /^sdk_(live|test)_[A-Za-z0-9_-]{43}$/;

/** The usual `error.code` of a status, for an injected fault without one. */
const FAULT_CODES: Record<FaultSpec['status'], string> = {
  400: 'invalid_request',
  401: 'invalid_key',
  403: 'integration_inactive',
  404: 'delivery_not_found',
  409: 'lease_lost',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limited',
  500: 'internal',
  502: 'bad_gateway',
  503: 'temporarily_unavailable',
  504: 'gateway_timeout',
};

const operationByPath = new Map<string, OperationId>(Object.entries(REQUESTS).map(([id, r]) => [r.path, id as OperationId]));

/** Queues a fault for the next `times` calls of the operation (`inject`). */
export function injectFault(state: ServiceState, handlers: Handlers, operationId: OperationId, fault: FaultSpec): void {
  if (!(operationId in handlers)) throw new Error(`test service: ${String(operationId)} is not an operation`);
  const times = fault.times ?? 1;
  if (!Number.isInteger(times) || times < 1) throw new RangeError('times must be a positive integer');
  let queue = state.faults.get(operationId);
  if (queue === undefined) {
    queue = [];
    state.faults.set(operationId, queue);
  }
  queue.push({ spec: { ...fault }, remaining: times });
}

function takeFault(state: ServiceState, operationId: OperationId): FaultSpec | null {
  const queue = state.faults.get(operationId);
  const head = queue?.[0];
  if (queue === undefined || head === undefined) return null;
  head.remaining -= 1;
  if (head.remaining <= 0) queue.shift();
  return head.spec;
}

function authenticate(state: ServiceState, authorization: string | undefined): Integration {
  const match = authorization === undefined ? null : /^Bearer +(\S+)\s*$/i.exec(authorization);
  const key = match?.[1];
  const integration = key !== undefined && KEY_PATTERN.test(key) ? state.integrationsByKeyHash.get(sha256Hex(Buffer.from(key))) : undefined;
  if (integration === undefined) throw apiError(401, 'invalid_key', INVALID_KEY_MESSAGE);
  // functions/src/integrations/auth.ts: a valid key of an inactive integration is 403, on every operation.
  if (!integration.active) throw apiError(403, 'integration_inactive', 'This integration is inactive.');
  return integration;
}

/** A request as read off the socket. */
interface Incoming {
  req: IncomingMessage;
  raw: Buffer;
  path: string;
  operationId: OperationId | null;
  receivedAt: number;
  /** The answer's headers so far. */
  headers: Record<string, string>;
}

/** What `calls()` records of the request, filled in as far as it got before an answer (a refusal stops it anywhere). */
interface CallFacts {
  integration: Integration | null;
  body: unknown;
  injected: boolean;
}

/** The checks of every operation, an injected fault, then the operation's handler; throws the refusal. */
function operate(state: ServiceState, handlers: Handlers, incoming: Incoming, facts: CallFacts): Answer {
  const { req, raw, path, operationId, receivedAt, headers } = incoming;
  if (operationId === null) throw apiError(404, 'not_found', `${path} is not an operation of the API.`);
  // Each operation accepts its document's one method (POST, PUT for /v1/channel), as the service's pipeline does.
  const method = REQUESTS[operationId].method;
  if (req.method !== method) {
    headers.Allow = method;
    throw apiError(405, 'method_not_allowed', `${method} ${path} accepts ${method} only.`);
  }
  const integration = authenticate(state, req.headers.authorization);
  facts.integration = integration;
  if (operationId === 'sendMessage' || operationId === 'sendMessageEvent' || operationId === 'updateChannel') Object.assign(headers, rateLimitHeaders(rateLimitState(state, integration, receivedAt, false)));
  const contentType = req.headers['content-type'] ?? '';
  const accepts = operationId === 'sendMessage' ? ['application/json', 'multipart/form-data'] : ['application/json'];
  facts.body = recordedBody(contentType, raw);
  const fault = takeFault(state, operationId);
  if (fault !== null) {
    facts.injected = true;
    const retryAfter = fault.retryAfterSeconds ?? (fault.status === 429 || fault.status === 503 ? 1 : undefined);
    throw apiError(fault.status, fault.code ?? FAULT_CODES[fault.status], 'injected by the test service (inject)', retryAfter);
  }
  const mediaType = parseMediaType(contentType, accepts);
  const limit = mediaType === 'application/json' ? MAX_JSON_BYTES : MAX_MULTIPART_BYTES;
  if (raw.length > limit) throw apiError(413, 'payload_too_large', `Request body is ${raw.length} bytes; the limit for ${mediaType} is ${limit} bytes.`);
  const json = mediaType === 'application/json' ? parseJson(raw, 'body') : undefined;
  return handlers[operationId]({ integration, json, mediaType, contentType, raw, now: receivedAt, headers });
}

/** A refusal in the service's envelope; anything else thrown is a 503 to retry, as the service's pipeline answers it. */
function refusal(error: unknown, headers: Record<string, string>): Answer {
  const refused = error instanceof ApiError ? error : apiError(503, 'temporarily_unavailable', 'Temporary failure; retry after the indicated delay.', 1);
  if (!(error instanceof ApiError)) console.error('test service: unexpected error', error);
  if (refused.retryAfterSeconds !== undefined) headers['Retry-After'] = String(refused.retryAfterSeconds);
  return { status: refused.status, body: { error: { code: refused.code, message: refused.message } } };
}

/** Writes the answer (a file, possibly cut off, or JSON); returns its body as `calls()` records it. */
function writeAnswer(res: ServerResponse, answer: Answer, headers: Record<string, string>): unknown {
  if ('file' in answer) {
    const { bytes, cutOffAfter } = answer.file;
    Object.assign(headers, answer.file.headers, { 'Content-Length': String(bytes.length) });
    res.writeHead(200, headers);
    if (cutOffAfter !== undefined) {
      res.write(bytes.subarray(0, cutOffAfter));
      res.destroy();
      return { bytes: cutOffAfter, cutOff: true };
    }
    res.end(bytes);
    return { bytes: bytes.length };
  }
  Object.assign(headers, { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store' });
  res.writeHead(answer.status, headers);
  res.end(JSON.stringify(answer.body));
  return answer.body;
}

async function handle(state: ServiceState, handlers: Handlers, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const receivedAt = state.now();
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks);
  sweep(state);
  const path = (req.url ?? '/').split('?')[0] ?? '/';
  const operationId = operationByPath.get(path) ?? null;
  const headers: Record<string, string> = { 'X-Request-Id': `req_${randomBytes(12).toString('base64url')}` };
  const facts: CallFacts = { integration: null, body: undefined, injected: false };
  let answer: Answer;
  try {
    answer = operate(state, handlers, { req, raw, path, operationId, receivedAt, headers }, facts);
  } catch (error) {
    answer = refusal(error, headers);
  }
  const responseBody = writeAnswer(res, answer, headers);
  state.recorded.push({
    seq: state.recorded.length + 1,
    receivedAt,
    answeredAt: state.now(),
    operationId,
    method: req.method ?? '',
    path,
    integrationId: facts.integration?.integrationId ?? null,
    request: { headers: recordedHeaders(req), body: facts.body },
    response: { status: answer.status, headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v])), body: responseBody },
    injected: facts.injected,
  });
  notifyWaiters(state);
}

/** Serves the handlers on loopback; resolves once it listens. */
export async function serve(state: ServiceState, handlers: Handlers, port: number): Promise<{ baseUrl: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    handle(state, handlers, req, res).catch((error: unknown) => {
      console.error('test service: request failed', error);
      if (!res.headersSent) res.writeHead(503, { 'Retry-After': '1' });
      res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The accepted media type of a Content-Type, or a 415 (functions/src/platform/http/pipeline.ts `parseMediaType`). */
function parseMediaType(contentType: string, accepts: readonly string[]): 'application/json' | 'multipart/form-data' {
  const expected = accepts.join(' or ');
  if (contentType.trim() === '') throw apiError(415, 'unsupported_media_type', `Content-Type is required: use ${expected}.`);
  const [type, ...params] = contentType.split(';').map((p) => p.trim());
  const mediaType = (type ?? '').toLowerCase();
  const accepted = accepts.find((a) => a === mediaType);
  if (accepted === undefined) throw apiError(415, 'unsupported_media_type', `Content-Type '${mediaType}' is not supported: use ${expected}.`);
  const malformed = params.find((p) => p !== '' && !/^[^=\s]+=/.test(p));
  if (malformed !== undefined) throw apiError(415, 'unsupported_media_type', `Content-Type parameter '${malformed.slice(0, 40)}' is malformed: use name=value (e.g. charset=utf-8).`);
  const charset = params.find((p) => p.toLowerCase().startsWith('charset='));
  if (charset !== undefined && !/^charset="?utf-8"?$/i.test(charset)) throw apiError(415, 'unsupported_media_type', 'Only the utf-8 charset is supported.');
  return accepted as 'application/json' | 'multipart/form-data';
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/** A JSON body parsed strictly from its bytes: invalid UTF-8 and malformed JSON are 400 `invalid_json`. */
export function parseJson(raw: Buffer, what: string): unknown {
  if (raw.length === 0) throw apiError(400, 'invalid_json', `${what}: must not be empty.`);
  let text: string;
  try {
    text = strictUtf8.decode(raw);
  } catch {
    throw apiError(400, 'invalid_json', `${what}: is not valid UTF-8.`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw apiError(400, 'invalid_json', `${what}: is not valid JSON (${error instanceof SyntaxError ? error.message : 'malformed'}).`);
  }
}

/** The body as `calls()` shows it: parsed JSON, or the multipart's payload with its parts; undefined when unreadable. */
function recordedBody(contentType: string, raw: Buffer): unknown {
  try {
    if (contentType.toLowerCase().startsWith('multipart/form-data')) {
      const multipart = parseMultipart(contentType, raw);
      const payload = JSON.parse(multipart.payload.toString('utf8')) as unknown;
      const parts = multipart.images.map((image) => ({ name: 'images', fileName: image.fileName, contentType: image.contentType, bytes: image.bytes.length }));
      return typeof payload === 'object' && payload !== null ? { ...payload, parts } : { payload, parts };
    }
    return raw.length === 0 ? undefined : (JSON.parse(raw.toString('utf8')) as unknown);
  } catch {
    return undefined;
  }
}

/** The request's headers (lowercase names); the key itself is replaced by its display prefix. */
function recordedHeaders(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    const text = Array.isArray(value) ? value.join(', ') : value;
    out[name] = name === 'authorization' ? text.replace(/(sdk_(?:live|test)_.{4}).*/, '$1…') : text;
  }
  return out;
}
