/**
 * The connector's delivery operations: each transition one entry of the table, run through the
 * store on the service's own rule (read -> decide -> write, ./deliveries.ts); the catch-up list of
 * claimable deliveries; and the attachment download, with the service's headers.
 */
import { afterStartCompleted } from './starts.js';
import { randomBytes, randomInt } from 'node:crypto';
import { attachmentDownloadHeaders } from '../internal/rules/file-headers.js';
import { notificationOf, type Decision, type DeliveryRecord, type ReceiptStatus } from '../internal/rules/record.js';
import { answerOf, decideAttachmentFetch, DELIVERY_TRANSITIONS, receiptProblems, type RuleFacts, type TransitionFacts } from '../internal/rules/state-machine.js';
import { decodeCursor, encodeCursor } from './cursors.js';
import { apiError } from './errors.js';
import { sha256Hex } from './ids.js';
import { recordProviderIds } from './messages.js';
import { body, deliveryOf, invalidRequest, type Answer, type Handler, type Handlers, type OperationRequest } from './operations.js';
import { extrasOf, type ServiceState } from './state.js';
import type { OperationId } from './types.js';

/** Any rule of the table: each takes its own operation's body plus the facts (`RuleFacts`). */
type TableRule = (d: DeliveryRecord, input: never) => Decision<unknown>;

/**
 * Field rules of a body that the generated request validator cannot state: the service's schema
 * asks the same rules function (the document says it in prose).
 */
const BODY_RULES: Partial<Record<OperationId, (body: Record<string, unknown>) => Array<{ path: string[]; message: string }>>> = {
  reportDeliveryReceipt: (b) => receiptProblems({ status: String(b.status), ...(typeof b.code === 'string' ? { code: b.code } : {}) }),
};

/** The handlers of the delivery operations (the composition checks that every operation has one). */
export function deliveryHandlers(state: ServiceState) {
  /**
   * Every transition of the service's table (rules `DELIVERY_TRANSITIONS`), served as the service
   * serves it: the body checked against the operation's schema, the rule decided on the caller's
   * delivery with the store's facts, a fresh lease id and a random number, its answer returned.
   */
  const transition =
    (operationId: OperationId, rule: TableRule): Handler =>
    (request) => {
      const parsed = body<{ deliveryId: string } & Record<string, unknown>>(operationId, request.json);
      const problems = BODY_RULES[operationId]?.(parsed) ?? [];
      if (problems.length > 0) throw invalidRequest(problems.map((problem) => `${problem.path.join('.')}: ${problem.message}`));
      deliveryOf(state, request, parsed.deliveryId);
      const facts = (stored: TransitionFacts): RuleFacts => ({ ...stored, newLeaseId: `l_${randomBytes(18).toString('base64url')}`, random: randomInt(0, 1_000_000) / 1_000_000 });
      // The body passed the operation's request schema, which is exactly what its rule takes with the facts.
      const outcome = state.store.transition(parsed.deliveryId, request.now, (d, stored) => rule(d, { ...parsed, ...facts(stored) } as never));
      if (outcome === null || outcome.decision === null) throw apiError(404, 'delivery_not_found', 'delivery not found');
      afterTransition(state, operationId, parsed, outcome.before);
      return { status: 200, body: answerOf(operationId, outcome.decision.response, outcome.next) };
    };
  const rules: Record<keyof typeof DELIVERY_TRANSITIONS, TableRule> = DELIVERY_TRANSITIONS;
  const transitions = Object.fromEntries(Object.entries(rules).map(([id, rule]) => [id, transition(id as OperationId, rule)])) as Record<keyof typeof DELIVERY_TRANSITIONS, Handler>;
  return {
    ...transitions,
    listPendingDeliveries: (request) => listPendingDeliveries(state, request),
    getDeliveryAttachment: (request) => getDeliveryAttachment(state, request),
  } satisfies Partial<Handlers>;
}

/**
 * What this store keeps after a transition besides the record, as the service's triggers do: a
 * reply's sent delivery names it by its provider ids (messages/triggers.ts), and each receipt is
 * kept for inspection per provider id.
 */
function afterTransition(state: ServiceState, operationId: OperationId, parsed: Record<string, unknown>, before: DeliveryRecord): void {
  const now = state.deliveries.get(before.deliveryId) ?? before;
  if (operationId === 'completeDelivery') {
    recordProviderIds(state, now);
    afterStartCompleted(state, before, now, (parsed.conversation as { metadata?: Record<string, string | null> } | undefined)?.metadata);
  }
  if (operationId === 'reportDeliveryReceipt') {
    const key = typeof parsed.providerMessageId === 'string' ? parsed.providerMessageId : (now.providerMessageIds[0] ?? '');
    const at = typeof parsed.at === 'number' ? parsed.at : now.updatedAt;
    extrasOf(state, now.deliveryId).receipts.set(key, { status: parsed.status as ReceiptStatus, at });
  }
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
      deliveries: page.map(({ d }) => notificationOf(d)),
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
