/**
 * The two pieces that let a delivery operation read in one wave (docs/decisions.md, "Delivery: one
 * read wave"): a delivery id that names its conversation, and the queue document's release facts.
 */
import { conversationIdFor, deliveryIdFor, isStorableDocumentId, resendDeliveryIdFor, conversationOfDeliveryId } from '../../../functions/src/platform/ids';
import { parseReleaseFacts, storedReleaseFacts } from '../../../functions/src/rules/ordering';

describe('delivery ids name their conversation', () => {
  const conversationId = conversationIdFor('integration-1', 'chat-1');

  test('the digest as before, an underscore, the conversation id: within 1..128 characters and a document id', () => {
    const id = deliveryIdFor(conversationId, 'reply-1');
    expect(id).toMatch(/^d_[A-Za-z0-9_-]{32}_c_[A-Za-z0-9_-]{32}$/);
    expect(id).toHaveLength(69);
    expect(isStorableDocumentId(id)).toBe(true);
    expect(conversationOfDeliveryId(id)).toBe(conversationId);
    // Deterministic: a retry lands on the same delivery; another reply or a resend does not.
    expect(deliveryIdFor(conversationId, 'reply-1')).toBe(id);
    expect(deliveryIdFor(conversationId, 'reply-2')).not.toBe(id);
    const resend = resendDeliveryIdFor(conversationId, 'reply-1', id);
    expect(resend).not.toBe(id);
    expect(conversationOfDeliveryId(resend)).toBe(conversationId);
    expect(resendDeliveryIdFor(conversationId, 'reply-1', null)).not.toBe(resend);
  });

  test('ids of the older shape, and anything else, name no conversation (they are read first)', () => {
    const legacy = deliveryIdFor(conversationId, 'reply-1').slice(0, 34);
    for (const id of [legacy, '', 'd_x_c_y', `${legacy}_`, `${legacy}.${conversationId}`, `${legacy}_a/b`, `${legacy}_c_${'x'.repeat(94)}`, `x${legacy.slice(1)}_${conversationId}`, `${legacy}_${conversationId}.more`]) {
      expect([id, conversationOfDeliveryId(id)]).toEqual([id, null]);
    }
  });

  test('a conversation id that does not fit keeps the older shape (never one the service mints)', () => {
    for (const odd of ['has.dot', 'a'.repeat(94), 'with space']) {
      const id = deliveryIdFor(odd, 'reply-1');
      expect(id).toMatch(/^d_[A-Za-z0-9_-]{32}$/);
      expect(conversationOfDeliveryId(id)).toBeNull();
    }
    // The longest that fits makes exactly 128 characters.
    const longest = deliveryIdFor('c'.repeat(93), 'reply-1');
    expect(longest).toHaveLength(128);
    expect(conversationOfDeliveryId(longest)).toBe('c'.repeat(93));
  });
});

describe('release facts (the queue document `release` field)', () => {
  test('round-trip through their stored form', () => {
    const facts = new Map([
      [2, { messageId: 'm2', waiting: false }],
      [7, { messageId: 'm7', waiting: true }],
    ]);
    expect(storedReleaseFacts(facts)).toEqual({ '2': { messageId: 'm2', waiting: false }, '7': { messageId: 'm7', waiting: true } });
    expect(parseReleaseFacts(storedReleaseFacts(facts))).toEqual(facts);
  });

  test('an absent field, and entries of another shape, are no facts (those deliveries are read before their release)', () => {
    for (const value of [undefined, null, 'x', 3, []]) expect(parseReleaseFacts(value)).toEqual(new Map());
    expect(
      parseReleaseFacts({
        '0': { messageId: 'm', waiting: false },
        '01': { messageId: 'm', waiting: false },
        x: { messageId: 'm', waiting: false },
        '3': { messageId: 'm3' },
        '4': { waiting: true },
        '5': 'm5',
        '6': null,
        '8': { messageId: 'm8', waiting: true },
      }),
    ).toEqual(new Map([[8, { messageId: 'm8', waiting: true }]]));
  });
});
