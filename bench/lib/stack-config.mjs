/**
 * The emulator config of `npm run bench`, derived from firebase.json at run time (so it never
 * drifts from it) and written under .local/bench/ (gitignored):
 *
 * - every path made absolute, except functions sources, which firebase-tools joins to the config
 *   file's directory (so they are made relative to it);
 * - a second functions codebase, `bench-noop` (bench/noop-function), with the no-op HTTP functions
 *   `benchNoop`, `benchNoopLogged` and `benchNoopFile`, and Hosting rewrites `/bench/noop`,
 *   `/bench/noop-logged` and `/bench/noop-file` to them: the baseline of the overhead figures goes through exactly the same Hosting ->
 *   Functions emulator path as the endpoints.
 *
 * firebase.json itself is untouched, so `firebase deploy` never sees the no-op function, and the
 * service's code has no bench-only branch.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { isAbsolute, join, relative } from 'node:path';
import { REGION, ROOT } from '../../scripts/lib/emulators.mjs';
import { FUNCTIONS_DIR } from './build.mjs';

export const BENCH_DIR = join(ROOT, '.local', 'bench');
export const NOOP_PATH = '/bench/noop';
export const NOOP_LOGGED_PATH = '/bench/noop-logged';
export const NOOP_FILE_PATH = '/bench/noop-file';

const abs = (p) => (isAbsolute(p) ? p : join(ROOT, p));

/** Writes the bench config and returns its path (pass it to firebase-tools with --config). */
export function writeBenchConfig() {
  const config = JSON.parse(readFileSync(join(ROOT, 'firebase.json'), 'utf8'));
  const codebases = Array.isArray(config.functions) ? config.functions : [config.functions];
  const source = (p) => relative(BENCH_DIR, abs(p));
  // The service's codebase runs from the bench's own build (build.mjs), the no-op from bench/.
  config.functions = [
    ...codebases.map((c) => ({ ...c, source: source(c.source === 'functions' ? FUNCTIONS_DIR : c.source) })),
    { source: source('bench/noop-function'), codebase: 'bench-noop', runtime: 'nodejs22' },
  ];
  config.firestore = { ...config.firestore, rules: abs(config.firestore.rules), indexes: abs(config.firestore.indexes) };
  config.hosting = {
    ...config.hosting,
    public: abs(config.hosting.public),
    rewrites: [
      { source: NOOP_PATH, function: { functionId: 'benchNoop', region: REGION } },
      { source: NOOP_LOGGED_PATH, function: { functionId: 'benchNoopLogged', region: REGION } },
      { source: NOOP_FILE_PATH, function: { functionId: 'benchNoopFile', region: REGION } },
      ...config.hosting.rewrites,
    ],
  };
  mkdirSync(BENCH_DIR, { recursive: true });
  const path = join(BENCH_DIR, 'firebase.json');
  writeFileSync(path, `${JSON.stringify(config, null, 2)}\n`);
  return path;
}
