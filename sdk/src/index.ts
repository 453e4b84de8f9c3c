/**
 * @support-desk/connector-sdk — server-side client of the support desk's connector API
 * (incoming messages and outgoing reply delivery). Zero runtime dependencies; Node.js 22.12+.
 *
 * The public surface, and all of it: the client (with its options and their documented
 * defaults), the errors, the types, the notification parsers, the delivery loops (pull and push), and the receipt tracker. Everything else lives in
 * `./internal/` and may change in any release.
 */

// The client, its options, and the defaults those options fall back to.
export { ConnectorClient, type ConnectorClientOptions } from './client.js';
export type { MessagesApi } from './internal/messages.js';
export type { DeliveriesApi } from './internal/deliveries.js';
// Erasures: the customers to purge from the connector's own storage, and the loop that purges then acknowledges.
export {
  processErasures,
  type ErasuresApi,
  type ErasuresClient,
  type PendingErasureItemsOptions,
  type ProcessErasuresOptions,
  type ProcessErasuresResult,
  type PurgeErasure,
} from './internal/erasures.js';
// The channel as the connector declares it (its reply window and templates).
export type { ChannelApi } from './internal/channel.js';
export { CONNECT_FAILURE_CODES, type CallOptions, type FetchLike, type SleepFn } from './internal/transport.js';
export {
  BACKOFF_BASE_MS,
  BACKOFF_MAX_MS,
  DEFAULT_RETRY_LIMIT,
  DEFAULT_TIMEOUT_MS,
  MAX_RETRY_AFTER_MS,
  NEVER_RETRY_STATUSES,
  RETRY_METHODS,
  RETRY_STATUSES,
  type RetryOptions,
  type RetryPolicy,
} from './internal/retry.js';
export {
  DEFAULT_PROVIDER_TIMEOUT_MS,
  UNSUPPORTED_KIND_CODE,
  type ProcessDeliveryOptions,
  type Provider,
  type ProviderAttachment,
  type ProviderEdit,
  type ProviderEditInput,
  type ProviderHandlers,
  type ProviderLifecycleCallback,
  type ProviderLifecycleInput,
  type ProviderLifecycleResult,
  type ProviderSend,
  type ProviderSendInput,
  type ProviderSendResult,
  type ProviderUnsend,
  type ProviderUnsendInput,
} from './internal/process.js';
// For tests: the clock processDelivery and runPullLoop run on (their `clock` option).
export type { Clock } from './internal/clock.js';
// What processDelivery returns (one kind per situation) and reports while it runs.
export type {
  AlreadyFinishedResult,
  ClaimSkipReason,
  DeliveryEvent,
  DeliveryEventBase,
  DeliveryEventType,
  FailedResult,
  FinishedReason,
  NextDeliveryField,
  ProcessDeliveryResult,
  ReportedFailure,
  RetryScheduledResult,
  SentResult,
  SkippedResult,
  UnknownResult,
} from './internal/results.js';
// The delivery loops: pull (any @google-cloud/pubsub-like subscription) and push (an HTTP handler).
export { ackActionFor, isTransientError, type AckAction } from './internal/ack.js';
export {
  DEFAULT_CATCH_UP_INTERVAL_MS,
  DEFAULT_PULL_CONCURRENCY,
  DEFAULT_STOP_TIMEOUT_MS,
  REMEMBERED_FINISHED_DELIVERIES,
  runPullLoop,
  type DeliverySource,
  type PulledMessage,
  type PullLoop,
  type PullLoopClient,
  type PullLoopEvent,
  type PullLoopOptions,
  type PullSubscription,
} from './internal/pull-loop.js';
// Receipts: the channel's message ids back to their deliveries, and its delivery reports to `deliveries.receipt`.
export {
  createReceiptTracker,
  DEFAULT_RECEIPT_MEMORY_ENTRIES,
  HELD_RECEIPT_MAX_AGE_MS,
  MAX_HELD_RECEIPTS,
  type HeldReceiptOutcome,
  type ReceiptReport,
  type ReceiptReportOptions,
  type ReceiptReportStatus,
  type ReceiptStore,
  type ReceiptTracker,
  type ReceiptTrackerClient,
  type ReceiptTrackerOptions,
  type TrackedDelivery,
} from './internal/receipts.js';
export { createPushHandler, MAX_PUSH_BODY_BYTES, type PushHandler, type PushHandlerOptions, type PushOutcome } from './internal/push.js';
// Pub/Sub push authentication: the OIDC token check createPushHandler runs, for any other framework too.
export {
  DEFAULT_OIDC_JWKS_URL,
  OIDC_CLOCK_SKEW_MS,
  OIDC_JWKS_MIN_REFETCH_MS,
  OIDC_JWKS_FAILURE_BACKOFF_MS,
  OIDC_JWKS_STALE_MAX_MS,
  verifyPubSubOidcToken,
  type PubSubOidcClaims,
  type PubSubOidcOptions,
} from './internal/oidc.js';
export { SDK_VERSION } from './version.js';
// The lease the service grants: LEASE_MS from a claim or an extension, never past LEASE_MAX_MS after the claim.
export { LEASE_MAX_MS, LEASE_MS } from './internal/contract.generated.js';

// Errors: one base class, one subclass per documented status, and the provider errors to throw.
export * from './errors.js';

// Request and response types.
export type * from './types.js';

// Delivery notifications (Pub/Sub push or pull).
export { parseNotificationJson, parsePulledNotification, parsePushNotification, type ReceivedNotification } from './internal/notification.js';
