/**
 * The example connector (examples/connector) at least parses, and is wired as documented. Running
 * it against the emulators is sdk/test/e2e/example-connector.e2e.test.ts.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '..', '..', '..');
const DIR = join(ROOT, 'examples', 'connector');
const files = readdirSync(DIR).filter((f) => f.endsWith('.js'));

test('the example has its entry point, its importable loop and the operator helper', () => {
  expect(files.sort()).toEqual(['connector.js', 'main.js', 'reply-as-operator.js']);
});

test.each(files)('node --check examples/connector/%s', (file) => {
  const result = spawnSync(process.execPath, ['--check', join(DIR, file)], { encoding: 'utf8' });
  expect({ status: result.status, stderr: result.stderr }).toEqual({ status: 0, stderr: '' });
});

test('ESM package on the SDK package (not its sources); `npm run example:connector` builds the SDK first', () => {
  const pkg = JSON.parse(readFileSync(join(DIR, 'package.json'), 'utf8')) as { type: string; dependencies: Record<string, string> };
  expect(pkg.type).toBe('module');
  expect(pkg.dependencies['@support-desk/connector-sdk']).toBe('file:../../sdk');
  const source = readFileSync(join(DIR, 'connector.js'), 'utf8');
  expect(source).toContain("from '@support-desk/connector-sdk'");
  expect(source).not.toMatch(/sdk\/src/);
  const root = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  expect(root.scripts['example:connector']).toBe('npm run build --workspace sdk --silent && node examples/connector/main.js');
});
