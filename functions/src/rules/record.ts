/**
 * The delivery record and the facts about it that every rule shares. Pure: no Firebase, no I/O,
 * no clock (callers pass `now`). The rules that change a record are in ./state-machine.ts.
 */
import type { AttachmentContentType, LifecycleKind } from '../contract';
import { LEASE_MAX_MS, LEASE_MS } from '../contract';
import type { ReplyTemplate } from '../contract/templates';
import { NotFoundError } from './errors';
import { sha256Hex } from './sha256';
import type { StartAddress, StartedThread } from './starts';

// Lease duration (a claim grants LEASE_MS, and so does each extension) and the most a lease may
// live after its claim (LEASE_MAX_MS): the contract's, which the SDK schedules extensions by.
export { LEASE_MAX_MS, LEASE_MS };

/** Leases granted before a `retry` (or an unstarted lease's expiry) fails the delivery. */
export const MAX_ATTEMPTS = 10;
/** Time since creation after which a `retry` (or an unstarted lease's expiry) fails the delivery. */
export const RETRY_WINDOW_MS = 24 * 3600_000;
/** First backoff step. */
export const BACKOFF_BASE_MS = 30_000;
/** Longest backoff. */
export const BACKOFF_CAP_MS = 3_600_000;

/** Re-notification of a claimable, unclaimed delivery (docs/contract.md#liveness): first after 5 minutes ... */
export const RENOTIFY_FIRST_MS = 5 * 60_000;
/** ... then the interval doubles up to 1 hour. */
export const RENOTIFY_MAX_INTERVAL_MS = 3_600_000;
/** How long a claimable delivery nobody claims lives by default (24 h; the service's `UNCLAIMED_EXPIRY` may set it otherwise). */
export const DEFAULT_UNCLAIMED_EXPIRY_MS = 24 * 3_600_000;
/** `error.code` of a delivery nobody claimed within the unclaimed expiry (docs/contract.md#liveness). */
export const NOT_CLAIMED = 'not_claimed';
/** `error.code` of a delivery the operator recalled before it was sent (docs/decisions.md#recall-before-send-cancel). */
export const CANCELLED = 'cancelled';
/** `error.code` of an unfinished delivery failed by a customer's erasure (docs/privacy.md#erasure). */
export const ERASED = 'erased';
/** Attempt log entries kept per delivery (the latest ones; docs/decisions.md#attempt-log). */
export const ATTEMPT_LOG_LIMIT = 50;

export type DeliveryStatus = 'queued' | 'leased' | 'sending' | 'sent' | 'failed' | 'unknown';
export type TerminalStatus = 'sent' | 'failed' | 'unknown';
export type FailOutcome = 'retry' | 'failed' | 'unknown';
type FailResponseStatus = 'queued' | 'failed' | 'unknown' | 'sent';

/** The statuses a delivery can still leave (the sweeper and the queue rebuild look for these). */
export const UNFINISHED_STATUSES: readonly DeliveryStatus[] = ['queued', 'leased', 'sending'];

export interface DeliveryLease {
  leaseId: string;
  requestId: string;
  expiresAt: number;
  started: boolean;
  /**
   * When the claim granted it (epoch ms): extensions end at `claimedAt + LEASE_MAX_MS`. Absent on
   * leases granted before extensions existed; those were never extended, so `leaseClaimedAt`
   * derives it from their expiry.
   */
  claimedAt?: number;
}

/** When `lease` was granted by its claim (see `DeliveryLease.claimedAt`). */
export function leaseClaimedAt(lease: DeliveryLease): number {
  return lease.claimedAt ?? lease.expiresAt - LEASE_MS;
}

/** One file of a reply, as the upload answered it and the claim hands it on (sha256: lowercase hex). */
export interface AttachmentRef {
  attachmentId: string;
  name: string;
  contentType: AttachmentContentType;
  size: number;
  sha256: string;
}

/** What an edit or unsend acts on (the claim's `target`): the reply's sent delivery and the provider ids it reported, per part when reported. */
export interface DeliveryTarget {
  deliveryId: string;
  providerMessageIds: string[];
  parts?: Array<{ part: string; providerMessageIds: string[] }>;
}

/** The outcome of one part of a reply: `text` or an attachment id. */
export interface PartOutcome {
  part: string;
  status: 'sent' | 'failed';
  providerMessageIds?: string[];
  code?: string;
}

/**
 * What a notification's `kind` attribute says: an edit or unsend of a sent reply, or the first
 * message of a conversation the desk starts; a plain reply's notification has none.
 */
