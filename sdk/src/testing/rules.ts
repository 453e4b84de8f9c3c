/**
 * The delivery rules of the test service: a port of the real service's pure state machine
 * (functions/src/deliveries/state-machine.ts, record.ts, ordering.ts), rule for rule, so that a
 * connector sees the same answers here as against the emulator stack. Pure: callers pass `now`,
 * fresh lease ids and a random number; a refusal is thrown as an `ApiError`, and a decision says
 * which record to store and what follows from it (release of the next delivery, a notification).
 * What the real service keeps for its own bookkeeping (mirrors, liveness checks, list shards) is
 * left out; what a connector can observe is kept.
 */
import { LEASE_MAX_MS, LEASE_MS, TEXT_PART, type AttachmentContentType, type SkipReason } from '../internal/contract.generated.js';

/** An answer other than 2xx, as the service's `ApiError`s (functions/src/platform/errors.ts). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** Seconds for `Retry-After` (429 and 503). */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** Rounds a delay up to whole seconds for `Retry-After` (never 0), as the service does. */
export const retryAfterSecondsFromMs = (ms: number): number => Math.max(1, Math.ceil(ms / 1000));

/** Leases granted before a `retry` (or an unstarted lease's expiry) fails the delivery. */
const MAX_ATTEMPTS = 10;
/** Time since creation after which a `retry` fails the delivery. */
const RETRY_WINDOW_MS = 24 * 3600_000;
const BACKOFF_BASE_MS = 30_000;
const BACKOFF_CAP_MS = 3_600_000;
const LEASE_EXPIRED_AFTER_START = 'lease_expired_after_start';
const RETRY_EXHAUSTED = 'retry_exhausted';
const CANCELLED = 'cancelled';
const ERASED = 'erased';
const ATTEMPT_LOG_LIMIT = 50;

export type DeliveryStatus = 'queued' | 'leased' | 'sending' | 'sent' | 'failed' | 'unknown';
type TerminalStatus = 'sent' | 'failed' | 'unknown';
export type FailOutcome = 'retry' | 'failed' | 'unknown';
type AttemptEvent = 'claimed' | 'started' | 'retry' | 'failed' | 'unknown' | 'sent' | 'lease_expired' | 'renotified';

export interface AttachmentRef {
  attachmentId: string;
  name: string;
  contentType: AttachmentContentType;
  size: number;
  sha256: string;
}

interface PartOutcome {
  part: string;
  status: 'sent' | 'failed';
  providerMessageIds?: string[];
  code?: string;
}

interface Lease {
  leaseId: string;
  requestId: string;
  expiresAt: number;
  started: boolean;
  claimedAt: number;
}

export interface Recipient {
  externalConversationId: string;
  externalCustomerId: string;
}

/** What an edit or unsend changes: the reply's sent delivery and the ids its connector reported (per part when it reported parts). */
export interface DeliveryTarget {
  deliveryId: string;
  providerMessageIds: string[];
  parts?: { part: string; providerMessageIds: string[] }[];
}

/** A delivery's kind: absent for a reply; `edit` / `unsend` change a sent reply. */
export type DeliveryKind = 'edit' | 'unsend';

/** A delivery as the test service stores it (the fields of the real record a connector can observe). */
export interface DeliveryRecord {
  deliveryId: string;
  workspaceId: string;
  integrationId: string;
  conversationId: string;
  messageId: string;
  seq: number;
  status: DeliveryStatus;
  /** The reply's text; an edit's new text; '' for an unsend. */
  text: string;
  kind?: DeliveryKind;
  target?: DeliveryTarget;
  attachments?: AttachmentRef[];
  textSent?: boolean;
  parts?: PartOutcome[];
  attempts: number;
  createdAt: number;
  updatedAt: number;
  notBefore: number | null;
  lease: Lease | null;
  leaseHistory: string[];
  waiting: boolean;
  completion: { leaseId: string; providerMessageIds: string[] } | null;
  lastFail: { leaseId: string; outcome: FailOutcome; code: string; responseStatus: 'queued' | 'failed' | 'unknown' | 'sent' } | null;
  providerMessageIds: string[];
  error: { outcome: string; code: string } | null;
  receipt: { status: ReceiptStatus; at: number; code: string | null; providerMessageId: string | null } | null;
  head: boolean;
  attemptLog: { at: number; event: AttemptEvent; code?: string }[];
  cancel?: { status: 'cancelled' | 'too_late'; at: number };
}

