/** The console's pure helpers (console/src/format.ts, keys.ts): counting, merging, keys, the reply and health rules the views apply. */
import { displayPrefix, hashKey, isWellFormedKey } from '../../../functions/src/integrations/keys';
import { codePointLength, isValidTopicName, REPLY_MAX_CODE_POINTS, TOPIC_NAME_FORMAT } from '../../../functions/src/contract';
import {
  cancelPending,
  canCancel,
  canResend,
  cancelOutcomeLabel,
  conversationPerson,
  formatAge,
  healthProblemText,
  healthStaleSeconds,
  byFailuresThenRecency,
  byRecency,
  firstLine,
  isUnread,
  messagePreview,
  pageTitle,
  shardWindows,
  healthFacts,
  thumbnailBox,
  replyProblem,
  resendPending,
  timestampMillis,
  topicProblem,
} from '../../../console/src/format';
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

test('rows sort most recent first, ties by id descending (the shard queries\' implicit order); "failed" by failures first', () => {
  const row = (id: string, t: number, failedReplies = 0) => ({ id, lastMessageAtMs: t, failedReplies });
  expect([row('a', 5), row('b', 1), row('c', 9), row('d', 5)].sort(byRecency).map((r) => r.id)).toEqual(['c', 'd', 'a', 'b']);
  expect([row('a', 9, 1), row('b', 1, 3), row('c', 5, 1)].sort(byFailuresThenRecency).map((r) => r.id)).toEqual(['b', 'a', 'c']);
});

describe('shardWindows: paging exact across shards with small windows', () => {
  type R = { id: string; lastMessageAtMs: number };
  const byTime = (a: R, b: R) => b.lastMessageAtMs - a.lastMessageAtMs;
  /** A shard's window of `limit` rows out of its `all` (times), newest first. */
  const window = (shard: string, all: number[], limit: number): R[] => [...all].sort((a, b) => b - a).slice(0, limit).map((t) => ({ id: `${shard}${t}`, lastMessageAtMs: t }));

  test('every row of a full window is certain down to its last row; rows after it wait for a wider window', () => {
    // Shard a holds 10, 9, 8 | 7 (window 3); shard b holds 6, 5 (not full).
    const plan = shardWindows([window('a', [10, 9, 8, 7], 3), window('b', [6, 5], 3)], [3, 3], 4, byTime);
    expect(plan.rows.map((r) => r.lastMessageAtMs)).toEqual([10, 9, 8]);
    expect(plan.widen).toEqual([0]);
    expect(plan.more).toBe(true);
    const wider = shardWindows([window('a', [10, 9, 8, 7], 6), window('b', [6, 5], 3)], [6, 3], 4, byTime);
    expect(wider.rows.map((r) => r.lastMessageAtMs)).toEqual([10, 9, 8, 7]);
    expect(wider).toMatchObject({ widen: [], more: true });
  });

  test('the same rows as merging whole shards, for any spread (random data, widening until done)', () => {
    let seed = 7;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (let round = 0; round < 200; round++) {
      const shardCount = 1 + Math.floor(random() * 8);
      const all = Array.from({ length: shardCount }, () => Array.from({ length: Math.floor(random() * 30) }, () => Math.floor(random() * 1000)));
      const shown = 1 + Math.floor(random() * 40);
      const limits = all.map(() => 1 + Math.floor(random() * 6));
      const expected = all.flatMap((times, k) => window(String.fromCharCode(97 + k), times, times.length)).sort((a, b) => byTime(a, b) || (a.id < b.id ? 1 : -1)).slice(0, shown);
      let plan = shardWindows(all.map((t, k) => window(String.fromCharCode(97 + k), t, limits[k] as number)), limits, shown, (a, b) => byTime(a, b) || (a.id < b.id ? 1 : -1));
      for (let step = 0; plan.widen.length > 0 && step < 100; step++) {
        for (const k of plan.widen) limits[k] = (limits[k] as number) + 3;
        plan = shardWindows(all.map((t, k) => window(String.fromCharCode(97 + k), t, limits[k] as number)), limits, shown, (a, b) => byTime(a, b) || (a.id < b.id ? 1 : -1));
      }
      expect(plan.rows.map((r) => r.id)).toEqual(expected.map((r) => r.id));
      expect(plan.more).toBe(all.flat().length > shown || all.some((t, k) => t.length >= (limits[k] as number) && t.length > 0));
    }
  });

  test('60 conversations over 8 shards, none full at 50: 50 shown and "more" (the case the list used to hide)', () => {
    const shards = Array.from({ length: 8 }, (_, k) => window(String(k), Array.from({ length: k < 4 ? 8 : 7 }, (_, i) => i * 8 + k), 12));
    const plan = shardWindows(shards, shards.map(() => 12), 50, byTime);
    expect(plan.rows).toHaveLength(50);
    expect(plan.more).toBe(true);
    expect(shardWindows(shards, shards.map(() => 12), 60, byTime)).toMatchObject({ widen: [], more: false });
  });

  test('no shards, or empty ones: nothing shown, nothing more', () => {
    expect(shardWindows([], [], 50, byTime)).toEqual({ rows: [], widen: [], more: false });
    expect(shardWindows([[], []], [12, 12], 50, byTime)).toEqual({ rows: [], widen: [], more: false });
  });
});

