/**
 * The workspace's operations topic (admins; docs/operations.md#operational-events): where the
 * service publishes operational events, and the failure it recorded on the settings, if any.
 */
import { announce, h, notice, replace } from './dom';
import { describeError } from './errors';
import { topicProblem } from './format';
import type { IntegrationsContext } from './integration-context';
import { saveOperationsTopic, subscribeOperations } from './integrations-data';

export interface OperationsForm {
  /** The form; null for operators. */
  el: HTMLElement | null;
  destroy(): void;
}

export function operationsForm(ctx: IntegrationsContext): OperationsForm {
  const { session } = ctx;
  if (!ctx.isAdmin) return { el: null, destroy: () => undefined };
  const status = h('div', { 'data-operations': 'status' });
  const input = h('input', { id: 'operations-topic', name: 'topic', autocomplete: 'off', spellcheck: 'false', placeholder: `projects/${session.services.projectId || 'my-project'}/topics/support-operations` });
  const submit = h('button', { type: 'submit' }, 'Save');
  const form = h(
    'form',
    { class: 'card', id: 'operations-settings', 'aria-labelledby': 'operations-title' },
    h('h2', { id: 'operations-title' }, 'Operations topic'),
    h('label', { for: 'operations-topic' }, 'Pub/Sub topic for operational events (optional)'),
    input,
    h('p', { class: 'muted' }, 'delivery.exhausted, conversation.blocked, integration.unhealthy/recovered and erasure.done are published here; the service needs roles/pubsub.publisher on it. Empty: no events.'),
    submit,
    status,
  );
  const unsubscribe = subscribeOperations(
    session,
    (data) => {
      if (document.activeElement !== input) input.value = data?.topic ?? '';
      replace(status, data?.topicStatus ? notice('error', `Events cannot be published: ${data.topicStatus}${data.topicMessage ? ` (${data.topicMessage})` : ''}`) : null);
    },
    (err) => replace(status, notice('error', describeError(err, 'only workspace admins may read the operations settings'))),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const value = input.value.trim();
    const topicWhy = topicProblem(value);
    if (topicWhy !== undefined) {
      replace(status, notice('error', topicWhy));
      return;
    }
    submit.disabled = true;
    saveOperationsTopic(session, value)
      .then(() => announce('Operations topic saved.'))
      .catch((err: unknown) => replace(status, notice('error', describeError(err, 'only workspace admins may set the operations topic'))))
      .finally(() => {
        submit.disabled = false;
      });
  });
  return { el: form, destroy: unsubscribe };
}
