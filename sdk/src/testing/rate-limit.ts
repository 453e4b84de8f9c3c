/**
 * The incoming budget of messages and message events, with the service's arithmetic
 * (../internal/rules/rate-limit.ts): the same bucket, the same RateLimit headers, the same Retry-After.
 */
import { stateOf, take as takeToken, tokensAt } from '../internal/rules/rate-limit.js';
import { apiError } from './errors.js';
import type { OperationRequest } from './operations.js';
import type { Integration, ServiceState } from './state.js';

interface RateLimitState {
  allowed: boolean;
  limit: number;
  remaining: number;
  resetSeconds: number;
}

/** The integration's bucket as of `at`; `take` spends a token of it. */
export function rateLimitState(state: ServiceState, integration: Integration, at: number, take: boolean): RateLimitState {
  const { messagesPerMinute } = state;
  if (!take) {
    return { allowed: true, ...stateOf(tokensAt(integration.bucket, messagesPerMinute, at), messagesPerMinute) };
  }
  const taken = takeToken(integration.bucket, messagesPerMinute, at);
  integration.bucket = taken.bucket;
  return { allowed: taken.decision.allowed, ...stateOf(taken.bucket.tokens, messagesPerMinute) };
}

export const rateLimitHeaders = (limits: { limit: number; remaining: number; resetSeconds: number }): Record<string, string> => ({
  'RateLimit-Limit': String(limits.limit),
  'RateLimit-Remaining': String(limits.remaining),
  'RateLimit-Reset': String(limits.resetSeconds),
});

/**
 * Messages and message events share one per-integration budget: takes a token, answers its
 * RateLimit headers, and refuses with 429 (Retry-After: the next token) when none is left.
 */
export function spendIncomingBudget(state: ServiceState, request: OperationRequest): void {
  const limits = rateLimitState(state, request.integration, request.now, true);
  Object.assign(request.headers, rateLimitHeaders(limits));
  if (!limits.allowed) {
    throw apiError(429, 'rate_limited', `Incoming message rate limit of ${state.messagesPerMinute} per minute exceeded; retry with the same eventId after Retry-After.`, limits.resetSeconds);
  }
}
