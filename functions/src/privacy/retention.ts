/**
 * Retention (docs/privacy.md#retention): a workspace admin sets `settings/retention` = `{ days }`;
 * messages, their stored objects, deliveries with their attempt logs, conversations and customers
 * older than that are deleted. Firestore's TTL policies (firestore.indexes.json, field `expireAt`)
 * delete most documents; this job decides every `expireAt` and deletes the rest itself
 * (the decisions are pure, in ./retention-plan.ts):
 *
 * - a pass walks each workspace's conversations (then its customers, its address book of starts and
 *   its start requests: docs/privacy.md#retention), a page at a time with its
 *   cursor on `settings/retentionState`, and sets each document's `expireAt` to its time plus the
 *   period (removes it when there is no period), writing only what differs. A pass runs when the
 *   period changed (so a change applies to existing data) and otherwise `PASS_INTERVAL_MS` after
 *   the previous one started (which stamps the replies and deliveries written since, and deletes
 *   what is due); incoming messages without images and customers are also stamped when written
 *   (messages/store.ts);
 * - a message that names stored objects (an incoming message's images, a reply's attachments with
 *   their upload records: ./stored-objects.ts) gets no `expireAt`: once its period is over the
 *   pass deletes its objects, then the message. TTL cannot be used for it: the objects would go
 *   either before their period is over or after nothing names them any more;
 * - a conversation gets no `expireAt` either: the pass deletes it once its newest message is older
 *   than the period, after visiting its messages (TTL deleting it first would hide its messages,
 *   and with them their objects, from every later pass);
 * - an unfinished delivery, its reply and its conversation never get an `expireAt` (and lose one
 *   they had) and are never deleted: retention never changes what a connector is about to send;
 * - the emulator runs no TTL deletion: there (or with RETENTION_DELETE_EXPIRED=true) the pass also
 *   deletes the documents whose `expireAt` has passed, so retention is observable locally and in
 *   tests; so does a run over every workspace for the typing documents and pending message events
 *   (`deleteExpiredEphemera`).
 *
 * Bounded: one run reads at most `RUN_BUDGET` documents per workspace and continues at its cursor
 * on the next run; every write and deletion is idempotent, so a crashed run is simply run again.
 * The conversations of a page are passed `CONVERSATIONS_AT_ONCE` at a time.
 */
import { FieldValue, Timestamp, type DocumentData, type DocumentReference, type DocumentSnapshot, type Firestore, type QueryDocumentSnapshot, type WriteBatch } from 'firebase-admin/firestore';
import { paths } from '../platform/paths';
import { isRetentionDays } from '../contract';
import { collectionQuery, groupQuery, QUERIES } from '../platform/queries';
import type { ImageStore } from '../messages/image-store';
import { UNFINISHED_STATUSES, type DeliveryStatus } from '../rules/record';
import { attachmentIdsOf } from '../deliveries/reply';
import { imageEntriesOf, removeAttachmentObjects, removeImages, uploadRecordsOf } from './stored-objects';
import { conversationPlan, expiryOf, messagePlan, passDue, startAddressExpiry, type RetentionState } from './retention-plan';
/** Documents one run reads per workspace at most (then it continues at its cursor). */
const RUN_BUDGET = 2_000;
const PAGE = 100;
/**
 * Conversations of a page passed at the same time. Each is independent of the others (its own
 * deliveries, messages, queue and batches) and its own writes are idempotent, so a crash midway
 * through a page only means the page is passed again (the cursor moves once the page is done).
 * One at a time, the pass waited on about five round trips per conversation in a row (bench:
 * 0.02 of raw batched deletes).
 */
const CONVERSATIONS_AT_ONCE = 10;

export interface RunStats {
  workspaces: number;
  reads: number;
  stamped: number;
  deleted: number;
  objectsDeleted: number;
}

/** The period of a workspace's settings document, or null (keep forever) for anything else. */
export function retentionDaysOf(data: DocumentData | undefined): number | null {
  const days: unknown = data?.days;
  return isRetentionDays(days) ? days : null;
}

