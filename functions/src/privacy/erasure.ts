/**
 * Erasure of one customer (docs/privacy.md#erasure). An admin writes
 * `workspaces/{ws}/erasures/{id}` = `{ integrationId, externalCustomerId, requestedAt, requestedBy }`;
 * the creation trigger and then a task queue (./triggers.ts) call `runErasureStep` until it
 * answers `done`. Each step is bounded (at most `ERASURE_PAGE` documents read and deleted in one
 * transaction) and keeps its state on the erasure document, so a crash at any point resumes
 * where the last committed step ended:
 *
 *   1. `messages`: the customer's messages stored before the erasure started, a page at a time,
 *      in any conversation. A conversation is classified when first met: the customer is its only
 *      customer (`customerIds`), or not. The unfinished deliveries of a sole-customer conversation
 *      fail `erased` (the delivery transition) before anything of it is deleted.
 *   2. `conversations`: each sole-customer conversation's deliveries (with their check and outbox
 *      entries), its upload records (the reply attachments, used or not, with their objects), its
 *      remaining messages (the operator replies) and then the conversation itself.
 *   2b. `events`: the customer's reactions on messages that stay, their message events still
 *      waiting for a target, and their typing document (./message-events.ts). Their edits and
 *      tombstones went with their messages.
 *   3. `customer`: the customer record; the audit becomes `done`, and with it (in the same
 *      transaction) the `erasure.done` operational event when the workspace has an operations topic.
 *
 * Counting: a page's documents are re-read and deleted in one transaction that also adds what it
 * deleted to `counts`, so a repeated or concurrent step (a redelivered trigger, a retried task)
 * never counts a document twice. Stored objects are deleted before the transaction that deletes
 * the document naming them (an image: its message; an attachment: its upload record, which is what
 * `counts.attachments` counts), and a missing object is not an error (./stored-objects.ts).
 *
 * The race with an incoming message: an erasure deletes what was stored when it started
 * (`startedAt`). A message accepted later (a new eventId) creates the customer again, as any first
 * message does, and is kept, and so is its conversation; a retry of an old eventId is a duplicate
 * (its event record stays: docs/privacy.md#kept) and creates nothing.
 */
import { FieldValue, Timestamp, type DocumentData, type DocumentReference, type Firestore, type QueryDocumentSnapshot, type Transaction } from 'firebase-admin/firestore';
import { paths } from '../platform/paths';
import { customerIdFor, deliveryIdFor, resendChain } from '../platform/ids';
import { storedMirrorOf } from '../deliveries/reply';
import { startMessageId } from '../rules/starts';
import { collectionQuery, groupQuery, QUERIES } from '../platform/queries';
import { UNFINISHED_STATUSES } from '../rules/record';
import { decideErase } from '../rules/state-machine';
import { runTransition } from '../deliveries/transition';
import type { ImageStore } from '../messages/image-store';
import { isValidTopicName } from '../contract';
import { conversationSearchKeys } from '../contract/conversation-search';
import { iso, writeOperationalEvent, type OperationalEvent } from '../platform/operational-events';
import { imageEntriesOf, removeAttachmentObjects, removeImages } from './stored-objects';
import { pendingAddressesOf, removeCustomerEventData } from './message-events';

/** Documents read and deleted per step (one transaction: a page plus at most two writes per delivery). */
const ERASURE_PAGE = 100;
/** How many inbound messages a conversation stored before `customerIds` existed is scanned for other customers. */
const LEGACY_SCAN_LIMIT = 500;

export interface ErasureCounts {
  conversations: number;
  messages: number;
  images: number;
  attachments: number;
  deliveries: number;
}

/** A conversation the erasure met: whether it goes entirely (sole customer) and whether that is done. */
interface ConversationPlan {
  externalConversationId: string;
  sole: boolean;
  done: boolean;
}

type Phase = 'messages' | 'linked' | 'conversations' | 'events' | 'customer' | 'done';

/** The erasure document as the service reads it (the admin's request plus the service's state). */
export interface ErasureDoc {
  integrationId: string;
  externalCustomerId: string;
  status?: 'running' | 'done';
  phase?: Phase;
  startedAt?: number;
  finishedAt?: number;
  counts?: ErasureCounts;
  conversations?: Record<string, ConversationPlan>;
  /** Phase `linked`: the last conversation listing the customer that was classified (a page at a time). */
  linkedCursor?: string;
  /** The cost so far (docs/privacy.md#cost-per-erased-conversation): steps run, documents read. */
  cost?: { steps: number; reads: number };
}

