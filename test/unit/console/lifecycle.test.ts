/**
 * console/src/lifecycle.ts: the rules the console applies after the send (the capability, the
 * windows, the sent state, pending requests), the text shown, reactions and typing.
 */
import { canRequest, editProblem, formatWindow, groupReactions, lifecycleChanges, lifecycleProblem, lifecycleText, readLifecycle, requestPending, shownText, typingShown, windowEndsAt, type LifecycleEntry, type LifecycleReply } from '../../../console/src/lifecycle';

const SENT_AT = Date.UTC(2026, 0, 1, 12, 0, 0);
const capability = { edit: { windowSeconds: 900 }, unsend: { windowSeconds: 3600 } };

function reply(overrides: Partial<LifecycleReply> = {}): LifecycleReply {
  return { text: 'Hello', status: 'sent', sentAtMs: SENT_AT, unsentAtMs: undefined, edits: [], unsends: [], editRequest: undefined, unsendRequest: undefined, ...overrides };
}

function entry(overrides: Partial<LifecycleEntry>): LifecycleEntry {
  return { requestedAtMs: SENT_AT + 1000, uid: 'member-1', deliveryId: 'd_1', status: 'sent', atMs: SENT_AT + 2000, errorCode: undefined, ...overrides };
}

describe('readLifecycle', () => {
  test('the two kinds, each with a window in bounds; anything malformed is absent', () => {
    expect(readLifecycle({ edit: { windowSeconds: 900 } })).toEqual({ edit: { windowSeconds: 900 } });
    expect(readLifecycle(capability)).toEqual(capability);
    expect(readLifecycle(undefined)).toBeUndefined();
    expect(readLifecycle({})).toBeUndefined();
    expect(readLifecycle({ edit: { windowSeconds: 59 } })).toBeUndefined();
    expect(readLifecycle({ edit: { windowSeconds: 604801 } })).toBeUndefined();
    expect(readLifecycle({ edit: { windowSeconds: 900.5 } })).toBeUndefined();
    expect(readLifecycle({ edit: { windowSeconds: 900, extra: 1 } })).toBeUndefined();
    expect(readLifecycle({ edit: { windowSeconds: 900 }, react: {} })).toBeUndefined();
    expect(readLifecycle([])).toBeUndefined();
    // Each kind on its own, as the service judges it.
    expect(readLifecycle({ edit: { windowSeconds: 30 }, unsend: { windowSeconds: 3600 } })).toEqual({ unsend: { windowSeconds: 3600 } });
  });

  test('the admin form check and the words', () => {
    expect(lifecycleProblem({})).toBe('Choose edits, unsends or both (or turn them off).');
    expect(lifecycleProblem({ edit: { windowSeconds: 30 } })).toMatch(/^The edit window is a whole number of seconds from 60/);
    expect(lifecycleProblem({ unsend: { windowSeconds: 604800 } })).toBeUndefined();
    expect(lifecycleText(undefined)).toBe('No edits or unsends after sending.');
    expect(lifecycleText(capability)).toBe('Edits within 15 min of sending; unsends within 1 h.');
    expect(lifecycleText({ unsend: { windowSeconds: 172800 } })).toBe('No edits; unsends within 2 days.');
    expect(formatWindow(3700)).toBe('1 h 1 min 40 s');
  });
});

describe('canRequest', () => {
  test('offered within the window of a sent reply, for the kinds the capability has', () => {
    expect(windowEndsAt(reply(), capability, 'edit')).toBe(SENT_AT + 900_000);
    expect(canRequest(reply(), capability, 'edit', SENT_AT + 900_000)).toBe(true);
    expect(canRequest(reply(), capability, 'edit', SENT_AT + 900_001)).toBe(false);
    expect(canRequest(reply(), capability, 'unsend', SENT_AT + 900_001)).toBe(true);
    expect(canRequest(reply(), { unsend: capability.unsend }, 'edit', SENT_AT)).toBe(false);
    expect(canRequest(reply(), undefined, 'unsend', SENT_AT)).toBe(false);
  });

  test('not before sent, without sentAt, once unsent, nor for an edit of a reply without text', () => {
    for (const status of ['queued', 'leased', 'sending', 'failed', 'unknown', undefined]) expect(canRequest(reply({ status }), capability, 'unsend', SENT_AT)).toBe(false);
    expect(canRequest(reply({ sentAtMs: undefined }), capability, 'edit', SENT_AT)).toBe(false);
    expect(canRequest(reply({ unsentAtMs: SENT_AT + 5 }), capability, 'edit', SENT_AT + 10)).toBe(false);
    expect(canRequest(reply({ unsentAtMs: SENT_AT + 5 }), capability, 'unsend', SENT_AT + 10)).toBe(false);
    expect(canRequest(reply({ text: '' }), capability, 'edit', SENT_AT)).toBe(false);
    expect(canRequest(reply({ text: '' }), capability, 'unsend', SENT_AT)).toBe(true);
  });

  test('not while a request is pending; again after a failed or unknown one', () => {
    const request = { requestedAtMs: SENT_AT + 1000, uid: 'member-1' };
    // Asked, not answered yet.
    expect(requestPending(reply({ editRequest: request }), 'edit')).toBe(true);
    expect(canRequest(reply({ editRequest: request }), capability, 'edit', SENT_AT + 2000)).toBe(false);
    // Answered and on its way.
    expect(canRequest(reply({ editRequest: request, edits: [entry({ status: 'sending', text: 'x' })] }), capability, 'edit', SENT_AT + 2000)).toBe(false);
    for (const status of ['sent', 'failed', 'unknown'] as const) {
      expect(canRequest(reply({ editRequest: request, edits: [entry({ status, text: 'x' })] }), capability, 'edit', SENT_AT + 2000)).toBe(true);
    }
    // Another member's request at the same time is not this one's answer.
    expect(requestPending(reply({ editRequest: { ...request, uid: 'member-2' }, edits: [entry({ status: 'sent', text: 'x' })] }), 'edit')).toBe(true);
    // An unsend on its way: no edit either.
    expect(canRequest(reply({ unsendRequest: request }), capability, 'edit', SENT_AT + 2000)).toBe(false);
    expect(canRequest(reply({ unsendRequest: request, unsends: [entry({ status: 'failed', errorCode: 'x' })] }), capability, 'unsend', SENT_AT + 2000)).toBe(true);
  });
});

