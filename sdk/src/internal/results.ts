/**
 * What `processDelivery` returns, and the events it reports while it runs (`onEvent`). Every
 * result kind is a distinct situation a connector may want to count or alert on differently.
 */
import type { DeliveryNotification, FailOutcome } from '../types.js';
import type { LifecycleKind, SkipReason } from './contract.generated.js';

/**
 * Why `claim` answered `skip`. The documented reasons (the contract's `SKIP_REASONS`), plus
 * `string` so that a reason added by a later service version still type-checks (handle an unknown
 * one like `waiting_for_previous`: acknowledge the notification).
 */
// `string & {}` keeps the literal members visible to editors while accepting any string.
export type ClaimSkipReason = SkipReason | (string & {});

/**
 * The skip reasons that mean the delivery is over (`already_finished`), with the status each one
 * stands for: every reason of the contract but `waiting_for_previous` (a new reason of the
 * contract does not compile until it is placed here or there).
 */
export const FINISHED_SKIP_REASONS = Object.freeze({ already_sent: 'sent', already_failed: 'failed', outcome_unknown: 'unknown' } as const satisfies Record<Exclude<SkipReason, 'waiting_for_previous'>, string>);

/** A skip reason that means the delivery is over. */
export type FinishedReason = keyof typeof FINISHED_SKIP_REASONS;

/**
 * Nothing to do NOW, and a new notification comes when there is: claim answered `skip` for a
 * reason that is not "finished" (`waiting_for_previous`), or 503 `lease_busy` (another claim holds
 * a live lease) or `retry_delayed` (its retry time has not come), which are not retried
 * (`CLAIM_SKIP_ERROR_CODES`).
 */
export interface SkippedResult {
  kind: 'skipped';
  deliveryId: string;
  reason: ClaimSkipReason;
}

/**
 * The delivery was already over before this call could send it: claim answered `skip` with
 * `already_sent` / `already_failed` / `outcome_unknown`, or start answered `sent` (then `leaseId`
 * is the lease of this call), or `fail` answered `sent` (a completion of the same lease had
 * already been accepted). The provider was not called again.
 */
export interface AlreadyFinishedResult {
  kind: 'already_finished';
  deliveryId: string;
  /** The delivery's final status. */
  status: 'sent' | 'failed' | 'unknown';
  reason: FinishedReason;
  /** The lease of this call, when the claim succeeded. */
  leaseId?: string;
}

/**
 * What a call that ended the delivery may add: the conversation's next delivery, which that end made
 * claimable now (`complete` / `fail` answered `next`). Process it at once (`runPullLoop` does) rather
 * than wait for its notification, which still comes and is then answered `already_finished`.
 */
export interface NextDeliveryField {
  next?: DeliveryNotification;
}

/** The provider accepted the message and `complete` answered `sent`. */
export interface SentResult extends NextDeliveryField {
  kind: 'sent';
  deliveryId: string;
  leaseId: string;
  providerMessageIds: string[];
  /** The claim's `kind` for the deliveries that change a sent reply (`edit`, `unsend`); absent for a reply. */
  deliveryKind?: LifecycleKind;
}

/** What every reported provider failure carries (`retry_scheduled`, `failed`, `unknown`). */
export interface ReportedFailure {
  deliveryId: string;
  leaseId: string;
  /** The outcome reported with `fail` (derived from what `send` threw). */
  outcome: FailOutcome;
  /** The code reported with `fail`. */
  code: string;
  /** What `send` threw (or the SDK's own `ProviderUnknownOutcomeError` for a timeout or unusable ids). */
  error: unknown;
}

/**
 * The provider rejected the message temporarily and the service re-queued it (`fail` answered
 * `queued`): it will be notified again. Harmless on its own; count it, do not page anyone.
 */
export interface RetryScheduledResult extends ReportedFailure {
  kind: 'retry_scheduled';
  deliveryStatus: 'queued';
  /** The delay reported to the service, when the provider gave one. */
  retryAfterMs?: number;
}

/**
 * The delivery failed for good (`fail` answered `failed`): a permanent rejection, or a `retry`
 * when the service's retry budget was spent (then `outcome` is `retry`).
 */
export interface FailedResult extends ReportedFailure, NextDeliveryField {
  kind: 'failed';
  deliveryStatus: 'failed';
}

/** The send may or may not have reached the channel (`fail` answered `unknown`); it is never repeated automatically. */
export interface UnknownResult extends ReportedFailure, NextDeliveryField {
  kind: 'unknown';
  deliveryStatus: 'unknown';
}

/** What `processDelivery` did; switch on `kind`. */
export type ProcessDeliveryResult = SentResult | SkippedResult | AlreadyFinishedResult | RetryScheduledResult | FailedResult | UnknownResult;

/** Fields of every `processDelivery` event. */
export interface DeliveryEventBase {
  deliveryId: string;
  /** Epoch ms when the event happened. */
  at: number;
  /** Milliseconds since `processDelivery` was called. */
  elapsedMs: number;
  /**
   * The delivery's trace id (from the notification's `traceparent`), when known: export spans or
   * metrics in that trace with your own tooling; the service's log lines carry the same id.
   */
  traceId?: string;
}

/**
 * What `processDelivery` reports to `onEvent` while it runs, in order: `claimed` (or `skipped` /
 * `already_finished` and nothing else; after `claimed`, a delivery of a kind without a callback
 * goes straight to `failed` with code `unsupported_kind`), `started` (start answered `sending`: the provider is
 * called now), any number of `extended` / `extend_failed`, then exactly one of `completed`,
 * `retry_scheduled`, `failed`, `unknown`, `already_finished` or `report_failed`.
 */
export type DeliveryEvent =
  /** `deliveryKind`: the claim's `kind` (`edit`, `unsend`, or a later one), absent for a reply. */
  | (DeliveryEventBase & { type: 'claimed'; leaseId: string; leaseExpiresAt: number; deliveryKind?: string })
  | (DeliveryEventBase & { type: 'skipped'; reason: ClaimSkipReason })
  | (DeliveryEventBase & { type: 'already_finished'; status: AlreadyFinishedResult['status']; reason: FinishedReason; leaseId?: string })
  | (DeliveryEventBase & { type: 'started'; leaseId: string })
  | (DeliveryEventBase & { type: 'extended'; leaseId: string; leaseExpiresAt: number })
  | (DeliveryEventBase & { type: 'extend_failed'; leaseId: string; error: unknown; willRetry: boolean })
  | (DeliveryEventBase & { type: 'completed'; leaseId: string; providerMessageIds: string[]; providerMs: number })
  | (DeliveryEventBase & { type: 'retry_scheduled' | 'failed' | 'unknown'; leaseId: string; outcome: FailOutcome; code: string; providerMs: number; error: unknown })
  | (DeliveryEventBase & { type: 'report_failed'; leaseId: string; step: 'complete' | 'fail'; providerMs: number; error: unknown });

/** The `type`s of `DeliveryEvent`. */
export type DeliveryEventType = DeliveryEvent['type'];
