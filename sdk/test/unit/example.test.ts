/**
 * The example connector (examples/connector) at least parses, and is wired as documented. Running
 * it against the emulators is sdk/test/e2e/example-connector.e2e.test.ts.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '..', '..', '..');
const DIR = join(ROOT, 'examples', 'connector');
const files = readdirSync(DIR).filter((f) => f.endsWith('.js'));

test('the example has its entry point, its importable loop, the local stack defaults and the operator helper', () => {
  expect(files.sort()).toEqual(['conformance.js', 'connector.js', 'local-stack.js', 'main.js', 'reply-as-operator.js']);
});

type LocalStack = (root?: string) => { apiBaseUrl: string; pubsubEmulatorHost: string; firestoreEmulatorHost: string; projectId: string } | undefined;
const importLocalStack = async (): Promise<LocalStack> => ((await import(join(DIR, 'local-stack.js'))) as { localStack: LocalStack }).localStack;

test("the example's defaults are where the local stack listens: this repository's firebase.json and .firebaserc", async () => {
  const localStack = await importLocalStack();
  const emulators = (JSON.parse(readFileSync(join(ROOT, 'firebase.json'), 'utf8')) as { emulators: Record<string, { host: string; port: number }> }).emulators;
  const at = (name: string) => `${emulators[name]!.host}:${emulators[name]!.port}`;
  expect(localStack()).toEqual({
    apiBaseUrl: `http://${at('hosting')}`,
    pubsubEmulatorHost: at('pubsub'),
    firestoreEmulatorHost: at('firestore'),
    projectId: (JSON.parse(readFileSync(join(ROOT, '.firebaserc'), 'utf8')) as { projects: { default: string } }).projects.default,
  });
});

test('a stack on other ports moves the defaults with it; without a stack there are none (no guessing at the usual ports)', async () => {
  const localStack = await importLocalStack();
  const dir = mkdtempSync(join(tmpdir(), 'example-stack-'));
  try {
    expect(localStack(dir)).toBeUndefined();
    writeFileSync(join(dir, '.firebaserc'), JSON.stringify({ projects: { default: 'demo-other' } }));
    const emulators = { hosting: { host: '127.0.0.1', port: 6000 }, pubsub: { host: '127.0.0.1', port: 9085 }, firestore: { host: '127.0.0.1', port: 9080 } };
    writeFileSync(join(dir, 'firebase.json'), JSON.stringify({ emulators }));
    expect(localStack(dir)).toEqual({ apiBaseUrl: 'http://127.0.0.1:6000', pubsubEmulatorHost: '127.0.0.1:9085', firestoreEmulatorHost: '127.0.0.1:9080', projectId: 'demo-other' });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the loop is the SDK\'s runPullLoop (no hand-made ack / nack rules in the example)', () => {
  const source = readFileSync(join(DIR, 'connector.js'), 'utf8');
  // One callback per delivery kind: the reply's send (logged), and the provider's edit / unsend.
  expect(source).toContain('const provider = { send: sendAndLog,');
  expect(source).toContain('runPullLoop(client, subscription, provider,');
  expect(source).not.toMatch(/\.nack\(\)|parsePulledNotification/);
  // One timer only: the erasures' (the SDK's processErasures), none for a hand-made catch-up.
  expect(source.match(/setInterval\(/g)).toHaveLength(1);
  expect(source).toMatch(/export function startErasures[\s\S]*processErasures\([\s\S]*setInterval\(run, intervalMs\)/);
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
