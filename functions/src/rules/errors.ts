/**
 * Errors are data: one class per HTTP status the API answers with. Domain code and handlers throw
 * these; only `platform/http/respond.ts` turns them into the `{"error":{"code","message"}}` envelope.
 * Pure module (no Firebase imports) so the domain can use it and unit tests can assert on it.
 */

/** Base class: an error that maps to one HTTP status and a stable snake_case `code`; each subclass names itself. */
export abstract class ApiError extends Error {
  abstract readonly status: number;
  /** Seconds for the `Retry-After` header (429 and 503 only). */
  readonly retryAfterSeconds: number | undefined;

  constructor(
    readonly code: string,
    message: string,
    retryAfterSeconds?: number,
  ) {
    super(message);
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** An `ApiError` subclass for one HTTP status; `name` is a literal, so it survives any bundler. */
function statusError<S extends number>(status: S, name: string) {
  return class extends ApiError {
    readonly status = status;
    override readonly name = name;
  };
}

/** A status whose answers always carry `Retry-After`: the constructor requires the seconds. */
function retryableStatusError<S extends number>(status: S, name: string) {
  return class extends statusError(status, name) {
    constructor(code: string, message: string, retryAfterSeconds: number) {
      super(code, message, retryAfterSeconds);
    }
  };
}

/** 400: the request is malformed or violates the schema. The message names the field path. */
export const BadRequestError = statusError(400, 'BadRequestError');
/** 401: missing, malformed, unknown or revoked key (one body for all, see docs/contract.md#authentication). */
export const UnauthorizedError = statusError(401, 'UnauthorizedError');
/** 403: integration inactive or source disabled. */
export const ForbiddenError = statusError(403, 'ForbiddenError');
/** 404: missing delivery, or one that belongs to another integration. */
export const NotFoundError = statusError(404, 'NotFoundError');
/** 405: every endpoint accepts POST only. */
export const MethodNotAllowedError = statusError(405, 'MethodNotAllowedError');
/** 409: lease lost, conflicting completion, finished delivery, or an eventId reused with other content. */
export const ConflictError = statusError(409, 'ConflictError');
/** 413: JSON body over 64 KB, or an image/multipart size limit exceeded. */
export const PayloadTooLargeError = statusError(413, 'PayloadTooLargeError');
/** 415: content type not accepted by this endpoint. */
export const UnsupportedMediaTypeError = statusError(415, 'UnsupportedMediaTypeError');
/** 429: the integration's incoming rate limit is exhausted; retry after `Retry-After`. */
export const TooManyRequestsError = retryableStatusError(429, 'TooManyRequestsError');
/** 503: busy lease, delayed retry, contention or any temporary backend failure. Always has `Retry-After`. */
export const ServiceUnavailableError = retryableStatusError(503, 'ServiceUnavailableError');

export type BadRequestError = InstanceType<typeof BadRequestError>;
export type ConflictError = InstanceType<typeof ConflictError>;
export type NotFoundError = InstanceType<typeof NotFoundError>;
export type ServiceUnavailableError = InstanceType<typeof ServiceUnavailableError>;
export type TooManyRequestsError = InstanceType<typeof TooManyRequestsError>;

/** Rounds a millisecond delay up to whole seconds for `Retry-After` (never 0: 0 invites a hot loop). */
export function retryAfterSecondsFromMs(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}
