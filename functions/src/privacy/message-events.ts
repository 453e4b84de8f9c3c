/**
 * What an erasure removes of one customer's message events besides their own messages (whose
 * edits, tombstones and reactions go with the message documents): their reactions on messages that
 * stay (operator replies, other customers' messages), their events still waiting for a target, and
 * their typing document, and the addresses the desk started conversations to with the start
 * requests naming them (docs/privacy.md#erasure). One bounded page per call, each change in its
 * own transaction, so a repeated or concurrent step is harmless.
 */
import { Timestamp, type DocumentData, type Firestore } from 'firebase-admin/firestore';
import { paths } from '../platform/paths';
import { collectionQuery, groupQuery, QUERIES } from '../platform/queries';

/** A page of one kind of the customer's event data, cleaned: how many documents were changed or deleted, and read. */
export interface EventCleanup {
  /** What the page held: `reactions`, `pending` or `typing`; null when nothing of the customer is left. */
  kind: 'reactions' | 'pending' | 'typing' | 'starts' | null;
  changed: number;
  reads: number;
}

interface StoredReaction {
  emoji?: unknown;
  senderExternalId?: unknown;
  at?: unknown;
}

/**
 * Removes one page of the customer's event data, the first kind that still has any: reactions on
 * messages that stay, then pending entries, then the typing documents. `kind: null` when none is left.
 */
export async function removeCustomerEventData(
  db: Firestore,
  workspaceId: string,
  customer: { integrationId: string; externalCustomerId: string; customerId: string },
  pageSize: number,
): Promise<EventCleanup> {
  const reacted = await groupQuery(db, QUERIES.messagesWithReactionOf, customer.customerId).limit(pageSize).get();
  // The customer id hashes the integration id, so only this workspace's messages can match; the prefix keeps it an invariant.
  const mine = reacted.docs.filter((doc) => doc.ref.path.startsWith(`${paths.conversations(workspaceId)}/`));
  if (mine.length > 0) {
    for (const doc of mine) {
      await db.runTransaction(async (tx) => {
        const data = (await tx.get(doc.ref)).data();
        if (data === undefined) return;
        const reactions = (Array.isArray(data.reactions) ? (data.reactions as StoredReaction[]) : []).filter((r) => r.senderExternalId !== customer.externalCustomerId);
        const ids = (Array.isArray(data.reactionCustomerIds) ? (data.reactionCustomerIds as unknown[]) : []).filter((id) => id !== customer.customerId);
        tx.update(doc.ref, { reactions, reactionCustomerIds: ids });
      });
    }
    return { kind: 'reactions', changed: mine.length, reads: reacted.size + mine.length };
  }

  const pending = await collectionQuery(db.collection(paths.pendingEvents(workspaceId)), QUERIES.pendingEventsOfCustomer, customer.customerId).limit(pageSize).get();
  if (pending.size > 0) {
    for (const doc of pending.docs) {
      await db.runTransaction(async (tx) => {
        const data: DocumentData | undefined = (await tx.get(doc.ref)).data();
        if (data === undefined) return;
        const events = (Array.isArray(data.events) ? (data.events as Array<{ customerId?: unknown }>) : []).filter((e) => e.customerId !== customer.customerId);
        if (events.length === 0) tx.delete(doc.ref);
        else tx.update(doc.ref, { events, customerIds: (data.customerIds as unknown[]).filter((id) => id !== customer.customerId), updatedAt: Timestamp.now() });
      });
    }
    return { kind: 'pending', changed: pending.size, reads: pending.size * 2 };
  }

  const starts = await removeStartData(db, workspaceId, customer, pageSize);
  if (starts !== null) return starts;

  const typing = await collectionQuery(db.collection(paths.typingAll(workspaceId)), QUERIES.typingOfSender, customer.integrationId, customer.externalCustomerId).limit(pageSize).get();
  if (typing.size > 0) {
    const batch = db.batch();
    for (const doc of typing.docs) batch.delete(doc.ref);
    await batch.commit();
    return { kind: 'typing', changed: typing.size, reads: typing.size };
  }
  return { kind: null, changed: 0, reads: reacted.size + pending.size + typing.size };
}

/**
 * One page of the customer's start data (docs/contract.md#conversations-the-desk-starts): each
 * address the address book holds for them, with the start requests that named it. The address is
 * deleted last (with the last page of its requests), so an interrupted step finds the rest by it.
 * Null when the book holds none of theirs.
 */
async function removeStartData(db: Firestore, workspaceId: string, customer: { integrationId: string; externalCustomerId: string }, pageSize: number): Promise<EventCleanup | null> {
  const addresses = await collectionQuery(db.collection(paths.startAddresses(workspaceId)), QUERIES.startAddressesOfCustomer, customer.integrationId, customer.externalCustomerId).limit(pageSize).get();
  if (addresses.size === 0) return null;
  let changed = 0;
  let reads = addresses.size;
  for (const address of addresses.docs) {
    const starts = await startsOfAddress(db, workspaceId, customer.integrationId, address.data(), pageSize);
    reads += starts.size;
    const batch = db.batch();
    for (const start of starts.docs) batch.delete(start.ref);
    const last = starts.size < pageSize;
    if (last) batch.delete(address.ref);
    await batch.commit();
    changed += starts.size + (last ? 1 : 0);
  }
  return { kind: 'starts', changed, reads };
}

/** The start requests of one address of the address book (a page). */
export function startsOfAddress(db: Firestore, workspaceId: string, integrationId: string, address: DocumentData, limit: number) {
  return collectionQuery(db.collection(paths.conversationStarts(workspaceId)), QUERIES.startsOfAddress, integrationId, String(address.kind), String(address.value)).limit(limit).get();
}
