/**
 * The test service answers with the service's own errors (../internal/rules/errors.ts, generated
 * from functions/src/rules/errors.ts): a refusal a rule throws reaches the connector exactly as the
 * service would send it. `apiError` makes one by status for the test service's own refusals
 * (authentication, media types, sizes) and for injected faults, whose statuses (500, 502, 504)
 * the service never answers on purpose.
 */
import {
  ApiError,
  BadRequestError,
  ConflictError,
  ForbiddenError,
  MethodNotAllowedError,
  NotFoundError,
  PayloadTooLargeError,
  ServiceUnavailableError,
  TooManyRequestsError,
  UnauthorizedError,
  UnsupportedMediaTypeError,
} from '../internal/rules/errors.js';

export { ApiError };

/** An injected fault's status that no rule answers with (500, 502, 504). */
class InjectedError extends ApiError {
  override readonly name = 'InjectedError';
  constructor(
    readonly status: number,
    code: string,
    message: string,
    retryAfterSeconds?: number,
  ) {
    super(code, message, retryAfterSeconds);
  }
}

/** The service's error class for `status`, carrying `code`, `message` and, for 429 and 503, `Retry-After` seconds. */
export function apiError(status: number, code: string, message: string, retryAfterSeconds?: number): ApiError {
  switch (status) {
    case 400:
      return new BadRequestError(code, message);
    case 401:
      return new UnauthorizedError(code, message);
    case 403:
      return new ForbiddenError(code, message);
    case 404:
      return new NotFoundError(code, message);
    case 405:
      return new MethodNotAllowedError(code, message);
    case 409:
      return new ConflictError(code, message);
    case 413:
      return new PayloadTooLargeError(code, message);
    case 415:
      return new UnsupportedMediaTypeError(code, message);
    case 429:
      return new TooManyRequestsError(code, message, retryAfterSeconds ?? 1);
    case 503:
      return new ServiceUnavailableError(code, message, retryAfterSeconds ?? 1);
    default:
      return new InjectedError(status, code, message, retryAfterSeconds);
  }
}
