import { LruMap } from '../platform/lru-map';
import { stateOf, take, tokensAt, type Bucket, type RateDecision, type RateLimitState } from '../rules/rate-limit';

/** Holds buckets for many integrations; evicts idle ones so memory stays bounded. */
export class RateLimiter {
  private readonly buckets: LruMap<string, Bucket>;
  constructor(maxBuckets = 10_000) {
    this.buckets = new LruMap(maxBuckets);
  }

  /** Takes a token for `key` when one is left; the decision and the state after it (for the headers). */
  consume(key: string, perMinute: number, now: number): { decision: RateDecision; state: RateLimitState } {
    const result = take(this.buckets.get(key), perMinute, now);
    this.buckets.set(key, result.bucket); // every use sets: the idle buckets are the ones evicted
    return { decision: result.decision, state: stateOf(result.bucket.tokens, perMinute) };
  }

  /** The state of `key`'s bucket at `now`, without taking a token (answers refused before the limiter ran). */
  peek(key: string, perMinute: number, now: number): RateLimitState {
    return stateOf(tokensAt(this.buckets.get(key), perMinute, now), perMinute);
  }
}
