/**
 * One conversation: incoming messages and alerts, image metadata (no client access to the image
 * store is granted, docs/data-model.md), the operator replies with their live `delivery` mirror,
 * a compose box, Resend on failed/unknown replies and Cancel send (recall before send) on replies the
 * connector has not started yet, Edit and Unsend after the send, reactions and typing, the channel's
 * reply window (its time left; once closed, only templates), a desk-started conversation waiting
 * for the channel, and a merged conversation followed to its target. This module
 * puts the thread's parts together and renders its messages on every snapshot:
 *
 * - thread-header.ts: the heading, followed live; thread-capability.ts: the integration's
 *   capabilities; thread-paging.ts: the messages and "Load older"; thread-typing.ts: typing;
 * - thread-cards.ts: what a message shows; thread-reply-card.ts: a reply's card with Cancel send
 *   and Resend; thread-lifecycle-forms.ts: Edit and Unsend; thread-composer.ts: the compose box;
 * - thread-announcements.ts: the live region; thread-focus.ts: the reader's place across renders;
 *   thread-rules.ts: the time rules; thread-context.ts: what the parts share.
 *
 * Its Firestore reads and writes are thread-data.ts.
 */
import { announce, h, notice, replace } from './dom';
import { describeError } from './errors';
import { lifecycleText, type LifecycleCapability } from './lifecycle';
import { MediaCache } from './media';
import type { Session } from './session';
import { ReplyAnnouncer } from './thread-announcements';
import { capabilityWatch } from './thread-capability';
import { inboundCard } from './thread-cards';
import { threadComposer, type ComposerMode } from './thread-composer';
import type { ThreadContext } from './thread-context';
import type { ConversationHeader, ThreadMessage } from './thread-data';
import { BottomFollower, replaceKeepingPlace, type FocusTarget } from './thread-focus';
import { threadHeader } from './thread-header';
import { messagePaging } from './thread-paging';
import { replyCards } from './thread-reply-card';
import { timeRulesKey } from './thread-rules';
import { typingIndicator } from './thread-typing';
import type { View } from './view';
import type { IntegrationChannel } from './integration-channel-format';
import { windowState, windowText } from './window-format';
import { templateReplyText } from './template-format';

