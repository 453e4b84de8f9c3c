/**
 * `processDelivery`: the delivery usage rules of docs/contract.md#connector-rules in one call —
 * claim; if ready, start; if start says `sending`, call the provider ONCE; then complete with
 * the provider's ids, or fail with an outcome derived from what the provider threw.
 */
import {
  AttachmentIntegrityError,
  AttachmentUnavailableError,
  DeliveryReportError,
  ProviderPermanentError,
  ProviderRetryableError,
  ProviderUnknownOutcomeError,
} from '../errors.js';
import type { DeliveriesApi } from './deliveries.js';
import { codePointLength, DELIVERY_LIMITS, FAIL_CODE_PATTERN, LEASE_MS } from './contract.generated.js';
import type { AttachmentFile, DeliveryAttachment, DeliveryNotification, DeliveryPart, FailOutcome, FailResult, Recipient, ReplyMessage } from '../types.js';
import { FINISHED_SKIP_REASONS, type DeliveryEvent, type FinishedReason, type ProcessDeliveryResult } from './results.js';
import { traceIdOf } from './notification.js';
import { clockOption, type Clock } from './clock.js';
import { keepLeaseAlive } from './lease.js';

const { failCode: FAIL_CODE_MAX_LENGTH, retryAfterMs: MAX_FAIL_RETRY_AFTER_MS, providerMessageId: MAX_PROVIDER_MESSAGE_ID_LENGTH, providerMessageIds: MAX_PROVIDER_MESSAGE_IDS } = DELIVERY_LIMITS;

/**
 * Default limit for the provider `send` (the lease, `LEASE_MS`, less 30 s to report the result).
 * When it passes, the `signal` given to `send` aborts and the outcome is reported as `unknown`,
 * even while the lease is being extended: the limit bounds how long a hung provider call holds
 * its delivery and the later replies of its conversation (the SDK README explains how to raise it).
 */
export const DEFAULT_PROVIDER_TIMEOUT_MS = LEASE_MS - 30_000;

/**
 * A file of the reply, as the claim lists it, with a lazy `fetch()` that downloads it under the
 * delivery's lease (`deliveries.attachment`) and checks its SHA-256 against the claim's. Fetch every
 * file you need BEFORE you send anything: a failed fetch thrown out of `send` is then reported as
 * nothing sent (`AttachmentIntegrityError`, `AttachmentUnavailableError`).
 */
export interface ProviderAttachment extends DeliveryAttachment {
  /** Downloads the file (once: later calls share the first successful download). */
  fetch(options?: { signal?: AbortSignal }): Promise<AttachmentFile>;
}

/** What your provider `send` receives. */
export interface ProviderSendInput {
  deliveryId: string;
  leaseId: string;
  /** Epoch ms at which the lease ends. */
  leaseExpiresAt: number;
  /** Reply text, up to the contract's reply limit in code points (split it into parts if your channel needs to). */
  text: string;
  recipient: Recipient;
  /**
   * The reply's files (empty when it has none, always for integrations without the attachments
   * capability). `text` may be empty when there are files.
   */
  attachments: readonly ProviderAttachment[];
  /** Aborts when `providerTimeoutMs` passes; pass it to your provider client if it supports one. */
  signal: AbortSignal;
  /**
   * The delivery's W3C `traceparent` (the notification's, or the `traceparent` option), present
   * only when a well-formed one is known (never for a bare `deliveryId` or a pending-list item
   * without the option). Log it, pass it to your provider, or keep it with the provider's ids to
   * send it later with `deliveries.receipt` (`createReceiptTracker` keeps it for you).
   */
  traceparent?: string;
  /** The trace id of `traceparent` (its 32 hex digits), present exactly when `traceparent` is. */
  traceId?: string;
}

/**
 * What your provider `send` returns on success: the ids the provider assigned (1 to 20), and
 * optionally each part's outcome (`text` and each `attachmentId`, reported with `complete`).
 */
export type ProviderSendResult = { providerMessageIds: readonly string[]; parts?: readonly DeliveryPart[] } | readonly string[];

/**
 * Sends one reply through your channel. Return the provider ids when the provider ACCEPTED the
 * message. Throw `ProviderRetryableError` for a definite temporary rejection, `ProviderPermanentError`
 * for a permanent one, and anything else (or `ProviderUnknownOutcomeError`) when you cannot tell.
 */
