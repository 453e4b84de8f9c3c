/**
 * The SDK as a stranger gets it: `npm pack` of a copy of sdk/ (which builds dist/ through the
 * package's own `prepare` script), the tarball's content, then an install of that tarball into an empty
 * directory (offline: the package has no dependencies) and a tiny connector run from there,
 * importing the package by name, against a real local HTTP server playing the service. Its types
 * are checked from the installed package too. One tarball per version of the sources
 * (`packedOnce`): `npm test`'s Node 24 pass installs the one its Node 22 pass packed.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { entryFiles } from '../../../scripts/release-check.mjs';
import { KEY, reply, errorReply, startServer, type TestServer } from './helpers/server.js';

const ROOT = resolve(__dirname, '..', '..', '..');
const SDK = join(ROOT, 'sdk');
const pkg = JSON.parse(readFileSync(join(SDK, 'package.json'), 'utf8')) as { name: string; version: string };

jest.setTimeout(240_000);

/** Runs a command to its end without blocking the event loop (the test's HTTP server must answer meanwhile). */
function run(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn(cmd, args, { cwd, env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    child.on('error', fail);
    child.on('close', (status) => done({ status, stdout, stderr }));
  });
}

let work: string;
let tarball: string;
let files: string[];

/** Not copied into the package's source, nor read for its digest: build output and installed packages, at any depth. */
const NOT_SOURCE = /[\\/](dist|node_modules)$/;

/**
 * What the tarball is built from: every file of the copy `npm pack` runs in (sdk/ but for
 * NOT_SOURCE, the base tsconfig) and the TypeScript that builds it.
 */
function sourceDigest(): string {
  const hash = createHash('sha256');
  const visit = (dir: string, relative: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const path = join(dir, entry.name);
      if (NOT_SOURCE.test(path)) continue;
      if (entry.isDirectory()) visit(path, `${relative}${entry.name}/`);
      else hash.update(`${relative}${entry.name}\0`).update(readFileSync(path)).update('\0');
    }
  };
  visit(SDK, 'sdk/');
  hash.update(readFileSync(join(ROOT, 'tsconfig.base.json'))).update(readFileSync(join(ROOT, 'node_modules', 'typescript', 'package.json')));
  return hash.digest('hex');
}

interface PackReport {
  filename: string;
  files: Array<{ path: string }>;
}

/** Packs a copy of sdk/ into `work` (its `prepare` script builds dist/ with tsc); the tarball's path and its file list. */
async function pack(): Promise<{ tarball: string; files: string[] }> {
  // Packed from a copy (sdk/ without dist/, beside the base tsconfig it extends, with the
  // repository's node_modules for tsc): the prepack build cleans dist/ first, and the real
  // sdk/dist is read meanwhile by the suites that run the examples in other Jest workers.
  const copy = join(work, 'source');
  cpSync(SDK, join(copy, 'sdk'), { recursive: true, filter: (from) => !NOT_SOURCE.test(from) });
  cpSync(join(ROOT, 'tsconfig.base.json'), join(copy, 'tsconfig.base.json'));
  symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'), 'dir');
  const packed = await run('npm', ['pack', '--json', '--pack-destination', work], join(copy, 'sdk'));
  if (packed.status !== 0) throw new Error(`npm pack failed:\n${packed.stderr}`);
  // npm prints the lifecycle scripts' output before the JSON.
  const report = (JSON.parse(packed.stdout.slice(packed.stdout.indexOf('[\n'))) as PackReport[])[0]!;
  return { tarball: join(work, report.filename), files: report.files.map((f) => f.path) };
}

/**
 * The tarball of these sources, packed once: `npm test` runs this suite twice (on Node 22, then
 * on Node 24 for the SDK's second pass), and the pack (the package's tsc build, about 8 CPU-s)
 * does not depend on the Node that runs the installed package. The first run keeps its tarball
 * and file list under .local/sdk-packed/, named by `sourceDigest`; a run of the same sources
 * installs that tarball, and a changed file makes another digest, so nothing stale is installed.
 */
