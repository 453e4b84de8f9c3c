/**
 * The pure rules of message events (docs/contract.md#message-events): the emoji rule, the per-type
 * field rules of the request schema, the event fingerprint against a message's, the reaction set
 * arithmetic, who may change a target, pending events applied in order, and the provider ids a
 * reply's mirror reports.
 */
import { Timestamp } from 'firebase-admin/firestore';
import { EVENT_LIMITS, emojiProblem, utf8ByteLength } from '../../../functions/src/contract';
import { afterChange, applyEvent, messageEventProblems, nextReactions, targetProblem, type TargetMessage } from '../../../functions/src/rules/message-events';
import { applyPending } from '../../../functions/src/messages/event-store';
import { eventFingerprint, fingerprint } from '../../../functions/src/rules/fingerprint';
import { MessageEventSchema } from '../../../functions/src/messages/schemas';
import { providerIdsOf } from '../../../functions/src/messages/triggers';
import { parseOrThrow } from '../../../functions/src/platform/schema';

describe('emoji: one extended grapheme cluster, at most 32 bytes of UTF-8', () => {
  test.each(['👍', '👍🏽', '🇵🇱', '👨‍👩‍👧‍👦', '❤️', '1️⃣', '+', 'é', 'e\u0301'])('%s is one', (emoji) => {
    expect(emojiProblem(emoji)).toBeNull();
  });
  test.each([
    ['', 'not empty'],
    ['👍👍', 'one grapheme cluster'],
    ['ok', 'one grapheme cluster'],
    ['👍 ', 'one grapheme cluster'],
  ])('%j is refused', (emoji, problem) => {
    expect(emojiProblem(emoji)).toContain(problem);
  });
  test('the byte limit: 32 bytes pass, 33 do not, even as one cluster', () => {
    // A thumbs-up (4 bytes) with seven skin-tone modifiers (4 bytes each) is one cluster of 32 bytes.
    const at = `👍${'\u{1F3FB}'.repeat(7)}`;
    expect(utf8ByteLength(at)).toBe(EVENT_LIMITS.emojiBytes);
    expect(emojiProblem(at)).toBeNull();
    expect(emojiProblem(`${at}\u{1F3FB}`)).toContain('at most 32 bytes');
  });
  test('utf8ByteLength counts the UTF-8 bytes of each code point', () => {
    expect(['a', 'é', '€', '😀', 'a😀'].map(utf8ByteLength)).toEqual([1, 2, 3, 4, 5]);
    expect(utf8ByteLength('👨‍👩‍👧‍👦')).toBe(Buffer.byteLength('👨‍👩‍👧‍👦', 'utf8'));
  });
});

describe('per-type field rules (400 naming the field)', () => {
  const common = { eventId: 'e2', externalConversationId: 'chat', sender: { externalId: 'c1' } };
  const problems = (fields: Record<string, unknown>): string => {
    try {
      parseOrThrow(MessageEventSchema, { ...common, ...fields });
      return '';
    } catch (err) {
      return (err as Error).message;
    }
  };
  test('each type with exactly its fields is valid', () => {
    expect(problems({ type: 'edited', target: { eventId: 'e1' }, text: 'new' })).toBe('');
    expect(problems({ type: 'deleted', target: { eventId: 'e1' } })).toBe('');
    expect(problems({ type: 'reaction', target: { eventId: 'e1' }, emoji: '👍' })).toBe('');
    expect(problems({ type: 'reaction', target: { providerMessageId: 'p1' }, emoji: '👍', removed: true })).toBe('');
    expect(problems({ type: 'typing' })).toBe('');
  });
  test('a missing field and a field the type does not take are named', () => {
    expect(problems({ type: 'edited', target: { eventId: 'e1' } })).toBe("text: required for type 'edited'");
    expect(problems({ type: 'deleted', target: { eventId: 'e1' }, emoji: '👍' })).toBe("emoji: not allowed for type 'deleted'");
    expect(problems({ type: 'typing', removed: true })).toBe("removed: not allowed for type 'typing'");
    expect(problems({ type: 'reaction', emoji: '👍' })).toBe("target: required for type 'reaction'");
    // Every type with a target takes either id (the service resolves a provider id: rules/targets.ts).
    expect(problems({ type: 'edited', target: { providerMessageId: 'p' }, text: 'x' })).toBe('');
    expect(problems({ type: 'deleted', target: { providerMessageId: 'p' } })).toBe('');
    expect(problems({ type: 'deleted', target: {} })).toBe('target.eventId: required (or target.providerMessageId)');
  });
  test('messageEventProblems lists every problem', () => {
    expect(messageEventProblems({ type: 'typing', text: 'x', emoji: '👍', target: { eventId: 'e' } }).map((p) => p.path.join('.'))).toEqual(['target', 'text', 'emoji']);
    expect(messageEventProblems({ type: 'reaction', target: { eventId: 'e', providerMessageId: 'p' } }).map((p) => p.path.join('.'))).toEqual(['emoji', 'target']);
  });
});

