/** The console's pure helpers (console/src/format.ts, keys.ts): counting, merging, keys. */
import { displayPrefix, hashKey, isWellFormedKey } from '../../../functions/src/integrations/keys';
import { codePointLength, REPLY_MAX_CODE_POINTS } from '../../../functions/src/contract';
import { canCancel, canResend, cancelOutcomeLabel, conversationPerson, formatAge, mergeByRecency, replyProblem } from '../../../console/src/format';
import { issueKey, sha256Hex } from '../../../console/src/keys';

test('reply length counts code points like the rules: an emoji is one, 10000 is the limit', () => {
  expect(codePointLength('a😀b')).toBe(3);
  expect(replyProblem('😀'.repeat(REPLY_MAX_CODE_POINTS))).toBeUndefined();
  expect(replyProblem('😀'.repeat(REPLY_MAX_CODE_POINTS + 1))).toMatch(/Too long by 1 /);
  expect(replyProblem('')).toBeDefined();
  expect(replyProblem('  \n')).toBeDefined();
  expect(replyProblem('x')).toBeUndefined();
});

test('resend is offered exactly on failed and unknown deliveries', () => {
  expect(['queued', 'leased', 'sending', 'sent', 'failed', 'unknown', undefined].filter(canResend)).toEqual(['failed', 'unknown']);
});

test('cancel is offered exactly on deliveries the connector has not started', () => {
  expect(['queued', 'leased', 'sending', 'sent', 'failed', 'unknown', undefined].filter(canCancel)).toEqual(['queued', 'leased']);
  expect(cancelOutcomeLabel('cancelled')).toBe('cancelled before sending');
  expect(cancelOutcomeLabel('too_late')).toMatch(/^too late/);
});

test('ages read as people say them, in whole units', () => {
  expect([0, 59.9, 60, 61, 3599, 3600, 3661, 86399, 86400, 90061, -5].map(formatAge)).toEqual([
    '0 s', '59 s', '1 min 0 s', '1 min 1 s', '59 min 59 s', '1 h 0 min', '1 h 1 min', '23 h 59 min', '1 d 0 h', '1 d 1 h', '0 s',
  ]);
});

test('shards merge most recent first, ties by id, cut at the limit', () => {
  const row = (id: string, t: number) => ({ id, lastMessageAtMs: t });
  expect(mergeByRecency([[row('a', 5), row('b', 1)], [], [row('c', 9), row('d', 5)]], 3).map((r) => r.id)).toEqual(['c', 'a', 'd']);
});

test('keys minted with WebCrypto have the service format, hash and display prefix', async () => {
  const issued = await issueKey('sdk_test_');
  expect(isWellFormedKey(issued.key)).toBe(true);
  expect(issued.key).toMatch(/^sdk_test_[A-Za-z0-9_-]{43}$/);
  expect(issued.keyHash).toBe(hashKey(issued.key));
  expect(issued.keyPrefix).toBe(displayPrefix(issued.key));
  expect((await issueKey('sdk_live_')).key).toMatch(/^sdk_live_/);
  expect(await sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  const keys = new Set(await Promise.all(Array.from({ length: 50 }, async () => (await issueKey('sdk_test_')).key)));
  expect(keys.size).toBe(50);
});

test("a conversation's person is its latest customer, never the alert bot that wrote last", () => {
  // After a service alert the latest sender is the bot; the service keeps the customer apart.
  expect(conversationPerson({ lastCustomerExternalId: 'customer-7', lastSenderExternalId: 'shop-monitor' } as { lastCustomerExternalId: string })).toBe('customer-7');
  expect(conversationPerson({ lastCustomerExternalId: 'bob' })).toBe('bob');
  // Only alerts so far: nobody to name (and certainly not the bot).
  expect(conversationPerson({ lastSenderExternalId: 'shop-monitor' } as { lastCustomerExternalId?: unknown })).toBeUndefined();
  expect(conversationPerson({ lastCustomerExternalId: '' })).toBeUndefined();
  expect(conversationPerson({ lastCustomerExternalId: null })).toBeUndefined();
});
