/** `npm run pull -- --help` (scripts/pull.mjs) prints its usage; a wrong option says what is wrong, without a stack trace. */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const PULL = join(__dirname, '..', '..', '..', 'scripts', 'pull.mjs');
const run = (...args: string[]) => spawnSync(process.execPath, [PULL, ...args], { encoding: 'utf8', timeout: 20_000 });

test('--help prints the usage with the emulator host and the default subscription, and exits 0 without touching Pub/Sub', () => {
  const result = run('--help');
  expect({ status: result.status, stderr: result.stderr }).toEqual({ status: 0, stderr: '' });
  expect(result.stdout).toMatch(/^Usage: npm run pull -- \[--subscription NAME\] \[--wait\]/);
  expect(result.stdout).toContain('PUBSUB_EMULATOR_HOST, default 127.0.0.1:8085');
  expect(result.stdout).toContain('default connector-notifications-pull');
});

test('an unknown option exits 2 with the reason and the usage', () => {
  const result = run('--bogus');
  expect(result.status).toBe(2);
  expect(result.stderr).toMatch(/^pull: Unknown option '--bogus'/);
  expect(result.stderr).toContain('Usage: npm run pull --');
  expect(result.stderr).not.toMatch(/\n\s+at /);
});
