/**
 * Per-conversation ordering without queries (functions/src/rules/ordering.ts): the
 * map of unfinished deliveries answers "is an earlier delivery unfinished?" and "whom does a terminal delivery
 * release?" exactly as the old queries over the deliveries collection did. The property test
 * compares the map with a model that keeps every delivery's status and answers by scanning them.
 */
import fc from 'fast-check';
import { hasUnfinishedBefore, head, parseUnfinished, unfinishedKey, releaseFrom, storedUnfinished } from '../../../functions/src/rules/ordering';

const map = (entries: Array<[number, string]>) => new Map(entries);

describe('parseUnfinished', () => {
  test('reads the stored map, keys as sequence numbers', () => {
    expect(parseUnfinished({ '1': 'd_a', '12': 'd_b' })).toEqual(map([[1, 'd_a'], [12, 'd_b']]));
    expect(parseUnfinished({})).toEqual(new Map());
  });

  test('an absent or non-map field is null (a queue document from before the map existed)', () => {
    for (const value of [undefined, null, 'x', 3, ['d_a']]) expect(parseUnfinished(value)).toBeNull();
  });

  test('ignores entries only a bug could have written', () => {
    expect(parseUnfinished({ '0': 'd_zero', '-1': 'd_neg', '01': 'd_pad', '1.5': 'd_frac', x: 'd_x', '2': 7, '3': 'd_ok' })).toEqual(map([[3, 'd_ok']]));
  });

  test('unfinishedKey and storedUnfinished round-trip through parseUnfinished', () => {
    expect(parseUnfinished({ [unfinishedKey(42)]: 'd' })).toEqual(map([[42, 'd']]));
    const unfinished = map([[1, 'd_a'], [12, 'd_b']]);
    expect(storedUnfinished(unfinished)).toEqual({ '1': 'd_a', '12': 'd_b' });
    expect(parseUnfinished(storedUnfinished(unfinished))).toEqual(unfinished);
    expect(storedUnfinished(new Map())).toEqual({});
  });
});

describe('ordering questions', () => {
  const unfinished = map([[3, 'd3'], [5, 'd5'], [9, 'd9']]);

  test('hasUnfinishedBefore: only strictly lower seqs block', () => {
    expect(hasUnfinishedBefore(unfinished, 3)).toBe(false);
    expect(hasUnfinishedBefore(unfinished, 4)).toBe(true);
    expect(hasUnfinishedBefore(unfinished, 1)).toBe(false);
    expect(hasUnfinishedBefore(new Map(), 7)).toBe(false);
  });

  test('head is the lowest unfinished seq', () => {
    expect(head(unfinished)).toEqual({ seq: 3, deliveryId: 'd3' });
    expect(head(new Map())).toBeNull();
  });

  test('the head becoming terminal releases the next unfinished delivery, whatever the gap', () => {
    expect(releaseFrom(unfinished, 3)).toEqual({ seq: 5, deliveryId: 'd5' });
    expect(releaseFrom(map([[9, 'd9']]), 9)).toBeNull();
  });

  test('a later delivery becoming terminal first (e.g. undeliverable) releases nobody', () => {
    expect(releaseFrom(unfinished, 5)).toBeNull();
    expect(releaseFrom(unfinished, 9)).toBeNull();
  });
});

describe('the map agrees with scanning every delivery (the old queries)', () => {
  test('random terminal transitions, in any order', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 30 }), fc.array(fc.nat(), { maxLength: 60 }), (count, picks) => {
        const unfinished = new Set(Array.from({ length: count }, (_, i) => i + 1));
        let unfinishedMap = new Map([...unfinished].map((seq) => [seq, `d${seq}`]));
        for (const pick of picks) {
          if (unfinished.size === 0) break;
          const seq = [...unfinished][pick % unfinished.size] as number;
          // Old predecessor query: any unfinished delivery with a lower seq.
          for (let s = 1; s <= count; s++) expect(hasUnfinishedBefore(unfinishedMap, s)).toBe([...unfinished].some((u) => u < s));
          // Old successor query, taken only when `seq` itself was the lowest unfinished one.
          const wasHead = Math.min(...unfinished) === seq;
          unfinished.delete(seq);
          const lowestLeft = unfinished.size > 0 ? Math.min(...unfinished) : null;
          const expected = wasHead && lowestLeft !== null ? { seq: lowestLeft, deliveryId: `d${lowestLeft}` } : null;
          expect(releaseFrom(unfinishedMap, seq)).toEqual(expected);
          unfinishedMap = new Map(unfinishedMap);
          unfinishedMap.delete(seq);
        }
      }),
    );
  });
});