export type ProviderSend = (input: ProviderSendInput) => Promise<ProviderSendResult> | ProviderSendResult;

export interface ProcessDeliveryOptions {
  /**
   * Limit for the provider call; default `DEFAULT_PROVIDER_TIMEOUT_MS`. It applies whether or not
   * the lease is extended: when it passes, `signal` aborts and the outcome is `unknown`. With
   * `extendLease` (the default) a longer limit is safe up to about 14 minutes (a lease lives at
   * most 15 minutes after its claim; keep ~30 s to report); without it, keep the default.
   */
  providerTimeoutMs?: number;
  /**
   * Extend the lease while the provider call runs (default true): whenever half of the remaining
   * lease has passed, `deliveries.extend` is called, again and again until the call ends. When the
   * service refuses (`lease_lost`, `lease_limit_reached`, `delivery_finished`) extending stops; the
   * provider call is left to finish and its outcome is reported as usual.
   */
  extendLease?: boolean;
  /** `requestId` of the claim; generated when omitted. */
  requestId?: string;
  /**
   * Observes the delivery as it runs (`claimed`, `started`, `extended`, `completed`, ...: see
   * `DeliveryEvent`), e.g. to export metrics or traces. Called synchronously; whatever it throws
   * is ignored, so an observer can never change what happens to the delivery.
   */
  onEvent?: (event: DeliveryEvent) => void;
  /**
   * The W3C `traceparent` to send on every call (claim, start, extend, complete, fail); by
   * default the notification's (`parsePulledNotification` / `parsePushNotification` read it from
   * the message's attributes).
   */
  traceparent?: string;
  /**
   * For tests: the clock everything time-related here runs on — when to extend the lease, the
   * provider timeout, and the times of the events (`at`, `elapsedMs`, `providerMs`). Default: the
   * real one (`Date.now` and the global timers). A fake one lets a test drive a long provider call
   * without waiting for it (see the SDK README, "Testing with a fake clock").
   */
  clock?: Clock;
}

export type { ProcessDeliveryResult } from './results.js';

/** Makes any text a valid fail code (`FAIL_CODE_PATTERN`, at most `FAIL_CODE_MAX_LENGTH` characters); `fallback` when nothing usable is left. */
export function toFailCode(code: string | undefined, fallback: string): string {
  if (typeof code !== 'string') return fallback;
  let c = code
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, '_')
    .replace(/^_+|_+$/g, '');
  if (c === '') return fallback;
  if (!/^[a-z]/.test(c)) c = `provider_${c}`;
  c = c.slice(0, FAIL_CODE_MAX_LENGTH);
  return FAIL_CODE_PATTERN.test(c) ? c : fallback;
}

function isProviderMessageId(v: unknown): v is string {
  if (typeof v !== 'string') return false;
  const n = codePointLength(v);
  return n >= 1 && n <= MAX_PROVIDER_MESSAGE_ID_LENGTH;
}

function named(err: unknown, name: string): boolean {
  return typeof err === 'object' && err !== null && (err as { name?: unknown }).name === name;
}

interface FailReport {
  outcome: FailOutcome;
  code: string;
  retryAfterMs?: number;
  providerMessageIds?: string[];
  parts?: DeliveryPart[];
}

/**
 * The per-part outcomes a provider gave, as a request can carry them: only parts of this reply
 * (`text` and the claim's attachment ids), once each (the first wins), valid codes and ids. A
 * part the service would refuse (400) must not cost the whole report.
 */
export function usableParts(parts: unknown, attachmentIds: readonly string[]): DeliveryPart[] | undefined {
  if (!Array.isArray(parts)) return undefined;
  const known = new Set(['text', ...attachmentIds]);
  const out: DeliveryPart[] = [];
  for (const p of parts as unknown[]) {
    if (typeof p !== 'object' || p === null) continue;
    const { part, status, providerMessageIds, code } = p as { part?: unknown; status?: unknown; providerMessageIds?: unknown; code?: unknown };
    if (typeof part !== 'string' || !known.has(part) || out.some((o) => o.part === part)) continue;
    if (status !== 'sent' && status !== 'failed') continue;
    const entry: DeliveryPart = { part, status };
    const ids = Array.isArray(providerMessageIds) ? providerMessageIds.filter(isProviderMessageId).slice(0, MAX_PROVIDER_MESSAGE_IDS) : [];
    if (ids.length > 0) entry.providerMessageIds = ids;
    if (typeof code === 'string') entry.code = toFailCode(code, 'part_failed');
    else if (status === 'failed') entry.code = 'part_failed';
    out.push(entry);
  }
  return out.length > 0 ? out : undefined;
}

