/**
 * After the send, on an operator's reply: Edit and Unsend while the integration allows them and
 * their windows are open (lifecycle.ts), the edit form and the unsend confirmation, each request's
 * refusal with its reason. Open forms, drafts and refusals are kept per reply across re-renders.
 */
import { announce, h, notice, replace, type Child } from './dom';
import { describeError } from './errors';
import { REPLY_MAX_CODE_POINTS } from '../../functions/src/contract';
import { formatTime } from './format';
import { canRequest, editProblem, shownText, windowEndsAt, type LifecycleReply } from './lifecycle';
import { replyTextId } from './thread-cards';
import type { ThreadContext } from './thread-context';
import { requestEdit, requestUnsend, type OutboundMessage } from './thread-data';
import { lifecycleReply } from './thread-rules';

/** A reply's lifecycle controls: the buttons beside its delivery line, the open form or confirmation below. */
export interface LifecycleControls {
  buttons: Child[];
  panel: Child;
}

export function lifecycleForms(ctx: ThreadContext): (m: OutboundMessage, at: number) => LifecycleControls {
  const { session, conversationId } = ctx;
  /** Open edit forms: the draft of each reply being edited. */
  const editing = new Map<string, string>();
  /** Replies whose Unsend waits for its in-page confirmation. */
  const confirmingUnsend = new Set<string>();
  const editErrors = new Map<string, string>();
  const unsendErrors = new Map<string, string>();

  /** The edit form of reply `id`, with its draft; Ctrl+Enter saves, Escape discards. */
  function editForm(id: string, rule: LifecycleReply, draft: string): HTMLElement {
    const current = shownText(rule).text;
    const area = h('textarea', { rows: 3, class: 'edit-text', 'data-focus': 'edit-text', 'aria-label': 'New text of the reply', id: `edit-${id}` });
    area.value = draft;
    const problem = h('div', {});
    const saveEdit = h('button', { type: 'submit', 'data-focus': 'edit-save' }, 'Save edit');
    const discard = (): void => {
      editing.delete(id);
      ctx.render({ message: id, control: 'edit' });
    };
    const form = h(
      'form',
      { class: 'edit-form', 'aria-label': 'Edit the reply' },
      area,
      h('div', { class: 'row' }, h('span', { class: 'muted' }, `until ${formatTime(windowEndsAt(rule, ctx.lifecycle(), 'edit'))}`), saveEdit, h('button', { type: 'button', class: 'secondary', onclick: discard }, 'Discard')),
      problem,
    );
    area.addEventListener('input', () => editing.set(id, area.value));
    area.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
        event.preventDefault();
        form.requestSubmit();
      } else if (event.key === 'Escape') discard();
    });
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const why = editProblem(area.value, current);
      if (why !== undefined) {
        replace(problem, notice('error', why));
        return;
      }
      const value = area.value;
      saveEdit.disabled = true;
      editing.delete(id);
      editErrors.delete(id);
      ctx.focusAfterRender({ message: id });
      announce(`Edit requested for the reply “${current.slice(0, 40)}”.`);
      requestEdit(session, conversationId, id, value).catch((err: unknown) => {
        editing.set(id, value);
        editErrors.set(id, describeError(err, `a member may edit only a sent operator reply of an integration that allows edits, within its window, with 1 to ${REPLY_MAX_CODE_POINTS} characters, and not once it was unsent`));
        ctx.render({ message: id, control: 'edit-text' });
      });
      ctx.render();
    });
    return form;
  }

  /** The in-page confirmation of reply `m`'s Unsend. */
  function unsendConfirmation(m: OutboundMessage): HTMLElement {
    const { id } = m;
    return h(
      'div',
      { class: 'unsend-confirm', role: 'group', 'aria-label': 'Unsend the reply' },
      h('p', {}, 'Take this reply back from the customer’s channel? They may have read it already.'),
      h('button', {
        type: 'button',
        class: 'danger',
        'data-focus': 'unsend-confirm',
        onclick: (event: Event) => {
          (event.currentTarget as HTMLButtonElement).disabled = true;
          confirmingUnsend.delete(id);
          unsendErrors.delete(id);
          ctx.focusAfterRender({ message: id });
          announce(`Unsend requested for the reply “${m.text.slice(0, 40)}”.`);
          requestUnsend(session, conversationId, id).catch((err: unknown) => {
            unsendErrors.set(id, describeError(err, 'a member may unsend only a sent operator reply of an integration that allows unsends, within its window, once'));
            ctx.render({ message: id, control: 'unsend' });
          });
        },
      }, 'Unsend now'),
      ' ',
      h('button', { type: 'button', class: 'secondary', onclick: () => { confirmingUnsend.delete(id); ctx.render({ message: id, control: 'unsend' }); } }, 'Keep it'),
    );
  }

  /** Edit and Unsend on a sent reply, the edit form, the unsend confirmation; each refusal says why. */
  return (m, at) => {
    const { id } = m;
    const rule = lifecycleReply(m);
    const textId = replyTextId(id);
    const canEdit = canRequest(rule, ctx.lifecycle(), 'edit', at);
    const canUnsend = canRequest(rule, ctx.lifecycle(), 'unsend', at);
    if (!canEdit) editing.delete(id);
    if (!canUnsend) confirmingUnsend.delete(id);
    // The accessible name is the visible one; the reply's text tells the buttons apart.
    const opener = (kind: 'edit' | 'unsend', label: string, open: () => void) =>
      h('button', { type: 'button', class: `secondary ${kind}`, 'data-focus': kind, 'aria-describedby': textId, onclick: open }, label);
    const editButton =
      canEdit && !editing.has(id)
        ? opener('edit', 'Edit', () => {
            editing.set(id, shownText(rule).text);
            editErrors.delete(id);
            ctx.render({ message: id, control: 'edit-text' });
          })
        : null;
    const unsendButton =
      canUnsend && !confirmingUnsend.has(id)
        ? opener('unsend', 'Unsend', () => {
            confirmingUnsend.add(id);
            unsendErrors.delete(id);
            ctx.render({ message: id, control: 'unsend-confirm' });
          })
        : null;
    const panel: HTMLElement[] = [];
    const draft = editing.get(id);
    if (draft !== undefined) panel.push(editForm(id, rule, draft));
    if (confirmingUnsend.has(id)) panel.push(unsendConfirmation(m));
    const editError = editErrors.get(id);
    if (editError) panel.push(notice('error', editError));
    const unsendError = unsendErrors.get(id);
    if (unsendError) panel.push(notice('error', unsendError));
    return { buttons: [editButton, unsendButton], panel: panel.length === 0 ? null : h('div', { class: 'lifecycle-panel' }, ...panel) };
  };
}
