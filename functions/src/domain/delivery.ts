/**
 * The delivery state machine (decisions.md section 5), as pure functions.
 *
 * No Firebase, no I/O, no clock, no randomness: the caller passes `now`, fresh lease ids and a
 * random number for jitter, reads the record (and the facts about its conversation) inside a
 * Firestore transaction, calls one `decide*` function, writes `next` when it is not null, and
 * acts on `effects` (publishing lives in triggers, see docs/architecture.md). Errors are thrown as
 * the `ApiError` subclasses of `../errors`; a throwing call never asks for a write.
 *
 * Stored states: queued, leased, sending, sent, failed, unknown. Terminal: sent, failed, unknown.
 *
 * Decisions taken here where decisions.md is silent (also listed in docs/ by the integrator):
 *
 *  - A lease is live while `now < lease.expiresAt`; at `now === expiresAt` it has expired.
 *  - Lease expiry is applied identically by the sweeper (`decideLeaseExpiry`) and lazily at the
 *    start of claim/start/complete/fail (`applyLeaseExpiry`), so correctness never depends on the
 *    sweeper having run:
 *      leased + expired  -> queued (claimable again, notification re-published: notifyAt = now);
 *                           but if the retry budget is spent (attempts >= 10 or 24 h since
 *                           creation) -> failed, code `retry_exhausted` (this keeps
 *                           `attempts <= MAX_ATTEMPTS` and `leaseHistory` bounded);
 *      sending + expired -> unknown, code `lease_expired_after_start`, releases the next one.
 *  - The retry budget (attempts, 24 h) is checked when a lease ends (fail `retry`, expiry). A claim
 *    of a queued delivery is never refused for age: a delivery whose connector was down for a day
 *    still gets its first attempt.
 *  - complete is accepted from the LAST lease (`lease.leaseId`), live or expired, whatever the
 *    state, because late completion is the truth — including over `unknown` (both the
 *    `lease_expired_after_start` kind and a connector's own fail `unknown`: a completion resolves
 *    the ambiguity) and over a `failed` the service decided alone (retry budget spent on expiry).
 *    It is refused with 409 `conflicting_completion` when that same lease already reported a
 *    definite fail (`retry` or `failed`): the connector contradicts itself, and we keep its first
 *    word. An older lease (held it once, not last) gets 409 `lease_lost`; a lease that never held it
 *    also gets `lease_lost`, even after `sent`. After `sent`: same lease + same ids (same order)
 *    -> `sent` with no write; anything else -> `conflicting_completion`.
 *    A late completion that turns `unknown` into `sent` does not set `releasesNext` again: the
 *    successor was released when the delivery first became terminal.
 *  - fail: a lease that never held it -> 409 `lease_lost`. `sent` -> `sent`, no change. The same
 *    call (same lease, outcome and code) repeated -> the recorded response, no write (only the
 *    latest fail is remembered). The lease must hold the delivery (current, live, leased/sending);
 *    otherwise a non-terminal delivery answers 409 `lease_lost` (e.g. an expired lease on a
 *    `leased` delivery), and a terminal one answers 200 with its current status (like `sent`),
 *    with one refinement: the lease cut off by `lease_expired_after_start` may still report what
 *    happened, so a late fail `failed` turns that `unknown` into `failed`, a late fail `unknown`
 *    records its code and partial provider ids, and a late `retry` leaves it `unknown` (it cannot
 *    be re-queued: its successor was already released). No re-release either way.
 *  - fail `retry` with no `retryAfterMs`: `backoffMs(attempts, random)`, i.e. 30 s * 2^(n-1) plus
 *    0..50 % jitter, clamped to [30 s, 1 h]. `retryAfterMs` (0..1 h, validated by the schema) is
 *    used as given. Provider ids sent with a `retry` are ignored (a retry means nothing was sent).
 *  - `error` is `{ outcome, code }` exactly when the status is failed or unknown. A spent retry
 *    budget is `{ outcome: 'failed', code: 'retry_exhausted' }`; the connector's own last code
 *    stays in `lastFail`.
 *  - start: a lease that never held it -> 409 `lease_lost`; `sent` -> `sent`; failed/unknown ->
 *    409 `delivery_finished`; leased under the live current lease -> `sending`; sending under the
 *    live current lease -> `sending` (no write); anything else -> 409 `lease_lost`.
 *  - claim: a retried claim (same requestId, live lease) gets the same lease with its original
 *    expiry (never extended) and does not count as an attempt. A claim that gets
 *    `waiting_for_previous` sets `waiting` (no write if already set); a granted lease clears it.
 */
