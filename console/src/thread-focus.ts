/**
 * A thread's messages are rendered anew on every snapshot, which replaces their elements. What the
 * reader had is kept: keyboard focus (on the same control of the same reply, else the reply
 * itself), the <details> they opened, and the place at the bottom while they are there
 * (`BottomFollower`, also while images load).
 */
import { h, replace } from './dom';

/** Pixels from the bottom that still count as "at the bottom". */
const AT_BOTTOM_PX = 40;

/**
 * Keeps the thread at its newest message while the reader is there: after each render, and as
 * images load and grow the list (a render scrolls before its thumbnails arrive). A reader who
 * scrolled up stays where they are, and a newer last message then shows "New messages below".
 */
export class BottomFollower {
  /** The "New messages below" button (placed under the list by the thread). */
  readonly newBelow: HTMLElement;
  #following = true;
  #lastMessage: string | undefined;
  /** Where `#toBottom` last put the list (its own scroll events are not the reader's). */
  #scrolledTo = -1;
  readonly #resize: ResizeObserver;

  constructor(private readonly list: HTMLElement) {
    this.newBelow = h('button', { type: 'button', class: 'secondary new-below', id: 'new-messages-below', hidden: true, onclick: () => this.#toBottom() }, 'New messages below');
    list.addEventListener('scroll', () => {
      // Our own scroll to the bottom is reported later (at the next frame), when an image may
      // already have grown the list: it says nothing about where the reader wants to be.
      if (this.list.scrollTop === this.#scrolledTo) return;
      this.#following = this.#atBottom();
      if (this.#following) this.newBelow.hidden = true;
    });
    // `load` does not bubble: captured here for every image inside the list.
    list.addEventListener('load', () => {
      if (this.#following) this.#toBottom();
    }, true);
    // The list's own height changes too (beside the list, the thread pane gives the messages the
    // room the header and the composer leave, and those change as their data arrives).
    this.#resize = new ResizeObserver(() => {
      if (this.#following) this.#toBottom();
    });
    this.#resize.observe(list);
  }

  /** Stops following (the thread closed). */
  destroy(): void {
    this.#resize.disconnect();
  }

  /** After a render: to the bottom when following; else a note when the last message is new. */
  rendered(): void {
    const last = this.list.querySelector<HTMLElement>('li[data-message]:last-of-type')?.dataset.message;
    if (this.#following) this.#toBottom();
    else if (last !== undefined && last !== this.#lastMessage) this.newBelow.hidden = false;
    this.#lastMessage = last;
  }

  #atBottom(): boolean {
    return this.list.scrollHeight - this.list.scrollTop - this.list.clientHeight < AT_BOTTOM_PX;
  }

  #toBottom(): void {
    this.list.scrollTop = this.list.scrollHeight;
    this.#scrolledTo = this.list.scrollTop;
    this.#following = true;
    this.newBelow.hidden = true;
  }
}

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
  // Keep open <details> open across re-renders.
  const open = new Set([...messages.querySelectorAll('li[data-message] details[open]')].map((e) => `${e.closest('li')?.getAttribute('data-message')}:${e.className}`));
  replace(messages, ...items);
  for (const e of messages.querySelectorAll('li[data-message] details')) {
    if (open.has(`${e.closest('li')?.getAttribute('data-message')}:${e.className}`)) e.setAttribute('open', '');
  }
  const target = requested ?? focused;
  if (target !== undefined) {
    const li = [...messages.querySelectorAll<HTMLElement>('li[data-message]')].find((e) => e.dataset.message === target.message);
    const control = target.control === undefined ? null : li?.querySelector<HTMLElement>(`[data-focus="${target.control}"]`);
    (control ?? li)?.focus({ preventScroll: true });
  }
}
