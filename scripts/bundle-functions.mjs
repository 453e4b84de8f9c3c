#!/usr/bin/env node
/**
 * Second step of the functions build, after `tsc`: one esbuild bundle per lazily-required handler
 * module (functions/src/index.ts requires `lib/bundles/<path>.js` on a function's first invocation).
 *
 * Why: a function's cold start is module loading. Through tsc's per-file output an HTTP function
 * loaded ~130 modules beyond firebase-functions + firebase-admin, 95 of them zod, whose CommonJS
 * build loads all 64 locales eagerly. Bundling from the TypeScript sources lets esbuild resolve
 * zod's ESM build and tree-shake it, and turns our own modules and busboy into one file.
 *
 * The platform stays external: firebase-functions, firebase-admin and @google-cloud/* must be the
 * single shared copies firebase deploys (firebase-functions reads its own module state, and the
 * Admin SDK's default app and Firestore client are shared by every module that asks for them).
 * The build fails if anything else from node_modules would be inlined, or if an external is not a
 * dependency of functions/package.json (it would be missing in the deployed function).
 *
 * The tsc output in lib/ is kept as is: the CLI, the tests and the bench load it per file.
 *
 * Usage: bundleFunctions(libDir) from the build scripts, or `node scripts/bundle-functions.mjs [libDir]`
 * (default functions/lib), which is what `npm run build --workspace functions` runs.
 */
import { build } from 'esbuild';
import { readFileSync, rmSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadCatalogue } from './lib/catalogue.mjs';

const FUNCTIONS = join(dirname(fileURLToPath(import.meta.url)), '..', 'functions');

/**
 * The modules index.ts requires lazily, relative to functions/src: the handler bundles the operation
 * catalogue names (functions/src/operations.ts). Each becomes lib/bundles/<same path>.js.
 */
export const BUNDLED_HANDLERS = loadCatalogue().handlerBundles().map((bundle) => `${bundle}.ts`);
/** Loaded from node_modules at run time: the platform firebase deploys and installs. */
const EXTERNAL = ['firebase-functions', 'firebase-admin', '@google-cloud/*'];
/** The only packages that may be inlined (streamsearch is busboy's own dependency). */
const INLINED = new Set(['zod', 'busboy', 'streamsearch']);

const packageOf = (path) => {
  const m = /(?:^|\/)node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(path);
  return m ? m[1] : undefined;
};

export async function bundleFunctions(libDir = join(FUNCTIONS, 'lib')) {
  const outdir = join(resolve(libDir), 'bundles');
  rmSync(outdir, { recursive: true, force: true });
  const result = await build({
    absWorkingDir: FUNCTIONS,
    entryPoints: BUNDLED_HANDLERS.map((p) => join('src', p)),
    outbase: 'src',
    outdir,
    bundle: true,
    platform: 'node',
    target: 'node22',
    format: 'cjs',
    treeShaking: true,
    sourcemap: true,
    external: EXTERNAL,
    tsconfig: join(FUNCTIONS, 'tsconfig.json'),
    // Our error names are literals (rules/errors.ts); this keeps every other class and function
    // name (e.g. a client library's error class, logged as `errorName`) as written.
    keepNames: true,
    metafile: true,
    logLevel: 'warning',
  });

  const dependencies = Object.keys(JSON.parse(readFileSync(join(FUNCTIONS, 'package.json'), 'utf8')).dependencies ?? {});
  const problems = [];
  for (const input of Object.keys(result.metafile.inputs)) {
    const pkg = packageOf(input);
    if (pkg && !INLINED.has(pkg)) problems.push(`${pkg} would be inlined (${input}); mark it external or allow it in INLINED`);
  }
  for (const [file, output] of Object.entries(result.metafile.outputs)) {
    for (const imp of output.imports.filter((i) => i.external && !i.path.startsWith('node:') && !builtinModules.includes(i.path))) {
      const pkg = imp.path.startsWith('@') ? imp.path.split('/').slice(0, 2).join('/') : imp.path.split('/')[0];
      if (!dependencies.includes(pkg)) problems.push(`${file} requires ${imp.path}, which is not a dependency in functions/package.json`);
    }
  }
  if (problems.length > 0) throw new Error(`bundle-functions:\n  ${[...new Set(problems)].join('\n  ')}`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  // Not a top-level await: the unit tests import this module (BUNDLED_HANDLERS) as CommonJS.
  bundleFunctions(process.argv[2]).catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
