/**
 * A thread's compose box: the reply's text, 1..REPLY_MAX_CODE_POINTS code points counted as the
 * rules count them, the files it carries (compose-attachments.ts), Send reply (or Ctrl+Enter), and
 * the refusal's reason; below it, when the channel declared templates, **Send a template**
 * (template-picker.ts). Its mode follows the window and the conversation: free text (no window, or
 * an open one), templates only (the window is closed: free text is disabled with the reason), or
 * nothing (a desk-started conversation waiting for the channel to send its first message).
 */
import { h, notice, replace } from './dom';
import { describeError } from './errors';
import { codePointLength, REPLY_MAX_CODE_POINTS } from '../../functions/src/contract';
import type { AttachmentCapability } from './attachments';
import { composeAttachments } from './compose-attachments';
import { replyProblem } from './format';
import type { Session } from './session';
import type { ChannelTemplateView } from './integration-channel-format';
import { templatePicker } from './template-picker';
import { sendReply, sendTemplateReply } from './thread-data';

/** What the composer offers now (thread.ts decides from the window and the conversation). */
export type ComposerMode =
  | { kind: 'free' }
  /** The window is closed: only a template may go out; `reason` says why free text is off. */
  | { kind: 'templates-only'; reason: string }
  /** A desk-started conversation whose first message the channel has not sent: nothing may go out yet. */
  | { kind: 'waiting' };

export interface ThreadComposer {
  el: HTMLElement;
  /** Free text, templates only, or nothing yet (the same mode again changes nothing). */
  setMode(mode: ComposerMode): void;
  /** The channel's templates (none: no template section). */
  setTemplates(templates: readonly ChannelTemplateView[]): void;
  /** The integration's `replies.attachments`: which files a reply may carry (none without it). */
  setCapability(capability: AttachmentCapability | undefined): void;
  /** The capability could not be read: no files (the send button is left as it is). */
  hideFiles(): void;
  destroy(): void;
}

