import { createHash } from 'node:crypto';
import { displayPrefix, generateKey, hashKey, isWellFormedKey, keyFromAuthorizationHeader } from '../../../functions/src/integrations/keys';
import { KeyResolver, type IntegrationAuth } from '../../../functions/src/integrations/auth';
import { ForbiddenError, UnauthorizedError } from '../../../functions/src/rules/errors';

describe('integration keys', () => {
  test('generated keys carry the greppable prefix and 32 random bytes in base64url', () => {
    const live = generateKey();
    expect(live).toMatch(/^sdk_live_[A-Za-z0-9_-]{43}$/);
    expect(generateKey('sdk_test_')).toMatch(/^sdk_test_[A-Za-z0-9_-]{43}$/);
    expect(generateKey()).not.toBe(live);
    expect(isWellFormedKey(live)).toBe(true);
  });

  test('only the SHA-256 hex is stored; the display prefix reveals 4 secret characters', () => {
    const key = 'sdk_live_' + 'A'.repeat(43);
    expect(hashKey(key)).toMatch(/^[0-9a-f]{64}$/);
    expect(hashKey(key)).toBe(createHash('sha256').update(key).digest('hex'));
    expect(displayPrefix(key)).toBe('sdk_live_AAAA');
  });

  test.each([
    [undefined],
    [''],
    ['Bearer'],
    ['Basic abc'],
    ['Bearer sdk_live_short'],
    [`Bearer sdk_prod_${'A'.repeat(43)}`],
    [`Bearer sdk_live_${'A'.repeat(42)}!`],
    [`Bearer sdk_live_${'A'.repeat(44)}`],
    [`Bearer sdk_live_${'A'.repeat(43)} extra`],
  ])('malformed Authorization %p yields no key', (header) => {
    expect(keyFromAuthorizationHeader(header)).toBeUndefined();
  });

  test('a well-formed bearer header yields the key (scheme case-insensitive)', () => {
    const key = generateKey();
    expect(keyFromAuthorizationHeader(`Bearer ${key}`)).toBe(key);
    expect(keyFromAuthorizationHeader(`bearer ${key}`)).toBe(key);
  });
});

function integration(overrides: Partial<IntegrationAuth> = {}): IntegrationAuth {
  return {
    workspaceId: 'ws',
    integrationId: 'int',
    keyHash: 'hash',
    keyPrefix: 'sdk_live_AAAA',
    previousKey: null,
    active: true,
    sourceEnabled: true,
    replies: { enabled: false, topic: null, topicStatus: null, topicMessage: null, topicCheckedAt: null, attachments: null, lifecycle: { edit: null, unsend: null } },
    messagesPerMinute: null,
    channel: null,
    previousKeyExpiresAt: null,
    ...overrides,
  };
}

describe('KeyResolver (per-instance key cache)', () => {
  const key = generateKey();
  const header = `Bearer ${key}`;

  function setup(result: IntegrationAuth | null, ttlMs = 20_000, negativeTtlMs = 5_000) {
    let now = 1_000_000;
    const lookups: string[] = [];
    let current = result;
    const resolver = new KeyResolver(
      async (hash) => {
        lookups.push(hash);
        return current;
      },
      ttlMs,
      negativeTtlMs,
      () => now,
    );
    return {
      resolver,
      lookups,
      advance: (ms: number) => (now += ms),
      set: (value: IntegrationAuth | null) => (current = value),
    };
  }

  test('resolves an active integration and serves repeats from cache within the TTL', async () => {
    const { resolver, lookups, advance } = setup(integration());
    await expect(resolver.authenticate(header)).resolves.toMatchObject({ integrationId: 'int', presentedKeyPrefix: displayPrefix(key) });
    advance(19_999);
    await resolver.authenticate(header);
    expect(lookups).toEqual([hashKey(key)]);
  });

  test("a stored channel goes into the cached resolution in place: no new lookup, the same expiry; an uncached key stays uncached", async () => {
    const { resolver, lookups, advance } = setup(integration({ keyHash: hashKey(key) }));
    const resolved = await resolver.authenticate(header);
    const channel = { window: { seconds: 86_400 }, templates: [], updatedAt: 5 };
    resolver.rememberChannel(resolved, channel);
    await expect(resolver.authenticate(header)).resolves.toMatchObject({ channel });
    expect(lookups).toHaveLength(1);
    // The entry keeps its expiry: the TTL still bounds how long a deactivation can go unseen.
    advance(20_000);
    await resolver.authenticate(header);
    expect(lookups).toHaveLength(2);
    const other = setup(integration());
    other.resolver.rememberChannel({ keyHash: hashKey(key), previousKey: null }, channel);
    await other.resolver.authenticate(header);
    expect(other.lookups).toHaveLength(1);
  });

  test('a deactivation is seen once the TTL has passed (<= 30 s, decisions 2)', async () => {
    const { resolver, lookups, advance, set } = setup(integration());
    await resolver.authenticate(header);
    set(integration({ active: false }));
    await expect(resolver.authenticate(header)).resolves.toBeDefined();
    advance(20_000);
    await expect(resolver.authenticate(header)).rejects.toMatchObject({ status: 403, code: 'integration_inactive' });
    expect(lookups).toHaveLength(2);
  });

  test('401 invalid_key for malformed headers without any lookup, and for unknown keys', async () => {
    const { resolver, lookups } = setup(null);
    await expect(resolver.authenticate('Bearer nope')).rejects.toBeInstanceOf(UnauthorizedError);
    expect(lookups).toHaveLength(0);
    await expect(resolver.authenticate(header)).rejects.toMatchObject({ status: 401, code: 'invalid_key' });
    expect(lookups).toHaveLength(1);
  });

  test('unknown keys are remembered only for the negative TTL', async () => {
    const { resolver, lookups, advance, set } = setup(null);
    await expect(resolver.authenticate(header)).rejects.toMatchObject({ code: 'invalid_key' });
    set(integration());
    await expect(resolver.authenticate(header)).rejects.toMatchObject({ code: 'invalid_key' });
    advance(5_000);
    await expect(resolver.authenticate(header)).resolves.toMatchObject({ integrationId: 'int' });
    expect(lookups).toHaveLength(2);
  });

  test('403 source_disabled; inactive wins over source disabled', async () => {
    await expect(setup(integration({ sourceEnabled: false })).resolver.authenticate(header)).rejects.toMatchObject({ code: 'source_disabled' });
    await expect(setup(integration({ active: false, sourceEnabled: false })).resolver.authenticate(header)).rejects.toBeInstanceOf(ForbiddenError);
  });

  test('a previous key works until its overlap ends, even when cached', async () => {
    const { resolver, advance } = setup(integration({ previousKeyExpiresAt: 1_000_000 + 10_000 }));
    await expect(resolver.authenticate(header)).resolves.toBeDefined();
    advance(10_000);
    await expect(resolver.authenticate(header)).rejects.toMatchObject({ code: 'invalid_key' });
  });

  test('concurrent misses share one lookup', async () => {
    const { resolver, lookups } = setup(integration());
    await Promise.all(Array.from({ length: 10 }, () => resolver.authenticate(header)));
    expect(lookups).toHaveLength(1);
  });

  test('the error message never contains the key', async () => {
    const { resolver } = setup(null);
    const error = await resolver.authenticate(header).catch((e: unknown) => e as Error);
    expect(String((error as Error).message)).not.toContain(key.slice(9, 25));
  });
});
