/**
 * Integrations: every member sees the list (status, key prefix, replies topic and the service's
 * topic check); admins create, deactivate/activate, re-key and end a CLI rotation's overlap early.
 * The key is minted in the browser (keys.ts), shown once, and only its hash is written
 * (docs/data-model.md, "Integrations"). Writes are exactly what firestore.rules accept.
 * Every member also sees each integration's health, read live from the roll-up's document
 * `integrationHealth/{integrationId}` (docs/decisions.md#integration-health; docs/data-model.md, "Integration health").
 * This module puts the view together and follows the list: integration-card.ts is one card,
 * integration-capabilities.ts its reply settings, integration-health.ts its health,
 * integration-create.ts, integration-operations.ts and integration-key.ts the forms above the list
 * and the key shown once. Their Firestore reads and writes are integrations-data.ts.
 */
import { h, notice, replace } from './dom';
import { describeError } from './errors';
import { integrationCard, keepOpenEditors } from './integration-card';
import type { IntegrationsContext } from './integration-context';
import { createForm } from './integration-create';
import { healthPanels } from './integration-health';
import { keyPanel } from './integration-key';
import { operationsForm } from './integration-operations';
import { subscribeIntegrations, type Integration } from './integrations-data';
import type { Session } from './session';
import type { View } from './view';

export function integrationsView(session: Session): View {
  const isAdmin = session.role === 'admin';
  const key = keyPanel();
  let latest: Integration[] = [];
  const ctx: IntegrationsContext = { session, isAdmin, showKey: key.show, confirmingDeactivation: new Set(), rerender: () => renderCards(latest) };
  const health = healthPanels(session);
  const list = h('div', { id: 'integration-list', 'aria-busy': 'true' }, notice('loading', 'Loading integrations…'));

  function renderCards(rows: Integration[]): void {
    latest = rows;
    health.keepOnly(new Set(rows.map((r) => r.id)));
    if (rows.length === 0) replace(list, notice('empty', isAdmin ? 'No integrations yet: create the first one above.' : 'No integrations yet.'));
    else {
      const previous = new Map([...list.querySelectorAll<HTMLElement>('article.integration')].map((el) => [el.dataset.integration, el]));
      replace(list, ...rows.map((row) => keepOpenEditors(previous.get(row.id), integrationCard(ctx, row, health.panel(row.id)))));
    }
  }

  const unsubscribe = subscribeIntegrations(
    session,
    (rows) => {
      list.removeAttribute('aria-busy');
      renderCards(rows);
    },
    (err) => {
      list.removeAttribute('aria-busy');
      replace(list, notice('error', describeError(err, 'only members of the workspace may read its integrations')));
    },
  );

  const operations = operationsForm(ctx);
  const el = h(
    'div',
    { class: 'integrations' },
    h('h1', {}, 'Integrations'),
    key.el,
    createForm(ctx),
    operations.el,
    h('p', { class: 'muted' }, 'Re-keying here revokes the old key within 30 s. For a rotation where both keys work for a while, use npm run integrations -- rotate; an admin can end that overlap early here.'),
    h('h2', {}, 'All integrations'),
    list,
  );
  return {
    el,
    destroy() {
      unsubscribe();
      operations.destroy();
      health.destroy();
      key.hide(); // the key never outlives the view
    },
  };
}
