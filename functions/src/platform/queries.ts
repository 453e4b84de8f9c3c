import type { CollectionReference, Firestore, Query, WhereFilterOp } from 'firebase-admin/firestore';

/**
 * Every Firestore query the service runs, declared once. Feature code builds its queries ONLY from
 * these specs (`collectionQuery` / `groupQuery`), and test/unit/platform/queries.test.ts checks each spec
 * against firestore.indexes.json, so a query cannot need an index that is not declared (production
 * Firestore rejects such a query with FAILED_PRECONDITION; the emulator does not, so only this test
 * would notice). `limit` is not part of a spec: it never changes which index a query needs.
 */

type QueryScope = 'COLLECTION' | 'COLLECTION_GROUP';

export interface FilterSpec {
  readonly field: string;
  readonly op: WhereFilterOp;
}

export interface OrderSpec {
  readonly field: string;
  readonly direction: 'asc' | 'desc';
}

export interface QuerySpec {
  /** The collection id (last path segment), as firestore.indexes.json names it (`collectionGroup`). */
  readonly collection: string;
  readonly scope: QueryScope;
  /** Filters in the order they are applied; values are passed in the same order. */
  readonly where: readonly FilterSpec[];
  readonly orderBy: readonly OrderSpec[];
}

const eq = (field: string): FilterSpec => ({ field, op: '==' });
const inList = (field: string): FilterSpec => ({ field, op: 'in' });
const asc = (field: string): OrderSpec => ({ field, direction: 'asc' });
const desc = (field: string): OrderSpec => ({ field, direction: 'desc' });

