/**
 * isStorableDocumentId: which client-supplied ids can be looked up as Firestore documents at all
 * (the delivery operations answer 404 for the others without a lookup); resendChain: every
 * delivery a reply had, from its first to the one its mirror names.
 */
import { conversationIdFor, deliveryIdFor, isStorableDocumentId, resendChain, resendDeliveryIdFor } from '../../../functions/src/platform/ids';

test('ids the service mints, and ordinary client strings, are storable', () => {
  expect(isStorableDocumentId(deliveryIdFor(conversationIdFor('i', 'c'), 'm'))).toBe(true);
  for (const id of ['a', ' ', '\u0000', '.a', 'a.', '...', '_', '__', '___', '__a', 'a__', '😀'.repeat(128), 'x'.repeat(1500)]) {
    expect([id.slice(0, 12), isStorableDocumentId(id)]).toEqual([id.slice(0, 12), true]);
  }
});

test("ids Firestore refuses as a document id are not: '/', '.', '..', __reserved__, over 1500 bytes, empty", () => {
  for (const id of ['', '/', '//', 'a/b', '/a', 'a/', 'a/b/c', '.', '..', '__x__', '____', '__\n__', 'x'.repeat(1501), 'é'.repeat(751)]) {
    expect([id.slice(0, 12), isStorableDocumentId(id)]).toEqual([id.slice(0, 12), false]);
  }
});

describe('resendChain', () => {
  const conversationId = conversationIdFor('i', 'c');
  const first = deliveryIdFor(conversationId, 'm');
  const resent = (times: number): string => Array.from({ length: times }).reduce<string>((previous) => resendDeliveryIdFor(conversationId, 'm', previous), first);

  test('never resent: the first delivery alone (mirror on it, or no mirror)', () => {
    expect(resendChain(conversationId, 'm', first, first)).toEqual([first]);
    expect(resendChain(conversationId, 'm', first, null)).toEqual([first]);
  });

  test('resent twice: the first, the resend of it, the resend of that, in order', () => {
    const chain = resendChain(conversationId, 'm', first, resent(2));
    expect(chain).toEqual([first, resent(1), resent(2)]);
    expect(new Set(chain).size).toBe(3);
  });

  test('a mirror the chain does not reach within its bound is still included, after the ids followed', () => {
    const chain = resendChain(conversationId, 'm', first, 'd_elsewhere');
    expect(chain[0]).toBe(first);
    expect(chain.at(-1)).toBe('d_elsewhere');
    expect(chain.length).toBe(22);
  });
});
