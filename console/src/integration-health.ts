/**
 * Each integration's health, read live by every member from the roll-up's document
 * `integrationHealth/{integrationId}` (docs/decisions.md#integration-health; docs/data-model.md,
 * "Integration health"): open problems, the replies of the last 24 h by status, the oldest
 * claimable delivery, the last sent, the last error, and when it was computed.
 */
import { h, notice, replace, timeElement } from './dom';
import { describeError } from './errors';
import { formatAge, HEALTH_STATUSES, healthFacts, healthProblemText, healthStaleSeconds } from './format';
import { subscribeHealth, type IntegrationHealth } from './integrations-data';
import type { Session } from './session';

/** The body of an integration's health panel for its roll-up document (or its absence). */
function healthBody(data: IntegrationHealth | undefined): HTMLElement[] {
  if (data === undefined) return [notice('empty', 'Health not computed yet: the roll-up runs every minute.')];
  const counts = data.counts;
  const computedAt = data.computedAtMs;
  const staleSeconds = healthStaleSeconds(computedAt, Date.now());
  const oldest = data.oldestClaimable;
  const lastError = data.lastError;
  const item = (key: string, label: string, value: number | undefined, bad = false) =>
    h('div', { class: `count${bad && (value ?? 0) > 0 ? ' count-bad' : ''}`, 'data-count': key }, h('dt', {}, label), h('dd', {}, String(value ?? 0)));
  const problems = data.problems;
  const facts = healthFacts(data);
  // Facts in words (`3 failed in 24 h, oldest waiting 4 min`); "No open problems." only when
  // there are neither problems nor facts, never beside a red count.
  const factsLine = facts.length === 0 ? null : h('p', { class: 'health-facts-summary', 'data-health': 'facts' }, `${facts.join(', ')}.`);
  return [
    problems.length === 0
      ? (factsLine ?? h('p', { class: 'health-problems muted', 'data-health': 'problems' }, 'No open problems.'))
      : h(
          'div',
          { class: 'health-problems', role: 'alert', 'data-health': 'problems' },
          h('strong', {}, 'Unhealthy'),
          data.unhealthy ? h('span', {}, ' since ', timeElement(data.unhealthy.sinceMs)) : null,
          h('ul', {}, ...problems.map((p) => h('li', { 'data-problem': p.code ?? '' }, healthProblemText(p)))),
          factsLine,
        ),
    h(
      'dl',
      { class: 'health-counts', 'aria-label': 'Replies created in the last 24 hours, by status now' },
      ...HEALTH_STATUSES.map((s) => item(s, s, counts[s], s === 'failed' || s === 'unknown')),
      item('total', 'total', data.total),
    ),
    h(
      'dl',
      { class: 'health-facts' },
      h('dt', {}, 'Oldest claimable'),
      h(
        'dd',
        { 'data-health': 'oldest' },
        oldest === null
          ? h('span', { class: 'muted' }, 'none waiting')
          : h('span', { 'data-age-seconds': oldest.ageSeconds ?? 0 }, `waiting ${formatAge(oldest.ageSeconds ?? 0)}`, ' (since ', timeElement(oldest.sinceMs), ')'),
      ),
      h('dt', {}, 'Last sent'),
      h('dd', { 'data-health': 'last-sent' }, data.lastSent ? timeElement(data.lastSent.atMs) : h('span', { class: 'muted' }, 'never')),
      h('dt', {}, 'Last error'),
      h(
        'dd',
        { 'data-health': 'last-error' },
        lastError === null
          ? h('span', { class: 'muted' }, 'none')
          : h('span', {}, h('code', {}, lastError.code ?? '?'), ' ', h('span', { class: `badge status-${lastError.status ?? 'failed'}` }, lastError.status ?? '?'), ' at ', timeElement(lastError.atMs)),
      ),
      h('dt', {}, 'As of'),
      h(
        'dd',
        { 'data-health': 'computed-at' },
        timeElement(computedAt),
        ' ',
        data.active === false ? h('span', { class: 'muted' }, '(quiet: recomputed every 10 minutes) ') : null,
        staleSeconds !== undefined ? h('span', { class: 'badge badge-failed' }, `stale: no roll-up for ${formatAge(staleSeconds)}`) : null,
      ),
    ),
  ];
}

export interface HealthPanels {
  /** The live panel of `integrationId`: one per listed integration, it outlives its card's re-renders. */
  panel(integrationId: string): HTMLElement;
  /** Stops the panels of integrations no longer listed. */
  keepOnly(listed: ReadonlySet<string>): void;
  destroy(): void;
}

export function healthPanels(session: Session): HealthPanels {
  const health = new Map<string, { el: HTMLElement; unsubscribe: () => void }>();
  return {
    panel(integrationId) {
      const known = health.get(integrationId);
      if (known) return known.el;
      const headingId = `health-${integrationId}`;
      const body = h('div', { class: 'health-body', 'aria-busy': 'true' }, notice('loading', 'Loading health…'));
      // Unnamed, so not a landmark: one per card, the same name on each (axe landmark-unique); its h4 heads it.
      const el = h('section', { class: 'health' }, h('h4', { id: headingId }, 'Health: replies of the last 24 h'), body);
      const unsubscribe = subscribeHealth(
        session,
        integrationId,
        (data) => {
          body.removeAttribute('aria-busy');
          replace(body, ...healthBody(data));
        },
        (err) => {
          body.removeAttribute('aria-busy');
          replace(body, notice('error', describeError(err, 'only members of the workspace may read integration health')));
        },
      );
      health.set(integrationId, { el, unsubscribe });
      return el;
    },
    keepOnly(listed) {
      for (const [id, panel] of health) {
        if (!listed.has(id)) {
          panel.unsubscribe();
          health.delete(id);
        }
      }
    },
    destroy() {
      for (const panel of health.values()) panel.unsubscribe();
      health.clear();
    },
  };
}