test('a row previews the last message as the thread shows it now', () => {
  expect(messagePreview({ direction: 'inbound', text: '\n  My parcel is late\nOrder 1234', files: 0 })).toBe('My parcel is late');
  expect(messagePreview({ direction: 'inbound', text: 'typo', customerEdits: [{ text: 'first edit' }, { text: 'fixed' }], files: 0 })).toBe('fixed');
  expect(messagePreview({ direction: 'inbound', text: 'secret', deleted: true, files: 1 })).toBe('Message deleted by the customer');
  expect(messagePreview({ direction: 'inbound', text: 'Card declined', alert: true, files: 0 })).toBe('Alert: Card declined');
  expect(messagePreview({ direction: 'inbound', text: undefined, files: 2 })).toBe('2 images');
  expect(messagePreview({ direction: 'outbound', text: 'We are on it', files: 0 })).toBe('Reply: We are on it');
  expect(messagePreview({ direction: 'outbound', text: '', files: 1 })).toBe('Reply: 1 file');
  expect(messagePreview({ direction: 'outbound', text: 'oops', unsent: true, files: 0 })).toBe('Reply unsent');
});

test('the first line is cut at 120 code points, never inside an emoji', () => {
  expect(firstLine('😀'.repeat(200))).toBe(`${'😀'.repeat(119)}…`);
  expect(firstLine('short')).toBe('short');
  expect(firstLine('   \n\n')).toBe('');
});

test('unread: a message came in after the member\'s marker, or there is no marker', () => {
  expect(isUnread(2000, undefined)).toBe(true);
  expect(isUnread(2000, 1999)).toBe(true);
  expect(isUnread(2000, 2000)).toBe(false);
  expect(isUnread(0, undefined)).toBe(false);
});

test('the tab title counts what needs a reply', () => {
  expect(pageTitle(undefined)).toBe('Support desk console');
  expect(pageTitle(0)).toBe('Support desk console');
  expect(pageTitle(3)).toBe('(3) Support desk console');
  expect(pageTitle(12345)).toBe('(999+) Support desk console');
});

test('health states its facts in words; none only when nothing failed, nothing is unknown and nothing waits', () => {
  expect(healthFacts({ counts: { sent: 4 }, oldestClaimable: null })).toEqual([]);
  expect(healthFacts({ counts: { sent: 0, failed: 3 }, oldestClaimable: { ageSeconds: 240 } })).toEqual(['3 failed in 24 h', 'oldest waiting 4 min 0 s']);
  expect(healthFacts({ counts: { unknown: 1 }, oldestClaimable: { ageSeconds: undefined } })).toEqual(['1 of unknown outcome in 24 h', 'oldest waiting 0 s']);
});

