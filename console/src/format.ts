/**
 * Pure helpers of the console (no DOM, no Firebase): counting, labels and merging. Unit-tested in
 * test/unit/console/format.test.ts.
 */
import { codePointLength, isValidTopicName, REPLY_MAX_CODE_POINTS, TOPIC_NAME_FORMAT } from '../../functions/src/contract';

/**
 * Epoch milliseconds of a Firestore `Timestamp` (anything with `toMillis()`), else undefined.
 * Duck-typed so that this module stays free of Firebase.
 */
export function timestampMillis(t: unknown): number | undefined {
  return t && typeof (t as { toMillis?: unknown }).toMillis === 'function' ? (t as { toMillis(): number }).toMillis() : undefined;
}

/**
 * Why a reply cannot be sent yet, or undefined when it can (the contract's limit, in code points as
 * the rules count). With files (`files` > 0) the text may be empty.
 */
export function replyProblem(text: string, files = 0): string | undefined {
  const n = codePointLength(text);
  if (text.trim() === '' && files === 0) return 'Write a reply first.';
  if (n > REPLY_MAX_CODE_POINTS) return `Too long by ${n - REPLY_MAX_CODE_POINTS} characters (at most ${REPLY_MAX_CODE_POINTS}).`;
  return undefined;
}

export type DeliveryStatus = 'queued' | 'leased' | 'sending' | 'sent' | 'failed' | 'unknown';

/** Human label of a delivery status; `pending` = the service has not mirrored a delivery yet. */
export function statusLabel(status: DeliveryStatus | 'pending'): string {
  switch (status) {
    case 'pending':
      return 'submitted';
    case 'queued':
      return 'queued';
    case 'leased':
      return 'claimed by the connector';
    case 'sending':
      return 'sending';
    case 'sent':
      return 'sent';
    case 'failed':
      return 'failed';
    case 'unknown':
      return 'unknown (may or may not have reached the customer)';
  }
}

/** Statuses on which firestore.rules let a member request a resend. */
export function canResend(status: string | undefined): boolean {
  return status === 'failed' || status === 'unknown';
}

/**
 * Statuses on which the console offers **Cancel send** (recall before send, docs/decisions.md#recall-before-send-cancel): not yet
 * started by the connector. The rules accept a cancel in any status once the mirror exists (the
 * service answers `too_late` itself), but offering it on `sending` or finished replies would only
 * ever produce "too late".
 */
export function canCancel(status: string | undefined): boolean {
  return status === 'queued' || status === 'leased';
}

/** What the service answered to a cancel request (`delivery.cancel.status`), for people. */
export function cancelOutcomeLabel(status: 'cancelled' | 'too_late'): string {
  return status === 'cancelled' ? 'cancelled before sending' : 'too late to cancel: the connector had already started sending';
}

/**
 * Whether a resend asked for on this reply is still unanswered: the delivery can be resent and the
 * request is newer than the mirror's last update (a resend that took effect replaced the mirror).
 */
export function resendPending(status: string | undefined, requestedAtMs: number | undefined, updatedAtMs: number | undefined): boolean {
  return canResend(status) && requestedAtMs !== undefined && requestedAtMs > (updatedAtMs ?? 0);
}

/**
 * Whether a cancel of the reply's current delivery is pending: there is a delivery, the service has
 * not answered on it, and the cancel was asked here or by a request newer than the mirror (e.g. a
 * colleague's). A request older than the current delivery (made before a resend) does not count,
 * and neither does one while the mirror has no `updatedAt` yet.
 */
export function cancelPending(reply: {
  deliveryId: string | undefined;
  answered: boolean;
  requestedHere: boolean;
  requestedAtMs: number | undefined;
  updatedAtMs: number | undefined;
}): boolean {
  return reply.deliveryId !== undefined && !reply.answered && (reply.requestedHere || (reply.requestedAtMs ?? 0) > (reply.updatedAtMs ?? Number.MAX_SAFE_INTEGER));
}

/** The statuses of the integration health counts, in the order the console shows them. */
export const HEALTH_STATUSES = ['queued', 'leased', 'sending', 'sent', 'failed', 'unknown'] as const;
export type HealthStatus = (typeof HEALTH_STATUSES)[number];

/** One open problem of an integration's health (docs/operations.md#operational-events). */
export interface HealthProblem {
  code?: string;
  deliveryId?: string;
  ageSeconds?: number;
  failed?: number;
  of?: number;
}

/** One open problem of an integration, in words. */
export function healthProblemText(p: HealthProblem): string {
  if (p.code === 'claimable_too_old') return `a reply has waited ${formatAge(p.ageSeconds ?? 0)} for the connector to claim it`;
  if (p.code === 'outcomes_failing') return `${p.failed ?? '?'} of the last ${p.of ?? '?'} replies failed or ended unknown`;
  return p.code ?? 'unknown problem';
}

/** The roll-up runs every minute (quiet integrations every 10): older numbers mean it has stopped. */
const HEALTH_STALE_MS = 15 * 60_000;