import { ConflictError, NotFoundError, ServiceUnavailableError, retryAfterSecondsFromMs } from '../errors';

// ---------------------------------------------------------------------------------------------
// Constants

/** Lease duration (spec 2.5). */
export const LEASE_MS = 120_000;
/** Leases granted before a `retry` (or an unstarted lease's expiry) fails the delivery. */
export const MAX_ATTEMPTS = 10;
/** Time since creation after which a `retry` (or an unstarted lease's expiry) fails the delivery. */
export const RETRY_WINDOW_MS = 24 * 3600_000;
/** First backoff step. */
export const BACKOFF_BASE_MS = 30_000;
/** Longest backoff. */
export const BACKOFF_CAP_MS = 3_600_000;

// ---------------------------------------------------------------------------------------------
// Types

export type DeliveryStatus = 'queued' | 'leased' | 'sending' | 'sent' | 'failed' | 'unknown';
export type TerminalStatus = 'sent' | 'failed' | 'unknown';
export type FailOutcome = 'retry' | 'failed' | 'unknown';
export type FailResponseStatus = 'queued' | 'failed' | 'unknown' | 'sent';

export interface DeliveryLease {
  leaseId: string;
  requestId: string;
  expiresAt: number;
  started: boolean;
}

/** Stored at `workspaces/{ws}/deliveries/{deliveryId}` (docs/architecture.md). Times: epoch ms. */
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
  /** Copied from the reply at creation (replies are immutable). */
  text: string;
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
}

export interface Effects {
  /** The stored status went from non-terminal to terminal: release (wake) the next delivery. */
  releasesNext: boolean;
  /** Re-publish this delivery's notification at this time (retry, expired lease, wake). */
  notifyAt: number | null;
}

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

export type SkipReason = 'already_sent' | 'already_failed' | 'outcome_unknown' | 'waiting_for_previous';

export type ClaimResponse =
  | { status: 'skip'; reason: SkipReason }
  | {
      status: 'ready';
      leaseId: string;
      leaseExpiresAt: number;
      message: { text: string; recipient: Recipient };
    };

export interface StartResponse {
  status: 'sending' | 'sent';
}
export interface CompleteResponse {
  status: 'sent';
}
export interface FailResponse {
  status: FailResponseStatus;
}

export interface ClaimInput {
  now: number;
  requestId: string;
  /** A fresh, unguessable lease id (used only when a new lease is granted). */
  newLeaseId: string;
  /** An earlier delivery (lower seq) of the same conversation is not terminal. */
  predecessorUnfinished: boolean;
  /** See `recipientFor`. */
  recipient: Recipient;
}
export interface StartInput {
  now: number;
  leaseId: string;
}
export interface CompleteInput {
  now: number;
  leaseId: string;
  providerMessageIds: readonly string[];
}
export interface FailInput {
  now: number;
  leaseId: string;
  outcome: FailOutcome;
  code: string;
  retryAfterMs?: number | undefined;
  providerMessageIds?: readonly string[] | undefined;
  /** Uniform in [0, 1), for backoff jitter. */
  random: number;
}

// ---------------------------------------------------------------------------------------------
// Small helpers

export const TERMINAL_STATUSES: readonly TerminalStatus[] = ['sent', 'failed', 'unknown'];

export function isTerminal(status: DeliveryStatus): status is TerminalStatus {
  return status === 'sent' || status === 'failed' || status === 'unknown';
}

/** A lease is live strictly before its expiry instant. */
export function isLeaseLive(lease: DeliveryLease | null, now: number): lease is DeliveryLease {
  return lease !== null && now < lease.expiresAt;
}

/** True when `leaseId` currently holds the delivery: its current lease, live, leased or sending. */
export function holdsLease(d: DeliveryRecord, leaseId: string, now: number): boolean {
  return (
    (d.status === 'leased' || d.status === 'sending') &&
    d.lease !== null &&
    d.lease.leaseId === leaseId &&
    isLeaseLive(d.lease, now)
  );
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

/** spec 2.6 / decisions 5: the most recent customer sender, else the most recent sender. */
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
 * identically, decisions 1). Returns the record for chaining.
 */
export function visibleDelivery(
  d: DeliveryRecord | null | undefined,
  caller: { workspaceId: string; integrationId: string },
): DeliveryRecord {
  if (
    d === null ||
    d === undefined ||
    d.integrationId !== caller.integrationId ||
    d.workspaceId !== caller.workspaceId
  ) {
    throw new NotFoundError('delivery_not_found', 'delivery not found');
  }
  return d;
}

