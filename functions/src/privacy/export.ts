/**
 * Export of one customer (docs/privacy.md#export). An admin writes `workspaces/{ws}/exports/{id}`
 * (the same four fields as an erasure); the creation trigger writes a JSON Lines file to the store
 * (Cloud Storage deployed, the local directory on the emulators) and records on the document
 * `status` (`running` -> `done`), `counts`, `file: { bytes, sha256 }`, `finishedAt` and
 * `fileExpiresAt` (7 days later). Admins download it through `downloadExport` (./download.ts);
 * the retention job deletes the file and the document once `fileExpiresAt` has passed.
 *
 * The lines, one JSON object each, with a `type`:
 *   `customer` (the record), `conversation` (each one the customer wrote in, with `soleCustomer`),
 *   `message` (the customer's own messages everywhere; in a sole-customer conversation also the
 *   operator replies), with image and attachment references (store path, sha256, type, size: the
 *   bytes stay in the store; an attachment's path comes from its upload record), and `delivery`
 *   (of those replies: status, attempts, receipt); `reaction`; `start_address` and
 *   `conversation_start` (the addresses the desk started conversations to and the requests naming
 *   them). The conversations include those the customer never wrote in: a conversation the desk
 *   started that lists them, and those of starts that never completed to an address whose value is
 *   the customer id (docs/privacy.md#addresses-of-conversations-the-desk-starts).
 * In a conversation shared with other customers, their messages and the replies are not the
 * customer's data, so they are left out.
 *
 * One run writes the whole file (idempotent: a repeated run writes the same path again); it reads
 * at most `EXPORT_MESSAGE_LIMIT` messages, beyond which the export ends `failed` / `too_large`.
 */
import { createHash } from 'node:crypto';
import { Timestamp, type DocumentData, type Firestore, type QueryDocumentSnapshot } from 'firebase-admin/firestore';
import { customerIdFor } from '../platform/ids';
import { paths } from '../platform/paths';
import { collectionQuery, groupQuery, QUERIES } from '../platform/queries';
import type { ImageStore } from '../messages/image-store';
import { attachmentReferencesOf } from './stored-objects';
import { pendingAddressesOf, startsNamedBy, startsOfAddress } from './message-events';

/** How long the file can be downloaded. */
const EXPORT_TTL_MS = 7 * 86_400_000;
/** The most messages one export reads (one run, one file in memory). */
const EXPORT_MESSAGE_LIMIT = 20_000;

/** The store path of an export's file (derived by the service; never from a client). */
export const exportFilePath = (workspaceId: string, exportId: string): string => `workspaces/${workspaceId}/exports/${exportId}.jsonl`;

/** Firestore values -> JSON: Timestamps as epoch ms. */
function plain(value: unknown): unknown {
  if (value instanceof Timestamp) return value.toMillis();
  if (Array.isArray(value)) return value.map(plain);
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]));
  return value;
}

const line = (type: string, data: DocumentData): string => JSON.stringify({ type, ...(plain(data) as Record<string, unknown>) });

interface ExportCounts {
  conversations: number;
  messages: number;
  deliveries: number;
}

