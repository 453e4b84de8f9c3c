/** Types of test-sequencer.cjs for its unit test. */
declare class LongSuitesFirst {}
declare namespace LongSuitesFirst {
  /** `ordered` with the tests `isLong` accepts first, each group in its given order. */
  function longFirst<T extends { path: string }>(ordered: readonly T[], isLong: (path: string) => boolean): T[];
  /** Whether the suite's first doc comment has a line starting with `@long`. */
  function saysLong(path: string): boolean;
}
export = LongSuitesFirst;