export type ReceiptStatus = 'delivered' | 'read' | 'failed';

/** Why a notification is (re-)published. */
export type NotifyReason = 'created' | 'wake' | 'retry' | 'lease_expired' | 'resend';

export interface Decision<R> {
  response: R;
  /** The record to store, or null for no change. */
  next: DeliveryRecord | null;
  /** The stored status became terminal: the next delivery of the conversation is released. */
  releasesNext: boolean;
  /** Publish the delivery's notification at `at`. */
  notify: { at: number; reason: NotifyReason } | null;
}

export const isTerminal = (status: DeliveryStatus): status is TerminalStatus => status === 'sent' || status === 'failed' || status === 'unknown';
const isLeaseLive = (lease: Lease | null, now: number): lease is Lease => lease !== null && now < lease.expiresAt;
const holdsLease = (d: DeliveryRecord, leaseId: string, now: number): boolean =>
  (d.status === 'leased' || d.status === 'sending') && d.lease?.leaseId === leaseId && isLeaseLive(d.lease, now);
const everHeld = (d: DeliveryRecord, leaseId: string): boolean => d.leaseHistory.includes(leaseId) || d.lease?.leaseId === leaseId;
const retryBudgetSpent = (d: DeliveryRecord, now: number): boolean => d.attempts >= MAX_ATTEMPTS || now - d.createdAt >= RETRY_WINDOW_MS;

/** Backoff before attempt `attempt + 1`: 30 s doubling per attempt, plus 0..50 % jitter, within [30 s, 1 h] (record.ts `backoffMs`). */
function backoffMs(attempt: number, random: number): number {
  const n = Math.max(1, Math.floor(attempt));
  const r = Math.min(Math.max(random, 0), 1);
  const nominal = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** Math.min(n - 1, 30));
  return Math.min(BACKOFF_CAP_MS, Math.max(BACKOFF_BASE_MS, Math.floor(nominal * (1 + r / 2))));
}

function withAttempt(d: DeliveryRecord, at: number, event: AttemptEvent, code?: string | null): DeliveryRecord {
  const entry = code === undefined || code === null ? { at, event } : { at, event, code };
  const log = [...d.attemptLog, entry];
  return { ...d, attemptLog: log.length > ATTEMPT_LOG_LIMIT ? log.slice(log.length - ATTEMPT_LOG_LIMIT) : log };
}

const SKIP_REASON: Record<TerminalStatus, SkipReason> = { sent: 'already_sent', failed: 'already_failed', unknown: 'outcome_unknown' };

function decided<R>(before: DeliveryRecord, response: R, next: DeliveryRecord | null, notify: Decision<R>['notify'] = null): Decision<R> {
  return { response, next, releasesNext: next !== null && !isTerminal(before.status) && isTerminal(next.status), notify };
}
const unchanged = <R>(response: R): Decision<R> => ({ response, next: null, releasesNext: false, notify: null });
const leaseLost = (): ApiError => new ApiError(409, 'lease_lost', 'the lease does not hold this delivery');
const finished = (status: DeliveryStatus): ApiError => new ApiError(409, 'delivery_finished', `the delivery already finished as ${status}`);

/** Lease expiry, applied lazily at every operation (state-machine.ts `atNow`). */
function atNow(d: DeliveryRecord, now: number): { current: DeliveryRecord; expiry: { next: DeliveryRecord; notify: Decision<unknown>['notify'] } | null } {
  if ((d.status !== 'leased' && d.status !== 'sending') || isLeaseLive(d.lease, now)) return { current: d, expiry: null };
  let next: DeliveryRecord;
  let notify: Decision<unknown>['notify'] = null;
  if (d.status === 'sending') {
    next = withAttempt({ ...d, status: 'unknown', notBefore: null, error: { outcome: 'unknown', code: LEASE_EXPIRED_AFTER_START }, updatedAt: now }, now, 'lease_expired', LEASE_EXPIRED_AFTER_START);
  } else if (retryBudgetSpent(d, now)) {
    next = withAttempt({ ...d, status: 'failed', notBefore: null, error: { outcome: 'failed', code: RETRY_EXHAUSTED }, updatedAt: now }, now, 'lease_expired', RETRY_EXHAUSTED);
  } else {
    next = withAttempt({ ...d, status: 'queued', notBefore: null, error: null, updatedAt: now }, now, 'lease_expired');
    notify = { at: now, reason: 'lease_expired' };
  }
  return { current: next, expiry: { next, notify } };
}

