/**
 * New conversation (`#/conversations/new`, in the thread's pane): a member starts a conversation
 * on an integration that allows it (`conversations.start`), to an address of an allowed kind,
 * checked as the rules check it (start-format.ts), with a text or a template (a template only when
 * the channel declares a reply window: the customer has not written, so the window is closed).
 * It writes `conversationStarts/{autoId}`, waits for the service's answer on that document, then
 * opens the conversation (a new one, or the customer's existing one) or says why it was refused.
 * Its Firestore access is conversation-start-data.ts.
 */
import { announce, h, notice, replace } from './dom';
import { describeError } from './errors';
import { replyProblem } from './format';
import { subscribeIntegrations, type Integration } from './integrations-data';
import { requestStart, subscribeStartAnswer, type StartAnswer, type StartRequest } from './conversation-start-data';
import type { Session } from './session';
import { addressHint, addressKindLabel, addressProblem, startErrorText, type AddressKind } from './start-format';
import { templatePicker } from './template-picker';
import type { View } from './view';
import { REPLY_MAX_CODE_POINTS } from '../../functions/src/contract';

/** The integrations a member may start conversations on: active, with address kinds. */
const startable = (rows: readonly Integration[]): Integration[] => rows.filter((r) => r.active && r.startKinds !== undefined);

/** The form's fields (built once; `refresh` fills them for the chosen integration). */
function startFields() {
  const integration = h('select', { id: 'start-integration', name: 'integration' });
  const kind = h('select', { id: 'start-kind', name: 'kind' });
  const address = h('input', { type: 'text', id: 'start-address', name: 'address', autocomplete: 'off', spellcheck: 'false', 'aria-describedby': 'start-address-hint' });
  const hint = h('p', { class: 'muted', id: 'start-address-hint' });
  const modeText = h('input', { type: 'radio', name: 'first', id: 'start-mode-text', value: 'text', checked: true });
  const modeTemplate = h('input', { type: 'radio', name: 'first', id: 'start-mode-template', value: 'template' });
  const modeNote = h('p', { class: 'muted', id: 'start-mode-note' });
  const text = h('textarea', { id: 'start-text', name: 'text', rows: 3 });
  const textBox = h('div', { class: 'start-text' }, h('label', { for: 'start-text' }, 'Message'), text);
  const picker = templatePicker('start');
  // Focus on a refusal goes to the param at fault.
  const pickerFocus = { focus: () => picker.focusProblem() };
  return { integration, kind, address, hint, modeText, modeTemplate, modeNote, text, textBox, picker, pickerFocus };
}

