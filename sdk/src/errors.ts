/**
 * Every error this SDK throws is a `ConnectorError`. Errors of API calls are `ConnectorApiError`s:
 * one subclass per HTTP status the service documents, plus transport failures (network, timeout)
 * and 2xx answers the SDK cannot understand. Messages never contain the integration key.
 */

/**
 * Base class of every error thrown by this SDK. Every class names itself with a literal `name`
 * (not the class's own name, which a minifier may change), so `err.name` is stable in logs.
 */
export class ConnectorError extends Error {
  override readonly name: string = 'ConnectorError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** What every failed API call carries, whatever went wrong. */
export interface ConnectorApiErrorDetails {
  /** HTTP status of the last answer; `undefined` when no answer arrived (network error, timeout). */
  status?: number | undefined;
  /** `error.code` of the service's envelope `{"error":{"code","message"}}`, or an SDK code such as `network_error`. */
  code: string;
  /** `error.message` of the envelope (or an SDK description); used to build `Error#message`. */
  detail?: string | undefined;
  /** Delay the service asked for in `Retry-After`, in milliseconds (uncapped). */
  retryAfterMs?: number | undefined;
  /** `X-Request-Id` response header of the last answer, to quote in support requests. */
  requestId?: string | undefined;
  /** `POST`. */
  method: string;
  /** Path of the operation, e.g. `/v1/deliveries/claim` (never the key, never a query). */
  path: string;
  /** Number of HTTP attempts made for this call, retries included. */
  attempts: number;
  cause?: unknown;
}

/** A call to the service failed: an error answer, a transport failure, or an unreadable success. */
export class ConnectorApiError extends ConnectorError {
  override readonly name: string = 'ConnectorApiError';
  /** HTTP status, or `undefined` when no HTTP answer arrived (see `ConnectorNetworkError`). */
  declare readonly status: number | undefined;
  /** Stable snake_case code: the envelope's `error.code` (e.g. `lease_lost`), or `http_<status>` when the body had none. */
  declare readonly code: string;
  /** Milliseconds from `Retry-After` on the last answer (uncapped), if it had one. */
  declare readonly retryAfterMs: number | undefined;
  /** `X-Request-Id` of the last answer, if any. */
  declare readonly requestId: string | undefined;
  declare readonly method: string;
  declare readonly path: string;
  declare readonly attempts: number;

