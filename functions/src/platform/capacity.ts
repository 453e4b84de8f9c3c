/**
 * The capacity catalogue (docs/capacity.md): every collection the service or the console writes,
 * how it is partitioned, and its monotonically increasing fields (times, due times, sequence
 * numbers). Nothing at run time imports this: test/unit/platform/capacity.test.ts checks
 * firestore.indexes.json and the query catalogue (./queries.ts) against it:
 *  - an index that orders on a monotonic field must lead with a partition field (a shard, or a
 *    finer partition than the collection's own: see `PARTITION_FIELDS`);
 *  - a monotonic field no query orders on must be exempt from single-field indexing.
 * Firestore sustains about 500 writes/s on one range of an index over such a field, so an
 * unpartitioned index on it is a ceiling for everyone who writes the collection.
 */

/**
 * How far a collection's own path already partitions it: `project` (one top-level collection),
 * `workspace` (a collection per workspace: its indexes are per tenant), `conversation` (a
 * collection per conversation: per conversation, whose write rate is a person's).
 */
export type Partition = 'project' | 'workspace' | 'conversation';

export interface CollectionCapacity {
  partition: Partition;
  /** Fields whose values grow with time (dotted paths; a map's subfields listed one by one). */
  monotonic: readonly string[];
}

export const COLLECTIONS = {
  workspaces: { partition: 'project', monotonic: [] },
  members: { partition: 'workspace', monotonic: [] },
  integrations: { partition: 'workspace', monotonic: ['createdAt', 'updatedAt', 'replies.topicCheckedAt', 'previousKey.expiresAt'] },
  events: { partition: 'workspace', monotonic: ['createdAt', 'expireAt'] },
  customers: { partition: 'workspace', monotonic: ['createdAt', 'updatedAt', 'lastSeenAt', 'expireAt'] },
  conversations: { partition: 'workspace', monotonic: ['createdAt', 'updatedAt', 'lastMessageAt', 'expireAt'] },
  messages: { partition: 'conversation', monotonic: ['createdAt', 'delivery.updatedAt', 'resend.requestedAt', 'cancel.requestedAt', 'expireAt', 'deleted.at'] },
  deliveries: {
    partition: 'workspace',
    monotonic: [
      'createdAt',
      'updatedAt',
      'notBefore',
      'pendingAt',
      'lease.expiresAt',
      'lease.claimedAt',
      'liveness.checkAt',
      'liveness.expiresAt',
      'receipt.at',
      'attemptLog',
      'previous.updatedAt',
      'cancel.requestedAt',
      'cancel.at',
      'sentAt',
      'errorAt',
      'expireAt',
    ],
  },
  integrationHealth: { partition: 'workspace', monotonic: ['computedAt', 'windowStartAt', 'oldestClaimable.since', 'lastSent.at', 'lastError.at'] },
  deliveryQueues: { partition: 'workspace', monotonic: ['lastReplyAt', 'updatedAt', 'expireAt'] },
  // One document per upload (random id); the unused-upload cleanup finds due ones by `shard` + `cleanupAt`.
  attachmentUploads: { partition: 'workspace', monotonic: ['createdAt', 'cleanupAt'] },
  // Privacy (docs/privacy.md): a few admin requests per workspace.
  erasures: { partition: 'workspace', monotonic: ['requestedAt', 'startedAt', 'finishedAt', 'acknowledgedAt'] },
  exports: { partition: 'workspace', monotonic: ['requestedAt', 'startedAt', 'finishedAt', 'fileExpiresAt', 'expireAt'] },
  outbox: { partition: 'project', monotonic: ['dueAt', 'createdAt', 'nextAttemptAt'] },
  deliveryChecks: { partition: 'project', monotonic: ['dueAt', 'pendingAt'] },
  // Message events (docs/contract.md#message-events): one document per waiting target, per typing
  // conversation, per provider id of a sent reply; read by id (the erasure queries by customer).
  pendingEvents: { partition: 'workspace', monotonic: ['updatedAt', 'expireAt'] },
  typing: { partition: 'workspace', monotonic: ['at', 'expireAt'] },
  providerMessages: { partition: 'workspace', monotonic: ['createdAt'] },
  // Conversations the desk starts (docs/contract.md#conversations-the-desk-starts): a member's request
  // each (a person's rate), one address book entry per address; read by id (the privacy jobs query by address and customer).
  conversationStarts: { partition: 'workspace', monotonic: ['requestedAt', 'updatedAt'] },
  startAddresses: { partition: 'workspace', monotonic: ['updatedAt'] },
  /** workspaces/{ws}/settings/{retention,operations}: a document each per workspace, written by its admins (and, for operations, after a failed event publish). */
  settings: { partition: 'workspace', monotonic: [] },
} as const satisfies Record<string, CollectionCapacity>;

/**
 * The equality fields that partition an index finer than its collection's path: shards (whose
 * count is configuration), and in a per-workspace collection also a conversation. A tenant alone
 * is not enough: one workspace may write 1,000 deliveries/s (docs/capacity.md). An index on a
 * monotonic field must have one of these before it.
 */
export const PARTITION_FIELDS: Record<Partition, readonly string[]> = {
  project: ['shard', 'listShard'],
  workspace: ['shard', 'listShard', 'conversationId'],
  conversation: [],
};