/**
 * Maps what the provider threw to a fail report (docs/contract.md#connector-rules, rules 2 and 3),
 * with the parts it reported.
 */
function classifyProviderError(err: unknown, attachmentIds: readonly string[] = []): FailReport {
  const report = classifyError(err);
  const parts = usableParts((err as { parts?: unknown } | null)?.parts, attachmentIds);
  return parts === undefined ? report : { ...report, parts };
}

function classifyError(err: unknown): FailReport {
  // A file that could not be fetched or checked, thrown out of `send` before anything was sent
  // (docs/decisions.md#attachments-in-the-sdk): damaged in transit or unavailable for now -> retry;
  // a file that differs from the claim, or that the delivery does not have -> failed.
  if (err instanceof AttachmentIntegrityError || named(err, 'AttachmentIntegrityError')) {
    return { outcome: (err as AttachmentIntegrityError).inTransit ? 'retry' : 'failed', code: 'attachment_integrity' };
  }
  if (err instanceof AttachmentUnavailableError || named(err, 'AttachmentUnavailableError')) {
    const code = (err as AttachmentUnavailableError).code;
    return { outcome: code === 'attachment_not_found' ? 'failed' : 'retry', code };
  }
  if (err instanceof ProviderRetryableError || named(err, 'ProviderRetryableError')) {
    const e = err as ProviderRetryableError;
    const report: FailReport = { outcome: 'retry', code: toFailCode(e.code, 'provider_temporary') };
    if (typeof e.retryAfterMs === 'number' && Number.isFinite(e.retryAfterMs)) {
      report.retryAfterMs = Math.min(MAX_FAIL_RETRY_AFTER_MS, Math.max(0, Math.round(e.retryAfterMs)));
    }
    return report;
  }
  if (err instanceof ProviderPermanentError || named(err, 'ProviderPermanentError')) {
    return { outcome: 'failed', code: toFailCode((err as ProviderPermanentError).code, 'provider_rejected') };
  }
  if (err instanceof ProviderUnknownOutcomeError || named(err, 'ProviderUnknownOutcomeError')) {
    const e = err as ProviderUnknownOutcomeError;
    const report: FailReport = { outcome: 'unknown', code: toFailCode(e.code, 'provider_unknown_outcome') };
    const ids = Array.isArray(e.providerMessageIds) ? e.providerMessageIds.filter(isProviderMessageId).slice(0, MAX_PROVIDER_MESSAGE_IDS) : [];
    if (ids.length > 0) report.providerMessageIds = ids;
    return report;
  }
  if (named(err, 'TimeoutError') || named(err, 'AbortError')) return { outcome: 'unknown', code: 'provider_timeout' };
  return { outcome: 'unknown', code: 'provider_error' };
}

async function callProvider(send: ProviderSend, input: Omit<ProviderSendInput, 'signal'>, timeoutMs: number, clock: Clock): Promise<ProviderSendResult> {
  const controller = new AbortController();
  let timer: unknown;
  const timeout = new Promise<never>((_, reject) => {
    timer = clock.setTimeout(() => {
      const err = new ProviderUnknownOutcomeError(`provider send did not finish within ${timeoutMs} ms`, { code: 'provider_timeout' });
      controller.abort(err);
      reject(err);
    }, timeoutMs);
  });
  const sending = (async () => send({ ...input, signal: controller.signal }))();
  sending.catch(() => undefined); // a rejection after the timeout must not become an unhandled rejection
  try {
    return await Promise.race([sending, timeout]);
  } finally {
    clock.clearTimeout(timer);
  }
}

/** A claim's attachment with its lazy, hash-checked download (`ProviderAttachment`). */
function lazyAttachment(deliveries: DeliveriesApi, deliveryId: string, leaseId: string, attachment: DeliveryAttachment): ProviderAttachment {
  let download: Promise<AttachmentFile> | undefined;
  const { attachmentId, name, contentType, size, sha256 } = attachment;
  return {
    attachmentId,
    name,
    contentType,
    size,
    sha256,
    fetch(options = {}) {
      download ??= deliveries.attachment({ deliveryId, leaseId, attachmentId, expectedSha256: sha256 }, options.signal === undefined ? {} : { signal: options.signal }).catch((err: unknown) => {
        download = undefined; // a failed download may be tried again
        throw err instanceof AttachmentIntegrityError ? err : new AttachmentUnavailableError(attachmentId, err);
      });
      return download;
    },
  };
}

