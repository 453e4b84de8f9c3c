/**
 * The conversation list's reads (docs/console.md#the-queue, docs/data-model.md#conversations--conversationsconversationid-service): the
 * list shards under a filter, a search by one key, and a row's last message. Each query is one of
 * functions/src/platform/queries.ts `CONSOLE_QUERIES` (whose indexes are checked there); all are
 * metered (./read-meter.ts).
 */
import { collection, limit, orderBy, query, where, type DocumentData, type Query, type QueryConstraint, type Unsubscribe } from 'firebase/firestore';
import { byFailuresThenRecency, byRecency, conversationPerson, NO_CUSTOMER_YET, timestampMillis, type PreviewSource } from './format';
import { meteredCount, meteredQuery } from './read-meter';
import type { Session } from './session';

/** The queue's filters: every conversation, those whose customer wrote last, those with replies that need attention. */
export type QueueFilter = 'all' | 'needs-reply' | 'failed';

export interface ConversationRow {
  id: string;
  lastMessageAtMs: number;
  externalConversationId: string;
  integrationId: string;
  /** The customer (never an alert bot): see conversationPerson. */
  person: string;
  /** The customer's external id, when there is one (for the display name). */
  customerExternalId: string | undefined;
  needsReply: boolean;
  /** Replies of the conversation that failed or ended unknown (the service's count). */
  failedReplies: number;
  /** The customer's latest typing event (undefined: none known). */
  typingAtMs: number | undefined;
}

const conversationsOf = (session: Session) => collection(session.services.db, 'workspaces', session.workspaceId, 'conversations');

/** The row's thread name: the channel's id, or for a conversation the desk started before the channel named its thread, the address it went to. */
function startedRowName(id: string, data: DocumentData): string {
  const external: unknown = data.externalConversationId;
  if (typeof external === 'string' && external !== '') return external;
  const to: unknown = data.to;
  const value = typeof to === 'object' && to !== null ? (to as { value?: unknown }).value : undefined;
  return typeof value === 'string' && value !== '' ? value : id;
}

/** A conversation document as a row (estimates for server times still pending). */
function rowOf(id: string, data: DocumentData): ConversationRow {
  const failed: unknown = data.failedReplies;
  return {
    id,
    lastMessageAtMs: timestampMillis(data.lastMessageAt) ?? 0,
    externalConversationId: startedRowName(id, data),
    integrationId: String(data.integrationId ?? ''),
    person: conversationPerson(data) ?? NO_CUSTOMER_YET,
    customerExternalId: conversationPerson(data),
    needsReply: data.needsReply === true,
    failedReplies: typeof failed === 'number' && failed > 0 ? failed : 0,
    typingAtMs: timestampMillis(data.typingAt),
  };
}

/** The order of a filter's shard queries, and so of its merged rows. */
export function orderOf(filter: QueueFilter): (a: ConversationRow, b: ConversationRow) => number {
  return filter === 'failed' ? byFailuresThenRecency : byRecency;
}

function shardConstraints(filter: QueueFilter, shard: number): QueryConstraint[] {
  switch (filter) {
    case 'needs-reply': // CONSOLE_QUERIES.conversationsNeedingReplyOfShard
      return [where('listShard', '==', shard), where('needsReply', '==', true), orderBy('lastMessageAt', 'desc')];
    case 'failed': // CONSOLE_QUERIES.conversationsWithFailuresOfShard
      return [where('listShard', '==', shard), where('failedReplies', '>', 0), orderBy('failedReplies', 'desc'), orderBy('lastMessageAt', 'desc')];
    default: // CONSOLE_QUERIES.recentConversationsOfShard
      return [where('listShard', '==', shard), orderBy('lastMessageAt', 'desc')];
  }
}

/**
 * One list shard's first `size` conversations under `filter`, in the filter's order, live.
 * Only the server's answers: the local cache may hold part of a window it never read whole (a
 * narrower window of the same shard), and a short window would look complete to the paging.
 */
export function subscribeShard(
  session: Session,
  window: { filter: QueueFilter; shard: number; size: number; kind: 'list' | 'watch' },
  onRows: (rows: ConversationRow[]) => void,
  onError: (err: unknown) => void,
): Unsubscribe {
  const { filter, shard, size: windowSize, kind } = window;
  return meteredQuery(
    kind,
    query(conversationsOf(session), ...shardConstraints(filter, shard), limit(windowSize)),
    (snap) => {
      if (!snap.metadata.fromCache) onRows(snap.docs.map((d) => rowOf(d.id, d.data({ serverTimestamps: 'estimate' }))));
    },
    onError,
  );
}

/**
 * The conversations whose `searchKeys` hold `key` (CONSOLE_QUERIES.conversationsBySearchKey), at most
 * `pageSize`, live: one query, at most one page of reads. `fromServer`: the server answered (a
 * first answer from the cache may lack conversations it never saw). Unordered by Firestore (an array-contains
 * query with an order would need an index entry per key and time, rewritten on every message);
 * the caller sorts the page.
 */
export function subscribeSearch(session: Session, key: string, pageSize: number, onRows: (rows: ConversationRow[], fromServer: boolean) => void, onError: (err: unknown) => void): Unsubscribe {
  return meteredQuery(
    'search',
    query(conversationsOf(session), where('searchKeys', 'array-contains', key), limit(pageSize)),
    (snap) => onRows(snap.docs.map((d) => rowOf(d.id, d.data({ serverTimestamps: 'estimate' }))), !snap.metadata.fromCache),
    onError,
  );
}

/** How many conversations need a reply (CONSOLE_QUERIES.conversationsNeedingReply), by a count aggregation. */
export function countNeedingReply(session: Session): Promise<number> {
  const q: Query = query(conversationsOf(session), where('needsReply', '==', true));
  return meteredCount('count', q);
}

/** A conversation's last message (either side; CONSOLE_QUERIES.lastMessageOfConversation), live, as a preview's source. */
export function subscribeLastMessage(session: Session, conversationId: string, onMessage: (message: PreviewSource | undefined) => void, onError: (err: unknown) => void): Unsubscribe {
  return meteredQuery(
    'preview',
    query(collection(conversationsOf(session), conversationId, 'messages'), orderBy('createdAt', 'desc'), limit(1)),
    (snap) => {
      const d = snap.docs[0]?.data({ serverTimestamps: 'estimate' });
      onMessage(d === undefined ? undefined : previewSourceOf(d));
    },
    onError,
  );
}

function previewSourceOf(d: DocumentData): PreviewSource {
  const text = typeof d.text === 'string' ? d.text : undefined;
  if (d.direction === 'outbound') {
    return { direction: 'outbound', text, unsent: d.unsent !== undefined, files: Array.isArray(d.attachments) ? d.attachments.length : 0 };
  }
  const edits = Array.isArray(d.edits) ? (d.edits as unknown[]).filter((e): e is { text: string } => typeof (e as { text?: unknown } | null)?.text === 'string') : [];
  return { direction: 'inbound', text, customerEdits: edits, alert: d.kind === 'alert', deleted: d.deleted !== undefined && d.deleted !== null, files: Array.isArray(d.images) ? d.images.length : 0 };
}
