/**
 * The functions' region has one source, functions/src/platform/region.ts: the scripts, the bench
 * and the bench's no-op function read it through scripts/lib/region.cjs, and nothing of theirs
 * writes it again.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REGION } from '../../../functions/src/platform/region';
import { REGION as scriptsRegion, regionOf } from '../../../scripts/lib/region.cjs';

const ROOT = join(__dirname, '..', '..', '..');

test('the scripts read the service region (europe-central2, docs/contract.md#hosts-and-versions)', () => {
  expect(REGION).toBe('europe-central2');
  expect(scriptsRegion).toBe(REGION);
});

test('the reader takes exactly one declaration, and refuses anything else', () => {
  expect(regionOf("/** doc */\nexport const REGION = 'us-east1';\n")).toBe('us-east1');
  expect(() => regionOf("export const REGION = 'us-east1';\nexport const REGION = 'europe-west1';\n")).toThrow(/one/);
  expect(() => regionOf('export const REGION = `europe-central2`;\n')).toThrow(/one/);
  expect(() => regionOf("export const REGION: string = 'europe-central2';\n")).toThrow(/one/);
});

test.each(['scripts/lib/emulators.mjs', 'scripts/stack.mjs', 'bench/lib/stack-config.mjs', 'bench/phases/stack.mjs', 'bench/noop-function/index.js', 'scripts/build-console.mjs'])(
  '%s does not write the region itself',
  (file) => {
    const text = readFileSync(join(ROOT, file), 'utf8');
    expect(text).not.toContain(REGION);
    expect(text).toMatch(/\bREGION\b/);
  },
);
