import { randomBytes, randomInt } from 'node:crypto';
import type * as z from 'zod';
import { db } from '../firebase';
import {
  decideClaim,
  decideComplete,
  decideFail,
  decideStart,
  isTerminal,
  recipientFor,
  visibleDelivery,
  type Decision,
  type DeliveryRecord,
} from '../domain/delivery';
import { isStorableDocumentId } from '../domain/ids';
import { endpoint, type ParsedRequest, type RequestContext } from '../http/pipeline';
import { authenticate } from '../http/services';
import type { HttpResult } from '../http/types';
import { parseOrThrow } from '../schemas/common';
import { ClaimRequestSchema, CompleteRequestSchema, FailRequestSchema, StartRequestSchema } from '../schemas/deliveries';
import { hasUnfinishedBefore } from '../domain/delivery-queue';
import {
  applyDecision,
  readConversation,
  readDelivery,
  readDeliveryQueue,
  readOrdering,
  type DeliveryQueueState,
  type NotificationReason,
} from '../store/deliveries';

/** Unguessable lease ids: holding one is what authorises start/complete/fail. */
const newLeaseId = (): string => `l_${randomBytes(18).toString('base64url')}`;

interface OperationFacts {
  now: number;
  predecessorUnfinished: boolean;
  recipient: ReturnType<typeof recipientFor>;
}

/**
 * One delivery operation = one Firestore transaction: read the delivery (404 unless it belongs to
 * the caller's integration), read what the decision needs, decide (pure), then write. A decision
 * that throws (409/503) writes nothing.
 */
async function runOperation<R>(
  context: RequestContext,
  deliveryId: string,
  needsClaimFacts: boolean,
  reason: NotificationReason,
  decide: (d: DeliveryRecord, facts: OperationFacts) => Decision<R>,
): Promise<R> {
  const firestore = db();
  context.logFields.deliveryId = deliveryId;
  // An id Firestore cannot use as a document id ('a/b', '..', '__x__') names no delivery: the
  // same 404 as any unknown id, not a failed lookup (which would be a 503).
  if (!isStorableDocumentId(deliveryId)) visibleDelivery(null, context.auth);
  let deliveryStatus: string | undefined;
  const response = await firestore.runTransaction(async (tx) => {
    const now = Date.now();
    const delivery = visibleDelivery(await readDelivery(tx, firestore, context.auth.workspaceId, deliveryId), context.auth);
    let facts: OperationFacts = { now, predecessorUnfinished: false, recipient: { externalConversationId: '', externalCustomerId: '' } };
    let queue: DeliveryQueueState | null = null;
    if (needsClaimFacts && !isTerminal(delivery.status)) {
      const [queueState, conversation] = await Promise.all([
        readDeliveryQueue(tx, firestore, delivery.workspaceId, delivery.conversationId),
        readConversation(tx, firestore, delivery),
      ]);
      queue = queueState;
      facts = { now, predecessorUnfinished: hasUnfinishedBefore(queue.pending, delivery.seq), recipient: recipientFor(conversation) };
    }
    const decision = decide(delivery, facts);
    const ordering = await readOrdering(tx, firestore, delivery, decision.effects.releasesNext, queue);
    // Past the budget the client already has its 503: give up here, so nothing is committed.
    context.deadline.assertTimeLeft();
    applyDecision(tx, firestore, delivery, decision, ordering, now, reason);
    deliveryStatus = decision.next?.status ?? delivery.status;
    return decision.response;
  });
  // Logged as `deliveryStatus` once committed (`status` is the request's HTTP status).
  if (deliveryStatus !== undefined) context.logFields.deliveryStatus = deliveryStatus;
  return response;
}

function handler<S extends z.ZodType, R>(
  schema: S,
  operate: (body: z.output<S>, context: RequestContext) => Promise<R>,
): (request: ParsedRequest, context: RequestContext) => Promise<HttpResult> {
  return async (request, context) => {
    const body = parseOrThrow(schema, request.json);
    return { status: 200, body: await operate(body, context) };
  };
}

const deliveryEndpoint = <S extends z.ZodType, R>(name: string, schema: S, operate: (body: z.output<S>, context: RequestContext) => Promise<R>) =>
  endpoint({ name, accepts: ['application/json'], authenticate }, handler(schema, operate));

/** POST /v1/deliveries/claim (claimDelivery). */
export const claimDelivery = deliveryEndpoint('POST /v1/deliveries/claim', ClaimRequestSchema, (body, context) =>
  runOperation(context, body.deliveryId, true, 'lease_expired', (d, facts) =>
    decideClaim(d, { ...facts, requestId: body.requestId, newLeaseId: newLeaseId() }),
  ),
);

/** POST /v1/deliveries/start (startDelivery). */
export const startDelivery = deliveryEndpoint('POST /v1/deliveries/start', StartRequestSchema, (body, context) =>
  runOperation(context, body.deliveryId, false, 'lease_expired', (d, { now }) => decideStart(d, { now, leaseId: body.leaseId })),
);

/** POST /v1/deliveries/complete (completeDelivery). */
export const completeDelivery = deliveryEndpoint('POST /v1/deliveries/complete', CompleteRequestSchema, (body, context) =>
  runOperation(context, body.deliveryId, false, 'lease_expired', (d, { now }) =>
    decideComplete(d, { now, leaseId: body.leaseId, providerMessageIds: body.providerMessageIds }),
  ),
);

/** POST /v1/deliveries/fail (failDelivery). */
export const failDelivery = deliveryEndpoint('POST /v1/deliveries/fail', FailRequestSchema, (body, context) =>
  runOperation(context, body.deliveryId, false, 'retry', (d, { now }) =>
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