async function packedOnce(): Promise<{ tarball: string; files: string[] }> {
  const kept = join(ROOT, '.local', 'sdk-packed', sourceDigest());
  const keptReport = join(kept, 'files.json');
  if (existsSync(keptReport)) {
    const report = JSON.parse(readFileSync(keptReport, 'utf8')) as PackReport;
    return { tarball: join(kept, report.filename), files: report.files.map((f) => f.path) };
  }
  const fresh = await pack();
  // Written whole into a directory of its own, then renamed into place (a run beside this one may have done the same).
  const partial = `${kept}.${process.pid}.tmp`;
  mkdirSync(partial, { recursive: true });
  cpSync(fresh.tarball, join(partial, basename(fresh.tarball)));
  writeFileSync(join(partial, 'files.json'), JSON.stringify({ filename: basename(fresh.tarball), files: fresh.files.map((path) => ({ path })) } satisfies PackReport));
  try {
    renameSync(partial, kept);
  } catch {
    rmSync(partial, { recursive: true, force: true });
  }
  return fresh;
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'sdk-packed-'));
  ({ tarball, files } = await packedOnce());
});
afterAll(() => {
  rmSync(work, { recursive: true, force: true });
});

test('the tarball carries the built package: dist (JS and declarations), README, CHANGELOG, package.json; no tests', () => {
  expect(files).toEqual(expect.arrayContaining(['package.json', 'README.md', 'CHANGELOG.md', 'dist/index.js', 'dist/index.d.ts', 'dist/internal/pull-loop.js', 'dist/internal/pull-loop.d.ts', 'dist/testing/index.js', 'dist/testing/index.d.ts']));
  for (const js of files.filter((f) => f.startsWith('dist/') && f.endsWith('.js'))) expect(files).toContain(js.replace(/\.js$/, '.d.ts'));
  expect(files.filter((f) => /(^|\/)test\/|\.test\.|tsbuildinfo|tsconfig/.test(f))).toEqual([]);
  expect(files.every((f) => ['package.json', 'README.md', 'CHANGELOG.md'].includes(f) || f.startsWith('bin/') || f.startsWith('dist/') || f.startsWith('src/'))).toBe(true);
  // Every file `exports` and `bin` name is in it (the release gate checks the same before publishing).
  expect(files).toEqual(expect.arrayContaining(entryFiles(JSON.parse(readFileSync(join(SDK, 'package.json'), 'utf8')) as { exports?: unknown; bin?: unknown })));
});

