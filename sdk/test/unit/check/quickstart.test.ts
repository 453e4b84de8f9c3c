/**
 * The quickstart's connector (examples/quickstart, shown verbatim by docs/quickstart.md): the page
 * shows exactly these files, the connector's own test (connector.test.mjs, written for
 * `node --test`) passes, and the connector passes every conformance scenario, on the test service.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { runConformance, SCENARIO_NAMES, formatResult } from '../../../src/check/runner.js';
import type { ConformanceModule } from '../../../src/check/connector.js';

// The quickstart imports the SDK by its package name: here, its sources (no build needed).
jest.mock('@support-desk/connector-sdk', () => jest.requireActual('../../../src/index'), { virtual: true });
jest.mock('@support-desk/connector-sdk/testing', () => jest.requireActual('../../../src/testing/index'), { virtual: true });
// connector.test.mjs is written for `node --test`: its `test(name, fn)` becomes a Jest test here.
jest.mock('node:test', () => ({ test: (name: string, fn: () => Promise<void>) => test(`connector.test.mjs: ${name}`, fn) }));

jest.setTimeout(60_000);

const ROOT = resolve(__dirname, '..', '..', '..', '..');
const QUICKSTART = join(ROOT, 'examples', 'quickstart');
const FILES = ['connector.mjs', 'main.mjs', 'connector.test.mjs'];

test('docs/quickstart.md shows each file of examples/quickstart verbatim, under its my-connector/ name', () => {
  const page = readFileSync(join(ROOT, 'docs', 'quickstart.md'), 'utf8');
  for (const file of FILES) {
    const source = readFileSync(join(QUICKSTART, file), 'utf8');
    expect(page).toContain(`\`my-connector/${file}\``);
    expect(page).toContain(`\`\`\`js\n${source}\`\`\``);
  }
  expect(page.split('\n').length).toBeLessThanOrEqual(180);
});

// Registers the connector's own node:test test as a Jest test (through the mock above). A require,
// not an import: it must run while Jest collects this file's tests, after the mocks are in place.
// eslint-disable-next-line @typescript-eslint/no-require-imports -- see above
require(join(QUICKSTART, 'connector.test.mjs'));

test('the quickstart connector passes every conformance scenario', async () => {
  const module = (await import(join(QUICKSTART, 'connector.mjs'))) as ConformanceModule;
  const log = jest.spyOn(console, 'log').mockImplementation(() => undefined);
  try {
    const { results } = await runConformance({ connector: { kind: 'module', module } });
    expect(results.map(formatResult).join('\n')).not.toMatch(/^(FAIL|SKIP)/m);
    expect(results.map((r) => [r.name, r.status])).toEqual(SCENARIO_NAMES.map((n) => [n, 'pass']));
  } finally {
    log.mockRestore();
  }
});
