/**
 * New integration (admins): a name and an optional replies topic; the key is minted in the browser
 * (keys.ts), shown once, and only its hash is written. Operators are told that only admins may.
 */
import { announce, h, notice, replace } from './dom';
import { describeError } from './errors';
import { topicProblem } from './format';
import { ADMINS_ONLY, type IntegrationsContext } from './integration-context';
import { createIntegration } from './integrations-data';
import { CONSOLE_LIMITS } from '../../functions/src/contract';

export function createForm(ctx: IntegrationsContext): HTMLElement {
  const { session } = ctx;
  if (!ctx.isAdmin) {
    return notice('info', 'You are an operator: only workspace admins can create, deactivate or re-key integrations.');
  }
  const error = h('div', {});
  const name = h('input', { id: 'integration-name', name: 'name', required: true, maxlength: CONSOLE_LIMITS.integrationName, autocomplete: 'off' });
  const topic = h('input', {
    id: 'integration-topic',
    name: 'topic',
    autocomplete: 'off',
    spellcheck: 'false',
    placeholder: `projects/${session.services.projectId || 'my-project'}/topics/connector-notifications`,
    'aria-describedby': 'topic-help',
  });
  const submit = h('button', { type: 'submit' }, 'Create integration');
  const form = h(
    'form',
    { class: 'card', id: 'create-integration', 'aria-labelledby': 'create-title' },
    h('h2', { id: 'create-title' }, 'New integration'),
    h('label', { for: 'integration-name' }, 'Name'),
    name,
    h('label', { for: 'integration-topic' }, 'Replies topic (optional)'),
    topic,
    h('p', { id: 'topic-help', class: 'muted' }, 'The Pub/Sub topic the service notifies of replies to deliver; the service needs roles/pubsub.publisher on it. Leave empty to disable replies.'),
    submit,
    error,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const topicValue = topic.value.trim();
    const topicWhy = topicProblem(topicValue);
    if (topicWhy !== undefined) {
      replace(error, notice('error', topicWhy));
      topic.focus();
      return;
    }
    submit.disabled = true;
    replace(error, notice('loading', 'Creating…'));
    void (async () => {
      try {
        const issued = await createIntegration(session, name.value.trim(), topicValue);
        const created = name.value.trim();
        form.reset();
        replace(error);
        ctx.showKey(`Key for “${created}”`, issued);
        announce('Integration created; its key is shown once.');
      } catch (err) {
        replace(error, notice('error', describeError(err, ADMINS_ONLY)));
      } finally {
        submit.disabled = false;
      }
    })();
  });
  return form;
}