describe('fingerprints: an event never equals a message, and covers every field', () => {
  const sender = { externalId: 'c1', displayName: null, kind: 'customer' as const };
  const base = { externalConversationId: 'chat', sender, type: 'edited', target: { eventId: 'e1' }, text: 'x', emoji: null, removed: false };
  test('an event differs from a message with the same text', () => {
    expect(eventFingerprint(base)).not.toBe(fingerprint({ externalConversationId: 'chat', sender, text: 'x', images: [] }));
  });
  test('each field changes it; the same content gives the same one', () => {
    expect(eventFingerprint({ ...base })).toBe(eventFingerprint(base));
    const variants = [
      { ...base, text: 'y' },
      { ...base, target: { eventId: 'e2' } },
      { ...base, type: 'deleted', text: null },
      { ...base, externalConversationId: 'other' },
      { ...base, sender: { ...sender, displayName: 'Ada' } },
      { ...base, type: 'reaction', text: null, emoji: '👍' },
      { ...base, type: 'reaction', text: null, emoji: '👍', removed: true },
    ];
    const prints = new Set([eventFingerprint(base), ...variants.map((v) => eventFingerprint(v))]);
    expect(prints.size).toBe(variants.length + 1);
  });
});

describe('reaction set arithmetic', () => {
  const r = (emoji: string, senderExternalId: string, at = 1) => ({ emoji, senderExternalId, at });
  test('adds once per sender and emoji, keeping the first time', () => {
    const one = nextReactions([], { emoji: '👍', senderExternalId: 'a', removed: false }, 1);
    expect(one).toEqual([r('👍', 'a', 1)]);
    expect(nextReactions(one, { emoji: '👍', senderExternalId: 'a', removed: false }, 2)).toEqual([r('👍', 'a', 1)]);
    expect(nextReactions(one, { emoji: '👍', senderExternalId: 'b', removed: false }, 2)).toEqual([r('👍', 'a', 1), r('👍', 'b', 2)]);
    expect(nextReactions(one, { emoji: '❤️', senderExternalId: 'a', removed: false }, 2)).toEqual([r('👍', 'a', 1), r('❤️', 'a', 2)]);
  });
  test('removes only that sender and emoji; removing what is not there changes nothing', () => {
    const set = [r('👍', 'a'), r('👍', 'b'), r('❤️', 'a')];
    expect(nextReactions(set, { emoji: '👍', senderExternalId: 'a', removed: true }, 3)).toEqual([r('👍', 'b'), r('❤️', 'a')]);
    expect(nextReactions(set, { emoji: '😀', senderExternalId: 'a', removed: true }, 3)).toEqual(set);
  });
});

const customerMessage = (over: Partial<TargetMessage> = {}): TargetMessage => ({
  direction: 'inbound',
  kind: 'message',
  senderExternalId: 'a',
  text: 'hello',
  deleted: false,
  edits: [],
  reactions: [],
  images: [{ path: 'img/1.png' }],
  ...over,
});