/** Builds the JSON Lines of one customer; null when it reads more than the limit. */
async function buildExport(db: Firestore, workspaceId: string, integrationId: string, externalCustomerId: string, now: number): Promise<{ text: string; counts: ExportCounts } | null> {
  const customerId = customerIdFor(integrationId, externalCustomerId);
  const lines: string[] = [];
  const customer = (await db.doc(paths.customer(workspaceId, customerId)).get()).data();
  if (customer !== undefined) lines.push(line('customer', { customerId, ...customer }));

  const own = await groupQuery(db, QUERIES.messagesOfCustomer, customerId, Timestamp.fromMillis(now)).limit(EXPORT_MESSAGE_LIMIT + 1).get();
  const mine = own.docs.filter((doc) => doc.ref.path.startsWith(`${paths.conversations(workspaceId)}/`));
  if (mine.length > EXPORT_MESSAGE_LIMIT) return null;
  const counts: ExportCounts = { conversations: 0, messages: 0, deliveries: 0 };
  const byConversation = new Map<string, DocumentData[]>();
  for (const doc of mine) {
    const conversationId = doc.ref.parent.parent?.id ?? '';
    byConversation.set(conversationId, [...(byConversation.get(conversationId) ?? []), { messageId: doc.id, ...doc.data() }]);
  }
  let read = mine.length;
  // The conversations of the customer that hold none of their messages, as the erasure finds them
  // (./erasure.ts `linkedStep`): those listing them (a conversation the desk started that they
  // never answered), the started conversations merged into those that were theirs, and those of
  // starts that never completed to an address whose value is the customer id.
  const conversations = db.collection(paths.conversations(workspaceId));
  const linked = await collectionQuery(conversations, QUERIES.conversationsListingCustomer, customerId).limit(EXPORT_MESSAGE_LIMIT + 1).get();
  read += linked.size;
  const extra = new Set(linked.docs.map((doc) => doc.id));
  const stubIds = [...new Set(linked.docs.flatMap((doc) => (Array.isArray(doc.get('mergedFrom')) ? (doc.get('mergedFrom') as unknown[]) : [])))].filter((id): id is string => typeof id === 'string' && id !== '');
  const stubs = stubIds.length > 0 ? await db.getAll(...stubIds.map((id) => conversations.doc(id))) : [];
  for (const stub of stubs) if (stub.exists && stub.get('lastSenderExternalId') === externalCustomerId) extra.add(stub.id);
  const pending = await pendingAddressesOf(db, workspaceId, integrationId, externalCustomerId);
  for (const entry of pending.entries) if (typeof entry.get('conversationId') === 'string') extra.add(entry.get('conversationId') as string);
  read += stubs.length + pending.reads;
  if (read > EXPORT_MESSAGE_LIMIT) return null;
  for (const id of extra) if (!byConversation.has(id)) byConversation.set(id, []);
  const exported = new Set<string>();
  for (const conversationId of [...byConversation.keys()].sort()) {
    const snap = await db.doc(paths.conversation(workspaceId, conversationId)).get();
    // A linked conversation deleted since it was listed has nothing to export.
    if (!snap.exists && (byConversation.get(conversationId) ?? []).length === 0) continue;
    const conversation = snap.data() ?? {};
    const ids: unknown = conversation.customerIds;
    const sole = Array.isArray(ids) && ids.every((id) => id === customerId);
    // Not exported: the other customers' ids, the search index (prefixes of the latest customer's
    // name and id, who may be another customer: ../contract/conversation-search.ts), and the latest
    // typing time (typing is never exported: docs/privacy.md).
    const { customerIds: _others, searchKeys: _index, typingAt: _typing, ...shown } = conversation;
    lines.push(line('conversation', { conversationId, ...shown, soleCustomer: sole }));
    counts.conversations += 1;
    let messages = byConversation.get(conversationId) ?? [];
    if (sole) {
      const all = await collectionQuery(db.collection(paths.messages(workspaceId, conversationId)), QUERIES.messagesById).limit(EXPORT_MESSAGE_LIMIT + 1).get();
      read += all.size;
      if (read > EXPORT_MESSAGE_LIMIT) return null;
      messages = all.docs.map((doc) => ({ messageId: doc.id, ...doc.data() }));
    }
    for (const m of messages.sort((a, b) => (plain(a.createdAt) as number) - (plain(b.createdAt) as number))) {
      // A reply's attachments name no path: their upload records do (./stored-objects.ts).
      const attachments = await attachmentReferencesOf(db, workspaceId, m);
      // Edits, the tombstone and reactions are fields of the message and go with it; the index of
      // who reacted (`reactionCustomerIds`, other customers' ids) is the service's, not content.
      const { reactionCustomerIds: _reactors, ...content } = m;
      lines.push(line('message', { conversationId, ...content, ...(attachments === undefined ? {} : { attachments }) }));
      exported.add(`${conversationId}/${String(m.messageId)}`);
      counts.messages += 1;
    }
    if (sole) {
      const deliveries = await collectionQuery(db.collection(paths.deliveries(workspaceId)), QUERIES.deliveriesOfConversation, conversationId).get();
      for (const d of deliveries.docs.sort((a, b) => Number(a.get('seq')) - Number(b.get('seq')))) {
        const { lease: _lease, ...record } = d.data();
        lines.push(line('delivery', record));
        counts.deliveries += 1;
      }
    }
  }
  // The customer's reactions on messages not exported above (operator replies and other customers'
  // messages of conversations they share): one `reaction` line each, without the message's content.
  const reacted = await groupQuery(db, QUERIES.messagesWithReactionOf, customerId).limit(EXPORT_MESSAGE_LIMIT + 1).get();
  read += reacted.size;
  if (read > EXPORT_MESSAGE_LIMIT) return null;
  for (const doc of reacted.docs.filter((d) => d.ref.path.startsWith(`${paths.conversations(workspaceId)}/`)).sort((a, b) => (a.ref.path < b.ref.path ? -1 : 1))) {
    const conversationId = doc.ref.parent.parent?.id ?? '';
    if (exported.has(`${conversationId}/${doc.id}`)) continue;
    const reactions = Array.isArray(doc.get('reactions')) ? (doc.get('reactions') as Array<{ senderExternalId?: unknown }>) : [];
    for (const reaction of reactions.filter((r) => r.senderExternalId === externalCustomerId)) {
      lines.push(line('reaction', { conversationId, messageId: doc.id, ...reaction }));
    }
  }
  // The addresses the desk started conversations to (the address book) and the start requests naming them.
  const addresses = await collectionQuery(db.collection(paths.startAddresses(workspaceId)), QUERIES.startAddressesOfCustomer, integrationId, externalCustomerId).limit(EXPORT_MESSAGE_LIMIT + 1).get();
  read += addresses.size;
  const startLines = new Set<string>();
  const startLine = (start: QueryDocumentSnapshot): void => {
    if (startLines.has(start.id)) return;
    startLines.add(start.id);
    lines.push(line('conversation_start', { startId: start.id, ...start.data() }));
  };
  for (const address of addresses.docs.sort((a, b) => (a.id < b.id ? -1 : 1))) {
    lines.push(line('start_address', { addressId: address.id, ...address.data() }));
    const starts = await startsOfAddress(db, workspaceId, integrationId, address.data(), EXPORT_MESSAGE_LIMIT + 1);
    read += starts.size;
    if (read > EXPORT_MESSAGE_LIMIT) return null;
    for (const start of starts.docs.sort((a, b) => (a.id < b.id ? -1 : 1))) startLine(start);
  }
  // Starts that never completed to an address whose value is the customer id (their entry names no
  // customer yet), and refused starts to such an address (docs/privacy.md#addresses-of-conversations-the-desk-starts).
  for (const entry of pending.entries.sort((a, b) => (a.id < b.id ? -1 : 1))) lines.push(line('start_address', { addressId: entry.id, ...entry.data() }));
  const byValue = await startsNamedBy(db, workspaceId, integrationId, externalCustomerId, EXPORT_MESSAGE_LIMIT + 1);
  read += byValue.length;
  if (read > EXPORT_MESSAGE_LIMIT) return null;
  for (const start of byValue.sort((a, b) => (a.id < b.id ? -1 : 1))) startLine(start);
  return { text: lines.map((l) => `${l}\n`).join(''), counts };
}

