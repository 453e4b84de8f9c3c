/**
 * Both reference connectors pass every conformance scenario, in-process on the test service:
 * examples/connector (plain JS, the SDK's pull loop, a fake provider) and examples/email-connector
 * (TypeScript, real SMTP on loopback to a mailbox sink).
 */
import { join, resolve } from 'node:path';
import { LIFECYCLE_SCENARIO_NAMES, runConformance, SCENARIO_NAMES, START_SCENARIO_NAMES, WINDOW_SCENARIO_NAMES, formatResult, type ScenarioResult } from '../../../src/check/runner.js';
import type { ConformanceModule } from '../../../src/check/connector.js';

// The examples import the SDK by its package name: here, its sources (no build needed).
jest.mock('@support-desk/connector-sdk', () => jest.requireActual('../../../src/index'), { virtual: true });

jest.setTimeout(120_000);

const EXAMPLES = resolve(__dirname, '..', '..', '..', '..', 'examples');

async function check(module: ConformanceModule): Promise<ScenarioResult[]> {
  const report = await runConformance({ connector: { kind: 'module', module } });
  return report.results;
}

test('examples/connector passes every scenario, edits, unsends, the reply window and starts by handle included (it declares them)', async () => {
  const module = (await import(join(EXAMPLES, 'connector', 'conformance.js'))) as ConformanceModule;
  expect(module.lifecycle).toEqual({ edit: true, unsend: true });
  expect(module.starts).toEqual(['handle']);
  const results = await check(module);
  expect(results.map(formatResult).join('\n')).not.toMatch(/^(FAIL|SKIP)/m);
  expect(results.map((r) => [r.name, r.status])).toEqual([...SCENARIO_NAMES, ...LIFECYCLE_SCENARIO_NAMES, ...WINDOW_SCENARIO_NAMES, ...START_SCENARIO_NAMES].map((n) => [n, 'pass']));
});

test('examples/email-connector passes every scenario (real SMTP on loopback); it declares no edit or unsend, so runs none of theirs', async () => {
  const module = (await import(join(EXAMPLES, 'email-connector', 'src', 'conformance.ts'))) as ConformanceModule;
  expect(module.lifecycle).toBeUndefined();
  const results = await check(module);
  expect(results.map(formatResult).join('\n')).not.toMatch(/^(FAIL|SKIP)/m);
  expect(results.map((r) => [r.name, r.status])).toEqual(SCENARIO_NAMES.map((n) => [n, 'pass']));
});