test("a thumbnail's box: within 240 x 180, the image's proportions, never enlarged; unknown sizes reserve nothing", () => {
  expect(thumbnailBox(640, 480)).toEqual({ width: 240, height: 180 });
  expect(thumbnailBox(1000, 200)).toEqual({ width: 240, height: 48 });
  expect(thumbnailBox(300, 1200)).toEqual({ width: 45, height: 180 });
  expect(thumbnailBox(16, 16)).toEqual({ width: 16, height: 16 });
  expect(thumbnailBox(16384, 1)).toEqual({ width: 240, height: 1 });
  expect([thumbnailBox(undefined, 480), thumbnailBox(640, undefined), thumbnailBox(0, 480), thumbnailBox(Number.NaN, 4)]).toEqual([undefined, undefined, undefined, undefined]);
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

test('a Firestore Timestamp reads as epoch ms; anything else (missing, a number, a plain object) as unknown', () => {
  expect(timestampMillis({ toMillis: () => 1234 })).toBe(1234);
  for (const other of [undefined, null, 0, 1234, '2024-01-01', {}, { toMillis: 5 }]) expect(timestampMillis(other)).toBeUndefined();
});

test('a resend is pending while the request is newer than the mirror of a resendable delivery', () => {
  expect(resendPending('failed', 2000, 1000)).toBe(true);
  expect(resendPending('unknown', 2000, undefined)).toBe(true);
  // The service answered (the mirror moved on) or nothing was asked.
  expect(resendPending('failed', 1000, 2000)).toBe(false);
  expect(resendPending('failed', 1000, 1000)).toBe(false);
  expect(resendPending('failed', undefined, 1000)).toBe(false);
  // Once the new delivery is under way, the reply is no longer waiting for the resend.
  expect(resendPending('queued', 2000, 1000)).toBe(false);
  expect(resendPending(undefined, 2000, 1000)).toBe(false);
});

test('a cancel is pending while asked (here, or by a request newer than the mirror) and not answered on this delivery', () => {
  const reply = { deliveryId: 'd1', answered: false, requestedHere: false, requestedAtMs: undefined, updatedAtMs: 1000 };
  expect(cancelPending(reply)).toBe(false);
  expect(cancelPending({ ...reply, requestedHere: true })).toBe(true);
  // A colleague's request after the mirror's last update.
  expect(cancelPending({ ...reply, requestedAtMs: 2000 })).toBe(true);
  // A request older than the current delivery (made before a resend) does not count.
  expect(cancelPending({ ...reply, requestedAtMs: 500 })).toBe(false);
  // Without the mirror's time the request cannot be placed: not pending.
  expect(cancelPending({ ...reply, requestedAtMs: 2000, updatedAtMs: undefined })).toBe(false);
  // Answered, or no delivery yet: never pending.
  expect(cancelPending({ ...reply, requestedHere: true, answered: true })).toBe(false);
  expect(cancelPending({ ...reply, deliveryId: undefined, requestedHere: true, requestedAtMs: 2000 })).toBe(false);
});

test("an integration's open problems read in words; unknown codes as themselves", () => {
  expect(healthProblemText({ code: 'claimable_too_old', ageSeconds: 192 })).toBe('a reply has waited 3 min 12 s for the connector to claim it');
  expect(healthProblemText({ code: 'outcomes_failing', failed: 4, of: 5 })).toBe('4 of the last 5 replies failed or ended unknown');
  expect(healthProblemText({ code: 'outcomes_failing' })).toBe('? of the last ? replies failed or ended unknown');
  expect(healthProblemText({ code: 'something_new' })).toBe('something_new');
  expect(healthProblemText({})).toBe('unknown problem');
});

test('health numbers are stale after 15 minutes without a roll-up, and say for how long', () => {
  const now = 10_000_000;
  expect(healthStaleSeconds(undefined, now)).toBeUndefined();
  expect(healthStaleSeconds(now - 15 * 60_000, now)).toBeUndefined();
  expect(healthStaleSeconds(now - 15 * 60_000 - 1000, now)).toBe(15 * 60 + 1);
});

test("topic names: empty (none) or the contract's form; refused in the contract's words", () => {
  const valid = 'projects/my-project/topics/connector-notifications';
  expect(isValidTopicName(valid)).toBe(true);
  expect(topicProblem(valid)).toBeUndefined();
  expect(topicProblem('')).toBeUndefined();
  for (const bad of ['not a topic', 'projects/p/topics/t', 'topics/connector-notifications']) expect(topicProblem(bad)).toBe(`The topic must look like ${TOPIC_NAME_FORMAT}.`);
});
