import { parseConfig } from '../../../functions/src/platform/config';
import { fingerprint } from '../../../functions/src/rules/fingerprint';
import { conversationIdFor, customerIdFor, deliveryIdFor, eventDocIdFor, messageIdFor } from '../../../functions/src/platform/ids';
import { RateLimiter } from '../../../functions/src/messages/rate-limit';
import { stateOf, take } from '../../../functions/src/rules/rate-limit';
import { retryAfterSecondsFromMs } from '../../../functions/src/rules/errors';
import { BadRequestError, ConflictError, ServiceUnavailableError } from '../../../functions/src/rules/errors';
import { toApiError } from '../../../functions/src/platform/http/respond';
import { parseJsonBody, parseMediaType } from '../../../functions/src/platform/http/pipeline';
import { codePointLength } from '../../../functions/src/contract';
import { parseOrThrow } from '../../../functions/src/platform/schema';
import { IncomingMessageSchema } from '../../../functions/src/messages/schemas';

const base = {
  externalConversationId: 'chat-1',
  sender: { externalId: 'cust-1', displayName: null, kind: 'customer' as const },
  text: 'hello',
  images: [] as Array<{ sha256: string; contentType: string }>,
};

describe('fingerprint', () => {
  test('is stable and independent of key order', () => {
    const reordered = { images: [], text: 'hello', sender: { kind: 'customer' as const, displayName: null, externalId: 'cust-1' }, externalConversationId: 'chat-1' };
    expect(fingerprint(base)).toMatch(/^[0-9a-f]{64}$/);
    expect(fingerprint(reordered)).toBe(fingerprint(base));
  });

  test.each([
    ['text', { ...base, text: 'hello!' }],
    ['no text', { ...base, text: null }],
    ['conversation', { ...base, externalConversationId: 'chat-2' }],
    ['sender', { ...base, sender: { ...base.sender, externalId: 'cust-2' } }],
    ['display name', { ...base, sender: { ...base.sender, displayName: 'Ann' } }],
    ['kind', { ...base, sender: { ...base.sender, kind: 'service' as const } }],
    ['an image', { ...base, images: [{ sha256: 'a'.repeat(64), contentType: 'image/png' }] }],
  ])('changes with %s', (_what, changed) => {
    expect(fingerprint(changed)).not.toBe(fingerprint(base));
  });

  test('covers image order and content type', () => {
    const a = { sha256: 'a'.repeat(64), contentType: 'image/png' };
    const b = { sha256: 'b'.repeat(64), contentType: 'image/jpeg' };
    expect(fingerprint({ ...base, images: [a, b] })).not.toBe(fingerprint({ ...base, images: [b, a] }));
    expect(fingerprint({ ...base, images: [a] })).not.toBe(fingerprint({ ...base, images: [{ ...a, contentType: 'image/webp' }] }));
  });
});

describe('deterministic ids', () => {
  test('are stable, prefixed, at most 128 characters, and scoped to the integration', () => {
    const ids = [conversationIdFor('i1', 'c'), customerIdFor('i1', 'u'), eventDocIdFor('i1', 'e'), messageIdFor('i1', 'e', 'f'), deliveryIdFor('c', 'm')];
    expect(ids.map((id) => id.slice(0, 2))).toEqual(['c_', 'u_', 'e_', 'm_', 'd_']);
    for (const id of ids) expect(id.length).toBeLessThanOrEqual(128);
    expect(conversationIdFor('i1', 'c')).toBe(conversationIdFor('i1', 'c'));
    expect(conversationIdFor('i1', 'c')).not.toBe(conversationIdFor('i2', 'c'));
    expect(customerIdFor('i1', 'u')).not.toBe(customerIdFor('i2', 'u'));
  });

  test('part boundaries matter ("ab","c" differs from "a","bc")', () => {
    expect(conversationIdFor('ab', 'c')).not.toBe(conversationIdFor('a', 'bc'));
  });

  test('the messageId changes with the fingerprint (an expired eventId never overwrites)', () => {
    expect(messageIdFor('i', 'e', 'f1')).not.toBe(messageIdFor('i', 'e', 'f2'));
  });
});

