/**
 * Keyboard shortcuts of the Conversations view (docs/console.md#keyboard): j/k move focus through
 * the list's rows, Enter opens one (a link), r focuses the open thread's composer, Esc leaves the
 * composer and then closes the thread (focus back on its row), ? shows them in a dialog. Which key
 * does what is decided in shortcuts.ts (pure, unit-tested); this module reads the page and acts on
 * it. It works on the DOM the views render (`#conversation-list`, `#reply-text`, the hash route),
 * so that the views need no hooks for it.
 *
 * The single-key shortcuts can be turned off in the dialog (remembered in this browser): WCAG
 * 2.1.4, a speech-input user's dictated words must not fire them. Esc is not a character key and
 * stays on.
 */
import { h } from './dom';
import { shortcutFor, SHORTCUTS, stepIndex, type FocusPlace, type ShortcutAction } from './shortcuts';

/** localStorage key of the single-key shortcuts' setting ('off' when turned off). */
const SETTING = 'supportDesk.consoleShortcuts';

export interface KeyboardShortcuts {
  /** The header's "Shortcuts" button (opens the dialog): shown while the shortcuts are active. */
  button: HTMLButtonElement;
  /** Whether the Conversations view is the one shown: the shortcuts act only there. */
  setActive(active: boolean): void;
  destroy(): void;
}

function characterKeysOn(): boolean {
  try {
    return localStorage.getItem(SETTING) !== 'off';
  } catch {
    return true; // storage refused (privacy settings): the default
  }
}

function setCharacterKeys(on: boolean): void {
  try {
    if (on) localStorage.removeItem(SETTING);
    else localStorage.setItem(SETTING, 'off');
  } catch {
    // Storage refused: the setting lasts as long as the checkbox shows it, this page.
  }
}

function focusPlace(el: Element | null): FocusPlace {
  if (!(el instanceof HTMLElement)) return 'other';
  if (el.id === 'reply-text') return 'composer';
  if (el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement || el instanceof HTMLSelectElement || el.isContentEditable) return 'field';
  return 'other';
}

/** The open conversation's id, from the route `#/conversations/<id>`. */
function openConversation(): string | undefined {
  const match = /^#\/?conversations\/([^/]+)/.exec(location.hash);
  return match?.[1] === undefined ? undefined : decodeURIComponent(match[1]);
}

/** The list's rows that can take focus now (at phone width an open thread hides the list). */
function visibleRows(): HTMLAnchorElement[] {
  return [...document.querySelectorAll<HTMLAnchorElement>('#conversation-list a.conversation[data-conversation]')].filter((row) => row.getClientRects().length > 0);
}

function rowOf(conversationId: string): HTMLAnchorElement | null {
  return document.querySelector<HTMLAnchorElement>(`#conversation-list a[data-conversation="${CSS.escape(conversationId)}"]`);
}

/** The dialog listing the shortcuts, with the setting that turns the single-key ones off. */
function helpDialog(settingChanged: (on: boolean) => void): HTMLDialogElement {
  const toggle = h('input', { type: 'checkbox', id: 'shortcuts-on', checked: characterKeysOn() });
  toggle.addEventListener('change', () => settingChanged(toggle.checked));
  const close = h('button', { type: 'button', class: 'secondary' }, 'Close');
  const dialog = h(
    'dialog',
    { class: 'shortcuts-dialog', id: 'shortcuts-dialog', 'aria-labelledby': 'shortcuts-title' },
    h('h2', { id: 'shortcuts-title' }, 'Keyboard shortcuts'),
    h('p', { class: 'muted' }, 'In Conversations, when you are not typing.'),
    h('dl', {}, ...SHORTCUTS.flatMap(({ keys, does }) => [h('dt', {}, ...keys.map((k) => h('kbd', {}, k))), h('dd', {}, does)])),
    h('label', { class: 'checkbox', for: 'shortcuts-on' }, toggle, ' Single-key shortcuts (j, k, r, ?)'),
    h('div', { class: 'row' }, close),
  );
  close.addEventListener('click', () => dialog.close());
  // The checkbox shows the stored setting each time (another tab may have changed it).
  dialog.addEventListener('toggle', () => {
    if (dialog.open) toggle.checked = characterKeysOn();
  });
  return dialog;
}

/**
 * Installs the shortcuts on the page (one keydown listener on the document and the dialog); they
 * act only while `setActive(true)`. `destroy` removes both.
 */
export function keyboardShortcuts(): KeyboardShortcuts {
  let active = false;
  /** Where focus was when the dialog opened: it goes back there when the dialog closes. */
  let opener: HTMLElement | null = null;
  const dialog = helpDialog(setCharacterKeys);
  document.body.append(dialog);
  dialog.addEventListener('close', () => {
    // Chromium restores focus itself; not every browser does, and the opener may be a row the
    // list re-rendered meanwhile (then the same conversation's new row).
    const conversationId = opener?.dataset.conversation;
    if (opener?.isConnected) opener.focus();
    else if (conversationId !== undefined) rowOf(conversationId)?.focus();
    opener = null;
  });
  const button = h('button', { type: 'button', class: 'secondary shortcuts', 'aria-keyshortcuts': '?', hidden: true }, 'Shortcuts');

  function openHelp(): void {
    if (dialog.open) return;
    opener = document.activeElement instanceof HTMLElement && document.activeElement !== document.body ? document.activeElement : null;
    dialog.showModal();
  }
  button.addEventListener('click', openHelp);

  function closeThread(): void {
    const id = openConversation();
    if (id === undefined) return;
    // main.ts's hashchange listener, added before this one, runs first and closes the thread:
    // the list shows again (phone width) and the row can take focus.
    window.addEventListener(
      'hashchange',
      () => {
        (rowOf(id) ?? document.getElementById('main'))?.focus();
      },
      { once: true },
    );
    location.hash = '#/conversations';
  }

  function act(action: ShortcutAction): void {
    switch (action) {
      case 'next':
      case 'previous': {
        const rows = visibleRows();
        const i = stepIndex(
          rows.findIndex((row) => row === document.activeElement),
          rows.findIndex((row) => row.getAttribute('aria-current') === 'true'),
          rows.length,
          action === 'next' ? 1 : -1,
        );
        if (i !== undefined) rows[i]?.focus();
        return;
      }
      case 'reply':
        document.getElementById('reply-text')?.focus();
        return;
      case 'leave-composer':
        // Focus leaves the text for the page; Chromium's next Tab continues from the composer.
        (document.activeElement as HTMLElement | null)?.blur();
        return;
      case 'close-thread':
        closeThread();
        return;
      case 'help':
        openHelp();
        return;
    }
  }

  function onKeydown(event: KeyboardEvent): void {
    // The dialog is modal and handles its own keys (Esc closes it natively).
    if (!active || dialog.open || event.defaultPrevented) return;
    const action = shortcutFor({
      key: event.key,
      ctrlKey: event.ctrlKey,
      metaKey: event.metaKey,
      altKey: event.altKey,
      isComposing: event.isComposing,
      focus: focusPlace(document.activeElement),
      threadOpen: openConversation() !== undefined,
      characterKeys: characterKeysOn(),
    });
    if (action === undefined) return;
    // Handled here, not by the browser: `r` must not type an r into the composer it focuses.
    event.preventDefault();
    act(action);
  }
  document.addEventListener('keydown', onKeydown);

  return {
    button,
    setActive(on) {
      active = on;
      button.hidden = !on;
      if (!on && dialog.open) dialog.close();
    },
    destroy() {
      document.removeEventListener('keydown', onKeydown);
      dialog.remove();
      button.remove();
    },
  };
}