const applyLeaseExpiry = (d: DeliveryRecord, now: number): DeliveryRecord => atNow(d, now).current;

/** The sweeper's expiry write, or null when nothing expired. */
export function decideLeaseExpiry(d: DeliveryRecord, now: number): Decision<null> | null {
  const { expiry } = atNow(d, now);
  return expiry === null ? null : decided(d, null, expiry.next, expiry.notify);
}

/** The predecessor of `d` became terminal: `d` is the head now; a `waiting` one is notified again. */
export function decideWake(d: DeliveryRecord, now: number): Decision<null> | null {
  if (isTerminal(d.status) || (d.head && !d.waiting)) return null;
  return { response: null, next: { ...d, head: true, waiting: false, updatedAt: now }, releasesNext: false, notify: d.waiting ? { at: now, reason: 'wake' } : null };
}

export type ClaimResponse =
  | { status: 'skip'; reason: SkipReason }
  | { status: 'ready'; leaseId: string; leaseExpiresAt: number; message: { text: string; recipient: Recipient; attachments?: AttachmentRef[] } }
  | { status: 'ready'; kind: 'edit'; leaseId: string; leaseExpiresAt: number; message: { text: string; recipient: Recipient }; target: DeliveryTarget }
  | { status: 'ready'; kind: 'unsend'; leaseId: string; leaseExpiresAt: number; message: { recipient: Recipient }; target: DeliveryTarget };

const copyTarget = (t: DeliveryTarget): DeliveryTarget => ({
  deliveryId: t.deliveryId,
  providerMessageIds: [...t.providerMessageIds],
  ...(t.parts === undefined ? {} : { parts: t.parts.map((p) => ({ part: p.part, providerMessageIds: [...p.providerMessageIds] })) }),
});

function ready(d: DeliveryRecord, leaseId: string, leaseExpiresAt: number, recipient: Recipient): ClaimResponse {
  const to = { externalConversationId: recipient.externalConversationId, externalCustomerId: recipient.externalCustomerId };
  // A plain reply's claim keeps its v1 shape exactly (no `kind`, no `target`); an edit or unsend
  // names its kind and the reply it changes.
  if (d.kind === 'edit' && d.target !== undefined) return { status: 'ready', kind: 'edit', leaseId, leaseExpiresAt, message: { text: d.text, recipient: to }, target: copyTarget(d.target) };
  if (d.kind === 'unsend' && d.target !== undefined) return { status: 'ready', kind: 'unsend', leaseId, leaseExpiresAt, message: { recipient: to }, target: copyTarget(d.target) };
  const message = d.attachments !== undefined && d.attachments.length > 0 ? { text: d.text, recipient: to, attachments: d.attachments.map((a) => ({ ...a })) } : { text: d.text, recipient: to };
  return { status: 'ready', leaseId, leaseExpiresAt, message };
}

export function decideClaim(d: DeliveryRecord, input: { now: number; requestId: string; newLeaseId: string; predecessorUnfinished: boolean; recipient: Recipient }): Decision<ClaimResponse> {
  const { now } = input;
  const { current, expiry } = atNow(d, now);
  const expiryWrite = expiry?.next ?? null;
  if (isTerminal(current.status)) return decided(d, { status: 'skip', reason: SKIP_REASON[current.status] }, expiryWrite);
  if (input.predecessorUnfinished) {
    const next = current.waiting ? expiryWrite : { ...current, waiting: true, updatedAt: now };
    return decided(d, { status: 'skip', reason: 'waiting_for_previous' }, next);
  }
  if ((current.status === 'leased' || current.status === 'sending') && isLeaseLive(current.lease, now)) {
    const lease = current.lease;
    if (lease.requestId === input.requestId) return unchanged(ready(current, lease.leaseId, lease.expiresAt, input.recipient));
    throw new ApiError(503, 'lease_busy', 'the delivery is leased by another request', retryAfterSecondsFromMs(lease.expiresAt - now));
  }
  if (current.notBefore !== null && current.notBefore > now) {
    throw new ApiError(503, 'retry_delayed', 'the delivery is waiting before its next attempt', retryAfterSecondsFromMs(current.notBefore - now));
  }
  const expiresAt = now + LEASE_MS;
  const granted: DeliveryRecord = {
    ...current,
    status: 'leased',
    attempts: current.attempts + 1,
    notBefore: null,
    lease: { leaseId: input.newLeaseId, requestId: input.requestId, expiresAt, started: false, claimedAt: now },
    leaseHistory: [...current.leaseHistory, input.newLeaseId],
    waiting: false,
    head: true,
    error: null,
    updatedAt: now,
  };
  return decided(d, ready(current, input.newLeaseId, expiresAt, input.recipient), withAttempt(granted, now, 'claimed'));
}

