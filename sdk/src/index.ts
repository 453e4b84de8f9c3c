/**
 * @support-desk/connector-sdk — server-side client of the support desk's connector API
 * (incoming messages and outgoing reply delivery). Zero runtime dependencies; Node.js 22.12+.
 */
export { ConnectorClient, type ConnectorClientOptions } from './client.js';
export { MessagesApi } from './messages.js';
export { DeliveriesApi } from './deliveries.js';
export {
  BadRequestError,
  ConflictError,
  ConnectorApiError,
  type ConnectorApiErrorDetails,
  ConnectorError,
  ConnectorNetworkError,
  ConnectorTimeoutError,
  DeliveryReportError,
  ForbiddenError,
  InvalidNotificationError,
  NotFoundError,
  PayloadTooLargeError,
  ProviderPermanentError,
  ProviderRetryableError,
  ProviderUnknownOutcomeError,
  type ProviderErrorOptions,
  ServiceUnavailableError,
  TooManyRequestsError,
  UnauthorizedError,
  UnexpectedResponseError,
  UnsupportedMediaTypeError,
} from './errors.js';
export { CONNECT_FAILURE_CODES, type CallOptions, type FetchLike, type SleepFn } from './http.js';
export {
  backoffDelayMs,
  BACKOFF_BASE_MS,
  BACKOFF_MAX_MS,
  DEFAULT_RETRY_LIMIT,
  DEFAULT_TIMEOUT_MS,
  MAX_RETRY_AFTER_MS,
  NEVER_RETRY_STATUSES,
  parseRetryAfterMs,
  RETRY_METHODS,
  RETRY_STATUSES,
  type RetryOptions,
  type RetryPolicy,
} from './retry.js';
export { parseNotificationJson, parsePulledNotification, parsePushNotification } from './notification.js';
export {
  classifyProviderError,
  DEFAULT_PROVIDER_TIMEOUT_MS,
  FAIL_CODE_MAX_LENGTH,
  FAIL_CODE_PATTERN,
  MAX_FAIL_RETRY_AFTER_MS,
  MAX_PROVIDER_MESSAGE_ID_LENGTH,
  MAX_PROVIDER_MESSAGE_IDS,
  type ProcessDeliveryOptions,
  type ProcessDeliveryResult,
  type ProviderSend,
  type ProviderSendInput,
  type ProviderSendResult,
  toFailCode,
} from './process.js';
export type * from './types.js';
export { SDK_VERSION } from './version.js';
