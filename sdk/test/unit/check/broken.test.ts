/**
 * The conformance runner against deliberately broken connectors (fixtures/broken.ts): each fails
 * exactly the scenarios its one breakage touches, with the violation (or the end state) named;
 * the same connector without the breakage passes everything. The runs go side by side (each on
 * services of its own), so the whole file takes about one run's time.
 */
import { LIFECYCLE_SCENARIO_NAMES, runConformance, SCENARIO_NAMES, formatResult, type ConformanceReport } from '../../../src/check/runner.js';
import { brokenConnector, type Breakage } from './fixtures/broken.js';

jest.setTimeout(120_000);

/** Breakage -> the scenarios it must fail, each with a text its line must carry (a rule name, or the end state). */
const EXPECTED: Record<Breakage, Record<string, RegExp>> = {
  correct: {},
  'complete-without-start': {
    'plain-reply': /complete_without_sending_start/,
    'claim-503-retry-after': /complete_without_sending_start/,
    'skip-waiting-for-previous': /complete_without_sending_start/,
    'start-answers-sent': /complete_without_sending_start/,
    'lease-lost-on-complete': /complete_without_sending_start/,
    'long-provider-call': /complete_without_sending_start/,
    'duplicate-notification': /complete_without_sending_start/,
    'edit-reply': /complete_without_sending_start/,
    'unsend-reply': /complete_without_sending_start/,
  },
  'ignores-retry-after': {
    'claim-503-retry-after': /retry_before_retry_after/,
    // (skip-waiting-for-previous: its 503 is lease_busy, which processDelivery does not retry.)
    'start-answers-sent': /retry_before_retry_after/,
    'message-retry-after-503': /retry_before_retry_after/,
  },
  'new-request-id-on-retry': { 'claim-503-retry-after': /claim_retry_new_request_id/ },
  'sends-after-sent': { 'start-answers-sent': /provider_work_after_sent/ },
  'fails-after-lease-lost': { 'lease-lost-on-complete': /call_after_lease_lost/ },
  'completes-corrupted-file': { 'corrupted-attachment': /complete_without_fetching_files[^]*was completed although its file does not match/ },
  'never-acknowledges-erasures': { erasure: /erasure_not_acknowledged/ },
  'no-extension': { 'long-provider-call': /the lease was never extended/ },
  'edit-as-new-message': { 'edit-reply': /edit_sent_as_new_message[^]*the channel shows "Your order #1234 ships today/ },
  'unsend-without-provider': { 'unsend-reply': /the channel still shows it: the unsend was completed without the provider deleting the message/ },
};

let reports: Map<Breakage, ConformanceReport>;

beforeAll(async () => {
  const kinds = Object.keys(EXPECTED) as Breakage[];
  const done = await Promise.all(kinds.map(async (kind) => [kind, await runConformance({ connector: { kind: 'module', module: brokenConnector(kind) }, timeoutMs: 8_000 })] as const));
  reports = new Map(done);
});

test.each(Object.keys(EXPECTED) as Breakage[])('%s fails exactly the scenarios it breaks, naming what it broke', (kind) => {
  const report = reports.get(kind)!;
  const lines = report.results.map(formatResult).join('\n');
  const expected = EXPECTED[kind];
  const failed = report.results.filter((r) => r.status !== 'pass').map((r) => r.name);
  // The fixture declares edit and unsend: it runs the scenarios after the send too.
  expect({ kind, failed, lines }).toEqual({ kind, failed: [...SCENARIO_NAMES, ...LIFECYCLE_SCENARIO_NAMES].filter((n) => n in expected), lines });
  expect(report.results.map((r) => r.name)).toEqual([...SCENARIO_NAMES, ...LIFECYCLE_SCENARIO_NAMES]);
  for (const result of report.results.filter((r) => r.status === 'fail')) {
    expect(formatResult(result)).toMatch(new RegExp(`^FAIL ${result.name}: `));
    expect(formatResult(result)).toMatch(expected[result.name]!);
  }
  expect(report.failed).toBe(Object.keys(expected).length);
});
