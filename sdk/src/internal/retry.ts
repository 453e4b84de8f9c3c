/**
 * Retry policy. Every endpoint of the service is `POST`, and every one is safe to repeat:
 * `POST /v1/messages` is idempotent by `eventId` (an identical retry answers 200 `duplicate: true`),
 * claim by `requestId` (a retried claim gets the same lease back), start/complete/fail by
 * `leaseId` (repeating them under the same lease gives the same answer, no second transition).
 * The SDK generates `eventId`/`requestId` once per call and reuses them on every attempt.
 */

/** Retries after the first attempt (so at most `DEFAULT_RETRY_LIMIT + 1` attempts per call). */
export const DEFAULT_RETRY_LIMIT = 3;
/** Methods that are retried. Every endpoint is POST except `PUT /v1/channel`, and all are idempotent (see above). */
export const RETRY_METHODS: readonly string[] = Object.freeze(['POST', 'PUT']);
/**
 * Statuses that are retried: 429 and 503 (the service's "wait `Retry-After` and retry"), plus
 * 502 and 504, which the hosting front end (not the service) answers when an instance is
 * unreachable or slow. Network errors and timeouts are retried too.
 */
export const RETRY_STATUSES: readonly number[] = Object.freeze([429, 502, 503, 504]);
/** Statuses that are never retried, whatever `retry.statuses` says: permanent until the request changes. */
export const NEVER_RETRY_STATUSES: readonly number[] = Object.freeze([400, 401, 403, 404, 409, 413, 415]);
/** First backoff step when the answer has no `Retry-After` (or on a network error). */
export const BACKOFF_BASE_MS = 500;
/** Largest backoff step. */
export const BACKOFF_MAX_MS = 10_000;
/** Longest wait the SDK accepts from `Retry-After`; a longer value is capped to this. */
export const MAX_RETRY_AFTER_MS = 30_000;
/** Default time limit of one HTTP attempt (connect, send, and read the whole answer). */
export const DEFAULT_TIMEOUT_MS = 30_000;

/** Retry settings of a client; every field defaults to the constant of the same meaning. */
export interface RetryOptions {
  /** Retries after the first attempt; 0 disables retrying. Default `DEFAULT_RETRY_LIMIT`. */
  limit?: number;
  /** Default `RETRY_METHODS`. */
  methods?: readonly string[];
  /** Default `RETRY_STATUSES`. Members of `NEVER_RETRY_STATUSES` are ignored. */
  statuses?: readonly number[];
  /** Default `BACKOFF_BASE_MS`. */
  backoffBaseMs?: number;
  /** Default `BACKOFF_MAX_MS`. */
  backoffMaxMs?: number;
  /** Default `MAX_RETRY_AFTER_MS`. */
  maxRetryAfterMs?: number;
}

export interface RetryPolicy {
  readonly limit: number;
  readonly methods: readonly string[];
  readonly statuses: readonly number[];
  readonly backoffBaseMs: number;
  readonly backoffMaxMs: number;
  readonly maxRetryAfterMs: number;
}

function nonNegative(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value < 0) throw new RangeError(`retry.${name} must be a non-negative number`);
  return value;
}

export function resolveRetryPolicy(options: RetryOptions | number | undefined): RetryPolicy {
  const o: RetryOptions = typeof options === 'number' ? { limit: options } : (options ?? {});
  const limit = nonNegative('limit', o.limit, DEFAULT_RETRY_LIMIT);
  if (!Number.isInteger(limit)) throw new RangeError('retry.limit must be an integer');
  return Object.freeze({
    limit,
    methods: Object.freeze((o.methods ?? RETRY_METHODS).map((m) => m.toUpperCase())),
    statuses: Object.freeze((o.statuses ?? RETRY_STATUSES).filter((s) => !NEVER_RETRY_STATUSES.includes(s))),
    backoffBaseMs: nonNegative('backoffBaseMs', o.backoffBaseMs, BACKOFF_BASE_MS),
    backoffMaxMs: nonNegative('backoffMaxMs', o.backoffMaxMs, BACKOFF_MAX_MS),
    maxRetryAfterMs: nonNegative('maxRetryAfterMs', o.maxRetryAfterMs, MAX_RETRY_AFTER_MS),
  });
}

/**
 * Delay before retry number `retry` (1-based) without `Retry-After`: exponential
 * (`base * 2^(retry-1)`, capped at `max`) with "equal jitter" — uniformly in [step/2, step] —
 * so many clients that failed together do not retry together, and no retry is immediate.
 */
export function backoffDelayMs(retry: number, policy: Pick<RetryPolicy, 'backoffBaseMs' | 'backoffMaxMs'>, random: () => number = Math.random): number {
  const step = Math.min(policy.backoffMaxMs, policy.backoffBaseMs * 2 ** Math.max(0, retry - 1));
  return Math.round(step / 2 + random() * (step / 2));
}

/**
 * `Retry-After` in milliseconds: delay-seconds (the service's form; fractions tolerated) or an
 * HTTP-date relative to `now`. `undefined` when absent or unreadable.
 */
export function parseRetryAfterMs(value: string | null | undefined, now: number): number | undefined {
  if (value === null || value === undefined) return undefined;
  const v = value.trim();
  if (v === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(v)) return Math.round(Number(v) * 1000);
  if (!/[a-z]/i.test(v)) return undefined; // negative or malformed number; not a date either
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