  constructor(details: ConnectorApiErrorDetails) {
    const what = details.status === undefined ? details.code : `${details.status} ${details.code}`;
    const tail = details.detail ? `: ${details.detail}` : '';
    super(`${details.method} ${details.path} failed with ${what}${tail}`, 'cause' in details ? { cause: details.cause } : undefined);
    const { status, code, retryAfterMs, requestId, method, path, attempts } = details;
    Object.assign(this, { status, code, retryAfterMs, requestId, method, path, attempts });
  }
}

/** A `ConnectorApiError` subclass for one documented HTTP status, with its literal name. */
function statusError<S extends number>(name: string) {
  return class extends ConnectorApiError {
    declare readonly status: S;
    override readonly name: string = name;
  };
}

/** 400: invalid input. Permanent: never retried; fix the request. */
export class BadRequestError extends statusError<400>('BadRequestError') {}
/** 401: invalid, unknown or revoked integration key. Never retried. */
export class UnauthorizedError extends statusError<401>('UnauthorizedError') {}
/** 403: inactive integration or disabled source. Never retried. */
export class ForbiddenError extends statusError<403>('ForbiddenError') {}
/** 404: missing delivery, or one that belongs to another integration. Never retried. */
export class NotFoundError extends statusError<404>('NotFoundError') {}
/** 409: lease lost / conflicting completion / finished delivery, or an `eventId` reused with other content. Never retried. */
export class ConflictError extends statusError<409>('ConflictError') {}
/** 413: JSON over 64 KB, or image / multipart size limits exceeded. Never retried. */
export class PayloadTooLargeError extends statusError<413>('PayloadTooLargeError') {}
/** 415: unsupported content type. Never retried. */
export class UnsupportedMediaTypeError extends statusError<415>('UnsupportedMediaTypeError') {}
/** 429: incoming rate limit; thrown once the retries (which honour `Retry-After`) are used up. */
export class TooManyRequestsError extends statusError<429>('TooManyRequestsError') {}
/** 503: busy lease, delayed retry or temporary failure; thrown once the retries are used up. */
export class ServiceUnavailableError extends statusError<503>('ServiceUnavailableError') {}

/**
 * No HTTP answer arrived: connection refused, DNS failure, reset, TLS failure...
 * `requestMayHaveArrived` is `false` only when the failure happened before any byte was sent
 * (connection refused, DNS failure): the only case in which the fallback host is tried.
 */
export class ConnectorNetworkError extends ConnectorApiError {
  override readonly name: string = 'ConnectorNetworkError';
  declare readonly status: undefined;
  readonly requestMayHaveArrived: boolean;
  constructor(details: ConnectorApiErrorDetails & { requestMayHaveArrived: boolean }) {
    super(details);
    this.requestMayHaveArrived = details.requestMayHaveArrived;
  }
}

/** No complete answer within `timeoutMs`. The request may have arrived and been processed. */
export class ConnectorTimeoutError extends ConnectorNetworkError {
  override readonly name: string = 'ConnectorTimeoutError';
}

/** A 2xx answer whose body is not what the contract describes (not JSON, or missing fields). Not retried. */
export class UnexpectedResponseError extends ConnectorApiError {
  override readonly name: string = 'UnexpectedResponseError';
}

/** The data of a Pub/Sub message is not a delivery notification (docs/contract.md#notifications). */
export class InvalidNotificationError extends ConnectorError {
  override readonly name: string = 'InvalidNotificationError';
  readonly code = 'invalid_notification';
}

/** Which check of a Pub/Sub push request's OIDC token failed (`PushAuthenticationError#code`). */
export type PushAuthenticationErrorCode =
  /** No `Authorization` header. */
  | 'missing_token'
  /** The header is not `Bearer <JWT>`, or the JWT is not three base64url JSON parts with `kid`, `exp`, `iat`. */
  | 'malformed_token'
  /** `alg` is not `RS256` (`none`, `HS256`...). */
  | 'unsupported_algorithm'
  /** No published Google key has the token's `kid`, even after fetching the keys again. */
  | 'unknown_key'
  /** The RS256 signature does not match (a tampered header, payload or signature). */
  | 'invalid_signature'
  /** `iss` is not `https://accounts.google.com` or `accounts.google.com`. */
  | 'invalid_issuer'
  /** `aud` is not the configured audience. */
  | 'invalid_audience'
  /** `exp` is past (beyond the clock skew allowance). */
  | 'token_expired'
  /** `iat` (or `nbf`) is in the future (beyond the clock skew allowance). */
  | 'token_not_yet_valid'
  /** `email` is not the configured push service account. */
  | 'invalid_email'
  /** `email_verified` is not `true`. */
  | 'email_not_verified'
  /** Google's keys could not be fetched or read: not the caller's fault (`createPushHandler` answers 503). */
  | 'jwks_unavailable';

/**
 * `verifyPubSubOidcToken` (and so `createPushHandler`) refused a Pub/Sub push request's OIDC
 * token; `code` says which check failed. The message never contains the token.
 */
export class PushAuthenticationError extends ConnectorError {
  override readonly name: string = 'PushAuthenticationError';
  readonly code: PushAuthenticationErrorCode;
  constructor(code: PushAuthenticationErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/**
 * `processDelivery`: the provider step is over, but reporting its result (complete or fail) to the
 * service failed even after retries. `cause` is the API error. When `step` is `complete` the
 * message WAS sent: keep `providerMessageIds` and call `deliveries.complete` again later
 * (a late completion under the same lease is accepted), and do not send again.
 */
export class DeliveryReportError extends ConnectorError {
  override readonly name: string = 'DeliveryReportError';
  declare readonly step: 'complete' | 'fail';
  declare readonly deliveryId: string;
  declare readonly leaseId: string;
  /** Ids the provider returned (complete) or the partial ids reported (fail). */
  declare readonly providerMessageIds: readonly string[];
  /** For `step: 'fail'`: the outcome and code that could not be reported. */
  declare readonly outcome: 'retry' | 'failed' | 'unknown' | undefined;
  declare readonly failCode: string | undefined;
  /** For `step: 'fail'`: what the provider threw. */
  declare readonly providerError: unknown;

  constructor(init: {
    step: 'complete' | 'fail';
    deliveryId: string;
    leaseId: string;
    providerMessageIds: readonly string[];
    outcome?: 'retry' | 'failed' | 'unknown';
    failCode?: string;
    providerError?: unknown;
    cause: unknown;
  }) {
    const what = init.step === 'complete' ? 'the provider sent the message but complete' : `fail (${init.outcome ?? '?'}, ${init.failCode ?? '?'})`;
    super(`delivery ${init.deliveryId}: ${what} could not be reported`, { cause: init.cause });
    const { step, deliveryId, leaseId, providerMessageIds, outcome, failCode, providerError } = init;
    Object.assign(this, { step, deliveryId, leaseId, providerMessageIds, outcome, failCode, providerError });
  }
}

/** Options shared by the provider error classes. */
export interface ProviderErrorOptions {
  /** snake_case code reported to the service (normalised to `^[a-z][a-z0-9_]*$`, at most 80 characters). */
  code?: string;
  cause?: unknown;
  /**
   * What became of each part of the reply (its text, each attachment) before the error, reported
   * with `fail`: e.g. the text `sent` and a file `failed`. A resend then sends only the parts not
   * known to be sent.
   */
  parts?: ReadonlyArray<{ part: string; status: 'sent' | 'failed'; providerMessageIds?: readonly string[]; code?: string }>;
}

/**
 * The bytes of an attachment do not have the SHA-256 they should. `inTransit`: they differ from the
 * digest the answer itself carried (`ETag`, `Repr-Digest`), so the download was damaged on the way
 * and another attempt may succeed (`processDelivery` reports `retry`); otherwise the service's
 * file differs from the claim's `sha256`, which no retry changes (`failed`). Code `attachment_integrity`.
 */
export class AttachmentIntegrityError extends ConnectorError {
  override readonly name: string = 'AttachmentIntegrityError';
  readonly code = 'attachment_integrity';
  readonly attachmentId: string;
  readonly expectedSha256: string;
  readonly actualSha256: string;
  readonly inTransit: boolean;
  constructor(init: { attachmentId: string; expectedSha256: string; actualSha256: string; inTransit: boolean }) {
    super(
      `attachment ${init.attachmentId}: the bytes have SHA-256 ${init.actualSha256}, expected ${init.expectedSha256} (${init.inTransit ? 'damaged in transit' : 'differs from the claim'})`,
    );
    this.attachmentId = init.attachmentId;
    this.expectedSha256 = init.expectedSha256;
    this.actualSha256 = init.actualSha256;
    this.inTransit = init.inTransit;
  }
}

/**
 * An attachment's lazy `fetch()` (in `processDelivery`) could not download the file; `cause` is the
 * API error. Thrown out of your `send`, it is reported as `failed` `attachment_not_found` when the
 * service does not know the file on this delivery (404), else as `retry` `attachment_unavailable`.
 */
export class AttachmentUnavailableError extends ConnectorError {
  override readonly name: string = 'AttachmentUnavailableError';
  readonly attachmentId: string;
  /** `attachment_not_found` (404) or `attachment_unavailable` (anything else). */
  readonly code: 'attachment_not_found' | 'attachment_unavailable';
  constructor(attachmentId: string, cause: unknown) {
    const notFound = cause instanceof ConnectorApiError && cause.status === 404;
    super(`attachment ${attachmentId} could not be downloaded: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.attachmentId = attachmentId;
    this.code = notFound ? 'attachment_not_found' : 'attachment_unavailable';
  }
}

/**
 * Throw from your provider `send` for a DEFINITE temporary rejection (the provider said "not now"
 * and did not accept the message): reported as fail outcome `retry`, so the service re-queues it.
 */
export class ProviderRetryableError extends ConnectorError {
  override readonly name: string = 'ProviderRetryableError';
  readonly code: string | undefined;
  /** Per-part outcomes reported with `fail` (see `ProviderErrorOptions.parts`). */
  readonly parts: ProviderErrorOptions['parts'];
  /** When to try again (0 to 3600000 ms); absent: the service's own backoff. */
  readonly retryAfterMs: number | undefined;
  constructor(message: string, options: ProviderErrorOptions & { retryAfterMs?: number } = {}) {
    super(message, 'cause' in options ? { cause: options.cause } : undefined);
    this.code = options.code;
    this.retryAfterMs = options.retryAfterMs;
    this.parts = options.parts;
  }
}

/** Throw from your provider `send` for a permanent rejection (invalid recipient, blocked...): fail outcome `failed`. */
export class ProviderPermanentError extends ConnectorError {
  override readonly name: string = 'ProviderPermanentError';
  readonly code: string | undefined;
  /** Per-part outcomes reported with `fail` (see `ProviderErrorOptions.parts`). */
  readonly parts: ProviderErrorOptions['parts'];
  constructor(message: string, options: ProviderErrorOptions = {}) {
    super(message, 'cause' in options ? { cause: options.cause } : undefined);
    this.code = options.code;
    this.parts = options.parts;
  }
}

/**
 * Throw from your provider `send` when you cannot tell whether the message went out (timeout,
 * connection lost after sending, only some parts sent): fail outcome `unknown`; the service will
 * not repeat the send. Any other error thrown by `send` is treated the same way.
 */
export class ProviderUnknownOutcomeError extends ConnectorError {
  override readonly name: string = 'ProviderUnknownOutcomeError';
  readonly code: string | undefined;
  /** Ids of the parts that were accepted (partial send), reported to the service. */
  readonly providerMessageIds: readonly string[];
  /** Per-part outcomes reported with `fail` (see `ProviderErrorOptions.parts`). */
  readonly parts: ProviderErrorOptions['parts'];
  constructor(message: string, options: ProviderErrorOptions & { providerMessageIds?: readonly string[] } = {}) {
    super(message, 'cause' in options ? { cause: options.cause } : undefined);
    this.code = options.code;
    this.providerMessageIds = options.providerMessageIds ?? [];
    this.parts = options.parts;
  }
}