const millis = (value: unknown): number | null =>
  value instanceof Timestamp ? value.toMillis() : typeof value === 'number' ? value : null;

/** Firestore's limit of writes in one batch: a writer commits its batch when it is full. */
const MAX_BATCH_WRITES = 500;

/**
 * Collects writes in a batch (at most one write per document read), committed when it is full
 * and by `flush()`; batches are committed in the order their writes were added.
 */
class Writer {
  private batch: WriteBatch;
  private size = 0;
  stamped = 0;
  deleted = 0;
  constructor(private readonly db: Firestore) {
    this.batch = db.batch();
  }

  /** Makes `snap`'s `expireAt` `desired` (deleting it when due and `deleteDue`); nothing when it already is. */
  async apply(snap: DocumentSnapshot, desired: number | null, now: number, deleteDue: boolean): Promise<void> {
    if (deleteDue && desired !== null && desired <= now) {
      this.batch.delete(snap.ref);
      this.deleted += 1;
    } else {
      const current = millis(snap.get('expireAt'));
      if (current === desired) return;
      this.batch.update(snap.ref, { expireAt: desired === null ? FieldValue.delete() : Timestamp.fromMillis(desired) });
      this.stamped += 1;
    }
    await this.added();
  }

  /** Deletes `ref`; `counted: false` for a document the stats do not count (a reply's upload record). */
  async deleteRef(ref: DocumentReference, { counted = true }: { counted?: boolean } = {}): Promise<void> {
    this.batch.delete(ref);
    if (counted) this.deleted += 1;
    await this.added();
  }

  /** Adds what another writer (a conversation's, see passConversations) stamped and deleted. */
  count(other: Writer): void {
    this.stamped += other.stamped;
    this.deleted += other.deleted;
  }

  async flush(): Promise<void> {
    if (this.size > 0) await this.batch.commit();
    this.batch = this.db.batch();
    this.size = 0;
  }

  private async added(): Promise<void> {
    this.size += 1;
    if (this.size >= MAX_BATCH_WRITES) await this.flush();
  }
}

const isUnfinished = (status: unknown): boolean => UNFINISHED_STATUSES.includes(status as DeliveryStatus);

/** Messages whose stored objects are removed at once (each removal is a request to the store). */
const OBJECT_MESSAGES_AT_ONCE = 16;

/**
 * Deletes messages that name stored objects, their period being over: the objects of all of them
 * first (`OBJECT_MESSAGES_AT_ONCE` messages at a time), then a reply's upload records and the
 * messages themselves, in the visit's batches (`writer`). A crash in between leaves the messages,
 * so the next pass finds them again, removes what is left (a missing object is no error) and the
 * rest; and the conversation's own deletion is still the visit's last write. Returns documents read.
 */
async function deleteWithObjects(db: Firestore, store: ImageStore, workspaceId: string, messages: readonly QueryDocumentSnapshot[], days: number | null, now: number, writer: Writer, stats: RunStats): Promise<number> {
  // A shared image (stored before images had one object per message) stays while a message naming
  // it has not reached the end of its period too, or is not one of these.
  const going = new Set(messages.map((m) => m.ref.path));
  const due = (other: QueryDocumentSnapshot): boolean => going.has(other.ref.path) || (expiryOf(millis(other.get('createdAt')) ?? now, days) ?? Infinity) <= now;
  const removed = await mapAtMost(messages, OBJECT_MESSAGES_AT_ONCE, async (m) => {
    const images = await removeImages(db, store, [m], (other) => other.ref.path !== m.ref.path && !due(other));
    const uploads = await uploadRecordsOf(db, workspaceId, m.data());
    const attachments = uploads.length > 0 ? await removeAttachmentObjects(db, store, workspaceId, uploads) : { reads: 0, removed: 0 };
    return { m, uploads, objects: images.removed + attachments.removed, reads: images.reads + uploads.length + attachments.reads };
  });
  let reads = 0;
  for (const { m, uploads, objects, reads: read } of removed) {
    stats.objectsDeleted += objects;
    reads += read;
    for (const upload of uploads) await writer.deleteRef(upload.ref, { counted: false });
    await writer.deleteRef(m.ref);
  }
  return reads;
}

