/** Package shape: zero runtime dependencies, ESM with types, Node 22.12+ (22 and 24 tested), version in sync. */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { SDK_VERSION } from '../../src/index.js';

const sdkDir = join(__dirname, '..', '..');
const pkg = JSON.parse(readFileSync(join(sdkDir, 'package.json'), 'utf8')) as Record<string, unknown>;

test('has zero runtime dependencies', () => {
  for (const field of ['dependencies', 'peerDependencies', 'optionalDependencies', 'bundleDependencies', 'bundledDependencies']) {
    const deps = pkg[field];
    expect(deps === undefined || (typeof deps === 'object' && deps !== null && Object.keys(deps).length === 0)).toBe(true);
  }
});

test('sources import only node: built-ins and relative .js modules inside src', () => {
  const srcDir = join(sdkDir, 'src');
  // Recursive: the implementation lives in src/internal/, and the published files keep this layout.
  const files = readdirSync(srcDir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
  expect(files).toEqual(expect.arrayContaining(['index.ts', join('internal', 'transport.ts')]));
  for (const file of files) {
    const text = readFileSync(join(srcDir, file), 'utf8');
    for (const m of text.matchAll(/(?:import|export)\s[^'";]*?from\s+['"]([^'"]+)['"]/g)) {
      const spec = m[1]!;
      const target = resolve(srcDir, dirname(file), spec);
      const ok = spec.startsWith('node:') || (/^\.\.?\//.test(spec) && spec.endsWith('.js') && !relative(srcDir, target).startsWith('..'));
      if (!ok) throw new Error(`${file} imports ${spec}`);
    }
  }
});

test('name, version, module type, engines, exports with types, files, built on prepare (once, also when packed); not private', () => {
  expect(pkg.name).toBe('@support-desk/connector-sdk');
  expect(pkg.version).toBe('0.2.0');
  expect(SDK_VERSION).toBe(pkg.version);
  expect(pkg.type).toBe('module');
  expect(pkg.engines).toEqual({ node: '>=22.12' });
  expect(pkg.exports).toMatchObject({ '.': { types: './dist/index.d.ts', default: './dist/index.js' }, './testing': { types: './dist/testing/index.d.ts', default: './dist/testing/index.js' } });
  expect(pkg.files).toEqual(['bin', 'dist', 'src', 'README.md', 'CHANGELOG.md']);
  expect(pkg.private).toBeUndefined();
  // dist/ is built from nothing whenever npm installs the package from a checkout or packs it:
  // `prepare` runs for both (npm pack and publish run prepack and then prepare, so a prepack
  // build too would build it twice).
  const scripts = pkg.scripts as Record<string, string>;
  expect(scripts.build).toBe('npm run clean --silent && tsc -p tsconfig.build.json');
  expect(scripts.prepare).toBe('npm run build --silent');
  expect(scripts.prepack).toBeUndefined();
});
