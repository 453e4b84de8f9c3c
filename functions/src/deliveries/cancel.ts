/**
 * Recall before send (docs/decisions.md#recall-before-send-cancel): a workspace member writes `cancel: { requestedAt, uid }` on an
 * operator reply (firestore.rules allows exactly that, once the reply has its `delivery` mirror).
 * The reply's update trigger calls `cancelReply`, which runs the one delivery transition
 * (./transition.ts) on the reply's current delivery with `decideCancel` (../rules/state-machine.ts):
 * queued or leased-not-started -> failed `cancelled` (releasing the next reply), sending or
 * finished -> unchanged, the answer `too_late` recorded for the mirror (`delivery.cancel`).
 *
 * Idempotent: the request's `requestedAt` is kept with the answer on the record, so a redelivered
 * trigger for the same request writes nothing. A reply without a delivery (replies disabled, an
 * invalid reply) changes nothing.
 */
import type { Firestore } from 'firebase-admin/firestore';
import type { CancelResponse } from '../rules/state-machine';
import { decideCancel } from '../rules/state-machine';
import { operatorReplyOf } from './reply';
import { runTransition } from './transition';

export type CancelOutcome =
  | { kind: 'decided'; deliveryId: string; status: CancelResponse['status']; written: boolean }
  /** Nothing to do: not an operator reply or no valid request; or the reply has no delivery. */
  | { kind: 'ignored'; reason: 'no_request' | 'no_delivery' };

/**
 * Applies the cancel request on `reply` (the reply document's data as the trigger saw it after
 * the console's write) to the delivery its mirror names.
 */
export async function cancelReply(db: Firestore, workspaceId: string, messageId: string, reply: Record<string, unknown> | undefined): Promise<CancelOutcome> {
  const operatorReply = operatorReplyOf(messageId, reply);
  const request = operatorReply?.cancel?.requestedAt ?? null;
  if (operatorReply === null || request === null) return { kind: 'ignored', reason: 'no_request' };
  const requestedAt = request.toMillis();
  const deliveryId = operatorReply.mirror?.deliveryId ?? null;
  if (deliveryId === null) return { kind: 'ignored', reason: 'no_delivery' };

  const { before, decision } = await runTransition(db, {
    workspaceId,
    deliveryId,
    // A recall in time ends the delivery and releases the next: its queue comes in the first wave.
    withQueue: true,
    // The mirror is the service's own write, but a record of another reply is never touched.
    decide: (d, facts) => (d.messageId === messageId ? decideCancel(d, { now: facts.now, requestedAt }) : null),
  });
  if (before === null || decision === null) return { kind: 'ignored', reason: 'no_delivery' };
  return { kind: 'decided', deliveryId, status: decision.response.status, written: decision.next !== null };
}
