/** The pure parts of the privacy feature (docs/privacy.md): the erase rule, stored objects, the retention arithmetic, the erasures cursor. */
import { decideErase } from '../../../functions/src/deliveries/state-machine';
import type { DeliveryRecord } from '../../../functions/src/deliveries/record';
import { storedObjectsOf } from '../../../functions/src/privacy/erasure';
import { decodeErasureCursor, encodeErasureCursor } from '../../../functions/src/privacy/erasure-list';
import { expiryOf, passDue, retentionDaysOf, DAY_MS, PASS_INTERVAL_MS } from '../../../functions/src/privacy/retention';

const base = {
  deliveryId: 'd_1', workspaceId: 'ws', integrationId: 'i', conversationId: 'c', messageId: 'm', seq: 1, text: 't', attempts: 0,
  createdAt: 1, updatedAt: 1, notBefore: null, lease: null, waiting: false, error: null, providerMessageIds: [], attemptLog: [],
} as unknown as DeliveryRecord;

describe('decideErase', () => {
  test.each(['queued', 'leased', 'sending'] as const)('%s -> failed `erased`, releasing the next', (status) => {
    const d = decideErase({ ...base, status }, { now: 50 });
    expect(d.response).toEqual({ erased: true });
    expect(d.next).toMatchObject({ status: 'failed', error: { outcome: 'failed', code: 'erased' }, updatedAt: 50 });
    expect(d.effects.releasesNext).toBe(true);
  });
  test.each(['sent', 'failed', 'unknown'] as const)('%s is left as it is', (status) => {
    const d = decideErase({ ...base, status }, { now: 50 });
    expect(d).toMatchObject({ response: { erased: false }, next: null });
  });
});

test('storedObjectsOf: image and attachment paths, nothing else', () => {
  expect(storedObjectsOf({ images: [{ path: 'a.png' }, { nope: 1 }], attachments: [{ path: 'b.pdf' }] })).toEqual({ images: ['a.png'], attachments: ['b.pdf'] });
  expect(storedObjectsOf(undefined)).toEqual({ images: [], attachments: [] });
  expect(storedObjectsOf({ images: 'x' })).toEqual({ images: [], attachments: [] });
});

describe('retention arithmetic', () => {
  test('the period of a settings document: integers 1..3650 only', () => {
    expect(retentionDaysOf({ days: 30 })).toBe(30);
    for (const days of [0, 3651, 1.5, '30', null]) expect(retentionDaysOf({ days })).toBeNull();
    expect(retentionDaysOf(undefined)).toBeNull();
  });
  test('expiry = time + period; none without a period', () => {
    expect(expiryOf(1000, 2)).toBe(1000 + 2 * DAY_MS);
    expect(expiryOf(1000, null)).toBeNull();
  });
  test('a pass is due on a change of period, while one is in progress, or once a day', () => {
    const state = { appliedDays: 30, cursor: null, phase: 'conversations' as const, lastPassFinishedAt: 0 };
    expect(passDue(undefined, null, 10)).toBe(false);
    expect(passDue(undefined, 30, 10)).toBe(true);
    expect(passDue(state, 30, PASS_INTERVAL_MS - 1)).toBe(false);
    expect(passDue(state, 30, PASS_INTERVAL_MS)).toBe(true);
    expect(passDue(state, 7, 10)).toBe(true);
    expect(passDue(state, null, 10)).toBe(true);
    expect(passDue({ ...state, cursor: 'c_1' }, 30, 10)).toBe(true);
  });
});

describe('the erasures cursor', () => {
  const owner = { workspaceId: 'ws', integrationId: 'i1' };
  test('round trip; another integration or garbage is 400 invalid_cursor', () => {
    const cursor = encodeErasureCursor(owner, { erasureId: 'er-1' });
    expect(decodeErasureCursor(owner, cursor)).toEqual({ erasureId: 'er-1' });
    expect(() => decodeErasureCursor({ ...owner, integrationId: 'i2' }, cursor)).toThrow(expect.objectContaining({ code: 'invalid_cursor' }) as Error);
    for (const bad of ['x', '!!', Buffer.from('{"v":1}').toString('base64url')]) expect(() => decodeErasureCursor(owner, bad)).toThrow(expect.objectContaining({ code: 'invalid_cursor' }) as Error);
  });
});
