#!/usr/bin/env node
/**
 * functions/package-lock.json, derived from the root lockfile: what `npm test` ran is what the
 * deployed functions install.
 *
 * `firebase deploy` uploads functions/ alone, and Cloud Build installs its dependencies with
 * `npm ci` when functions/package-lock.json exists (otherwise `npm install`, which resolves the
 * version ranges afresh). Locally functions/ is an npm workspace whose packages are locked in the
 * root package-lock.json. This script takes the closure of the functions workspace's production
 * dependencies as the root install resolves them (Node's resolution: `functions/node_modules/x`
 * shadows `node_modules/x`), and lays it out for an install rooted at functions/: hoisted where
 * the name is free, nested under the dependent where a different version already holds the name,
 * so every dependency edge resolves to the same version as in the tested install.
 *
 *   node scripts/functions-lockfile.mjs           write functions/package-lock.json
 *   node scripts/functions-lockfile.mjs --check   exit 1 when the committed file is stale (CI, predeploy)
 */
import { readFileSync } from 'node:fs';
import { writeOrCheck } from './lib/generated-file.mjs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const FUNCTIONS_LOCKFILE = join(ROOT, 'functions', 'package-lock.json');
const WORKSPACE = 'functions';

/** The location Node's resolution finds `name` at, starting from the package at `from` ('' is the root). */
export function resolveIn(packages, from, name) {
  let base = from;
  for (;;) {
    const candidate = `${base ? `${base}/` : ''}node_modules/${name}`;
    if (packages[candidate]) return candidate;
    if (!base) return null;
    const i = base.lastIndexOf('/node_modules/');
    base = i >= 0 ? base.slice(0, i) : '';
  }
}

/** The edges npm checks for an entry: dependencies, optional dependencies, non-optional peers. */
export function edgesOf(entry) {
  const optionalPeers = new Set(Object.entries(entry.peerDependenciesMeta ?? {}).filter(([, m]) => m.optional).map(([n]) => n));
  return [
    ...Object.entries(entry.dependencies ?? {}).map(([name, range]) => ({ name, range, optional: false })),
    ...Object.entries(entry.optionalDependencies ?? {}).map(([name, range]) => ({ name, range, optional: true })),
    ...Object.entries(entry.peerDependencies ?? {}).filter(([name]) => !optionalPeers.has(name)).map(([name, range]) => ({ name, range, optional: false })),
  ];
}

/** Derives the functions lockfile (an object) from the root lockfile and functions/package.json. */
export function deriveFunctionsLockfile(rootLock, functionsPackage) {
  const old = rootLock.packages;
  /** new location -> root location */
  const placed = new Map();
  const worklist = [];
  const place = (newLoc, oldLoc) => {
    placed.set(newLoc, oldLoc);
    worklist.push(newLoc);
  };
  const view = () => Object.fromEntries([...placed.keys()].map((k) => [k, true]));
  const rootEdges = Object.keys(functionsPackage.dependencies ?? {}).map((name) => ({ name, optional: false }));
  for (const { name } of rootEdges) {
    const target = resolveIn(old, WORKSPACE, name);
    if (!target) throw new Error(`functions depends on ${name}, which the root lockfile does not have`);
    place(`node_modules/${name}`, target);
  }
  while (worklist.length > 0) {
    const newLoc = worklist.shift();
    const oldLoc = placed.get(newLoc);
    for (const edge of edgesOf(old[oldLoc])) {
      const expected = resolveIn(old, oldLoc, edge.name);
      if (!expected) {
        if (edge.optional) continue; // an optional package not installed here (another platform's)
        throw new Error(`${oldLoc} needs ${edge.name}, which the root install does not resolve`);
      }
      const actual = resolveIn(view(), newLoc, edge.name);
      if (actual && placed.get(actual) === expected) continue;
      const top = `node_modules/${edge.name}`;
      // Hoist where the name is free; nest under the dependent where another version holds it.
      place(!actual && !placed.has(top) ? top : `${newLoc}/node_modules/${edge.name}`, expected);
    }
  }
  const packages = {
    '': { name: functionsPackage.name, version: functionsPackage.version, dependencies: functionsPackage.dependencies, engines: functionsPackage.engines },
  };
  for (const newLoc of [...placed.keys()].sort()) {
    // Dev flags describe the root install (where everything here is also reachable from dev tools).
    packages[newLoc] = Object.fromEntries(Object.entries(old[placed.get(newLoc)]).filter(([field]) => field !== 'dev' && field !== 'devOptional'));
  }
  return { name: functionsPackage.name, version: functionsPackage.version, lockfileVersion: 3, requires: true, packages };
}

export function renderFunctionsLockfile() {
  const rootLock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8'));
  const functionsPackage = JSON.parse(readFileSync(join(ROOT, 'functions', 'package.json'), 'utf8'));
  return `${JSON.stringify(deriveFunctionsLockfile(rootLock, functionsPackage), null, 2)}\n`;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const check = process.argv.includes('--check');
  const ok = writeOrCheck(FUNCTIONS_LOCKFILE, renderFunctionsLockfile(), { check, howToFix: 'it must match the root package-lock.json: run `node scripts/functions-lockfile.mjs` and commit it' });
  process.exit(ok ? 0 : 1);
}
