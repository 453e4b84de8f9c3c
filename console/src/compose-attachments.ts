/**
 * The reply composer's files: the integration's limits shown before choosing, a check of each
 * chosen file against them, one upload per file through `POST /console/v1/attachments` with its
 * progress and the service's error, and the list of uploaded files the reply will carry
 * (docs/console.md#attachments-and-media). Without the capability it shows nothing.
 */
import { shownFileName } from '../../functions/src/contract/file-names';
import { h, replace } from './dom';
import { acceptAttribute, fileProblem, limitsText, type AttachmentCapability, type UploadedAttachment } from './attachments';
import { formatBytes } from './format';
import { uploadAttachment } from './media';
import type { Session } from './session';

interface Entry {
  key: number;
  file: File;
  progress: number;
  uploaded?: UploadedAttachment;
  error?: string;
  abort: AbortController;
}

export interface ComposeAttachments {
  el: HTMLElement;
  setCapability(capability: AttachmentCapability | undefined): void;
  /** The files to send: undefined while one is uploading or failed (the reply must wait or drop it). */
  ready(): UploadedAttachment[] | undefined;
  /** Files chosen (uploading, uploaded or failed). */
  count(): number;
  clear(): void;
  setDisabled(disabled: boolean): void;
}

export function composeAttachments(session: Session, conversationId: string, onChange: () => void): ComposeAttachments {
  let capability: AttachmentCapability | undefined;
  let entries: Entry[] = [];
  let nextKey = 1;
  const input = h('input', { type: 'file', id: 'reply-files', multiple: true, class: 'visually-hidden', 'aria-describedby': 'reply-files-limits' });
  const limits = h('p', { id: 'reply-files-limits', class: 'muted' });
  const list = h('ul', { class: 'attachments-draft', id: 'reply-files-list', 'aria-label': 'Files to send' });
  const problem = h('div', { id: 'reply-files-problem' });
  const el = h('div', { class: 'compose-files', hidden: true }, h('label', { for: 'reply-files', class: 'button secondary' }, 'Attach files'), input, limits, problem, list);

  function render(): void {
    replace(
      list,
      ...entries.map((e) => {
        // Shown as the service will store it: without bidi controls or invisible characters.
        const name = shownFileName(e.file.name);
        return h(
          'li',
          { class: 'draft-file', 'data-file': e.file.name, 'data-state': e.error ? 'error' : e.uploaded ? 'uploaded' : 'uploading' },
          h('span', { class: 'name' }, name),
          h('span', { class: 'muted' }, ` ${formatBytes(e.file.size)} `),
          e.error
            ? h('span', { class: 'error-code', role: 'alert' }, e.error)
            : e.uploaded
              ? h('span', { class: 'badge status-sent' }, 'ready')
              : h('progress', { max: 100, value: Math.round(e.progress * 100), 'aria-label': `Uploading ${name}` }),
          h('button', {
            type: 'button',
            class: 'secondary remove-file',
            'aria-label': `Remove ${name}`,
            onclick: () => {
              e.abort.abort();
              entries = entries.filter((x) => x !== e);
              render();
            },
          }, 'Remove'),
        );
      }),
    );
    onChange();
  }

  function add(file: File): void {
    if (capability === undefined) return;
    const why = fileProblem(file, capability, entries.filter((e) => e.error === undefined).map((e) => e.file.size));
    if (why !== undefined) {
      replace(problem, h('p', { class: 'notice notice-error', role: 'alert' }, why));
      return;
    }
    const entry: Entry = { key: nextKey++, file, progress: 0, abort: new AbortController() };
    entries.push(entry);
    uploadAttachment(session, conversationId, file, (fraction) => {
      entry.progress = fraction;
      const bar = list.querySelector<HTMLProgressElement>(`li:nth-child(${entries.indexOf(entry) + 1}) progress`);
      if (bar) bar.value = Math.round(fraction * 100);
    }, entry.abort.signal).then(
      (uploaded) => {
        entry.uploaded = uploaded;
        render();
      },
      (err: unknown) => {
        if (entry.abort.signal.aborted) return;
        entry.error = err instanceof Error ? err.message : String(err);
        render();
      },
    );
  }

  input.addEventListener('change', () => {
    replace(problem);
    for (const file of input.files ?? []) add(file);
    input.value = '';
    render();
  });

  return {
    el,
    setCapability(c) {
      capability = c;
      el.hidden = c === undefined;
      if (c !== undefined) {
        input.setAttribute('accept', acceptAttribute(c));
        limits.textContent = `Files: ${limitsText(c)}`;
      }
    },
    ready() {
      if (entries.some((e) => e.uploaded === undefined)) return undefined;
      return entries.map((e) => e.uploaded as UploadedAttachment);
    },
    count: () => entries.length,
    clear() {
      for (const e of entries) e.abort.abort();
      entries = [];
      replace(problem);
      render();
    },
    setDisabled(disabled) {
      input.disabled = disabled;
    },
  };
}
