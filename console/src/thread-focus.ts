/**
 * A thread's messages are rendered anew on every snapshot, which replaces their elements. What the
 * reader had is kept: keyboard focus (on the same control of the same reply, else the reply
 * itself), the <details> they opened, and the scroll at the bottom when it was there.
 */
import { replace } from './dom';

/** A message (its `data-message`) and, optionally, one of its controls (its `data-focus`). */
export interface FocusTarget {
  message: string;
  control?: string;
}

/** Replaces the items of `messages`; `requested` (a control just used) wins over the focus found there. */
export function replaceKeepingPlace(messages: HTMLElement, items: HTMLElement[], requested: FocusTarget | undefined): void {
  const active = document.activeElement;
  const focusedLi = active instanceof HTMLElement && messages.contains(active) ? active.closest<HTMLElement>('li[data-message]') : null;
  const focused = focusedLi?.dataset.message === undefined ? undefined : { message: focusedLi.dataset.message, control: active instanceof HTMLElement ? active.dataset.focus : undefined };
  const atBottom = messages.scrollHeight - messages.scrollTop - messages.clientHeight < 40;
  // Keep open <details> open across re-renders.
  const open = new Set([...messages.querySelectorAll('li[data-message] details[open]')].map((e) => `${e.closest('li')?.getAttribute('data-message')}:${e.className}`));
  replace(messages, ...items);
  for (const e of messages.querySelectorAll('li[data-message] details')) {
    if (open.has(`${e.closest('li')?.getAttribute('data-message')}:${e.className}`)) e.setAttribute('open', '');
  }
  if (atBottom) messages.scrollTop = messages.scrollHeight;
  const target = requested ?? focused;
  if (target !== undefined) {
    const li = [...messages.querySelectorAll<HTMLElement>('li[data-message]')].find((e) => e.dataset.message === target.message);
    const control = target.control === undefined ? null : li?.querySelector<HTMLElement>(`[data-focus="${target.control}"]`);
    (control ?? li)?.focus({ preventScroll: true });
  }
}
