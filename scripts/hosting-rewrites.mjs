#!/usr/bin/env node
/**
 * `npm run rewrites`: (re)writes firebase.json's Hosting rewrites from the operation catalogue
 * (functions/src/operations.ts), like `npm run openapi` writes openapi/openapi.yaml: one rewrite per
 * HTTP operation, path -> function, then the console function's (`/console/v1/**`), in the functions' region. Run it after adding an operation or
 * changing a path or function name; test/unit/operations.test.ts fails when firebase.json is stale.
 * `--check` only compares and exits 1 on a difference.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './lib/emulators.mjs';
import { loadCatalogue } from './lib/catalogue.mjs';
import { writeOrCheck } from './lib/generated-file.mjs';
import { renderFirebaseJson } from './lib/hosting-rewrites.mjs';

const FIREBASE_JSON = join(ROOT, 'firebase.json');
const { hostingRewriteTargets, HTTP_REGION } = loadCatalogue();
const fresh = renderFirebaseJson(readFileSync(FIREBASE_JSON, 'utf8'), hostingRewriteTargets(), HTTP_REGION);
const check = process.argv.includes('--check');
process.exit(writeOrCheck(FIREBASE_JSON, fresh, { check, howToFix: 'run npm run rewrites' }) ? 0 : 1);