export function threadComposer(session: Session, conversationId: string): ThreadComposer {
  const text = h('textarea', { id: 'reply-text', name: 'text', rows: 3, 'aria-describedby': 'reply-counter reply-hint' });
  const counter = h('span', { id: 'reply-counter', class: 'muted' }, `0 / ${REPLY_MAX_CODE_POINTS}`);
  const send = h('button', { type: 'submit', id: 'send-reply', disabled: true }, 'Send reply');
  const composeError = h('div', { id: 'compose-error' });
  const note = h('p', { id: 'compose-note', class: 'notice notice-info', role: 'status', hidden: true });
  let mode: ComposerMode = { kind: 'free' };
  let templateCount = 0;
  const templates = templateForm(session, conversationId);
  const files = composeAttachments(session, conversationId, () => updateCounter());
  const form = h(
    'form',
    { class: 'compose', 'aria-label': 'Compose a reply' },
    h('label', { for: 'reply-text' }, 'Reply'),
    note,
    text,
    files.el,
    h('div', { class: 'row' }, counter, h('span', { id: 'reply-hint', class: 'muted' }, 'Ctrl+Enter sends'), send),
    composeError,
  );
  function updateCounter(): void {
    const n = codePointLength(text.value);
    counter.textContent = `${n} / ${REPLY_MAX_CODE_POINTS}`;
    counter.classList.toggle('over', n > REPLY_MAX_CODE_POINTS);
    send.disabled = mode.kind !== 'free' || replyProblem(text.value, files.count()) !== undefined || files.ready() === undefined;
  }
  /** Shows what the mode allows: free text with the templates folded, templates only (open), or neither. */
  function applyMode(): void {
    const free = mode.kind === 'free';
    text.disabled = !free;
    files.setDisabled(!free);
    note.hidden = free;
    note.textContent = mode.kind === 'templates-only' ? `${mode.reason} Free text is off; send a template below.` : mode.kind === 'waiting' ? 'Waiting for the channel: it has not sent the message that started this conversation yet. Replies can follow once it has.' : '';
    text.setAttribute('aria-describedby', free ? 'reply-counter reply-hint' : 'compose-note');
    templates.el.hidden = mode.kind === 'waiting' || (templateCount === 0 && free);
    templates.setOpen(mode.kind === 'templates-only');
    updateCounter();
  }
  text.addEventListener('input', updateCounter);
  text.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      form.requestSubmit();
    }
  });
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const attachments = files.ready();
    if (mode.kind !== 'free') return;
    const problem = attachments === undefined ? 'Wait for the files to upload, or remove the ones that failed.' : replyProblem(text.value, attachments.length);
    if (problem) {
      replace(composeError, notice('error', problem));
      return;
    }
    const value = text.value;
    send.disabled = true;
    text.readOnly = true;
    files.setDisabled(true);
    replace(composeError, notice('loading', 'Sending…'));
    sendReply(session, conversationId, value, attachments).then(
      () => {
        text.readOnly = false;
        files.setDisabled(false);
        files.clear();
        text.value = '';
        updateCounter();
        replace(composeError);
        text.focus();
      },
      (err: unknown) => {
        text.readOnly = false;
        files.setDisabled(false);
        updateCounter();
        replace(composeError, notice('error', describeError(err, `replies must be 1 to ${REPLY_MAX_CODE_POINTS} characters (or empty with files), written by a member of the workspace in an existing conversation, with at most the integration's number of uploaded files`)));
      },
    );
  });
  return {
    el: h('div', { class: 'composer' }, form, templates.el),
    setMode(next) {
      if (JSON.stringify(next) === JSON.stringify(mode)) return;
      mode = next;
      applyMode();
    },
    setTemplates(list) {
      templateCount = list.length;
      templates.setTemplates(list);
      applyMode();
    },
    setCapability(capability) {
      files.setCapability(capability);
      updateCounter();
    },
    hideFiles: () => files.setCapability(undefined),
    destroy: () => files.clear(),
  };
}

/**
 * **Send a template**: a folded section under the compose box (open when only a template may go
 * out), its picker and its own send button; writes the template reply of docs/data-model.md.
 */
function templateForm(session: Session, conversationId: string): { el: HTMLElement; setTemplates(templates: readonly ChannelTemplateView[]): void; setOpen(open: boolean): void } {
  const error = h('div', { id: 'template-error' });
  const none = h('p', { class: 'muted', hidden: true }, 'The channel declared no templates: nothing can be sent until the customer writes again.');
  const send = h('button', { type: 'submit', id: 'send-template' }, 'Send template');
  const picker = templatePicker('reply', () => replace(error));
  const form = h('form', { class: 'template-form', 'aria-label': 'Send a template' }, picker.el, h('div', { class: 'row' }, send), error);
  const details = h('details', { class: 'template-compose', id: 'template-compose' }, h('summary', {}, 'Send a template'), none, form);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const read = picker.read();
    if ('problem' in read) {
      replace(error, notice('error', read.problem));
      picker.focusProblem();
      return;
    }
    send.disabled = true;
    picker.setDisabled(true);
    replace(error, notice('loading', 'Sending…'));
    sendTemplateReply(session, conversationId, read.choice).then(
      () => {
        send.disabled = false;
        picker.setDisabled(false);
        picker.clear();
        replace(error);
      },
      (err: unknown) => {
        send.disabled = false;
        picker.setDisabled(false);
        replace(error, notice('error', describeError(err, "a template reply names a template the integration's channel declared, with each of its params filled in (1 to 1024 characters each), and nothing else")));
      },
    );
  });
  return {
    el: details,
    setTemplates(list) {
      picker.setTemplates(list);
      none.hidden = list.length > 0;
      form.hidden = list.length === 0;
    },
    setOpen(open) {
      // Opened for a closed window; left as the member set it otherwise.
      if (open) details.open = true;
    },
  };
}
