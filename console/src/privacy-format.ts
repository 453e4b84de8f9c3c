/**
 * Pure helpers of the console's privacy view (no DOM, no Firebase): the retention setting, the
 * erasure audit and the export's download. Unit-tested in test/unit/console/privacy-format.test.ts.
 */
import { formatAge } from './format';
import { RETENTION_DAYS } from '../../functions/src/contract';

/** The retention period's bounds (the contract's, which firestore.rules check too; absent = keep forever). */
const RETENTION_MIN_DAYS = RETENTION_DAYS.min;
export const RETENTION_MAX_DAYS = RETENTION_DAYS.max;

/** An export is offered for download this long after it is written (docs/decisions.md#privacy-in-the-console). */
export const EXPORT_DOWNLOAD_MS = 7 * 24 * 3600_000;

/** The days typed into the form as the rules accept them, or why not. */
export function parseRetentionDays(text: string): number | string {
  const trimmed = text.trim();
  if (!/^\d+$/.test(trimmed)) return `Enter a whole number of days from ${RETENTION_MIN_DAYS} to ${RETENTION_MAX_DAYS}.`;
  const days = Number(trimmed);
  if (days < RETENTION_MIN_DAYS || days > RETENTION_MAX_DAYS) return `Enter a whole number of days from ${RETENTION_MIN_DAYS} to ${RETENTION_MAX_DAYS}.`;
  return days;
}

/** The setting in words: absent = kept forever. */
export function retentionLabel(days: number | undefined): string {
  if (days === undefined) return 'Kept forever (no retention period).';
  return `Deleted after ${days} day${days === 1 ? '' : 's'}.`;
}

/** The service's audit fields of an erasure document (epoch ms). */
export interface ErasureAudit {
  status: 'running' | 'done' | undefined;
  startedAt: number | undefined;
  finishedAt: number | undefined;
  /** When the connector acknowledged that it purged its own copies. */
  acknowledgedAt: number | undefined;
}

export function erasureStatusLabel(status: ErasureAudit['status']): string {
  if (status === undefined) return 'requested';
  return status === 'running' ? 'erasing…' : 'done';
}

/**
 * The connector's side: confirmed (and when), waiting since the erasure was done (the connector is
 * told only then), or not told yet (the service is still erasing).
 */
export type ConnectorConfirmation = { kind: 'confirmed'; at: number } | { kind: 'waiting'; since: number; age: string } | { kind: 'not_told_yet' };

export function connectorConfirmation(audit: ErasureAudit, now: number): ConnectorConfirmation {
  if (audit.acknowledgedAt !== undefined) return { kind: 'confirmed', at: audit.acknowledgedAt };
  if (audit.status === 'done' && audit.finishedAt !== undefined) return { kind: 'waiting', since: audit.finishedAt, age: formatAge((now - audit.finishedAt) / 1000) };
  return { kind: 'not_told_yet' };
}

/** What the console knows of an export from its document (`status`, `finishedAt`, `fileExpiresAt`). */
export interface ExportState {
  status: string | undefined;
  finishedAt: number | undefined;
  /** When the download stops being offered (the service's `fileExpiresAt`, else finishedAt + 7 days). */
  expiresAt: number | undefined;
  /** The service's reason when the export failed (e.g. `too_large`). */
  errorCode: string | undefined;
}

export type ExportDownload = { kind: 'ready'; until: number } | { kind: 'expired' } | { kind: 'failed'; code: string } | { kind: 'preparing' };

/** Downloadable once done and until its expiry (7 days after the file was written). */
export function exportDownload(state: ExportState, now: number): ExportDownload {
  if (state.status === 'failed') return { kind: 'failed', code: state.errorCode ?? 'failed' };
  const until = state.expiresAt ?? (state.finishedAt === undefined ? undefined : state.finishedAt + EXPORT_DOWNLOAD_MS);
  if (until !== undefined && now >= until) return { kind: 'expired' };
  if (state.status === 'done' && until !== undefined) return { kind: 'ready', until };
  return { kind: 'preparing' };
}

/** The export download function's address for one export (it checks the caller's ID token and admin role). */
export function exportDownloadUrl(functionUrl: string, workspaceId: string, exportId: string): string {
  return `${functionUrl}?${new URLSearchParams({ workspaceId, exportId }).toString()}`;
}
