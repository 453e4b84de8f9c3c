/** The console's privacy helpers (console/src/privacy-format.ts): retention input, the connector's confirmation, the export's download. */
import {
  connectorConfirmation,
  erasureStatusLabel,
  EXPORT_DOWNLOAD_MS,
  exportDownload,
  exportDownloadUrl,
  parseRetentionDays,
  retentionLabel,
} from '../../../console/src/privacy-format';

test('retention days: whole numbers 1..3650 as the rules accept; anything else says why', () => {
  expect(parseRetentionDays('30')).toBe(30);
  expect(parseRetentionDays(' 1 ')).toBe(1);
  expect(parseRetentionDays('3650')).toBe(3650);
  for (const bad of ['0', '3651', '1.5', '-3', '', 'abc', '1e3']) expect(typeof parseRetentionDays(bad)).toBe('string');
});

test('retention in words: absent is kept forever', () => {
  expect(retentionLabel(undefined)).toBe('Kept forever (no retention period).');
  expect(retentionLabel(1)).toBe('Deleted after 1 day.');
  expect(retentionLabel(90)).toBe('Deleted after 90 days.');
});

test('the erasure status and the connector: not told while erasing, waiting since done, confirmed once acknowledged', () => {
  expect(erasureStatusLabel(undefined)).toBe('requested');
  expect(erasureStatusLabel('running')).toBe('erasing…');
  expect(erasureStatusLabel('done')).toBe('done');
  const running = { status: 'running' as const, startedAt: 1000, finishedAt: undefined, acknowledgedAt: undefined };
  expect(connectorConfirmation(running, 5000)).toEqual({ kind: 'not_told_yet' });
  const done = { ...running, status: 'done' as const, finishedAt: 2000 };
  expect(connectorConfirmation(done, 2000 + 3 * 3600_000 + 5 * 60_000)).toEqual({ kind: 'waiting', since: 2000, age: '3 h 5 min' });
  expect(connectorConfirmation({ ...done, acknowledgedAt: 9000 }, 10_000)).toEqual({ kind: 'confirmed', at: 9000 });
});

test('an export is downloadable once done, until its fileExpiresAt (else 7 days after it was written); a failure says why', () => {
  const done = { status: 'done', finishedAt: 1_000, expiresAt: undefined, errorCode: undefined };
  expect(exportDownload({ ...done, status: 'running' }, 2_000)).toEqual({ kind: 'preparing' });
  expect(exportDownload({ ...done, status: undefined, finishedAt: undefined }, 2_000)).toEqual({ kind: 'preparing' });
  expect(exportDownload(done, 2_000)).toEqual({ kind: 'ready', until: 1_000 + EXPORT_DOWNLOAD_MS });
  expect(exportDownload(done, 1_000 + EXPORT_DOWNLOAD_MS)).toEqual({ kind: 'expired' });
  expect(exportDownload({ ...done, expiresAt: 5_000 }, 4_999)).toEqual({ kind: 'ready', until: 5_000 });
  expect(exportDownload({ ...done, expiresAt: 5_000 }, 5_000)).toEqual({ kind: 'expired' });
  expect(exportDownload({ ...done, status: 'failed', errorCode: 'too_large' }, 2_000)).toEqual({ kind: 'failed', code: 'too_large' });
});

test('the download address names the workspace and the export, encoded', () => {
  expect(exportDownloadUrl('http://127.0.0.1:5001/demo-p/europe-central2/downloadExport', 'ws 1', 'ex/2')).toBe(
    'http://127.0.0.1:5001/demo-p/europe-central2/downloadExport?workspaceId=ws+1&exportId=ex%2F2',
  );
});
