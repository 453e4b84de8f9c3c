/** scripts/lib/test-sequencer.cjs: suites that say `@long` start first, the rest keep Jest's order. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { longFirst, saysLong } from '../../../scripts/lib/test-sequencer.cjs';

const dir = mkdtempSync(join(tmpdir(), 'sequencer-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const suite = (name: string, text: string): string => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

test('@long counts only on its own line of the first doc comment', () => {
  expect(saysLong(suite('a.test.ts', '/**\n * Waits.\n * @long waits out a 50 s budget\n */\ntest("x", () => {});\n'))).toBe(true);
  expect(saysLong(suite('b.test.ts', '/**\n * Quick. Not @long at all.\n */\n'))).toBe(false);
  expect(saysLong(suite('c.test.ts', '/** First. */\n/**\n * @long in a later comment\n */\n'))).toBe(false);
  expect(saysLong(suite('d.test.ts', 'test("no doc comment", () => {});\n'))).toBe(false);
});

test('the @long suites first, each group in the order it was given', () => {
  const tests = ['big', 'long-small', 'medium', 'long-big', 'small'].map((path) => ({ path }));
  expect(longFirst(tests, (path) => path.startsWith('long')).map((t) => t.path)).toEqual(['long-small', 'long-big', 'big', 'medium', 'small']);
});
