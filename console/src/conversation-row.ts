/**
 * One row of the queue (docs/console.md#the-queue): the customer's name as its title, the last
 * message's first line, its time, and badges: unread (for this member), needs a reply, replies that
 * failed, typing. The whole row is the link that opens the thread; its badges are words, not only
 * colours, so they are read out with it.
 */
import { h } from './dom';
import { formatTime } from './format';
import type { ConversationRow } from './conversation-list-data';

/** What a row shows besides the conversation's own fields. */
export interface RowFacts {
  /** The customer's display label ("Grace Hopper (grace-1)"), or their id, or "no customer yet". */
  person: string;
  integration: string;
  /** The last message's preview; undefined while it loads. */
  preview: string | undefined;
  unread: boolean;
  typing: boolean;
  selected: boolean;
}

export function conversationRow(row: ConversationRow, facts: RowFacts): HTMLLIElement {
  const badges = [
    facts.unread ? h('span', { class: 'badge badge-unread' }, 'Unread') : null,
    row.needsReply ? h('span', { class: 'badge badge-needs-reply' }, 'Needs reply') : null,
    row.failedReplies > 0 ? h('span', { class: 'badge badge-failed' }, `${row.failedReplies} failed`) : null,
    facts.typing ? h('span', { class: 'badge badge-typing' }, 'Typing…') : null,
  ].filter((b) => b !== null);
  return h(
    'li',
    {},
    h(
      'a',
      {
        href: `#/conversations/${encodeURIComponent(row.id)}`,
        class: `conversation${facts.unread ? ' unread' : ''}`,
        'data-conversation': row.id,
        'data-needs-reply': row.needsReply ? 'true' : undefined,
        'aria-current': facts.selected ? 'true' : undefined,
      },
      h('span', { class: 'row-head' }, h('span', { class: 'title' }, facts.person), h('time', { class: 'meta', datetime: new Date(row.lastMessageAtMs).toISOString() }, formatTime(row.lastMessageAtMs))),
      h('span', { class: 'preview' }, facts.preview ?? '…'),
      h('span', { class: 'meta where' }, `${row.externalConversationId} · ${facts.integration}`),
      badges.length > 0 ? h('span', { class: 'badges' }, ...badges) : null,
    ),
  );
}
