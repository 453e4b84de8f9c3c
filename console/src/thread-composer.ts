/**
 * A thread's compose box: the reply's text, 1..REPLY_MAX_CODE_POINTS code points counted as the
 * rules count them, the files it carries (compose-attachments.ts), Send reply (or Ctrl+Enter), and
 * the refusal's reason.
 */
import { h, notice, replace } from './dom';
import { describeError } from './errors';
import { codePointLength, REPLY_MAX_CODE_POINTS } from '../../functions/src/contract';
import type { AttachmentCapability } from './attachments';
import { composeAttachments } from './compose-attachments';
import { replyProblem } from './format';
import type { Session } from './session';
import { sendReply } from './thread-data';

export interface ThreadComposer {
  el: HTMLFormElement;
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
  const files = composeAttachments(session, conversationId, () => updateCounter());
  const form = h(
    'form',
    { class: 'compose', 'aria-label': 'Compose a reply' },
    h('label', { for: 'reply-text' }, 'Reply'),
    text,
    files.el,
    h('div', { class: 'row' }, counter, h('span', { id: 'reply-hint', class: 'muted' }, 'Ctrl+Enter sends'), send),
    composeError,
  );
  function updateCounter(): void {
    const n = codePointLength(text.value);
    counter.textContent = `${n} / ${REPLY_MAX_CODE_POINTS}`;
    counter.classList.toggle('over', n > REPLY_MAX_CODE_POINTS);
    send.disabled = replyProblem(text.value, files.count()) !== undefined || files.ready() === undefined;
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
    el: form,
    setCapability(capability) {
      files.setCapability(capability);
      updateCounter();
    },
    hideFiles: () => files.setCapability(undefined),
    destroy: () => files.clear(),
  };
}