/** The export `exportId`: writes its file and records the outcome (once; a repeated run finds it done). */
export async function runExport(db: Firestore, store: ImageStore, workspaceId: string, exportId: string, now = Date.now()): Promise<'done' | 'failed' | 'ignored'> {
  const ref = db.doc(paths.exportRequest(workspaceId, exportId));
  const request = (await ref.get()).data();
  if (request === undefined || request.status === 'done' || request.status === 'failed') return 'ignored';
  await ref.update({ status: 'running', startedAt: now });
  const built = await buildExport(db, workspaceId, String(request.integrationId), String(request.externalCustomerId), now);
  if (built === null) {
    await ref.update({ status: 'failed', error: { code: 'too_large' }, finishedAt: Date.now() });
    return 'failed';
  }
  const bytes = Buffer.from(built.text, 'utf8');
  await store.remove(exportFilePath(workspaceId, exportId));
  await store.put(exportFilePath(workspaceId, exportId), bytes, 'application/x-ndjson');
  const finishedAt = Date.now();
  await ref.update({
    status: 'done',
    counts: built.counts,
    file: { bytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') },
    finishedAt,
    fileExpiresAt: finishedAt + EXPORT_TTL_MS,
  });
  return 'done';
}

/** The retention job's part: files (and their documents) of exports past `fileExpiresAt`. Returns how many. */
export async function deleteExpiredExports(db: Firestore, store: ImageStore, now: number): Promise<number> {
  const all = await groupQuery(db, QUERIES.allExports).get();
  let deleted = 0;
  for (const doc of all.docs) {
    const expiresAt: unknown = doc.get('fileExpiresAt');
    if (typeof expiresAt !== 'number' || expiresAt > now) continue;
    const workspaceId = doc.ref.parent.parent?.id ?? '';
    await store.remove(exportFilePath(workspaceId, doc.id));
    await doc.ref.delete();
    deleted += 1;
  }
  return deleted;
}
