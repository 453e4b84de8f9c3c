/** The pure parts of the privacy feature (docs/privacy.md): the erase rule, stored objects, the retention arithmetic, the erasures cursor. */
import { decideErase } from '../../../functions/src/rules/state-machine';
import type { DeliveryRecord } from '../../../functions/src/rules/record';
import { erasureDoneEvent } from '../../../functions/src/privacy/erasure';
import { imageEntriesOf, storagePathOf } from '../../../functions/src/privacy/stored-objects';
import { imagePath, isSharedImagePath } from '../../../functions/src/platform/object-store';
import { decodeErasureCursor, encodeErasureCursor } from '../../../functions/src/privacy/erasure-list';
import { retentionDaysOf } from '../../../functions/src/privacy/retention';
import { expiryOf, passDue, DAY_MS, PASS_INTERVAL_MS } from '../../../functions/src/privacy/retention-plan';

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

test('imageEntriesOf: the image entries that name an object, nothing else; storagePathOf an upload record\'s path', () => {
  expect(imageEntriesOf({ images: [{ path: 'a.png', sha256: 'x' }, { nope: 1 }], attachments: [{ path: 'b.pdf' }] })).toEqual([{ path: 'a.png', sha256: 'x' }]);
  expect(imageEntriesOf(undefined)).toEqual([]);
  expect(imageEntriesOf({ images: 'x' })).toEqual([]);
  expect(storagePathOf({ storagePath: 'workspaces/w/attachments/h' })).toBe('workspaces/w/attachments/h');
  for (const bad of [undefined, {}, { storagePath: '' }, { storagePath: 3 }]) expect(storagePathOf(bad)).toBeNull();
});

test('image paths: one object per message (by its deterministic id); the old per-integration paths are recognised as shared', () => {
  const sha = 'a'.repeat(64);
  const path = imagePath('ws', 'c_1', 'm_1', sha, 'png');
  expect(path).toBe(`workspaces/ws/conversations/c_1/messages/m_1/images/${sha}.png`);
  expect(imagePath('ws', 'c_1', 'm_2', sha, 'png')).not.toBe(path);
  expect(isSharedImagePath(path)).toBe(false);
  expect(isSharedImagePath(`workspaces/ws/integrations/i1/images/${sha}.jpeg`)).toBe(true);
  expect(isSharedImagePath(`workspaces/ws/integrations/i1/images/${sha}.jpeg/x`)).toBe(false);
});

test('erasureDoneEvent: a stable id per workspace and erasure, the erasure id and counts in detail, no customer', () => {
  const counts = { conversations: 1, messages: 5, images: 1, attachments: 2, deliveries: 2 };
  const event = erasureDoneEvent('ws', 'er-1', { integrationId: 'i1', startedAt: 1_000 }, counts, 3_000);
  expect(event).toEqual({
    eventId: 'erasure.done:ws:er-1',
    type: 'erasure.done',
    workspaceId: 'ws',
    integrationId: 'i1',
    at: new Date(3_000).toISOString(),
    detail: { erasureId: 'er-1', counts, startedAt: new Date(1_000).toISOString(), finishedAt: new Date(3_000).toISOString() },
  });
  expect(erasureDoneEvent('ws', 'er-1', { integrationId: 'i1', startedAt: 1_000 }, counts, 9_000).eventId).toBe(event.eventId);
  expect(erasureDoneEvent('other', 'er-1', { integrationId: 'i1', startedAt: 1_000 }, counts, 3_000).eventId).not.toBe(event.eventId);
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
