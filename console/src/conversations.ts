/**
 * Conversations: the queue (docs/console.md#the-queue) and, beside it (or instead of it at phone
 * width), the selected conversation's thread (thread.ts). The queue is one query per
 * conversation-list shard under a filter (all, needs reply, failed), merged client-side, or a search
 * (one query by key); each row shows the customer, the last message, badges and this member's
 * unread state (conversation-list-data.ts, conversation-row.ts, read-markers.ts). **New conversation**
 * (`#/conversations/new`) opens the start form (conversation-start.ts) in the thread's pane.
 */
import { type Unsubscribe } from 'firebase/firestore';
import { h, notice, replace } from './dom';
import { describeError } from './errors';
import { allShards, CONVERSATION_LIST_SHARDS } from '../../functions/src/contract';
import { searchKeyOf } from '../../functions/src/contract/conversation-search';
import { byRecency, isUnread, messagePreview, pageTitle, shardWindows } from './format';
import { typingShown } from './lifecycle';
import type { View } from './view';
import type { Session } from './session';
import { threadView } from './thread';
import { conversationStartView } from './conversation-start';
import { CustomerNames, personLabel } from './customers';
import { integrationNames } from './integrations-data';
import { countNeedingReply, orderOf, subscribeLastMessage, subscribeSearch, subscribeShard, type ConversationRow, type QueueFilter } from './conversation-list-data';
import { conversationRow } from './conversation-row';
import { ReadMarkers } from './read-markers';
import { queueNotifications } from './queue-notifications';

/** Conversations shown at first (the first across all shards); "Load older" adds as many again. A search shows at most this many. */
const PAGE = 50;
/** The title's count is asked again at most this often (a count costs a read per 1000 conversations). */
const COUNT_INTERVAL_MS = 10_000;
const SEARCH_DEBOUNCE_MS = 250;
const SHARD_COUNT = allShards(CONVERSATION_LIST_SHARDS).length;
/**
 * A shard's first window, and how much a window grows when it holds rows back (format.ts
 * `shardWindows`): a page of 50 over 8 shards is about 6 per shard; 11 covers the usual spread.
 */
const WINDOW_START = Math.ceil(PAGE / SHARD_COUNT) + 5;
const WINDOW_STEP = Math.ceil(PAGE / SHARD_COUNT);

/** The thread pane's route of the start form: never a conversation id (the service's ids are longer and prefixed). */
const NEW_CONVERSATION = 'new';

const FILTERS: ReadonlyArray<{ filter: QueueFilter; label: string; empty: string }> = [
  { filter: 'all', label: 'All', empty: 'No conversations yet. They appear here when a connector posts the first message.' },
  { filter: 'needs-reply', label: 'Needs reply', empty: 'No conversation needs a reply.' },
  { filter: 'failed', label: 'Failed', empty: 'No conversation has a failed reply.' },
];

