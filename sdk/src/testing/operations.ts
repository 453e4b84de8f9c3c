/**
 * What an operation's handler gets and answers: the HTTP layer (./http.ts) reads, authenticates and
 * parses the request; a handler decides. Also the checks handlers start with: the body against the
 * document's request schema, and the caller's own delivery.
 */
import type { DeliveryRecord } from '../internal/rules/record.js';
import { apiError, type ApiError } from './errors.js';
import { REQUESTS, validateRequest, type RequestSchema } from './requests.generated.js';
import type { Integration, ServiceState } from './state.js';
import type { OperationId } from './types.js';

/** What a request handler gets: the parsed request and its caller. */
export interface OperationRequest {
  integration: Integration;
  json: unknown;
  mediaType: 'application/json' | 'multipart/form-data';
  contentType: string;
  raw: Buffer;
  now: number;
  /** Headers to set on the answer, whatever it turns out to be. */
  headers: Record<string, string>;
}

export type Answer = { status: number; body: unknown } | { status: 200; file: { bytes: Buffer; headers: Record<string, string>; cutOffAfter?: number } };
export type Handler = (request: OperationRequest) => Answer;
/** One handler per operation of the document: a new operation without one does not compile. */
export type Handlers = Record<OperationId, Handler>;

export const invalidRequest = (problems: readonly string[]): ApiError => apiError(400, 'invalid_request', problems.slice(0, 5).join('; '));

/** The body checked against the operation's request schema of the document (400 `invalid_request` naming the field). */
export function body<T>(operationId: OperationId, json: unknown): T {
  const schema = (REQUESTS[operationId] as { json?: RequestSchema }).json;
  if (schema === undefined) throw new Error(`${operationId} has no JSON request schema`);
  const problems = validateRequest(schema, json);
  if (problems.length > 0) throw invalidRequest(problems);
  return json as T;
}

/** The caller's delivery, or 404 for a missing one and for one of another integration (reported identically). */
export function deliveryOf(state: ServiceState, request: OperationRequest, deliveryId: string): DeliveryRecord {
  const d = state.deliveries.get(deliveryId);
  if (d === undefined || d.integrationId !== request.integration.integrationId) throw apiError(404, 'delivery_not_found', 'delivery not found');
  return d;
}
