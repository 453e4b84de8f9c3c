/**
 * The catch-up list's pure parts (docs/contract.md#catch-up): which deliveries carry `pendingAt` and when it
 * moves (deliveries/record.ts `withPendingAt`), and the opaque cursor (deliveries/catch-up-list.ts).
 */
import { ApiError } from '../../../functions/src/rules/errors';
import { decodeCursor, encodeCursor, mergeShardPages } from '../../../functions/src/deliveries/catch-up-list';
import { newDelivery, withPendingAt, type DeliveryRecord } from '../../../functions/src/rules/record';

const T0 = 1_700_000_000_000;
const base = (over: Partial<DeliveryRecord> = {}): DeliveryRecord => ({
  ...newDelivery({ deliveryId: 'd_1', workspaceId: 'ws', integrationId: 'int', conversationId: 'c', messageId: 'm', seq: 1, text: 'hi', now: T0 }),
  ...over,
});

describe('withPendingAt', () => {
  test('a queued head delivery is pending from now; a non-head one is not', () => {
    expect(withPendingAt(null, base({ head: true }), T0).pendingAt).toBe(T0);
    expect('pendingAt' in withPendingAt(null, base(), T0)).toBe(false);
  });

  test('it keeps its place while it stays claimable with the same due time', () => {
    const pending = withPendingAt(null, base({ head: true }), T0);
    expect(withPendingAt(pending, { ...pending, waiting: false, updatedAt: T0 + 5 }, T0 + 5).pendingAt).toBe(T0);
  });

  test('a retry delay makes it pending from its due time; leased, sending and finished ones leave the list', () => {
    const pending = withPendingAt(null, base({ head: true }), T0);
    expect(withPendingAt(pending, { ...pending, notBefore: T0 + 60_000 }, T0 + 1).pendingAt).toBe(T0 + 60_000);
    for (const status of ['leased', 'sending', 'sent', 'failed', 'unknown'] as const) {
      expect('pendingAt' in withPendingAt(pending, { ...pending, status }, T0 + 1)).toBe(false);
    }
  });

  test('back to queued after a lease (expiry, retry 0): pending again from then, so it comes after the current page', () => {
    const leased = withPendingAt(null, base({ head: true, status: 'leased' }), T0);
    expect(withPendingAt(leased, { ...leased, status: 'queued' }, T0 + 120_000).pendingAt).toBe(T0 + 120_000);
  });
});

describe('cursor', () => {
  const owner = { workspaceId: 'ws', integrationId: 'int' };
  const expectInvalid = (fn: () => unknown) => {
    try {
      fn();
    } catch (e) {
      expect(e).toBeInstanceOf(ApiError);
      expect(e).toMatchObject({ status: 400, code: 'invalid_cursor' });
      return;
    }
    throw new Error('expected 400 invalid_cursor');
  };

  test('round trip, opaque (no ids in clear)', () => {
    const cursor = encodeCursor(owner, { pendingAt: T0, deliveryId: 'd_1' });
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(cursor).not.toContain('int');
    expect(decodeCursor(owner, cursor)).toEqual({ pendingAt: T0, deliveryId: 'd_1' });
  });

  test("another integration's cursor, or another workspace's, is 400 invalid_cursor", () => {
    const cursor = encodeCursor(owner, { pendingAt: T0, deliveryId: 'd_1' });
    expectInvalid(() => decodeCursor({ workspaceId: 'ws', integrationId: 'other' }, cursor));
    expectInvalid(() => decodeCursor({ workspaceId: 'ws2', integrationId: 'int' }, cursor));
  });

  test.each([
    ['not base64url', 'a+b/c='],
    ['not JSON', Buffer.from('nope').toString('base64url')],
    ['a JSON scalar', Buffer.from('42').toString('base64url')],
    ['wrong version', Buffer.from(JSON.stringify({ v: 2, o: 'x', t: 1, d: 'd' })).toString('base64url')],
    ['extra field', Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(encodeCursor(owner, { pendingAt: 1, deliveryId: 'd' }), 'base64url').toString()), x: 1 })).toString('base64url')],
    ['negative time', Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(encodeCursor(owner, { pendingAt: 1, deliveryId: 'd' }), 'base64url').toString()), t: -1 })).toString('base64url')],
  ])('%s: 400 invalid_cursor', (_name, cursor) => {
    expectInvalid(() => decodeCursor(owner, cursor));
  });
});

describe('mergeShardPages (the list is read shard by shard: docs/capacity.md)', () => {
  const at = (pendingAt: number, deliveryId: string) => ({ pendingAt, deliveryId });
  test('the first n of the union, in list order: time, then id', () => {
    const shards = [
      [at(1, 'd_b'), at(4, 'd_a'), at(9, 'd_z')],
      [at(1, 'd_a'), at(2, 'd_c')],
      [],
      [at(3, 'd_x'), at(4, 'd_0')],
    ];
    expect(mergeShardPages(shards, 5)).toEqual([at(1, 'd_a'), at(1, 'd_b'), at(2, 'd_c'), at(3, 'd_x'), at(4, 'd_0')]);
    expect(mergeShardPages(shards, 100)).toHaveLength(7);
    expect(mergeShardPages([[], []], 3)).toEqual([]);
  });

  test('paging by the cursor over merged shards: every item once, in order', () => {
    // 4 shards of 25 items each with interleaved times; pages of 7 follow the last position.
    const all = Array.from({ length: 100 }, (_, i) => at(Math.floor(i / 3), `d_${String(i).padStart(3, '0')}`));
    const shards = [0, 1, 2, 3].map((k) => all.filter((_, i) => i % 4 === k));
    const seen: string[] = [];
    type Item = { pendingAt: number; deliveryId: string };
    let after: Item | null = null;
    for (;;) {
      const from: Item | null = after;
      const rest: Item[][] = shards.map((s) => s.filter((x) => from === null || x.pendingAt > from.pendingAt || (x.pendingAt === from.pendingAt && x.deliveryId > from.deliveryId)).slice(0, 8));
      const merged: Item[] = mergeShardPages(rest, 8);
      const page: Item[] = merged.slice(0, 7);
      seen.push(...page.map((x) => x.deliveryId));
      if (merged.length <= 7) break;
      after = page.at(-1) ?? null;
    }
    expect(seen).toEqual(all.map((x) => x.deliveryId));
  });
});
