/**
 * Where notifications leave the delivery store (the service's outbox and sweeper): the sweep that
 * applies due lease expiries and publishes the notifications due by the service clock, and a new
 * delivery's append, published at once as the service's creator does.
 */
import type { StartAddress } from '../internal/rules/starts.js';
import type { ReplyTemplate } from '../internal/rules/templates.js';
import type { LifecycleKind } from '../internal/contract.generated.js';
import { isTerminal, type AttachmentRef, type DeliveryRecord, type DeliveryTarget } from '../internal/rules/record.js';
import { extrasOf, notifyWaiters, type Conversation, type ServiceState } from './state.js';

/** Publishes the outbox's notifications due at `at` (not for a delivery that ended meanwhile). */
function publishDue(state: ServiceState, at: number): void {
  for (const entry of state.store.takeDue(at)) {
    const d = state.deliveries.get(entry.deliveryId);
    if (d !== undefined && !isTerminal(d.status)) state.notifications.publishDelivery(d);
  }
}

/** Lease expiries and liveness checks that are due, then the notifications due by the service clock (the service's sweeper and outbox). */
export function sweep(state: ServiceState): void {
  const at = state.now();
  state.store.sweep(at);
  publishDue(state, at);
}

export interface AppendRequest {
  conversation: Conversation;
  messageId: string;
  deliveryId: string;
  text: string;
  attachments?: AttachmentRef[];
  /** A template reply's or start's checked template (`text` is its filled preview). */
  template?: ReplyTemplate;
  textSent?: boolean;
  lifecycle?: { kind: LifecycleKind; target: DeliveryTarget };
  start?: { to: StartAddress };
  reason: 'created' | 'resend';
}

/** A new delivery of a reply (or of its edit / unsend, or a resend), published at once as the service's creator does. */
export function appendDelivery(state: ServiceState, input: AppendRequest): DeliveryRecord {
  const { conversation, lifecycle, ...fields } = input;
  const integration = state.integrations.get(conversation.integrationId);
  if (integration === undefined) throw new Error('unknown integration');
  const at = state.now();
  const d = state.store.append({
    ...fields,
    workspaceId: integration.workspaceId,
    integrationId: integration.integrationId,
    conversationId: conversation.conversationId,
    ...(lifecycle === undefined ? {} : { lifecycle: { ...lifecycle, requestedAt: at } }),
    now: at,
  });
  extrasOf(state, d.deliveryId);
  // The creator publishes right after its commit (`inline`): the outbox entry is spent.
  publishDue(state, at);
  notifyWaiters(state);
  return d;
}
