/**
 * `support-desk-connector-check` as a process, as a developer runs it: the SDK compiled (tsc, into
 * a package directory of its own so that `@support-desk/connector-sdk` resolves to it), then
 * `node dist/check/cli.js` on the example connector (exit 0), on a broken connector (exit 1, its
 * FAIL lines), and in process mode on a push connector it starts itself.
 */
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '..', '..', '..', '..');
jest.setTimeout(180_000);

function run(cmd: string, args: string[], cwd: string): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn(cmd, args, { cwd, env: { ...process.env, NODE_OPTIONS: '' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    child.on('error', fail);
    child.on('close', (status) => done({ status, stdout, stderr }));
  });
}

function freePort(): Promise<number> {
  return new Promise((done) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => done(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}

let work: string;
let cli: string;
let app: string;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'connector-check-'));
  const pkg = join(work, 'node_modules', '@support-desk', 'connector-sdk');
  mkdirSync(pkg, { recursive: true });
  writeFileSync(join(pkg, 'package.json'), readFileSync(join(ROOT, 'sdk', 'package.json')));
  const built = await run(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(ROOT, 'sdk', 'tsconfig.build.json'), '--outDir', join(pkg, 'dist'), '--declaration', 'false', '--declarationMap', 'false', '--sourceMap', 'false', '--noCheck'], ROOT);
  if (built.status !== 0) throw new Error(`tsc failed:\n${built.stdout}${built.stderr}`);
  cli = join(pkg, 'dist', 'check', 'cli.js');
  // The example connector's own files, beside the package; @google-cloud/pubsub from the repository.
  app = join(work, 'app');
  mkdirSync(app);
  for (const f of readdirSync(join(ROOT, 'examples', 'connector')).filter((n) => n.endsWith('.js'))) cpSync(join(ROOT, 'examples', 'connector', f), join(app, f));
  for (const f of ['cli-broken.mjs', 'push-connector.mjs']) cpSync(join(__dirname, 'fixtures', f), join(app, f));
  writeFileSync(join(app, 'package.json'), JSON.stringify({ type: 'module' }));
  symlinkSync(join(ROOT, 'node_modules', '@google-cloud'), join(work, 'node_modules', '@google-cloud'));
});
afterAll(() => {
  rmSync(work, { recursive: true, force: true });
});

test('the example connector: one PASS line per scenario, the summary, exit 0', async () => {
  const result = await run(process.execPath, [cli, 'conformance.js', '--scenario', 'plain-reply', '--scenario', 'duplicate-notification', '--scenario', 'erasure'], app);
  expect(result.stderr).toBe('');
  expect(result.stdout).toMatch(/^PASS plain-reply \(\d+ ms\)\nPASS duplicate-notification \(\d+ ms\)\nPASS erasure \(\d+ ms\)\nOK: 3 scenarios, 3 passed, 0 failed, 0 skipped \([\d.]+ s\)\n$/);
  expect(result.status).toBe(0);
});

test('a connector that completes without start: FAIL lines naming the rule and the calls, exit 1', async () => {
  const result = await run(process.execPath, [cli, 'cli-broken.mjs', '--scenario', 'plain-reply', '--scenario', 'erasure', '--timeout', '5000'], app);
  expect(result.stdout).toMatch(/^FAIL plain-reply: complete_without_sending_start — complete of delivery \S+ came under a lease whose start had not answered `sending`.* \(calls #\d+\) \(\d+ ms\)\n/);
  expect(result.stdout).toMatch(/\nPASS erasure \(\d+ ms\)\nFAILED: 2 scenarios, 1 passed, 1 failed, 0 skipped \([\d.]+ s\)\nrule complete_without_sending_start: complete was called under a lease whose start had not answered `sending`.*\n$/);
  expect(result.status).toBe(1);
});

test('the example connector declares edits and unsends: their scenarios run by name and pass', async () => {
  const result = await run(process.execPath, [cli, 'conformance.js', '--scenario', 'edit-reply', '--scenario', 'unsend-reply'], app);
  expect(result.stderr).toBe('');
  expect(result.stdout).toMatch(/^PASS edit-reply \(\d+ ms\)\nPASS unsend-reply \(\d+ ms\)\nOK: 2 scenarios, 2 passed, 0 failed, 0 skipped/);
  expect(result.status).toBe(0);
});

test('--lifecycle: only for a process, only edit and unsend (exit 2 with the usage)', async () => {
  const onModule = await run(process.execPath, [cli, 'conformance.js', '--lifecycle', 'edit'], app);
  expect(onModule.stderr).toMatch(/--lifecycle is for a process.*\nusage:/);
  expect(onModule.status).toBe(2);
  const unknownKind = await run(process.execPath, [cli, '--push', 'http://127.0.0.1:9/', '--command', 'true', '--lifecycle', 'edit,pin'], app);
  expect(unknownKind.stderr).toMatch(/--lifecycle takes edit and\/or unsend, not pin\nusage:/);
  expect(unknownKind.status).toBe(2);
});

test('the example connector declares starts by handle: start-conversation runs by name and passes', async () => {
  const result = await run(process.execPath, [cli, 'conformance.js', '--scenario', 'start-conversation'], app);
  expect(result.stderr).toBe('');
  expect(result.stdout).toMatch(/^PASS start-conversation \(\d+ ms\)\nOK: 1 scenario, 1 passed, 0 failed, 0 skipped/);
  expect(result.status).toBe(0);
});

test('--starts: only for a process, only the contract\'s address kinds (exit 2 with the usage)', async () => {
  const onModule = await run(process.execPath, [cli, 'conformance.js', '--starts', 'handle'], app);
  expect(onModule.stderr).toMatch(/--starts is for a process.*\nusage:/);
  expect(onModule.status).toBe(2);
  const unknownKind = await run(process.execPath, [cli, '--push', 'http://127.0.0.1:9/', '--command', 'true', '--starts', 'handle,fax'], app);
  expect(unknownKind.stderr).toMatch(/--starts takes phone, email, handle \(one or more, separated by commas\), not fax\nusage:/);
  expect(unknownKind.status).toBe(2);
});

test('usage errors exit 2 with the usage', async () => {
  const result = await run(process.execPath, [cli, 'conformance.js', '--scenario', 'no-such-scenario'], app);
  expect(result.stderr).toMatch(/unknown scenario no-such-scenario\nusage:/);
  expect(result.status).toBe(2);
});

test('process mode: the checker starts the push connector per scenario with the SUPPORT_DESK_* variables and pushes to it', async () => {
  const port = await freePort();
  const result = await run(process.execPath, [cli, '--push', `http://127.0.0.1:${port}/`, '--command', `PORT=${port} node push-connector.mjs`, '--scenario', 'plain-reply', '--scenario', 'claim-503-retry-after', '--scenario', 'message-retry-after-503'], app);
  expect(result.stdout).toMatch(/^PASS plain-reply \(\d+ ms\)\nPASS claim-503-retry-after \(\d+ ms\)\nSKIP message-retry-after-503: .*\nOK: 3 scenarios, 2 passed, 0 failed, 1 skipped/);
  expect(result.status).toBe(0);
});