export function threadView(session: Session, conversationId: string): View {
  const lifecycleLine = h('p', { class: 'muted lifecycle-capability', id: 'lifecycle-capability' });
  const messages = h('ol', { class: 'messages', id: 'messages', 'aria-labelledby': 'thread-title' });
  const follower = new BottomFollower(messages);
  const state = h('div', {}, notice('loading', 'Loading messages…'));
  const composer = threadComposer(session, conversationId);

  /** The integration's `replies.lifecycle` (followed live with its attachments). */
  let lifecycle: LifecycleCapability | undefined;
  /** The reply whose control was just used: keyboard focus goes there at the next render. */
  let focusRequest: FocusTarget | undefined;
  /** Whether the messages were rendered yet: before that there is nothing to re-render, or to announce. */
  let rendered = false;
  /** The latest snapshot's messages: a refused request re-renders them with its error. */
  let lastMessages: ThreadMessage[] = [];
  /** What the time rules decided at the latest render (thread-rules.ts). */
  let shownRules = '';
  /** The conversation (its window, whether it waits for the channel) and its integration's channel, live. */
  let conversation: ConversationHeader | undefined;
  let channel: IntegrationChannel | undefined;
  const windowLine = h('p', { id: 'reply-window', class: 'reply-window', hidden: true });

  const ctx: ThreadContext = {
    session,
    conversationId,
    media: new MediaCache(session),
    now: () => Date.now(),
    lifecycle: () => lifecycle,
    templates: () => channel?.templates ?? [],
    focusAfterRender: (target) => {
      focusRequest = target;
    },
    render: (focus) => {
      if (focus !== undefined) focusRequest = focus;
      render();
    },
  };
  const announcer = new ReplyAnnouncer();
  const replyCard = replyCards(ctx);

  function render(): void {
    shownRules = timeRulesKey(lastMessages, lifecycle, ctx.now());
    const items = lastMessages.map((message) => {
      if (message.direction === 'inbound') return inboundCard(ctx, message);
      // A template reply has no text of its own: it reads as the customer reads it.
      const m = message.template === undefined ? message : { ...message, text: templateReplyText(message.template, ctx.templates()) };
      announcer.observe(m, !rendered);
      return replyCard(m);
    });
    rendered = true;
    replace(state, items.length === 0 ? notice('empty', 'No messages yet.') : null);
    const requested = focusRequest;
    focusRequest = undefined;
    replaceKeepingPlace(messages, items, requested);
    follower.rendered();
  }

  /**
   * The window's line and the composer's mode, from the conversation, its channel and the clock:
   * run on every snapshot of either and every second (the time left ticks; the window closes).
   */
  function updateWindow(): void {
    const state = windowState(channel?.windowSeconds ?? null, { closesAtMs: conversation?.windowClosesAtMs, lastCustomerSentAtMs: conversation?.lastCustomerSentAtMs }, ctx.now());
    const waiting = conversation?.waitingForChannel === true;
    const line = waiting ? 'Waiting for the channel: the message that starts this conversation has not been sent yet.' : windowText(state);
    if (windowLine.dataset.window === state.kind && windowLine.textContent === line) return;
    if (windowLine.dataset.window === 'open' && state.kind === 'closed') announce('The reply window closed: only templates can be sent now.');
    windowLine.textContent = line;
    windowLine.hidden = line === '';
    windowLine.dataset.window = state.kind;
    windowLine.dataset.waiting = String(waiting);
    const mode: ComposerMode = waiting ? { kind: 'waiting' } : state.kind === 'closed' ? { kind: 'templates-only', reason: state.closesAtMs === undefined ? 'The customer has not written yet, so the reply window is closed.' : 'The reply window is closed.' } : { kind: 'free' };
    composer.setMode(mode);
  }

  const capability = capabilityWatch(
    session,
    ({ attachments, lifecycle: lifecycleCapability, channel: declared }) => {
      composer.setCapability(attachments);
      channel = declared;
      composer.setTemplates(declared?.templates ?? []);
      updateWindow();
      lifecycle = lifecycleCapability;
      lifecycleLine.textContent = lifecycleCapability === undefined ? '' : lifecycleText(lifecycleCapability);
      // Before the first messages there is nothing to decide (and rendering would show "No messages yet.").
      if (rendered) render();
    },
    () => {
      composer.hideFiles();
      lifecycle = undefined;
      if (rendered) render();
    },
  );
  const typing = typingIndicator(ctx);
  // The time rules change without a snapshot (a window passes, typing goes quiet): once a second
  // the view compares what they decide now with what it shows, and re-renders when that changed.
  const ticker = setInterval(() => {
    typing.tick();
    updateWindow();
    if (rendered && timeRulesKey(lastMessages, lifecycle, ctx.now()) !== shownRules) render();
  }, 1000);
  const header = threadHeader(session, conversationId, (snapshot) => {
    conversation = snapshot;
    if (snapshot?.mergedInto !== undefined) {
      // A started conversation merged into the one the channel already had: open that one instead
      // (replacing this address in the history, so Back does not bounce here again).
      replace(state, notice('info', 'This conversation was merged into another one: opening it…'));
      location.replace(`#/conversations/${encodeURIComponent(snapshot.mergedInto)}`);
      return;
    }
    capability.watch(snapshot?.integrationId);
    updateWindow();
  });
  const paging = messagePaging(
    session,
    conversationId,
    messages,
    (snapshot) => {
      lastMessages = snapshot;
      render();
    },
    (err) => replace(state, notice('error', describeError(err, 'only members of the workspace may read its messages'))),
  );

  const el = h(
    'div',
    { class: 'thread' },
    h('a', { href: '#/conversations', class: 'back' }, '← All conversations'),
    header.title,
    header.subtitle,
    header.actions,
    lifecycleLine,
    windowLine,
    state,
    paging.older,
    messages,
    follower.newBelow,
    typing.el,
    composer.el,
  );
  return {
    el,
    destroy() {
      header.destroy();
      paging.destroy();
      capability.destroy();
      typing.destroy();
      clearInterval(ticker);
      composer.destroy();
      follower.destroy();
      ctx.media.revokeAll();
    },
  };
}
