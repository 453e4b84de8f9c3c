/**
 * Operator resend (docs/decisions.md#operator-resend): a workspace member writes `resend: { requestedAt, uid }` on a
 * reply whose delivery ended `failed` or `unknown` (firestore.rules allows exactly that). The
 * reply's update trigger calls `resendReply`, which in one creation transaction (./transition.ts
 * `runCreation`) appends a new delivery for the same text at the end of the conversation's queue
 * (`appendDelivery`, the same rule as a new reply's), mirrors it as the reply's `delivery` with the
 * previous outcome in `delivery.previous`, and queues its notification.
 *
 * Once only: the new delivery's id is derived from the one it replaces, so a repeated request, two
 * quick clicks or a retried trigger find it and do nothing; and a reply whose current delivery is
 * not failed/unknown (the resent one is unfinished, or it was sent) is left alone.
 */
import type { Firestore, Transaction } from 'firebase-admin/firestore';
import { resendDeliveryIdFor } from '../platform/ids';
import { paths } from '../platform/paths';
import { repliesTopic, type Integration } from '../integrations/model';
import { integrationOf, integrationRef } from '../integrations/store';
import type { DeliveryRecord, PreviousDelivery } from '../rules/record';
import { channelVerdict, operatorReplyOf, previousFromMirror, resendParts, type ReplyRejection } from './reply';
import { channelFactsOf } from './window';
import { readDelivery } from './reads';
import { appendDelivery, openQueue, refuseReply, runCreation } from './transition';

export type ResendOutcome =
  | { kind: 'created'; deliveryId: string; previousDeliveryId: string | null; outboxId: string | null }
  | { kind: 'refused'; code: ReplyRejection }
  /** Nothing to do: no request, not an operator reply, its delivery is not failed/unknown, or already resent. */
  | { kind: 'ignored'; reason: 'no_request' | 'not_finished' | 'already_resent' };

const RESENDABLE = new Set(['failed', 'unknown']);

/** How the replaced delivery ended, from its record. */
function previousOf(record: DeliveryRecord): PreviousDelivery {
  return {
    deliveryId: record.deliveryId,
    status: record.status === 'unknown' ? 'unknown' : 'failed',
    error: record.error,
    providerMessageIds: record.providerMessageIds,
    attemptLog: record.attemptLog ?? [],
    updatedAt: record.updatedAt,
  };
}

/** The integration of a conversation (read in the transaction), or null. */
async function integrationFor(tx: Transaction, db: Firestore, workspaceId: string, integrationId: unknown): Promise<Integration | null> {
  const snap = typeof integrationId === 'string' ? await tx.get(integrationRef(db, workspaceId, integrationId)) : null;
  return snap ? integrationOf(snap) : null;
}

export async function resendReply(db: Firestore, workspaceId: string, conversationId: string, messageId: string): Promise<ResendOutcome> {
  return runCreation(db, { workspaceId, conversationId }, async (tx, queue, now): Promise<ResendOutcome> => {
    const [replySnap, queueSnap, conversationSnap] = await tx.getAll(
      db.doc(paths.message(workspaceId, conversationId, messageId)),
      queue.ref,
      db.doc(paths.conversation(workspaceId, conversationId)),
    );
    const reply = operatorReplyOf(messageId, replySnap?.data());
    if (reply === null || reply.resend === null) return { kind: 'ignored', reason: 'no_request' };
    const mirror = reply.mirror;
    if (mirror === null || mirror.status === null || !RESENDABLE.has(mirror.status)) return { kind: 'ignored', reason: 'not_finished' };

    const previousId = mirror.deliveryId;
    const previousRecord = previousId === null ? null : await readDelivery(tx, db, workspaceId, previousId);
    if (previousRecord !== null && !RESENDABLE.has(previousRecord.status)) return { kind: 'ignored', reason: 'not_finished' };
    const deliveryId = resendDeliveryIdFor(conversationId, messageId, previousId);
    if ((await readDelivery(tx, db, workspaceId, deliveryId)) !== null) return { kind: 'ignored', reason: 'already_resent' };

    const integrationId = conversationSnap?.get('integrationId') as unknown;
    await openQueue(tx, db, queue, queueSnap);
    // Only the parts not known to be sent (docs/contract.md#per-part-outcomes).
    const parts = previousRecord === null ? null : resendParts(previousRecord);
    const integration = await integrationFor(tx, db, workspaceId, integrationId);
    // Checked again against the channel as it is now (docs/contract.md#windows): a free-form resend
    // after the window closed fails `window_closed`; a template reply is re-checked whole.
    const text = reply.template !== undefined ? reply.text : (parts?.text ?? reply.text);
    const hasAttachments = (parts?.attachments.length ?? 0) > 0;
    const verdict = channelVerdict({ text, template: reply.template, hasAttachments }, integrationId, repliesTopic(integration) !== null, channelFactsOf(integration, conversationSnap, now));
    if (!verdict.accepted) {
      // One level of history, as for a created delivery: the mirror being replaced, without its own `previous`.
      refuseReply(tx, db, { workspaceId, conversationId, messageId }, verdict.code, now, mirror);
      return { kind: 'refused', code: verdict.code };
    }
    // At the end of the queue, like any new delivery (../rules/state-machine.ts `decideAppend`).
    const { outboxId } = appendDelivery(tx, db, queue, {
      deliveryId,
      workspaceId,
      integrationId: verdict.integrationId,
      conversationId,
      messageId,
      text: verdict.text,
      ...(verdict.template !== undefined ? { template: verdict.template } : {}),
      ...(parts !== null && parts.attachments.length > 0 ? { attachments: parts.attachments } : {}),
      ...(parts?.textSent === true ? { textSent: true } : {}),
      // A failed start is resent as a start (to its address, with its template), not as a reply.
      ...(previousRecord?.start !== undefined ? { start: { to: previousRecord.start.to } } : {}),
      ...(previousRecord?.template !== undefined ? { template: previousRecord.template } : {}),
      now,
      reason: 'resend',
      previous: previousRecord !== null ? previousOf(previousRecord) : previousFromMirror(mirror),
    });
    return { kind: 'created', deliveryId, previousDeliveryId: previousId, outboxId };
  });
}
