import { ForbiddenError, UnauthorizedError } from '../errors';
import { displayPrefix, hashKey, keyFromAuthorizationHeader } from '../domain/keys';
import type { IntegrationAuth } from '../store/integrations';

export interface AuthContext extends IntegrationAuth {
  /** Non-secret display prefix of the presented key, for logs. */
  presentedKeyPrefix: string;
}

interface CacheEntry {
  value: IntegrationAuth | null;
  expiresAt: number;
}

const INVALID_KEY_MESSAGE = 'Missing, malformed, unknown or revoked integration key.';

/**
 * Per-instance cache of key lookups (decisions 2). Positive entries live `ttlMs` (<= 30 s, so a
 * revocation or deactivation takes effect within 30 s); negative ones `negativeTtlMs`.
 * Concurrent misses for the same key share one Firestore query.
 */
export class KeyResolver {
  private readonly cache = new Map<string, CacheEntry>();
  private readonly inflight = new Map<string, Promise<IntegrationAuth | null>>();

  /** @param findByKeyHash the store lookup (`findIntegrationByKeyHash` in production). */
  constructor(
    private readonly findByKeyHash: (keyHash: string) => Promise<IntegrationAuth | null>,
    private readonly ttlMs: number,
    private readonly negativeTtlMs: number,
    private readonly now: () => number = Date.now,
    private readonly maxEntries = 10_000,
  ) {}

  /** Resolves the `Authorization` header to an active integration or throws 401/403. */
  async authenticate(authorization: string | undefined): Promise<AuthContext> {
    const key = keyFromAuthorizationHeader(authorization);
    if (key === undefined) throw new UnauthorizedError('invalid_key', INVALID_KEY_MESSAGE);
    const integration = await this.lookup(hashKey(key));
    const now = this.now();
    if (!integration) throw new UnauthorizedError('invalid_key', INVALID_KEY_MESSAGE);
    if (integration.previousKeyExpiresAt !== null && integration.previousKeyExpiresAt <= now) {
      throw new UnauthorizedError('invalid_key', INVALID_KEY_MESSAGE);
    }
    if (!integration.active) throw new ForbiddenError('integration_inactive', 'This integration is inactive.');
    if (!integration.sourceEnabled) throw new ForbiddenError('source_disabled', 'This source is disabled for the workspace.');
    return { ...integration, presentedKeyPrefix: displayPrefix(key) };
  }

  private async lookup(keyHash: string): Promise<IntegrationAuth | null> {
    const now = this.now();
    const cached = this.cache.get(keyHash);
    if (cached && cached.expiresAt > now) return cached.value;
    const pending = this.inflight.get(keyHash);
    if (pending) return pending;
    const query = this.findByKeyHash(keyHash)
      .then((value) => {
        const ttl = value ? this.ttlMs : this.negativeTtlMs;
        if (ttl > 0) this.remember(keyHash, { value, expiresAt: this.now() + ttl });
        return value;
      })
      .finally(() => this.inflight.delete(keyHash));
    this.inflight.set(keyHash, query);
    return query;
  }

  private remember(keyHash: string, entry: CacheEntry): void {
    this.cache.delete(keyHash);
    this.cache.set(keyHash, entry);
    if (this.cache.size > this.maxEntries) {
      const oldest = this.cache.keys().next();
      if (!oldest.done) this.cache.delete(oldest.value);
    }
  }
}