describe('installed from the tarball into an empty directory', () => {
  let app: string;
  let service: TestServer;

  beforeAll(async () => {
    app = join(work, 'app');
    rmSync(app, { recursive: true, force: true });
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'packed-sdk-check', private: true, type: 'module' }));
    const installed = await run('npm', ['install', '--offline', '--no-audit', '--no-fund', tarball], app);
    if (installed.status !== 0) throw new Error(`npm install failed:\n${installed.stderr}`);
    service = await startServer();
  });
  afterAll(async () => {
    await service?.close();
  });

  test('the dependency is recorded and nothing else was installed', () => {
    const manifest = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    expect(Object.keys(manifest.dependencies)).toEqual([pkg.name]);
    const lock = JSON.parse(readFileSync(join(app, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version?: string }> };
    expect(Object.keys(lock.packages).sort()).toEqual(['', `node_modules/${pkg.name}`]);
    expect(lock.packages[`node_modules/${pkg.name}`]?.version).toBe(pkg.version);
  });

  test('the conformance command is linked and runs: no arguments is a usage error (exit 2)', async () => {
    const command = await run(join(app, 'node_modules', '.bin', 'support-desk-connector-check'), [], app);
    expect(command.status).toBe(2);
    expect(command.stderr).toContain('usage:');
  });

  test('a connector imports it by name and delivers one notification through runPullLoop', async () => {
    service.setHandler((req, res) => {
      const op = req.path.replace('/v1/deliveries/', '');
      if (req.headers.authorization !== `Bearer ${KEY}`) return errorReply(res, 401, 'invalid_key');
      if (op === 'pending') return reply(res, 200, { deliveries: [], nextCursor: null });
      if (op === 'claim') return reply(res, 200, { status: 'ready', leaseId: 'l-1', leaseExpiresAt: Date.now() + 120_000, message: { text: 'Hello from the desk', recipient: { externalConversationId: 'chat-1', externalCustomerId: 'cust-1' } } });
      if (op === 'start') return reply(res, 200, { status: 'sending' });
      if (op === 'complete') return reply(res, 200, { status: 'sent' });
      return errorReply(res, 404, 'not_found');
    });
    writeFileSync(
      join(app, 'connector.js'),
      `
import { EventEmitter } from 'node:events';
import { ConnectorClient, runPullLoop, SDK_VERSION } from '@support-desk/connector-sdk';

const client = new ConnectorClient({ integrationKey: process.env.KEY, baseUrl: process.env.BASE_URL });
const subscription = Object.assign(new EventEmitter(), { async close() { console.log(JSON.stringify({ closed: true })); } });
const delivered = [];
const loop = runPullLoop(client, subscription, ({ text, recipient }) => {
  delivered.push({ text, to: recipient.externalConversationId });
  return ['channel-msg-1'];
}, { catchUpOnStart: false, onEvent: (e) => { if (e.type === 'handled') console.log(JSON.stringify({ handled: e.result.kind, action: e.action })); } });
const data = Buffer.from(JSON.stringify({ deliveryId: 'd_1', workspaceId: 'ws', integrationId: 'int', conversationId: 'c_1', messageId: 'm_1' }));
await new Promise((acked) => subscription.emit('message', { id: '1', data, attributes: {}, ack: () => acked(), nack: () => process.exit(3) }));
await loop.stop();
console.log(JSON.stringify({ version: SDK_VERSION, delivered }));
`,
    );
    const result = await run(process.execPath, ['connector.js'], app, { ...process.env, KEY, BASE_URL: service.url });
    expect({ status: result.status, stderr: result.stderr }).toEqual({ status: 0, stderr: '' });
    expect(result.stdout.trim().split('\n').map((l) => JSON.parse(l) as unknown)).toEqual([
      { handled: 'sent', action: 'ack' },
      { closed: true },
      { version: pkg.version, delivered: [{ text: 'Hello from the desk', to: 'chat-1' }] },
    ]);
    expect(service.requests.map((r) => r.path)).toEqual(['/v1/deliveries/claim', '/v1/deliveries/start', '/v1/deliveries/complete']);
    expect(service.requests[2]?.json).toEqual({ deliveryId: 'd_1', leaseId: 'l-1', providerMessageIds: ['channel-msg-1'] });
  });

  test('the test service (`@support-desk/connector-sdk/testing`) runs from the installed package: a reply delivered through its subscription', async () => {
    writeFileSync(
      join(app, 'on-test-service.js'),
      `
import { ConnectorClient, runPullLoop } from '@support-desk/connector-sdk';
import { startTestService } from '@support-desk/connector-sdk/testing';

const service = await startTestService();
const { key, integrationId } = await service.createIntegration();
const client = new ConnectorClient({ integrationKey: key, baseUrl: service.baseUrl });
const loop = runPullLoop(client, service.subscription(integrationId), ({ text }) => ['p-' + text], { catchUpOnStart: false });
const { conversationId } = await client.messages.send({ externalConversationId: 'chat-1', sender: { externalId: 'cust-1' }, text: 'Hi' });
const { deliveryId } = service.reply({ conversationId, text: 'Hello' });
await service.waitFor(() => service.deliveries()[0]?.status === 'sent');
await loop.stop();
const [delivery] = service.deliveries();
console.log(JSON.stringify({ same: delivery.deliveryId === deliveryId, status: delivery.status, ids: delivery.providerMessageIds, violations: service.violations() }));
await service.close();
`,
    );
    const result = await run(process.execPath, ['on-test-service.js'], app);
    expect({ status: result.status, stderr: result.stderr }).toEqual({ status: 0, stderr: '' });
    expect(JSON.parse(result.stdout.trim())).toEqual({ same: true, status: 'sent', ids: ['p-Hello'], violations: [] });
  });

  test('its declarations type-check a TypeScript connector (strict, NodeNext) from the installed package', async () => {
    writeFileSync(
      join(app, 'check.ts'),
      `
import { ConnectorClient, runPullLoop, type ProcessDeliveryResult, type PullSubscription } from '@support-desk/connector-sdk';
declare const subscription: PullSubscription;
const client = new ConnectorClient({ integrationKey: 'k', baseUrl: 'http://127.0.0.1:1' });
const loop = runPullLoop(client, subscription, async ({ text }) => [text.slice(0, 10)]);
import { startTestService, type DeliveryView, type TestService } from '@support-desk/connector-sdk/testing';
const describe = (r: ProcessDeliveryResult): string => (r.kind === 'retry_scheduled' ? r.code : r.kind);
void loop.stop();
const service: Promise<TestService> = startTestService({ now: () => 0 });
const statusOf = (d: DeliveryView): DeliveryView['status'] => d.status;
export { describe, service, statusOf };
`,
    );
    const tsc = join(ROOT, 'node_modules', '.bin', 'tsc');
    const args = ['--noEmit', '--strict', '--skipLibCheck', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2023', '--types', 'node', '--typeRoots', join(ROOT, 'node_modules', '@types'), 'check.ts'];
    const checked = await run(tsc, args, app);
    expect({ status: checked.status, out: checked.stdout + checked.stderr }).toEqual({ status: 0, out: '' });
  });
});
