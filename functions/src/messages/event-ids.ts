import { digestId } from '../platform/ids';

/*
 * Deterministic ids of the message events' documents (platform/ids.ts `digestId`: a retry lands on
 * the same document). Here rather than in platform/ids.ts because only messages/ mints them.
 */

/** A message event's target: a customer message by its eventId, or an operator reply by a provider message id. */
export type EventTarget = { eventId: string } | { providerMessageId: string };

/** The pending-events document of a target (`pendingEvents/{id}`): one per target, the events in the order received. */
export const pendingEventsIdFor = (integrationId: string, target: EventTarget): string =>
  'eventId' in target ? digestId('p_', [integrationId, 'eventId', target.eventId]) : digestId('p_', [integrationId, 'providerMessageId', target.providerMessageId]);

/** The lookup document of one provider message id of an operator reply (`providerMessages/{id}`). */
export const providerMessageKeyFor = (integrationId: string, providerMessageId: string): string => digestId('pm_', [integrationId, providerMessageId]);
