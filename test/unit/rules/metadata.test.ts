import { METADATA_LIMITS, SENT_AT_MAX_FUTURE_MS } from '../../../functions/src/contract';
import { fingerprint } from '../../../functions/src/rules/fingerprint';
import { claimConversation, latestSentAt, mergeMetadata, metadataBytes, metadataProblems, sentAtOf, storedMetadata } from '../../../functions/src/rules/metadata';
import { BadRequestError } from '../../../functions/src/rules/errors';
import { decideClaim, type ClaimInput } from '../../../functions/src/rules/state-machine';
import { newDelivery } from '../../../functions/src/rules/record';
import { DELIVERY_OPERATION_SCHEMAS } from '../../../functions/src/deliveries/schemas';

const T0 = 1_767_225_600_000;
const ClaimDeliveryResponseSchema = DELIVERY_OPERATION_SCHEMAS.claimDelivery.response;

/** Catches what `fn` throws as a BadRequestError (fails the test when it throws something else or nothing). */
function badRequest(fn: () => unknown): BadRequestError {
  try {
    fn();
  } catch (err) {
    if (err instanceof BadRequestError) return err;
    throw err;
  }
  throw new Error('expected a BadRequestError');
}

describe('metadataProblems', () => {
  test('a flat map of strings and nulls within the limits is valid', () => {
    expect(metadataProblems({ orderId: 'A-1', 'locale.lang': 'pl', old_key: null })).toEqual([]);
    const full = Object.fromEntries(Array.from({ length: METADATA_LIMITS.keys }, (_, i) => [`k${i}`, 'v']));
    expect(metadataProblems(full)).toEqual([]);
  });

  test.each([
    ['a nested object', { a: { b: 'c' } }, 'no nested values'],
    ['an array value', { a: ['x'] }, 'no nested values'],
    ['a number', { a: 1 }, 'no nested values'],
    ['a key with a space', { 'a b': 'x' }, 'key must be'],
    ['an empty key', { '': 'x' }, 'key must be'],
    ['a 65-character key', { ['k'.repeat(65)]: 'x' }, 'key must be'],
    ['a value over 512 code points', { a: '😀'.repeat(513) }, 'at most 512 characters'],
    ['a lone surrogate', { a: '\uD800' }, 'well-formed'],
    ['17 keys', Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v'])), 'at most 16 keys'],
  ])('refuses %s', (_what, metadata, message) => {
    const problems = metadataProblems(metadata);
    expect(problems.map((p) => p.message).join('; ')).toContain(message);
    expect(problems[0]?.path[0]).toBe('metadata');
  });

  test('"2 KB in all" is the UTF-8 of the map\'s JSON: 512 code points of 4 bytes in one value are over, in ASCII under', () => {
    // 512 emoji: 2048 bytes of value alone, plus the JSON around it.
    expect(metadataBytes({ a: '😀'.repeat(512) })).toBe(2048 + '{"a":""}'.length);
    expect(metadataProblems({ a: '😀'.repeat(512) }).map((p) => p.message)).toEqual([`must be at most ${METADATA_LIMITS.bytes} bytes of UTF-8 JSON in all`]);
    expect(metadataProblems({ a: 'x'.repeat(512), b: 'y'.repeat(512), c: 'z'.repeat(512) })).toEqual([]);
    // Exactly at the limit is allowed, one byte more is not.
    const exact = { a: 'x'.repeat(METADATA_LIMITS.bytes - '{"a":""}'.length - 1024), b: 'y'.repeat(1024 - '"b":""'.length - 1) };
    expect(metadataBytes(exact)).toBe(METADATA_LIMITS.bytes);
  });
});

describe('mergeMetadata', () => {
  test('the latest message wins per key, null removes a key, other keys stay', () => {
    const first = mergeMetadata({}, { orderId: 'A-1', locale: 'pl' });
    expect(first).toEqual({ merged: { orderId: 'A-1', locale: 'pl' }, removed: [] });
    const second = mergeMetadata(first.merged, { orderId: 'A-2', locale: null, gone: null });
    expect(second).toEqual({ merged: { orderId: 'A-2' }, removed: ['locale'] });
    expect(mergeMetadata(second.merged, { orderId: null }).merged).toEqual({});
  });

  test('does not change the map it merges into', () => {
    const current = Object.freeze({ a: '1' });
    mergeMetadata(current, { a: '2', b: '3' });
    expect(current).toEqual({ a: '1' });
  });

  test('a merge past the limits is 400 invalid_request (each message within them)', () => {
    const sixteen = Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`k${i}`, 'v']));
    expect(badRequest(() => mergeMetadata(sixteen, { extra: 'v' })).code).toBe('invalid_request');
    // Replacing a key, or removing one to make room, stays within.
    expect(Object.keys(mergeMetadata(sixteen, { k0: 'w' }).merged)).toHaveLength(16);
    expect(mergeMetadata(sixteen, { k0: null, extra: 'v' }).merged.extra).toBe('v');
    const big = { a: 'x'.repeat(1000), b: 'y'.repeat(1000) };
    expect(badRequest(() => mergeMetadata(big, { c: 'z'.repeat(100) })).message).toContain('bytes');
  });

  test('storedMetadata reads only string values of a map', () => {
    expect(storedMetadata(undefined)).toEqual({});
    expect(storedMetadata(['a'])).toEqual({});
    expect(storedMetadata({ a: 'x', b: 1, c: null })).toEqual({ a: 'x' });
  });
});