export interface StepResult {
  done: boolean;
  /** Documents deleted by this step (counted once, see above). */
  deleted: number;
  /** Documents read by this step's queries and transactions. */
  reads: number;
  /** What the step deleted (for the crash tests' hooks): a kind of document, or the end. */
  kind?: StepKind;
}

export type StepKind = 'messages' | 'deliveries' | 'uploads' | 'replies' | 'conversation' | 'events' | 'customer' | 'phase';

/** Test seams: a fault injected after a step's commit (the crash-resume tests). */
export interface StepHooks {
  afterCommit?(deleted: number, kind?: StepKind): void;
}

const ZERO: ErasureCounts = { conversations: 0, messages: 0, images: 0, attachments: 0, deliveries: 0 };

const erasureRef = (db: Firestore, workspaceId: string, erasureId: string): DocumentReference => db.doc(paths.erasure(workspaceId, erasureId));

/** Starts the audit (`running`, `startedAt`) unless it is started; answers the state, or null when the document is gone. */
async function begin(db: Firestore, ref: DocumentReference): Promise<ErasureDoc | null> {
  return db.runTransaction(async (tx) => {
    const snap = await tx.get(ref);
    const data = snap.data() as ErasureDoc | undefined;
    if (data === undefined) return null;
    if (data.status !== undefined) return data;
    const started: Partial<ErasureDoc> = { status: 'running', phase: 'messages', startedAt: Date.now(), counts: ZERO, conversations: {}, cost: { steps: 0, reads: 0 } };
    tx.update(ref, started);
    return { ...data, ...started };
  });
}

/** Fails the conversation's unfinished deliveries with `erased` (one delivery transition each). Returns documents read. */
async function eraseUnfinished(db: Firestore, workspaceId: string, conversationId: string): Promise<number> {
  const unfinished = await collectionQuery(db.collection(paths.deliveries(workspaceId)), QUERIES.unfinishedDeliveriesOfConversation, conversationId, [...UNFINISHED_STATUSES]).get();
  for (const doc of unfinished.docs) {
    await runTransition(db, { workspaceId, deliveryId: doc.id, decide: (d, facts) => decideErase(d, { now: facts.now }) });
  }
  return unfinished.size * 2;
}

/** Whether `customerId` is the conversation's only customer. */
async function isSoleCustomer(db: Firestore, workspaceId: string, conversationId: string, conversation: DocumentData | undefined, customerId: string): Promise<{ sole: boolean; reads: number }> {
  const ids: unknown = conversation?.customerIds;
  if (Array.isArray(ids)) return { sole: ids.every((id) => id === customerId), reads: 0 };
  // Stored before conversations listed their customers: look at who wrote there (bounded; a
  // conversation too long to scan is kept, and only the customer's own messages go).
  const inbound = await collectionQuery(db.collection(paths.messages(workspaceId, conversationId)), QUERIES.inboundOfConversation, 'inbound').limit(LEGACY_SCAN_LIMIT).get();
  const others = inbound.docs.some((doc) => {
    const id: unknown = (doc.data().sender as { customerId?: unknown } | undefined)?.customerId;
    return typeof id === 'string' && id !== customerId;
  });
  return { sole: !others && inbound.size < LEGACY_SCAN_LIMIT, reads: inbound.size + 1 };
}

/**
 * Deletes `refs` that still exist, in one transaction with the audit's counts (what `tally` says
 * each deleted document adds) and `extra` writes: counted exactly once however often it runs.
 */
async function deleteCounted(
  db: Firestore,
  ref: DocumentReference,
  refs: readonly DocumentReference[],
  tally: (data: DocumentData) => Partial<ErasureCounts>,
  extra?: (tx: Transaction, existing: number) => void,
): Promise<{ deleted: number; reads: number }> {
  return db.runTransaction(async (tx) => {
    const snaps = refs.length > 0 ? await tx.getAll(...refs) : [];
    const add: ErasureCounts = { ...ZERO };
    let deleted = 0;
    for (const snap of snaps) {
      const data = snap.data();
      if (data === undefined) continue;
      deleted += 1;
      for (const [k, v] of Object.entries(tally(data)) as Array<[keyof ErasureCounts, number]>) add[k] += v;
      tx.delete(snap.ref);
    }
    const update: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(add)) if (v > 0) update[`counts.${k}`] = FieldValue.increment(v);
    extra?.(tx, deleted);
    if (Object.keys(update).length > 0) tx.update(ref, update);
    return { deleted, reads: snaps.length };
  });
}

