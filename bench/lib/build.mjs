/**
 * The bench's own build of the functions and the SDK, under .local/bench/build/ (gitignored):
 * the functions' build (scripts/lib/emulators.mjs `buildFunctions`) and the SDK's `tsc` project
 * (sdk/tsconfig.build.json), each with another output directory.
 *
 * Why not functions/lib and sdk/dist in place: other runs share this checkout. The Functions
 * emulator watches its source directory and reloads on every file tsc rewrites, so building in
 * place outside the emulator lock would disturb a test run holding it, and another run's build
 * would reload the functions in the middle of a bench. A private copy isolates both ways.
 * functions/node_modules is linked, so module resolution is the same as from functions/lib.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { buildFunctions, ROOT } from '../../scripts/lib/emulators.mjs';

export const BUILD_DIR = join(ROOT, '.local', 'bench', 'build');
/** The functions source directory of the bench (package.json + lib/ + linked node_modules). */
export const FUNCTIONS_DIR = join(BUILD_DIR, 'functions');
export const FUNCTIONS_LIB = join(FUNCTIONS_DIR, 'lib');
/** The SDK package as it would be packed (package.json, README.md, src/, dist/). */
export const SDK_DIR = join(BUILD_DIR, 'sdk');
export const SDK_ENTRY = join(SDK_DIR, 'dist', 'index.js');

function tsc(project, outDir) {
  const r = spawnSync(join(ROOT, 'node_modules', '.bin', 'tsc'), ['-p', project, '--outDir', outDir], { cwd: ROOT, stdio: 'inherit' });
  if (r.status !== 0) throw new Error(`tsc -p ${project} failed`);
}

export function build() {
  rmSync(BUILD_DIR, { recursive: true, force: true });
  mkdirSync(FUNCTIONS_DIR, { recursive: true });
  buildFunctions(FUNCTIONS_LIB);
  cpSync(join(ROOT, 'functions', 'package.json'), join(FUNCTIONS_DIR, 'package.json'));
  for (const f of readdirSync(join(ROOT, 'functions')).filter((f) => f.startsWith('.env'))) cpSync(join(ROOT, 'functions', f), join(FUNCTIONS_DIR, f));
  if (existsSync(join(ROOT, 'functions', 'node_modules'))) symlinkSync(join(ROOT, 'functions', 'node_modules'), join(FUNCTIONS_DIR, 'node_modules'), 'dir');

  mkdirSync(SDK_DIR, { recursive: true });
  tsc(join(ROOT, 'sdk', 'tsconfig.build.json'), join(SDK_DIR, 'dist'));
  for (const f of ['package.json', 'README.md', 'src']) cpSync(join(ROOT, 'sdk', f), join(SDK_DIR, f), { recursive: true });
}
