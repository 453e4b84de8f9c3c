/**
 * The channel's window and templates as the delivery side reads them (docs/contract.md#windows):
 * the facts a reply is checked against when it is sequenced or resent, and the conversation's
 * update when the connector says the window has closed. The rules are ../rules/window.ts and
 * ../contract/templates.ts; here only what is read from, and written to, the documents.
 */
import { Timestamp, type DocumentSnapshot } from 'firebase-admin/firestore';
import type { Integration } from '../integrations/model';
import { closesAtAfterConnectorClosed, isWindowClosed } from '../rules/window';
import type { ChannelFacts } from './reply';

/** The conversation's `window.closesAt` (epoch ms), or null when it has none. */
function closesAtOf(conversation: DocumentSnapshot | undefined): number | null {
  const closesAt: unknown = conversation?.exists === true ? conversation.get('window.closesAt') : undefined;
  return closesAt instanceof Timestamp ? closesAt.toMillis() : null;
}

/** The conversation's `lastCustomerSentAt` (epoch ms), or null when no customer has written. */
function lastCustomerSentAtOf(conversation: DocumentSnapshot | undefined): number | null {
  const sentAt: unknown = conversation?.exists === true ? conversation.get('lastCustomerSentAt') : undefined;
  return sentAt instanceof Timestamp ? sentAt.toMillis() : null;
}

/** What a reply of the conversation is checked against at `now`: the declared templates, and whether the declared window has closed. */
export function channelFactsOf(integration: Pick<Integration, 'channel'> | null, conversation: DocumentSnapshot | undefined, now: number): ChannelFacts {
  const channel = integration?.channel ?? null;
  const windowClosed = isWindowClosed(channel?.window?.seconds ?? null, { closesAt: closesAtOf(conversation), lastCustomerSentAt: lastCustomerSentAtOf(conversation) }, now);
  return { templates: channel?.templates ?? [], windowClosed };
}

/**
 * The conversation's update when its connector failed a delivery `window_closed` at `now`: the
 * window closes now (an earlier end stays). Null when the conversation is gone (an erasure:
 * nothing is recreated).
 */
export function windowClosedUpdate(conversation: DocumentSnapshot | undefined, now: number): Record<string, unknown> | null {
  if (conversation?.exists !== true) return null;
  return { 'window.closesAt': Timestamp.fromMillis(closesAtAfterConnectorClosed(closesAtOf(conversation), now)) };
}
