/**
 * CPU time by process, from Linux /proc: what each part of the emulated stack spent during a
 * stretch of the bench (the drain's trace). A snapshot reads every process's user + system time;
 * `cpuBetween` subtracts two and groups the processes by role:
 *
 * - `function <name>`: a Functions emulator worker (its environment's FUNCTION_TARGET names the
 *   function: one worker process per request in flight, see stack.mjs `warmWorkers`);
 * - `firestore emulator`, `pubsub emulator`: their JVMs;
 * - `firebase-tools (functions emulator, hosting)`: the emulators' Node process, which also serves
 *   Hosting's rewrites and dispatches the triggers;
 * - `bench (connectors)`: this process (the 4 connectors, their Pub/Sub clients, the bookkeeping);
 * - `other`: anything else that ran meanwhile.
 *
 * Returns an empty result where /proc is missing (not Linux).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';

const TICKS_PER_SECOND = 100;

function roleOf(pid) {
  if (pid === process.pid) return 'bench (connectors)';
  let cmdline = '';
  try {
    cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return null;
  }
  if (cmdline.includes('cloud-firestore-emulator')) return 'firestore emulator';
  if (cmdline.includes('pubsub-emulator') || cmdline.includes('cloud-pubsub-emulator')) return 'pubsub emulator';
  if (cmdline.includes('functionsEmulatorRuntime')) {
    try {
      const target = /(?:^|\0)FUNCTION_TARGET=([^\0]*)/.exec(readFileSync(`/proc/${pid}/environ`, 'utf8'))?.[1];
      return `function ${target ?? '?'}`;
    } catch {
      return 'function ?';
    }
  }
  if (cmdline.includes('firebase-tools') || cmdline.includes('firebase ')) return 'firebase-tools (functions emulator, hosting)';
  const jar = /[\w.-]+\.jar/.exec(cmdline)?.[0];
  return `other: ${cmdline.split(' ')[0].split('/').pop()}${jar === undefined ? '' : ` ${jar}`}`;
}

/** user + system CPU ticks of every process, with its role. */
export function cpuSnapshot() {
  const snapshot = new Map();
  if (!existsSync('/proc')) return snapshot;
  for (const entry of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ticks = Number(fields[11]) + Number(fields[12]);
      const role = roleOf(Number(entry));
      if (role !== null) snapshot.set(entry, { role, ticks });
    } catch {
      /* exited meanwhile */
    }
  }
  return snapshot;
}

/** CPU seconds by role between two snapshots (a process born meanwhile counts from 0), largest first. */
export function cpuBetween(before, after) {
  const byRole = new Map();
  for (const [pid, { role, ticks }] of after) {
    const spent = ticks - (before.get(pid)?.ticks ?? 0);
    if (spent > 0) byRole.set(role, (byRole.get(role) ?? 0) + spent / TICKS_PER_SECOND);
  }
  return Object.fromEntries([...byRole].sort((a, b) => b[1] - a[1]).map(([role, s]) => [role, Number(s.toFixed(2))]));
}
