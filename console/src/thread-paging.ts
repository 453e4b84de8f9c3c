/**
 * A thread's messages, live: the latest `shown` of the conversation; "Load older" widens the window
 * by THREAD_LIMIT and is offered while the window is full (there may be more), and keeps the reader
 * on the message that was the oldest shown.
 */
import { h } from './dom';
import type { Session } from './session';
import { subscribeMessages, type ThreadMessage } from './thread-data';

/** Messages shown at first: the latest of the conversation; "Load older" adds as many again. */
const THREAD_LIMIT = 200;

export interface MessagePaging {
  /** The "Load older messages" button. */
  older: HTMLButtonElement;
  destroy(): void;
}

export function messagePaging(
  session: Session,
  conversationId: string,
  list: HTMLElement,
  onMessages: (messages: ThreadMessage[]) => void,
  onError: (err: unknown) => void,
): MessagePaging {
  let shown = THREAD_LIMIT;
  let oldest: string | undefined;
  const older = h('button', { type: 'button', class: 'secondary load-older', id: 'load-older', hidden: true }, 'Load older messages');
  let unsubscribe = (): void => undefined;
  function follow(): void {
    unsubscribe();
    unsubscribe = subscribeMessages(
      session,
      conversationId,
      shown,
      (messages) => {
        oldest = messages[0]?.id;
        older.hidden = messages.length < shown;
        older.disabled = false;
        onMessages(messages);
      },
      onError,
    );
  }
  older.addEventListener('click', () => {
    older.disabled = true;
    shown += THREAD_LIMIT;
    const first = oldest;
    follow();
    // Keep the reader where they were: on the message that was the oldest shown.
    requestAnimationFrame(() => list.querySelector<HTMLElement>(`li[data-message="${CSS.escape(first ?? '')}"]`)?.scrollIntoView({ block: 'start' }));
  });
  follow();
  return { older, destroy: () => unsubscribe() };
}
