import { randomBytes, randomInt } from 'node:crypto';
import type * as z from 'zod';
import { db } from '../platform/firebase';
import { isStorableDocumentId } from '../platform/ids';
import { endpoint, type ParsedRequest, type RequestContext } from '../platform/http/pipeline';
import type { HttpResult } from '../platform/http/types';
import { parseOrThrow } from '../platform/schema';
import { authenticate } from '../integrations/auth';
import { visibleDelivery, type Decision, type DeliveryRecord } from './record';
import { catchUpPage } from './catch-up-list';
import { ClaimRequestSchema, CompleteRequestSchema, ExtendRequestSchema, FailRequestSchema, PendingRequestSchema, ReceiptRequestSchema, StartRequestSchema } from './schemas';
import { decideClaim, decideComplete, decideExtend, decideFail, decideReceipt, decideStart } from './state-machine';
import { runTransition, type TransitionFacts } from './transition';

/** Unguessable lease ids: holding one is what authorises start/complete/fail. */
const newLeaseId = (): string => `l_${randomBytes(18).toString('base64url')}`;

/**
 * One delivery operation = one transition (./transition.ts) of a delivery the caller may see (404
 * otherwise). Past the request's deadline the client already has its 503, so the transition gives
 * up before writing.
 */
async function operate<R>(
  context: RequestContext,
  deliveryId: string,
  decide: (d: DeliveryRecord, facts: TransitionFacts) => Decision<R>,
  withConversation = false,
): Promise<R> {
  context.logFields.deliveryId = deliveryId;
  // An id Firestore cannot use as a document id ('a/b', '..', '__x__') names no delivery: the
  // same 404 as any unknown id, not a failed lookup (which would be a 503).
  if (!isStorableDocumentId(deliveryId)) visibleDelivery(null, context.auth);
  const { before, decision } = await runTransition(db(), {
    workspaceId: context.auth.workspaceId,
    deliveryId,
    caller: context.auth,
    withConversation,
    decide,
    beforeWrite: () => context.deadline.assertTimeLeft(),
  });
  // `caller` makes a missing delivery a 404, and these decisions are never null.
  if (before === null || decision === null) throw new Error('a delivery operation ended without a decision');
  // Logged as `deliveryStatus` once committed (`status` is the request's HTTP status).
  context.logFields.deliveryStatus = decision.next?.status ?? before.status;
  return decision.response;
}

/** A JSON delivery endpoint: validate the body with `schema`, run the operation, answer 200. */
const deliveryEndpoint = <S extends z.ZodType, R>(name: string, schema: S, run: (body: z.output<S>, context: RequestContext) => Promise<R>) =>
  endpoint({ name, accepts: ['application/json'], authenticate }, async (request: ParsedRequest, context): Promise<HttpResult> => {
    const body = parseOrThrow(schema, request.json);
    return { status: 200, body: await run(body, context) };
  });

/** POST /v1/deliveries/claim (claimDelivery). */
export const claimDelivery = deliveryEndpoint('POST /v1/deliveries/claim', ClaimRequestSchema, (body, context) =>
  operate(context, body.deliveryId, (d, facts) => decideClaim(d, { ...facts, requestId: body.requestId, newLeaseId: newLeaseId() }), true),
);

/** POST /v1/deliveries/start (startDelivery). */
export const startDelivery = deliveryEndpoint('POST /v1/deliveries/start', StartRequestSchema, (body, context) =>
  operate(context, body.deliveryId, (d, { now }) => decideStart(d, { now, leaseId: body.leaseId })),
);

/** POST /v1/deliveries/extend (extendDeliveryLease): more time under the live current lease (decisions 10). */
export const extendDeliveryLease = deliveryEndpoint('POST /v1/deliveries/extend', ExtendRequestSchema, (body, context) =>
  operate(context, body.deliveryId, (d, { now }) => decideExtend(d, { now, leaseId: body.leaseId })),
);

/** POST /v1/deliveries/complete (completeDelivery). */
export const completeDelivery = deliveryEndpoint('POST /v1/deliveries/complete', CompleteRequestSchema, (body, context) =>
  operate(context, body.deliveryId, (d, { now }) =>
    decideComplete(d, { now, leaseId: body.leaseId, providerMessageIds: body.providerMessageIds }),
  ),
);

/** POST /v1/deliveries/fail (failDelivery). */
export const failDelivery = deliveryEndpoint('POST /v1/deliveries/fail', FailRequestSchema, (body, context) =>
  operate(context, body.deliveryId, (d, { now }) =>
    decideFail(d, {
      now,
      leaseId: body.leaseId,
      outcome: body.outcome,
      code: body.code,
      retryAfterMs: body.retryAfterMs,
      providerMessageIds: body.providerMessageIds,
      random: randomInt(0, 1_000_000) / 1_000_000,
    }),
  ),
);

/** POST /v1/deliveries/receipt (reportDeliveryReceipt): the channel's word after `sent` (decisions 8). */
export const reportDeliveryReceipt = deliveryEndpoint('POST /v1/deliveries/receipt', ReceiptRequestSchema, (body, context) =>
  operate(context, body.deliveryId, (d, { now }) =>
    decideReceipt(d, { now, status: body.status, code: body.code, at: body.at, providerMessageId: body.providerMessageId }),
  ),
);

/** POST /v1/deliveries/pending (listPendingDeliveries): the catch-up list (decisions 7). */
export const listPendingDeliveries = deliveryEndpoint('POST /v1/deliveries/pending', PendingRequestSchema, async (body, context) => {
  const page = await catchUpPage(db(), context.auth, { limit: body.limit, cursor: body.cursor, now: Date.now() });
  context.logFields.pendingCount = page.deliveries.length;
  return page;
});