/** How long the health numbers computed at `computedAtMs` have gone without a roll-up, in seconds, when that means it stopped; else undefined. */
export function healthStaleSeconds(computedAtMs: number | undefined, now: number): number | undefined {
  return computedAtMs !== undefined && now - computedAtMs > HEALTH_STALE_MS ? (now - computedAtMs) / 1000 : undefined;
}

/**
 * Why a typed Pub/Sub topic name cannot be saved, or undefined when it can (empty means none). The
 * rule and its wording are the contract's, as the service and the rules apply them.
 */
export function topicProblem(topic: string): string | undefined {
  return topic === '' || isValidTopicName(topic) ? undefined : `The topic must look like ${TOPIC_NAME_FORMAT}.`;
}

/** A duration in whole seconds for people: "45 s", "3 min 5 s", "2 h 7 min", "3 d 4 h". */
export function formatAge(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  return `${Math.floor(s / 86400)} d ${Math.floor((s % 86400) / 3600)} h`;
}

/**
 * The person a conversation is with, as the list and the thread name it: its latest CUSTOMER
 * (`lastCustomerExternalId`), never the latest sender, which after a service alert is the alert
 * bot (`sender.kind: service`). Undefined while only services have written in it.
 */
export function conversationPerson(conversation: { lastCustomerExternalId?: unknown }): string | undefined {
  const customer = conversation.lastCustomerExternalId;
  return typeof customer === 'string' && customer !== '' ? customer : undefined;
}

/** What the console shows for a conversation without a customer yet (alerts only). */
export const NO_CUSTOMER_YET = 'no customer yet';

/**
 * Merges the per-shard conversation lists (each already most recent first) into one list, most
 * recent first, at most `limit` long. Ties keep a stable order by id.
 */
export function mergeByRecency<T extends { id: string; lastMessageAtMs: number }>(shards: ReadonlyArray<ReadonlyArray<T>>, limit: number): T[] {
  return shards
    .flat()
    .sort((a, b) => b.lastMessageAtMs - a.lastMessageAtMs || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .slice(0, limit);
}

/**
 * The facts an integration's health states in words, beside its counts: replies failed or of
 * unknown outcome in the last 24 h, and how long the oldest claimable one has waited. Empty when
 * there is nothing to say: only then does the panel read "No open problems." (never beside a
 * red count).
 */
export function healthFacts(health: { counts: Partial<Record<HealthStatus, number>>; oldestClaimable: { ageSeconds: number | undefined } | null }): string[] {
  const facts: string[] = [];
  const failed = health.counts.failed ?? 0;
  const unknown = health.counts.unknown ?? 0;
  if (failed > 0) facts.push(`${failed} failed in 24 h`);
  if (unknown > 0) facts.push(`${unknown} of unknown outcome in 24 h`);
  if (health.oldestClaimable !== null) facts.push(`oldest waiting ${formatAge(health.oldestClaimable.ageSeconds ?? 0)}`);
  return facts;
}

/**
 * Whether conversations older than the merged top `limit` exist, for "Load older": the shards
 * together returned more than `limit` (the rest are older than every row shown), or a shard
 * returned its whole window (`limit` rows: it may hold more beyond it). Each shard's window is
 * `limit`, so the merged top `limit` is exact either way.
 */
export function olderExist(shards: ReadonlyArray<ReadonlyArray<unknown>>, limit: number): boolean {
  return shards.reduce((n, s) => n + s.length, 0) > limit || shards.some((s) => s.length >= limit);
}

/** A thumbnail's largest box: the same as `.media .thumbnail`'s max-width and max-height in console.css. */
const THUMBNAIL_MAX = { width: 240, height: 180 } as const;

/** The thumbnail's CSS box (at most THUMBNAIL_MAX, never enlarged) of an image of `width` x `height`; undefined when unknown. */
export function thumbnailBox(width: number | undefined, height: number | undefined): { width: number; height: number } | undefined {
  if (width === undefined || height === undefined || !(width > 0) || !(height > 0)) return undefined;
  const scale = Math.min(1, THUMBNAIL_MAX.width / width, THUMBNAIL_MAX.height / height);
  return { width: Math.max(1, Math.round(width * scale)), height: Math.max(1, Math.round(height * scale)) };
}

/** 1234 -> "1.2 KB"; for image metadata. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/** A short local date-time, or an em dash for a missing time. */
export function formatTime(ms: number | undefined, now: number = Date.now()): string {
  if (ms === undefined) return '—';
  const d = new Date(ms);
  const sameDay = new Date(now).toDateString() === d.toDateString();
  return sameDay ? d.toLocaleTimeString() : d.toLocaleString();
}

/** The service's customer id: base64url SHA-256 of `integrationId NUL externalId`, first 32 characters, after `u_`. */
export async function customerDocId(integrationId: string, externalId: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(`${integrationId}\u0000${externalId}`)));
  let binary = '';
  for (const byte of digest) binary += String.fromCharCode(byte);
  const base64url = btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  return `u_${base64url.slice(0, 32)}`;
}

/** "Ada Lovelace (cust-42)" when the name is known, else the external id. */
export function personLabel(externalId: string, displayName: string | undefined): string {
  return displayName === undefined || displayName === '' || displayName === externalId ? externalId : `${displayName} (${externalId})`;
}