export type NotificationKind = LifecycleKind | 'start';

/** The notification kind of a delivery (none for a plain reply). */
export const notificationKindOf = (d: Pick<DeliveryRecord, 'kind' | 'start'>): NotificationKind | undefined => d.kind ?? (d.start !== undefined ? 'start' : undefined);

/**
 * A delivery's notification (docs/contract.md#notifications): its five identifiers and nothing
 * else. The topic's message, an item of the pending list and the `next` of a `complete` or `fail`
 * answer are all exactly this (`notificationOf`).
 */
export interface DeliveryNotification {
  deliveryId: string;
  workspaceId: string;
  integrationId: string;
  conversationId: string;
  messageId: string;
}

/** The notification of a delivery (or of anything that carries its identifiers): exactly the five, copied. */
export function notificationOf(d: DeliveryNotification): DeliveryNotification {
  return { deliveryId: d.deliveryId, workspaceId: d.workspaceId, integrationId: d.integrationId, conversationId: d.conversationId, messageId: d.messageId };
}

export interface DeliveryRecord {
  deliveryId: string;
  workspaceId: string;
  integrationId: string;
  conversationId: string;
  /** The operator reply's document id. */
  messageId: string;
  /** 1, 2, 3 ... per conversation, creation order. */
  seq: number;
  status: DeliveryStatus;
  /**
   * Copied from the reply at creation (replies are immutable); for an edit the new text, for an
   * unsend empty.
   */
  text: string;
  /**
   * An operator's edit or unsend of the sent reply `messageId` (docs/contract.md#edits-and-unsends);
   * absent for the reply's own delivery (every record from before edits existed). Its status is
   * mirrored as an entry of the reply's `edits` / `unsends`, never as the reply's `delivery`.
   */
  kind?: LifecycleKind;
  /** With `kind`: what it acts on, the reply's sent delivery and the provider ids its connector reported. */
  target?: DeliveryTarget;
  /**
   * A conversation the desk starts (docs/contract.md#conversations-the-desk-starts): its claim is
   * `kind: "start"` with the address instead of a thread, and its `complete` names the thread the
   * channel made (`thread`, recorded here). Absent on every other delivery.
   */
  start?: { to: StartAddress; thread?: StartedThread };
  /** With `kind`: the operator's request time (epoch ms; the request's server timestamp). */
  requestedAt?: number;
  /**
   * The reply's files (docs/contract.md#attachments), checked against their upload records and the
   * integration's capability at creation. Absent on a text-only reply (and on every record written
   * before attachments existed): the claim then has exactly the shape it always had.
   */
  attachments?: AttachmentRef[];
  /**
   * A template reply or start (docs/contract.md#windows): the template with its params, checked
   * against the channel's declared templates at creation; `text` is then its filled preview. Absent
   * on a free-form message: the claim keeps the shape it always had.
   */
  template?: ReplyTemplate;
  /**
   * A resend of a partly sent reply: the delivery carries only the parts not known to be sent;
   * `textSent` says its text was sent already (the claim then omits it: an empty `text`).
   */
  textSent?: boolean;
  /** Per-part outcomes a connector reported on complete/fail (docs/contract.md#per-part-outcomes), mirrored as `delivery.parts`. */
  parts?: PartOutcome[];
  /** Leases granted so far. */
  attempts: number;
  createdAt: number;
  updatedAt: number;
  /** Queued after a retry: not claimable before this. */
  notBefore: number | null;
  /** Current or last lease. */
  lease: DeliveryLease | null;
  /** Every leaseId ever granted (bounded: attempts <= MAX_ATTEMPTS). */
  leaseHistory: string[];
  /** A claim saw `waiting_for_previous`; wake on the predecessor's terminal transition. */
  waiting: boolean;
  completion: { leaseId: string; providerMessageIds: string[] } | null;
  lastFail: {
    leaseId: string;
    outcome: FailOutcome;
    code: string;
    responseStatus: FailResponseStatus;
  } | null;
  /** From complete, or (partial) ids from fail failed/unknown. */
  providerMessageIds: string[];
  error: { outcome: string; code: string } | null;
  /** What the channel reported after `sent` (docs/contract.md#receipts); absent on records written before receipts. */
  receipt?: DeliveryReceipt | null;
  /**
   * The first unfinished delivery of its conversation (nothing before it blocks it). Set when it
   * is created as such, released by its predecessor, or claimed; it never goes back.
   */
  head?: boolean;
  /**
   * Since when a connector may claim it (queued, head, due): the order of the catch-up list
   * (`POST /v1/deliveries/pending`). Absent otherwise, so that only claimable deliveries are in
   * its index and the list's cost does not grow with finished ones. Written by `withPendingAt`.
   */
  pendingAt?: number;
  /**
   * While claimable (exactly when `pendingAt` is set): when the next liveness check is due
   * (re-notification, or the unclaimed expiry at `expiresAt`) and the re-notification interval
   * that led to it. Mirrored by one document in `deliveryChecks/` that the sweeper finds by its
   * due time (functions/src/deliveries/liveness.ts). Written by `withLiveness`.
   */
  liveness?: Liveness;
  /** What happened to the delivery, oldest first, the latest ATTEMPT_LOG_LIMIT entries (docs/decisions.md#attempt-log). */
  attemptLog?: AttemptEntry[];
  /** Set on a delivery created by an operator's resend: how the one it replaces ended (docs/decisions.md#operator-resend). */
  previous?: PreviousDelivery;
  /** The answer to the operator's latest recall request (docs/decisions.md#recall-before-send-cancel), mirrored as `delivery.cancel`. */
  cancel?: DeliveryCancel;
  /**
   * Derived on every write (functions/src/deliveries/store.ts `writeRecord`, `withOutcomeTimes`), for the integration
   * health roll-up (functions/src/deliveries/health.ts): the list shard of the id (LIST_SHARDS), when it first became
   * `sent`, and when it last ended with an error (failed/unknown, not counting `cancelled`).
   */
  listShard?: number;
  sentAt?: number;
  errorAt?: number;
  /**
   * The reply's W3C trace id (docs/operations.md#tracing), minted at creation from the delivery id
   * (functions/src/platform/trace.ts `traceIdOfDelivery`, so a record from before traces has the same one).
   */
  traceId?: string;
  /** The `pendingAt` of the claimable period a `conversation.blocked` event was sent for (functions/src/deliveries/blocked.ts). */
  blockedEventFor?: number;
}

