/**
 * Every log-based metric's filter, and every alert's (its metric's filter plus the alert's label
 * conditions on the extracted labels), run against the structured log lines the integration tests
 * captured (.local/test-logs/emulators.log, written by scripts/test.mjs): each must match at
 * least one line, so a renamed log field fails here, not as a silent alert in production
 * (docs/operations.md#monitoring). Run by scripts/test.mjs after the integration phase (the
 * `monitoring` Jest project); it needs a full integration run's log.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { alerts, metrics, MONITORING_DIR } from './definitions';
import { extract, logEntryOf, matches, metricCondition, type LogEntry } from './log-filter';

const LOG = process.env.EMULATOR_LOG_FILE ?? join(MONITORING_DIR, '..', '.local', 'test-logs', 'emulators.log');

/**
 * The service's structured lines in the output: the functions emulator's (`>  {...}`) and those of
 * service code the tests ran in-process (the sweeper, the health roll-up), which Jest prints as the
 * same one-line JSON under `console.info`.
 */
function capturedEntries(): LogEntry[] {
  if (!existsSync(LOG)) throw new Error(`${LOG} does not exist: run the integration tests first (scripts/test.mjs)`);
  return readFileSync(LOG, 'utf8')
    .split('\n')
    .flatMap((line) => {
      const start = line.indexOf('{');
      const trimmed = line.trimStart();
      if (start < 0 || !(trimmed.startsWith('>') || trimmed.startsWith('{'))) return [];
      try {
        const parsed = JSON.parse(line.slice(start)) as unknown;
        return typeof parsed === 'object' && parsed !== null && 'message' in parsed && 'severity' in parsed ? [logEntryOf(parsed as Record<string, unknown>)] : [];
      } catch {
        return [];
      }
    });
}

const entries = capturedEntries();
const byName = new Map(metrics().map((m) => [m.metric.name, m.metric]));

/**
 * What each alert's condition caught in this run: the number of matching lines and the values of
 * its metric's labels among them. Written next to the log (monitoring-summary.json) and printed,
 * so a run shows what every alert would have fired on, not only that it matched something.
 */
const caught: Record<string, { lines: number; labels: Record<string, Record<string, number>> }> = {};
afterAll(() => {
  writeFileSync(join(dirname(LOG), 'monitoring-summary.json'), JSON.stringify(caught, null, 2) + '\n');
  // Ids (integrationId) as a count of distinct values: the categories (outcome, status, code) are what a reader wants.
  const readable = (labels: Record<string, Record<string, number>>) =>
    Object.fromEntries(Object.entries(labels).map(([label, values]) => [label, Object.keys(values).length > 8 ? `${Object.keys(values).length} distinct` : values]));
  console.info(Object.entries(caught).map(([file, c]) => `${file}: ${c.lines} line(s) ${JSON.stringify(readable(c.labels))}`).join('\n'));
});

test('the integration run captured structured lines', () => {
  expect(entries.length).toBeGreaterThan(100);
});

test.each(metrics().map((m) => [m.metric.name, m.metric] as const))('metric %s matches captured lines, and its extractors find their fields there', (_name, metric) => {
  const matched = entries.filter((e) => matches(metric.filter, e));
  expect(matched.length).toBeGreaterThan(0);
  for (const extractor of [...Object.values(metric.labelExtractors ?? {}), ...(metric.valueExtractor ? [metric.valueExtractor] : [])]) {
    expect(matched.some((e) => extract(extractor, e) !== undefined)).toBe(true);
  }
  if (metric.valueExtractor !== undefined) {
    const valueExtractor = metric.valueExtractor;
    expect(matched.every((e) => Number.isFinite(Number(extract(valueExtractor, e))))).toBe(true);
  }
});

test.each(alerts().map((a) => [a.file, a.alert] as const))('alert %s: its condition holds for captured lines', (file, alert) => {
  for (const condition of alert.conditions) {
    const { metric: name, labels } = metricCondition(condition.conditionThreshold.filter);
    const metric = byName.get(name);
    if (metric === undefined) throw new Error(`unknown metric ${name}`);
    const labelsOf = (e: LogEntry) => Object.fromEntries(Object.entries(metric.labelExtractors ?? {}).map(([k, x]) => [k, extract(x, e)]));
    const hits = entries.filter((e) => matches(metric.filter, e) && labels(labelsOf(e)));
    expect(hits.length).toBeGreaterThan(0);
    const summary = (caught[file] ??= { lines: 0, labels: {} });
    summary.lines += hits.length;
    for (const hit of hits) {
      for (const [label, value] of Object.entries(labelsOf(hit))) {
        const values = (summary.labels[label] ??= {});
        values[String(value)] = (values[String(value)] ?? 0) + 1;
      }
    }
  }
});