describe('who may change a target, and what each change does', () => {
  test('edits and deletions: only the sender\'s own customer message; reactions: any message', () => {
    expect(targetProblem(customerMessage(), { type: 'edited', senderExternalId: 'b', text: 'x' })).toBe('not_own_message');
    expect(targetProblem(customerMessage({ kind: 'alert' }), { type: 'deleted', senderExternalId: 'a' })).toBe('alert');
    expect(targetProblem(customerMessage({ direction: 'outbound', kind: undefined, senderExternalId: undefined }), { type: 'deleted', senderExternalId: 'a' })).toBe('operator_reply');
    expect(targetProblem(customerMessage({ direction: 'outbound', kind: undefined, senderExternalId: undefined }), { type: 'reaction', senderExternalId: 'a', emoji: '👍', removed: false })).toBeNull();
    expect(targetProblem(customerMessage({ kind: 'alert' }), { type: 'reaction', senderExternalId: 'b', emoji: '👍', removed: false })).toBeNull();
  });
  test('a deletion releases the images and is final: later events are ignored', () => {
    const effect = applyEvent(customerMessage(), { type: 'deleted', senderExternalId: 'a' }, 5);
    expect(effect).toEqual({ kind: 'applied', fields: { deleted: { at: 5 } }, removedImages: ['img/1.png'] });
    if (effect.kind !== 'applied') return;
    const after = afterChange(customerMessage({ edits: [{ text: 'e', at: 1 }] }), effect.fields);
    expect(after).toMatchObject({ deleted: true, edits: [], images: [] });
    expect(applyEvent(after, { type: 'edited', senderExternalId: 'a', text: 'x' }, 6)).toEqual({ kind: 'ignored', code: 'target_deleted' });
    expect(applyEvent(after, { type: 'reaction', senderExternalId: 'a', emoji: '👍', removed: false }, 6)).toEqual({ kind: 'ignored', code: 'target_deleted' });
  });
  test('an edit appends to the history', () => {
    expect(applyEvent(customerMessage({ edits: [{ text: 'one', at: 1 }] }), { type: 'edited', senderExternalId: 'a', text: 'two' }, 2)).toMatchObject({
      kind: 'applied',
      fields: { edits: [{ text: 'one', at: 1 }, { text: 'two', at: 2 }] },
    });
  });
});

describe('pending events applied on arrival', () => {
  const where = 'c1';
  const entry = (over: Record<string, unknown>) => ({ eventDocId: 'e', conversationId: 'c1', senderExternalId: 'a', customerId: 'u_a', receivedAt: Timestamp.fromMillis(1_000), ...over });
  test('in the order received; an edit after a deletion is ignored; other conversations, other senders and expired entries are dropped, each named with the code of its log line', () => {
    const pending = {
      events: [
        entry({ type: 'edited', text: 'first' }),
        entry({ type: 'reaction', emoji: '👍', removed: false, senderExternalId: 'b' }),
        entry({ type: 'edited', text: 'elsewhere', conversationId: 'c2' }),
        entry({ type: 'edited', text: 'not mine', senderExternalId: 'b' }),
        entry({ type: 'edited', text: 'second', receivedAt: Timestamp.fromMillis(2_000) }),
      ],
    };
    const result = applyPending(pending, customerMessage(), where, 3_000);
    expect(result.applied).toBe(3);
    expect(result.change.edits?.map((e) => e.text)).toEqual(['first', 'second']);
    expect(result.change.reactions?.map((r) => r.emoji)).toEqual(['👍']);
    expect(result.removedImages).toEqual([]);
    expect(result.skipped.map((x) => `${x.outcome}:${x.code}`)).toEqual(['dropped:target_not_found', 'dropped:target_not_found:not_own_message']);

    const deleting = applyPending({ events: [entry({ type: 'edited', text: 'x' }), entry({ type: 'deleted' }), entry({ type: 'edited', text: 'late' })] }, customerMessage(), where, 3_000);
    expect(deleting.change).toEqual({ deleted: { at: 1_000 } });
    expect(deleting.removedImages).toEqual(['img/1.png']);
    expect(deleting.applied).toBe(2);
    expect(deleting.skipped.map((x) => `${x.outcome}:${x.code}`)).toEqual(['ignored:target_deleted']);

    const expired = applyPending({ events: [entry({ type: 'edited', text: 'old' })] }, customerMessage(), where, 1_000 + EVENT_LIMITS.pendingMs + 1);
    expect(expired.applied).toBe(0);
    expect(expired.change).toEqual({});
    expect(expired.skipped.map((x) => `${x.outcome}:${x.code}`)).toEqual(['dropped:pending_expired']);
  });
});

describe('provider ids of a reply mirror', () => {
  test('the delivery\'s ids, then each part\'s, once each; none unless sent', () => {
    const delivery = { status: 'sent', providerMessageIds: ['p1', 'p2'], parts: [{ part: 'text', status: 'sent', providerMessageIds: ['p1'] }, { part: 'a_1', status: 'sent', providerMessageIds: ['p3'] }, { part: 'a_2', status: 'failed' }] };
    expect(providerIdsOf({ delivery })).toEqual(['p1', 'p2', 'p3']);
    expect(providerIdsOf({ delivery: { ...delivery, status: 'sending' } })).toEqual([]);
    expect(providerIdsOf({})).toEqual([]);
    expect(providerIdsOf(undefined)).toEqual([]);
  });
});
