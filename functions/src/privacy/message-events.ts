/**
 * What an erasure removes of one customer's message events besides their own messages (whose
 * edits, tombstones and reactions go with the message documents): their reactions on messages that
 * stay (operator replies, other customers' messages), their events still waiting for a target, and
 * their typing document, and the addresses the desk started conversations to with the start
 * requests naming them (docs/privacy.md#addresses-of-conversations-the-desk-starts). One bounded page per call, each change in its
 * own transaction, so a repeated or concurrent step is harmless.
 */
import { Timestamp, type DocumentData, type DocumentSnapshot, type Firestore, type QueryDocumentSnapshot } from 'firebase-admin/firestore';
import { paths } from '../platform/paths';
import { collectionQuery, groupQuery, QUERIES } from '../platform/queries';
import { START_ADDRESS_KINDS, startAddressId, type StartAddress } from '../rules/starts';

/** A page of one kind of the customer's event data, cleaned: how many documents were changed or deleted, and read. */
export interface EventCleanup {
  /** What the page held: `reactions`, `pending`, `starts` or `typing`; null when nothing of the customer is left. */
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
 * messages that stay, then pending entries, then their start data (`removeStartData`), then the
 * typing documents. `kind: null` when none is left.
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
 * One page of the customer's start data (docs/privacy.md#addresses-of-conversations-the-desk-starts):
 * each address the address book holds for them, with the start requests that named it; then the
 * start requests to an address whose value is the requested `externalCustomerId` itself, with the
 * address's entry when it names no customer yet (a start that never completed), unless the book
 * records that address for another customer (then it is theirs, and their erasure's). An address is
 * deleted last (with the last page of its requests), so an interrupted step finds the rest by it.
 * Null when nothing of theirs is left.
 */
async function removeStartData(db: Firestore, workspaceId: string, customer: { integrationId: string; externalCustomerId: string }, pageSize: number): Promise<EventCleanup | null> {
  const addresses = await collectionQuery(db.collection(paths.startAddresses(workspaceId)), QUERIES.startAddressesOfCustomer, customer.integrationId, customer.externalCustomerId).limit(pageSize).get();
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
  if (changed > 0) return { kind: 'starts', changed, reads };
  const byValue = await addressesNamedBy(db, workspaceId, customer.integrationId, customer.externalCustomerId);
  reads += byValue.reads;
  for (const { address, entry } of byValue.addresses) {
    const starts = await startsOfAddress(db, workspaceId, customer.integrationId, address, pageSize);
    reads += starts.size;
    const batch = db.batch();
    for (const start of starts.docs) batch.delete(start.ref);
    const last = starts.size < pageSize;
    if (last && entry !== null) batch.delete(entry.ref);
    await batch.commit();
    changed += starts.size + (last && entry !== null ? 1 : 0);
  }
  return changed > 0 ? { kind: 'starts', changed, reads } : null;
}

/**
 * The addresses whose value is `value` (one per kind) that are not another customer's: the book
 * holds no entry for them, or one naming no customer yet (`externalCustomerId: null`, a start that
 * never completed), or one naming `value` itself. With their entry (null: none). Found by their
 * derived ids (../rules/starts.ts `startAddressId`): one read per kind, no query.
 */
async function addressesNamedBy(db: Firestore, workspaceId: string, integrationId: string, value: string): Promise<{ addresses: Array<{ address: StartAddress; entry: DocumentSnapshot | null }>; reads: number }> {
  const all = START_ADDRESS_KINDS.map((kind): StartAddress => ({ kind, value }));
  const entries = await db.getAll(...all.map((address) => db.doc(paths.startAddress(workspaceId, startAddressId(integrationId, address)))));
  const addresses = all.flatMap((address, i) => {
    const entry = entries[i];
    const owner: unknown = entry?.get('externalCustomerId');
    if (entry?.exists === true && owner !== null && owner !== undefined && owner !== value) return [];
    return [{ address, entry: entry?.exists === true ? entry : null }];
  });
  return { addresses, reads: entries.length };
}

/**
 * The address book entries of `integrationId` with the value `value` that name no customer yet:
 * starts to that address never completed (docs/privacy.md#addresses-of-conversations-the-desk-starts).
 * The erasure and the export by `externalCustomerId` take them, and the conversations they name.
 */
export async function pendingAddressesOf(db: Firestore, workspaceId: string, integrationId: string, value: string): Promise<{ entries: DocumentSnapshot[]; reads: number }> {
  const { addresses, reads } = await addressesNamedBy(db, workspaceId, integrationId, value);
  const entries = addresses.flatMap(({ entry }) => (entry !== null && entry.get('externalCustomerId') === null ? [entry] : []));
  return { entries, reads };
}

/** The start requests of one address (a page): `address` is an entry of the address book, or the address itself. */
export function startsOfAddress(db: Firestore, workspaceId: string, integrationId: string, address: DocumentData | StartAddress, limit: number) {
  return collectionQuery(db.collection(paths.conversationStarts(workspaceId)), QUERIES.startsOfAddress, integrationId, String(address.kind), String(address.value)).limit(limit).get();
}

/**
 * The start requests to an address whose value is `value` that are not another customer's (see
 * `addressesNamedBy`), for the export: the requests to the customer's own address book entries are
 * exported with them; these are the ones that never completed, and the refused ones.
 */
export async function startsNamedBy(db: Firestore, workspaceId: string, integrationId: string, value: string, limit: number): Promise<QueryDocumentSnapshot[]> {
  const { addresses } = await addressesNamedBy(db, workspaceId, integrationId, value);
  const pages = await Promise.all(addresses.map(({ address }) => startsOfAddress(db, workspaceId, integrationId, address, limit)));
  return pages.flatMap((page) => page.docs);
}