export function conversationsView(session: Session): View {
  const list = h('ul', { class: 'conversation-list', id: 'conversation-list', 'aria-label': 'Conversations' });
  const listState = h('div', {}, notice('loading', 'Loading conversations…'));
  const listStatus = h('p', { class: 'muted list-status', id: 'list-status', role: 'status' });
  const older = h('button', { type: 'button', class: 'secondary load-older', id: 'load-older-conversations', hidden: true }, 'Load older conversations');
  const search = h('input', { type: 'search', id: 'conversation-search', 'aria-label': 'Search conversations by customer name, customer id or conversation id', placeholder: 'Search name or id', autocomplete: 'off', spellcheck: 'false' });
  const filterButtons = FILTERS.map(({ filter, label }) => h('button', { type: 'button', class: 'secondary filter', id: `filter-${filter}`, 'data-filter': filter, 'aria-pressed': filter === 'all' ? 'true' : 'false' }, label));
  const notifications = queueNotifications();
  const customers = new CustomerNames(session.services.db, session.workspaceId);
  const integrations = integrationNames(session, () => renderList());
  const markers = new ReadMarkers(session, () => renderList());
  /** Display labels found so far, by `integrationId NUL externalId` (the list re-renders when one arrives). */
  const names = new Map<string, string>();
  const previews = new Map<string, { text: string | undefined; unsubscribe: Unsubscribe }>();
  const threadPane = h('section', { class: 'thread-pane', 'aria-label': 'Conversation' });
  const el = h(
    'div',
    { class: 'conversations' },
    h(
      'section',
      { class: 'list-pane', 'aria-labelledby': 'conversations-title' },
      h('h1', { id: 'conversations-title' }, 'Conversations'),
      h('a', { href: `#/conversations/${NEW_CONVERSATION}`, class: 'button new-conversation', id: 'new-conversation' }, 'New conversation'),
      h('div', { class: 'queue-tools' }, search, h('div', { class: 'filters', role: 'group', 'aria-label': 'Show' }, ...filterButtons), notifications.button),
      listStatus,
      listState,
      list,
      older,
    ),
    threadPane,
  );

  let selected: string | undefined;
  let thread: View | undefined;
  let filter: QueueFilter = 'all';
  let shown = PAGE;
  /** Each shard's rows as last answered, and the window they answered for (undefined: not yet). */
  let shardRows: Array<ConversationRow[] | undefined> = [];
  const answeredLimits: number[] = [];
  const limits: number[] = [];
  const shardUnsubscribers: Unsubscribe[] = [];
  let more = false;
  let searchKey: string | null = null;
  let searchRows: ConversationRow[] | undefined;
  /** Whether the search's rows are the server's answer (until then, what the cache had). */
  let searchAnswered = false;
  let failed: string | undefined;
  let rendered: ConversationRow[] = [];
  let typingShownFor = '';

  const personOf = (row: ConversationRow): string => (row.customerExternalId === undefined ? row.person : (names.get(`${row.integrationId}\u0000${row.customerExternalId}`) ?? row.person));

  function currentRows(): ConversationRow[] | undefined {
    if (searchKey !== null) {
      if (searchRows === undefined) return undefined;
      const kept = searchRows.filter((r) => filter === 'all' || (filter === 'needs-reply' ? r.needsReply : r.failedReplies > 0));
      return kept.sort(filter === 'failed' ? orderOf('failed') : byRecency);
    }
    const answered = shardRows.filter((rows): rows is ConversationRow[] => rows !== undefined);
    if (answered.length < SHARD_COUNT) return undefined;
    const plan = shardWindows(answered, answeredLimits, shown, orderOf(filter));
    more = plan.more;
    // A window being widened is not widened again before it answers.
    for (const k of plan.widen) if (limits[k] === answeredLimits[k]) subscribeShardAt(k, (limits[k] ?? WINDOW_START) + WINDOW_STEP);
    return plan.rows;
  }

  /** The row's customer as the list names them: "Grace Hopper (grace-1)" once the display name is read (CustomerNames reads each once), the id without one. */
  function labelOf(row: ConversationRow): Promise<string> {
    const externalId = row.customerExternalId;
    if (externalId === undefined) return Promise.resolve(row.person);
    return customers.displayName(row.integrationId, externalId).then((name) => personLabel(externalId, name));
  }

  function lookUpNames(rows: readonly ConversationRow[]): void {
    for (const row of rows) {
      if (row.customerExternalId === undefined) continue;
      const key = `${row.integrationId}\u0000${row.customerExternalId}`;
      if (names.has(key)) continue;
      names.set(key, row.customerExternalId);
      void labelOf(row).then((label) => {
        if (label === names.get(key)) return; // no display name: the id stays, nothing to re-render
        names.set(key, label);
        renderList();
      });
    }
  }

  /** One live last-message query per row shown; the rows no longer shown stop theirs. */
  function followPreviews(rows: readonly ConversationRow[]): void {
    const wanted = new Set(rows.map((r) => r.id));
    for (const [id, preview] of previews) {
      if (wanted.has(id)) continue;
      preview.unsubscribe();
      previews.delete(id);
    }
    for (const id of wanted) {
      if (previews.has(id)) continue;
      const entry: { text: string | undefined; unsubscribe: Unsubscribe } = { text: undefined, unsubscribe: () => undefined };
      previews.set(id, entry);
      entry.unsubscribe = subscribeLastMessage(
        session,
        id,
        (message) => {
          entry.text = message === undefined ? '' : messagePreview(message);
          renderList();
        },
        () => {
          entry.text = '';
          renderList();
        },
      );
    }
  }

  function markSelectedRead(rows: readonly ConversationRow[]): void {
    if (selected === undefined || document.hidden) return;
    const row = rows.find((r) => r.id === selected);
    if (row !== undefined && isUnread(row.lastMessageAtMs, markers.readAt(row.id))) markers.markRead(row.id, row.lastMessageAtMs);
  }

  function renderList(): void {
    if (failed) {
      replace(listState, notice('error', failed));
      return;
    }
    const rows = currentRows();
    if (rows === undefined) return;
    rendered = rows;
    older.hidden = searchKey !== null || !more;
    older.disabled = false;
    lookUpNames(rows);
    markers.want(rows.map((r) => r.id));
    followPreviews(rows);
    markSelectedRead(rows);
    const empty = searchKey !== null ? `No conversation matches “${search.value.trim()}”${filter === 'all' ? '' : ' under this filter'}.` : (FILTERS.find((f) => f.filter === filter)?.empty ?? '');
    replace(listState, rows.length === 0 ? notice('empty', empty) : null);
    // Which search the status is about (the browser suite waits for its own search's answer).
    if (searchKey === null) listStatus.removeAttribute('data-search-key');
    else listStatus.dataset.searchKey = searchKey;
    listStatus.textContent =
      searchKey === null
        ? ''
        : !searchAnswered
          ? 'Searching…'
          : searchRows !== undefined && searchRows.length >= PAGE
            ? `The first ${PAGE} matches: type more to narrow the search.`
            : `${rows.length} ${rows.length === 1 ? 'match' : 'matches'}.`;
    const now = Date.now();
    typingShownFor = typingIds(rows, now);
    // Re-rendering replaces the row links: the focused one (keyboard navigation) gets focus back.
    const focused = document.activeElement instanceof HTMLElement && list.contains(document.activeElement) ? document.activeElement.dataset.conversation : undefined;
    replace(
      list,
      ...rows.map((row) =>
        conversationRow(row, {
          person: personOf(row),
          integration: integrations.label(row.integrationId),
          preview: previews.get(row.id)?.text,
          unread: markers.known(row.id) && row.id !== selected && isUnread(row.lastMessageAtMs, markers.readAt(row.id)),
          typing: typingShown(row.typingAtMs, now),
          selected: row.id === selected,
        }),
      ),
    );
    if (focused !== undefined) list.querySelector<HTMLElement>(`a[data-conversation="${CSS.escape(focused)}"]`)?.focus();
  }

  /** Which rows show "Typing…" at `now`, as one comparable string. */
  function typingIds(rows: readonly ConversationRow[], now: number): string {
    return rows.filter((r) => typingShown(r.typingAtMs, now)).map((r) => r.id).join(',');
  }
  // The typing badge goes 8 s after the latest typing event: re-rendered when that changes.
  const ticker = setInterval(() => {
    const now = Date.now();
    if (typingIds(rendered, now) !== typingShownFor) renderList();
  }, 1000);

  // ---------------------------------------------------------------------------------- the shards
  const onListError = (err: unknown): void => {
    failed = describeError(err, 'only members of the workspace may read its conversations');
    renderList();
  };
  function subscribeShardAt(k: number, windowSize: number): void {
    shardUnsubscribers[k]?.();
    limits[k] = windowSize;
    const forFilter = filter;
    shardUnsubscribers[k] = subscribeShard(
      session,
      { filter: forFilter, shard: k, size: windowSize, kind: 'list' },
      (rows) => {
        shardRows[k] = rows;
        answeredLimits[k] = windowSize;
        renderList();
        scheduleCount();
      },
      onListError,
    );
  }
  /** Every shard from its first window (a new filter). */
  function subscribe(): void {
    shardRows = Array.from({ length: SHARD_COUNT }, () => undefined);
    replace(listState, notice('loading', 'Loading conversations…'));
    for (let k = 0; k < SHARD_COUNT; k++) subscribeShardAt(k, WINDOW_START);
  }
  older.addEventListener('click', () => {
    older.disabled = true;
    shown += PAGE;
    renderList(); // widens the windows that hold the next rows back; the rows shown stay
  });
  for (const button of filterButtons) {
    button.addEventListener('click', () => {
      const chosen = button.dataset.filter as QueueFilter;
      if (chosen === filter) return;
      filter = chosen;
      for (const b of filterButtons) b.setAttribute('aria-pressed', b === button ? 'true' : 'false');
      shown = PAGE;
      subscribe();
      renderList(); // a search filters its page at once
    });
  }
  subscribe();

  // ---------------------------------------------------------------------------------- search
  let unsubscribeSearch: Unsubscribe = () => undefined;
  let searchTimer: ReturnType<typeof setTimeout> | undefined;
  function runSearch(): void {
    const key = searchKeyOf(search.value);
    if (key === searchKey) return;
    unsubscribeSearch();
    unsubscribeSearch = () => undefined;
    searchKey = key;
    searchRows = undefined;
    searchAnswered = false;
    if (key === null) {
      renderList();
      return;
    }
    replace(listState, notice('loading', 'Searching…'));
    unsubscribeSearch = subscribeSearch(
      session,
      key,
      PAGE,
      (rows, fromServer) => {
        if (searchKey !== key) return;
        searchRows = rows;
        searchAnswered = fromServer;
        renderList();
      },
      (err) => replace(listState, notice('error', describeError(err, 'only members of the workspace may search its conversations'))),
    );
  }
  search.addEventListener('input', () => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(runSearch, SEARCH_DEBOUNCE_MS);
  });
  search.addEventListener('keydown', (event) => {
    if (event.key !== 'Enter') return;
    clearTimeout(searchTimer);
    runSearch();
  });

  // ------------------------------------------------------------- title count and notifications
  let countTimer: ReturnType<typeof setTimeout> | undefined;
  let lastCountAt = 0;
  function refreshCount(): void {
    countTimer = undefined;
    lastCountAt = Date.now();
    void countNeedingReply(session).then(
      (count) => {
        document.title = pageTitle(count);
      },
      () => undefined, // the list itself says when conversations cannot be read
    );
  }
  function scheduleCount(): void {
    if (countTimer !== undefined) return;
    countTimer = setTimeout(refreshCount, Math.max(0, lastCountAt + COUNT_INTERVAL_MS - Date.now()));
  }
  // The newest conversation of each shard, whatever the list shows: a new customer message moves
  // its conversation to the top of its shard (8 reads once, then one per new message).
  const newestOfShard = new Map<number, number>();
  const watchers = allShards(CONVERSATION_LIST_SHARDS).map((k) =>
    subscribeShard(
      session,
      { filter: 'all', shard: k, size: 1, kind: 'watch' },
      (rows) => {
        const top = rows[0];
        const before = newestOfShard.get(k); // undefined: the shard's first answer (nothing is new yet)
        newestOfShard.set(k, Math.max(before ?? 0, top?.lastMessageAtMs ?? 0));
        if (top === undefined || before === undefined || top.lastMessageAtMs <= before) return;
        scheduleCount();
        if (!top.needsReply) return;
        // Named as the row names the customer (the display name is read first when not known yet).
        void labelOf(top).then((person) => notifications.newMessage(top.id, person, integrations.label(top.integrationId)));
      },
      () => undefined, // the list says when conversations cannot be read
    ),
  );
  const onVisible = (): void => {
    if (!document.hidden) markSelectedRead(rendered);
  };
  document.addEventListener('visibilitychange', onVisible);

  function select(conversationId: string | undefined): void {
    if (conversationId === selected && thread) return;
    thread?.destroy();
    thread = undefined;
    selected = conversationId;
    el.classList.toggle('has-thread', conversationId !== undefined);
    if (conversationId === NEW_CONVERSATION) {
      selected = undefined;
      renderList();
      thread = conversationStartView(session);
      replace(threadPane, thread.el);
      return;
    }
    if (conversationId !== undefined && !rendered.some((r) => r.id === conversationId)) markers.markRead(conversationId, Date.now());
    renderList();
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
      for (const u of [...shardUnsubscribers, ...watchers]) u();
      unsubscribeSearch();
      for (const preview of previews.values()) preview.unsubscribe();
      clearInterval(ticker);
      clearTimeout(searchTimer);
      clearTimeout(countTimer);
      document.removeEventListener('visibilitychange', onVisible);
      document.title = pageTitle(undefined);
    },
  };
}
