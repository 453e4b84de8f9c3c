/**
 * isStorableDocumentId: which client-supplied ids can be looked up as Firestore documents at all
 * (the delivery operations answer 404 for the others without a lookup).
 */
import { conversationIdFor, deliveryIdFor, isStorableDocumentId } from '../../../functions/src/platform/ids';

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