test('shownText: the latest sent edit, else the original', () => {
  expect(shownText(reply())).toEqual({ text: 'Hello', edited: false });
  expect(shownText(reply({ edits: [entry({ text: 'Hi' }), entry({ text: 'Hey', status: 'failed' })] }))).toEqual({ text: 'Hi', edited: true });
  expect(shownText(reply({ edits: [entry({ text: 'Hi', status: 'queued' })] }))).toEqual({ text: 'Hello', edited: false });
});

test('editProblem: 1..10000 code points and a change', () => {
  expect(editProblem('  ', 'Hello')).toBe('Write the new text first.');
  expect(editProblem('Hello', 'Hello')).toBe('The text is unchanged.');
  expect(editProblem('😀'.repeat(10_000), 'Hello')).toBeUndefined();
  expect(editProblem('😀'.repeat(10_001), 'Hello')).toBe('Too long by 1 characters (at most 10000).');
});

test('groupReactions and typingShown', () => {
  expect(
    groupReactions([
      { emoji: '👍', senderExternalId: 'a', atMs: 1 },
      { emoji: '❤️', senderExternalId: 'a', atMs: 2 },
      { emoji: '👍', senderExternalId: 'b', atMs: 3 },
    ]),
  ).toEqual([
    { emoji: '👍', count: 2, senders: ['a', 'b'] },
    { emoji: '❤️', count: 1, senders: ['a'] },
  ]);
  expect(typingShown(SENT_AT, SENT_AT + 7999)).toBe(true);
  expect(typingShown(SENT_AT, SENT_AT + 8000)).toBe(false);
  expect(typingShown(undefined, SENT_AT)).toBe(false);
});

test('lifecycleChanges: silent on first sight; then the kinds whose latest answer changed, once', () => {
  const entry = (requestedAtMs: number, status: LifecycleEntry['status'], errorCode?: string): LifecycleEntry => ({ requestedAtMs, uid: 'oscar', deliveryId: 'd_1', status, atMs: requestedAtMs, errorCode });
  const first = lifecycleChanges(undefined, { edits: [entry(1, 'queued')], unsends: [] });
  expect(first.changed).toEqual([]);
  // The same answers again: nothing to say.
  const same = lifecycleChanges(first.marks, { edits: [entry(1, 'queued')], unsends: [] });
  expect(same.changed).toEqual([]);
  // The edit is sent and an unsend is requested in the same snapshot: both, edit first.
  const next = lifecycleChanges(same.marks, { edits: [entry(1, 'sent')], unsends: [entry(2, 'queued')] });
  expect(next.changed.map((c) => [c.kind, c.entry.status])).toEqual([
    ['edit', 'sent'],
    ['unsend', 'queued'],
  ]);
  // A new error code on the same request, and a second edit request: each a change.
  const failed = lifecycleChanges(next.marks, { edits: [entry(1, 'sent')], unsends: [entry(2, 'failed', 'edit_window_passed')] });
  expect(failed.changed.map((c) => [c.kind, c.entry.errorCode])).toEqual([['unsend', 'edit_window_passed']]);
  const again = lifecycleChanges(failed.marks, { edits: [entry(1, 'sent'), entry(3, 'queued')], unsends: [entry(2, 'failed', 'edit_window_passed')] });
  expect(again.changed.map((c) => [c.kind, c.entry.requestedAtMs])).toEqual([['edit', 3]]);
});
