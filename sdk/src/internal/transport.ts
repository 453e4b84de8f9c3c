/**
 * The one place that talks HTTP: bearer auth, per-attempt timeout, fallback host, retries,
 * and mapping of answers to typed errors. Holds the integration key in a private field.
 */
import {
  BadRequestError,
  ConflictError,
  ConnectorApiError,
  type ConnectorApiErrorDetails,
  ConnectorNetworkError,
  ConnectorTimeoutError,
  ForbiddenError,
  NotFoundError,
  PayloadTooLargeError,
  ServiceUnavailableError,
  TooManyRequestsError,
  UnauthorizedError,
  UnsupportedMediaTypeError,
} from '../errors.js';
import { parseSuccess, type ApiAnswer } from './response.js';
import { backoffDelayMs, NEVER_RETRY_STATUSES, parseRetryAfterMs, type RetryPolicy } from './retry.js';

/** The methods of the API: POST, and PUT for `PUT /v1/channel`. */
type HttpMethod = 'POST' | 'PUT';

/** A `fetch`-compatible function (the global `fetch` by default). */
export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;
/** Waits `ms` milliseconds; should reject with `signal.reason` when `signal` aborts. */
export type SleepFn = (ms: number, signal?: AbortSignal) => Promise<void>;

/** Per-call options of every API method. */
export interface CallOptions {
  /** Aborts the call (including a pending retry wait); the call rejects with `signal.reason`. */
  signal?: AbortSignal;
  /**
   * A W3C `traceparent` sent as the request's header: the service logs the call in that trace.
   * `processDelivery` sends the notification's (its `traceparent`) on every call it makes.
   */
  traceparent?: string;
  /**
   * Error codes answered at once instead of retried, whatever their status (`processDelivery`'s
   * claim: `lease_busy` and `retry_delayed`, after which the service notifies the delivery again).
   */
  noRetryCodes?: readonly string[];
}

export interface TransportConfig {
  integrationKey: string;
  baseUrl: string;
  fallbackBaseUrl: string | undefined;
  timeoutMs: number;
  retry: RetryPolicy;
  fetch: FetchLike;
  sleep: SleepFn;
  now: () => number;
  random: () => number;
  userAgent: string;
}

interface RawAnswer {
  status: number;
  headers: Headers;
  text: string;
  /** The body's bytes, read instead of `text` for a 2xx answer of a binary call (`postForBytes`). */
  bytes?: Uint8Array;
}

/** A 2xx answer whose body is bytes (a file), not JSON: what `postForBytes` returns. */
export interface BinaryAnswer {
  status: number;
  headers: Headers;
  bytes: Uint8Array;
  requestId: string | undefined;
  attempts: number;
}

/**
 * Error codes meaning the connection was never established, so no byte of the request was sent:
 * refused, DNS failure, unreachable host/network, connect timeout. Only these switch to the fallback host.
 */
export const CONNECT_FAILURE_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EAI_NONAME',
  'EAI_NODATA',
  'EAI_FAIL',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
]);

