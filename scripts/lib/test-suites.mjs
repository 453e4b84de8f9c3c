/**
 * Which suites the integration phase runs, and how (scripts/test-stack.mjs): the few that may not
 * share the one stack, one at a time, then the others in parallel Jest workers.
 *
 * A suite that cannot run beside others says so in its first doc comment, with the reason:
 *
 *   /**
 *    * ...
 *    * @serial reads the whole emulator log, which every other suite writes to
 *    *\/
 *
 * Everything else runs in parallel: each suite works in a workspace of its own. A suite that needs
 * no emulator at all and mostly waits says `@standalone <reason>` and runs from the start of the run
 * (`splitSuites`).
 */
import { existsSync, globSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { firstDocTag } from './doc-tags.cjs';
import { ROOT } from './emulators.mjs';

/** The stack's suites (jest.config.cjs `integration` and `framework`), relative to the root, sorted. */
export function integrationSuites() {
  return globSync(['test/integration/**/*.test.ts', 'test/framework/**/*.test.ts', 'sdk/test/e2e/**/*.test.ts'], { cwd: ROOT }).sort();
}

/** How a suite runs, by the tag its first doc comment gives (with its reason): `@standalone`, then `@own-project`, then `@serial`. */
function groupOf(suite) {
  const source = readFileSync(join(ROOT, suite), 'utf8');
  if (firstDocTag(source, 'standalone') !== null) return 'standalone';
  if (firstDocTag(source, 'own-project') !== null) return 'ownProject';
  return firstDocTag(source, 'serial') !== null ? 'serial' : 'parallel';
}

/**
 * `suites` split by how they run, each group in order:
 * - `standalone`: they say `@standalone <reason>`: they talk to no emulator and mostly wait on the
 *   clock, so they run from the start of the run, beside the static checks and the stack's start
 *   (scripts/test.mjs), instead of holding a worker of the parallel lane while they wait;
 * - `ownProject`: they say `@own-project <reason>`: they work in a Firestore project of their
 *   own on the emulator (the rules suites: no trigger fires there, and no job or suite of the
 *   main project reads it), so they run from the stack's start beside the `@serial` suites, in a
 *   Jest run at the checks' niceness that takes what the others leave of the two cores;
 * - `serial`: they say `@serial <reason>`: one at a time on the stack, before the others;
 * - `parallel`: the rest, in parallel workers.
 */
export function splitSuites(suites) {
  const groups = { standalone: [], ownProject: [], serial: [], parallel: [] };
  for (const suite of suites) groups[groupOf(suite)].push(suite);
  return groups;
}

/**
 * Command-line arguments of the test scripts: positional ones are regular expressions that select
 * suites by path (like Jest's), those that start with '-' are passed to Jest.
 */
export function parseTestArgs(args) {
  const flags = [];
  const filters = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg.startsWith('-')) {
      flags.push(arg);
      // Flags that take a separate value (`-t name`).
      if (['-t', '--testNamePattern', '--seed', '--maxWorkers'].includes(arg) && i + 1 < args.length) flags.push(args[++i]);
    } else filters.push(new RegExp(arg));
  }
  return { flags, filters, selects: (suite) => filters.length === 0 || filters.some((f) => f.test(suite)) };
}

/**
 * Parallel Jest workers for suites against the one emulator stack: four on two cores, since the
 * suites mostly wait on the emulators (triggers, Pub/Sub, transactions). With three, the lane kept
 * 1.78-1.84 of the two cores busy, with four 1.89-1.93 (docs/toolchain.md#stack-workers: the lane
 * 5-13 s shorter in back-to-back fresh-clone runs; five no better). TEST_WORKERS overrides it.
 */
export const STACK_WORKERS = Number(process.env.TEST_WORKERS ?? 4);

/**
 * The niceness of the static checks (tsc, ESLint, madge, knip; scripts/test.mjs), and of the
 * `@own-project` suites (scripts/test-stack.mjs). They run beside the emulators and the @serial
 * suites, whose waits are on the clock (a trigger's delay, Hosting's 60 s proxy timeout, a
 * browser's wait), while nothing in a check is timed: when both want the two cores, the stack goes
 * first and the checks take what it leaves. Before, a worker the Functions emulator started under
 * that load once took so long that Hosting answered 504 (the soak, in CI). TEST_CHECK_NICENESS
 * overrides it (0: the checks run at the stack's priority, as before); anything but an integer
 * from 0 to 19 throws.
 */
export function checkNiceness() {
  const value = Number(process.env.TEST_CHECK_NICENESS ?? 10);
  if (!Number.isInteger(value) || value < 0 || value > 19) {
    throw new Error(`TEST_CHECK_NICENESS must be an integer from 0 to 19, not ${JSON.stringify(process.env.TEST_CHECK_NICENESS)}`);
  }
  return value;
}

/**
 * The command and arguments that run `cmd args` at niceness `nice`: through `nice`, which execs the
 * command in place (same pid, every thread niced); unchanged at 0 and on Windows.
 */
export function nicedCommand(cmd, args, nice) {
  return nice > 0 && process.platform !== 'win32' ? ['nice', ['-n', String(nice), cmd, ...args]] : [cmd, args];
}

/**
 * Phase timing shared by the runner and the stack phases: `phase(name, fn)` runs `fn`, prints
 * `▶ name` and `◀ name (N s)`, and records `{ name, from, to }` in seconds since `origin` (epoch
 * ms, the run's start) in `timeline`, then calls `onRecord(timeline)`.
 */
export function phaseTimer(origin, onRecord = () => {}) {
  const timeline = [];
  async function phase(name, fn) {
    const t = Date.now();
    console.log(`▶ ${name}`);
    try {
      return await fn();
    } finally {
      timeline.push({ name, from: (t - origin) / 1000, to: (Date.now() - origin) / 1000 });
      onRecord(timeline);
      console.log(`◀ ${name} (${((Date.now() - t) / 1000).toFixed(1)} s)`);
    }
  }
  return { timeline, phase };
}

/**
 * Resolves once `path` exists: how the test scripts signal each other across processes (the checks
 * passed, a framework gate opened, the stack phases are done).
 */
export async function waitForFile(path) {
  while (!existsSync(path)) await sleep(200);
}
