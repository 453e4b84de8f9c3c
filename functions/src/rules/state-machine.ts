/**
 * The delivery state machine (docs/contract.md#delivery-states) as pure functions: the
 * caller reads the record inside a transaction, calls one `decide*` function with `now` (and fresh
 * lease ids, a random number), writes `next` when it is not null and acts on `effects`
 * (functions/src/deliveries/transition.ts does all of that). Refusals are thrown as `ApiError`s and never ask for a write.
 * Each rule's reasoning stands above its function; docs/decisions.md ("Delivery") sums them up.
 */
import { BadRequestError, ConflictError, NotFoundError, ServiceUnavailableError, retryAfterSecondsFromMs } from './errors';
import { TEXT_PART } from '../contract';
import { shownFileName } from '../contract/file-names';
import {
  CANCELLED,
  ERASED,
  LEASE_MAX_MS,
  LEASE_MS,
  backoffMs,
  everHeld,
  holdsLease,
  isLeaseLive,
  isTerminal,
  leaseClaimedAt,
  NOT_CLAIMED,
  RENOTIFY_MAX_INTERVAL_MS,
  retryBudgetSpent,
  withAttempt,
  type AttachmentRef,
  type DeliveryTarget,
  type PartOutcome,
  type Decision,
  type DeliveryNotification,
  type DeliveryRecord,
  type Effects,
  type FailOutcome,
  type Notify,
  type PreviousDelivery,
  type ReceiptStatus,
  type Recipient,
  type TerminalStatus,
  newDelivery,
  traceIdOfDelivery,
} from './record';
// The answers of the connector's operations are the types of their response schemas.
import type { ReplyTemplate } from '../contract/templates';
import type { ClaimResponse, ClaimTarget, CompleteResponse, ExtendResponse, FailResponse, ReceiptResponse, StartResponse } from './answers';
import { appendToQueue, type QueueTail } from './ordering';
import { claimConversation, type Metadata } from './metadata';
import type { StartAddress, StartedThread } from './starts';

// Why a claim answers `skip`: the contract's list (SKIP_REASONS), shared with the response schema and the SDK.
import type { LifecycleKind, SkipReason } from '../contract';

/** The console's recall answer (not an HTTP response: it is written on the reply). */
export interface CancelResponse {
  status: 'cancelled' | 'too_late';
}

export interface ClaimInput {
  now: number;
  requestId: string;
  /** A fresh, unguessable lease id (used only when a new lease is granted). */
  newLeaseId: string;
  /** An earlier delivery of the conversation is not terminal yet (./ordering.ts). */
  predecessorUnfinished: boolean;
  recipient: Recipient;
  /** The conversation's connector metadata (./metadata.ts): a `ready` answer carries it as `conversation.metadata` when not empty. */
  metadata?: Metadata | undefined;
}
export interface StartInput {
  now: number;
  leaseId: string;
}
export interface ExtendInput {
  now: number;
  leaseId: string;
}
export interface CompleteInput {
  now: number;
  leaseId: string;
  providerMessageIds: readonly string[];
  parts?: readonly PartReport[] | undefined;
  /** A start's thread, as the channel made it (required for a start, ignored otherwise). */
  conversation?: StartedThread | undefined;
}

/** One entry of a `parts` report as the schema validated it. */
interface PartReport {
  part: string;
  status: 'sent' | 'failed';
  providerMessageIds?: readonly string[] | undefined;
  code?: string | undefined;
}
export interface FailInput {
  now: number;
  leaseId: string;
  outcome: FailOutcome;
  code: string;
  retryAfterMs?: number | undefined;
  providerMessageIds?: readonly string[] | undefined;
  parts?: readonly PartReport[] | undefined;
  /** Uniform in [0, 1), for backoff jitter. */
  random: number;
}
export interface ReceiptInput {
  now: number;
  status: ReceiptStatus;
  /** Required (by the schema) for `failed`. */
  code?: string | undefined;
  /** The channel's time of the event; `now` when absent. */
  at?: number | undefined;
  providerMessageId?: string | undefined;
}

/**
 * The receipt's field rule that its schema's types cannot state: a `failed` receipt names its code
 * (400 `invalid_request` naming the field). The service's schema (functions/src/deliveries/schemas.ts)
 * and the SDK's test service both ask it.
 */
export function receiptProblems(receipt: { status: string; code?: string | undefined }): Array<{ path: string[]; message: string }> {
  return receipt.status === 'failed' && receipt.code === undefined ? [{ path: ['code'], message: 'required when status is failed' }] : [];
}

export interface CancelInput {
  now: number;
  /** Epoch ms of the console's request (`cancel.requestedAt` on the reply): identifies the request. */
  requestedAt: number;
}

