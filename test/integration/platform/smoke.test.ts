/**
 * `npm run smoke` (scripts/smoke.mjs) against the local stack, so the deploy workflow's
 * conformance pass never rots: through the router to the production runtime, where every suite
 * calls the service, and through the Hosting emulator to the Functions emulator's HTTP functions
 * (the deployed shape: Hosting's rewrites in front; HOSTING_URL, scripts/test-stack.mjs). The
 * fallback host is the same stack under another name (`localhost` instead of `127.0.0.1`).
 * @serial its maximum-size upload (21 MB through Hosting or the router) was cut off once (transport error, no answer) beside the other suites' load on two cores; alone it passes
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { apiBaseUrl, closeStack, createTestIntegration, hostingUrl } from '../helpers/stack';

jest.setTimeout(180_000);
afterAll(closeStack);

const ROOT = join(__dirname, '..', '..', '..');

function smoke(args: string[], key: string) {
  const result = spawnSync(process.execPath, [join(ROOT, 'scripts', 'smoke.mjs'), ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, SMOKE_INTEGRATION_KEY: key },
    timeout: 170_000,
  });
  return { code: result.status, output: `${result.stdout}${result.stderr}` };
}

test.each([
  ['the production runtime', apiBaseUrl],
  ['Hosting and the Functions emulator', hostingUrl],
])('every check passes on the base and the fallback host, and the key is never printed (%s)', async (_, baseUrl) => {
  const { key } = await createTestIntegration();
  const base = baseUrl();
  const fallback = base.replace('127.0.0.1', 'localhost');
  const { code, output } = smoke(['--base', base, '--fallback', fallback], key);
  expect({ code, output }).toEqual({ code: 0, output: expect.stringContaining('smoke: 8 passed, 0 failed') });
  for (const check of ['message', 'duplicate', 'malformed']) {
    for (const host of [base, fallback]) expect(output).toMatch(new RegExp(`^${check} +${host.replace(/[.]/g, '\\.')} .* ✓$`, 'm'));
  }
  expect(output).toMatch(new RegExp(`^upload 2\\d\\.\\d MiB +${base.replace(/[.]/g, '\\.')} +201 new +201 .* ✓$`, 'm'));
  expect(output).toMatch(/^unknown delivery .*404 delivery_not_found .* ✓$/m);
  expect(output).not.toContain(key);
  expect(output).toContain(key.slice(0, 13));
});

test('a wrong key fails every check (401) with a non-zero exit', () => {
  const { code, output } = smoke(['--base', apiBaseUrl()], `sdk_test_${'A'.repeat(43)}`);
  expect(code).toBe(1);
  expect(output).toMatch(/^message .* 401 invalid_key .* ✗ expected 201$/m);
  expect(output).toContain('smoke: 1 passed, 4 failed');
});

test('bad arguments: exit 2 with the usage', () => {
  const { code, output } = smoke(['--bogus', 'x'], 'k');
  expect(code).toBe(2);
  expect(output).toContain('usage: npm run smoke');
});