export function decideStart(d: DeliveryRecord, input: { now: number; leaseId: string }): Decision<{ status: 'sending' | 'sent' }> {
  const { now, leaseId } = input;
  if (!everHeld(d, leaseId)) throw leaseLost();
  const current = applyLeaseExpiry(d, now);
  if (current.status === 'sent') return unchanged({ status: 'sent' });
  if (current.status === 'failed' || current.status === 'unknown') throw finished(current.status);
  if (!holdsLease(current, leaseId, now) || current.lease === null) throw leaseLost();
  if (current.status === 'sending') return unchanged({ status: 'sending' });
  const next: DeliveryRecord = { ...current, status: 'sending', lease: { ...current.lease, started: true }, updatedAt: now };
  return decided(d, { status: 'sending' }, withAttempt(next, now, 'started'));
}

export function decideExtend(d: DeliveryRecord, input: { now: number; leaseId: string }): Decision<{ leaseExpiresAt: number }> {
  const { now, leaseId } = input;
  if (!everHeld(d, leaseId)) throw leaseLost();
  if (isTerminal(d.status)) throw finished(d.status);
  if (!holdsLease(d, leaseId, now) || d.lease === null) throw leaseLost();
  const lease = d.lease;
  const capAt = lease.claimedAt + LEASE_MAX_MS;
  if (lease.expiresAt >= capAt) {
    throw new ApiError(409, 'lease_limit_reached', `a lease lives at most ${LEASE_MAX_MS / 60_000} minutes after its claim: finish, or report the outcome`);
  }
  const expiresAt = Math.min(now + LEASE_MS, capAt);
  if (expiresAt <= lease.expiresAt) return unchanged({ leaseExpiresAt: lease.expiresAt });
  return decided(d, { leaseExpiresAt: expiresAt }, { ...d, lease: { ...lease, expiresAt }, updatedAt: now });
}

export interface PartReport {
  part: string;
  status: 'sent' | 'failed';
  providerMessageIds?: readonly string[];
  code?: string;
}

function partsOf(d: DeliveryRecord): string[] {
  return [...(d.textSent === true ? [] : [TEXT_PART]), ...(d.attachments ?? []).map((a) => a.attachmentId)];
}

function checkParts(d: DeliveryRecord, parts: readonly PartReport[] | undefined): void {
  if (parts === undefined) return;
  const known = new Set(partsOf(d));
  const seen = new Set<string>();
  parts.forEach(({ part }, index) => {
    if (!known.has(part)) throw new ApiError(400, 'unknown_part', `parts[${index}].part: "${part}" is not a part of this delivery (expected one of: ${[...known].join(', ')})`);
    if (seen.has(part)) throw new ApiError(400, 'invalid_request', `parts[${index}].part: "${part}" is reported twice`);
    seen.add(part);
  });
}

function withParts(next: DeliveryRecord, parts: readonly PartReport[] | undefined): DeliveryRecord {
  if (parts === undefined) return next;
  const merged = new Map<string, PartOutcome>((next.parts ?? []).map((p) => [p.part, p]));
  for (const p of parts) {
    const outcome: PartOutcome = { part: p.part, status: p.status };
    if (p.providerMessageIds !== undefined) outcome.providerMessageIds = [...p.providerMessageIds];
    if (p.code !== undefined) outcome.code = p.code;
    merged.set(p.part, outcome);
  }
  return { ...next, parts: [...merged.values()] };
}

const sameIds = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && a.every((id, i) => id === b[i]);

