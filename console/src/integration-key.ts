/**
 * A freshly minted integration key, shown once with a copy button: the console stores only its
 * hash (docs/data-model.md, "Integrations"). "Done" (or leaving the view) removes it from the page.
 */
import { h, replace } from './dom';
import type { IssuedKey } from './keys';

export interface KeyPanel {
  el: HTMLElement;
  show(title: string, issued: IssuedKey): void;
  hide(): void;
}

export function keyPanel(): KeyPanel {
  const el = h('div', { id: 'key-panel' });
  const hide = (): void => replace(el);
  function show(title: string, issued: IssuedKey): void {
    const copied = h('span', { class: 'muted', role: 'status' });
    const code = h('code', { id: 'new-key', class: 'key' }, issued.key);
    const copy = h('button', { type: 'button', id: 'copy-key' }, 'Copy key');
    copy.addEventListener('click', () => {
      navigator.clipboard.writeText(code.textContent ?? '').then(
        () => replace(copied, 'Copied.'),
        () => {
          // No clipboard permission (e.g. plain http on another host): select it for Ctrl+C.
          getSelection()?.selectAllChildren(code);
          replace(copied, 'Selected: press Ctrl+C (⌘C) to copy.');
        },
      );
    });
    const done = h('button', { type: 'button', class: 'secondary', onclick: hide }, 'Done, hide the key');
    replace(
      el,
      h(
        'section',
        { class: 'card key-once', 'aria-labelledby': 'key-title' },
        h('h2', { id: 'key-title' }, title),
        h('p', {}, 'Copy this key into your connector now. It is shown only this once: the console stores only its SHA-256 hash, so nobody can show it again (re-key to get a new one).'),
        code,
        h('div', { class: 'row' }, copy, done, copied),
      ),
    );
    copy.focus();
  }
  return { el, show, hide };
}