/** A deleted message counts itself and its images (a reply's attachments are counted by their upload records). */
const messageTally = (data: DocumentData): Partial<ErasureCounts> => ({ messages: 1, images: imageEntriesOf(data).length });

/** Step 1: a page of the customer's own messages (and the conversations they are in). */
async function customerMessagesStep(db: Firestore, store: ImageStore, workspaceId: string, ref: DocumentReference, state: Required<Pick<ErasureDoc, 'startedAt'>> & ErasureDoc): Promise<StepResult> {
  const customerId = customerIdFor(state.integrationId, state.externalCustomerId);
  const page = await groupQuery(db, QUERIES.messagesOfCustomer, customerId, Timestamp.fromMillis(state.startedAt)).limit(ERASURE_PAGE).get();
  let reads = page.size;
  // The customer id hashes the integration id, so only this workspace's integration can match;
  // the prefix check keeps that an invariant rather than an assumption.
  const mine = page.docs.filter((doc) => doc.ref.path.startsWith(`${paths.conversations(workspaceId)}/`));
  if (mine.length === 0) {
    await ref.update({ phase: 'linked' });
    return { done: false, deleted: 0, reads };
  }
  const met = new Map<string, DocumentData | undefined>();
  for (const conversationId of new Set(mine.map((doc) => conversationOf(doc)))) {
    if (state.conversations?.[conversationId] !== undefined) continue;
    met.set(conversationId, (await db.doc(paths.conversation(workspaceId, conversationId)).get()).data());
    reads += 1;
  }
  const classified = await classify(db, workspaceId, state, met);
  reads += classified.reads;
  reads += (await removeImages(db, store, mine)).reads;
  const result = await deleteCounted(db, ref, mine.map((doc) => doc.ref), messageTally, (tx) => classified.write(tx, ref));
  return { done: false, deleted: result.deleted, reads: reads + result.reads, kind: 'messages' };
}

/** What classifying conversations decided: the plans to add, and the writes on the conversations that stay. */
interface Classified {
  reads: number;
  /** Records the new plans on the erasure document and forgets the customer in the shared conversations (in the caller's transaction). */
  write(tx: Transaction, ref: DocumentReference): void;
}

/**
 * Classifies conversations the erasure meets for the first time (`met`: id -> document): the
 * customer is their only customer, or not. A sole-customer conversation's unfinished deliveries
 * fail `erased` at once (nothing of it may be sent any more). A shared one forgets the customer:
 * its search keys when they name them (the console's search keys name the latest customer,
 * ../contract/conversation-search.ts) and its connector metadata (docs/privacy.md#erasure: the
 * merge does not record which customer's message set a key, so any of it may be theirs). The plans
 * and those writes are committed by the caller, with the page that met the conversations.
 */
async function classify(db: Firestore, workspaceId: string, state: ErasureDoc, met: ReadonlyMap<string, DocumentData | undefined>): Promise<Classified> {
  const customerId = customerIdFor(state.integrationId, state.externalCustomerId);
  let reads = 0;
  const added: Record<string, ConversationPlan> = {};
  const forgetSearch = new Map<string, string>();
  const forgetMetadata = new Set<string>();
  for (const [conversationId, conversation] of met) {
    if (state.conversations?.[conversationId] !== undefined) continue;
    const { sole, reads: scanned } = await isSoleCustomer(db, workspaceId, conversationId, conversation, customerId);
    reads += scanned;
    if (sole) reads += await eraseUnfinished(db, workspaceId, conversationId);
    const plan = { externalConversationId: String(conversation?.externalConversationId ?? ''), sole, done: false };
    if (!sole && conversation?.lastCustomerExternalId === state.externalCustomerId) forgetSearch.set(conversationId, plan.externalConversationId);
    if (!sole && conversation?.metadata !== undefined) forgetMetadata.add(conversationId);
    added[conversationId] = plan;
  }
  return {
    reads,
    write(tx, ref) {
      const update: Record<string, unknown> = {};
      for (const [id, plan] of Object.entries(added)) update[`conversations.${id}`] = plan;
      if (Object.keys(update).length > 0) tx.update(ref, update);
      // One update per conversation: its search keys, its metadata, or both.
      for (const id of new Set([...forgetSearch.keys(), ...forgetMetadata])) {
        const externalConversationId = forgetSearch.get(id);
        tx.update(db.doc(paths.conversation(workspaceId, id)), {
          ...(externalConversationId === undefined ? {} : { searchKeys: conversationSearchKeys({ externalConversationId }) }),
          ...(forgetMetadata.has(id) ? { metadata: FieldValue.delete() } : {}),
        });
      }
    },
  };
}

