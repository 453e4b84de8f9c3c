#!/usr/bin/env node
/**
 * `npm run openapi`: builds the functions and (re)writes the OpenAPI document from the zod schemas
 * (functions/src/openapi/document.ts) to openapi/openapi.yaml and to the copy Hosting serves at
 * /openapi.yaml (hosting/public/openapi.yaml), and the SDK's request limits generated from it
 * (sdk/src/internal/limits.generated.ts, scripts/sdk-limits.mjs). All are committed;
 * test/unit/openapi/document.test.ts and sdk/test/unit/surface.test.ts fail when one differs from
 * a fresh build. `--check` only compares and exits 1 on a difference.
 */
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { stringify } from 'yaml';
import { ROOT, buildFunctions } from './lib/emulators.mjs';
import { generate as generateSdkLimits, LIMITS_FILE } from './sdk-limits.mjs';

const check = process.argv.includes('--check');
buildFunctions();
const require = createRequire(import.meta.url);
const { buildOpenApiDocument, YAML_OPTIONS, YAML_HEADER } = require(join(ROOT, 'functions', 'lib', 'openapi', 'document.js'));
const text = YAML_HEADER + stringify(buildOpenApiDocument(), YAML_OPTIONS);
const OUTPUTS = [
  [join(ROOT, 'openapi', 'openapi.yaml'), text],
  [join(ROOT, 'hosting', 'public', 'openapi.yaml'), text],
  [LIMITS_FILE, generateSdkLimits(text)],
];

let stale = 0;
for (const [file, text] of OUTPUTS) {
  let current;
  try {
    current = readFileSync(file, 'utf8');
  } catch {
    current = undefined;
  }
  const name = relative(ROOT, file);
  if (current === text) {
    console.log(`${name}: up to date`);
  } else if (check) {
    stale++;
    console.error(`${name}: differs from a fresh build (run npm run openapi)`);
  } else {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
    console.log(`${name}: written`);
  }
}
process.exit(stale === 0 ? 0 : 1);
