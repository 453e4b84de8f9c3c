/**
 * A tiny element builder. Text is always set as text (never HTML), so nothing a customer or a
 * connector wrote can become markup.
 */
import { formatTime } from './format';

export type Child = Node | string | number | null | undefined | false;
export type Attrs = Record<string, string | number | boolean | undefined | ((event: Event) => void)>;

/** `h('button', { type: 'button', onclick: f }, 'Send')`; `false`/`undefined` attributes are left out. */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    if (typeof value === 'function') el.addEventListener(name.replace(/^on/, ''), value);
    else if (value === true) el.setAttribute(name, '');
    else el.setAttribute(name, String(value));
  }
  append(el, ...children);
  return el;
}

export function append(parent: Node, ...children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'string' || typeof child === 'number' ? document.createTextNode(String(child)) : child);
  }
}

/** Replaces all children of `parent`. */
export function replace(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, ...children);
}

/** A status line: role="status" for progress, role="alert" for errors. */
export function notice(kind: 'loading' | 'empty' | 'error' | 'info', text: string): HTMLElement {
  return h('p', { class: `notice notice-${kind}`, role: kind === 'error' ? 'alert' : 'status' }, text);
}

/** A `<time>` with a machine-readable value (what the browser tests compare), or a muted dash when unknown. */
export function timeElement(ms: number | undefined): HTMLElement {
  return ms === undefined ? h('span', { class: 'muted' }, '—') : h('time', { datetime: new Date(ms).toISOString() }, formatTime(ms));
}

const announcer = (): HTMLElement | null => document.getElementById('announcer');

/** Says `text` to screen readers through the page's polite live region. */
export function announce(text: string): void {
  const region = announcer();
  if (region) region.textContent = text;
}