/**
 * Step 1b (`linked`): the conversations of the customer that hold none of their messages, a page at
 * a time (docs/privacy.md#addresses-of-conversations-the-desk-starts):
 *   - every conversation listing them (`customerIds`): a conversation the desk started whose
 *     customer never wrote back lists them from the start's `complete`;
 *   - the started conversations a start to them left behind (`mergedFrom` of those, the ones whose
 *     thread the customer was: `lastSenderExternalId`): they hold the start's `to` and any start to
 *     the address taken before the `complete`; always the customer's alone;
 *   - on the last page, the conversations of starts that never completed to an address whose value
 *     is the requested `externalCustomerId` (an address book entry naming no customer yet).
 * All are classified like the conversations step 1 met (`classify`).
 */
async function linkedStep(db: Firestore, workspaceId: string, ref: DocumentReference, state: ErasureDoc): Promise<StepResult> {
  const customerId = customerIdFor(state.integrationId, state.externalCustomerId);
  const conversations = db.collection(paths.conversations(workspaceId));
  let query = collectionQuery(conversations, QUERIES.conversationsListingCustomer, customerId).limit(ERASURE_PAGE);
  let reads = 0;
  if (state.linkedCursor !== undefined) {
    const cursor = await conversations.doc(state.linkedCursor).get();
    reads += 1;
    // A cursor deleted meanwhile starts the listing again: classifying is idempotent.
    if (cursor.exists) query = query.startAfter(cursor);
  }
  const page = await query.get();
  reads += page.size;
  const met = new Map<string, DocumentData | undefined>();
  for (const doc of page.docs) met.set(doc.id, doc.data());
  const stubIds = [...new Set(page.docs.flatMap((doc) => mergedFromOf(doc.data())))].filter((id) => !met.has(id) && state.conversations?.[id] === undefined);
  const stubs = stubIds.length > 0 ? await db.getAll(...stubIds.map((id) => conversations.doc(id))) : [];
  reads += stubs.length;
  /** A shared thread keeps its operator messages: the erased customer's start address goes from them (docs/privacy.md#addresses-of-conversations-the-desk-starts). */
  const shared: Array<{ conversation: QueryDocumentSnapshot; stub: DocumentData & { id: string } }> = [];
  for (const stub of stubs) {
    if (!stub.exists || stub.get('lastSenderExternalId') !== state.externalCustomerId) continue;
    met.set(stub.id, stub.data());
    for (const target of page.docs) {
      const ids: unknown = target.get('customerIds');
      const soleTarget = Array.isArray(ids) && ids.every((id) => id === customerId);
      if (!soleTarget && mergedFromOf(target.data()).includes(stub.id)) shared.push({ conversation: target, stub: { ...stub.data(), id: stub.id } });
    }
  }
  const last = page.size < ERASURE_PAGE;
  if (last) {
    const pending = await pendingAddressesOf(db, workspaceId, state.integrationId, state.externalCustomerId);
    reads += pending.reads;
    const ids = pending.entries.map((entry) => String(entry.get('conversationId') ?? '')).filter((id) => id !== '' && !met.has(id));
    const started = ids.length > 0 ? await db.getAll(...ids.map((id) => conversations.doc(id))) : [];
    reads += started.length;
    for (const conversation of started) if (conversation.exists) met.set(conversation.id, conversation.data());
  }
  const classified = await classify(db, workspaceId, state, met);
  await db.runTransaction(async (tx) => {
    // Read first (a transaction reads before it writes): a concurrent step may have classified some already; classifying again is harmless.
    await tx.get(ref);
    const forget = await startAddressInSharedThreads(db, tx, workspaceId, state.integrationId, shared);
    classified.write(tx, ref);
    forget(tx);
    tx.update(ref, last ? { phase: 'conversations', linkedCursor: FieldValue.delete() } : { linkedCursor: page.docs.at(-1)?.id ?? '' });
  });
  return { done: false, deleted: 0, reads: reads + classified.reads + 1, kind: 'phase' };
}

