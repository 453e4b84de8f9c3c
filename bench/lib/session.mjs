/** Shared by the phase scripts: options from the orchestrator, progress on stderr, results to a file. */
import { writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

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

/**
 * Runs a phase's sections in order. A failing section is recorded under `errors` and the next one
 * still runs; the result file is written after every section, so a later failure keeps what was
 * measured. `extra()` adds fields to the result, `close()` releases clients. Exits 1 on any failure.
 */
export async function runSections(phase, sections, { extra = () => ({}), close = async () => {} } = {}) {
  const started = performance.now();
  const result = {};
  const errors = {};
  // BENCH_SECTIONS=a,b runs only those sections of each phase (for working on one figure).
  const chosen = process.env.BENCH_SECTIONS ? process.env.BENCH_SECTIONS.split(',') : null;
  for (const [name, section] of Object.entries(sections)) {
    if (chosen !== null && !chosen.includes(name)) continue;
    log(`${phase} phase${QUICK ? ' (quick)' : ''}: ${name}`);
    try {
      result[name] = await section();
    } catch (err) {
      errors[name] = err instanceof Error ? err.message : String(err);
      log(`${phase} phase: ${name} failed: ${errors[name]}`);
    }
    output({ ...result, ...(Object.keys(errors).length > 0 ? { errors } : {}), ...extra(), seconds: Number(((performance.now() - started) / 1000).toFixed(1)) });
  }
  await close();
  log(`${phase} phase done in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  process.exit(Object.keys(errors).length > 0 ? 1 : 0);
}
