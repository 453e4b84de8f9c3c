/**
 * One integration's card: name and state, key prefix (or revoked), a CLI rotation's previous key,
 * the paused source, replies topic and the service's topic check; its reply capabilities
 * (integration-capabilities.ts), the channel its connector declared (integration-channel.ts, read-only),
 * whether members may start conversations on it (integration-starts.ts)
 * and live health (integration-health.ts); for admins Deactivate /
 * Activate, Re-key (the new key shown once) and End overlap now, with the refusal's reason.
 */
import { h, notice, replace } from './dom';
import { describeError } from './errors';
import { formatTime } from './format';
import { attachmentsPanel, lifecyclePanel } from './integration-capabilities';
import { channelPanel } from './integration-channel';
import { startsPanel } from './integration-starts';
import { ADMINS_ONLY, type IntegrationsContext } from './integration-context';
import { endKeyOverlap, rekeyIntegration, setIntegrationActive, type Integration } from './integrations-data';

/**
 * An admin action's button: disabled while its write runs, a refusal shown in `error` (why, with
 * `ADMINS_ONLY` when the rules say no more). `attrs` beyond the default class (e.g. `danger`).
 */
function actionButton(label: string, error: HTMLElement, write: () => Promise<void>, attrs: Record<string, string> = {}): HTMLElement {
  return h('button', {
    type: 'button',
    class: 'secondary',
    ...attrs,
    onclick: (event: Event) => {
      const button = event.currentTarget as HTMLButtonElement;
      button.disabled = true;
      replace(error);
      write().then(
        () => {
          button.disabled = false;
        },
        (err: unknown) => {
          button.disabled = false;
          replace(error, notice('error', describeError(err, ADMINS_ONLY)));
        },
      );
    },
  }, label);
}

/** A card's admin actions: each button waits for its write and shows a refusal in `error`. */
function adminActions(ctx: IntegrationsContext, row: Integration, error: HTMLElement): HTMLElement {
  const { session } = ctx;
  const { name, active, previousKey: previous } = row;
  // Deactivate confirms in place, as Unsend does (its connector's calls are refused from then on);
  // Activate needs no confirmation.
  if (active && ctx.confirmingDeactivation.has(row.id)) return deactivationConfirm(ctx, row, error);
  if (!active) ctx.confirmingDeactivation.delete(row.id);
  const toggle = active
    ? h('button', { type: 'button', class: 'secondary', 'data-action': 'deactivate', onclick: () => { ctx.confirmingDeactivation.add(row.id); replace(error); ctx.rerender(); focusAction(row.id, 'deactivate-now'); } }, 'Deactivate')
    : actionButton('Activate', error, () => setIntegrationActive(session, row.id, true));
  return h(
    'div',
    { class: 'row actions' },
    toggle,
    actionButton('Re-key', error, async () => {
      if (!confirm(`Re-key “${name}”? The current key stops working within 30 seconds (no overlap; for an overlap use the CLI's rotate).`)) return;
      const issued = await rekeyIntegration(session, row.id);
      ctx.showKey(`New key for “${name}”`, issued);
    }),
    previous ? actionButton('End overlap now', error, () => endKeyOverlap(session, row.id)) : null,
  );
}

/** Focus on a card's action after the cards re-rendered (the button is a new element). */
function focusAction(integrationId: string, action: string): void {
  document.querySelector<HTMLElement>(`article.integration[data-integration="${CSS.escape(integrationId)}"] [data-action="${action}"]`)?.focus();
}

