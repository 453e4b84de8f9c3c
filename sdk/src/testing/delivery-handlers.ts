/**
 * The connector's delivery operations: each transition one entry of the table, run through the
 * store on the service's own rule (read -> decide -> write, ./deliveries.ts); the catch-up list of
 * claimable deliveries; and the attachment download, with the service's headers.
 */
import { randomBytes, randomInt } from 'node:crypto';
import { attachmentDownloadHeaders } from '../internal/rules/file-headers.js';
import type { Decision, DeliveryRecord, FailOutcome, ReceiptStatus } from '../internal/rules/record.js';
import { decideAttachmentFetch, decideClaim, decideComplete, decideExtend, decideFail, decideReceipt, decideStart, type CompleteInput } from '../internal/rules/state-machine.js';
import { decodeCursor, encodeCursor } from './cursors.js';
import type { TransitionFacts } from './deliveries.js';
import { apiError } from './errors.js';
import { sha256Hex } from './ids.js';
import { recordProviderIds } from './messages.js';
import { body, deliveryOf, type Answer, type Handler, type Handlers, type OperationRequest } from './operations.js';
import { extrasOf, type ServiceState } from './state.js';
import type { OperationId } from './types.js';

type CompleteBody = { deliveryId: string; leaseId: string; providerMessageIds: string[]; parts?: NonNullable<CompleteInput['parts']> };
type FailBody = { deliveryId: string; leaseId: string; outcome: FailOutcome; code: string; retryAfterMs?: number; providerMessageIds?: string[]; parts?: NonNullable<CompleteInput['parts']> };
type ReceiptBody = { deliveryId: string; status: ReceiptStatus; code?: string; at?: number; providerMessageId?: string };

/** The handlers of the delivery operations (the composition checks that every operation has one). */
export function deliveryHandlers(state: ServiceState) {
  /** An operation that is one rule's decision on the caller's delivery: its answer is the rule's. */
  const transition =
    <B extends { deliveryId: string }, R>(operationId: OperationId, decide: (d: DeliveryRecord, body: B, request: OperationRequest, facts: TransitionFacts) => Decision<R>): Handler =>
    (request) => {
      const parsed = body<B>(operationId, request.json);
      deliveryOf(state, request, parsed.deliveryId);
      const outcome = state.store.transition(parsed.deliveryId, request.now, (d, facts) => decide(d, parsed, request, facts));
      if (outcome === null || outcome.decision === null) throw apiError(404, 'delivery_not_found', 'delivery not found');
      return { status: 200, body: outcome.decision.response };
    };
  const complete = transition<CompleteBody, unknown>('completeDelivery', (d, b, r) =>
    decideComplete(d, { now: r.now, leaseId: b.leaseId, providerMessageIds: b.providerMessageIds, ...(b.parts === undefined ? {} : { parts: b.parts }) }),
  );
  return {
    claimDelivery: transition<{ deliveryId: string; requestId: string }, unknown>('claimDelivery', (d, b, _r, facts) =>
      decideClaim(d, { ...facts, requestId: b.requestId, newLeaseId: `l_${randomBytes(18).toString('base64url')}` }),
    ),
    startDelivery: transition<{ deliveryId: string; leaseId: string }, unknown>('startDelivery', (d, b, r) => decideStart(d, { now: r.now, leaseId: b.leaseId })),
    extendDeliveryLease: transition<{ deliveryId: string; leaseId: string }, unknown>('extendDeliveryLease', (d, b, r) => decideExtend(d, { now: r.now, leaseId: b.leaseId })),
    completeDelivery: (request) => {
      const answer = complete(request);
      // messages/triggers.ts `onReplyProviderIds`: a reply's sent delivery names it by its provider ids.
      const completed = state.deliveries.get((request.json as { deliveryId: string }).deliveryId);
      if (completed !== undefined) recordProviderIds(state, completed);
      return answer;
    },
    failDelivery: transition<FailBody, unknown>('failDelivery', (d, b, r) => decideFail(d, { ...b, now: r.now, random: randomInt(0, 1_000_000) / 1_000_000 })),
    listPendingDeliveries: (request) => listPendingDeliveries(state, request),
    reportDeliveryReceipt: transition<ReceiptBody, unknown>('reportDeliveryReceipt', (d, b, r) => {
      // The service's schema refines this (functions/src/deliveries/schemas.ts): the document says it in prose.
      if (b.status === 'failed' && b.code === undefined) throw apiError(400, 'invalid_request', 'code: required when status is failed');
      const decision = decideReceipt(d, { ...b, now: r.now });
      const key = b.providerMessageId ?? d.providerMessageIds[0] ?? '';
      extrasOf(state, d.deliveryId).receipts.set(key, { status: b.status, at: b.at ?? r.now });
      return decision;
    }),
    getDeliveryAttachment: (request) => getDeliveryAttachment(state, request),
  } satisfies Partial<Handlers>;
}