/** A new delivery (status queued, no lease). The trigger creates it idempotently. */
export function newDelivery(input: {
  deliveryId: string;
  workspaceId: string;
  integrationId: string;
  conversationId: string;
  messageId: string;
  seq: number;
  text: string;
  now: number;
}): DeliveryRecord {
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
  };
}

const NO_EFFECTS: Effects = { releasesNext: false, notifyAt: null };

function effects(before: DeliveryRecord, next: DeliveryRecord | null, notifyAt: number | null): Effects {
  return {
    releasesNext: next !== null && !isTerminal(before.status) && isTerminal(next.status),
    notifyAt,
  };
}

function sameIds(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((id, i) => id === b[i]);
}

function everHeld(d: DeliveryRecord, leaseId: string): boolean {
  return d.leaseHistory.includes(leaseId) || d.lease?.leaseId === leaseId;
}

function leaseLost(): ConflictError {
  return new ConflictError('lease_lost', 'the lease does not hold this delivery');
}

const SKIP_REASON: Record<TerminalStatus, SkipReason> = {
  sent: 'already_sent',
  failed: 'already_failed',
  unknown: 'outcome_unknown',
};

export const LEASE_EXPIRED_AFTER_START = 'lease_expired_after_start';
export const RETRY_EXHAUSTED = 'retry_exhausted';

// ---------------------------------------------------------------------------------------------
// Lease expiry (sweeper and lazy application)

interface Expiry {
  next: DeliveryRecord;
  notifyAt: number | null;
}

/**
 * What lease expiry does to `d` at `now`, or null when nothing (no leased/sending delivery with
 * an expired lease). A leased/sending record without a lease (never written by this module) is
 * treated as expired.
 */
function expire(d: DeliveryRecord, now: number): Expiry | null {
  if (d.status !== 'leased' && d.status !== 'sending') return null;
  if (isLeaseLive(d.lease, now)) return null;
  if (d.status === 'sending') {
    return {
      next: {
        ...d,
        status: 'unknown',
        notBefore: null,
        error: { outcome: 'unknown', code: LEASE_EXPIRED_AFTER_START },
        updatedAt: now,
      },
      notifyAt: null,
    };
  }
  if (retryBudgetSpent(d, now)) {
    return {
      next: {
        ...d,
        status: 'failed',
        notBefore: null,
        error: { outcome: 'failed', code: RETRY_EXHAUSTED },
        updatedAt: now,
      },
      notifyAt: null,
    };
  }
  return {
    next: { ...d, status: 'queued', notBefore: null, error: null, updatedAt: now },
    notifyAt: now,
  };
}

/**
 * The record as it is at `now` once lease expiry is applied, whether or not the sweeper ran.
 * Returns the input object itself when nothing expired.
 */
export function applyLeaseExpiry(d: DeliveryRecord, now: number): DeliveryRecord {
  return expire(d, now)?.next ?? d;
}

/**
 * For the sweeper: null when nothing to do; otherwise the write and its effects
 * (leased -> queued + notifyAt now; sending -> unknown + releasesNext; budget spent -> failed).
 */
export function decideLeaseExpiry(d: DeliveryRecord, now: number): Decision<null> | null {
  const x = expire(d, now);
  if (x === null) return null;
  return { response: null, next: x.next, effects: effects(d, x.next, x.notifyAt) };
}

/**
 * The predecessor of `d` became terminal. If `d` is waiting (a claim saw `waiting_for_previous`),
 * clear the flag and re-publish its notification now; otherwise nothing (null).
 */
export function decideWake(d: DeliveryRecord, now: number): Decision<null> | null {
  if (!d.waiting || isTerminal(d.status)) return null;
  return { response: null, next: { ...d, waiting: false, updatedAt: now }, effects: { releasesNext: false, notifyAt: now } };
}

// ---------------------------------------------------------------------------------------------
// claim

