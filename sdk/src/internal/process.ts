/**
 * `processDelivery`: the delivery usage rules of docs/contract.md#connector-rules in one call —
 * claim; if ready, start; if start says `sending`, call the provider ONCE; then complete with
 * the provider's ids, or fail with an outcome derived from what the provider threw.
 */
import {
  AttachmentIntegrityError,
  AttachmentUnavailableError,
  ConnectorApiError,
  DeliveryReportError,
  ProviderPermanentError,
  ProviderRetryableError,
  ProviderUnknownOutcomeError,
} from '../errors.js';
import type { DeliveriesApi } from './deliveries.js';
import { codePointLength, DELIVERY_LIMITS, FAIL_CODE_PATTERN, isLifecycleKind, LEASE_MS, LIFECYCLE_KINDS, UNSUPPORTED_KIND, type LifecycleKind } from './contract.generated.js';
import type {
  AttachmentFile,
  CompleteResult,
  DeliveryAttachment,
  DeliveryConversation,
  DeliveryNotification,
  DeliveryPart,
  DeliveryTarget,
  FailOutcome,
  FailResult,
  Recipient,
  ReplyMessage,
  StartAddress,
  StartedConversation,
  ReplyTemplate,
} from '../types.js';
import { FINISHED_SKIP_REASONS, type DeliveryEvent, type FinishedReason, type NextDeliveryField, type ProcessDeliveryResult } from './results.js';
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
 * The claim's 503 answers that `processDelivery` returns as `skipped` (with the code as `reason`)
 * at once instead of retrying: `lease_busy` (another claim holds a live lease) and `retry_delayed`
 * (a retry time not yet due). Either way the service publishes the notification again when the
 * delivery can proceed (the lease ran out unused, the time came), so the notification is
 * acknowledged.
 */
const CLAIM_SKIP_ERROR_CODES: readonly string[] = Object.freeze(['lease_busy', 'retry_delayed']);

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
  /**
   * Where the reply goes. For a conversation the desk starts (`start` is set) there is no thread
   * yet: `address` says who to write to and the two ids are empty.
   */
  recipient: Recipient & { address?: StartAddress };
  /**
   * Set only for a conversation the desk starts (a claim with `kind: "start"`): send the first
   * message to `recipient.address` and return `conversation` (the thread the channel made) with
   * the provider ids. `template` is set when the member chose one of the channel's templates, as
   * on a template reply (`text` is its preview with the params filled in).
   */
  start?: true;
  /**
   * The conversation's connector metadata (the merge of the `metadata` its incoming messages
   * carried: `messages.send`), present only when it has some.
   */
  conversation?: DeliveryConversation;
  /**
   * The reply's files (empty when it has none, always for integrations without the attachments
   * capability). `text` may be empty when there are files.
   */
  attachments: readonly ProviderAttachment[];
  /**
   * A template reply's or start's template (only for integrations that declared templates with
   * `channel.update`): send this template with these params where your channel has templates;
   * `text` is its preview filled in, to send as is where it has none. Absent on a free-form reply.
   */
  template?: ReplyTemplate;
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
export type ProviderSendResult = { providerMessageIds: readonly string[]; parts?: readonly DeliveryPart[]; conversation?: StartedConversation } | readonly string[];

/** A start's `send` returned no thread: the message probably went out, but nobody can answer into it. */
const START_WITHOUT_CONVERSATION = 'start_without_conversation';

/**
 * Sends one reply through your channel. Return the provider ids when the provider ACCEPTED the
 * message. Throw `ProviderRetryableError` for a definite temporary rejection, `ProviderPermanentError`
 * for a permanent one, and anything else (or `ProviderUnknownOutcomeError`) when you cannot tell.
 */
export type ProviderSend = (input: ProviderSendInput) => Promise<ProviderSendResult> | ProviderSendResult;

