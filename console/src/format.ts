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
 * Most recent first, ties by id descending: the order of each shard query
 * (`orderBy('lastMessageAt', 'desc')`, whose implicit last order, the document id, takes the
 * direction of the last explicit one), so that merging shards agrees with what each window holds.
 */
export function byRecency(a: { id: string; lastMessageAtMs: number }, b: { id: string; lastMessageAtMs: number }): number {
  return b.lastMessageAtMs - a.lastMessageAtMs || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);
}

/**
 * The "failed" filter's order: the most replies that need attention first, then the most recent
 * (its shard queries' `orderBy('failedReplies', 'desc').orderBy('lastMessageAt', 'desc')`).
 */
export function byFailuresThenRecency(a: { id: string; lastMessageAtMs: number; failedReplies: number }, b: { id: string; lastMessageAtMs: number; failedReplies: number }): number {
  return b.failedReplies - a.failedReplies || byRecency(a, b);
}

/** What the list shows of its shard windows (`shardWindows`), and which windows must grow first. */
export interface ShardWindowPlan<T> {
  /** The first rows of all shards in order, as far as they are certain (at most `shown`). */
  rows: T[];
  /** Shards whose full window may hide rows that belong among the first `shown`: widen these. */
  widen: number[];
  /** Whether rows beyond `shown` exist or may exist ("Load older"). */
  more: boolean;
}

/**
 * Paging that is exact across shards with small windows (docs/console.md#what-a-page-costs): each
 * shard's window (`limits[k]` rows, sorted by `compare` like its query) is merged; a merged row is
 * certain when it sorts at or before the last row of every full window (a full window may hide
 * rows after its last, never before it). The rows shown are the certain prefix; the full windows
 * that stop it short of `shown` are to be widened. With 8 shards and 50 rows, windows of 10 read
 * about 80 documents where windows of 50 read 400.
 */
export function shardWindows<T>(shards: ReadonlyArray<ReadonlyArray<T>>, limits: readonly number[], shown: number, compare: (a: T, b: T) => number): ShardWindowPlan<T> {
  const merged = shards.flat().sort(compare);
  const fullLasts = shards.map((rows, k) => (rows.length > 0 && rows.length >= (limits[k] ?? 0) ? rows[rows.length - 1] : undefined));
  const certain = (row: T): boolean => fullLasts.every((last) => last === undefined || compare(row, last) <= 0);
  let exact = 0;
  while (exact < merged.length && exact < shown && certain(merged[exact] as T)) exact++;
  const blocked = merged[exact];
  const widen =
    exact >= shown ? [] : fullLasts.flatMap((last, k) => (last !== undefined && (blocked === undefined || compare(last, blocked) < 0) ? [k] : []));
  return { rows: merged.slice(0, exact), widen, more: merged.length > shown || fullLasts.some((last) => last !== undefined) };
}

/** The longest row preview, in code points (the CSS cuts it to one line anyway; this bounds the DOM). */
const PREVIEW_MAX = 120;

/** The first non-empty line of `text`, at most PREVIEW_MAX code points (with an ellipsis when cut). */
export function firstLine(text: string): string {
  const line = text.split(/\r?\n/).map((l) => l.trim()).find((l) => l !== '') ?? '';
  const points = Array.from(line);
  return points.length > PREVIEW_MAX ? `${points.slice(0, PREVIEW_MAX - 1).join('')}…` : line;
}

/** What a row needs to know of a conversation's last message (either side) to preview it. */
export interface PreviewSource {
  direction: 'inbound' | 'outbound';
  text: string | undefined;
  /** A customer's edits, latest last: the customer sees (and the preview shows) the latest. */
  customerEdits?: ReadonlyArray<{ text: string }>;
  alert?: boolean;
  deleted?: boolean;
  unsent?: boolean;
  files: number;
}

/**
 * A queue row's second line (docs/console.md#the-queue): who wrote the last message and its first
 * line, as the thread would show it now: the latest edit, "deleted by the customer" for a
 * tombstone (nothing of the text), "unsent" for a reply taken back, the file count when there is
 * no text.
 */
export function messagePreview(m: PreviewSource): string {
  const who = m.direction === 'outbound' ? 'Reply: ' : m.alert === true ? 'Alert: ' : '';
  if (m.deleted === true) return 'Message deleted by the customer';
  if (m.unsent === true) return 'Reply unsent';
  const text = firstLine(m.customerEdits?.at(-1)?.text ?? m.text ?? '');
  if (text !== '') return `${who}${text}`;
  if (m.files > 0) return `${who}${m.files} ${m.direction === 'outbound' ? (m.files === 1 ? 'file' : 'files') : m.files === 1 ? 'image' : 'images'}`;
  return `${who}(no text)`;
}

/** Whether a conversation has something new for a member: a message came in after their read marker (none: never read). */
export function isUnread(lastMessageAtMs: number, readAtMs: number | undefined): boolean {
  return lastMessageAtMs > 0 && (readAtMs === undefined || lastMessageAtMs > readAtMs);
}

/** The tab's title: how many conversations need a reply first, so a background tab says so. */
export function pageTitle(needingReply: number | undefined): string {
  return needingReply === undefined || needingReply === 0 ? 'Support desk console' : `(${needingReply > 999 ? '999+' : needingReply}) Support desk console`;
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