/** The in-place confirmation of `row`'s Deactivate: what it does, then "Deactivate now" or "Keep it active". */
function deactivationConfirm(ctx: IntegrationsContext, row: Integration, error: HTMLElement): HTMLElement {
  const textId = `deactivate-text-${row.id}`;
  const confirmButton = actionButton(
    'Deactivate now',
    error,
    async () => {
      await setIntegrationActive(ctx.session, row.id, false);
      ctx.confirmingDeactivation.delete(row.id);
      ctx.rerender();
    },
    { class: 'danger', 'data-action': 'deactivate-now' },
  );
  const keep = h('button', { type: 'button', class: 'secondary', onclick: () => { ctx.confirmingDeactivation.delete(row.id); ctx.rerender(); focusAction(row.id, 'deactivate'); } }, 'Keep it active');
  return h(
    'div',
    { class: 'row actions deactivate-confirm', role: 'group', 'aria-label': `Deactivate ${row.name}`, 'aria-describedby': textId },
    h('p', { id: textId }, `Deactivate “${row.name}”? Its connector's calls are refused (403 integration_inactive) within 30 seconds, and its replies wait, until an admin activates it again.`),
    confirmButton,
    keep,
  );
}

/** The card of `row`, with its live health panel `health`. */
export function integrationCard(ctx: IntegrationsContext, row: Integration, health: HTMLElement): HTMLElement {
  const { name, active, replies, previousKey: previous, keyRevoked: revoked } = row;
  const error = h('div', {});
  const topicStatus = !replies.enabled
    ? h('span', { class: 'muted' }, 'replies disabled')
    : replies.topicStatus === undefined
      ? h('span', { class: 'badge badge-pending' }, 'checking…')
      : h('span', { class: `badge badge-topic-${replies.topicStatus}` }, replies.topicStatus);
  return h(
    'article',
    { class: 'card integration', 'data-integration': row.id, 'aria-labelledby': `int-${row.id}` },
    h('h3', { id: `int-${row.id}` }, name, ' ', h('span', { class: `badge ${active ? 'badge-ok' : 'badge-off'}` }, active ? 'active' : 'inactive')),
    h(
      'dl',
      {},
      h('dt', {}, 'ID'),
      h('dd', {}, h('code', {}, row.id)),
      h('dt', {}, 'Key'),
      h('dd', {}, revoked ? h('span', { class: 'badge badge-failed' }, `revoked (${revoked.reason ?? 'by the service'}): re-key`) : h('code', {}, `${row.keyPrefix}…`)),
      previous ? h('dt', {}, 'Previous key') : null,
      previous ? h('dd', {}, h('code', {}, `${previous.prefix ?? ''}…`), ` works until ${formatTime(previous.expiresAt)}`) : null,
      row.sourcePaused ? h('dt', {}, 'Source') : null,
      row.sourcePaused ? h('dd', {}, 'paused (incoming messages refused)') : null,
      h('dt', {}, 'Replies topic'),
      h('dd', {}, replies.enabled && replies.topic ? h('code', { class: 'wrap' }, replies.topic) : h('span', { class: 'muted' }, 'none')),
      h('dt', {}, 'Topic status'),
      h('dd', {}, topicStatus, replies.topicMessage ? h('span', { class: 'muted topic-message' }, ` ${replies.topicMessage}`) : null),
    ),
    attachmentsPanel(ctx, row.id, row.attachments),
    lifecyclePanel(ctx, row.id, row.lifecycle),
    channelPanel(row.channel),
    startsPanel(ctx, row.id, row.startKinds),
    health,
    ctx.isAdmin ? adminActions(ctx, row, error) : null,
    error,
  );
}

/**
 * Every snapshot re-renders the cards (a topic check or a health change included). An editor the
 * admin has open in the card's previous rendering keeps its draft and stays open, unless what it
 * edits changed underneath (then the fresh, closed one shows the new value; a successful save
 * closes it the same way).
 */
export function keepOpenEditors(previous: HTMLElement | undefined, fresh: HTMLElement): HTMLElement {
  for (const open of previous?.querySelectorAll<HTMLDetailsElement>('details[data-editor][open]') ?? []) {
    const counterpart = [...fresh.querySelectorAll<HTMLDetailsElement>('details[data-editor]')].find((el) => el.dataset.editor === open.dataset.editor);
    counterpart?.replaceWith(open);
  }
  return fresh;
}