/** `error.code` of a delivery whose lease expired after start: nobody knows whether it was sent. */
const LEASE_EXPIRED_AFTER_START = 'lease_expired_after_start';
/** `error.code` of a delivery whose retry budget (attempts, 24 h) is spent. */
const RETRY_EXHAUSTED = 'retry_exhausted';

const SKIP_REASON: Record<TerminalStatus, SkipReason> = {
  sent: 'already_sent',
  failed: 'already_failed',
  unknown: 'outcome_unknown',
};

const NO_EFFECTS: Effects = { releasesNext: false, notify: null };

/** The effects of writing `next` over `before`: a first terminal status releases the next delivery. */
function effectsOf(before: DeliveryRecord, next: DeliveryRecord | null, notify: Notify | null = null): Effects {
  return { releasesNext: next !== null && !isTerminal(before.status) && isTerminal(next.status), notify };
}

/** The decision to write `next` (or nothing, when null) and answer `response`. */
function decided<R>(before: DeliveryRecord, response: R, next: DeliveryRecord | null, notify: Notify | null = null): Decision<R> {
  return { response, next, effects: effectsOf(before, next, notify) };
}

const unchanged = <R>(response: R): Decision<R> => ({ response, next: null, effects: NO_EFFECTS });

function sameIds(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((id, i) => id === b[i]);
}

function leaseLost(): ConflictError {
  return new ConflictError('lease_lost', 'the lease does not hold this delivery');
}

// ---------------------------------------------------------------------------------------------
// Lease expiry

/** The record as it is at `now`, and the expiry write it needs (null when nothing expired). */
interface AtNow {
  current: DeliveryRecord;
  expiry: { next: DeliveryRecord; notify: Notify | null } | null;
}

/**
 * Lease expiry, the one way it is applied: lazily at the start of every operation and by the
 * sweeper alike, so correctness never depends on the sweeper having run.
 *  - leased + expired  -> queued (claimable again; the sweeper re-publishes its notification), or
 *                         failed `retry_exhausted` when the retry budget is spent (this keeps
 *                         `attempts <= MAX_ATTEMPTS` and `leaseHistory` bounded);
 *  - sending + expired -> unknown `lease_expired_after_start` (it may have been sent), which
 *                         releases the next delivery.
 * A leased/sending record without a lease (never written by this module) counts as expired.
 */
function atNow(d: DeliveryRecord, now: number): AtNow {
  if ((d.status !== 'leased' && d.status !== 'sending') || isLeaseLive(d.lease, now)) return { current: d, expiry: null };
  let next: DeliveryRecord;
  let notify: Notify | null = null;
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

/** The record as it is at `now` once lease expiry is applied; the input object itself when nothing expired. */
export function applyLeaseExpiry(d: DeliveryRecord, now: number): DeliveryRecord {
  return atNow(d, now).current;
}

/** For the sweeper: the expiry write and its effects (notification, release), or null when nothing expired. */
export function decideLeaseExpiry(d: DeliveryRecord, now: number): Decision<null> | null {
  const { expiry } = atNow(d, now);
  return expiry === null ? null : decided(d, null, expiry.next, expiry.notify);
}

// ---------------------------------------------------------------------------------------------
// Wake

/**
 * The predecessor of `d` became terminal, so `d` is now the first unfinished delivery of its
 * conversation: mark it `head` (it joins the catch-up list when queued). A delivery whose claim
 * was answered `waiting_for_previous` is `waiting`: clear the flag and re-publish its notification
 * now, so its connector claims it again. Terminal, or already head and not waiting: null.
 */
export function decideWake(d: DeliveryRecord, now: number): Decision<null> | null {
  if (isTerminal(d.status) || (d.head === true && !d.waiting)) return null;
  const notify = d.waiting ? ({ at: now, reason: 'wake' } as const) : null;
  return { response: null, next: { ...d, head: true, waiting: false, updatedAt: now }, effects: { releasesNext: false, notify } };
}

// ---------------------------------------------------------------------------------------------
// claim

/**
 * claim (docs/contract.md#claim):
 *  - terminal -> `skip` with `already_sent` / `already_failed` / `outcome_unknown`;
 *  - an earlier delivery of the conversation unfinished -> `skip` `waiting_for_previous`, and the
 *    delivery is marked `waiting` (no write if already marked) so its predecessor wakes it;
 *  - a retried claim (same requestId, live lease) gets the same lease with its current expiry
 *    (the claim's or the latest `extend`'s; a retried claim never extends it itself) and does not
 *    count as an attempt; another request -> 503 `lease_busy`;
 *  - queued before `notBefore` -> 503 `retry_delayed`;
 *  - otherwise a new 120 s lease (`attempts + 1`, `waiting` cleared). A claim is never refused for
 *    age: a delivery whose connector was down for a day still gets its first attempt (the retry
 *    budget is checked when a lease ends).
 * A lease expiry found on the way is written even when the claim itself changes nothing.
 */
export function decideClaim(d: DeliveryRecord, input: ClaimInput): Decision<ClaimResponse> {
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
    if (lease.requestId === input.requestId) return unchanged(ready(current, lease.leaseId, lease.expiresAt, input.recipient, input.metadata));
    throw new ServiceUnavailableError('lease_busy', 'the delivery is leased by another request', retryAfterSecondsFromMs(lease.expiresAt - now));
  }

  // Here the status is 'queued' (leased/sending without a live lease expired above).
  if (current.notBefore !== null && current.notBefore > now) {
    throw new ServiceUnavailableError('retry_delayed', 'the delivery is waiting before its next attempt', retryAfterSecondsFromMs(current.notBefore - now));
  }
  if (everHeld(current, input.newLeaseId)) {
    // A programming error (lease ids are random); never hand out a lease id twice.
    throw new Error('newLeaseId was already used for this delivery');
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
    // A granted claim proves nothing earlier is unfinished (records from before `head` learn it here).
    head: true,
    error: null,
    updatedAt: now,
  };
  return decided(d, ready(current, input.newLeaseId, expiresAt, input.recipient, input.metadata), withAttempt(granted, now, 'claimed'));
}

