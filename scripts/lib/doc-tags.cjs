/**
 * The tags a test suite gives about itself in its first doc comment (`@serial <reason>`, `@own-project <reason>`,
 * scripts/lib/test-suites.mjs; `@long <reason>`, scripts/lib/test-sequencer.cjs). CommonJS, so that
 * both the runner's ES modules and Jest's sequencer (loaded with `require`) read them the same way.
 */

/** The text after `@<tag>` on a line of `source`'s first doc comment ('' when none follows), or null without the tag. */
function firstDocTag(source, tag) {
  const firstDoc = /\/\*\*([\s\S]*?)\*\//.exec(source)?.[1] ?? '';
  const match = new RegExp(`^\\s*\\*\\s*@${tag}\\b[ \\t]*(.*)$`, 'm').exec(firstDoc);
  return match ? match[1].trim() : null;
}

module.exports = { firstDocTag };
