#!/usr/bin/env node
/**
 * (Re)writes the generated block of firestore.rules (the contract facts the rules apply: limits,
 * lengths, content types, patterns) from functions/src/contract/index.ts, like
 * `node scripts/sdk-generate.mjs` writes the SDK's copy of the contract. Run it after changing a
 * contract fact the rules apply; test/unit/contract/rules-facts.test.ts fails when the rules are
 * stale. `--check` only compares and exits 1 on a difference (or on a hand-written copy of a fact:
 * scripts/lib/rules-facts.mjs).
 *
 * Usage: node scripts/rules-facts.mjs [--check]
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { transformSync } from 'esbuild';
import { ROOT } from './lib/emulators.mjs';
import { writeOrCheck } from './lib/generated-file.mjs';
import { renderRules } from './lib/rules-facts.mjs';

const RULES = join(ROOT, 'firestore.rules');
const CONTRACT_SOURCE = join(ROOT, 'functions', 'src', 'contract', 'index.ts');

/** The contract module's exports, compiled in memory (it imports nothing: scripts/sdk-generate.mjs enforces that). */
function loadContract() {
  const { code } = transformSync(readFileSync(CONTRACT_SOURCE, 'utf8'), { loader: 'ts', format: 'cjs', target: 'node22' });
  const module = { exports: {} };
  new Function('module', 'exports', code)(module, module.exports);
  return module.exports;
}

const check = process.argv.includes('--check');
let fresh;
try {
  fresh = renderRules(readFileSync(RULES, 'utf8'), loadContract());
} catch (err) {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
}
process.exit(writeOrCheck(RULES, fresh, { check, howToFix: 'run `node scripts/rules-facts.mjs` and commit it' }) ? 0 : 1);