/**
 * The answer to a recall request: `cancelled` (it was queued or leased but not started, and is now
 * failed `cancelled`) or `too_late` (sending or finished: nothing changed). `requestedAt` (epoch ms
 * of the console's request) makes a repeated trigger for the same request a no-op.
 */
interface DeliveryCancel {
  status: 'cancelled' | 'too_late';
  requestedAt: number;
  at: number;
}

/** The outcome of the delivery a resend replaced, shown on the reply as `delivery.previous`. */
export interface PreviousDelivery {
  /** Null when the reply had been refused without a delivery (e.g. `replies_disabled`). */
  deliveryId: string | null;
  status: 'failed' | 'unknown';
  error: { outcome: string; code: string } | null;
  providerMessageIds: string[];
  attemptLog: AttemptEntry[];
  updatedAt: number;
}

interface Liveness {
  /** Epoch ms of the next check. */
  checkAt: number;
  /** The interval that ends at `checkAt` (RENOTIFY_FIRST_MS for the first check). */
  intervalMs: number;
  /** `pendingAt` + the unclaimed expiry: the check at this time fails the delivery `not_claimed`. */
  expiresAt: number;
}

export type AttemptEvent = 'claimed' | 'started' | 'retry' | 'failed' | 'unknown' | 'sent' | 'lease_expired' | 'renotified';

/** One attempt log entry: `code` is the connector's or the service's code, when there is one. */
export interface AttemptEntry {
  at: number;
  event: AttemptEvent;
  code?: string;
}

/** `d` with `event` appended to its attempt log (the oldest entries beyond ATTEMPT_LOG_LIMIT dropped). */
export function withAttempt(d: DeliveryRecord, at: number, event: AttemptEvent, code?: string | null): DeliveryRecord {
  const entry: AttemptEntry = code === undefined || code === null ? { at, event } : { at, event, code };
  const log = [...(d.attemptLog ?? []), entry];
  return { ...d, attemptLog: log.length > ATTEMPT_LOG_LIMIT ? log.slice(log.length - ATTEMPT_LOG_LIMIT) : log };
}

/**
 * `next` with its liveness schedule (docs/contract.md#liveness): none unless claimable (`pendingAt` set); the
 * one `next` carries while it stays claimable since the same time (a check decision advances it);
 * otherwise a fresh one, whenever the delivery becomes claimable: first check RENOTIFY_FIRST_MS
 * after `pendingAt` (or at the expiry, if that is sooner), expiry `unclaimedExpiryMs` after it.
 * A claim takes a lease, which ends claimability and with it the schedule: the next claimable
 * period starts again at 5 minutes.
 */