describe('rate limit token bucket', () => {
  test('allows a burst of the per-minute limit, then answers with the time to the next token', () => {
    const limiter = new RateLimiter();
    const now = 1_000;
    for (let i = 0; i < 3; i++) expect(limiter.consume('int', 3, now).decision).toEqual({ allowed: true });
    expect(limiter.consume('int', 3, now).decision).toEqual({ allowed: false, retryAfterMs: 20_000 });
    expect(limiter.consume('int', 3, now + 20_000).decision).toEqual({ allowed: true });
    expect(limiter.consume('other', 3, now).decision).toEqual({ allowed: true });
  });

  test('refills continuously and never above capacity', () => {
    const first = take(undefined, 60, 0);
    expect(first.bucket.tokens).toBe(59);
    const later = take(first.bucket, 60, 10 * 60_000);
    expect(later.bucket.tokens).toBe(59);
  });

  test('the RateLimit state: Limit is the budget, Remaining the whole tokens left, Reset the seconds to full (or to the next token at 0, equal to Retry-After)', () => {
    const limiter = new RateLimiter();
    // 3 per minute: one token per 20 s.
    expect(limiter.peek('int', 3, 0)).toEqual({ limit: 3, remaining: 3, resetSeconds: 0 });
    expect(limiter.consume('int', 3, 0)).toEqual({ decision: { allowed: true }, state: { limit: 3, remaining: 2, resetSeconds: 20 } });
    expect(limiter.consume('int', 3, 0).state).toEqual({ limit: 3, remaining: 1, resetSeconds: 40 });
    expect(limiter.consume('int', 3, 0).state).toEqual({ limit: 3, remaining: 0, resetSeconds: 20 });
    const refused = limiter.consume('int', 3, 5_000);
    expect(refused.decision).toEqual({ allowed: false, retryAfterMs: 15_000 });
    expect(refused.state).toEqual({ limit: 3, remaining: 0, resetSeconds: retryAfterSecondsFromMs(15_000) });
    // Peeking takes nothing: 10.5 s later still no whole token, 0.5 s to the next one (rounded up to 1).
    expect(limiter.peek('int', 3, 19_500)).toEqual({ limit: 3, remaining: 0, resetSeconds: 1 });
    expect(limiter.peek('int', 3, 20_000)).toEqual({ limit: 3, remaining: 1, resetSeconds: 40 });
    expect(stateOf(0.25, 60)).toEqual({ limit: 60, remaining: 0, resetSeconds: 1 });
  });

  test('evicts least recently used buckets beyond its bound', () => {
    const limiter = new RateLimiter(2);
    limiter.consume('a', 1, 0);
    limiter.consume('b', 1, 0);
    limiter.consume('c', 1, 0);
    // 'a' was evicted: it starts with a full bucket again.
    expect(limiter.consume('a', 1, 0).decision).toEqual({ allowed: true });
    expect(limiter.consume('c', 1, 0).decision).toMatchObject({ allowed: false });
  });
});