/** `fn` over `items`, at most `limit` at once; results in the items' order. */
async function mapAtMost<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/** Whether a message names stored objects: images, or a reply's attachments (by `attachmentId`). */
const namesObjects = (message: DocumentData): boolean => imageEntriesOf(message).length > 0 || attachmentIdsOf(message.attachments).length > 0;

/**
 * One conversation: its deliveries, messages, queue and itself. Returns documents read.
 *
 * The three reads go out at once and the writes of the whole visit share the writer's batches (a
 * batch is committed when full, and at the end): about two round trips for a conversation of up to
 * a page of messages, where one read and one commit per kind took six. Crash-safe as before: the
 * conversation's own deletion is the visit's last write, so it is committed with or after
 * everything the visit wrote before it.
 */
async function conversationPass(db: Firestore, store: ImageStore, workspaceId: string, conversation: DocumentSnapshot, days: number | null, now: number, deleteDue: boolean, writer: Writer, stats: RunStats): Promise<number> {
  let newest = millis(conversation.get('lastMessageAt')) ?? millis(conversation.get('createdAt')) ?? now;
  let keep = false;
  let objectMessagesLeft = 0;
  const messagesPage = (after: DocumentSnapshot | undefined) => {
    const query = collectionQuery(db.collection(paths.messages(workspaceId, conversation.id)), QUERIES.messagesById).limit(PAGE);
    return (after === undefined ? query : query.startAfter(after)).get();
  };
  const [deliveries, firstPage, queue] = await Promise.all([
    collectionQuery(db.collection(paths.deliveries(workspaceId)), QUERIES.deliveriesOfConversation, conversation.id).get(),
    messagesPage(undefined),
    db.doc(paths.deliveryQueue(workspaceId, conversation.id)).get(),
  ]);
  let reads = deliveries.size + 1;
  for (const d of deliveries.docs) {
    const unfinished = isUnfinished(d.get('status'));
    keep ||= unfinished;
    await writer.apply(d, unfinished ? null : expiryOf(Number(d.get('createdAt')), days), now, deleteDue);
  }

  // A page's messages that name stored objects and are due: deleted together once the page is read.
  const withObjectsDue: QueryDocumentSnapshot[] = [];
  for (let page = firstPage; ; page = await messagesPage(page.docs.at(-1))) {
    reads += page.size;
    for (const m of page.docs) {
      const createdAt = millis(m.get('createdAt')) ?? now;
      newest = Math.max(newest, createdAt);
      // A reply whose delivery is unfinished (or not created yet) stays while it can still be sent.
      const pendingReply = m.get('direction') === 'outbound' && (m.get('delivery') === undefined || isUnfinished(m.get('delivery.status')));
      keep ||= pendingReply;
      const withObjects = namesObjects(m.data());
      const plan = messagePlan({ createdAt, pendingReply, namesObjects: withObjects }, days, now);
      if (plan.kind === 'deleteWithObjects') withObjectsDue.push(m);
      else {
        if (withObjects) objectMessagesLeft += 1;
        await writer.apply(m, plan.expireAt, now, deleteDue);
      }
    }
    if (withObjectsDue.length > 0) reads += await deleteWithObjects(db, store, workspaceId, withObjectsDue.splice(0), days, now, writer, stats);
    if (page.size < PAGE) break;
  }

  const queueExpiry = keep ? null : expiryOf(newest, days);
  if (queue.exists) await writer.apply(queue, queueExpiry, now, deleteDue);
  if (conversationPlan({ newest, keep, objectMessagesLeft }, days, now).kind === 'delete') await writer.deleteRef(conversation.ref);
  // TTL never deletes a conversation (./retention-plan.ts): a stamp left by an earlier version goes.
  else await writer.apply(conversation, null, now, deleteDue);
  await writer.flush();
  return reads + 1;
}