export const QUERIES = {
  /**
   * deliveries/store.ts: the unfinished deliveries of a conversation (seq below a bound), to
   * rebuild a queue document's map of unfinished deliveries (stored as `pending`) written before the
   * map existed (once per conversation).
   */
  unfinishedOfConversation: {
    collection: 'deliveries',
    scope: 'COLLECTION',
    where: [eq('conversationId'), inList('status'), { field: 'seq', op: '<' }],
    orderBy: [],
  },
  /**
   * deliveries/catch-up-list.ts: the claimable deliveries of one integration, oldest first (the
   * catch-up list), from `deliveryChecks` (claimable deliveries only, so finished ones are never
   * passed over); one index range per integration; `__name__` (the delivery id) breaks ties, for
   * the cursor.
   */
  claimableOfIntegration: {
    collection: 'deliveryChecks',
    scope: 'COLLECTION',
    where: [eq('workspaceId'), eq('integrationId'), eq('listShard'), { field: 'pendingAt', op: '<=' }],
    orderBy: [asc('pendingAt'), asc('__name__')],
  },
  /** deliveries/sweep.ts: overdue notifications of one shard (top-level `outbox`), oldest first. */
  overdueOutboxOfShard: {
    collection: 'outbox',
    scope: 'COLLECTION',
    where: [eq('shard'), { field: 'dueAt', op: '<=' }],
    orderBy: [asc('dueAt')],
  },
  /**
   * deliveries/liveness.ts: due checks (liveness, lease expiry) of one shard, oldest first. The
   * shard leads the index, so the due times of new checks are spread over QUEUE_SHARDS index
   * ranges instead of all landing at the end of one (docs/capacity.md).
   */
  dueChecksOfShard: {
    collection: 'deliveryChecks',
    scope: 'COLLECTION',
    where: [eq('shard'), { field: 'dueAt', op: '<=' }],
    orderBy: [asc('dueAt')],
  },
  /**
   * deliveries/blocked.ts: the claimable deliveries of one shard claimable since before a bound
   * (conversation.blocked, docs/operations.md#operational-events), oldest first.
   */
  blockedChecksOfShard: {
    collection: 'deliveryChecks',
    scope: 'COLLECTION',
    where: [eq('shard'), { field: 'pendingAt', op: '<=' }],
    orderBy: [asc('pendingAt')],
  },
  /**
   * deliveries/health-rollup.ts: count() of an integration's deliveries in one status created since
   * a time (the health window), over a chunk of list shards (`in`, at most 30): the index leads with
   * the integration, the status and the list shard, so new deliveries spread over LIST_SHARDS ranges.
   */
  deliveriesOfStatusSince: {
    collection: 'deliveries',
    scope: 'COLLECTION',
    where: [eq('integrationId'), eq('status'), inList('listShard'), { field: 'createdAt', op: '>=' }],
    orderBy: [],
  },
  /** deliveries/health-rollup.ts: an integration's latest `sent` delivery in one list shard (limit 1). */
  lastSentOfShard: {
    collection: 'deliveries',
    scope: 'COLLECTION',
    where: [eq('integrationId'), eq('listShard')],
    orderBy: [desc('sentAt')],
  },
  /** deliveries/health-rollup.ts: an integration's latest delivery ended with an error in one list shard (limit 1). */
  lastErrorOfShard: {
    collection: 'deliveries',
    scope: 'COLLECTION',
    where: [eq('integrationId'), eq('listShard')],
    orderBy: [desc('errorAt')],
  },
  /** deliveries/health-rollup.ts: every integration of every workspace, a page at a time (document order; no index). */
  allIntegrations: {
    collection: 'integrations',
    scope: 'COLLECTION_GROUP',
    where: [],
    orderBy: [],
  },
  /** deliveries/sequencing.ts: operator replies of a conversation, in reply order (first run). */
  outboundReplies: {
    collection: 'messages',
    scope: 'COLLECTION',
    where: [eq('direction')],
    orderBy: [asc('createdAt')],
  },
  /** deliveries/sequencing.ts: operator replies not older than the last sequenced one. */
  outboundRepliesSince: {
    collection: 'messages',
    scope: 'COLLECTION',
    where: [eq('direction'), { field: 'createdAt', op: '>=' }],
    orderBy: [asc('createdAt')],
  },
  /**
   * deliveries/sequencing.ts: the most recent operator replies at or before the one being
   * sequenced, newest first (a few, with `limit`), read beside the transaction's first reads so
   * that sequencing needs no second read wave when they show everything since the last sequenced
   * reply (the usual case).
   */
  recentOutboundReplies: {
    collection: 'messages',
    scope: 'COLLECTION',
    where: [eq('direction'), { field: 'createdAt', op: '<=' }],
    orderBy: [desc('createdAt')],
  },
  /**
   * privacy/erasure.ts: one customer's messages stored before the erasure started, in any
   * conversation (a page at a time; each page is deleted before the next is read). The cost
   * follows the customer's messages, never the workspace's (docs/privacy.md#cost-per-erased-conversation).
   */
  messagesOfCustomer: {
    collection: 'messages',
    scope: 'COLLECTION_GROUP',
    where: [eq('sender.customerId'), { field: 'createdAt', op: '<=' }],
    orderBy: [],
  },
  /** privacy/erasure.ts: the unfinished deliveries of a conversation (failed `erased` before the cascade). */
  unfinishedDeliveriesOfConversation: {
    collection: 'deliveries',
    scope: 'COLLECTION',
    where: [eq('conversationId'), inList('status')],
    orderBy: [],
  },
  /** privacy/erasure.ts: every delivery of a conversation (a page at a time). */
  deliveriesOfConversation: {
    collection: 'deliveries',
    scope: 'COLLECTION',
    where: [eq('conversationId')],
    orderBy: [],
  },
  /** privacy/erasure.ts: a conversation's messages stored before the erasure started (a page at a time). */
  messagesOfConversationUntil: {
    collection: 'messages',
    scope: 'COLLECTION',
    where: [{ field: 'createdAt', op: '<=' }],
    orderBy: [],
  },
  /** privacy/erasure.ts: a conversation's inbound messages (who wrote there, for conversations stored before `customerIds`). */
  inboundOfConversation: {
    collection: 'messages',
    scope: 'COLLECTION',
    where: [eq('direction')],
    orderBy: [],
  },
  /**
   * privacy/stored-objects.ts: the messages naming one image stored content-addressed per
   * integration (before images had one object per message), by the exact image entry: such an
   * object is removed only when none of them stays.
   */
  messagesNamingImage: {
    collection: 'messages',
    scope: 'COLLECTION_GROUP',
    where: [{ field: 'images', op: 'array-contains' }],
    orderBy: [],
  },
  /**
   * privacy/message-events.ts: the messages holding a reaction of one customer (`reactionCustomerIds`),
   * in every conversation: an erasure removes the customer's reactions from messages that stay.
   */
  messagesWithReactionOf: {
    collection: 'messages',
    scope: 'COLLECTION_GROUP',
    where: [{ field: 'reactionCustomerIds', op: 'array-contains' }],
    orderBy: [],
  },
  /** privacy/message-events.ts: a workspace's pending message events holding an event of one customer. */
  pendingEventsOfCustomer: {
    collection: 'pendingEvents',
    scope: 'COLLECTION',
    where: [{ field: 'customerIds', op: 'array-contains' }],
    orderBy: [],
  },
  /** privacy/message-events.ts: a workspace's typing documents of one sender of one integration. */
  typingOfSender: {
    collection: 'typing',
    scope: 'COLLECTION',
    where: [eq('integrationId'), eq('senderExternalId')],
    orderBy: [],
  },
  /**
   * privacy/erasure.ts, privacy/export.ts: the conversations that list one customer (`customerIds`),
   * including those they never wrote in (a conversation the desk started, joined by its `complete`).
   */
  conversationsListingCustomer: {
    collection: 'conversations',
    scope: 'COLLECTION',
    where: [{ field: 'customerIds', op: 'array-contains' }],
    orderBy: [],
  },
  /** privacy/message-events.ts, privacy/export.ts: the addresses the address book holds for one customer of one integration. */
  startAddressesOfCustomer: {
    collection: 'startAddresses',
    scope: 'COLLECTION',
    where: [eq('integrationId'), eq('externalCustomerId')],
    orderBy: [],
  },
  /** privacy/message-events.ts, privacy/export.ts: the start requests that named one address. */
  startsOfAddress: {
    collection: 'conversationStarts',
    scope: 'COLLECTION',
    where: [eq('integrationId'), eq('to.kind'), eq('to.value')],
    orderBy: [],
  },
  /** privacy/erasure.ts: the upload records of a conversation (used by a reply or not), a page at a time. */
  uploadsOfConversation: {
    collection: 'attachmentUploads',
    scope: 'COLLECTION',
    where: [eq('conversationId')],
    orderBy: [],
  },
  /** privacy/stored-objects.ts: the upload records naming one stored object (it is removed only when none stays). */
  uploadsOfStoragePath: {
    collection: 'attachmentUploads',
    scope: 'COLLECTION',
    where: [eq('storagePath')],
    orderBy: [],
  },
  /** privacy/erasure.ts: the outbox entries of one delivery (deleted with it). */
  outboxOfDelivery: {
    collection: 'outbox',
    scope: 'COLLECTION',
    where: [eq('deliveryId')],
    orderBy: [],
  },
  /**
   * privacy/erasure-list.ts: an integration's finished erasures the connector has not acknowledged,
   * in id order (no time field in the index: docs/capacity.md).
   */
  unacknowledgedErasures: {
    collection: 'erasures',
    scope: 'COLLECTION',
    where: [eq('integrationId'), eq('pendingAck')],
    orderBy: [asc('__name__')],
  },
  /** privacy/retention.ts: a workspace's conversations, a page at a time in id order (the pass's cursor). */
  conversationsById: { collection: 'conversations', scope: 'COLLECTION', where: [], orderBy: [asc('__name__')] },
  /** privacy/retention.ts: a conversation's messages, a page at a time in id order. */
  messagesById: { collection: 'messages', scope: 'COLLECTION', where: [], orderBy: [asc('__name__')] },
  /** privacy/retention.ts: a workspace's customers, a page at a time in id order. */
  customersById: { collection: 'customers', scope: 'COLLECTION', where: [], orderBy: [asc('__name__')] },
  /** privacy/retention.ts: a workspace's address book of starts in id order (the retention pass). */
  startAddressesById: { collection: 'startAddresses', scope: 'COLLECTION', where: [], orderBy: [asc('__name__')] },
  /** privacy/retention.ts: a workspace's start requests in id order (the retention pass). */
  conversationStartsById: { collection: 'conversationStarts', scope: 'COLLECTION', where: [], orderBy: [asc('__name__')] },
  /**
   * privacy/export.ts: every workspace's exports (each lives 7 days, so this is a week of admin
   * requests), read whole by the retention job to find the expired ones: no index on a time field.
   */
  allExports: { collection: 'exports', scope: 'COLLECTION_GROUP', where: [], orderBy: [] },
  /**
   * privacy/retention.ts, only where it deletes expired documents itself (the emulators): every
   * workspace's typing documents and pending message events, a page at a time (their TTL keeps
   * both small: a minute, a day), checked against `expireAt` in memory (`expireAt` has no index).
   */
  allTyping: { collection: 'typing', scope: 'COLLECTION_GROUP', where: [], orderBy: [] },
  allPendingEvents: { collection: 'pendingEvents', scope: 'COLLECTION_GROUP', where: [], orderBy: [] },
  /** privacy/retention.ts: every workspace's settings documents (which workspaces have a retention period). */
  allSettings: { collection: 'settings', scope: 'COLLECTION_GROUP', where: [], orderBy: [] },
  /**
   * console-api/cleanup.ts: uploads no reply took whose 24 hours are over, in every workspace, one
   * shard at a time, oldest first (`cleanupAt` is removed when a reply takes the upload, so used
   * ones are not in the index at all).
   */
  unusedUploadsOfShard: {
    collection: 'attachmentUploads',
    scope: 'COLLECTION_GROUP',
    where: [eq('shard'), { field: 'cleanupAt', op: '<=' }],
    orderBy: [asc('cleanupAt')],
  },
  /** integrations/store.ts: key lookup by the hash of the current key (every workspace). */
  integrationByKeyHash: {
    collection: 'integrations',
    scope: 'COLLECTION_GROUP',
    where: [eq('keyHash')],
    orderBy: [],
  },
  /** integrations/store.ts: key lookup by the hash of the previous key (rotation overlap). */
  integrationByPreviousKeyHash: {
    collection: 'integrations',
    scope: 'COLLECTION_GROUP',
    where: [eq('previousKey.hash')],
    orderBy: [],
  },
} as const satisfies Record<string, QuerySpec>;

