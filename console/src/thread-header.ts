/**
 * A thread's heading: the conversation's external id, and a line with its customer (by display
 * name once known), integration and last message, followed live. It tells the thread which
 * integration the conversation belongs to (whose capabilities the thread follows). Admins also get
 * "Erase this customer's data…" on the conversation's customer (the latest one, as the line names),
 * which opens Privacy's erasure for them; operators do not (the rules refuse them erasures).
 * Below them, for every member, the conversation's connector metadata (what the connector sent
 * with its messages: docs/contract.md#connector-metadata), read-only, under "Details", live.
 */
import { h, notice, replace } from './dom';
import { describeError } from './errors';
import { formatTime, NO_CUSTOMER_YET } from './format';
import { CustomerNames, personLabel } from './customers';
import type { Session } from './session';
import { addressKindLabel } from './start-format';
import { subscribeConversation, type ConversationHeader } from './thread-data';
import { integrationNames } from './integrations-data';
import { erasureHash } from './privacy-format';

export interface ThreadHeader {
  title: HTMLElement;
  subtitle: HTMLElement;
  /**
   * The admin's actions on the conversation's customer (none for operators and before a customer
   * wrote), then the conversation's connector metadata under "Details" (none when it has none).
   */
  actions: HTMLElement;
  destroy(): void;
}

/**
 * The connector metadata as a read-only key/value list under a closed "Details" (it kept open
 * across live updates when the member opened it); null when there is none. Text nodes only: the
 * values come from the connector.
 */
function metadataDetails(entries: ReadonlyArray<readonly [string, string]>, open: boolean): HTMLElement | null {
  if (entries.length === 0) return null;
  const list = h('dl', { class: 'conversation-metadata' }, ...entries.flatMap(([key, value]) => [h('dt', {}, key), h('dd', {}, value)]));
  const details = h('details', { id: 'conversation-details' }, h('summary', {}, `Details: connector metadata (${entries.length})`), list);
  details.open = open;
  return details;
}

/**
 * `onHeader` gets every snapshot of the conversation (undefined: it does not exist): the thread
 * follows its integration, its window, whether it waits for the channel and where it was merged.
 */
export function threadHeader(session: Session, conversationId: string, onHeader: (header: ConversationHeader | undefined) => void): ThreadHeader {
  const title = h('h2', { id: 'thread-title' }, conversationId);
  const subtitle = h('p', { class: 'muted' });
  const actions = h('div', { class: 'thread-actions' });
  const erase = h('p', {});
  const details = h('div', {});
  actions.append(erase, details);
  const customers = new CustomerNames(session.services.db, session.workspaceId);
  let render = (): void => undefined;
  const integrations = integrationNames(session, () => render());
  const unsubscribeConversation = subscribeConversation(
    session,
    conversationId,
    (header) => {
      onHeader(header);
      if (header === undefined) {
        replace(subtitle, 'This conversation does not exist.');
        replace(erase);
        replace(details);
        return;
      }
      replace(details, metadataDetails(header.metadata, details.querySelector('details')?.open === true));
      // A started conversation has no thread yet (its external id is empty): its address names it.
      title.textContent = header.externalConversationId !== '' ? header.externalConversationId : (header.to?.value ?? conversationId);
      // A started conversation has no customer until the channel answers: it is named by its address.
      const started = header.to === undefined ? '' : ` · started by the desk to ${addressKindLabel(header.to.kind)} ${header.to.value}`;
      const externalId = header.customerExternalId;
      const integrationId = header.integrationId ?? '?';
      let person = externalId ?? NO_CUSTOMER_YET;
      render = () => replace(subtitle, `Customer ${person} · integration ${integrations.label(integrationId)}${started} · last message ${formatTime(header.lastMessageAtMs)}`);
      render();
      replace(
        erase,
        session.role === 'admin' && externalId !== undefined && header.integrationId !== undefined
          ? h('a', { href: erasureHash(header.integrationId, externalId), id: 'erase-customer', class: 'danger-link' }, 'Erase this customer’s data…')
          : null,
      );
      if (externalId !== undefined) {
        void customers.displayName(integrationId, externalId).then((name) => {
          if (name === undefined) return;
          person = personLabel(externalId, name);
          render();
        });
      }
    },
    (err) => replace(subtitle, notice('error', describeError(err, 'only members of the workspace may read its conversations'))),
  );
  return {
    title,
    subtitle,
    actions,
    destroy() {
      unsubscribeConversation();
      integrations.destroy();
    },
  };
}