export function decideComplete(d: DeliveryRecord, input: { now: number; leaseId: string; providerMessageIds: readonly string[]; parts?: readonly PartReport[] }): Decision<{ status: 'sent' }> {
  const { now, leaseId } = input;
  checkParts(d, input.parts);
  if (!everHeld(d, leaseId)) throw leaseLost();
  if (d.status === 'sent') {
    if (d.completion?.leaseId === leaseId && sameIds(d.completion.providerMessageIds, input.providerMessageIds)) return unchanged({ status: 'sent' });
    throw new ApiError(409, 'conflicting_completion', 'the delivery was already completed differently');
  }
  const current = applyLeaseExpiry(d, now);
  if (current.lease?.leaseId !== leaseId) throw leaseLost();
  const lastFail = current.lastFail;
  if (lastFail !== null && lastFail.leaseId === leaseId && lastFail.outcome !== 'unknown') {
    throw new ApiError(409, 'conflicting_completion', `this lease already reported the delivery as ${lastFail.outcome === 'retry' ? 'rejected' : 'failed'}`);
  }
  const ids = [...input.providerMessageIds];
  const next: DeliveryRecord = { ...current, status: 'sent', notBefore: null, waiting: false, completion: { leaseId, providerMessageIds: ids }, providerMessageIds: [...ids], error: null, updatedAt: now };
  return decided(d, { status: 'sent' }, withAttempt(withParts(next, input.parts), now, 'sent'));
}

type FailStatus = 'queued' | 'failed' | 'unknown' | 'sent';

export function decideFail(
  d: DeliveryRecord,
  input: { now: number; leaseId: string; outcome: FailOutcome; code: string; retryAfterMs?: number; providerMessageIds?: readonly string[]; parts?: readonly PartReport[]; random: number },
): Decision<{ status: FailStatus }> {
  const { now, leaseId, outcome, code } = input;
  checkParts(d, input.parts);
  if (!everHeld(d, leaseId)) throw leaseLost();
  if (d.status === 'sent') return unchanged({ status: 'sent' });
  const lastFail = d.lastFail;
  if (lastFail !== null && lastFail.leaseId === leaseId && lastFail.outcome === outcome && lastFail.code === code) return unchanged({ status: lastFail.responseStatus });
  const { current, expiry } = atNow(d, now);
  if (holdsLease(current, leaseId, now)) return failUnderLease(current, input);
  if (!isTerminal(current.status)) throw leaseLost();
  const cutOffWhileSending = current.status === 'unknown' && current.error?.code === LEASE_EXPIRED_AFTER_START && current.lease?.leaseId === leaseId && lastFail?.leaseId !== leaseId;
  if (cutOffWhileSending) {
    const status: 'failed' | 'unknown' = outcome === 'failed' ? 'failed' : 'unknown';
    const next: DeliveryRecord = {
      ...current,
      status,
      error: outcome === 'retry' ? current.error : { outcome, code },
      providerMessageIds: outcome !== 'retry' && input.providerMessageIds !== undefined ? [...input.providerMessageIds] : current.providerMessageIds,
      lastFail: { leaseId, outcome, code, responseStatus: status },
      updatedAt: now,
    };
    return decided(d, { status }, withAttempt(withParts(next, input.parts), now, outcome, code));
  }
  return decided(d, { status: current.status }, expiry?.next ?? null);
}

function failUnderLease(d: DeliveryRecord, input: Parameters<typeof decideFail>[1]): Decision<{ status: FailStatus }> {
  const { now, leaseId, outcome, code } = input;
  const reported = withAttempt(withParts(d, input.parts), now, outcome, code);
  if (outcome === 'retry' && retryBudgetSpent(d, now)) {
    const next: DeliveryRecord = { ...reported, status: 'failed', notBefore: null, error: { outcome: 'failed', code: RETRY_EXHAUSTED }, lastFail: { leaseId, outcome, code, responseStatus: 'failed' }, updatedAt: now };
    return decided(d, { status: 'failed' }, withAttempt(next, now, 'failed', RETRY_EXHAUSTED));
  }
  if (outcome === 'retry') {
    const notBefore = now + Math.max(0, input.retryAfterMs ?? backoffMs(d.attempts, input.random));
    const next: DeliveryRecord = { ...reported, status: 'queued', notBefore, error: null, lastFail: { leaseId, outcome, code, responseStatus: 'queued' }, updatedAt: now };
    return decided(d, { status: 'queued' }, next, { at: notBefore, reason: 'retry' });
  }
  const next: DeliveryRecord = {
    ...reported,
    status: outcome,
    notBefore: null,
    error: { outcome, code },
    providerMessageIds: input.providerMessageIds !== undefined ? [...input.providerMessageIds] : d.providerMessageIds,
    lastFail: { leaseId, outcome, code, responseStatus: outcome },
    updatedAt: now,
  };
  return decided(d, { status: outcome }, next);
}