export function withLiveness(before: DeliveryRecord | null, next: DeliveryRecord, unclaimedExpiryMs: number): DeliveryRecord {
  const { liveness: _old, ...rest } = next;
  if (next.pendingAt === undefined) return rest;
  if (next.liveness !== undefined && before?.pendingAt === next.pendingAt) return next;
  const expiresAt = next.pendingAt + unclaimedExpiryMs;
  return { ...rest, liveness: { checkAt: Math.min(next.pendingAt + RENOTIFY_FIRST_MS, expiresAt), intervalMs: RENOTIFY_FIRST_MS, expiresAt } };
}

/**
 * `next` with the times the integration health roll-up orders by (functions/src/deliveries/health.ts): `sentAt` from its
 * first `sent` (kept afterwards; a record from before the field takes its last change), and
 * `errorAt` whenever it ends `failed` or `unknown` with a new status or error. `cancelled` is not
 * an error of the integration (the operator recalled it), so it sets no `errorAt`; and a late
 * completion that turns `unknown` into `sent` drops `errorAt` (the ambiguity is resolved).
 */
export function withOutcomeTimes(before: DeliveryRecord | null, next: DeliveryRecord, now: number): DeliveryRecord {
  if (next.status === 'sent') {
    const { errorAt: _resolved, ...rest } = next;
    const sentAt = next.sentAt ?? (before?.status === 'sent' ? before.updatedAt : now);
    return { ...rest, sentAt };
  }
  if ((next.status === 'failed' || next.status === 'unknown') && next.error?.code !== CANCELLED) {
    const changed = before === null || before.status !== next.status || JSON.stringify(before.error) !== JSON.stringify(next.error);
    if (changed) return { ...next, errorAt: now };
  }
  return next;
}

/**
 * `next` with its `pendingAt`: kept from `before` while it stays claimable with the same due time
 * (so a delivery keeps its place in the list), set to when it becomes claimable (`now`, or its
 * retry time), and removed when it is not claimable.
 */
export function withPendingAt(before: DeliveryRecord | null, next: DeliveryRecord, now: number): DeliveryRecord {
  const { pendingAt: _old, ...rest } = next;
  if (next.status !== 'queued' || next.head !== true) return rest;
  const unchanged = before !== null && before.status === 'queued' && before.head === true && before.pendingAt !== undefined && before.notBefore === next.notBefore;
  return { ...rest, pendingAt: unchanged ? (before.pendingAt as number) : Math.max(now, next.notBefore ?? now) };
}

/**
 * The record as every store keeps it: what a rule decided (`next`) with the fields derived on
 * every write, its place in the catch-up list (`withPendingAt`), its liveness schedule
 * (`withLiveness`) and the health roll-up's outcome times (`withOutcomeTimes`). The service's
 * Firestore writer (deliveries/store.ts) and the SDK's test service both store exactly this.
 */
export function storedRecord(before: DeliveryRecord | null, next: DeliveryRecord, now: number, unclaimedExpiryMs: number): DeliveryRecord {
  return withOutcomeTimes(before, withLiveness(before, withPendingAt(before, next, now), unclaimedExpiryMs), now);
}

export type ReceiptStatus = 'delivered' | 'read' | 'failed';

/** The channel's latest word on a sent message: `at` is the channel's time when it gave one (epoch ms). */
interface DeliveryReceipt {
  status: ReceiptStatus;
  at: number;
  code: string | null;
  providerMessageId: string | null;
}

/** Why a notification is (re-)published; kept on the outbox entry and in its log line. */
export type NotificationReason = 'created' | 'wake' | 'retry' | 'lease_expired' | 'renotified' | 'resend';

/** Publish the delivery's notification at `at` (never earlier: see deliveries/outbox.ts). */
export interface Notify {
  at: number;
  reason: NotificationReason;
  /** The writer publishes it itself right after the commit (deliveries/outbox.ts `publishCommitted`). */
  inline?: true;
}

export interface Effects {
  /** The stored status went from non-terminal to terminal: release (wake) the next delivery. */
  releasesNext: boolean;
  /** Re-publish this delivery's notification (retry, expired lease, wake), or null. */
  notify: Notify | null;
}

