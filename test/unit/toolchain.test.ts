/**
 * The Node versions the repository pins and accepts, and the install scripts it lets npm run
 * (docs/toolchain.md): one Node 22 everywhere it is named, the SDK's engines open to Node 24, and
 * every dependency with an install script reviewed in package.json's `allowScripts`.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NODE_24_PACKAGES, NODE_24_VERSION, integrityOf, node24Binary } from '../../scripts/lib/node24.mjs';

const ROOT = join(__dirname, '..', '..');
const readJson = (path: string): Record<string, unknown> => JSON.parse(readFileSync(join(ROOT, path), 'utf8')) as Record<string, unknown>;
const rootPkg = readJson('package.json');
const lock = readJson('package-lock.json') as { packages: Record<string, { name?: string; hasInstallScript?: boolean; dev?: boolean; optional?: boolean }> };

describe('the Node the repository runs on', () => {
  test('.nvmrc names the `node` devDependency, the Node the npm scripts run on', () => {
    const nvmrc = readFileSync(join(ROOT, '.nvmrc'), 'utf8').trim();
    expect(nvmrc).toMatch(/^22\.\d+\.\d+$/);
    expect((rootPkg.devDependencies as Record<string, string>).node).toBe(nvmrc);
  });

  test('devEngines asks for Node 22.12 or later to run npm in the clone (a warning, not a refusal)', () => {
    expect(rootPkg.devEngines).toEqual({ runtime: { name: 'node', version: '>=22.12', onFail: 'warn' } });
  });

  test('the SDK, the examples and the root accept Node 22.12 and later (24 included); the functions name their runtime', () => {
    for (const path of ['package.json', 'sdk/package.json', 'examples/connector/package.json', 'examples/email-connector/package.json']) {
      expect({ path, engines: readJson(path).engines }).toEqual({ path, engines: { node: '>=22.12' } });
    }
    // The deployed runtime (firebase.json `runtime: nodejs22`) and the functions' engines agree.
    expect(readJson('functions/package.json').engines).toEqual({ node: '22' });
    expect((readJson('firebase.json').functions as Array<{ runtime: string }>)[0]?.runtime).toBe('nodejs22');
  });

  test('the second Node the SDK is tested on is a Node 24, pinned by integrity per platform', async () => {
    expect(NODE_24_VERSION).toMatch(/^24\.\d+\.\d+$/);
    expect(Object.keys(NODE_24_PACKAGES).sort()).toEqual(['linux-arm64', 'linux-x64']);
    for (const pkg of Object.values(NODE_24_PACKAGES)) expect(pkg.integrity).toMatch(/^sha512-[A-Za-z0-9+/]{86}==$/);
    // A platform without a pinned package has none (the phase is skipped), unless NODE24_BIN names one.
    await expect(node24Binary(tmpdir(), { platform: 'plan9-mips', env: {} })).resolves.toBeNull();
    await expect(node24Binary(tmpdir(), { platform: 'plan9-mips', env: { NODE24_BIN: '/opt/node24/bin/node' } })).resolves.toBe('/opt/node24/bin/node');
  });

  test('the integrity of a fetched tarball is computed the way npm records it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'integrity-'));
    try {
      const file = join(dir, 'x');
      writeFileSync(file, 'abc');
      // sha512("abc"), base64.
      expect(integrityOf(file)).toBe('sha512-3a81oZNherrMQXNJriBBMRLm+k6JqX6iCp7u5ktV05ohkpkqJ0/BqDa6PCOj/uu9RU1EI2Q86A4qmslPpUyknw==');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('install scripts (package.json `allowScripts`, npm 11)', () => {
  const allowScripts = rootPkg.allowScripts as Record<string, boolean>;
  /** The package names (the registry's, not an alias) the lockfile says have an install script. */
  const withScripts = [
    ...new Set(
      Object.entries(lock.packages)
        .filter(([path, entry]) => path.includes('node_modules/') && entry.hasInstallScript === true)
        .map(([path, entry]) => entry.name ?? path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length)),
    ),
  ].sort();

  test('approves the one the install needs: `node`, whose preinstall fetches the Node 22 binary', () => {
    expect(Object.entries(allowScripts).filter(([, allowed]) => allowed)).toEqual([['node', true]]);
  });

  test('every dependency with an install script is reviewed (a new one fails here, not on the day npm blocks it)', () => {
    expect(withScripts.filter((name) => !(name in allowScripts))).toEqual([]);
  });

  test('no entry is stale: each names a locked package that has an install script', () => {
    expect(Object.keys(allowScripts).sort()).toEqual(withScripts);
  });

  test('entries are name-only (the lockfile records no `resolved` URL that a version pin could be checked against)', () => {
    for (const key of Object.keys(allowScripts)) expect(key).toMatch(/^(@[a-z0-9-]+\/)?[a-z0-9.-]+$/);
  });
});
