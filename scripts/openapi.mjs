#!/usr/bin/env node
/**
 * `npm run openapi`: builds the functions and (re)writes the OpenAPI document from the zod schemas
 * (functions/src/openapi/document.ts) to openapi/openapi.yaml and to the copy Hosting serves at
 * /openapi.yaml (hosting/public/openapi.yaml), and the SDK's wire types and readers generated from
 * it (sdk/src/internal/api.generated.ts, scripts/sdk-generate.mjs), and the types a connector
 * developer gets from openapi-typescript (test/openapi-client/api.generated.d.ts, used by the
 * openapi-fetch client of test/integration/openapi-client.test.ts: the document as its users'
 * tools see it). All are committed; test/unit/openapi/document.test.ts and
 * sdk/test/unit/surface.test.ts fail when one differs from a fresh build. `--check` only compares
 * and exits 1 on a difference.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import openapiTS, { astToString } from 'openapi-typescript';
import { stringify } from 'yaml';
import { ROOT, buildFunctions } from './lib/emulators.mjs';
import { writeOrCheck } from './lib/generated-file.mjs';
import { API_FILE, generateApi } from './sdk-generate.mjs';

buildFunctions();
const require = createRequire(import.meta.url);
const { buildOpenApiDocument, YAML_OPTIONS, YAML_HEADER } = require(join(ROOT, 'functions', 'lib', 'openapi', 'document.js'));
const text = YAML_HEADER + stringify(buildOpenApiDocument(), YAML_OPTIONS);
const OUTPUTS = [
  [join(ROOT, 'openapi', 'openapi.yaml'), text],
  [join(ROOT, 'hosting', 'public', 'openapi.yaml'), text],
  [API_FILE, generateApi(text)],
  [join(ROOT, 'test', 'openapi-client', 'api.generated.d.ts'), astToString(await openapiTS(text))],
];

const check = process.argv.includes('--check');
const fresh = OUTPUTS.map(([file, text]) => writeOrCheck(file, text, { check, howToFix: 'run npm run openapi' }));
process.exit(fresh.every(Boolean) ? 0 : 1);
