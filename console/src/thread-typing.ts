/**
 * The customer typing (the service's `typing/{conversationId}`, written on their channel's typing
 * events): shown for 8 s after the latest one (lifecycle.ts typingShown), re-decided by `tick`.
 */
import { h } from './dom';
import { typingShown } from './lifecycle';
import type { ThreadContext } from './thread-context';
import { subscribeTyping, type Typing } from './thread-data';

export interface TypingIndicator {
  el: HTMLElement;
  /** Hides the line once typing went quiet (the thread's ticker calls it every second). */
  tick(): void;
  destroy(): void;
}

export function typingIndicator(ctx: Pick<ThreadContext, 'session' | 'conversationId' | 'now'>): TypingIndicator {
  let typing: Typing | undefined;
  const el = h('p', { class: 'typing muted', id: 'typing', 'aria-live': 'off' });
  function render(): void {
    const shown = typing !== undefined && typingShown(typing.atMs, ctx.now());
    el.hidden = !shown;
    el.textContent = shown ? `${typing?.displayName ?? typing?.senderExternalId ?? 'The customer'} is typing…` : '';
  }
  render();
  const unsubscribe = subscribeTyping(
    ctx.session,
    ctx.conversationId,
    (value) => {
      typing = value;
      render();
    },
    // Typing is a hint: a refused read leaves the indicator off rather than an error on the thread.
    () => {
      typing = undefined;
      render();
    },
  );
  return { el, tick: render, destroy: unsubscribe };
}