/**
 * The queries the workspace console runs with the client SDK under firestore.rules (the console
 * contract, docs/data-model.md). The service never runs them; they are here so that the index
 * checks (test/unit/platform/queries.test.ts, capacity.test.ts) cover them too.
 */
export const CONSOLE_QUERIES = {
  /**
   * The conversation list, most recent first: one query per list shard (LIST_SHARDS), merged by
   * the console, so that a busy workspace's `lastMessageAt` writes spread over that many ranges.
   */
  recentConversationsOfShard: {
    collection: 'conversations',
    scope: 'COLLECTION',
    where: [eq('listShard')],
    orderBy: [desc('lastMessageAt')],
  },
  /** The queue's "needs reply" filter: per list shard like the list, merged the same way (docs/console.md#the-queue). */
  conversationsNeedingReplyOfShard: {
    collection: 'conversations',
    scope: 'COLLECTION',
    where: [eq('listShard'), eq('needsReply')],
    orderBy: [desc('lastMessageAt')],
  },
  /**
   * The queue's "failed" filter: per list shard, the conversations with replies that need attention
   * (`failedReplies > 0`), the most failures first, then the most recent; merged in that order.
   */
  conversationsWithFailuresOfShard: {
    collection: 'conversations',
    scope: 'COLLECTION',
    where: [eq('listShard'), { field: 'failedReplies', op: '>' }],
    orderBy: [desc('failedReplies'), desc('lastMessageAt')],
  },
  /** The page title's count of conversations that need a reply (a count aggregation: one read per 1000 entries). */
  conversationsNeedingReply: {
    collection: 'conversations',
    scope: 'COLLECTION',
    where: [eq('needsReply')],
    orderBy: [],
  },
  /** Search (docs/console.md#search): one key of `searchKeys` (functions/src/contract/conversation-search.ts), one page, no order. */
  conversationsBySearchKey: {
    collection: 'conversations',
    scope: 'COLLECTION',
    where: [{ field: 'searchKeys', op: 'array-contains' }],
    orderBy: [],
  },
  /** A conversation's last message (the queue's row preview): the thread's index, newest first. */
  lastMessageOfConversation: {
    collection: 'messages',
    scope: 'COLLECTION',
    where: [],
    orderBy: [desc('createdAt')],
  },
  /** A conversation's thread, oldest first (per conversation: no partition needed). */
  threadOfConversation: {
    collection: 'messages',
    scope: 'COLLECTION',
    where: [],
    orderBy: [asc('createdAt')],
  },
  /** Privacy's erasure preview (console/src/privacy-data.ts): the conversations that list one customer. */
  conversationsOfCustomer: {
    collection: 'conversations',
    scope: 'COLLECTION',
    where: [{ field: 'customerIds', op: 'array-contains' }],
    orderBy: [],
  },
  /** Privacy's erasure preview: a count of one customer's messages in one conversation. */
  customerMessagesOfConversation: {
    collection: 'messages',
    scope: 'COLLECTION',
    where: [eq('sender.customerId')],
    orderBy: [],
  },
} as const satisfies Record<string, QuerySpec>;

