/**
 * Pure helpers of the console's privacy view (no DOM, no Firebase): the retention setting, the
 * erasure's preview and audit, the erasure address a thread links to, and the export's download. Unit-tested in test/unit/console/privacy-format.test.ts.
 */
import { formatAge, personLabel } from './format';
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

/**
 * What an erasure of one customer would delete, as the console counted it before offering it
 * (privacy-data.ts `previewErasure`), with the erasure job's definitions (functions/src/privacy/erasure.ts):
 * a conversation the customer wrote in is deleted whole when its `customerIds` lists only them
 * (sole), otherwise (shared) only their own messages in it go.
 */
export interface ErasurePreview {
  /** Whether the customer record (`customers/{u_…}`) exists. */
  customerExists: boolean;
  /** The record's display name, when the connector gave one. */
  displayName: string | undefined;
  /** Conversations that go entirely (the customer is their only customer). */
  soleConversations: number;
  /** Conversations that stay with the other customers' messages and the replies. */
  sharedConversations: number;
  /** Messages deleted: the customer's own everywhere, and every message of a sole conversation. */
  messages: number;
  /**
   * Requests to start a conversation with the id as an address (docs/privacy.md: a start that never
   * completed names no customer, so its address is the id an erasure names); their conversations
   * that never completed are counted in `soleConversations` and `messages`.
   */
  addressStarts: number;
  /** More conversations list the customer than the preview counts: the numbers are lower bounds. */
  more: boolean;
}

/** The preview's decision in words: nothing to erase (no confirmation offered), or what the erasure deletes. */
export type ErasurePreviewText = { kind: 'nothing'; text: string } | { kind: 'erase'; text: string };

const plural = (n: number, one: string, many: string): string => `${n} ${n === 1 ? one : many}`;

/**
 * Whether an id matches nothing: no customer record, no conversation, no message and no start to it
 * as an address. The customer record is written by the customer's first message and kept until an
 * erasure (or until retention deletes it after their last message), so a mistyped id is exactly this case.
 */
export function matchesNothing(preview: ErasurePreview): boolean {
  return !preview.customerExists && preview.soleConversations === 0 && preview.sharedConversations === 0 && preview.messages === 0 && preview.addressStarts === 0;
}

/**
 * The sentence the confirmation shows, e.g. "This deletes 2 conversations and 14 messages of Grace
 * Hopper (grace-1) on Example chat; 1 shared conversation keeps the other customers' messages.",
 * "This deletes 1 conversation and 1 message of dee@example.com on Example chat, and 1 request to
 * start a conversation with that address." (a start that never completed), or,
 * when the id matches nothing, "No customer grace-2 on Example chat: nothing would be erased. Check the id."
 */
export function erasurePreviewText(preview: ErasurePreview, externalCustomerId: string, integrationName: string): ErasurePreviewText {
  if (matchesNothing(preview)) return { kind: 'nothing', text: `No customer ${externalCustomerId} on ${integrationName}: nothing would be erased. Check the id.` };
  const who = `${personLabel(externalCustomerId, preview.displayName)} on ${integrationName}`;
  const atLeast = preview.more ? 'at least ' : '';
  const deleted: string[] = [];
  if (preview.soleConversations > 0) deleted.push(plural(preview.soleConversations, 'conversation', 'conversations'));
  if (preview.messages > 0) deleted.push(plural(preview.messages, 'message', 'messages'));
  const starts = plural(preview.addressStarts, 'request', 'requests');
  const what =
    deleted.length > 0
      ? `${atLeast}${deleted.join(' and ')} of ${who}${preview.addressStarts === 0 ? '' : `, and ${atLeast}${starts} to start a conversation with that address`}`
      : !preview.customerExists
        ? `${atLeast}${starts} to start a conversation with ${who}`
        : `only the customer record of ${who}${preview.addressStarts === 0 ? '' : ` and ${atLeast}${starts} to start a conversation with that address`}: no conversation or message of theirs is stored`;
  const shared =
    preview.sharedConversations === 0
      ? ''
      : `; ${atLeast}${plural(preview.sharedConversations, 'shared conversation keeps', 'shared conversations keep')} the other customers’ messages`;
  return { kind: 'erase', text: `This deletes ${what}${shared}.` };
}

/** The console address that opens Privacy's erasure form for one customer (each id encoded: any character may occur in them). */
export function erasureHash(integrationId: string, externalCustomerId: string): string {
  return `#/privacy/erase/${encodeURIComponent(integrationId)}/${encodeURIComponent(externalCustomerId)}`;
}

/**
 * The customer an erasure address names, from the route's parts after `privacy` (main.ts splits the
 * hash at `/` and decodes each part): `['erase', integrationId, externalCustomerId]`, else undefined.
 */
export function parseErasureRoute(parts: readonly string[]): { integrationId: string; externalCustomerId: string } | undefined {
  const [first, integrationId, externalCustomerId, ...rest] = parts;
  if (first !== 'erase' || integrationId === undefined || externalCustomerId === undefined || rest.length > 0) return undefined;
  if (integrationId === '' || externalCustomerId.trim() === '') return undefined;
  return { integrationId, externalCustomerId };
}
