/**
 * How npm test splits the stack's suites (scripts/lib/test-suites.mjs `splitSuites`), on the
 * repository's own suites.
 */
import { integrationSuites, parseTestArgs, splitSuites } from '../../../scripts/lib/test-suites.mjs';

describe('splitSuites', () => {
  const all = integrationSuites();
  const { standalone, ownProject, serial, parallel } = splitSuites(all);

  test('every suite runs exactly once, in one of the four groups', () => {
    expect([...standalone, ...ownProject, ...serial, ...parallel].sort()).toEqual([...all].sort());
    expect(new Set([...standalone, ...ownProject, ...serial, ...parallel]).size).toBe(all.length);
  });

  test('the rules suites, each in a Firestore project of its own, run beside the @serial suites', () => {
    expect(ownProject).toEqual([
      'test/integration/console/lifecycle-rules.test.ts',
      'test/integration/console/rules.test.ts',
      'test/integration/console/starts-rules.test.ts',
      'test/integration/console/window-rules.test.ts',
      'test/integration/privacy/rules.test.ts',
    ]);
  });

  test('the default request budget runs standalone; the sweeper suites one at a time; the rest in parallel', () => {
    expect(standalone).toEqual(['test/framework/deadline-default.test.ts']);
    expect(serial).toEqual(expect.arrayContaining(['test/integration/reliability/soak.test.ts', 'test/integration/deliveries/expiry.test.ts']));
    expect(parallel).toEqual(expect.arrayContaining(['test/framework/deadline.test.ts', 'test/integration/messages/rate-limit.test.ts']));
  });

  test('a selection keeps its groups', () => {
    const { selects } = parseTestArgs(['deadline']);
    expect(splitSuites(all.filter(selects))).toEqual({ standalone: ['test/framework/deadline-default.test.ts'], ownProject: [], serial: [], parallel: ['test/framework/deadline.test.ts'] });
  });
});
