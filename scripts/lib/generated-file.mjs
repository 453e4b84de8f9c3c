/**
 * Files generated from other committed files (the OpenAPI document, the SDK's limits, the
 * functions lockfile) are committed too, and checked: one way to write or check them.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, relative } from 'node:path';
import { ROOT } from './emulators.mjs';

/**
 * Writes `fresh` to `file`, or with `check` only compares. Returns false when `check` found the
 * committed file missing or different (it prints how to fix that: `howToFix`).
 */
export function writeOrCheck(file, fresh, { check, howToFix }) {
  const name = relative(ROOT, file);
  let committed;
  try {
    committed = readFileSync(file, 'utf8');
  } catch {
    committed = undefined; // missing: stale by definition
  }
  if (committed === fresh) {
    console.log(`${name}: up to date`);
    return true;
  }
  if (check) {
    console.error(`${name}: differs from a fresh generation (${howToFix})`);
    return false;
  }
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, fresh);
  console.log(`${name}: written`);
  return true;
}
