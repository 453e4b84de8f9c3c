/**
 * Token bucket per integration, per instance. A shared counter document would serialise every
 * incoming message of an integration on one Firestore document (about 1 write/s sustained), so the
 * limit is enforced in memory: the effective ceiling is `perMinute x instances`, bounded by the
 * function's maxInstances. Pure: time is passed in.
 */
export interface Bucket {
  tokens: number;
  updatedAt: number;
}

export type RateDecision = { allowed: true } | { allowed: false; retryAfterMs: number };

/** Capacity is one minute's worth (bursts up to the per-minute limit are fine); refill is continuous. */
export function take(bucket: Bucket | undefined, perMinute: number, now: number): { bucket: Bucket; decision: RateDecision } {
  const capacity = perMinute;
  const refillPerMs = perMinute / 60_000;
  const current = bucket ?? { tokens: capacity, updatedAt: now };
  const elapsed = Math.max(0, now - current.updatedAt);
  const tokens = Math.min(capacity, current.tokens + elapsed * refillPerMs);
  if (tokens >= 1) {
    return { bucket: { tokens: tokens - 1, updatedAt: now }, decision: { allowed: true } };
  }
  const retryAfterMs = Math.ceil((1 - tokens) / refillPerMs);
  return { bucket: { tokens, updatedAt: now }, decision: { allowed: false, retryAfterMs } };
}

/** Holds buckets for many integrations; evicts idle ones so memory stays bounded. */
export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  constructor(private readonly maxBuckets = 10_000) {}

  take(key: string, perMinute: number, now: number): RateDecision {
    const result = take(this.buckets.get(key), perMinute, now);
    this.buckets.delete(key); // re-insert to keep Map order = least recently used first
    this.buckets.set(key, result.bucket);
    if (this.buckets.size > this.maxBuckets) {
      const oldest = this.buckets.keys().next();
      if (!oldest.done) this.buckets.delete(oldest.value);
    }
    return result.decision;
  }
}
