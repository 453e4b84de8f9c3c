/**
 * The desk CLI's conversation list: the console's query (docs/data-model.md, "The conversation
 * list": one query per list shard, `orderBy('lastMessageAt', 'desc')`, merged by recency), read once,
 * with each conversation's latest message and the status of its latest reply from the thread as the
 * console reads it.
 */
import { collection, getDocs, limit, orderBy, query, where } from 'firebase/firestore';
import type { CustomerNames } from '../src/customers';
import { byRecency, conversationPerson, timestampMillis } from '../src/format';
import type { Session } from '../src/session';
import { groupReactions, shownText, type Reaction } from '../src/lifecycle';
import type { ThreadMessage } from '../src/thread-data';

const reactionsSummary = (reactions: readonly Reaction[]): { reactions?: string } =>
  reactions.length === 0 ? {} : { reactions: groupReactions(reactions).map((g) => `${g.emoji} ${g.count}`).join(' · ') };

/** The latest message as the list shows it (see ConversationRow.lastMessage). */
function lastMessageOf(last: ThreadMessage): NonNullable<ConversationRow['lastMessage']> {
  if (last.direction === 'outbound') {
    const shown = shownText(last);
    return {
      id: last.id,
      from: 'operator',
      text: shown.text,
      files: last.attachments.length,
      atMs: last.createdAtMs ?? null,
      ...(shown.edited ? { edited: true as const } : {}),
      ...(last.unsentAtMs === undefined ? {} : { unsent: true as const }),
      ...reactionsSummary(last.reactions),
    };
  }
  const from = last.alert ? 'alert' : 'customer';
  if (last.deleted !== undefined) return { id: last.id, from, text: '', files: 0, atMs: last.createdAtMs ?? null, deleted: true };
  const latest = last.edits.at(-1);
  return {
    id: last.id,
    from,
    text: latest?.text ?? last.text ?? '',
    files: last.images.length,
    atMs: last.createdAtMs ?? null,
    ...(latest === undefined ? {} : { edited: true as const }),
    ...reactionsSummary(last.reactions),
  };
}

/** One conversation as `conversations` prints it (`--json`: exactly this). */
export interface ConversationRow {
  conversationId: string;
  integrationId: string;
  /** The connector's id of the conversation (its channel's chat, thread or number). */
  externalConversationId: string;
  /** The latest customer (never an alert bot), with the display name the connector gave. */
  customer: { externalId: string; displayName: string | null } | null;
  lastMessageAtMs: number;
  /**
   * The latest message of the thread: a customer's, an alert, or an operator reply, with the text
   * shown now (the latest edit). `edited`, `deleted` (a customer's tombstone: no text), `unsent` and
   * `reactions` ("👍 2 · ❤️ 1") are present only when they apply.
   */
  lastMessage: {
    id: string;
    from: 'customer' | 'alert' | 'operator';
    text: string;
    files: number;
    atMs: number | null;
    edited?: true;
    deleted?: true;
    unsent?: true;
    reactions?: string;
  } | null;
  /** The latest operator reply and its delivery status (`submitted` before the service mirrored one). */
  latestReply: { replyId: string; status: string; errorCode: string | null } | null;
}

/** The workspace's `count` most recent conversations, most recent first. */
export async function listConversations(session: Session, count: number, shards: readonly number[], names: CustomerNames, thread: (conversationId: string) => Promise<ThreadMessage[]>): Promise<ConversationRow[]> {
  const base = collection(session.services.db, 'workspaces', session.workspaceId, 'conversations');
  const perShard = await Promise.all(
    shards.map(async (k) =>
      (await getDocs(query(base, where('listShard', '==', k), orderBy('lastMessageAt', 'desc'), limit(count)))).docs.map((d) => {
        const data = d.data();
        return {
          id: d.id,
          lastMessageAtMs: timestampMillis(data.lastMessageAt) ?? 0,
          integrationId: String(data.integrationId ?? ''),
          externalConversationId: String(data.externalConversationId ?? d.id),
          customerExternalId: conversationPerson(data),
        };
      }),
    ),
  );
  // Each shard's whole first `count`: the merged first `count` is exact.
  const rows = perShard.flat().sort(byRecency).slice(0, count);
  return Promise.all(
    rows.map(async (row): Promise<ConversationRow> => {
      const [messages, displayName] = await Promise.all([thread(row.id), row.customerExternalId === undefined ? Promise.resolve(undefined) : names.displayName(row.integrationId, row.customerExternalId)]);
      const last = messages.at(-1);
      const latestReply = messages.findLast((m) => m.direction === 'outbound');
      return {
        conversationId: row.id,
        integrationId: row.integrationId,
        externalConversationId: row.externalConversationId,
        customer: row.customerExternalId === undefined ? null : { externalId: row.customerExternalId, displayName: displayName ?? null },
        lastMessageAtMs: row.lastMessageAtMs,
        lastMessage: last === undefined ? null : lastMessageOf(last),
        latestReply: latestReply?.direction === 'outbound' ? { replyId: latestReply.id, status: latestReply.delivery?.status ?? 'submitted', errorCode: latestReply.delivery?.errorCode ?? null } : null,
      };
    }),
  );
}