/**
 * The conversations of one page, `CONVERSATIONS_AT_ONCE` at a time, each with a writer of its own
 * (a batch is not shared between concurrent passes); their counts go to `writer`. Returns the
 * documents read.
 */
async function passConversations(db: Firestore, store: ImageStore, workspaceId: string, conversations: readonly QueryDocumentSnapshot[], days: number | null, now: number, deleteDue: boolean, writer: Writer, stats: RunStats): Promise<number> {
  const reads = await mapAtMost(conversations, CONVERSATIONS_AT_ONCE, async (conversation) => {
    const own = new Writer(db);
    const read = await conversationPass(db, store, workspaceId, conversation, days, now, deleteDue, own, stats);
    writer.count(own);
    return read;
  });
  return reads.reduce((sum, read) => sum + read, 0);
}

/**
 * Runs the workspace's pass from its cursor until `RUN_BUDGET` documents are read or the pass is
 * done. Returns the documents read.
 */
async function workspacePass(db: Firestore, store: ImageStore, workspaceId: string, now: number, deleteDue: boolean, stats: RunStats): Promise<number> {
  const [settings, stateSnap] = await Promise.all([db.doc(paths.retentionSettings(workspaceId)).get(), db.doc(paths.retentionState(workspaceId)).get()]);
  const days = retentionDaysOf(settings.data());
  const state = stateSnap.data() as RetentionState | undefined;
  if (!passDue(state, days, now)) return 2;
  let reads = 2;
  // A period that changed mid-pass restarts the pass, so every document gets the new one.
  const restart = state === undefined || state.appliedDays !== days || state.cursor === null;
  let cursor = restart ? null : state.cursor;
  let phase: RetentionState['phase'] = restart ? 'conversations' : state.phase;
  const writer = new Writer(db);

  while (reads < RUN_BUDGET && phase === 'conversations') {
    let query = collectionQuery(db.collection(paths.conversations(workspaceId)), QUERIES.conversationsById).limit(PAGE);
    if (cursor !== null && cursor !== '') query = query.startAfter(cursor);
    const page = await query.get();
    reads += page.size;
    reads += await passConversations(db, store, workspaceId, page.docs, days, now, deleteDue, writer, stats);
    const lastOfPage = page.docs.at(-1);
    if (lastOfPage !== undefined) cursor = lastOfPage.id;
    if (page.size < PAGE) {
      phase = 'customers';
      cursor = '';
    }
  }
  while (reads < RUN_BUDGET && phase === 'customers') {
    let query = collectionQuery(db.collection(paths.customers(workspaceId)), QUERIES.customersById).limit(PAGE);
    if (cursor !== null && cursor !== '') query = query.startAfter(cursor);
    const page = await query.get();
    reads += page.size;
    for (const customer of page.docs) {
      await writer.apply(customer, expiryOf(millis(customer.get('lastSeenAt')) ?? now, days), now, deleteDue);
      cursor = customer.id;
    }
    await writer.flush();
    if (page.size < PAGE) {
      phase = 'startAddresses';
      cursor = '';
    }
  }
  // The address book of starts: each entry follows the conversation it names (./retention-plan.ts `startAddressExpiry`).
  while (reads < RUN_BUDGET && phase === 'startAddresses') {
    let query = collectionQuery(db.collection(paths.startAddresses(workspaceId)), QUERIES.startAddressesById).limit(PAGE);
    if (cursor !== null && cursor !== '') query = query.startAfter(cursor);
    const page = await query.get();
    const named = [...new Set(page.docs.map((entry) => entry.get('conversationId') as unknown).filter((id): id is string => typeof id === 'string' && id !== ''))];
    const conversations = named.length > 0 ? await db.getAll(...named.map((id) => db.doc(paths.conversation(workspaceId, id)))) : [];
    const existing = new Set(conversations.filter((c) => c.exists).map((c) => c.id));
    reads += page.size + conversations.length;
    for (const entry of page.docs) {
      const conversationExists = existing.has(entry.get('conversationId') as string);
      await writer.apply(entry, startAddressExpiry({ updatedAt: millis(entry.get('updatedAt')) ?? now, conversationExists }, days), now, deleteDue);
      cursor = entry.id;
    }
    await writer.flush();
    if (page.size < PAGE) {
      phase = 'conversationStarts';
      cursor = '';
    }
  }
  // The start requests: their own time (`requestedAt`), like a message.
  while (reads < RUN_BUDGET && phase === 'conversationStarts') {
    let query = collectionQuery(db.collection(paths.conversationStarts(workspaceId)), QUERIES.conversationStartsById).limit(PAGE);
    if (cursor !== null && cursor !== '') query = query.startAfter(cursor);
    const page = await query.get();
    reads += page.size;
    for (const start of page.docs) {
      await writer.apply(start, expiryOf(millis(start.get('requestedAt')) ?? millis(start.get('updatedAt')) ?? now, days), now, deleteDue);
      cursor = start.id;
    }
    await writer.flush();
    if (page.size < PAGE) {
      phase = 'conversations';
      cursor = null;
    }
  }
  stats.stamped += writer.stamped;
  stats.deleted += writer.deleted;
  const finished = phase === 'conversations' && cursor === null;
  const next: RetentionState = {
    appliedDays: days,
    cursor: finished ? null : (cursor ?? ''),
    phase,
    lastPassFinishedAt: finished ? now : (state?.lastPassFinishedAt ?? 0),
    lastPassStartedAt: restart ? now : (state.lastPassStartedAt ?? state.lastPassFinishedAt),
  };
  await db.doc(paths.retentionState(workspaceId)).set(next);
  return reads;
}

