/**
 * The Conversations view's keyboard shortcuts, as pure decisions (no DOM: the unit tests run
 * without one, test/unit/console/shortcuts.test.ts): which action a key press asks for, given
 * where focus is, and which list row j/k move to. keyboard.ts applies them to the page.
 */

/** What a shortcut does (keyboard.ts): move in the list, focus the composer, leave it, close the thread, show the list of shortcuts. */
export type ShortcutAction = 'next' | 'previous' | 'reply' | 'leave-composer' | 'close-thread' | 'help';

/** Where keyboard focus is when a key is pressed. */
export type FocusPlace =
  /** The thread's reply composer (`#reply-text`). */
  | 'composer'
  /** Any other place that takes text: an input, a textarea, a select, contenteditable. */
  | 'field'
  /** Anywhere else (a link, a button, the page). */
  | 'other';

/** A key press, as keyboard.ts reads it from the event and the page. */
export interface KeyPress {
  /** `KeyboardEvent.key`. */
  key: string;
  ctrlKey: boolean;
  metaKey: boolean;
  altKey: boolean;
  /** An input method is composing (the key belongs to it). */
  isComposing: boolean;
  focus: FocusPlace;
  /** A conversation's thread is open. */
  threadOpen: boolean;
  /** Whether the single-key shortcuts (j, k, r, ?) are on: a user may turn them off (WCAG 2.1.4). */
  characterKeys: boolean;
}

/** The shortcuts as the help dialog and docs/console.md list them: keys, then what they do. */
export const SHORTCUTS: ReadonlyArray<{ keys: readonly string[]; does: string }> = [
  { keys: ['j'], does: 'Next conversation in the list' },
  { keys: ['k'], does: 'Previous conversation in the list' },
  { keys: ['Enter'], does: 'Open the focused conversation' },
  { keys: ['r'], does: 'Reply: focus the open conversation’s composer' },
  { keys: ['Esc'], does: 'In the composer: leave it; elsewhere: close the conversation, back to its row in the list' },
  { keys: ['?'], does: 'Show this list' },
];

/**
 * The action `press` asks for, or undefined when the key is not a shortcut there (the browser
 * then does what it always does). Nothing while a modifier is held (Ctrl/Meta/Alt: the browser's
 * and the system's own shortcuts) or an input method composes. While typing, letters are text:
 * only Esc counts, and only in the composer, where it leaves the composer (a second Esc then
 * closes the thread): Esc in another field is that field's (e.g. an edit form's).
 * Enter is no shortcut: a focused row is a link, which Enter follows natively.
 */
export function shortcutFor(press: KeyPress): ShortcutAction | undefined {
  if (press.ctrlKey || press.metaKey || press.altKey || press.isComposing) return undefined;
  if (press.key === 'Escape') {
    if (press.focus === 'composer') return 'leave-composer';
    if (press.focus === 'field') return undefined;
    return press.threadOpen ? 'close-thread' : undefined;
  }
  if (press.focus !== 'other' || !press.characterKeys) return undefined;
  switch (press.key) {
    case 'j':
      return 'next';
    case 'k':
      return 'previous';
    case 'r':
      return press.threadOpen ? 'reply' : undefined;
    case '?':
      return 'help';
    default:
      return undefined;
  }
}

/**
 * The index of the row j (`step` 1) or k (`step` -1) moves focus to among `count` rows, or
 * undefined when there are none. From the focused row (`focused`, -1 for none) one step, stopping
 * at either end (no wrapping: the end of the list is where the reader expects it). With no row
 * focused, focus lands on the selected (open) conversation's row (`selected`), or the first: the
 * first press puts the reader in the list where they are.
 */
export function stepIndex(focused: number, selected: number, count: number, step: 1 | -1): number | undefined {
  if (count <= 0) return undefined;
  if (focused < 0 || focused >= count) return selected >= 0 && selected < count ? selected : 0;
  return Math.min(count - 1, Math.max(0, focused + step));
}
