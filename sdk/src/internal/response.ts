/**
 * Every answer of the service is checked here, in one place: a 2xx body must be JSON, and must
 * have the shape the operation documents (the readers generated from the API document, in
 * ./api.generated.ts). Anything else is the one `UnexpectedResponseError` (not retried: the request
 * may have been processed).
 */
import { UnexpectedResponseError } from '../errors.js';
import type { Operation } from './api.generated.js';

export type Json = Record<string, unknown>;

/** A parsed 2xx answer of one call. */
export interface ApiAnswer {
  status: number;
  body: unknown;
  requestId: string | undefined;
  attempts: number;
}

/** Where an answer came from, for the error. */
export interface AnswerOrigin {
  method: string;
  path: string;
  requestId: string | undefined;
  attempts: number;
}

export function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function unexpected(status: number, origin: AnswerOrigin, code: string, detail: string): UnexpectedResponseError {
  return new UnexpectedResponseError({ status, code, detail, ...origin });
}

/** Parses the text of a 2xx answer: JSON, or `invalid_json`. */
export function parseSuccess(status: number, text: string, origin: AnswerOrigin): ApiAnswer {
  try {
    return { status, body: JSON.parse(text) as unknown, requestId: origin.requestId, attempts: origin.attempts };
  } catch {
    throw unexpected(status, origin, 'invalid_json', 'the success answer is not JSON');
  }
}

/**
 * Reads a 2xx answer of `operation` with its generated reader: the documented fields only. `body`
 * replaces the answer's body (for a field the SDK derives first); `refine` adds what the document
 * cannot say and returns undefined to refuse the answer too.
 */
export function readOperation<R>(answer: ApiAnswer, operation: Operation<R>, options: { body?: unknown; refine?: (result: R) => R | undefined } = {}): R {
  const read = operation.read(answer.status, 'body' in options ? options.body : answer.body);
  const result = read === undefined || options.refine === undefined ? read : options.refine(read);
  if (result !== undefined) return result;
  const origin = { method: operation.method, path: operation.path, requestId: answer.requestId, attempts: answer.attempts };
  throw unexpected(answer.status, origin, 'unexpected_response', `expected ${operation.expected} (${operation.operationId} in the API document)`);
}
