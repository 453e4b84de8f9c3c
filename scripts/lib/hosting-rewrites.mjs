/**
 * firebase.json's Hosting rewrites, generated from the operation catalogue
 * (functions/src/operations.ts `hostingRewriteTargets`): one rewrite per HTTP operation, its path to
 * its function, then the console function's (`/console/v1/**`), in the functions' region and in
 * catalogue order. Rewrites of other paths (not under /v1/ or /console/v1/) are kept as they are,
 * after the generated ones; the rest of firebase.json is untouched.
 *
 * Written by `npm run rewrites` (scripts/hosting-rewrites.mjs); test/unit/operations.test.ts fails
 * when the committed firebase.json differs from a fresh rendering.
 */

const INDENT = '      ';

/** The path prefixes whose rewrites are generated (any other rewrite is kept as written). */
const GENERATED_PREFIXES = ['/v1/', '/console/v1/'];
const generated = (source) => typeof source === 'string' && GENERATED_PREFIXES.some((prefix) => source.startsWith(prefix));

/** The rewrites of `operations` (catalogue targets: `{ path, functionName }`) in `region`. */
export function operationRewrites(operations, region) {
  return operations.map((op) => ({ source: op.path, function: { functionId: op.functionName, region } }));
}

/** One rewrite on one line, with spaces, as firebase.json writes them. */
const line = (value) =>
  Array.isArray(value)
    ? `[${value.map(line).join(', ')}]`
    : typeof value === 'object' && value !== null
      ? `{ ${Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}: ${line(v)}`).join(', ')} }`
      : JSON.stringify(value);

/**
 * `firebaseJsonText` with its `hosting.rewrites` array replaced by the catalogue's rewrites (plus the
 * kept rewrites of other paths). Throws when the file has no rewrites array to replace.
 */
export function renderFirebaseJson(firebaseJsonText, operations, region) {
  const current = JSON.parse(firebaseJsonText);
  const kept = (current.hosting?.rewrites ?? []).filter((r) => !generated(r.source));
  const rewrites = [...operationRewrites(operations, region), ...kept];
  const block = /("rewrites": \[)[\s\S]*?(\n {4}\])/;
  if (!block.test(firebaseJsonText)) throw new Error('firebase.json: no "rewrites": [ ... ] block under "hosting" to replace');
  const rendered = firebaseJsonText.replace(block, (_all, open, close) => `${open}\n${rewrites.map((r) => `${INDENT}${line(r)}`).join(',\n')}${close}`);
  // The text replacement must not change anything but the rewrites.
  const expected = { ...current, hosting: { ...current.hosting, rewrites } };
  if (JSON.stringify(JSON.parse(rendered)) !== JSON.stringify(expected)) throw new Error('firebase.json: replacing the rewrites changed other settings');
  return rendered;
}
