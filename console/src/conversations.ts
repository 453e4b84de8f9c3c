/**
 * Conversations: the live list (one query per conversation-list shard, merged client-side,
 * docs/data-model.md) and, beside it (or instead of it at phone width), the selected
 * conversation's thread (thread.ts).
 */
import { collection, limit, onSnapshot, orderBy, query, where, type Unsubscribe } from 'firebase/firestore';
import { h, notice, replace } from './dom';
import { describeError } from './errors';
import { allShards, CONVERSATION_LIST_SHARDS } from '../../functions/src/contract';
import { conversationPerson, formatTime, mergeByRecency, NO_CUSTOMER_YET, olderExist, timestampMillis } from './format';
import type { View } from './view';
import type { Session } from './session';
import { threadView } from './thread';
import { CustomerNames, personLabel } from './customers';
import { integrationNames } from './integrations-data';

/** Conversations shown at first (the most recent across all shards); "Load older" adds as many again. */
const PAGE = 50;

interface Row {
  id: string;
  lastMessageAtMs: number;
  externalConversationId: string;
  integrationId: string;
  /** The customer (never an alert bot): see conversationPerson. */
  person: string;
  /** The customer's external id, when there is one (for the display name). */
  customerExternalId: string | undefined;
}

const millis = (t: unknown): number => timestampMillis(t) ?? 0;

export function conversationsView(session: Session): View {
  const db = session.services.db;
  const base = collection(db, 'workspaces', session.workspaceId, 'conversations');
  const list = h('ul', { class: 'conversation-list', id: 'conversation-list', 'aria-label': 'Conversations, most recent first' });
  const listState = h('div', {}, notice('loading', 'Loading conversations…'));
  const older = h('button', { type: 'button', class: 'secondary load-older', id: 'load-older-conversations', hidden: true }, 'Load older conversations');
  const customers = new CustomerNames(db, session.workspaceId);
  const integrations = integrationNames(session, () => renderList());
  /** Display names found so far, by `integrationId NUL externalId` (the list re-renders when one arrives). */
  const names = new Map<string, string>();
  const threadPane = h('section', { class: 'thread-pane', 'aria-label': 'Conversation' });
  const el = h(
    'div',
    { class: 'conversations' },
    h('section', { class: 'list-pane', 'aria-labelledby': 'conversations-title' }, h('h1', { id: 'conversations-title' }, 'Conversations'), listState, list, older),
    threadPane,
  );

  let selected: string | undefined;
  let thread: View | undefined;
  // Every shard the service writes a conversation's `listShard` in: the contract's count, which no
  // configuration of the service changes (so none of its conversations can be missed here).
  const shardNumbers = allShards(CONVERSATION_LIST_SHARDS);
  const shards: Row[][] = shardNumbers.map(() => []);
  const loaded = new Set<number>();
  let failed: string | undefined;

  function renderList(): void {
    if (failed) {
      replace(listState, notice('error', failed));
      return;
    }
    if (loaded.size < shardNumbers.length) return;
    const rows = mergeByRecency(shards, shown);
    // Older ones exist when the shards hold more than is shown, not only when one shard is full
    // (60 conversations over 8 shards fill none of them).
    older.hidden = !olderExist(shards, shown);
    older.disabled = false;
    for (const row of rows) {
      if (row.customerExternalId === undefined) continue;
      const key = `${row.integrationId}\u0000${row.customerExternalId}`;
      if (names.has(key)) continue;
      names.set(key, row.customerExternalId);
      const externalId = row.customerExternalId;
      void customers.displayName(row.integrationId, externalId).then((name) => {
        if (name === undefined) return;
        names.set(key, personLabel(externalId, name));
        renderList();
      });
    }
    replace(listState, rows.length === 0 ? notice('empty', 'No conversations yet. They appear here when a connector posts the first message.') : null);
    replace(
      list,
      ...rows.map((row) =>
        h(
          'li',
          {},
          h(
            'a',
            { href: `#/conversations/${encodeURIComponent(row.id)}`, class: 'conversation', 'data-conversation': row.id, 'aria-current': row.id === selected ? 'true' : undefined },
            h('span', { class: 'title' }, row.externalConversationId),
            h('span', { class: 'meta person' }, `${row.customerExternalId === undefined ? row.person : (names.get(`${row.integrationId}\u0000${row.customerExternalId}`) ?? row.person)} · ${integrations.label(row.integrationId)}`),
            h('time', { class: 'meta', datetime: new Date(row.lastMessageAtMs).toISOString() }, formatTime(row.lastMessageAtMs)),
          ),
        ),
      ),
    );
  }

  // Paging: each shard's `shown` most recent, merged; "Load older" widens every shard's window
  // (the merged top `shown` is then exact: no conversation of it can be beyond its shard's window).
  let shown = PAGE;
  let unsubscribers: Unsubscribe[] = [];
  function subscribe(): void {
    for (const u of unsubscribers) u();
    unsubscribers = [];
    for (const k of shardNumbers) {
      const q = query(base, where('listShard', '==', k), orderBy('lastMessageAt', 'desc'), limit(shown));
      unsubscribers.push(
        onSnapshot(
          q,
          (snap) => {
            shards[k] = snap.docs.map((d) => {
              const data = d.data({ serverTimestamps: 'estimate' });
              return {
                id: d.id,
                lastMessageAtMs: millis(data.lastMessageAt),
                externalConversationId: String(data.externalConversationId ?? d.id),
                integrationId: String(data.integrationId ?? ''),
                person: conversationPerson(data) ?? NO_CUSTOMER_YET,
                customerExternalId: conversationPerson(data),
              };
            });
            loaded.add(k);
            renderList();
          },
          (err) => {
            failed = describeError(err, 'only members of the workspace may read its conversations');
            renderList();
          },
        ),
      );
    }
  }
  older.addEventListener('click', () => {
    older.disabled = true;
    shown += PAGE;
    subscribe(); // the shards answer from the cache first, then the server: the list never empties
  });
  subscribe();

  function select(conversationId: string | undefined): void {
    if (conversationId === selected && thread) return;
    thread?.destroy();
    thread = undefined;
    selected = conversationId;
    el.classList.toggle('has-thread', conversationId !== undefined);
    for (const a of list.querySelectorAll<HTMLAnchorElement>('a[data-conversation]')) {
      if (a.dataset.conversation === selected) a.setAttribute('aria-current', 'true');
      else a.removeAttribute('aria-current');
    }
    if (conversationId === undefined) {
      replace(threadPane, notice('empty', 'Select a conversation to read it and reply.'));
      return;
    }
    thread = threadView(session, conversationId);
    replace(threadPane, thread.el);
  }

  return {
    el,
    route(parts) {
      select(parts[0]);
    },
    destroy() {
      thread?.destroy();
      integrations.destroy();
      for (const u of unsubscribers) u();
    },
  };
}
