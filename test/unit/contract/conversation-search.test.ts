/** The conversation search's one rule (keys stored by the service, the key a search looks up). */
import { conversationSearchKeys, normalizeSearchText, SEARCH_KEY_MAX, searchKeyOf } from '../../../functions/src/contract/conversation-search';

describe('normalizeSearchText', () => {
  test('lower case, accents and compatibility forms folded, white space collapsed', () => {
    expect(normalizeSearchText('  Zoë   MÜLLER ')).toBe('zoe muller');
    expect(normalizeSearchText('Ｇｒａｃｅ')).toBe('grace'); // full-width letters (NFKD)
    expect(normalizeSearchText('Ångström\tÉcole')).toBe('angstrom ecole');
  });
});

describe('conversationSearchKeys', () => {
  const keys = conversationSearchKeys({ externalConversationId: 'chat-Katherine-Johnson', customerExternalId: 'kj-1961', customerName: 'Katherine Johnson' });

  test('every prefix of each field and of each of its words, normalised', () => {
    for (const typed of ['c', 'chat-k', 'chat-katherine-johnson', 'k', 'kat', 'katherine j', 'katherine johnson', 'jo', 'johnson', 'kj-19', '1961', '19']) {
      expect(keys).toContain(searchKeyOf(typed));
    }
    for (const typed of ['atherine', 'hnson', 'katherine x', 'chat katherine']) expect(keys).not.toContain(searchKeyOf(typed));
  });

  test('sorted and without duplicates (the same conversation always stores the same array)', () => {
    expect([...keys].sort()).toEqual(keys);
    expect(new Set(keys).size).toBe(keys.length);
    expect(conversationSearchKeys({ customerName: 'Katherine Johnson', externalConversationId: 'chat-Katherine-Johnson', customerExternalId: 'kj-1961' })).toEqual(keys);
  });

  test('keys are at most SEARCH_KEY_MAX code points; a longer search looks up its first SEARCH_KEY_MAX', () => {
    const long = 'Maria-Magdalena-Wilhelmina-von-Hohenzollern';
    const longKeys = conversationSearchKeys({ externalConversationId: long });
    expect(Math.max(...longKeys.map((k) => Array.from(k).length))).toBe(SEARCH_KEY_MAX);
    expect(longKeys).toContain(searchKeyOf(long));
    expect(Array.from(searchKeyOf(`${long} and more`) ?? '')).toHaveLength(SEARCH_KEY_MAX);
  });

  test('code points, not UTF-16 units: an emoji in a name is never split', () => {
    const emojiKeys = conversationSearchKeys({ externalConversationId: 'x', customerName: '\u{1F600}'.repeat(30) });
    for (const key of emojiKeys) expect(key).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/u);
  });

  test('a conversation without a customer is found by its id only; empty fields add nothing', () => {
    expect(conversationSearchKeys({ externalConversationId: 'ops', customerExternalId: null, customerName: '   ' })).toEqual(['o', 'op', 'ops']);
  });

  test('the number of keys is bounded (each is an index entry)', () => {
    const many = conversationSearchKeys({ externalConversationId: 'a b c d e f g h i j k l m n o p'.replace(/ /g, '-').repeat(3), customerExternalId: 'x'.repeat(200), customerName: 'w '.repeat(100) });
    expect(many.length).toBeLessThanOrEqual(3 * (SEARCH_KEY_MAX + 6 * SEARCH_KEY_MAX));
  });
});

describe('searchKeyOf', () => {
  test('nothing typed (or only spaces) searches nothing', () => {
    expect(searchKeyOf('')).toBeNull();
    expect(searchKeyOf('   ')).toBeNull();
  });
});
