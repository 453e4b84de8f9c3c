/**
 * The retention job's pure decisions (functions/src/privacy/retention-plan.ts): a message naming
 * stored objects is deleted by the pass when its period is over, never before, and never stamped
 * for TTL; conversations are deleted by the pass; a pass is due a day after the previous one started.
 */
import { conversationPlan, messagePlan, passDue, startAddressExpiry, DAY_MS, PASS_INTERVAL_MS } from '../../../functions/src/privacy/retention-plan';

const HOUR = 3_600_000;
const NOW = 1_800_000_000_000;

describe('messagePlan', () => {
  test('a message without objects is stamped for TTL at its time plus the period (none without a period)', () => {
    expect(messagePlan({ createdAt: NOW - 3 * HOUR, pendingReply: false, namesObjects: false }, 1, NOW)).toEqual({ kind: 'stamp', expireAt: NOW - 3 * HOUR + DAY_MS });
    expect(messagePlan({ createdAt: NOW - 3 * DAY_MS, pendingReply: false, namesObjects: false }, 1, NOW)).toEqual({ kind: 'stamp', expireAt: NOW - 2 * DAY_MS });
    expect(messagePlan({ createdAt: NOW, pendingReply: false, namesObjects: false }, null, NOW)).toEqual({ kind: 'stamp', expireAt: null });
  });

  test('with objects and a one-day period: kept without a stamp until the day is over, then deleted with its objects', () => {
    for (const age of [0, 3 * HOUR, DAY_MS - 1]) {
      expect(messagePlan({ createdAt: NOW - age, pendingReply: false, namesObjects: true }, 1, NOW)).toEqual({ kind: 'stamp', expireAt: null });
    }
    for (const age of [DAY_MS, DAY_MS + 1, 40 * DAY_MS]) {
      expect(messagePlan({ createdAt: NOW - age, pendingReply: false, namesObjects: true }, 1, NOW)).toEqual({ kind: 'deleteWithObjects' });
    }
  });

  test('every period from 1 to 3650 days: objects never go before the period is over', () => {
    for (const days of [1, 2, 3, 7, 30, 3650]) {
      expect(messagePlan({ createdAt: NOW - days * DAY_MS + 1, pendingReply: false, namesObjects: true }, days, NOW).kind).toBe('stamp');
      expect(messagePlan({ createdAt: NOW - days * DAY_MS, pendingReply: false, namesObjects: true }, days, NOW).kind).toBe('deleteWithObjects');
    }
  });

  test('a pending reply is never deleted and never stamped, with or without attachments; no period keeps everything', () => {
    for (const namesObjects of [true, false]) {
      expect(messagePlan({ createdAt: NOW - 100 * DAY_MS, pendingReply: true, namesObjects }, 1, NOW)).toEqual({ kind: 'stamp', expireAt: null });
      expect(messagePlan({ createdAt: NOW - 100 * DAY_MS, pendingReply: false, namesObjects }, null, NOW)).toEqual({ kind: 'stamp', expireAt: null });
    }
  });
});

describe('conversationPlan', () => {
  test('deleted once its newest message is older than the period, nothing kept and no object message left', () => {
    expect(conversationPlan({ newest: NOW - DAY_MS, keep: false, objectMessagesLeft: 0 }, 1, NOW)).toEqual({ kind: 'delete' });
    expect(conversationPlan({ newest: NOW - DAY_MS + 1, keep: false, objectMessagesLeft: 0 }, 1, NOW)).toEqual({ kind: 'keep' });
    expect(conversationPlan({ newest: NOW - DAY_MS, keep: true, objectMessagesLeft: 0 }, 1, NOW)).toEqual({ kind: 'keep' });
    expect(conversationPlan({ newest: NOW - DAY_MS, keep: false, objectMessagesLeft: 1 }, 1, NOW)).toEqual({ kind: 'keep' });
    expect(conversationPlan({ newest: 0, keep: false, objectMessagesLeft: 0 }, null, NOW)).toEqual({ kind: 'keep' });
  });
});

describe('passDue', () => {
  const state = { appliedDays: 30, cursor: null, phase: 'conversations' as const, lastPassFinishedAt: 10 * HOUR, lastPassStartedAt: 0 };
  test('a day after the previous pass started, however long it took', () => {
    expect(passDue(state, 30, PASS_INTERVAL_MS - 1)).toBe(false);
    expect(passDue(state, 30, PASS_INTERVAL_MS)).toBe(true);
  });
  test('a state without a start time counts from the finish', () => {
    const { lastPassStartedAt: _started, ...old } = state;
    expect(passDue(old, 30, PASS_INTERVAL_MS)).toBe(false);
    expect(passDue(old, 30, 10 * HOUR + PASS_INTERVAL_MS)).toBe(true);
  });
});

describe('startAddressExpiry', () => {
  test('an address book entry has no stamp while the conversation it names exists, however old', () => {
    expect(startAddressExpiry({ updatedAt: NOW - 400 * DAY_MS, conversationExists: true }, 1)).toBeNull();
    expect(startAddressExpiry({ updatedAt: NOW, conversationExists: true }, 30)).toBeNull();
  });

  test('once its conversation is gone it expires at its own time plus the period (none without a period)', () => {
    expect(startAddressExpiry({ updatedAt: NOW - 3 * DAY_MS, conversationExists: false }, 2)).toBe(NOW - DAY_MS);
    expect(startAddressExpiry({ updatedAt: NOW - HOUR, conversationExists: false }, 1)).toBe(NOW - HOUR + DAY_MS);
    expect(startAddressExpiry({ updatedAt: NOW - 3 * DAY_MS, conversationExists: false }, null)).toBeNull();
  });
});