function ready(d: DeliveryRecord, leaseId: string, leaseExpiresAt: number, recipient: Recipient, metadata: Metadata | undefined): ClaimResponse {
  const to = { externalConversationId: recipient.externalConversationId, externalCustomerId: recipient.externalCustomerId };
  // Every `ready` answer of the conversation carries its metadata, and none when it has none: a
  // connector that never sends metadata never sees the key (docs/contract.md#claim).
  const conversation = claimConversation(metadata);
  // A start goes to an address: there is no thread yet (its `complete` names the one the channel made).
  if (d.start !== undefined) {
    const message = { text: d.text, ...(d.template !== undefined ? { template: copyTemplate(d.template) } : {}), recipient: { address: { kind: d.start.to.kind, value: d.start.to.value } } };
    return { status: 'ready', kind: 'start', leaseId, leaseExpiresAt, message, ...conversation };
  }
  // An edit or unsend (docs/contract.md#edits-and-unsends) says so, with what it acts on; a reply's
  // claim keeps its exact v1 shape (no `kind`, no `target`).
  if (d.kind !== undefined) {
    const target = targetOf(d);
    // An edit carries its new text; every other kind acts on the target only.
    return d.kind === 'edit'
      ? { status: 'ready', kind: 'edit', leaseId, leaseExpiresAt, message: { text: d.text, recipient: to }, target, ...conversation }
      : { status: 'ready', kind: d.kind, leaseId, leaseExpiresAt, message: { recipient: to }, target, ...conversation };
  }
  // `attachments` only when there are some: a text-only reply's claim keeps the exact shape a
  // connector built before attachments knows (docs/contract.md#attachments).
  // Names are cleaned again on the way out: a delivery recorded before the rule keeps its name as written.
  const message = d.attachments !== undefined && d.attachments.length > 0 ? { text: d.text, recipient: to, attachments: d.attachments.map((a) => ({ ...a, name: shownFileName(a.name) })) } : { text: d.text, recipient: to };
  // `template` only on a template reply (its `text` is the filled preview): only a connector that
  // declared templates ever sees the key (docs/contract.md#windows).
  const template = d.template === undefined ? {} : { template: copyTemplate(d.template) };
  return { status: 'ready', leaseId, leaseExpiresAt, message: { ...message, ...template }, ...conversation };
}

/** A template as the claim hands it on (a copy: the answer never shares objects with the record). */
const copyTemplate = (t: ReplyTemplate): ReplyTemplate => ({ name: t.name, language: t.language, params: { ...t.params } });

/** The claim's `target` of an edit or unsend (copies: the answer never shares arrays with the record). */
function targetOf(d: DeliveryRecord): ClaimTarget {
  const target = d.target ?? { deliveryId: '', providerMessageIds: [] };
  const parts = target.parts !== undefined && target.parts.length > 0 ? { parts: target.parts.map((p) => ({ part: p.part, providerMessageIds: [...p.providerMessageIds] })) } : {};
  return { deliveryId: target.deliveryId, providerMessageIds: [...target.providerMessageIds], ...parts };
}

// ---------------------------------------------------------------------------------------------
// start

/**
 * start (docs/contract.md#start): a lease that never held the delivery -> 409 `lease_lost`; `sent` -> `sent`
 * (do not send again); failed/unknown -> 409 `delivery_finished`; leased under the live current
 * lease -> `sending`; already sending under it -> `sending` (no write); anything else -> 409
 * `lease_lost`.
 */
