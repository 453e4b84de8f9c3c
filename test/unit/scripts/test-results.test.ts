/**
 * The test runner's guard against a Jest run that never exits (scripts/lib/test-results.mjs
 * `stopJestIfItHangs`): once the run wrote its results, it has a grace period to exit; past it,
 * it is stopped and marked, so that `npm test` fails naming it instead of running into CI's limit.
 * Stand-ins for Jest: Node processes that write the results file, then exit or hang. And the
 * final summary (`collectFailures`): failed tests from the runs' results, hung runs, and failures
 * no Jest run reports (`recordFailure`).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { collectFailures, hungMarker, recordFailure, stopJestIfItHangs } from '../../../scripts/lib/test-results.mjs';

let dir: string;
let reported: jest.SpiedFunction<typeof console.error>;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'test-results-'));
  reported = jest.spyOn(console, 'error').mockImplementation(() => undefined);
});
afterEach(() => {
  reported.mockRestore();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs a stand-in that writes `outputFile` after `writeAfterMs`, then exits or hangs; resolves with how it ended. */
function standIn(outputFile: string, { writeAfterMs, hang }: { writeAfterMs: number; hang: boolean }): Promise<{ code: number | null; signal: NodeJS.Signals | null; ms: number }> {
  const script = `setTimeout(() => { require('node:fs').writeFileSync(${JSON.stringify(outputFile)}, '{}'); ${hang ? 'setInterval(() => {}, 1000);' : ''} }, ${writeAfterMs});`;
  const started = Date.now();
  const child = spawn(process.execPath, ['-e', script], { stdio: 'ignore' });
  stopJestIfItHangs(child, ['--json', `--outputFile=${outputFile}`], { graceMs: 1_500 });
  return new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal, ms: Date.now() - started })));
}

test('a run still alive past the grace period after writing its results is stopped and marked', async () => {
  const outputFile = join(dir, 'integration.json');
  const ended = await standIn(outputFile, { writeAfterMs: 200, hang: true });
  expect(ended.signal).toBe('SIGKILL');
  // Not before its results were written and the grace period was over (polled once a second).
  expect(ended.ms).toBeGreaterThanOrEqual(1_700);
  expect(existsSync(hungMarker(outputFile))).toBe(true);
  expect(reported).toHaveBeenCalledWith(expect.stringContaining('[integration] Jest did not exit 1.5 s after its tests ended'));
});

test('a run that exits by itself is left alone, however long its tests took', async () => {
  const outputFile = join(dir, 'unit.json');
  // Longer than the grace period before the results are written: only the time after them counts.
  const ended = await standIn(outputFile, { writeAfterMs: 2_500, hang: false });
  expect(ended).toMatchObject({ code: 0, signal: null });
  expect(existsSync(hungMarker(outputFile))).toBe(false);
  expect(reported).not.toHaveBeenCalled();
});

test('results left by an earlier run do not start the clock', async () => {
  const outputFile = join(dir, 'framework.json');
  writeFileSync(outputFile, '{}');
  const old = new Date(Date.now() - 60_000);
  utimesSync(outputFile, old, old);
  // It hangs only after writing its own results at 2.5 s: stopped then, not at the grace period after start.
  const ended = await standIn(outputFile, { writeAfterMs: 2_500, hang: true });
  expect(ended.signal).toBe('SIGKILL');
  expect(ended.ms).toBeGreaterThanOrEqual(4_000);
});

test('the summary names failed tests, a hung run, and a failure recorded outside Jest; nothing when all passed', () => {
  expect(collectFailures(dir)).toEqual([]);
  const passed = { testResults: [{ name: '/repo/test/a.test.ts', status: 'passed', assertionResults: [{ status: 'passed', fullName: 'a works', failureMessages: [] }] }] };
  writeFileSync(join(dir, 'unit.json'), JSON.stringify(passed));
  expect(collectFailures(dir)).toEqual([]);

  const failed = { testResults: [{ name: '/repo/test/b.test.ts', status: 'failed', assertionResults: [{ status: 'failed', fullName: 'b answers 201', failureMessages: ['Error: expected 201, got 503\n    at Object.<anonymous> (/repo/node_modules/x.js:1:1)'] }] }] };
  writeFileSync(join(dir, 'integration.json'), JSON.stringify(failed));
  writeFileSync(hungMarker(join(dir, 'integration.json')), 'now\n');
  recordFailure('framework', 'could not run its suites: functions-framework --target=failDelivery did not answer within 90 s', dir);

  const blocks = collectFailures(dir);
  expect(blocks).toHaveLength(3);
  expect(blocks[0]).toBe('  ✕ [framework] could not run its suites: functions-framework --target=failDelivery did not answer within 90 s');
  expect(blocks[1]).toContain('✕ [integration] /repo/test/b.test.ts › b answers 201');
  expect(blocks[1]).toContain('expected 201, got 503');
  // Library stack frames say nothing about which check failed.
  expect(blocks[1]).not.toContain('node_modules');
  expect(blocks[2]).toContain('[integration] Jest did not exit');
});
