/**
 * Every answer of the service is checked here, in one place: a 2xx body must be JSON, and must
 * have the shape the operation documents. Anything else is the one `UnexpectedResponseError`
 * (not retried: the request may have been processed).
 */
import { UnexpectedResponseError } from '../errors.js';

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
 * Reads a 2xx body into the operation's result with `read`, which returns undefined when the body
 * does not have the documented shape; `expected` describes that shape in the error.
 */
export function readAnswer<T>(answer: ApiAnswer, path: string, expected: string, read: (body: Json) => T | undefined): T {
  const result = isObject(answer.body) ? read(answer.body) : undefined;
  if (result !== undefined) return result;
  throw unexpected(answer.status, { method: 'POST', path, requestId: answer.requestId, attempts: answer.attempts }, 'unexpected_response', `expected ${expected}`);
}

/** `{ status }` with one of `allowed`. */
export function readStatus<S extends string>(answer: ApiAnswer, path: string, allowed: readonly S[]): { status: S } {
  return readAnswer(answer, path, `{ status: ${allowed.join(' | ')} }`, (body) =>
    typeof body.status === 'string' && (allowed as readonly string[]).includes(body.status) ? { status: body.status as S } : undefined,
  );
}