function errorCode(e: unknown): string | undefined {
  if (typeof e !== 'object' || e === null) return undefined;
  const code = (e as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}

/** True when the error (or its cause chain) says the connection could not be opened at all. */
export function isConnectFailure(err: unknown, depth = 0): boolean {
  if (depth > 8 || typeof err !== 'object' || err === null) return false;
  if (err instanceof AggregateError && err.errors.length > 0) {
    return err.errors.every((e: unknown) => isConnectFailure(e, depth + 1));
  }
  const code = errorCode(err);
  if (code !== undefined && CONNECT_FAILURE_CODES.has(code)) return true;
  return isConnectFailure((err as { cause?: unknown }).cause, depth + 1);
}

function describeCause(err: unknown): string {
  const parts: string[] = [];
  let e: unknown = err;
  for (let i = 0; i < 5 && typeof e === 'object' && e !== null; i++) {
    const msg = (e as { message?: unknown }).message;
    const code = errorCode(e);
    if (typeof msg === 'string' && msg !== '') parts.push(code !== undefined && !msg.includes(code) ? `${code}: ${msg}` : msg);
    else if (code !== undefined) parts.push(code);
    e = (e as { cause?: unknown }).cause;
  }
  return parts.length > 0 ? parts.join(' <- ') : String(err);
}

/** The default `sleep`: a `setTimeout` promise that rejects with `signal.reason` on abort. */
export const defaultSleep: SleepFn = (ms, signal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/** Normalises a base URL: absolute http(s), no query or fragment, no trailing slash. */
export function normalizeBaseUrl(name: string, value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new TypeError(`${name} must be an absolute http(s) URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new TypeError(`${name} must be an absolute http(s) URL`);
  if (url.username !== '' || url.password !== '') throw new TypeError(`${name} must not contain credentials`);
  if (url.search !== '' || url.hash !== '') throw new TypeError(`${name} must not contain a query or fragment`);
  return url.href.replace(/\/+$/, '');
}

type Body = { json: unknown } | { form: FormData };

const STATUS_ERRORS: ReadonlyMap<number, new (d: ConnectorApiErrorDetails) => ConnectorApiError> = new Map<
  number,
  new (d: ConnectorApiErrorDetails) => ConnectorApiError
>([
  [400, BadRequestError],
  [401, UnauthorizedError],
  [403, ForbiddenError],
  [404, NotFoundError],
  [409, ConflictError],
  [413, PayloadTooLargeError],
  [415, UnsupportedMediaTypeError],
  [429, TooManyRequestsError],
  [503, ServiceUnavailableError],
]);

/**
 * When an answer says `RateLimit-Remaining: 0`, the epoch ms before which the next call to its
 * path should not be sent (`RateLimit-Reset` seconds, capped like `Retry-After`); null otherwise.
 */
function pauseUntil(headers: Headers, now: number, maxWaitMs: number): number | null {
  const remaining = headers.get('ratelimit-remaining');
  if (remaining === null || !/^\s*0+\s*$/.test(remaining)) return null;
  const resetMs = parseRetryAfterMs(headers.get('ratelimit-reset'), now);
  if (resetMs === undefined || resetMs <= 0) return null;
  return now + Math.min(resetMs, maxWaitMs);
}

export class Transport {
  readonly #key: string;
  readonly #config: Omit<TransportConfig, 'integrationKey'>;
  /** Per path: do not send before this epoch ms (the service said no budget is left; see `pauseUntil`). */
  readonly #pausedUntil = new Map<string, number>();

  constructor(config: TransportConfig) {
    const { integrationKey, ...rest } = config;
    this.#key = integrationKey;
    this.#config = rest;
  }

  /** The settings the client shows (never the key). */
  get settings(): Pick<TransportConfig, 'baseUrl' | 'fallbackBaseUrl' | 'timeoutMs' | 'retry'> {
    const { baseUrl, fallbackBaseUrl, timeoutMs, retry } = this.#config;
    return { baseUrl, fallbackBaseUrl, timeoutMs, retry };
  }

  /** Removes the key from a text that is about to leave the SDK (defence in depth). */
  redact(text: string): string {
    return text.split(this.#key).join('[redacted]');
  }

  /**
   * The error to keep as `cause`: the original one, unless its chain mentions the key (only a
   * custom `fetch` could do that), in which case a redacted stand-in.
   */
  #safeCause(err: unknown): unknown {
    let leaks = false;
    let e: unknown = err;
    for (let i = 0; i < 8 && typeof e === 'object' && e !== null; i++) {
      const { message, stack } = e as { message?: unknown; stack?: unknown };
      if ((typeof message === 'string' && message.includes(this.#key)) || (typeof stack === 'string' && stack.includes(this.#key))) leaks = true;
      e = (e as { cause?: unknown }).cause;
    }
    if (typeof err === 'string' && err.includes(this.#key)) leaks = true;
    return leaks ? new Error(this.redact(describeCause(err))) : err;
  }

  /**
   * POSTs `body` to `path` and returns the parsed 2xx answer. The body object is built once by
   * the caller, so every retry sends the same bytes (same `eventId`, `requestId`, files).
   */
  async post(path: string, body: Body, options: CallOptions = {}): Promise<ApiAnswer> {
    const raw = await this.#call(path, body, options, false);
    return parseSuccess(raw.status, raw.text, { method: 'POST', path, requestId: raw.headers.get('x-request-id') ?? undefined, attempts: raw.attempts });
  }

  /**
   * PUTs a JSON `body` to `path` (`PUT /v1/channel`: it replaces what it names, so a retry is as
   * safe as the first call) and returns the parsed 2xx answer; errors and retries as `post`.
   */
  async put(path: string, json: unknown, options: CallOptions = {}): Promise<ApiAnswer> {
    const raw = await this.#call(path, { json }, options, false, 'PUT');
    return parseSuccess(raw.status, raw.text, { method: 'PUT', path, requestId: raw.headers.get('x-request-id') ?? undefined, attempts: raw.attempts });
  }

  /**
   * POSTs a JSON `body` to an operation that answers a file: the 2xx body as bytes, with its
   * headers. Errors, retries and the fallback host are exactly those of `post` (an error answer is
   * still the JSON envelope).
   */
  async postForBytes(path: string, json: unknown, options: CallOptions = {}): Promise<BinaryAnswer> {
    const raw = await this.#call(path, { json }, options, true);
    return { status: raw.status, headers: raw.headers, bytes: raw.bytes ?? new Uint8Array(0), requestId: raw.headers.get('x-request-id') ?? undefined, attempts: raw.attempts };
  }

  /** One call with its retries: the 2xx answer (its bytes when `binary`), or the error to throw. */
  async #call(path: string, body: Body, options: CallOptions, binary: boolean, method: HttpMethod = 'POST'): Promise<RawAnswer & { attempts: number }> {
    const { retry, sleep, random, now } = this.#config;
    const signal = options.signal;
    const canRetry = (attempts: number): boolean => retry.methods.includes(method) && attempts <= retry.limit;
    const payload = 'json' in body ? JSON.stringify(body.json) : body.form;

    // The last answer on this path said its budget is spent: wait for it instead of sending into a 429.
    const pauseMs = this.#pauseLeft(path);
    if (pauseMs > 0) await this.#wait(sleep, pauseMs, signal);

    for (let attempts = 1; ; attempts++) {
      signal?.throwIfAborted();
      let raw: RawAnswer;
      try {
        raw = await this.#exchange(method, path, payload, signal, attempts, binary, options.traceparent);
      } catch (err) {
        if (err instanceof ConnectorNetworkError && canRetry(attempts)) {
          await this.#wait(sleep, backoffDelayMs(attempts, retry, random), signal);
          continue;
        }
        throw err;
      }

      const until = pauseUntil(raw.headers, now(), retry.maxRetryAfterMs);
      if (until === null) this.#pausedUntil.delete(path);
      else this.#pausedUntil.set(path, until);

      const requestId = raw.headers.get('x-request-id') ?? undefined;
      if (raw.status >= 200 && raw.status < 300) return { ...raw, attempts };

      const error = this.#httpError(raw, requestId, method, path, attempts, now());
      const retryable = retry.statuses.includes(raw.status) && !NEVER_RETRY_STATUSES.includes(raw.status) && !(options.noRetryCodes ?? []).includes(error.code);
      if (retryable && canRetry(attempts)) {
        const delay = error.retryAfterMs !== undefined ? Math.min(error.retryAfterMs, retry.maxRetryAfterMs) : backoffDelayMs(attempts, retry, random);
        // One wait covers both: the retry's own delay and a spent rate-limit budget (on a 429 they are equal).
        await this.#wait(sleep, Math.max(delay, this.#pauseLeft(path)), signal);
        continue;
      }
      throw error;
    }
  }

  /**
   * Milliseconds to wait before sending to `path` (0 when not paused). Concurrent calls all wait;
   * the next answer on the path replaces the pause (or ends it).
   */
  #pauseLeft(path: string): number {
    const until = this.#pausedUntil.get(path);
    return until === undefined ? 0 : Math.max(0, until - this.#config.now());
  }

  async #wait(sleep: SleepFn, ms: number, signal: AbortSignal | undefined): Promise<void> {
    await (signal === undefined ? sleep(ms) : sleep(ms, signal));
    signal?.throwIfAborted();
  }

  /** One attempt: the default host; the fallback host only if the default could not be reached at all. */
  async #exchange(method: HttpMethod, path: string, payload: string | FormData, signal: AbortSignal | undefined, attempts: number, binary: boolean, traceparent?: string): Promise<RawAnswer> {
    try {
      return await this.#once(method, this.#config.baseUrl, path, payload, signal, attempts, binary, traceparent);
    } catch (err) {
      const fallback = this.#config.fallbackBaseUrl;
      if (fallback !== undefined && err instanceof ConnectorNetworkError && !err.requestMayHaveArrived) {
        return await this.#once(method, fallback, path, payload, signal, attempts, binary, traceparent);
      }
      throw err;
    }
  }

  async #once(method: HttpMethod, base: string, path: string, payload: string | FormData, signal: AbortSignal | undefined, attempts: number, binary: boolean, traceparent?: string): Promise<RawAnswer> {
    const { timeoutMs, userAgent } = this.#config;
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.#key}`,
      // A file operation answers the file, or the JSON envelope on an error.
      accept: binary ? '*/*' : 'application/json',
      'user-agent': userAgent,
    };
    if (typeof payload === 'string') headers['content-type'] = 'application/json';
    if (traceparent !== undefined) headers.traceparent = traceparent;

    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    const combined = signal === undefined ? controller.signal : AbortSignal.any([signal, controller.signal]);
    try {
      const res = await this.#config.fetch(`${base}${path}`, { method, headers, body: payload, signal: combined, redirect: 'manual' });
      // The whole body is read within the attempt's timeout, so a stalled download is retried like any other.
      if (binary && res.status >= 200 && res.status < 300) return { status: res.status, headers: res.headers, text: '', bytes: new Uint8Array(await res.arrayBuffer()) };
      const text = await res.text();
      return { status: res.status, headers: res.headers, text };
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      const common = { method, path, attempts, cause: this.#safeCause(err) };
      if (timedOut) {
        throw new ConnectorTimeoutError({ ...common, code: 'timeout', detail: `no complete answer within ${timeoutMs} ms`, requestMayHaveArrived: true });
      }
      const connectFailure = isConnectFailure(err);
      throw new ConnectorNetworkError({
        ...common,
        code: connectFailure ? 'connect_failed' : 'network_error',
        detail: this.redact(describeCause(err)),
        requestMayHaveArrived: !connectFailure,
      });
    } finally {
      clearTimeout(timer);
    }
  }

  #httpError(raw: RawAnswer, requestId: string | undefined, method: string, path: string, attempts: number, now: number): ConnectorApiError {
    let code: string | undefined;
    let detail: string | undefined;
    try {
      const parsed = JSON.parse(raw.text) as unknown;
      const env = typeof parsed === 'object' && parsed !== null ? (parsed as { error?: unknown }).error : undefined;
      if (typeof env === 'object' && env !== null) {
        const c = (env as { code?: unknown }).code;
        const m = (env as { message?: unknown }).message;
        if (typeof c === 'string' && c !== '') code = c;
        if (typeof m === 'string' && m !== '') detail = m;
      }
    } catch {
      // not JSON (e.g. a front-end error page): keep the generic code
    }
    const Ctor = STATUS_ERRORS.get(raw.status) ?? ConnectorApiError;
    return new Ctor({
      status: raw.status,
      code: code ?? `http_${raw.status}`,
      detail: detail === undefined ? undefined : this.redact(detail.slice(0, 500)),
      retryAfterMs: parseRetryAfterMs(raw.headers.get('retry-after'), now),
      requestId,
      method,
      path,
      attempts,
    });
  }
}
