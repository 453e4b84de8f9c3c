import { retryAfterSecondsFromMs, TooManyRequestsError } from './errors';

/**
 * The incoming rate limit's arithmetic: a token bucket per integration, per instance (the
 * service keeps its buckets in functions/src/messages/rate-limit.ts, the SDK's test service in its store). A shared counter document would serialise every
 * incoming message of an integration on one Firestore document (about 1 write/s sustained), so the
 * limit is enforced in memory: the effective ceiling is `perMinute x instances`, bounded by the
 * function's maxInstances. Pure: time is passed in.
 */
export interface Bucket {
  tokens: number;
  updatedAt: number;
}

export type RateDecision = { allowed: true } | { allowed: false; retryAfterMs: number };

/**
 * What the `RateLimit-*` headers of a `/v1/messages` answer say (docs/contract.md#rate-limit, docs/decisions.md
 * "Rate-limit headers"), about this instance's bucket of the integration:
 *  - `limit`: the per-minute budget (the bucket's capacity);
 *  - `remaining`: whole tokens left now (after this request's own token, when it took one);
 *  - `resetSeconds`: seconds until the bucket is full again; when no whole token is left, until
 *    the next one (so it is exactly the `Retry-After` of a 429, computed the same way).
 */
export interface RateLimitState {
  limit: number;
  remaining: number;
  resetSeconds: number;
}

/** The state of a bucket holding `tokens` (already refilled to `now`). */
export function stateOf(tokens: number, perMinute: number): RateLimitState {
  const refillPerMs = perMinute / 60_000;
  const remaining = Math.max(0, Math.floor(tokens));
  const resetSeconds = remaining >= 1 ? Math.max(0, Math.ceil((perMinute - tokens) / refillPerMs / 1000)) : retryAfterSecondsFromMs(Math.ceil((1 - tokens) / refillPerMs));
  return { limit: perMinute, remaining, resetSeconds };
}

/** The tokens of `bucket` at `now` (a missing bucket is full). */
export function tokensAt(bucket: Bucket | undefined, perMinute: number, now: number): number {
  if (bucket === undefined) return perMinute;
  const elapsed = Math.max(0, now - bucket.updatedAt);
  return Math.min(perMinute, bucket.tokens + elapsed * (perMinute / 60_000));
}

/** Capacity is one minute's worth (bursts up to the per-minute limit are fine); refill is continuous. */
export function take(bucket: Bucket | undefined, perMinute: number, now: number): { bucket: Bucket; decision: RateDecision } {
  const refillPerMs = perMinute / 60_000;
  const tokens = tokensAt(bucket, perMinute, now);
  if (tokens >= 1) {
    return { bucket: { tokens: tokens - 1, updatedAt: now }, decision: { allowed: true } };
  }
  const retryAfterMs = Math.ceil((1 - tokens) / refillPerMs);
  return { bucket: { tokens, updatedAt: now }, decision: { allowed: false, retryAfterMs } };
}

/** The `RateLimit-*` headers of an answer (docs/contract.md#rate-limit; docs/decisions.md "Rate-limit headers"). */
export const rateLimitHeaders = (state: RateLimitState): Record<string, string> => ({
  'RateLimit-Limit': String(state.limit),
  'RateLimit-Remaining': String(state.remaining),
  'RateLimit-Reset': String(state.resetSeconds),
});

/**
 * The 429 of a request the bucket refused. Its Retry-After is `RateLimit-Reset` itself (with no
 * token left, the time to the next one), so the two always agree.
 */
export const rateLimited = (state: RateLimitState): TooManyRequestsError =>
  new TooManyRequestsError('rate_limited', `Incoming message rate limit of ${state.limit} per minute exceeded; retry with the same eventId after Retry-After.`, state.resetSeconds);
