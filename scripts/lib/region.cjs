/**
 * The functions' region for the scripts, the bench and the bench's no-op function, read from its one
 * source, functions/src/platform/region.ts (the service's `REGION`): nothing outside the service
 * writes the region again. CommonJS so that the no-op function (CommonJS, bench/noop-function)
 * can require it as well as the ES modules of scripts/ and bench/ can import it.
 * test/unit/platform/region.test.ts checks that it reads the service's value.
 */
const { readFileSync } = require('node:fs');
const { join } = require('node:path');

/** functions/src/platform/region.ts */
const REGION_SOURCE = join(__dirname, '..', '..', 'functions', 'src', 'platform', 'region.ts');

/** The region that region.ts's text declares (`export const REGION = '<region>';`, exactly once). */
function regionOf(text) {
  const declarations = [...text.matchAll(/^export const REGION = '([a-z]+-[a-z]+[0-9]+)';$/gm)];
  if (declarations.length !== 1) throw new Error(`${REGION_SOURCE}: expected one \`export const REGION = '<region>';\` line`);
  return declarations[0][1];
}

exports.REGION_SOURCE = REGION_SOURCE;
exports.regionOf = regionOf;
/** The functions' region, e.g. `europe-central2`. */
exports.REGION = regionOf(readFileSync(REGION_SOURCE, 'utf8'));
