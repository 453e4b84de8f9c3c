/**
 * Conversations the desk starts, on the integration's card (`conversations.start.addressKinds`):
 * every member sees whether members may start conversations on it and by which kinds of address;
 * admins tick phone, email and handle and save, or turn starts off (the field removed). What the
 * connector can reach is its business: the admin says which kinds it takes.
 */
import { h } from './dom';
import { settingEditor } from './integration-capabilities';
import { ADMINS_ONLY, type IntegrationsContext } from './integration-context';
import { setStartKinds } from './integrations-data';
import { ADDRESS_KINDS, addressKindLabel, startKindsProblem, startKindsText, type AddressKind } from './start-format';

export function startsPanel(ctx: IntegrationsContext, integrationId: string, current: AddressKind[] | undefined): HTMLElement {
  const summary = h('p', { class: 'starts-capability', 'data-starts': current ? current.join(' ') : 'off' }, startKindsText(current));
  // Unnamed, not a landmark: as the card's other settings.
  const section = h('section', { class: 'starts-settings' }, h('h4', {}, 'Conversations the desk starts'), summary);
  if (!ctx.isAdmin) return section;
  const boxes = ADDRESS_KINDS.map((kind) => {
    const box = h('input', { type: 'checkbox', name: 'addressKinds', value: kind, checked: current?.includes(kind) ?? false });
    return { kind, box, label: h('label', { class: 'checkbox' }, box, ` ${addressKindLabel(kind)}`) };
  });
  section.append(
    settingEditor<AddressKind[]>({
      name: 'starts',
      current,
      formAttrs: { 'aria-label': `Conversation starts of ${integrationId}` },
      fields: [h('fieldset', {}, h('legend', {}, 'Start conversations by'), ...boxes.map((b) => b.label))],
      saveLabel: 'Save starts',
      offLabel: 'Turn starts off',
      offAnnouncement: 'Members can no longer start conversations on this integration.',
      openLabel: 'Let members start conversations',
      read: () => boxes.filter((b) => b.box.checked).map((b) => b.kind),
      problem: startKindsProblem,
      write: (value) => setStartKinds(ctx.session, integrationId, value),
      savedAnnouncement: startKindsText,
      deniedWhy: `${ADMINS_ONLY}; starts take 1 to 3 distinct kinds of address (phone, email, handle)`,
    }),
  );
  return section;
}