/** What every callback of a delivery kind receives (`ProviderEditInput` adds the new text). */
interface ProviderLifecycleInputBase {
  deliveryId: string;
  leaseId: string;
  /** Epoch ms at which the lease ends. */
  leaseExpiresAt: number;
  /** The chat and the customer of the reply being changed. */
  recipient: Recipient;
  /** As in `ProviderSendInput`. */
  conversation?: DeliveryConversation;
  /**
   * The reply being changed: its delivery (`deliveryId`) and the provider ids its connector
   * reported when it was sent (`providerMessageIds`, and each part's in `parts` when it reported
   * parts). Edit or delete THOSE messages in the channel.
   */
  target: DeliveryTarget;
  /** Aborts when `providerTimeoutMs` passes. */
  signal: AbortSignal;
  /** As in `ProviderSendInput`. */
  traceparent?: string;
  /** As in `ProviderSendInput`. */
  traceId?: string;
}

/** What your provider `edit` receives: the reply's new `text` and the `target` to change. */
export interface ProviderEditInput extends ProviderLifecycleInputBase {
  /** The reply's new text (1 to the contract's reply limit in code points): replace the target's text with it. */
  text: string;
}

/** What your provider `unsend` receives: the `target` to delete from the channel. */
export type ProviderUnsendInput = ProviderLifecycleInputBase;

/** What your callback of delivery kind `K` receives: an edit's new `text` and the `target`; every other kind the `target` only. */
export type ProviderLifecycleInput<K extends LifecycleKind> = K extends 'edit' ? ProviderEditInput : ProviderLifecycleInputBase;

/**
 * Your callback of delivery kind `K` (`edit`, `unsend`: the contract's kinds). Throw exactly as
 * from `send`: `ProviderRetryableError`, `ProviderPermanentError` (e.g. the channel's own window
 * passed), anything else when you cannot tell.
 */
export type ProviderLifecycleCallback<K extends LifecycleKind> = (input: ProviderLifecycleInput<K>) => Promise<ProviderLifecycleResult> | ProviderLifecycleResult;

/**
 * What an `edit` / `unsend` callback returns when the provider accepted the change: the provider's
 * ids of the changed message (1 to 20, as from `send`), or nothing (`undefined`, `[]`): then the
 * delivery is completed with the target's ids (an edit or deletion normally keeps the message's id).
 */
export type ProviderLifecycleResult = ProviderSendResult | undefined;

/**
 * Edits a sent reply in your channel (integrations with `replies.lifecycle.edit`). Throw exactly as
 * from `send`: `ProviderRetryableError`, `ProviderPermanentError` (e.g. the channel's own window
 * passed), anything else when you cannot tell.
 */
export type ProviderEdit = ProviderLifecycleCallback<'edit'>;

/** Deletes ("unsends") a sent reply in your channel (integrations with `replies.lifecycle.unsend`). Throw as from `send`. */
export type ProviderUnsend = ProviderLifecycleCallback<'unsend'>;

/**
 * The provider callbacks, by delivery kind: `send` for a reply (every delivery of a v1
 * integration), and one optional callback per kind of the contract (`edit`, `unsend`) for the
 * deliveries that change a sent reply. A delivery of a kind without its callback (or of a kind
 * this SDK version does not know) is failed `failed` with code `unsupported_kind`, without being started.
 */
export type ProviderHandlers = { send: ProviderSend } & { [K in LifecycleKind]?: ProviderLifecycleCallback<K> };

/** The provider argument of `processDelivery`, `runPullLoop` and `createPushHandler`: a `send` function, or `{ send, edit?, unsend? }`. */
export type Provider = ProviderSend | ProviderHandlers;

/** The fail code of a delivery whose kind has no callback (the contract's `UNSUPPORTED_KIND`). */
export const UNSUPPORTED_KIND_CODE: typeof UNSUPPORTED_KIND = UNSUPPORTED_KIND;