/** One value per filter of the spec, in order (a tuple as long as the spec's `where`). */
type ValuesOf<W> = W extends readonly [] ? [] : W extends readonly [unknown, ...infer Rest] ? [unknown, ...ValuesOf<Rest>] : unknown[];
type Values<S extends QuerySpec> = ValuesOf<S['where']>;

function apply(base: Query, spec: QuerySpec, list: readonly unknown[]): Query {
  if (list.length !== spec.where.length) {
    throw new Error(`query on ${spec.collection}: expected ${spec.where.length} values, got ${list.length}`);
  }
  let query = base;
  spec.where.forEach((filter, i) => {
    query = query.where(filter.field, filter.op, list[i]);
  });
  for (const order of spec.orderBy) query = query.orderBy(order.field, order.direction);
  return query;
}

/** A query of `spec` (scope COLLECTION) on one collection, which must be the spec's collection. */
export function collectionQuery<S extends QuerySpec & { scope: 'COLLECTION' }>(collection: CollectionReference, spec: S, ...values: Values<S>): Query {
  if (collection.id !== spec.collection) throw new Error(`query spec for '${spec.collection}' used on '${collection.id}'`);
  return apply(collection, spec, values);
}

/** A collection-group query of `spec` (scope COLLECTION_GROUP) across every workspace. */
export function groupQuery<S extends QuerySpec & { scope: 'COLLECTION_GROUP' }>(db: Firestore, spec: S, ...values: Values<S>): Query {
  return apply(db.collectionGroup(spec.collection), spec, values);
}
