/** The bounded map behind the service's per-instance memories (platform/lru-map.ts). */
import { LruMap } from '../../../functions/src/platform/lru-map';

test('keeps at most its capacity, forgetting the least recently set entry first', () => {
  const map = new LruMap<string, number>(3);
  map.set('a', 1).set('b', 2).set('c', 3);
  expect([...map.keys()]).toEqual(['a', 'b', 'c']);
  map.set('a', 10); // setting again makes `a` the most recent
  map.set('d', 4); // over capacity: `b` goes
  expect([...map.keys()]).toEqual(['c', 'a', 'd']);
  expect(map.size).toBe(3);
  expect(map.get('a')).toBe(10);
  expect(map.has('b')).toBe(false);
  expect(map.get('b')).toBeUndefined();
});

test('reads never reorder: recency is by set only', () => {
  const map = new LruMap<string, number>(2);
  map.set('a', 1).set('b', 2);
  expect(map.get('a')).toBe(1);
  expect(map.has('a')).toBe(true);
  map.set('c', 3);
  expect([...map.keys()]).toEqual(['b', 'c']);
});

test('delete frees a place; a capacity must be a positive integer', () => {
  const map = new LruMap<number, string>(1);
  map.set(1, 'x');
  expect(map.delete(1)).toBe(true);
  expect(map.delete(1)).toBe(false);
  map.set(2, 'y');
  expect(map.size).toBe(1);
  for (const bad of [0, -1, 1.5, Number.NaN]) expect(() => new LruMap(bad)).toThrow(RangeError);
});

test('stays bounded under many distinct keys', () => {
  const map = new LruMap<number, number>(100);
  for (let i = 0; i < 10_000; i++) map.set(i, i);
  expect(map.size).toBe(100);
  expect([...map.keys()][0]).toBe(9_900);
});
