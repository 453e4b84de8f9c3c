import { ApiError, ServiceUnavailableError } from '../../rules/errors';
import { isTransientFailure } from '../failures';
import type { HttpResponse, HttpResult } from './types';

/** Seconds a client should wait after a transient backend failure (contention clears quickly). */
export const TRANSIENT_RETRY_AFTER_SECONDS = 1;

/**
 * Maps anything thrown to an ApiError. Unknown failures become 503 (never 500): every write of
 * this service is idempotent, so a client retrying with the same eventId/requestId/lease is safe.
 */
export function toApiError(err: unknown): { error: ApiError; unexpected: boolean } {
  if (err instanceof ApiError) return { error: err, unexpected: false };
  if (isTransientFailure(err)) {
    return {
      error: new ServiceUnavailableError('temporarily_unavailable', 'The backend is busy; retry after the indicated delay.', TRANSIENT_RETRY_AFTER_SECONDS),
      unexpected: false,
    };
  }
  return {
    error: new ServiceUnavailableError('temporarily_unavailable', 'Temporary failure; retry after the indicated delay.', TRANSIENT_RETRY_AFTER_SECONDS),
    unexpected: true,
  };
}

function sendJson(res: HttpResponse, status: number, body: unknown): void {
  res.status(status);
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Cache-Control', 'no-store');
  res.send(JSON.stringify(body));
}

/** The one place an error becomes the `{"error":{"code","message"}}` envelope (`allow`: the methods a 405 names). */
export function sendError(res: HttpResponse, error: ApiError, allow = 'POST'): void {
  if (error.retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(error.retryAfterSeconds));
  if (error.status === 405) res.setHeader('Allow', allow);
  sendJson(res, error.status, { error: { code: error.code, message: error.message } });
}

export function sendResult(res: HttpResponse, result: HttpResult): void {
  if (Buffer.isBuffer(result.body)) {
    // A binary answer (an attachment's bytes): its own headers, never a cache outside the caller.
    res.status(result.status);
    for (const [name, value] of Object.entries(result.headers ?? {})) res.setHeader(name, value);
    res.setHeader('Content-Length', String(result.body.length));
    res.send(result.body);
    return;
  }
  sendJson(res, result.status, result.body);
}
