/**
 * The incoming budget of messages and message events, with the service's arithmetic
 * (../internal/rules/rate-limit.ts): the same bucket, the same RateLimit headers, the same Retry-After.
 */
import { rateLimited, rateLimitHeaders, stateOf, take as takeToken, tokensAt, type RateLimitState } from '../internal/rules/rate-limit.js';
import type { OperationRequest } from './operations.js';
import type { Integration, ServiceState } from './state.js';


/** The integration's bucket as of `at`; `take` spends a token of it. */
export function rateLimitState(state: ServiceState, integration: Integration, at: number, take: boolean): RateLimitState & { allowed: boolean } {
  const { messagesPerMinute } = state;
  if (!take) {
    return { allowed: true, ...stateOf(tokensAt(integration.bucket, messagesPerMinute, at), messagesPerMinute) };
  }
  const taken = takeToken(integration.bucket, messagesPerMinute, at);
  integration.bucket = taken.bucket;
  return { allowed: taken.decision.allowed, ...stateOf(taken.bucket.tokens, messagesPerMinute) };
}


/**
 * Messages and message events share one per-integration budget: takes a token, answers its
 * RateLimit headers, and refuses with 429 (Retry-After: the next token) when none is left.
 */
export function spendIncomingBudget(state: ServiceState, request: OperationRequest): void {
  const limits = rateLimitState(state, request.integration, request.now, true);
  Object.assign(request.headers, rateLimitHeaders(limits));
  if (!limits.allowed) throw rateLimited(limits);
}