export function decideClaim(d: DeliveryRecord, input: ClaimInput): Decision<ClaimResponse> {
  const { now } = input;
  const x = expire(d, now);
  const cur = x?.next ?? d;
  // Lease-expiry write that must happen even if the claim itself does not change anything.
  const expired = x === null ? null : x.next;

  if (isTerminal(cur.status)) {
    return {
      response: { status: 'skip', reason: SKIP_REASON[cur.status] },
      next: expired,
      effects: effects(d, expired, null),
    };
  }

  if (input.predecessorUnfinished) {
    const next = cur.waiting ? expired : { ...cur, waiting: true, updatedAt: now };
    return {
      response: { status: 'skip', reason: 'waiting_for_previous' },
      next,
      effects: effects(d, next, null),
    };
  }

  if ((cur.status === 'leased' || cur.status === 'sending') && isLeaseLive(cur.lease, now)) {
    const lease = cur.lease;
    if (lease.requestId === input.requestId) {
      return {
        response: ready(cur, lease.leaseId, lease.expiresAt, input.recipient),
        next: null,
        effects: NO_EFFECTS,
      };
    }
    throw new ServiceUnavailableError(
      'lease_busy',
      'the delivery is leased by another request',
      retryAfterSecondsFromMs(lease.expiresAt - now),
    );
  }

  // Here cur.status is 'queued' (leased/sending without a live lease were expired above).
  if (cur.notBefore !== null && cur.notBefore > now) {
    throw new ServiceUnavailableError(
      'retry_delayed',
      'the delivery is waiting before its next attempt',
      retryAfterSecondsFromMs(cur.notBefore - now),
    );
  }

  if (everHeld(cur, input.newLeaseId)) {
    // A programming error (lease ids are random); never hand out a lease id twice.
    throw new Error('newLeaseId was already used for this delivery');
  }
  const expiresAt = now + LEASE_MS;
  const next: DeliveryRecord = {
    ...cur,
    status: 'leased',
    attempts: cur.attempts + 1,
    notBefore: null,
    lease: { leaseId: input.newLeaseId, requestId: input.requestId, expiresAt, started: false },
    leaseHistory: [...cur.leaseHistory, input.newLeaseId],
    waiting: false,
    error: null,
    updatedAt: now,
  };
  return {
    response: ready(cur, input.newLeaseId, expiresAt, input.recipient),
    next,
    effects: effects(d, next, null),
  };
}

function ready(d: DeliveryRecord, leaseId: string, leaseExpiresAt: number, recipient: Recipient): ClaimResponse {
  return {
    status: 'ready',
    leaseId,
    leaseExpiresAt,
    message: {
      text: d.text,
      recipient: {
        externalConversationId: recipient.externalConversationId,
        externalCustomerId: recipient.externalCustomerId,
      },
    },
  };
}

// ---------------------------------------------------------------------------------------------
// start

export function decideStart(d: DeliveryRecord, input: StartInput): Decision<StartResponse> {
  const { now, leaseId } = input;
  if (!everHeld(d, leaseId)) throw leaseLost();
  const cur = applyLeaseExpiry(d, now);
  if (cur.status === 'sent') return { response: { status: 'sent' }, next: null, effects: NO_EFFECTS };
  if (cur.status === 'failed' || cur.status === 'unknown') {
    throw new ConflictError('delivery_finished', `the delivery already finished as ${cur.status}`);
  }
  if (!holdsLease(cur, leaseId, now)) throw leaseLost();
  if (cur.status === 'sending') return { response: { status: 'sending' }, next: null, effects: NO_EFFECTS };
  // leased, live, ours.
  const lease = cur.lease as DeliveryLease; // holdsLease checked it is non-null
  const next: DeliveryRecord = { ...cur, status: 'sending', lease: { ...lease, started: true }, updatedAt: now };
  return { response: { status: 'sending' }, next, effects: effects(d, next, null) };
}

// ---------------------------------------------------------------------------------------------
// complete

export function decideComplete(d: DeliveryRecord, input: CompleteInput): Decision<CompleteResponse> {
  const { now, leaseId } = input;
  if (!everHeld(d, leaseId)) throw leaseLost();

  if (d.status === 'sent') {
    if (d.completion !== null && d.completion.leaseId === leaseId && sameIds(d.completion.providerMessageIds, input.providerMessageIds)) {
      return { response: { status: 'sent' }, next: null, effects: NO_EFFECTS };
    }
    throw new ConflictError('conflicting_completion', 'the delivery was already completed differently');
  }

  const cur = applyLeaseExpiry(d, now);
  if (cur.lease === null || cur.lease.leaseId !== leaseId) throw leaseLost();
  if (cur.lastFail !== null && cur.lastFail.leaseId === leaseId && cur.lastFail.outcome !== 'unknown') {
    throw new ConflictError(
      'conflicting_completion',
      `this lease already reported the delivery as ${cur.lastFail.outcome === 'retry' ? 'rejected' : 'failed'}`,
    );
  }
  const ids = [...input.providerMessageIds];
  const next: DeliveryRecord = {
    ...cur,
    status: 'sent',
    notBefore: null,
    waiting: false,
    completion: { leaseId, providerMessageIds: ids },
    providerMessageIds: [...ids],
    error: null,
    updatedAt: now,
  };
  return { response: { status: 'sent' }, next, effects: effects(d, next, null) };
}

