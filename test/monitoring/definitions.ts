/**
 * The monitoring as code of monitoring/ read for tests: the log-based metrics, the alert
 * policies and the dashboard (docs/operations.md#monitoring).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export const MONITORING_DIR = join(__dirname, '..', '..', 'monitoring');

export interface LogMetric {
  name: string;
  description: string;
  filter: string;
  metricDescriptor: { metricKind: string; valueType: string; unit?: string; labels?: Array<{ key: string; valueType: string; description?: string }> };
  labelExtractors?: Record<string, string>;
  valueExtractor?: string;
  bucketOptions?: unknown;
}

export interface AlertPolicy {
  displayName: string;
  documentation: { mimeType: string; content: string };
  combiner: string;
  conditions: Array<{ displayName: string; conditionThreshold: { filter: string; comparison: string; thresholdValue: number; duration: string; aggregations: unknown[] } }>;
  notificationChannels: string[];
  userLabels?: Record<string, string>;
}

const readJson = <T>(path: string): T => JSON.parse(readFileSync(path, 'utf8')) as T;
const jsonFiles = (dir: string): string[] => readdirSync(join(MONITORING_DIR, dir)).filter((f) => f.endsWith('.json')).sort();

export const metrics = (): Array<{ file: string; metric: LogMetric }> => jsonFiles('metrics').map((file) => ({ file, metric: readJson<LogMetric>(join(MONITORING_DIR, 'metrics', file)) }));
export const alerts = (): Array<{ file: string; alert: AlertPolicy }> => jsonFiles('alerts').map((file) => ({ file, alert: readJson<AlertPolicy>(join(MONITORING_DIR, 'alerts', file)) }));
export const dashboard = (): { displayName: string; mosaicLayout: { columns: number; tiles: Array<{ widget: { title: string; xyChart: { dataSets: Array<{ timeSeriesQuery: { timeSeriesFilter: { filter: string } } }> } } }> } } =>
  readJson(join(MONITORING_DIR, 'dashboard.json'));

/** The runbook an alert links to (docs/runbooks/<name>.md), from its documentation. */
export function runbookOf(alert: AlertPolicy): string | undefined {
  return /\/docs\/runbooks\/([a-z0-9-]+\.md)/.exec(alert.documentation.content)?.[1];
}
