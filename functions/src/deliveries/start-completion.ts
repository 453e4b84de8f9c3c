/**
 * A start's `complete` (docs/contract.md#conversations-the-desk-starts): the connector names the
 * thread the channel made (`conversation: { externalConversationId, externalCustomerId, metadata? }`)
 * and, in the complete's own transaction (./transition.ts `runTransition`, hooks `adjust` and
 * `readAlso`), the started conversation joins that thread's conversation: the conversation id every
 * incoming message of the thread is filed under (../platform/ids.ts `conversationIdFor`).
 *
 * WHY always there (docs/decisions.md#conversations-the-desk-starts): incoming messages find their
 * conversation by that id and nothing else, so filing the start there costs an incoming message no
 * read at all, whereas a mapping the other way (thread -> started conversation) would be one more
 * read in every incoming message's transaction. Whether the thread's conversation is new (the usual
 * case: it is created here from the started one) or the customer wrote from that thread before (or
 * answered before this `complete`), it is the same move:
 *   - the start's message moves there (same id; its `delivery` mirror is written there by the plan),
 *     and the delivery's `conversationId` names it;
 *   - the started conversation keeps `mergedInto` (the console follows it), the target `mergedFrom`;
 *     `waitingForChannel` goes;
 *   - the address book records the customer and the conversation, so the next start to the address
 *     is a reply there; `metadata` merges into the target as an incoming message's does.
 * Nothing is copied twice: the move runs once, on the complete that turns the delivery `sent`
 * (a retried complete of a sent delivery decides no write, and so moves nothing).
 */
import { FieldValue, Timestamp, type DocumentSnapshot, type Firestore, type Transaction } from 'firebase-admin/firestore';
import { conversationListShard } from '../contract';
import { conversationSearchKeys } from '../contract/conversation-search';
import { conversationIdFor, customerIdFor } from '../platform/ids';
import { paths } from '../platform/paths';
import { mergeMetadata, storedMetadata } from '../rules/metadata';
import type { Decision, DeliveryRecord } from '../rules/record';
import { startAddressId, type StartedThread } from '../rules/starts';

/** What a transition adds to its rule (./transition.ts `Transition`): a change of the decision, and reads and writes of its own. */
export interface TransitionHooks {
  adjust<R>(before: DeliveryRecord, decision: Decision<R>): Decision<R>;
  readAlso<R>(tx: Transaction, before: DeliveryRecord, decision: Decision<R> | null): Promise<((tx: Transaction) => void) | null>;
}

/** The complete that turns a start `sent` with its thread: the thread's conversation id, or null for any other complete. */
function movedTo<R>(before: DeliveryRecord, decision: Decision<R> | null): { thread: StartedThread; conversationId: string } | null {
  const thread = decision?.next?.start?.thread;
  if (before.start === undefined || before.status === 'sent' || decision?.next?.status !== 'sent' || thread === undefined) return null;
  return { thread, conversationId: conversationIdFor(before.integrationId, thread.externalConversationId) };
}

/** The hooks of `completeDelivery`: `conversation` is the body's (null: absent). */
export function startCompletionHooks(db: Firestore, conversation: StartedThread | undefined): TransitionHooks {
  return {
    adjust: (before, decision) => {
      const target = movedTo(before, decision);
      if (target === null || decision.next === null || target.conversationId === before.conversationId) return decision;
      return { ...decision, next: { ...decision.next, conversationId: target.conversationId } };
    },
    readAlso: async (tx, before, decision) => {
      const target = movedTo(before, decision);
      if (target === null || target.conversationId === before.conversationId || before.start === undefined) return null;
      const { workspaceId, integrationId } = before;
      const fromRef = db.doc(paths.conversation(workspaceId, before.conversationId));
      const toRef = db.doc(paths.conversation(workspaceId, target.conversationId));
      const fromMessageRef = db.doc(paths.message(workspaceId, before.conversationId, before.messageId));
      const bookRef = db.doc(paths.startAddress(workspaceId, startAddressId(integrationId, before.start.to)));
      const [fromSnap, toSnap, messageSnap] = await tx.getAll(fromRef, toRef, fromMessageRef);
      const at = Timestamp.fromMillis(decision?.next?.updatedAt ?? Date.now());
      const thread = { ...target.thread, ...(conversation?.metadata !== undefined ? { metadata: conversation.metadata } : {}) };
      return (write) => {
        const { delivery: _mirror, ...message } = messageSnap?.data() ?? {};
        // The mirror is the plan's (written at the new place); the rest of the message moves with it.
        if (messageSnap?.exists === true) {
          write.set(db.doc(paths.message(workspaceId, target.conversationId, before.messageId)), message, { merge: true });
          write.delete(fromMessageRef);
        }
        write.set(toRef, joinedConversation(fromSnap, toSnap, before, target.conversationId, thread, at), { merge: true });
        write.set(
          fromRef,
          { mergedInto: target.conversationId, waitingForChannel: FieldValue.delete(), externalConversationId: thread.externalConversationId, lastSenderExternalId: thread.externalCustomerId, updatedAt: at },
          { merge: true },
        );
        write.set(bookRef, { integrationId, kind: before.start?.to.kind, value: before.start?.to.value, externalCustomerId: thread.externalCustomerId, conversationId: target.conversationId, updatedAt: at }, { merge: true });
      };
    },
  };
}

/**
 * The thread's conversation once the start joined it: created from the started one when new
 * (`origin: "desk"`, its start and address, the thread's ids), otherwise left as the customer's
 * messages made it; either way `mergedFrom` names the started one, the customer is one of its
 * customers and the metadata is merged.
 */
function joinedConversation(from: DocumentSnapshot | undefined, to: DocumentSnapshot | undefined, d: DeliveryRecord, conversationId: string, thread: StartedThread, at: Timestamp): Record<string, unknown> {
  const fields: Record<string, unknown> = {
    integrationId: d.integrationId,
    externalConversationId: thread.externalConversationId,
    mergedFrom: FieldValue.arrayUnion(d.conversationId),
    customerIds: FieldValue.arrayUnion(customerIdFor(d.integrationId, thread.externalCustomerId)),
    updatedAt: at,
  };
  if (to?.exists !== true) {
    const started = from?.data() ?? {};
    Object.assign(fields, {
      origin: 'desk',
      startId: started.startId ?? null,
      to: started.to ?? d.start?.to ?? null,
      lastSenderExternalId: thread.externalCustomerId,
      needsReply: false,
      searchKeys: conversationSearchKeys({ externalConversationId: thread.externalConversationId, customerExternalId: thread.externalCustomerId, customerName: null }),
      listShard: conversationListShard(conversationId),
      createdAt: started.createdAt ?? at,
      lastMessageAt: started.lastMessageAt ?? at,
    });
  }
  if (thread.metadata !== undefined && Object.keys(thread.metadata).length > 0) {
    const { merged, removed } = mergeMetadata(storedMetadata(to?.get('metadata')), thread.metadata);
    fields.metadata = Object.keys(merged).length === 0 ? FieldValue.delete() : { ...merged, ...Object.fromEntries(removed.map((key) => [key, FieldValue.delete()])) };
  }
  return fields;
}