/**
 * Checks a provider argument and returns its callbacks; throws a TypeError naming `who` for
 * anything else (checked when a loop is created, not at its first delivery).
 */
export function providerHandlers(provider: unknown, who: string): ProviderHandlers {
  if (typeof provider === 'function') return { send: provider as ProviderSend };
  const shape = `${who} needs a provider send function or { send, ${LIFECYCLE_KINDS.map((kind) => `${kind}?`).join(', ')} }`;
  if (typeof provider !== 'object' || provider === null) throw new TypeError(shape);
  const given = provider as Record<string, unknown>;
  if (typeof given.send !== 'function') throw new TypeError(shape);
  const callbacks = LIFECYCLE_KINDS.flatMap((kind) => {
    const callback = given[kind];
    if (callback !== undefined && typeof callback !== 'function') throw new TypeError(`${who}: ${kind} must be a function when given`);
    return callback === undefined ? [] : [[kind, callback] as const];
  });
  return { send: given.send, ...Object.fromEntries(callbacks) } as ProviderHandlers;
}

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

async function callProvider<R>(call: (signal: AbortSignal) => Promise<R> | R, timeoutMs: number, clock: Clock): Promise<R> {
  const controller = new AbortController();
  let timer: unknown;
  const timeout = new Promise<never>((_, reject) => {
    timer = clock.setTimeout(() => {
      const err = new ProviderUnknownOutcomeError(`provider send did not finish within ${timeoutMs} ms`, { code: 'provider_timeout' });
      controller.abort(err);
      reject(err);
    }, timeoutMs);
  });
  const sending = (async () => call(controller.signal))();
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

/**
 * The claim's `target` (edit and unsend deliveries), when it has the documented shape: its ids go
 * to the callback and, when the callback returns none, to `complete`, so they must be usable ids.
 */
function readTarget(claim: object): DeliveryTarget | undefined {
  const target: unknown = (claim as { target?: unknown }).target;
  if (typeof target !== 'object' || target === null) return undefined;
  const { deliveryId, providerMessageIds } = target as { deliveryId?: unknown; providerMessageIds?: unknown };
  if (typeof deliveryId !== 'string' || !Array.isArray(providerMessageIds) || providerMessageIds.length === 0 || !providerMessageIds.every(isProviderMessageId)) return undefined;
  return target as DeliveryTarget;
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
  provider: Provider,
  options: ProcessDeliveryOptions = {},
): Promise<ProcessDeliveryResult> {
  const deliveryId = typeof notificationOrDeliveryId === 'string' ? notificationOrDeliveryId : notificationOrDeliveryId?.deliveryId;
  if (typeof deliveryId !== 'string' || deliveryId === '') throw new TypeError('processDelivery needs a deliveryId or a delivery notification');
  const handlers = providerHandlers(provider, 'processDelivery');
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

  let claim: Awaited<ReturnType<DeliveriesApi['claim']>>;
  try {
    claim = await deliveries.claim(options.requestId === undefined ? { deliveryId } : { deliveryId, requestId: options.requestId }, { ...call, noRetryCodes: CLAIM_SKIP_ERROR_CODES });
  } catch (error) {
    const code = error instanceof ConnectorApiError ? error.code : undefined;
    if (code === undefined || !CLAIM_SKIP_ERROR_CODES.includes(code)) throw error;
    // Another instance holds it, or its retry time has not come: the service notifies it again
    // when the lease runs out unused or the time comes, so waiting here (up to 3 x 30 s) would only
    // hold this delivery's slot and its conversation.
    emit({ type: 'skipped', reason: code });
    return { kind: 'skipped', deliveryId, reason: code };
  }
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
  // `kind` is absent on a plain reply (its claim keeps the v1 shape); read as unknown so that a
  // kind a later service version adds is failed below instead of being sent as a reply.
  const deliveryKind: unknown = (claim as { kind?: unknown }).kind;
  emit({ type: 'claimed', leaseId, leaseExpiresAt: claim.leaseExpiresAt, ...(typeof deliveryKind === 'string' ? { deliveryKind } : {}) });

  // Provider timing: from the call to the callback until it returned or threw.
  let providerBegun = clock.now();
  let providerEnded = providerBegun;
  const providerMs = (): number => providerEnded - providerBegun;
  // A reply (no `kind`): its files are the parts it reports; an edit or unsend has none.
  const reply: ReplyMessage | undefined = 'kind' in claim ? undefined : claim.message;
  const attachments: readonly DeliveryAttachment[] = reply?.attachments ?? [];
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
        return answer.status === 'failed' ? { kind: 'failed', ...reported, deliveryStatus: 'failed', ...nextOf(answer) } : { kind: 'unknown', ...reported, deliveryStatus: 'unknown', ...nextOf(answer) };
      case 'sent':
        // A completion under this lease had been accepted before (e.g. a retried call): the delivery is sent.
        emit({ type: 'already_finished', status: 'sent', reason: 'already_sent', leaseId });
        return { kind: 'already_finished', deliveryId, status: 'sent', reason: 'already_sent', leaseId };
    }
  };

  // Which callback runs this delivery. None: fail it at once, before start (nothing is sent, and
  // the connector's other deliveries go on; the operator sees `unsupported_kind`).
  const target = readTarget(claim);
  let run: ((signal: AbortSignal) => Promise<ProviderLifecycleResult> | ProviderLifecycleResult) | undefined;
  // The trace goes to the callback only when it is well-formed, exactly as on the calls (`call`).
  const trace = call.traceparent === undefined || traceId === undefined ? {} : { traceparent: call.traceparent, traceId };
  // `conversation` only when the claim has it, so a connector that never sends metadata never sees the key.
  const conversation = claim.conversation === undefined ? {} : { conversation: claim.conversation };
  // A start goes to an address: `send` gets it as `recipient.address`, with empty thread ids.
  const startMessage = 'kind' in claim && claim.kind === 'start' ? claim.message : undefined;
  const claimed = claim.message.recipient;
  const recipient: Recipient & { address?: StartAddress } = 'address' in claimed ? { externalConversationId: '', externalCustomerId: '', address: claimed.address } : claimed;
  const base = { deliveryId, leaseId, leaseExpiresAt: claim.leaseExpiresAt, recipient, ...conversation, ...trace };
  if (startMessage !== undefined) {
    const send = handlers.send;
    const template = startMessage.template === undefined ? {} : { template: startMessage.template };
    run = (signal) => send({ ...base, text: startMessage.text, attachments: [], start: true, ...template, signal });
  } else if (reply !== undefined && deliveryKind === undefined) {
    const send = handlers.send;
    run = (signal) => {
      const files = attachments.map((a) => lazyAttachment(deliveries, deliveryId, leaseId, a));
      // `template` only on a template reply: a connector that declared none never sees the key.
      const template = reply.template === undefined ? {} : { template: reply.template };
      return send({ ...base, text: reply.text, attachments: files, ...template, signal });
    };
  } else if ('kind' in claim && claim.kind === 'edit' && handlers.edit !== undefined && target !== undefined) {
    const edit = handlers.edit;
    const text = claim.message.text;
    run = (signal) => edit({ ...base, text, target, signal });
  } else if ('kind' in claim && claim.kind !== 'edit' && isLifecycleKind(claim.kind) && target !== undefined) {
    // Every other kind of the contract acts on the target only: its callback by the kind's name.
    const callback = handlers[claim.kind];
    if (callback !== undefined) run = (signal) => callback({ ...base, target, signal });
  }
  if (run === undefined) {
    const kindName = typeof deliveryKind === 'string' ? deliveryKind : JSON.stringify(deliveryKind);
    const hasCallback = isLifecycleKind(deliveryKind) && handlers[deliveryKind] !== undefined;
    const error = new ProviderPermanentError(
      hasCallback ? `the ${kindName} delivery came without a usable target` : `no ${kindName} callback: pass { send, ${kindName} } to handle deliveries of kind ${kindName}`,
      { code: UNSUPPORTED_KIND_CODE },
    );
    return await reportFailure({ outcome: 'failed', code: UNSUPPORTED_KIND_CODE }, error);
  }

  const started = await deliveries.start({ deliveryId, leaseId }, call);
  if (started.status === 'sent') {
    emit({ type: 'already_finished', status: 'sent', reason: 'already_sent', leaseId });
    return { kind: 'already_finished', deliveryId, status: 'sent', reason: 'already_sent', leaseId };
  }
  emit({ type: 'started', leaseId });

  let result: ProviderLifecycleResult;
  const keeper =
    options.extendLease === false
      ? undefined
      : keepLeaseAlive(deliveries, { deliveryId, leaseId, leaseExpiresAt: claim.leaseExpiresAt, clock, report: (event) => emit({ ...event, leaseId }), traceparent: call.traceparent });
  providerBegun = clock.now();
  try {
    result = await callProvider(run, timeoutMs, clock);
  } catch (err) {
    // No extension may race the report of the failure.
    keeper?.stop();
    providerEnded = clock.now();
    return await reportFailure(classifyProviderError(err, attachmentIds), err);
  } finally {
    keeper?.stop();
  }
  providerEnded = clock.now();

  const raw: unknown = Array.isArray(result) ? result : (result as { providerMessageIds?: unknown } | null | undefined)?.providerMessageIds;
  let ids = Array.isArray(raw) ? (raw as unknown[]) : [];
  // An edit or unsend that returned no ids changed the target in place: complete with its ids
  // (complete needs at least one). Only for "no ids": ids the provider did give are checked below.
  if (target !== undefined && deliveryKind !== undefined && ids.length === 0) ids = [...target.providerMessageIds];
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
  // A start completes with the thread its `send` returned; without one it cannot complete (the
  // service answers 400 conversation_required), though the message probably went out: unknown.
  const startedThread = startMessage === undefined || Array.isArray(result) ? undefined : (result as { conversation?: StartedConversation }).conversation;
  if (startMessage !== undefined && startedThread === undefined) {
    const error = new ProviderUnknownOutcomeError('the send of a start returned no conversation ({ externalConversationId, externalCustomerId })', { code: START_WITHOUT_CONVERSATION, providerMessageIds });
    return await reportFailure(classifyProviderError(error), error);
  }
  // Parts are the parts of a reply (its text and files); an edit or unsend reports none.
  const parts = Array.isArray(result) || deliveryKind !== undefined ? undefined : usableParts((result as { parts?: unknown }).parts, attachmentIds);
  let completed: CompleteResult;
  try {
    const thread = startedThread === undefined ? {} : { conversation: startedThread };
    completed = await deliveries.complete(parts === undefined ? { deliveryId, leaseId, providerMessageIds, ...thread } : { deliveryId, leaseId, providerMessageIds, parts, ...thread }, call);
  } catch (cause) {
    emit({ type: 'report_failed', leaseId, step: 'complete', providerMs: providerMs(), error: cause });
    throw new DeliveryReportError({ step: 'complete', deliveryId, leaseId, providerMessageIds, cause });
  }
  emit({ type: 'completed', leaseId, providerMessageIds, providerMs: providerMs() });
  return { kind: 'sent', deliveryId, leaseId, providerMessageIds, ...(isLifecycleKind(deliveryKind) ? { deliveryKind } : {}), ...nextOf(completed) };
}

/** The `next` of a `complete` or `fail` answer, as a result field (absent when the answer has none). */
function nextOf(answer: { next?: DeliveryNotification }): NextDeliveryField {
  return answer.next === undefined ? {} : { next: { ...answer.next } };
}
