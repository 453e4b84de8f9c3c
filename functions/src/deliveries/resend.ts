/**
 * Operator resend (docs/decisions.md#operator-resend): a workspace member writes `resend: { requestedAt, uid }` on a
 * reply whose delivery ended `failed` or `unknown` (firestore.rules allows exactly that). The
 * reply's update trigger calls `resendReply`, which in one transaction creates a new delivery for
 * the same text at the end of the conversation's queue, mirrors it as the reply's `delivery` with
 * the previous outcome in `delivery.previous`, and queues its notification.
 *
 * Once only: the new delivery's id is derived from the one it replaces, so a repeated request, two
 * quick clicks or a retried trigger find it and do nothing; and a reply whose current delivery is
 * not failed/unknown (the resent one is unfinished, or it was sent) is left alone.
 */
import { Timestamp, type Firestore } from 'firebase-admin/firestore';
import { resendDeliveryIdFor } from '../platform/ids';
import { paths } from '../platform/paths';
import { pendingKey, storedPending } from './ordering';
import { newDelivery, type DeliveryRecord, type PreviousDelivery } from './record';
import { failureMirror, isOperatorReply, repliesEnabledFor, replyRejection } from './sequencing';
import { deliveryQueueRef, readDelivery, readDeliveryQueue, writeDelivery } from './store';

export type ResendOutcome =
  | { kind: 'created'; deliveryId: string; previousDeliveryId: string | null; outboxId: string | null }
  | { kind: 'refused'; code: 'replies_disabled' | 'invalid_reply' }
  /** Nothing to do: no request, not an operator reply, its delivery is not failed/unknown, or already resent. */
  | { kind: 'ignored'; reason: 'no_request' | 'not_finished' | 'already_resent' };

interface Mirror {
  deliveryId?: unknown;
  status?: unknown;
  error?: unknown;
  updatedAt?: unknown;
}

const RESENDABLE = new Set(['failed', 'unknown']);

/** How the replaced delivery ended, from its record (or, for a reply refused without one, from the mirror). */
function previousOf(record: DeliveryRecord | null, mirror: Mirror): PreviousDelivery {
  if (record !== null) {
    return {
      deliveryId: record.deliveryId,
      status: record.status === 'unknown' ? 'unknown' : 'failed',
      error: record.error,
      providerMessageIds: record.providerMessageIds,
      attemptLog: record.attemptLog ?? [],
      updatedAt: record.updatedAt,
    };
  }
  const error = mirror.error as { outcome?: unknown; code?: unknown } | undefined;
  return {
    deliveryId: null,
    status: 'failed',
    error: typeof error?.code === 'string' ? { outcome: 'failed', code: error.code } : null,
    providerMessageIds: [],
    attemptLog: [],
    updatedAt: mirror.updatedAt instanceof Timestamp ? mirror.updatedAt.toMillis() : 0,
  };
}

export async function resendReply(db: Firestore, workspaceId: string, conversationId: string, messageId: string): Promise<ResendOutcome> {
  return db.runTransaction(async (tx): Promise<ResendOutcome> => {
    const now = Date.now();
    const queueRef = deliveryQueueRef(db, workspaceId, conversationId);
    const [replySnap, queueSnap, conversationSnap] = await tx.getAll(
      db.doc(paths.message(workspaceId, conversationId, messageId)),
      queueRef,
      db.doc(paths.conversation(workspaceId, conversationId)),
    );
    const reply = replySnap?.data();
    if (reply === undefined || !isOperatorReply(reply) || reply.resend === undefined) return { kind: 'ignored', reason: 'no_request' };
    const mirror = (reply.delivery ?? {}) as Mirror;
    if (typeof mirror.status !== 'string' || !RESENDABLE.has(mirror.status)) return { kind: 'ignored', reason: 'not_finished' };

    const previousId = typeof mirror.deliveryId === 'string' ? mirror.deliveryId : null;
    const previousRecord = previousId === null ? null : await readDelivery(tx, db, workspaceId, previousId);
    if (previousRecord !== null && !RESENDABLE.has(previousRecord.status)) return { kind: 'ignored', reason: 'not_finished' };
    const deliveryId = resendDeliveryIdFor(conversationId, messageId, previousId);
    if ((await readDelivery(tx, db, workspaceId, deliveryId)) !== null) return { kind: 'ignored', reason: 'already_resent' };

    const integrationId = conversationSnap?.get('integrationId') as unknown;
    const queue = await readDeliveryQueue(tx, db, workspaceId, conversationId, queueSnap, true);
    const text = previousRecord?.text ?? reply.text;
    const refused = replyRejection(text, await repliesEnabledFor(tx, db, workspaceId, integrationId));
    const previous = previousOf(previousRecord, mirror);
    if (refused !== null || typeof integrationId !== 'string' || typeof text !== 'string') {
      const code = refused ?? 'replies_disabled';
      // One level of history, as for a created delivery: the mirror being replaced, without its own `previous`.
      const { previous: _older, ...replaced } = reply.delivery as Record<string, unknown>;
      tx.set(replySnap!.ref, { delivery: { ...failureMirror(code, now), previous: replaced } }, { mergeFields: ['delivery'] });
      return { kind: 'refused', code };
    }

    const seq = typeof queueSnap?.get('nextSeq') === 'number' ? (queueSnap.get('nextSeq') as number) : 1;
    const delivery: DeliveryRecord = {
      ...newDelivery({ deliveryId, workspaceId, integrationId, conversationId, messageId, seq, text, now }),
      previous,
      // At the end of the queue: it is the head only when nothing else is unfinished.
      ...(queue.pending.size === 0 ? { head: true } : {}),
    };
    const outboxId = writeDelivery(tx, db, null, delivery, { at: now, reason: 'resend', inline: true }, now);
    const pending = { ...(queue.rebuilt ? storedPending(queue.pending) : {}), [pendingKey(seq)]: deliveryId };
    tx.set(queueRef, { nextSeq: seq + 1, pending, updatedAt: Timestamp.fromMillis(now) }, { merge: true });
    return { kind: 'created', deliveryId, previousDeliveryId: previousId, outboxId };
  });
}