export function decideStart(d: DeliveryRecord, input: StartInput): Decision<StartResponse> {
  const { now, leaseId } = input;
  if (!everHeld(d, leaseId)) throw leaseLost();
  const current = applyLeaseExpiry(d, now);
  if (current.status === 'sent') return unchanged({ status: 'sent' });
  if (current.status === 'failed' || current.status === 'unknown') {
    throw new ConflictError('delivery_finished', `the delivery already finished as ${current.status}`);
  }
  if (!holdsLease(current, leaseId, now) || current.lease === null) throw leaseLost();
  if (current.status === 'sending') return unchanged({ status: 'sending' });
  const next: DeliveryRecord = { ...current, status: 'sending', lease: { ...current.lease, started: true }, updatedAt: now };
  return decided(d, { status: 'sending' }, withAttempt(next, now, 'started'));
}

// ---------------------------------------------------------------------------------------------
// extend

/**
 * extend (docs/contract.md#extend): a connector whose provider call runs long keeps its lease.
 *  - a lease that never held the delivery -> 409 `lease_lost`;
 *  - a terminal delivery -> 409 `delivery_finished` (whichever lease asks: there is nothing left
 *    to hold; a stored `unknown` after an expiry while sending answers this too);
 *  - not the live current lease of a `leased` or `sending` delivery (expired, or replaced by a
 *    newer lease) -> 409 `lease_lost`. An expired lease is never revived, even when nothing else
 *    happened since: the sweeper may already have acted on the expiry, and a refusal writes nothing;
 *  - otherwise the lease ends at `now + LEASE_MS`, but never later than `claimedAt + LEASE_MAX_MS`
 *    (15 minutes after its claim in total): the granted expiry is clamped to that cap, and only
 *    when no time at all can be added (the expiry already is the cap) the answer is 409
 *    `lease_limit_reached`. An extension never shortens a lease (a retried extend answers the
 *    current expiry without a write). Status, attempts and the attempt log do not change, so the
 *    reply's mirror is not rewritten; the lease's check document moves with the new expiry (the
 *    sweeper applies the expiry it finds on the record, functions/src/deliveries/liveness.ts).
 */
export function decideExtend(d: DeliveryRecord, input: ExtendInput): Decision<ExtendResponse> {
  const { now, leaseId } = input;
  if (!everHeld(d, leaseId)) throw leaseLost();
  if (isTerminal(d.status)) throw new ConflictError('delivery_finished', `the delivery already finished as ${d.status}`);
  if (!holdsLease(d, leaseId, now) || d.lease === null) throw leaseLost();
  const lease = d.lease;
  const capAt = leaseClaimedAt(lease) + LEASE_MAX_MS;
  if (lease.expiresAt >= capAt) {
    throw new ConflictError('lease_limit_reached', `a lease lives at most ${LEASE_MAX_MS / 60_000} minutes after its claim: finish, or report the outcome`);
  }
  const expiresAt = Math.min(now + LEASE_MS, capAt);
  if (expiresAt <= lease.expiresAt) return unchanged({ leaseExpiresAt: lease.expiresAt });
  const next: DeliveryRecord = { ...d, lease: { ...lease, expiresAt, claimedAt: leaseClaimedAt(lease) }, updatedAt: now };
  return decided(d, { leaseExpiresAt: expiresAt }, next);
}

// ---------------------------------------------------------------------------------------------
// complete

/**
 * complete (docs/contract.md#complete) is accepted from the LAST lease (`lease.leaseId`), live or expired, whatever
 * the state, because a late completion is the truth: also over `unknown` (a completion resolves
 * the ambiguity) and over a `failed` the service decided alone (retry budget spent on expiry).
 *  - the same lease already reported a definite fail (`retry` or `failed`) -> 409
 *    `conflicting_completion`: the connector contradicts itself and its first word stands;
 *  - an older lease, or one that never held it -> 409 `lease_lost` (even after `sent`);
 *  - after `sent`: same lease and same ids (same order) -> `sent`, no write; else 409
 *    `conflicting_completion`.
 * A late completion that turns `unknown` into `sent` does not release the next delivery again:
 * it was released when this one first became terminal.
 */
