/**
 * Authentication of connector calls: the bearer key -> its integration, through a per-instance
 * cache (docs/contract.md#authentication).
 */
import { config } from '../platform/config';
import { ForbiddenError, UnauthorizedError } from '../rules/errors';
import { db } from '../platform/firebase';
import { LruMap } from '../platform/lru-map';
import { displayPrefix, hashKey, keyFromAuthorizationHeader } from './keys';
import type { Integration } from './model';
import { findIntegrationByKeyHash, integrationOf } from './store';

/** What a key resolves to: its integration and, for the previous key of a rotation, when it stops working. */
export interface IntegrationAuth extends Integration {
  previousKeyExpiresAt: number | null;
}

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
 * Per-instance cache of key lookups (docs/contract.md#authentication). Positive entries live `ttlMs` (<= 30 s, so a
 * revocation or deactivation takes effect within 30 s); negative ones `negativeTtlMs`.
 * Concurrent misses for the same key share one Firestore query.
 */
export class KeyResolver {
  private readonly cache: LruMap<string, CacheEntry>;
  private readonly inflight = new Map<string, Promise<IntegrationAuth | null>>();

  /** @param findByKeyHash the store lookup (`findIntegrationByKeyHash` in production). */
  constructor(
    private readonly findByKeyHash: (keyHash: string) => Promise<IntegrationAuth | null>,
    private readonly ttlMs: number,
    private readonly negativeTtlMs: number,
    private readonly now: () => number = Date.now,
    maxEntries = 10_000,
  ) {
    this.cache = new LruMap(maxEntries);
  }

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

  /**
   * Puts the channel just stored into this instance's cached resolution of the integration's keys
   * (current and previous), so that the connector's next message here keeps the window it just
   * declared. Updated in place rather than dropped: dropping it made the next request of the key
   * read the integration again, a round trip the bench measured on every `PUT /v1/channel`
   * (bench/phases/stack.mjs, 1.40 over its baseline). An entry not cached stays uncached.
   */
  rememberChannel(integration: Pick<Integration, 'keyHash' | 'previousKey'>, channel: Integration['channel']): void {
    for (const keyHash of [integration.keyHash, integration.previousKey?.hash]) {
      if (typeof keyHash !== 'string') continue;
      const entry = this.cache.get(keyHash);
      if (entry?.value) this.cache.set(keyHash, { ...entry, value: { ...entry.value, channel } });
    }
  }

  private remember(keyHash: string, entry: CacheEntry): void {
    this.cache.set(keyHash, entry);
  }
}

/** The store lookup behind the resolver: the integration of a key hash, or null (unknown or ambiguous). */
async function integrationAuthFor(keyHash: string): Promise<IntegrationAuth | null> {
  const match = await findIntegrationByKeyHash(db(), keyHash);
  const integration = match ? integrationOf(match.snap) : null;
  if (!match || !integration) return null;
  return { ...integration, previousKeyExpiresAt: match.viaPreviousKey ? (integration.previousKey?.expiresAt ?? null) : null };
}

/** The instance's resolver, created on first request: its cache lives as long as the instance. */
let keyResolver: KeyResolver | undefined;

/** Resolves a request's `Authorization` header (the endpoints' `authenticate`). */
export function authenticate(authorization: string | undefined): Promise<AuthContext> {
  keyResolver ??= new KeyResolver(integrationAuthFor, config().keyCacheTtlMs, config().keyNegativeCacheTtlMs);
  return keyResolver.authenticate(authorization);
}

/** Puts the channel just stored into this instance's cached resolution of the integration's keys (`KeyResolver.rememberChannel`). */
export function rememberIntegrationChannel(integration: Pick<Integration, 'keyHash' | 'previousKey'>, channel: Integration['channel']): void {
  keyResolver?.rememberChannel(integration, channel);
}
