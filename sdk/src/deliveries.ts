import { randomUUID } from 'node:crypto';
import { UnexpectedResponseError } from './errors.js';
import type { ApiAnswer, CallOptions, Transport } from './http.js';
import type {
  ClaimInput,
  ClaimResult,
  CompleteInput,
  CompleteResult,
  FailInput,
  FailResult,
  LeaseInput,
  StartResult,
} from './types.js';

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function unexpected(answer: ApiAnswer, path: string, expected: string): UnexpectedResponseError {
  return new UnexpectedResponseError({
    status: answer.status,
    code: 'unexpected_response',
    detail: `expected ${expected}`,
    requestId: answer.requestId,
    method: 'POST',
    path,
    attempts: answer.attempts,
  });
}

function statusOf<S extends string>(answer: ApiAnswer, path: string, allowed: readonly S[]): { status: S } {
  const body = answer.body;
  if (isObject(body) && typeof body.status === 'string' && (allowed as readonly string[]).includes(body.status)) {
    return { status: body.status as S };
  }
  throw unexpected(answer, path, `{ status: ${allowed.join(' | ')} }`);
}

/** `client.deliveries`: the four delivery operations of spec section 4, one HTTP call each (plus retries). */
export class DeliveriesApi {
  readonly #transport: Transport;

  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /**
   * Claims a delivery: `ready` with a 120-second lease, the reply text and recipient, or `skip`
   * with a reason. The `requestId` (generated when omitted) is reused on retries, so a retried
   * claim whose first answer was lost gets the same lease back.
   */
  async claim(input: ClaimInput, options: CallOptions = {}): Promise<ClaimResult> {
    const path = '/v1/deliveries/claim';
    const body = { deliveryId: input.deliveryId, requestId: input.requestId ?? randomUUID() };
    const answer = await this.#transport.post(path, { json: body }, options);
    const b = answer.body;
    if (isObject(b) && b.status === 'skip' && typeof b.reason === 'string') {
      return { status: 'skip', reason: b.reason };
    }
    if (isObject(b) && b.status === 'ready' && typeof b.leaseId === 'string' && typeof b.leaseExpiresAt === 'number' && isObject(b.message)) {
      const m = b.message;
      const r = m.recipient;
      if (typeof m.text === 'string' && isObject(r) && typeof r.externalConversationId === 'string' && typeof r.externalCustomerId === 'string') {
        return {
          status: 'ready',
          leaseId: b.leaseId,
          leaseExpiresAt: b.leaseExpiresAt,
          message: { text: m.text, recipient: { externalConversationId: r.externalConversationId, externalCustomerId: r.externalCustomerId } },
        };
      }
    }
    throw unexpected(answer, path, "{ status: 'skip', reason } or { status: 'ready', leaseId, leaseExpiresAt, message }");
  }

  /** Records the intent to send. Send through the provider only when the answer is `sending`. */
  async start(input: LeaseInput, options: CallOptions = {}): Promise<StartResult> {
    const path = '/v1/deliveries/start';
    const answer = await this.#transport.post(path, { json: { deliveryId: input.deliveryId, leaseId: input.leaseId } }, options);
    return statusOf(answer, path, ['sending', 'sent'] as const);
  }

  /** Reports a send the provider accepted. Only call it when the provider actually accepted the message. */
  async complete(input: CompleteInput, options: CallOptions = {}): Promise<CompleteResult> {
    const path = '/v1/deliveries/complete';
    const json = { deliveryId: input.deliveryId, leaseId: input.leaseId, providerMessageIds: [...input.providerMessageIds] };
    const answer = await this.#transport.post(path, { json }, options);
    return statusOf(answer, path, ['sent'] as const);
  }

  /** Reports a failed, temporarily rejected or ambiguous send. */
  async fail(input: FailInput, options: CallOptions = {}): Promise<FailResult> {
    const path = '/v1/deliveries/fail';
    const json: Json = { deliveryId: input.deliveryId, leaseId: input.leaseId, outcome: input.outcome, code: input.code };
    if (input.retryAfterMs !== undefined) json.retryAfterMs = input.retryAfterMs;
    if (input.providerMessageIds !== undefined) json.providerMessageIds = [...input.providerMessageIds];
    const answer = await this.#transport.post(path, { json }, options);
    return statusOf(answer, path, ['queued', 'failed', 'unknown', 'sent'] as const);
  }
}