/** The catch-up list: the caller's claimable deliveries, oldest first, a page at a time. */
function listPendingDeliveries(state: ServiceState, request: OperationRequest): Answer {
  const parsed = body<{ limit?: number; cursor?: string }>('listPendingDeliveries', request.json);
  const owner = request.integration;
  const limit = parsed.limit ?? 50;
  const after = parsed.cursor === undefined ? null : decodeCursor(owner, '', parsed.cursor, (c) => (typeof c.t === 'number' && typeof c.d === 'string' && Object.keys(c).length === 2 ? { t: c.t, d: c.d } : null));
  const claimable = [...state.deliveries.values()]
    // The service's catch-up index: claimable deliveries carry `pendingAt` (rules/record.ts `withPendingAt`), listed once due.
    .flatMap((d) => (d.integrationId === owner.integrationId && d.pendingAt !== undefined && d.pendingAt <= request.now ? [{ d, t: d.pendingAt }] : []))
    .sort((a, b) => a.t - b.t || (a.d.deliveryId < b.d.deliveryId ? -1 : a.d.deliveryId > b.d.deliveryId ? 1 : 0))
    .filter((e) => after === null || e.t > after.t || (e.t === after.t && e.d.deliveryId > after.d));
  const page = claimable.slice(0, limit);
  const last = page.at(-1);
  return {
    status: 200,
    body: {
      deliveries: page.map(({ d }) => ({ deliveryId: d.deliveryId, workspaceId: d.workspaceId, integrationId: d.integrationId, conversationId: d.conversationId, messageId: d.messageId })),
      nextCursor: claimable.length > limit && last !== undefined ? encodeCursor(owner, '', { t: last.t, d: last.d.deliveryId }) : null,
    },
  };
}

/** A file of the delivery, for the lease that holds it (the rule decides), with the service's download headers. */
function getDeliveryAttachment(state: ServiceState, request: OperationRequest): Answer {
  const parsed = body<{ deliveryId: string; leaseId: string; attachmentId: string }>('getDeliveryAttachment', request.json);
  const d = deliveryOf(state, request, parsed.deliveryId);
  const file = decideAttachmentFetch(d, { now: request.now, leaseId: parsed.leaseId, attachmentId: parsed.attachmentId });
  const bytes = state.files.get(file.attachmentId);
  if (bytes === undefined || bytes.length !== file.size) {
    throw apiError(503, 'temporarily_unavailable', 'The file cannot be read at the moment; retry after the indicated delay.', 5);
  }
  // The service's headers (rules/file-headers.ts): CSP sandbox, a cleaned name, nosniff, ETag, Repr-Digest.
  const headers = attachmentDownloadHeaders(file);
  // Bytes that do not match the recorded SHA-256 are cut off before their last byte, as the
  // service's streamed answer does: a client never receives a complete wrong file.
  if (sha256Hex(bytes) !== file.sha256) return { status: 200, file: { bytes, headers, cutOffAfter: bytes.length - 1 } };
  extrasOf(state, d.deliveryId).fetched.add(file.attachmentId);
  return { status: 200, file: { bytes, headers } };
}