/** What a rule decided: the answer, the record to write (null: no write) and what follows from it. */
export interface Decision<R> {
  response: R;
  /** The record to write, or null for no write. Never the same object as the input. */
  next: DeliveryRecord | null;
  effects: Effects;
}

export interface Recipient {
  externalConversationId: string;
  externalCustomerId: string;
}

export function isTerminal(status: DeliveryStatus): status is TerminalStatus {
  return status === 'sent' || status === 'failed' || status === 'unknown';
}

/** A lease is live strictly before its expiry instant: at `now === expiresAt` it has expired. */
export function isLeaseLive(lease: DeliveryLease | null, now: number): lease is DeliveryLease {
  return lease !== null && now < lease.expiresAt;
}

/** True when `leaseId` currently holds the delivery: its current lease, live, leased or sending. */
export function holdsLease(d: DeliveryRecord, leaseId: string, now: number): boolean {
  return (d.status === 'leased' || d.status === 'sending') && d.lease?.leaseId === leaseId && isLeaseLive(d.lease, now);
}

/** True when `leaseId` was ever granted for this delivery (current or earlier lease). */
export function everHeld(d: DeliveryRecord, leaseId: string): boolean {
  return d.leaseHistory.includes(leaseId) || d.lease?.leaseId === leaseId;
}

/** The retry budget is spent: 10 leases granted, or 24 h since creation. */
export function retryBudgetSpent(d: DeliveryRecord, now: number): boolean {
  return d.attempts >= MAX_ATTEMPTS || now - d.createdAt >= RETRY_WINDOW_MS;
}

/**
 * Backoff before attempt `attempt + 1`, after `attempt` leases (>= 1): 30 s doubling per attempt,
 * plus 0..50 % jitter from `random` in [0, 1), clamped to [BACKOFF_BASE_MS, BACKOFF_CAP_MS].
 */
export function backoffMs(attempt: number, random: number): number {
  const n = Number.isFinite(attempt) ? Math.max(1, Math.floor(attempt)) : 1;
  const r = Number.isFinite(random) ? Math.min(Math.max(random, 0), 1) : 0;
  // 2^(n-1) overflows nothing that matters: the cap applies long before precision does.
  const nominal = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** Math.min(n - 1, 30));
  const jittered = Math.floor(nominal * (1 + r / 2));
  return Math.min(BACKOFF_CAP_MS, Math.max(BACKOFF_BASE_MS, jittered));
}

/** docs/contract.md#claim: the most recent customer sender, else the most recent sender. */
export function recipientFor(conversation: {
  externalConversationId: string;
  lastCustomerExternalId?: string | null | undefined;
  lastSenderExternalId: string;
}): Recipient {
  return {
    externalConversationId: conversation.externalConversationId,
    externalCustomerId: conversation.lastCustomerExternalId ?? conversation.lastSenderExternalId,
  };
}

/**
 * 404 for a missing delivery and for one of another integration or workspace (reported
 * identically, docs/contract.md#tenancy). Returns the record for chaining.
 */
export function visibleDelivery(
  d: DeliveryRecord | null | undefined,
  caller: { workspaceId: string; integrationId: string },
): DeliveryRecord {
  if (d === null || d === undefined || d.integrationId !== caller.integrationId || d.workspaceId !== caller.workspaceId) {
    throw new NotFoundError('delivery_not_found', 'delivery not found');
  }
  return d;
}

/** A new delivery (status queued, no lease). Reply sequencing creates it idempotently. */
export function newDelivery(
  input: Pick<DeliveryRecord, 'deliveryId' | 'workspaceId' | 'integrationId' | 'conversationId' | 'messageId' | 'seq' | 'text'> & { now: number },
): DeliveryRecord {
  return {
    deliveryId: input.deliveryId,
    workspaceId: input.workspaceId,
    integrationId: input.integrationId,
    conversationId: input.conversationId,
    messageId: input.messageId,
    seq: input.seq,
    status: 'queued',
    text: input.text,
    attempts: 0,
    createdAt: input.now,
    updatedAt: input.now,
    notBefore: null,
    lease: null,
    leaseHistory: [],
    waiting: false,
    completion: null,
    lastFail: null,
    providerMessageIds: [],
    error: null,
    receipt: null,
  };
}

/** The trace id of a delivery (and of its reply): stable, derived from the delivery id (docs/operations.md#tracing). */
export const traceIdOfDelivery = (deliveryId: string): string => sha256Hex(`trace:${deliveryId}`).slice(0, 32);