describe('config', () => {
  test('defaults', () => {
    expect(parseConfig({})).toEqual({
      messagesPerMinuteDefault: 1200,
      keyCacheTtlMs: 20_000,
      keyNegativeCacheTtlMs: 5_000,
      eventRetentionMs: 30 * 24 * 3600 * 1000,
      requestDeadlineMs: 50_000,
      retentionDeletesExpired: false,
      unclaimedExpiryMs: 24 * 3600 * 1000,
      opsBlockedAfterMs: 15 * 60_000,
      opsUnhealthyAfterMs: 15 * 60_000,
      queueShards: 64,
      listShards: 8,
      imageStore: { kind: 'gcs', bucket: undefined },
    });
  });

  test('the request deadline stays below the 60 s front-end timeout', () => {
    expect(parseConfig({ REQUEST_DEADLINE_MS: '55000' }).requestDeadlineMs).toBe(55_000);
    expect(() => parseConfig({ REQUEST_DEADLINE_MS: '60000' })).toThrow(/REQUEST_DEADLINE_MS/);
    expect(() => parseConfig({ REQUEST_DEADLINE_MS: '0' })).toThrow(/REQUEST_DEADLINE_MS/);
  });

  test('UNCLAIMED_EXPIRY is a duration with a unit, from 10 minutes to 30 days', () => {
    expect(parseConfig({ UNCLAIMED_EXPIRY: '20m' }).unclaimedExpiryMs).toBe(20 * 60_000);
    expect(parseConfig({ UNCLAIMED_EXPIRY: '36h' }).unclaimedExpiryMs).toBe(36 * 3600_000);
    expect(parseConfig({ UNCLAIMED_EXPIRY: '30d' }).unclaimedExpiryMs).toBe(30 * 86_400_000);
    expect(parseConfig({ UNCLAIMED_EXPIRY: '600s' }).unclaimedExpiryMs).toBe(600_000);
    for (const bad of ['9m', '31d', '24', '1.5h', 'h', '0h', '-1h', '24 h']) {
      expect(() => parseConfig({ UNCLAIMED_EXPIRY: bad })).toThrow(/UNCLAIMED_EXPIRY/);
    }
  });

  test('an empty IMAGE_BUCKET counts as missing (a 503 at use, not a failed instance)', () => {
    expect(parseConfig({ IMAGE_BUCKET: '' }).imageStore).toEqual({ kind: 'gcs', bucket: undefined });
    expect(parseConfig({ IMAGE_BUCKET: 'b' }).imageStore).toEqual({ kind: 'gcs', bucket: 'b' });
  });

  test('local image store under the emulators without a Storage emulator', () => {
    expect(parseConfig({ FUNCTIONS_EMULATOR: 'true', LOCAL_IMAGE_DIR: '/tmp/x' }).imageStore).toEqual({ kind: 'local', dir: '/tmp/x' });
    expect(parseConfig({ FUNCTIONS_EMULATOR: 'true', STORAGE_EMULATOR_HOST: 'x:1' }).imageStore.kind).toBe('gcs');
  });

  test('fails fast naming the bad variables', () => {
    expect(() => parseConfig({ KEY_CACHE_TTL_MS: '60000', EVENT_RETENTION_DAYS: '7' })).toThrow(/KEY_CACHE_TTL_MS.*EVENT_RETENTION_DAYS|EVENT_RETENTION_DAYS.*KEY_CACHE_TTL_MS/);
    expect(() => parseConfig({ MESSAGES_PER_MINUTE_DEFAULT: 'lots' })).toThrow(/MESSAGES_PER_MINUTE_DEFAULT/);
  });
});

describe('incoming message schema', () => {
  const valid = { eventId: 'e', externalConversationId: 'c', sender: { externalId: 'u' }, message: { text: 'hi' } };

  test('applies the sender.kind default', () => {
    expect(parseOrThrow(IncomingMessageSchema, valid).sender.kind).toBe('customer');
  });

  test('counts code points, not UTF-16 units', () => {
    expect(codePointLength('😀'.repeat(10_000))).toBe(10_000);
    expect(() => parseOrThrow(IncomingMessageSchema, { ...valid, message: { text: '😀'.repeat(10_000) } })).not.toThrow();
    expect(() => parseOrThrow(IncomingMessageSchema, { ...valid, message: { text: '😀'.repeat(10_001) } })).toThrow(/message\.text: must be at most 10000 characters/);
  });

  test('names the offending field path, and unknown properties', () => {
    expect(() => parseOrThrow(IncomingMessageSchema, { ...valid, sender: { externalId: '' } })).toThrow(/sender\.externalId: must be at least 1 character/);
    expect(() => parseOrThrow(IncomingMessageSchema, { ...valid, extra: 1 })).toThrow(/body: unknown property 'extra'/);
    expect(() => parseOrThrow(IncomingMessageSchema, { ...valid, sender: { externalId: 'u', kind: 'bot' } })).toThrow(/sender\.kind/);
    expect(() => parseOrThrow(IncomingMessageSchema, [])).toThrow(BadRequestError);
  });

  test('rejects lone surrogates', () => {
    expect(() => parseOrThrow(IncomingMessageSchema, { ...valid, eventId: '\ud800' })).toThrow(/eventId: must be well-formed Unicode/);
  });
});

