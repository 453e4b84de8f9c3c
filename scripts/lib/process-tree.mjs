/**
 * Stopping a process with everything it started: the test runner's way out of a failed or hung
 * phase (scripts/test.mjs, scripts/lib/test-results.mjs).
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';

/**
 * The pids below `pid` (Linux /proc): the emulators' JVMs run in process groups of their own, so
 * killing firebase-tools' group leaves them listening.
 */
function descendants(pid) {
  const children = new Map();
  for (const entry of existsSync('/proc') ? readdirSync('/proc') : []) {
    if (!/^[0-9]+$/.test(entry)) continue;
    try {
      // `pid (comm) state ppid ...`: comm may hold spaces and parentheses, so read after the last ')'.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      /* exited meanwhile */
    }
  }
  const found = [];
  const queue = [pid];
  while (queue.length > 0) {
    for (const child of children.get(queue.shift()) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

/** SIGKILL for `pid`, its process group and every process below it. */
export function stopProcessTree(pid) {
  const below = descendants(pid);
  for (const target of [-pid, pid, ...below]) {
    try {
      process.kill(target, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
}