/**
 * In a shared thread (other customers wrote there too) the operator messages stay, the start's
 * included, and so do their delivery records; the erased customer's address goes from them: the
 * conversation's `to` (when it is the start's), the start message's `start.to`, the start
 * deliveries' `start.to` and the customer id their `start.thread` names. The start message and its
 * first delivery have ids derived from the start (../rules/starts.ts, ../platform/ids.ts), and so
 * does each resend of a failed start (`resendDeliveryIdFor`, from the delivery it replaces), up to
 * the one the message's mirror names: no query finds any of them. Returns the writes, to run after
 * the transaction's other reads.
 */
async function startAddressInSharedThreads(db: Firestore, tx: Transaction, workspaceId: string, integrationId: string, shared: ReadonlyArray<{ conversation: QueryDocumentSnapshot; stub: DocumentData & { id: string } }>): Promise<(tx: Transaction) => void> {
  if (shared.length === 0) return () => undefined;
  const starts = shared.map(({ conversation, stub }) => {
    const messageId = startMessageId(integrationId, String(stub.startId ?? ''));
    return { conversation, stub, messageRef: db.doc(paths.message(workspaceId, conversation.id, messageId)), firstDeliveryId: deliveryIdFor(stub.id, messageId), messageId };
  });
  const messages = await tx.getAll(...starts.map((s) => s.messageRef));
  // Every delivery of each start: the first, then its resends in order (resends happen in the
  // started conversation, before a `complete` merged it), up to the one the mirror names.
  const deliveryIds = starts.map((s, i) => resendChain(s.stub.id, s.messageId, s.firstDeliveryId, storedMirrorOf(messages[i]?.get('delivery')).deliveryId));
  const deliveries = await tx.getAll(...deliveryIds.flat().map((id) => db.doc(paths.delivery(workspaceId, id))));
  return (write) => {
    starts.forEach(({ conversation, stub }, i) => {
      const to = conversation.get('to') as { kind?: unknown; value?: unknown } | undefined;
      const stubTo = stub.to as { kind?: unknown; value?: unknown } | undefined;
      if (to !== undefined && to !== null && to.kind === stubTo?.kind && to.value === stubTo?.value) write.update(conversation.ref, { to: FieldValue.delete() });
      const message = messages[i];
      if (message?.exists === true && message.get('start.to') !== undefined) write.update(message.ref, { 'start.to': FieldValue.delete() });
    });
    for (const delivery of deliveries) {
      if (delivery.exists && delivery.get('start') !== undefined) write.update(delivery.ref, { 'start.to': FieldValue.delete(), 'start.thread.externalCustomerId': FieldValue.delete() });
    }
  };
}

/** The conversations a started conversation was merged into names it in `mergedFrom`. */
const mergedFromOf = (conversation: DocumentData): string[] => (Array.isArray(conversation.mergedFrom) ? conversation.mergedFrom.filter((id): id is string => typeof id === 'string' && id !== '') : []);

const conversationOf = (doc: QueryDocumentSnapshot): string => doc.ref.parent.parent?.id ?? '';

