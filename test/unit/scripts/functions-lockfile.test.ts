/**
 * functions/package-lock.json (what Cloud Build installs for the deployed functions) is the
 * functions workspace's part of the tested root install: fresh, and every dependency edge in it
 * resolves to the very version the root install resolves for the same edge.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FUNCTIONS_LOCKFILE, edgesOf, renderFunctionsLockfile, resolveIn } from '../../../scripts/functions-lockfile.mjs';

type Entry = { version?: string; optional?: boolean; dev?: boolean } & Record<string, unknown>;
interface Lock {
  packages: Record<string, Entry>;
}

const ROOT = join(__dirname, '..', '..', '..');
const committed = readFileSync(FUNCTIONS_LOCKFILE, 'utf8');
const functionsLock = JSON.parse(committed) as Lock;
const rootLock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as Lock;
const functionsPackage = JSON.parse(readFileSync(join(ROOT, 'functions', 'package.json'), 'utf8')) as { dependencies: Record<string, string> };

test('the committed functions/package-lock.json is a fresh derivation of the root lockfile', () => {
  expect(committed === renderFunctionsLockfile()).toBe(true);
});

test('every edge resolves to the version the tested root install resolves for it', () => {
  // Walk both trees side by side from the functions workspace.
  const seen = new Set<string>();
  const queue: Array<[string, string]> = Object.keys(functionsPackage.dependencies).map((name) => [
    resolveIn(functionsLock.packages, '', name) as string,
    resolveIn(rootLock.packages, 'functions', name) as string,
  ]);
  let edges = 0;
  while (queue.length > 0) {
    const [mine, theirs] = queue.shift() as [string, string];
    expect([mine, functionsLock.packages[mine]?.version]).toEqual([mine, rootLock.packages[theirs]?.version]);
    if (seen.has(mine)) continue;
    seen.add(mine);
    for (const edge of edgesOf(rootLock.packages[theirs] as Entry)) {
      const rootTarget = resolveIn(rootLock.packages, theirs, edge.name);
      if (rootTarget === null) {
        expect(edge.optional).toBe(true);
        continue;
      }
      const target = resolveIn(functionsLock.packages, mine, edge.name);
      expect([mine, edge.name, target === null]).toEqual([mine, edge.name, false]);
      queue.push([target as string, rootTarget]);
      edges++;
    }
  }
  expect(edges).toBeGreaterThan(300);
  // Nothing extra: every entry is reached, and none is marked as a dev dependency.
  expect(Object.keys(functionsLock.packages).filter((k) => k !== '' && !seen.has(k))).toEqual([]);
  expect(Object.values(functionsLock.packages).some((e) => e.dev === true)).toBe(false);
});

test('it pins the functions framework production runs, at the version npm test serves', () => {
  const pinned = functionsPackage.dependencies['@google-cloud/functions-framework'];
  expect(pinned).toMatch(/^\d+\.\d+\.\d+$/);
  expect(functionsLock.packages['node_modules/@google-cloud/functions-framework']?.version).toBe(pinned);
});