export function conversationStartView(session: Session): View {
  const f = startFields();
  const status = h('div', { id: 'start-status' });
  const submit = h('button', { type: 'submit', id: 'start-submit' }, 'Start conversation');
  const empty = h('div', {}, notice('loading', 'Loading integrations…'));
  const form = h(
    'form',
    { class: 'start-form', 'aria-labelledby': 'start-title', novalidate: true, hidden: true },
    h('label', { for: 'start-integration' }, 'Integration'),
    f.integration,
    h('label', { for: 'start-kind' }, 'Address kind'),
    f.kind,
    h('label', { for: 'start-address' }, 'Address'),
    f.address,
    f.hint,
    h('fieldset', { class: 'start-mode' }, h('legend', {}, 'First message'), h('label', { class: 'checkbox' }, f.modeText, ' Text'), h('label', { class: 'checkbox' }, f.modeTemplate, ' Template'), f.modeNote),
    f.textBox,
    f.picker.el,
    h('div', { class: 'row' }, submit),
    status,
  );
  let rows: Integration[] = [];
  let unsubscribeAnswer: (() => void) | undefined;
  const chosen = (): Integration | undefined => rows.find((r) => r.id === f.integration.value);

  /** The kinds, the hint and the message's choices for the chosen integration. */
  function refresh(): void {
    const row = chosen();
    const kinds = row?.startKinds ?? [];
    const kindBefore = f.kind.value;
    replace(f.kind, ...kinds.map((k) => h('option', { value: k }, addressKindLabel(k))));
    if (kinds.includes(kindBefore as AddressKind)) f.kind.value = kindBefore;
    f.hint.textContent = kinds.length === 0 ? '' : addressHint(f.kind.value as AddressKind);
    const templates = row?.channel?.templates ?? [];
    const windowed = row?.channel?.windowSeconds != null;
    f.picker.setTemplates(templates);
    f.modeText.disabled = windowed;
    f.modeTemplate.disabled = templates.length === 0;
    if (windowed) f.modeTemplate.checked = true;
    else if (templates.length === 0) f.modeText.checked = true;
    f.modeNote.textContent = windowed
      ? templates.length === 0
        ? 'This channel has a reply window and declared no templates: it cannot start conversations until its connector declares one.'
        : 'This channel has a reply window and the customer has not written yet: the first message is a template.'
      : '';
    const template = f.modeTemplate.checked;
    f.textBox.hidden = template;
    f.picker.el.hidden = !template;
  }

  /** The request the form describes, or why it cannot be sent (the rules' checks, in words). */
  function read(): { request: StartRequest } | { problem: string; focus: { focus(): void } } {
    const row = chosen();
    if (row === undefined) return { problem: 'Choose an integration.', focus: f.integration };
    const kind = f.kind.value as AddressKind;
    const value = f.address.value.trim();
    const bad = addressProblem(kind, value);
    if (bad !== undefined) return { problem: bad, focus: f.address };
    if (f.modeTemplate.checked) {
      const template = f.picker.read();
      if ('problem' in template) return { problem: template.problem, focus: f.pickerFocus };
      return { request: { integrationId: row.id, to: { kind, value }, first: { template: template.choice } } };
    }
    if (row.channel?.windowSeconds != null) return { problem: 'This channel needs a template to start a conversation.', focus: f.modeTemplate };
    const textProblem = replyProblem(f.text.value);
    if (textProblem !== undefined) return { problem: textProblem, focus: f.text };
    return { request: { integrationId: row.id, to: { kind, value }, first: { text: f.text.value } } };
  }

  function answered(answer: StartAnswer): void {
    unsubscribeAnswer?.();
    unsubscribeAnswer = undefined;
    if (answer.kind === 'error') {
      submit.disabled = false;
      replace(status, notice('error', startErrorText(answer.code, answer.message)));
      return;
    }
    announce(answer.reused ? 'This customer already has a conversation: the message was added to it.' : 'Conversation started.');
    location.hash = `#/conversations/${encodeURIComponent(answer.conversationId)}`;
  }

  form.addEventListener('change', refresh);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const checked = read();
    if ('problem' in checked) {
      replace(status, notice('error', checked.problem));
      checked.focus.focus();
      return;
    }
    submit.disabled = true;
    replace(status, notice('loading', 'Starting…'));
    requestStart(session, checked.request).then(
      (startId) => {
        replace(status, notice('loading', 'Waiting for the service to start the conversation…'));
        unsubscribeAnswer = subscribeStartAnswer(
          session,
          startId,
          (answer) => {
            if (answer !== undefined) answered(answer);
          },
          (err) => {
            submit.disabled = false;
            replace(status, notice('error', describeError(err, 'only members of the workspace may read conversation starts')));
          },
        );
      },
      (err: unknown) => {
        submit.disabled = false;
        replace(
          status,
          notice('error', describeError(err, `a start names an integration that allows it, an address of an allowed kind, and a text of 1 to ${REPLY_MAX_CODE_POINTS} characters or a template the channel declared (a template when the channel has a reply window)`)),
        );
      },
    );
  });

  const unsubscribeIntegrations = subscribeIntegrations(
    session,
    (all) => {
      rows = startable(all);
      const before = f.integration.value;
      replace(f.integration, ...rows.map((r) => h('option', { value: r.id }, r.name)));
      if (rows.some((r) => r.id === before)) f.integration.value = before;
      form.hidden = rows.length === 0;
      replace(empty, rows.length === 0 ? notice('empty', 'No integration lets members start conversations. An admin allows it on the integration (Integrations, "Conversations the desk starts").') : null);
      refresh();
    },
    (err) => replace(empty, notice('error', describeError(err, 'only members of the workspace may read its integrations'))),
  );

  const el = h('div', { class: 'thread start' }, h('a', { href: '#/conversations', class: 'back' }, '← All conversations'), h('h2', { id: 'start-title' }, 'New conversation'), empty, form);
  return {
    el,
    destroy() {
      unsubscribeIntegrations();
      unsubscribeAnswer?.();
    },
  };
}
