/**
 * Per-conversation ordering without queries (functions/src/deliveries/ordering.ts): the
 * `pending` map answers "is an earlier delivery unfinished?" and "whom does a terminal delivery
 * release?" exactly as the old queries over the deliveries collection did. The property test
 * compares the map with a model that keeps every delivery's status and answers by scanning them.
 */
import fc from 'fast-check';
import { hasUnfinishedBefore, head, parsePending, pendingKey, releaseFrom, storedPending } from '../../../functions/src/deliveries/ordering';

const map = (entries: Array<[number, string]>) => new Map(entries);

describe('parsePending', () => {
  test('reads the stored map, keys as sequence numbers', () => {
    expect(parsePending({ '1': 'd_a', '12': 'd_b' })).toEqual(map([[1, 'd_a'], [12, 'd_b']]));
    expect(parsePending({})).toEqual(new Map());
  });

  test('an absent or non-map field is null (a queue document from before the map existed)', () => {
    for (const value of [undefined, null, 'x', 3, ['d_a']]) expect(parsePending(value)).toBeNull();
  });

  test('ignores entries only a bug could have written', () => {
    expect(parsePending({ '0': 'd_zero', '-1': 'd_neg', '01': 'd_pad', '1.5': 'd_frac', x: 'd_x', '2': 7, '3': 'd_ok' })).toEqual(map([[3, 'd_ok']]));
  });

  test('pendingKey and storedPending round-trip through parsePending', () => {
    expect(parsePending({ [pendingKey(42)]: 'd' })).toEqual(map([[42, 'd']]));
    const pending = map([[1, 'd_a'], [12, 'd_b']]);
    expect(storedPending(pending)).toEqual({ '1': 'd_a', '12': 'd_b' });
    expect(parsePending(storedPending(pending))).toEqual(pending);
    expect(storedPending(new Map())).toEqual({});
  });
});

describe('ordering questions', () => {
  const pending = map([[3, 'd3'], [5, 'd5'], [9, 'd9']]);

  test('hasUnfinishedBefore: only strictly lower seqs block', () => {
    expect(hasUnfinishedBefore(pending, 3)).toBe(false);
    expect(hasUnfinishedBefore(pending, 4)).toBe(true);
    expect(hasUnfinishedBefore(pending, 1)).toBe(false);
    expect(hasUnfinishedBefore(new Map(), 7)).toBe(false);
  });

  test('head is the lowest pending seq', () => {
    expect(head(pending)).toEqual({ seq: 3, deliveryId: 'd3' });
    expect(head(new Map())).toBeNull();
  });

  test('the head becoming terminal releases the next pending delivery, whatever the gap', () => {
    expect(releaseFrom(pending, 3)).toEqual({ seq: 5, deliveryId: 'd5' });
    expect(releaseFrom(map([[9, 'd9']]), 9)).toBeNull();
  });

  test('a later delivery becoming terminal first (e.g. undeliverable) releases nobody', () => {
    expect(releaseFrom(pending, 5)).toBeNull();
    expect(releaseFrom(pending, 9)).toBeNull();
  });
});

describe('the map agrees with scanning every delivery (the old queries)', () => {
  test('random terminal transitions, in any order', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 30 }), fc.array(fc.nat(), { maxLength: 60 }), (count, picks) => {
        const unfinished = new Set(Array.from({ length: count }, (_, i) => i + 1));
        let pendingMap = new Map([...unfinished].map((seq) => [seq, `d${seq}`]));
        for (const pick of picks) {
          if (unfinished.size === 0) break;
          const seq = [...unfinished][pick % unfinished.size] as number;
          // Old predecessor query: any unfinished delivery with a lower seq.
          for (let s = 1; s <= count; s++) expect(hasUnfinishedBefore(pendingMap, s)).toBe([...unfinished].some((u) => u < s));
          // Old successor query, taken only when `seq` itself was the lowest unfinished one.
          const wasHead = Math.min(...unfinished) === seq;
          unfinished.delete(seq);
          const lowestLeft = unfinished.size > 0 ? Math.min(...unfinished) : null;
          const expected = wasHead && lowestLeft !== null ? { seq: lowestLeft, deliveryId: `d${lowestLeft}` } : null;
          expect(releaseFrom(pendingMap, seq)).toEqual(expected);
          pendingMap = new Map(pendingMap);
          pendingMap.delete(seq);
        }
      }),
    );
  });
});
