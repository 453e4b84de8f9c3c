/**
 * The operation catalogue (functions/src/operations.ts) for the build and test scripts, read from
 * the TypeScript source: esbuild compiles it in memory (it is metadata only: its one run-time import
 * is the region), so no functions build is needed first.
 */
import { buildSync } from 'esbuild';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const FUNCTIONS = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'functions');
const CATALOGUE_SOURCE = join(FUNCTIONS, 'src', 'operations.ts');

let loaded;

/** The catalogue module's exports: `HTTP_OPERATIONS`, `HTTP_REGION`, `httpOperations()`, `handlerBundles()`, ... */
export function loadCatalogue() {
  if (loaded) return loaded;
  const { outputFiles } = buildSync({
    entryPoints: [CATALOGUE_SOURCE],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node22',
    write: false,
    logLevel: 'warning',
    tsconfig: join(FUNCTIONS, 'tsconfig.json'),
  });
  const module = { exports: {} };
  const source = outputFiles[0].text;
  // Evaluated like a CommonJS module of functions/src (it has no imports left but Node built-ins).
  new Function('module', 'exports', 'require', source)(module, module.exports, createRequire(CATALOGUE_SOURCE));
  loaded = module.exports;
  return loaded;
}
