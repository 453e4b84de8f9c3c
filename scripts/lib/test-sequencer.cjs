/**
 * The order in which Jest starts suites (jest.config.cjs `testSequencer`): Jest's own (the longest
 * of the last run first when its cache has durations, else the largest files first), with the
 * suites that say `@long <reason>` in their first doc comment before all others.
 *
 * On a fresh clone Jest has no durations, and file size misjudges a suite that waits on the clock
 * (test/framework/deadline.test.ts waits out the production budget of 50 s) or spends its time in a
 * browser: started last, one of them ran on alone for the lane's final 20 s. Longest first is what
 * keeps the workers busy to the end, so a suite that takes much longer than its size suggests says
 * so, like `@serial` (scripts/lib/test-suites.mjs), with the reason.
 */
const { readFileSync } = require('node:fs');
const Sequencer = require('@jest/test-sequencer').default;
const { firstDocTag } = require('./doc-tags.cjs');

/** Whether the suite's first doc comment has a line starting with `@long`. */
function saysLong(path) {
  return firstDocTag(readFileSync(path, 'utf8'), 'long') !== null;
}

/** `ordered` with the tests `isLong` accepts first, each group in its given order. */
function longFirst(ordered, isLong) {
  const long = new Map(ordered.map((test) => [test, isLong(test.path)]));
  return [...ordered.filter((test) => long.get(test)), ...ordered.filter((test) => !long.get(test))];
}

class LongSuitesFirst extends Sequencer {
  sort(tests) {
    return longFirst(super.sort(tests), saysLong);
  }
}

module.exports = LongSuitesFirst;
module.exports.longFirst = longFirst;
module.exports.saysLong = saysLong;