// ---------------------------------------------------------------------------------------------
// fail

export function decideFail(d: DeliveryRecord, input: FailInput): Decision<FailResponse> {
  const { now, leaseId, outcome, code } = input;
  if (!everHeld(d, leaseId)) throw leaseLost();
  if (d.status === 'sent') return { response: { status: 'sent' }, next: null, effects: NO_EFFECTS };
  const lf = d.lastFail;
  if (lf !== null && lf.leaseId === leaseId && lf.outcome === outcome && lf.code === code) {
    return { response: { status: lf.responseStatus }, next: null, effects: NO_EFFECTS };
  }

  const x = expire(d, now);
  const cur = x?.next ?? d;

  if (holdsLease(cur, leaseId, now)) {
    // cur === d here: a live lease means nothing expired.
    return failTransition(d, cur, input);
  }

  if (!isTerminal(cur.status)) throw leaseLost();

  // Late report from the lease that was cut off while sending: let it refine the record.
  if (
    cur.status === 'unknown' &&
    cur.error?.code === LEASE_EXPIRED_AFTER_START &&
    cur.lease?.leaseId === leaseId &&
    (lf === null || lf.leaseId !== leaseId)
  ) {
    const status: 'failed' | 'unknown' = outcome === 'failed' ? 'failed' : 'unknown';
    const next: DeliveryRecord = {
      ...cur,
      status,
      error: outcome === 'retry' ? cur.error : { outcome, code },
      providerMessageIds:
        outcome !== 'retry' && input.providerMessageIds !== undefined
          ? [...input.providerMessageIds]
          : cur.providerMessageIds,
      lastFail: { leaseId, outcome, code, responseStatus: status },
      updatedAt: now,
    };
    return { response: { status }, next, effects: effects(d, next, null) };
  }

  // Any other lease that once held a finished delivery: its status, nothing changes (except a
  // pending lease-expiry write).
  const next = x === null ? null : x.next;
  return { response: { status: cur.status }, next, effects: effects(d, next, null) };
}

function failTransition(d: DeliveryRecord, cur: DeliveryRecord, input: FailInput): Decision<FailResponse> {
  const { now, leaseId, outcome, code } = input;
  if (outcome === 'retry') {
    if (retryBudgetSpent(cur, now)) {
      const next: DeliveryRecord = {
        ...cur,
        status: 'failed',
        notBefore: null,
        error: { outcome: 'failed', code: RETRY_EXHAUSTED },
        lastFail: { leaseId, outcome, code, responseStatus: 'failed' },
        updatedAt: now,
      };
      return { response: { status: 'failed' }, next, effects: effects(d, next, null) };
    }
    const delay = input.retryAfterMs ?? backoffMs(cur.attempts, input.random);
    const notBefore = now + Math.max(0, delay);
    const next: DeliveryRecord = {
      ...cur,
      status: 'queued',
      notBefore,
      error: null,
      lastFail: { leaseId, outcome, code, responseStatus: 'queued' },
      updatedAt: now,
    };
    return { response: { status: 'queued' }, next, effects: effects(d, next, notBefore) };
  }
  const next: DeliveryRecord = {
    ...cur,
    status: outcome,
    notBefore: null,
    error: { outcome, code },
    providerMessageIds: input.providerMessageIds !== undefined ? [...input.providerMessageIds] : cur.providerMessageIds,
    lastFail: { leaseId, outcome, code, responseStatus: outcome },
    updatedAt: now,
  };
  return { response: { status: outcome }, next, effects: effects(d, next, null) };
}

// ---------------------------------------------------------------------------------------------
// undeliverable (publishing failed permanently)

/**
 * The notification of `d` cannot be published for good (topic missing, no permission, replies
 * disabled): record `code` as a failure so the reply shows why and the conversation is not
 * blocked forever (decisions 5). A delivery a connector is working on under a live lease is left
 * alone (it already has its notification); a terminal one too.
 */
export function decideUndeliverable(d: DeliveryRecord, code: string, now: number): Decision<null> | null {
  if (isTerminal(d.status) || isLeaseLive(d.lease, now)) return null;
  const next: DeliveryRecord = { ...d, status: 'failed', error: { outcome: 'failed', code }, waiting: false, notBefore: null, updatedAt: now };
  return { response: null, next, effects: effects(d, next, null) };
}