export function decideComplete(d: DeliveryRecord, input: CompleteInput): Decision<CompleteResponse> {
  const { now, leaseId } = input;
  checkParts(d, input.parts);
  // A start's thread is what makes the customer's answer join the conversation: without it the
  // completion is refused before anything is decided, and the lease stays for the retry with it.
  if (d.start !== undefined && input.conversation === undefined) {
    throw new BadRequestError('conversation_required', 'conversation: a start is completed with the thread the channel made ({ externalConversationId, externalCustomerId })');
  }
  if (!everHeld(d, leaseId)) throw leaseLost();
  if (d.status === 'sent') {
    if (d.completion?.leaseId === leaseId && sameIds(d.completion.providerMessageIds, input.providerMessageIds)) return unchanged({ status: 'sent' });
    throw new ConflictError('conflicting_completion', 'the delivery was already completed differently');
  }
  const current = applyLeaseExpiry(d, now);
  if (current.lease?.leaseId !== leaseId) throw leaseLost();
  const lastFail = current.lastFail;
  if (lastFail !== null && lastFail.leaseId === leaseId && lastFail.outcome !== 'unknown') {
    throw new ConflictError('conflicting_completion', `this lease already reported the delivery as ${lastFail.outcome === 'retry' ? 'rejected' : 'failed'}`);
  }
  const ids = [...input.providerMessageIds];
  const next: DeliveryRecord = {
    ...current,
    status: 'sent',
    notBefore: null,
    waiting: false,
    completion: { leaseId, providerMessageIds: ids },
    providerMessageIds: [...ids],
    error: null,
    updatedAt: now,
    ...(d.start !== undefined && input.conversation !== undefined ? { start: { to: d.start.to, thread: threadOf(input.conversation) } } : {}),
  };
  return decided(d, { status: 'sent' }, withAttempt(withParts(next, input.parts), now, 'sent'));
}

/** The thread a start's `complete` named, as the record keeps it (metadata goes to the conversation, not the record). */
const threadOf = (c: StartedThread): StartedThread => ({ externalConversationId: c.externalConversationId, externalCustomerId: c.externalCustomerId });

/** The parts of a delivery: its text (unless a resend carries files only) and each attachment id. */
function partsOf(d: Pick<DeliveryRecord, 'attachments' | 'textSent'>): string[] {
  return [...(d.textSent === true ? [] : [TEXT_PART]), ...(d.attachments ?? []).map((a) => a.attachmentId)];
}

/**
 * A `parts` report (docs/contract.md#per-part-outcomes) names only parts of this delivery, each at
 * most once; otherwise 400 naming the offending part, before anything is decided or written.
 */
function checkParts(d: DeliveryRecord, parts: readonly PartReport[] | undefined): void {
  if (parts === undefined) return;
  const known = new Set(partsOf(d));
  const seen = new Set<string>();
  parts.forEach(({ part }, index) => {
    if (!known.has(part)) throw new BadRequestError('unknown_part', `parts[${index}].part: "${part}" is not a part of this delivery (expected one of: ${[...known].join(', ')})`);
    if (seen.has(part)) throw new BadRequestError('invalid_request', `parts[${index}].part: "${part}" is reported twice`);
    seen.add(part);
  });
}

/** `next` with the reported parts merged over the ones already known (a later report of a part wins). */
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

// ---------------------------------------------------------------------------------------------
// fail

/**
 * fail (docs/contract.md#fail):
 *  - a lease that never held it -> 409 `lease_lost`; `sent` -> `sent`, no change;
 *  - the same call repeated (same lease, outcome and code) -> the recorded answer, no write (only
 *    the latest fail is remembered);
 *  - under the live current lease: `retry` re-queues after `retryAfterMs` (0..1 h, validated by
 *    the schema) or `backoffMs` (provider ids are ignored: a retry means nothing was sent), or
 *    fails `retry_exhausted` when the budget is spent; `failed`/`unknown` end the delivery with
 *    `{ outcome, code }` and any partial provider ids (the connector's own code stays in `lastFail`);
 *  - otherwise a non-terminal delivery -> 409 `lease_lost` (e.g. an expired lease on `leased`),
 *    and a terminal one -> 200 with its status, with one refinement: the lease cut off by
 *    `lease_expired_after_start` may still say what happened. A late `failed` turns that `unknown`
 *    into `failed`, a late `unknown` records its code and partial ids, a late `retry` leaves it
 *    `unknown` (its successor was already released, so it cannot be re-queued). No re-release.
 */
export function decideFail(d: DeliveryRecord, input: FailInput): Decision<FailResponse> {
  const { now, leaseId, outcome, code } = input;
  checkParts(d, input.parts);
  if (!everHeld(d, leaseId)) throw leaseLost();
  if (d.status === 'sent') return unchanged({ status: 'sent' });
  const lastFail = d.lastFail;
  if (lastFail !== null && lastFail.leaseId === leaseId && lastFail.outcome === outcome && lastFail.code === code) {
    return unchanged({ status: lastFail.responseStatus });
  }

  const { current, expiry } = atNow(d, now);
  // A live lease means nothing expired: `current` is `d`.
  if (holdsLease(current, leaseId, now)) return failUnderLease(current, input);
  if (!isTerminal(current.status)) throw leaseLost();

  const cutOffWhileSending =
    current.status === 'unknown' && current.error?.code === LEASE_EXPIRED_AFTER_START && current.lease?.leaseId === leaseId && lastFail?.leaseId !== leaseId;
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
  // Any other lease that once held a finished delivery: its status; only an expiry not yet written is written.
  return decided(d, { status: current.status }, expiry?.next ?? null);
}