/** The claim skip reasons that mean the delivery is over. */
function finishedReason(reason: string): FinishedReason | undefined {
  return Object.hasOwn(FINISHED_SKIP_REASONS, reason) ? (reason as FinishedReason) : undefined;
}

/** Distributes `Omit` over a union (the built-in one would merge the members). */
type EventInit<E> = E extends DeliveryEvent ? Omit<E, 'deliveryId' | 'at' | 'elapsedMs'> : never;

export async function processDelivery(
  deliveries: DeliveriesApi,
  notificationOrDeliveryId: DeliveryNotification | Pick<DeliveryNotification, 'deliveryId'> | string,
  send: ProviderSend,
  options: ProcessDeliveryOptions = {},
): Promise<ProcessDeliveryResult> {
  const deliveryId = typeof notificationOrDeliveryId === 'string' ? notificationOrDeliveryId : notificationOrDeliveryId?.deliveryId;
  if (typeof deliveryId !== 'string' || deliveryId === '') throw new TypeError('processDelivery needs a deliveryId or a delivery notification');
  if (typeof send !== 'function') throw new TypeError('processDelivery needs a provider send function');
  const timeoutMs = options.providerTimeoutMs ?? DEFAULT_PROVIDER_TIMEOUT_MS;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) throw new RangeError('providerTimeoutMs must be a positive number');
  const onEvent = options.onEvent;
  if (onEvent !== undefined && typeof onEvent !== 'function') throw new TypeError('onEvent must be a function');
  const clock = clockOption(options.clock);

  const received = typeof notificationOrDeliveryId === 'string' ? undefined : (notificationOrDeliveryId as { traceparent?: unknown }).traceparent;
  const traceparent = options.traceparent ?? (typeof received === 'string' ? received : undefined);
  const traceId = traceIdOf(traceparent);
  // Every call of this delivery names its trace (docs/contract.md#tracing).
  const call: { traceparent?: string } = traceId === undefined || traceparent === undefined ? {} : { traceparent };
  const begun = clock.now();
  const emit = (event: EventInit<DeliveryEvent>): void => {
    if (onEvent === undefined) return;
    const at = clock.now();
    try {
      onEvent({ ...event, deliveryId, at, elapsedMs: at - begun, ...(traceId === undefined ? {} : { traceId }) } as DeliveryEvent);
    } catch {
      // An observer must never change the delivery (documented on `onEvent`).
    }
  };

  const claim = await deliveries.claim(options.requestId === undefined ? { deliveryId } : { deliveryId, requestId: options.requestId }, call);
  if (claim.status === 'skip') {
    const finished = finishedReason(claim.reason);
    if (finished === undefined) {
      emit({ type: 'skipped', reason: claim.reason });
      return { kind: 'skipped', deliveryId, reason: claim.reason };
    }
    const status = FINISHED_SKIP_REASONS[finished];
    emit({ type: 'already_finished', status, reason: finished });
    return { kind: 'already_finished', deliveryId, status, reason: finished };
  }
  const { leaseId } = claim;
  emit({ type: 'claimed', leaseId, leaseExpiresAt: claim.leaseExpiresAt });

  const started = await deliveries.start({ deliveryId, leaseId }, call);
  if (started.status === 'sent') {
    emit({ type: 'already_finished', status: 'sent', reason: 'already_sent', leaseId });
    return { kind: 'already_finished', deliveryId, status: 'sent', reason: 'already_sent', leaseId };
  }
  emit({ type: 'started', leaseId });

  // Provider timing: from the call to `send` until it returned or threw.
  let providerBegun = clock.now();
  let providerEnded = providerBegun;
  const providerMs = (): number => providerEnded - providerBegun;
  const message: ReplyMessage = claim.message;
  const attachments: readonly DeliveryAttachment[] = message.attachments ?? [];
  const attachmentIds = attachments.map((a) => a.attachmentId);
  const reportFailure = async (report: FailReport, error: unknown): Promise<ProcessDeliveryResult> => {
    let answer: FailResult;
    try {
      answer = await deliveries.fail({ deliveryId, leaseId, ...report }, call);
    } catch (cause) {
      emit({ type: 'report_failed', leaseId, step: 'fail', providerMs: providerMs(), error: cause });
      throw new DeliveryReportError({
        step: 'fail',
        deliveryId,
        leaseId,
        providerMessageIds: report.providerMessageIds ?? [],
        outcome: report.outcome,
        failCode: report.code,
        providerError: error,
        cause,
      });
    }
    const reported = { deliveryId, leaseId, outcome: report.outcome, code: report.code, error };
    switch (answer.status) {
      case 'queued':
        emit({ type: 'retry_scheduled', leaseId, outcome: report.outcome, code: report.code, providerMs: providerMs(), error });
        return { kind: 'retry_scheduled', ...reported, deliveryStatus: 'queued', ...(report.retryAfterMs === undefined ? {} : { retryAfterMs: report.retryAfterMs }) };
      case 'failed':
      case 'unknown':
        emit({ type: answer.status, leaseId, outcome: report.outcome, code: report.code, providerMs: providerMs(), error });
        return answer.status === 'failed' ? { kind: 'failed', ...reported, deliveryStatus: 'failed' } : { kind: 'unknown', ...reported, deliveryStatus: 'unknown' };
      case 'sent':
        // A completion under this lease had been accepted before (e.g. a retried call): the delivery is sent.
        emit({ type: 'already_finished', status: 'sent', reason: 'already_sent', leaseId });
        return { kind: 'already_finished', deliveryId, status: 'sent', reason: 'already_sent', leaseId };
    }
  };

  let result: ProviderSendResult;
  const keeper =
    options.extendLease === false
      ? undefined
      : keepLeaseAlive(deliveries, { deliveryId, leaseId, leaseExpiresAt: claim.leaseExpiresAt, clock, report: (event) => emit({ ...event, leaseId }), traceparent: call.traceparent });
  providerBegun = clock.now();
  try {
    const files = attachments.map((a) => lazyAttachment(deliveries, deliveryId, leaseId, a));
    // The trace goes to `send` only when it is well-formed, exactly as on the calls (`call`).
    const trace = call.traceparent === undefined || traceId === undefined ? {} : { traceparent: call.traceparent, traceId };
    result = await callProvider(send, { deliveryId, leaseId, leaseExpiresAt: claim.leaseExpiresAt, text: claim.message.text, recipient: claim.message.recipient, attachments: files, ...trace }, timeoutMs, clock);
  } catch (err) {
    // No extension may race the report of the failure.
    keeper?.stop();
    providerEnded = clock.now();
    return await reportFailure(classifyProviderError(err, attachmentIds), err);
  } finally {
    keeper?.stop();
  }
  providerEnded = clock.now();

  const raw: unknown = Array.isArray(result) ? result : (result as { providerMessageIds?: unknown } | null)?.providerMessageIds;
  const ids = Array.isArray(raw) ? (raw as unknown[]) : [];
  if (ids.length === 0 || ids.length > MAX_PROVIDER_MESSAGE_IDS || !ids.every(isProviderMessageId)) {
    // The provider said "success" but gave ids complete cannot carry: the message probably went
    // out, so report it as unknown (never complete without valid ids, never send again).
    const valid = ids.filter(isProviderMessageId).slice(0, MAX_PROVIDER_MESSAGE_IDS);
    const error = new ProviderUnknownOutcomeError(`provider send returned no valid providerMessageIds (1 to ${MAX_PROVIDER_MESSAGE_IDS} strings of 1 to ${MAX_PROVIDER_MESSAGE_ID_LENGTH} characters)`, {
      code: 'invalid_provider_result',
      providerMessageIds: valid,
    });
    return await reportFailure(classifyProviderError(error), error);
  }

  const providerMessageIds = ids as string[];
  const parts = Array.isArray(result) ? undefined : usableParts((result as { parts?: unknown }).parts, attachmentIds);
  try {
    await deliveries.complete(parts === undefined ? { deliveryId, leaseId, providerMessageIds } : { deliveryId, leaseId, providerMessageIds, parts }, call);
  } catch (cause) {
    emit({ type: 'report_failed', leaseId, step: 'complete', providerMs: providerMs(), error: cause });
    throw new DeliveryReportError({ step: 'complete', deliveryId, leaseId, providerMessageIds, cause });
  }
  emit({ type: 'completed', leaseId, providerMessageIds, providerMs: providerMs() });
  return { kind: 'sent', deliveryId, leaseId, providerMessageIds };
}
