/** Shared by the phase scripts: options from the orchestrator, progress on stderr, results to a file. */
import { writeFileSync } from 'node:fs';

export const QUICK = process.env.BENCH_QUICK === '1';
/** `--full-drain`: the throughput drain runs until every reply is delivered. */
export const FULL_DRAIN = process.env.BENCH_FULL_DRAIN === '1';
/** Picks the full-run or the --quick value. */
export const pick = (full, quick) => (QUICK ? quick : full);

export function log(message) {
  process.stderr.write(`  [${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

/** Writes the phase's result object where the orchestrator expects it (BENCH_OUT). */
export function output(result) {
  const path = process.env.BENCH_OUT;
  if (!path) throw new Error('BENCH_OUT is not set (run phases through `npm run bench`)');
  writeFileSync(path, `${JSON.stringify(result, null, 2)}\n`);
}