function failUnderLease(d: DeliveryRecord, input: FailInput): Decision<FailResponse> {
  const { now, leaseId, outcome, code } = input;
  const reported = withAttempt(withParts(d, input.parts), now, outcome, code);
  if (outcome === 'retry' && retryBudgetSpent(d, now)) {
    const next: DeliveryRecord = {
      ...reported,
      status: 'failed',
      notBefore: null,
      error: { outcome: 'failed', code: RETRY_EXHAUSTED },
      lastFail: { leaseId, outcome, code, responseStatus: 'failed' },
      updatedAt: now,
    };
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

// ---------------------------------------------------------------------------------------------
// undeliverable

/**
 * The notification of `d` cannot be published for good (topic missing, no permission, replies
 * disabled): record `code` as a failure so the reply shows why and the conversation is not
 * blocked forever (docs/contract.md#notifications). A delivery a connector is working on under a live lease is left
 * alone (it already has its notification); a terminal one too.
 */
export function decideUndeliverable(d: DeliveryRecord, code: string, now: number): Decision<null> | null {
  if (isTerminal(d.status) || isLeaseLive(d.lease, now)) return null;
  return decided(d, null, withAttempt({ ...d, status: 'failed', error: { outcome: 'failed', code }, waiting: false, notBefore: null, updatedAt: now }, now, 'failed', code));
}

// ---------------------------------------------------------------------------------------------
// liveness (docs/contract.md#liveness)

/**
 * The liveness check due at `checkAt` (the sweeper found its document). It applies only while the
 * delivery is still claimable and still carries that check (any claim, or any other change of
 * claimability, replaced or ended the schedule: the check is stale and does nothing):
 *  - the check at the unclaimed expiry -> `failed` with `not_claimed`, which releases the next
 *    delivery of the conversation;
 *  - otherwise -> re-publish its notification now (`renotified`) and schedule the next check
 *    after twice the interval (at most RENOTIFY_MAX_INTERVAL_MS), never later than the expiry.
 * The next check counts from `checkAt`, not from `now`: a late sweep does not stretch the schedule.
 */
export function decideLivenessCheck(d: DeliveryRecord, checkAt: number, now: number): Decision<null> | null {
  const liveness = d.liveness;
  if (d.status !== 'queued' || d.pendingAt === undefined || liveness === undefined || liveness.checkAt !== checkAt) return null;
  if (checkAt >= liveness.expiresAt) {
    const next: DeliveryRecord = { ...d, status: 'failed', notBefore: null, waiting: false, error: { outcome: 'failed', code: NOT_CLAIMED }, updatedAt: now };
    return decided(d, null, withAttempt(next, now, 'failed', NOT_CLAIMED));
  }
  const intervalMs = Math.min(liveness.intervalMs * 2, RENOTIFY_MAX_INTERVAL_MS);
  const next: DeliveryRecord = { ...d, liveness: { ...liveness, intervalMs, checkAt: Math.min(checkAt + intervalMs, liveness.expiresAt) }, updatedAt: now };
  return decided(d, null, withAttempt(next, now, 'renotified'), { at: now, reason: 'renotified' });
}

// ---------------------------------------------------------------------------------------------
// cancel (docs/decisions.md#recall-before-send-cancel: recall before send)

/**
 * cancel: a workspace member asked that the reply not be sent (`cancel` on the reply; the reply
 * trigger runs this on the reply's current delivery). Lease expiry is applied first, as everywhere.
 *  - the same request again (a redelivered trigger: same `requestedAt`) -> the recorded answer, no
 *    write; a delivery already cancelled by an earlier request -> `cancelled`, no write;
 *  - `queued` (due or not, head or waiting behind another), or `leased` (a lease that has not
 *    started: the connector has not said it is calling the provider) -> `failed` with code
 *    `cancelled`, logged as a `failed` attempt. Like every terminal transition this releases the
 *    next reply of the conversation and ends its liveness checks; the lease stays recorded, so a
 *    later start under it gets 409 `delivery_finished` (`decideStart`) and the connector drops it;
 *  - `sending` (the provider may be accepting it right now) or terminal -> `too_late`: the status
 *    does not change; only the answer is recorded (`cancel`), which the reply mirror shows.
 * The answer is kept on the record (`cancel: { status, requestedAt, at }`), so every later mirror
 * write still shows it.
 */
export function decideCancel(d: DeliveryRecord, input: CancelInput): Decision<CancelResponse> {
  const { now, requestedAt } = input;
  if (d.cancel !== undefined && d.cancel.requestedAt === requestedAt) return unchanged({ status: d.cancel.status });
  if (d.status === 'failed' && d.error?.code === CANCELLED) return unchanged({ status: 'cancelled' });
  const current = applyLeaseExpiry(d, now);
  if (current.status === 'queued' || current.status === 'leased') {
    const next: DeliveryRecord = {
      ...current,
      status: 'failed',
      notBefore: null,
      waiting: false,
      error: { outcome: 'failed', code: CANCELLED },
      cancel: { status: 'cancelled', requestedAt, at: now },
      updatedAt: now,
    };
    return decided(d, { status: 'cancelled' }, withAttempt(next, now, 'failed', CANCELLED));
  }
  // sending or terminal (possibly just now, by an expiry: then that expiry is written with it).
  return decided(d, { status: 'too_late' }, { ...current, cancel: { status: 'too_late', requestedAt, at: now }, updatedAt: now });
}

// ---------------------------------------------------------------------------------------------
// receipt

/**
 * receipt (docs/contract.md#receipts): what the channel said after `sent`. Only a `sent` delivery takes one
 * (409 `delivery_not_sent` otherwise: its outcome is not known, or it failed); no lease is needed,
 * and the delivery's status never changes. Receipts only move forward:
 *  - none yet -> any receipt;
 *  - `delivered` -> `read` or `failed` (the channel gave up after accepting it);
 *  - `read` is final (a late `delivered` or `failed` changes nothing), and so is `failed` (the
 *    channel's first failure stands; it is what the operator needs to see);
 *  - the same status again changes nothing, so a retried report is idempotent.
 */
export function decideReceipt(d: DeliveryRecord, input: ReceiptInput): Decision<ReceiptResponse> {
  if (d.status !== 'sent') throw new ConflictError('delivery_not_sent', `the delivery is ${d.status}: receipts are taken for sent deliveries only`);
  const current = d.receipt?.status;
  const advances = current === undefined || (current === 'delivered' && input.status !== 'delivered');
  if (!advances) return unchanged({ status: 'sent' });
  const receipt = { status: input.status, at: input.at ?? input.now, code: input.code ?? null, providerMessageId: input.providerMessageId ?? null };
  return decided(d, { status: 'sent' }, { ...d, receipt, updatedAt: input.now });
}

// ---------------------------------------------------------------------------------------------
// append (creation)

/** A new delivery of an operator reply (ids from functions/src/platform/ids.ts), and why it is created. */
export interface AppendInput {
  deliveryId: string;
  workspaceId: string;
  integrationId: string;
  conversationId: string;
  messageId: string;
  text: string;
  /** The reply's checked files (none: absent). */
  attachments?: AttachmentRef[];
  /** A template reply's checked template (`text` is its filled preview); absent on a free-form reply. */
  template?: ReplyTemplate;
  /** A resend whose text was already sent: the new delivery carries files only. */
  textSent?: boolean;
  /** An operator's edit or unsend of the sent reply (docs/contract.md#edits-and-unsends): the kind, what it acts on, when it was asked (epoch ms). */
  lifecycle?: { kind: LifecycleKind; target: DeliveryTarget; requestedAt: number };
  /** A conversation the desk starts: the address its first message goes to (the claim's `kind: "start"`). */
  start?: { to: StartAddress };
  now: number;
  /** `created` for a new reply (functions/src/deliveries/sequencing.ts) or an edit/unsend (functions/src/deliveries/lifecycle.ts), `resend` for an operator's resend (functions/src/deliveries/resend.ts). */
  reason: 'created' | 'resend';
  /** A resend's: how the delivery it replaces ended, shown on the reply as `delivery.previous`. */
  previous?: PreviousDelivery;
}

/** The creation decision (its `next` is the new record) and the queue after it. */
export interface Appended {
  decision: Decision<null> & { next: DeliveryRecord };
  queue: QueueTail;
}

/**
 * append, the one way a delivery comes into being, for a new reply and for a resend alike
 * (docs/contract.md#ordering, 7 "Resend"):
 *  - it joins the end of its conversation's queue with the next seq (./ordering.ts
 *    `appendToQueue`): a resend goes after every delivery created before it, never back to the
 *    place of the one it replaces;
 *  - the head rule: it is the head (claimable at once, in the catch-up list) exactly when nothing
 *    of the conversation is unfinished; otherwise it waits for its predecessor's terminal
 *    transition to wake it (`decideWake`);
 *  - queued, no lease, no attempt yet; its notification is due now, and its creator publishes it
 *    right after the commit (`inline`: one trigger from the operator's reply to the connector).
 */
export function decideAppend(queue: QueueTail, input: AppendInput): Appended {
  const { reason, previous, attachments, template, textSent, lifecycle, start, ...fields } = input;
  const position = appendToQueue(queue, input.deliveryId);
  const record = newDelivery({ ...fields, seq: position.seq });
  const next: DeliveryRecord = {
    ...record,
    ...(lifecycle !== undefined ? { kind: lifecycle.kind, target: lifecycle.target, requestedAt: lifecycle.requestedAt } : {}),
    ...(attachments !== undefined && attachments.length > 0 ? { attachments } : {}),
    ...(template !== undefined ? { template: copyTemplate(template) } : {}),
    ...(textSent === true ? { textSent } : {}),
    ...(start !== undefined ? { start: { to: { ...start.to } } } : {}),
    ...(previous !== undefined ? { previous } : {}),
    ...(position.head ? { head: true } : {}),
    traceId: traceIdOfDelivery(input.deliveryId),
  };
  return { decision: { response: null, next, effects: { releasesNext: false, notify: { at: input.now, reason, inline: true } } }, queue: position.queue };
}

// ---------------------------------------------------------------------------------------------
// attachment fetch (a read: no transition)

/**
 * Which file a connector may download (docs/contract.md#fetch-an-attachment): only under the live
 * current lease of a `leased` or `sending` delivery (as for extend). A terminal delivery -> 409
 * `delivery_finished`; a wrong or expired lease -> 409 `lease_lost`; an id that is not one of the
 * delivery's files -> 404 `attachment_not_found`.
 */
export function decideAttachmentFetch(d: DeliveryRecord, input: { now: number; leaseId: string; attachmentId: string }): AttachmentRef {
  if (isTerminal(d.status)) throw new ConflictError('delivery_finished', `the delivery is already ${d.status}`);
  if (!holdsLease(d, input.leaseId, input.now) || (d.status !== 'leased' && d.status !== 'sending')) throw leaseLost();
  const file = d.attachments?.find((a) => a.attachmentId === input.attachmentId);
  if (file === undefined) throw new NotFoundError('attachment_not_found', `attachmentId: "${input.attachmentId}" is not an attachment of this delivery`);
  return file;
}

// erase

/**
 * erase (docs/privacy.md#erasure): the customer of the delivery's conversation is being erased. An
 * unfinished delivery (queued, leased or sending) becomes `failed` with code `erased`, so that no
 * connector can claim or send it afterwards (a later start is 409 `delivery_finished`); a finished
 * one is left as it is (the cascade deletes it next). Answers whether it was unfinished.
 */
export function decideErase(d: DeliveryRecord, input: { now: number }): Decision<{ erased: boolean }> {
  if (isTerminal(d.status)) return unchanged({ erased: false });
  const next: DeliveryRecord = { ...d, status: 'failed', notBefore: null, waiting: false, error: { outcome: 'failed', code: ERASED }, updatedAt: input.now };
  return decided(d, { erased: true }, withAttempt(next, input.now, 'failed', ERASED));
}

// ---------------------------------------------------------------------------------------------
// the connector's transitions, by operation

/**
 * What a transition's rule knows besides the record and the request's body: the store reads the
 * first three (the time, the conversation's queue, the recipient), the caller makes the last two.
 */
export interface TransitionFacts {
  now: number;
  /** An earlier delivery of the conversation is unfinished (read only when the rule needs it: the claim). */
  predecessorUnfinished: boolean;
  /** Who the reply goes to (likewise). */
  recipient: Recipient;
  /** The conversation's connector metadata (likewise; absent or empty: the claim carries no `conversation`). */
  metadata?: Metadata | undefined;
}
export type RuleFacts = TransitionFacts & {
  /** A fresh, unguessable lease id (the claim grants it when it grants a lease). */
  newLeaseId: string;
  /** Uniform in [0, 1), for backoff jitter. */
  random: number;
};

/**
 * The rule of every connector operation that changes a delivery, by operationId. Each takes the
 * operation's request body with the facts (`RuleFacts`) and answers the operation's response. The
 * service's endpoints (functions/src/deliveries/http.ts) and the SDK's test service both serve
 * exactly these, so a new transition is a rule and a line here (and the service's read hints).
 */
export const DELIVERY_TRANSITIONS = {
  claimDelivery: decideClaim,
  startDelivery: decideStart,
  extendDeliveryLease: decideExtend,
  completeDelivery: decideComplete,
  failDelivery: decideFail,
  reportDeliveryReceipt: decideReceipt,
} as const;

/**
 * The transitions whose answer names the conversation's next delivery (`next`) when their end made
 * it claimable: `complete` and `fail` (a final one; a `retry` keeps its place and releases nothing).
 */
const ANNOUNCES_NEXT: ReadonlySet<string> = new Set<keyof typeof DELIVERY_TRANSITIONS>(['completeDelivery', 'failDelivery']);

/**
 * What a transition answers: its rule's response, plus `next` (./plan.ts `nextClaimable`) for the
 * operations that announce it. Both stores answer through this, so the test service names the
 * same next delivery the service does.
 */
export function answerOf<R>(operationId: string, response: R, next: DeliveryNotification | null): R {
  return next !== null && ANNOUNCES_NEXT.has(operationId) ? { ...response, next } : response;
}