describe('sentAt', () => {
  test('defaults to the receipt time, accepts the past and up to 5 minutes ahead', () => {
    expect(sentAtOf(undefined, T0)).toBe(T0);
    expect(sentAtOf(0, T0)).toBe(0);
    expect(sentAtOf(T0 - 86_400_000, T0)).toBe(T0 - 86_400_000);
    expect(sentAtOf(T0 + SENT_AT_MAX_FUTURE_MS, T0)).toBe(T0 + SENT_AT_MAX_FUTURE_MS);
  });

  test('more than 5 minutes ahead of the (fake) clock is 400; the same time is fine once the clock moved', () => {
    const ahead = T0 + SENT_AT_MAX_FUTURE_MS + 1;
    expect(badRequest(() => sentAtOf(ahead, T0)).code).toBe('invalid_request');
    expect(sentAtOf(ahead, T0 + 1)).toBe(ahead);
  });

  test.each([[-1], [1.5], [Number.NaN]])('refuses %p', (value) => {
    expect(badRequest(() => sentAtOf(value, T0)).code).toBe('invalid_request');
  });

  test('the conversation keeps the greatest: an older message arriving late never moves it back', () => {
    expect(latestSentAt(null, T0)).toBe(T0);
    expect(latestSentAt(T0, T0 - 1000)).toBe(T0);
    expect(latestSentAt(T0, T0 + 1000)).toBe(T0 + 1000);
  });
});

describe('fingerprint with metadata and sentAt', () => {
  const base = { externalConversationId: 'chat-1', sender: { externalId: 'cust-1', displayName: null, kind: 'customer' as const }, text: 'hi', images: [] };

  test('absent (or an empty map) leaves the v1 fingerprint unchanged', () => {
    // The fingerprint of this message as the code before metadata and sentAt computed it.
    const v1 = '9080190c7b27ff237a9bf04cb3039f670ff0be9d18d96261faa0a222daba2f26';
    expect(fingerprint(base)).toBe(v1);
    expect(fingerprint({ ...base, metadata: undefined, sentAt: undefined })).toBe(v1);
    expect(fingerprint({ ...base, metadata: {} })).toBe(v1);
  });

  test('other metadata or another sentAt is other content; key order is not', () => {
    const withMeta = fingerprint({ ...base, metadata: { a: '1', b: null } });
    expect(withMeta).not.toBe(fingerprint(base));
    expect(fingerprint({ ...base, metadata: { b: null, a: '1' } })).toBe(withMeta);
    expect(fingerprint({ ...base, metadata: { a: '2', b: null } })).not.toBe(withMeta);
    expect(fingerprint({ ...base, metadata: { a: '1' } })).not.toBe(withMeta);
    expect(fingerprint({ ...base, sentAt: T0 })).not.toBe(fingerprint(base));
    expect(fingerprint({ ...base, sentAt: T0 })).not.toBe(fingerprint({ ...base, sentAt: T0 + 1 }));
  });
});

describe('the claim carries the conversation metadata', () => {
  const delivery = newDelivery({ deliveryId: 'd1', workspaceId: 'w', integrationId: 'i', conversationId: 'c', messageId: 'm', seq: 1, text: 'hello', now: T0 });
  const input: ClaimInput = { now: T0 + 1000, requestId: 'R1', newLeaseId: 'L1', predecessorUnfinished: false, recipient: { externalConversationId: 'chat-1', externalCustomerId: 'cust-1' } };

  test('as conversation.metadata when not empty, on a new lease and on a retried claim', () => {
    const first = decideClaim(delivery, { ...input, metadata: { orderId: 'A-1' } });
    expect(first.response).toMatchObject({ status: 'ready', conversation: { metadata: { orderId: 'A-1' } } });
    expect(ClaimDeliveryResponseSchema.safeParse(first.response).success).toBe(true);
    const retried = decideClaim(first.next ?? delivery, { ...input, now: T0 + 2000, metadata: { orderId: 'A-2' } });
    expect(retried.response).toMatchObject({ status: 'ready', leaseId: 'L1', conversation: { metadata: { orderId: 'A-2' } } });
  });

  test('absent when empty or unknown: the v1 shape', () => {
    for (const metadata of [undefined, {}]) {
      const { response } = decideClaim(delivery, { ...input, metadata });
      expect(response).not.toHaveProperty('conversation');
      expect(Object.keys(response).sort()).toEqual(['leaseExpiresAt', 'leaseId', 'message', 'status']);
    }
    expect(claimConversation({})).toEqual({});
  });

  test('on an edit too', () => {
    const edit = { ...delivery, kind: 'edit' as const, target: { deliveryId: 'd0', providerMessageIds: ['p1'] } };
    const { response } = decideClaim(edit, { ...input, metadata: { orderId: 'A-1' } });
    expect(response).toMatchObject({ kind: 'edit', conversation: { metadata: { orderId: 'A-1' } } });
    expect(ClaimDeliveryResponseSchema.safeParse(response).success).toBe(true);
  });
});
