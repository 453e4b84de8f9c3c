import { config } from '../config';
import { RateLimiter } from '../domain/rate-limit';
import { db } from '../firebase';
import { findIntegrationByKeyHash } from '../store/integrations';
import { KeyResolver } from './auth';

/**
 * Per-instance singletons shared by the HTTP endpoints, created on first request. The key cache
 * and rate limiter live as long as the instance.
 */
let keyResolver: KeyResolver | undefined;
let rateLimiter: RateLimiter | undefined;

export function keys(): KeyResolver {
  keyResolver ??= new KeyResolver((keyHash) => findIntegrationByKeyHash(db(), keyHash), config().keyCacheTtlMs, config().keyNegativeCacheTtlMs);
  return keyResolver;
}

export function incomingRateLimiter(): RateLimiter {
  rateLimiter ??= new RateLimiter();
  return rateLimiter;
}

export const authenticate = (authorization: string | undefined) => keys().authenticate(authorization);