/** Step 2: one page of a sole-customer conversation (deliveries, then messages, then the conversation). */
async function conversationStep(db: Firestore, store: ImageStore, workspaceId: string, ref: DocumentReference, state: Required<Pick<ErasureDoc, 'startedAt'>> & ErasureDoc): Promise<StepResult> {
  const next = Object.entries(state.conversations ?? {}).find(([, plan]) => plan.sole && !plan.done);
  if (next === undefined) {
    await ref.update({ phase: 'events' });
    return { done: false, deleted: 0, reads: 0 };
  }
  const [conversationId] = next;
  let reads = await eraseUnfinished(db, workspaceId, conversationId);

  const deliveries = await collectionQuery(db.collection(paths.deliveries(workspaceId)), QUERIES.deliveriesOfConversation, conversationId).limit(ERASURE_PAGE).get();
  reads += deliveries.size;
  if (deliveries.size > 0) {
    const outbox: DocumentReference[] = [];
    for (const d of deliveries.docs) {
      const entries = await collectionQuery(db.collection(paths.outbox()), QUERIES.outboxOfDelivery, d.id).get();
      reads += entries.size;
      outbox.push(...entries.docs.map((e) => e.ref));
    }
    const result = await deleteCounted(db, ref, deliveries.docs.map((d) => d.ref), () => ({ deliveries: 1 }), (tx) => {
      for (const d of deliveries.docs) tx.delete(db.doc(paths.deliveryCheck(d.id)));
      for (const entry of outbox) tx.delete(entry);
    });
    return { done: false, deleted: result.deleted, reads: reads + result.reads, kind: 'deliveries' };
  }

  // The conversation's uploads (the replies' attachments, and files uploaded but never sent): each
  // record with its object, counted once as an attachment when its record is deleted. An upload
  // made after the erasure started belongs to a reply that is kept (the race rule); such uploads
  // are few and recent, so a page holding only them ends this part.
  const page = await collectionQuery(db.collection(paths.attachmentUploads(workspaceId)), QUERIES.uploadsOfConversation, conversationId).limit(ERASURE_PAGE).get();
  reads += page.size;
  const uploads = page.docs.filter((u) => !(Number(u.get('createdAt')) > state.startedAt));
  if (uploads.length > 0) {
    reads += (await removeAttachmentObjects(db, store, workspaceId, uploads)).reads;
    const result = await deleteCounted(db, ref, uploads.map((u) => u.ref), () => ({ attachments: 1 }));
    return { done: false, deleted: result.deleted, reads: reads + result.reads, kind: 'uploads' };
  }

  const messages = await collectionQuery(db.collection(paths.messages(workspaceId, conversationId)), QUERIES.messagesOfConversationUntil, Timestamp.fromMillis(state.startedAt)).limit(ERASURE_PAGE).get();
  reads += messages.size;
  if (messages.size > 0) {
    reads += (await removeImages(db, store, messages.docs)).reads;
    const result = await deleteCounted(db, ref, messages.docs.map((m) => m.ref), messageTally);
    return { done: false, deleted: result.deleted, reads: reads + result.reads, kind: 'replies' };
  }

  // The conversation itself, unless a message arrived after the erasure started (then it goes on, with the new customer).
  const conversation = db.doc(paths.conversation(workspaceId, conversationId));
  const deleted = await db.runTransaction(async (tx) => {
    const snap = await tx.get(conversation);
    const lastMessageAt: unknown = snap.data()?.lastMessageAt;
    const continued = lastMessageAt instanceof Timestamp && lastMessageAt.toMillis() > state.startedAt;
    const gone = snap.exists && !continued;
    if (gone) {
      tx.delete(conversation);
      tx.delete(db.doc(paths.deliveryQueue(workspaceId, conversationId)));
    }
    tx.update(ref, { [`conversations.${conversationId}.done`]: true, ...(gone ? { 'counts.conversations': FieldValue.increment(1) } : {}) });
    return gone ? 1 : 0;
  });
  return { done: false, deleted, reads: reads + 1, kind: 'conversation' };
}

/**
 * Step 2b: one page of the customer's message-event data outside their own messages (their
 * reactions on messages that stay, their pending events, their typing document:
 * ./message-events.ts); then the customer step.
 */
async function eventsStep(db: Firestore, workspaceId: string, ref: DocumentReference, state: ErasureDoc): Promise<StepResult> {
  const customerId = customerIdFor(state.integrationId, state.externalCustomerId);
  const page = await removeCustomerEventData(db, workspaceId, { integrationId: state.integrationId, externalCustomerId: state.externalCustomerId, customerId }, ERASURE_PAGE);
  if (page.kind === null) {
    await ref.update({ phase: 'customer' });
    return { done: false, deleted: 0, reads: page.reads };
  }
  return { done: false, deleted: 0, reads: page.reads, kind: 'events' };
}

/**
 * `erasure.done` (docs/operations.md#operational-events) of the erasure `erasureId` of
 * `workspaceId`, finished at `finishedAt` with `counts`. One per erasure: the id names the
 * workspace too, since erasure ids are chosen per workspace and the outbox is shared. No content and
 * no customer identifier: the operations topic is read by tools that keep what they receive.
 */
export function erasureDoneEvent(workspaceId: string, erasureId: string, state: Pick<ErasureDoc, 'integrationId' | 'startedAt'>, counts: ErasureCounts, finishedAt: number): OperationalEvent {
  return {
    eventId: `erasure.done:${workspaceId}:${erasureId}`,
    type: 'erasure.done',
    workspaceId,
    integrationId: state.integrationId,
    at: iso(finishedAt),
    detail: { erasureId, counts, startedAt: state.startedAt === undefined ? null : iso(state.startedAt), finishedAt: iso(finishedAt) },
  };
}

