import { digestId } from '../platform/ids';

/*
 * Deterministic ids of the message events' documents (platform/ids.ts `digestId`: a retry lands on
 * the same document). Here rather than in platform/ids.ts because only messages/ mints them.
 */

/** A message event's target: a message by its eventId, or by the channel's id (a customer message's or an operator reply's). */
export type EventTarget = { eventId: string } | { providerMessageId: string };

/** The pending-events document of a target (`pendingEvents/{id}`): one per target, the events in the order received. */
export const pendingEventsIdFor = (integrationId: string, target: EventTarget): string =>
  'eventId' in target ? digestId('p_', [integrationId, 'eventId', target.eventId]) : digestId('p_', [integrationId, 'providerMessageId', target.providerMessageId]);

/** The lookup document of one provider message id of an operator reply (`providerMessages/{id}`). */
export const providerMessageKeyFor = (integrationId: string, providerMessageId: string): string => digestId('pm_', [integrationId, providerMessageId]);

/**
 * The uniqueness document of a customer message's own `providerMessageId` (`providerMessages/{pmi_...}`):
 * one per integration and id, created in the message's transaction (a second message with the id is
 * 409), and the inbound side of a target by `providerMessageId` (../rules/targets.ts). Another
 * prefix than a reply's, so a customer message and a reply with one id are two documents (ambiguous).
 */
export const inboundProviderMessageKeyFor = (integrationId: string, providerMessageId: string): string => digestId('pmi_', [integrationId, providerMessageId]);
