/**
 * Monitoring as code (monitoring/, docs/operations.md#monitoring): the files have the shape the
 * Cloud Logging and Cloud Monitoring APIs take, every alert reads an existing metric and links to
 * a runbook with its three sections, the dashboard charts every metric; and the filter
 * evaluator (test/monitoring/log-filter.ts) that the captured-log test relies on behaves like
 * Cloud Logging on its subset.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { alerts, dashboard, metrics, MONITORING_DIR, runbookOf } from '../../monitoring/definitions';
import { extract, logEntryOf, matches, metricCondition, parseFilter } from '../../monitoring/log-filter';

const ROOT = join(MONITORING_DIR, '..');

describe('log-based metrics', () => {
  test.each(metrics().map((m) => [m.file, m.metric] as const))('%s: name, filter in the supported subset, descriptor and extractors', (file, metric) => {
    expect(metric.name).toBe(file.replace(/\.json$/, ''));
    expect(metric.name).toMatch(/^[a-z][a-z0-9_]*$/);
    expect(metric.description.length).toBeGreaterThan(10);
    expect(() => parseFilter(metric.filter)).not.toThrow();
    expect(['DELTA']).toContain(metric.metricDescriptor.metricKind);
    expect(['INT64', 'DISTRIBUTION']).toContain(metric.metricDescriptor.valueType);
    const labels = (metric.metricDescriptor.labels ?? []).map((l) => l.key).sort();
    expect(Object.keys(metric.labelExtractors ?? {}).sort()).toEqual(labels);
    for (const extractor of Object.values(metric.labelExtractors ?? {})) expect(extractor).toMatch(/^EXTRACT\(jsonPayload\.[A-Za-z0-9_]+\)$/);
    if (metric.metricDescriptor.valueType === 'DISTRIBUTION') {
      expect(metric.valueExtractor).toMatch(/^EXTRACT\(jsonPayload\.[A-Za-z0-9_]+\)$/);
      expect(metric.bucketOptions).toBeDefined();
    } else expect(metric.valueExtractor).toBeUndefined();
  });
});

describe('alert policies', () => {
  const metricNames = new Set(metrics().map((m) => m.metric.name));
  test.each(alerts().map((a) => [a.file, a.alert] as const))('%s: a known metric, a runbook with its three sections, a channel placeholder', (_file, alert) => {
    expect(alert.displayName.length).toBeGreaterThan(5);
    expect(alert.conditions.length).toBeGreaterThan(0);
    for (const condition of alert.conditions) {
      const { metric } = metricCondition(condition.conditionThreshold.filter);
      expect(metricNames.has(metric)).toBe(true);
      expect(condition.conditionThreshold.comparison).toMatch(/^COMPARISON_(GT|LT)$/);
      expect(condition.conditionThreshold.duration).toMatch(/^\d+s$/);
    }
    expect(alert.notificationChannels).toEqual(['${NOTIFICATION_CHANNEL}']);
    const runbook = runbookOf(alert);
    expect(runbook).toBeDefined();
    const path = join(ROOT, 'docs', 'runbooks', runbook as string);
    expect(existsSync(path)).toBe(true);
    const text = readFileSync(path, 'utf8');
    for (const section of ['## What it means', '## How to confirm', '## What to do']) expect(text).toContain(section);
  });

  test('every metric is charted on the dashboard, and apply.sh applies all three kinds', () => {
    const charted = dashboard().mosaicLayout.tiles.flatMap((t) => t.widget.xyChart.dataSets.map((d) => metricCondition(d.timeSeriesQuery.timeSeriesFilter.filter).metric));
    expect(new Set(charted)).toEqual(new Set(metrics().map((m) => m.metric.name)));
    const script = readFileSync(join(MONITORING_DIR, 'apply.sh'), 'utf8');
    for (const command of ['gcloud logging metrics create', 'gcloud alpha monitoring policies create', 'gcloud monitoring dashboards create']) expect(script).toContain(command);
  });
});

describe('the filter evaluator (the subset of the Cloud Logging query language)', () => {
  const entry = logEntryOf({
    message: 'request',
    endpoint: 'POST /v1/deliveries/claim',
    status: 503,
    errorCode: 'retry_delayed',
    claimLatencyMs: 1200,
    severity: 'WARNING',
    'logging.googleapis.com/trace': 'projects/p/traces/abc',
  });

  test('the LogEntry: severity and trace leave the payload', () => {
    expect(entry.severity).toBe('WARNING');
    expect(entry.trace).toBe('projects/p/traces/abc');
    expect(entry.jsonPayload).not.toHaveProperty('severity');
  });

  test.each([
    ['jsonPayload.message="request"', true],
    ['jsonPayload.message="other"', false],
    ['jsonPayload.status>=500', true],
    ['jsonPayload.status>503', false],
    ['jsonPayload.status=503 AND jsonPayload.errorCode="retry_delayed"', true],
    ['jsonPayload.status=503 jsonPayload.errorCode="lease_busy"', false],
    ['jsonPayload.errorCode=("lease_busy" OR "retry_delayed")', true],
    ['jsonPayload.errorCode!=("lease_busy" OR "retry_delayed")', false],
    ['jsonPayload.missing="x"', false],
    ['jsonPayload.missing!="x"', false],
    ['NOT jsonPayload.missing="x"', true],
    ['jsonPayload.endpoint:"deliveries"', true],
    ['severity>=WARNING', true],
    ['severity>=ERROR', false],
    ['trace:"traces/abc"', true],
    ['(jsonPayload.status=200 OR jsonPayload.status=503) AND NOT jsonPayload.message="x"', true],
    ['jsonPayload.status=200 OR jsonPayload.message="request" AND jsonPayload.status=404', false],
    ['jsonPayload.claimLatencyMs>=0', true],
  ])('%s -> %s', (filter, expected) => {
    expect(matches(filter, entry)).toBe(expected);
  });

  test('anything outside the subset is refused, not silently false', () => {
    for (const filter of ['resource.type="cloud_function"', 'jsonPayload.message=~"re.*"', 'jsonPayload.message="unterminated', 'jsonPayload.message="a")']) {
      expect(() => parseFilter(filter)).toThrow();
    }
  });

  test('extractors and metric conditions', () => {
    expect(extract('EXTRACT(jsonPayload.errorCode)', entry)).toBe('retry_delayed');
    expect(extract('EXTRACT(jsonPayload.status)', entry)).toBe('503');
    expect(extract('EXTRACT(jsonPayload.nothing)', entry)).toBeUndefined();
    const condition = metricCondition('metric.type="logging.googleapis.com/user/http_5xx" AND metric.label.errorCode!="retry_delayed"');
    expect(condition.metric).toBe('http_5xx');
    expect(condition.labels({ errorCode: 'retry_delayed' })).toBe(false);
    expect(condition.labels({ errorCode: 'lease_busy' })).toBe(true);
    expect(metricCondition('metric.type="logging.googleapis.com/user/x" AND metric.label.o=("a" OR "b")').labels({ o: 'b' })).toBe(true);
  });
});