describe('strict JSON body parsing', () => {
  test('empty, invalid UTF-8 and malformed JSON are 400 invalid_json', () => {
    for (const raw of [Buffer.alloc(0), Buffer.from([0x7b, 0xff, 0x7d]), Buffer.from('{"a":')]) {
      expect(() => parseJsonBody(raw)).toThrow(expect.objectContaining({ status: 400, code: 'invalid_json' }) as Error);
    }
    expect(parseJsonBody(Buffer.from('{"a":"é"}'))).toEqual({ a: 'é' });
  });
});

describe('error mapping', () => {
  test('ApiErrors pass through; transient gRPC codes and unknown errors become 503 with Retry-After', () => {
    const conflict = new ConflictError('lease_lost', 'x');
    expect(toApiError(conflict)).toEqual({ error: conflict, unexpected: false });
    const aborted = toApiError(Object.assign(new Error('contention'), { code: 10 }));
    expect(aborted.error).toBeInstanceOf(ServiceUnavailableError);
    expect(aborted.error.retryAfterSeconds).toBe(1);
    expect(aborted.unexpected).toBe(false);
    const bug = toApiError(new TypeError('boom'));
    expect(bug.error.status).toBe(503);
    expect(bug.unexpected).toBe(true);
    expect(bug.error.message).not.toContain('boom');
  });

  test('a transaction the backend dropped (INVALID_ARGUMENT) is transient; any other INVALID_ARGUMENT is unexpected', () => {
    for (const message of ['3 INVALID_ARGUMENT: Transaction is invalid or closed.', '3 INVALID_ARGUMENT: The referenced transaction has expired or is no longer valid.']) {
      const dropped = toApiError(Object.assign(new Error(message), { code: 3 }));
      expect(dropped).toMatchObject({ unexpected: false, error: { status: 503, code: 'temporarily_unavailable', retryAfterSeconds: 1 } });
    }
    const badValue = toApiError(Object.assign(new Error('3 INVALID_ARGUMENT: Cannot use "undefined" as a Firestore value'), { code: 3 }));
    expect(badValue).toMatchObject({ unexpected: true, error: { status: 503 } });
    // Same message, another code: not this case.
    expect(toApiError(Object.assign(new Error('Transaction is invalid or closed'), { code: 9 })).unexpected).toBe(true);
  });
});

describe('Content-Type', () => {
  const JSON_ONLY = ['application/json'] as const;
  test('accepted: the type in any case, utf-8 charset quoted or not, an empty parameter', () => {
    for (const value of ['application/json', 'Application/JSON', 'application/json; charset=utf-8', 'application/json;charset="UTF-8"', 'application/json;']) {
      expect(parseMediaType(value, JSON_ONLY)).toBe('application/json');
    }
  });

  test.each([
    ['missing', undefined, /Content-Type is required/],
    ['another type', 'text/plain', /'text\/plain' is not supported/],
    ['another charset', 'application/json; charset=iso-8859-1', /Only the utf-8 charset/],
    ['a valueless parameter', 'application/json; charset', /parameter 'charset' is malformed/],
    ['a parameter without a name', 'application/json; =utf-8', /parameter '=utf-8' is malformed/],
  ])('415 unsupported_media_type: %s', (_what, value, message) => {
    let thrown: unknown;
    try {
      parseMediaType(value, JSON_ONLY);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toMatchObject({ status: 415, code: 'unsupported_media_type', message: expect.stringMatching(message) });
  });
});