export function decideReceipt(d: DeliveryRecord, input: { now: number; status: ReceiptStatus; code?: string; at?: number; providerMessageId?: string }): Decision<{ status: 'sent' }> {
  if (d.status !== 'sent') throw new ApiError(409, 'delivery_not_sent', `the delivery is ${d.status}: receipts are taken for sent deliveries only`);
  const current = d.receipt?.status;
  const advances = current === undefined || (current === 'delivered' && input.status !== 'delivered');
  if (!advances) return unchanged({ status: 'sent' });
  const receipt = { status: input.status, at: input.at ?? input.now, code: input.code ?? null, providerMessageId: input.providerMessageId ?? null };
  return decided(d, { status: 'sent' }, { ...d, receipt, updatedAt: input.now });
}

/** The operator's recall (state-machine.ts `decideCancel`; one request per call here). */
export function decideCancel(d: DeliveryRecord, now: number): Decision<'cancelled' | 'too_late'> {
  if (d.status === 'failed' && d.error?.code === CANCELLED) return unchanged('cancelled');
  const current = applyLeaseExpiry(d, now);
  if (current.status === 'queued' || current.status === 'leased') {
    const next: DeliveryRecord = { ...current, status: 'failed', notBefore: null, waiting: false, error: { outcome: 'failed', code: CANCELLED }, cancel: { status: 'cancelled', at: now }, updatedAt: now };
    return decided(d, 'cancelled', withAttempt(next, now, 'failed', CANCELLED));
  }
  return decided(d, 'too_late', { ...current, cancel: { status: 'too_late', at: now }, updatedAt: now });
}

/** A customer's erasure ends an unfinished delivery as `failed` `erased`. */
export function decideErase(d: DeliveryRecord, now: number): Decision<null> | null {
  if (isTerminal(d.status)) return null;
  const next: DeliveryRecord = { ...d, status: 'failed', notBefore: null, waiting: false, error: { outcome: 'failed', code: ERASED }, updatedAt: now };
  return decided(d, null, withAttempt(next, now, 'failed', ERASED));
}

/** Which file a connector may download: only under the live current lease (state-machine.ts `decideAttachmentFetch`). */
export function decideAttachmentFetch(d: DeliveryRecord, input: { now: number; leaseId: string; attachmentId: string }): AttachmentRef {
  if (isTerminal(d.status)) throw new ApiError(409, 'delivery_finished', `the delivery is already ${d.status}`);
  if (!holdsLease(d, input.leaseId, input.now) || (d.status !== 'leased' && d.status !== 'sending')) throw leaseLost();
  const file = d.attachments?.find((a) => a.attachmentId === input.attachmentId);
  if (file === undefined) throw new ApiError(404, 'attachment_not_found', `attachmentId: "${input.attachmentId}" is not an attachment of this delivery`);
  return file;
}

/** A new delivery at the end of its conversation's queue (state-machine.ts `decideAppend`): the head exactly when nothing before it is unfinished. */
export function newDelivery(input: {
  deliveryId: string;
  workspaceId: string;
  integrationId: string;
  conversationId: string;
  messageId: string;
  seq: number;
  text: string;
  attachments?: AttachmentRef[];
  textSent?: boolean;
  kind?: DeliveryKind;
  target?: DeliveryTarget;
  head: boolean;
  now: number;
}): DeliveryRecord {
  const { attachments, textSent, kind, target, now, ...fields } = input;
  return {
    ...fields,
    status: 'queued',
    ...(kind === undefined || target === undefined ? {} : { kind, target: copyTarget(target) }),
    ...(attachments !== undefined && attachments.length > 0 ? { attachments } : {}),
    ...(textSent === true ? { textSent } : {}),
    attempts: 0,
    createdAt: now,
    updatedAt: now,
    notBefore: null,
    lease: null,
    leaseHistory: [],
    waiting: false,
    completion: null,
    lastFail: null,
    providerMessageIds: [],
    error: null,
    receipt: null,
    attemptLog: [],
  };
}