/** Documents of each kind `deleteExpiredEphemera` reads per run at most. */
const EPHEMERA_PAGE = 500;

/**
 * Where the job deletes expired documents itself (the emulators, which run no TTL): the typing
 * documents and pending message events whose `expireAt` passed, in every workspace (they have no
 * retention period of their own: their TTL is a minute and 24 hours). Deleting a pending document
 * logs its events as dropped (messages/triggers.ts), as Firestore's TTL deletion does deployed.
 */
async function deleteExpiredEphemera(db: Firestore, now: number, stats: RunStats): Promise<void> {
  for (const spec of [QUERIES.allTyping, QUERIES.allPendingEvents]) {
    const page = await groupQuery(db, spec).limit(EPHEMERA_PAGE).get();
    stats.reads += page.size;
    const due = page.docs.filter((doc) => {
      const expireAt = millis(doc.get('expireAt'));
      return expireAt !== null && expireAt <= now;
    });
    for (let i = 0; i < due.length; i += PAGE) {
      const batch = db.batch();
      for (const doc of due.slice(i, i + PAGE)) batch.delete(doc.ref);
      await batch.commit();
    }
    stats.deleted += due.length;
  }
}

/** Every workspace with a retention setting or state (a removed setting's pass removes the stamps). */
export async function runRetention(db: Firestore, store: ImageStore, options: { now?: number; deleteDue: boolean; workspaceIds?: readonly string[] }): Promise<RunStats> {
  const now = options.now ?? Date.now();
  const stats: RunStats = { workspaces: 0, reads: 0, stamped: 0, deleted: 0, objectsDeleted: 0 };
  let workspaceIds = options.workspaceIds;
  if (workspaceIds === undefined) {
    const settings = await groupQuery(db, QUERIES.allSettings).get();
    stats.reads += settings.size;
    workspaceIds = [...new Set(settings.docs.filter((d) => d.id === 'retention' || d.id === 'retentionState').map((d) => d.ref.parent.parent?.id ?? '').filter((id) => id !== ''))];
  }
  for (const workspaceId of workspaceIds) {
    stats.workspaces += 1;
    stats.reads += await workspacePass(db, store, workspaceId, now, options.deleteDue, stats);
  }
  if (options.deleteDue && options.workspaceIds === undefined) await deleteExpiredEphemera(db, now, stats);
  return stats;
}
