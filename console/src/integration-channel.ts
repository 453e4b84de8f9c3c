/**
 * The channel as the connector declared it (`PUT /v1/channel`, docs/contract.md#channel), on the
 * integration's card: the reply window in words and each template's name, language and preview.
 * Read-only: the connector declares it and firestore.rules let no member write it. What it reads and
 * says is integration-channel-format.ts's (pure, unit-tested).
 */
import { h } from './dom';
import { channelWindowText, type IntegrationChannel } from './integration-channel-format';

/**
 * The card's channel section; a short note when the connector has not declared its channel. A plain
 * section headed by its h4, like the card's other parts (a named one would be a landmark per card:
 * docs/console.md, `landmark-unique`).
 */
export function channelPanel(channel: IntegrationChannel | undefined): HTMLElement {
  if (channel === undefined) return h('section', { class: 'channel' }, h('h4', {}, 'Channel'), h('p', { class: 'muted' }, 'Not declared by the connector.'));
  return h(
    'section',
    { class: 'channel' },
    h('h4', {}, 'Channel'),
    h('p', { class: 'channel-window' }, channelWindowText(channel)),
    channel.templates.length === 0
      ? h('p', { class: 'muted' }, 'No templates.')
      : h(
          'ul',
          { class: 'channel-templates', 'aria-label': 'Templates' },
          ...channel.templates.map((t) =>
            h('li', { 'data-template': `${t.name}/${t.language}` }, h('code', {}, t.name), ' ', h('span', { class: 'badge' }, t.language), h('div', { class: 'wrap template-preview' }, t.preview)),
          ),
        ),
  );
}
