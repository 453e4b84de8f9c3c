/**
 * How npm test splits the stack's suites (scripts/lib/test-suites.mjs `splitSuites`), on the
 * repository's own suites, and the environment digest the production runtime's check compares
 * (`envDigest`, scripts/test-stack.mjs).
 */
import { createHash } from 'node:crypto';
import { envDigest, integrationSuites, parseTestArgs, splitSuites } from '../../../scripts/lib/test-suites.mjs';

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

describe('splitSuites', () => {
  const all = integrationSuites();
  const { standalone, serial, parallel } = splitSuites(all);

  test('every suite runs exactly once, in one of the three groups', () => {
    expect([...standalone, ...serial, ...parallel].sort()).toEqual([...all].sort());
    expect(new Set([...standalone, ...serial, ...parallel]).size).toBe(all.length);
  });

  test('the default request budget runs standalone; the sweeper suites one at a time; the rest in parallel', () => {
    expect(standalone).toEqual(['test/framework/deadline-default.test.ts']);
    expect(serial).toEqual(expect.arrayContaining(['test/integration/reliability/soak.test.ts', 'test/integration/deliveries/expiry.test.ts']));
    expect(parallel).toEqual(expect.arrayContaining(['test/framework/deadline.test.ts', 'test/integration/messages/rate-limit.test.ts']));
  });

  test('a selection keeps its groups', () => {
    const { selects } = parseTestArgs(['deadline']);
    expect(splitSuites(all.filter(selects))).toEqual({ standalone: ['test/framework/deadline-default.test.ts'], serial: [], parallel: ['test/framework/deadline.test.ts'] });
  });
});

describe('envDigest', () => {
  test('a SHA-256 per variable, no value, unset variables left out', () => {
    const digest = envDigest({ KEY_CACHE_TTL_MS: '2000', SECRETISH: 'hunter2', UNSET: undefined });
    expect(digest).toEqual({ KEY_CACHE_TTL_MS: sha256('2000'), SECRETISH: sha256('hunter2') });
    expect(JSON.stringify(digest)).not.toContain('hunter2');
  });

  test('equal environments have equal digests; a changed value changes its entry only', () => {
    const a = envDigest({ A: '1', B: '2' });
    const b = envDigest({ A: '1', B: '3' });
    expect(a.A).toBe(b.A);
    expect(a.B).not.toBe(b.B);
  });
});
