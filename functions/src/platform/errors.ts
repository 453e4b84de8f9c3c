/**
 * Errors are data: one class per HTTP status the API answers with. Domain code and handlers throw
 * these; only `http/respond.ts` turns them into the `{"error":{"code","message"}}` envelope.
 * Pure module (no Firebase imports) so the domain can use it and unit tests can assert on it.
 */

/** Base class: an error that maps to one HTTP status and a stable snake_case `code`. */
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
    this.name = new.target.name;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** 400: the request is malformed or violates the schema. The message names the field path. */
export class BadRequestError extends ApiError {
  readonly status = 400;
}
/** 401: missing, malformed, unknown or revoked key (one body for all, see decisions 2). */
export class UnauthorizedError extends ApiError {
  readonly status = 401;
}
/** 403: integration inactive or source disabled. */
export class ForbiddenError extends ApiError {
  readonly status = 403;
}
/** 404: missing delivery, or one that belongs to another integration. */
export class NotFoundError extends ApiError {
  readonly status = 404;
}
/** 405: every endpoint accepts POST only. */
export class MethodNotAllowedError extends ApiError {
  readonly status = 405;
}
/** 409: lease lost, conflicting completion, finished delivery, or an eventId reused with other content. */
export class ConflictError extends ApiError {
  readonly status = 409;
}
/** 413: JSON body over 64 KB, or an image/multipart size limit exceeded. */
export class PayloadTooLargeError extends ApiError {
  readonly status = 413;
}
/** 415: content type not accepted by this endpoint. */
export class UnsupportedMediaTypeError extends ApiError {
  readonly status = 415;
}
/** 429: the integration's incoming rate limit is exhausted; retry after `Retry-After`. */
export class TooManyRequestsError extends ApiError {
  readonly status = 429;
  constructor(code: string, message: string, retryAfterSeconds: number) {
    super(code, message, retryAfterSeconds);
  }
}
/** 503: busy lease, delayed retry, contention or any temporary backend failure. Always has `Retry-After`. */
export class ServiceUnavailableError extends ApiError {
  readonly status = 503;
  constructor(code: string, message: string, retryAfterSeconds: number) {
    super(code, message, retryAfterSeconds);
  }
}

/** Rounds a millisecond delay up to whole seconds for `Retry-After` (never 0: 0 invites a hot loop). */
export function retryAfterSecondsFromMs(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}