/** Step 3: the customer record (unless it came back after the start), and the audit's end with its event. */
async function finishStep(db: Firestore, workspaceId: string, ref: DocumentReference, state: Required<Pick<ErasureDoc, 'startedAt'>> & ErasureDoc): Promise<StepResult> {
  const customer = db.doc(paths.customer(workspaceId, customerIdFor(state.integrationId, state.externalCustomerId)));
  const deleted = await db.runTransaction(async (tx) => {
    const [erasure, snap, operations] = await tx.getAll(ref, customer, db.doc(paths.operationsSettings(workspaceId)));
    const current = erasure?.data() as ErasureDoc | undefined;
    // Already done (a repeated or concurrent last step): nothing is written, so no second event.
    if (current?.status === 'done') return 0;
    const lastSeenAt: unknown = snap?.data()?.lastSeenAt;
    const cameBack = lastSeenAt instanceof Timestamp && lastSeenAt.toMillis() > state.startedAt;
    const gone = snap?.exists === true && !cameBack;
    if (gone) tx.delete(customer);
    const externalConversationIds = [...new Set(Object.values(state.conversations ?? {}).map((p) => p.externalConversationId).filter((id) => id !== ''))].sort();
    const finishedAt = Date.now();
    // Written with the transition to `done`, through the outbox (published within seconds, at least
    // once); only when the workspace has an operations topic, so that others pay no outbox write.
    const topic: unknown = operations?.get('topic');
    if (typeof topic === 'string' && isValidTopicName(topic)) {
      writeOperationalEvent(tx, db, erasureDoneEvent(workspaceId, ref.id, state, { ...ZERO, ...current?.counts }, finishedAt), finishedAt);
    }
    tx.update(ref, {
      status: 'done',
      phase: 'done',
      finishedAt,
      externalConversationIds,
      // Listed for the connector (POST /v1/erasures/pending) until it acknowledges (privacy/erasure-list.ts).
      pendingAck: true,
    });
    return gone ? 1 : 0;
  });
  return { done: true, deleted, reads: 3, kind: 'customer' };
}

/**
 * One bounded step of the erasure `erasureId`: reads at most about `ERASURE_PAGE` documents and
 * deletes at most that many (plus a delivery's check and outbox entries). `done` once the audit is
 * `done` (or the document is gone). Safe to run twice at once and to repeat after a crash.
 */
async function runErasureStep(db: Firestore, store: ImageStore, workspaceId: string, erasureId: string, hooks: StepHooks = {}): Promise<StepResult> {
  const ref = erasureRef(db, workspaceId, erasureId);
  const state = await begin(db, ref);
  if (state === null || state.status === 'done' || state.startedAt === undefined) return { done: true, deleted: 0, reads: 1 };
  const started = { ...state, startedAt: state.startedAt };
  const phase = state.phase ?? 'messages';
  const result =
    phase === 'messages'
      ? await customerMessagesStep(db, store, workspaceId, ref, started)
      : phase === 'linked'
        ? await linkedStep(db, workspaceId, ref, started)
        : phase === 'conversations'
        ? await conversationStep(db, store, workspaceId, ref, started)
        : phase === 'events'
          ? await eventsStep(db, workspaceId, ref, started)
          : await finishStep(db, workspaceId, ref, started);
  const reads = result.reads + 1;
  // The cost is an estimate for the audit (a concurrent duplicate step adds its own): never content.
  await ref.update({ 'cost.steps': FieldValue.increment(1), 'cost.reads': FieldValue.increment(reads) });
  hooks.afterCommit?.(result.deleted, result.kind ?? 'phase');
  return { ...result, reads };
}

/**
 * Runs steps until the erasure is done or `budgetMs` has passed (a task continues it). Returns
 * whether it is done, with the totals of this run.
 */
export async function runErasure(db: Firestore, store: ImageStore, workspaceId: string, erasureId: string, budgetMs: number, hooks: StepHooks = {}): Promise<StepResult & { steps: number }> {
  const until = Date.now() + budgetMs;
  const total = { done: false, deleted: 0, reads: 0, steps: 0 };
  while (!total.done && Date.now() < until) {
    const step = await runErasureStep(db, store, workspaceId, erasureId, hooks);
    total.done = step.done;
    total.deleted += step.deleted;
    total.reads += step.reads;
    total.steps += 1;
  }
  return total;
}
