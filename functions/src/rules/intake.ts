/**
 * Intake rules of incoming messages and events that are neither schema nor image rules: a message
 * needs text or an image, an eventId used again with other content is a conflict, and so is a
 * channel's message id used by two messages. The service's handlers (functions/src/messages/http.ts)
 * and the SDK's test service both use these.
 */
import { BadRequestError, ConflictError, NotFoundError } from './errors';

/** The message's text, null when absent or empty; 400 `empty_message` when it has neither text nor an image. */
export function messageTextOf(text: string | undefined, imageCount: number): string | null {
  const given = text !== undefined && text !== '' ? text : null;
  if (given === null && imageCount === 0) throw new BadRequestError('empty_message', 'message.text: required (non-empty) unless at least one image is attached.');
  return given;
}

/** 409 `event_conflict`: the eventId was used before with other content, or by a message for an event (or the other way round). */
export const eventConflict = (eventId: string): ConflictError => new ConflictError('event_conflict', `eventId '${eventId}' was already used with different content.`);

/**
 * 409 `provider_message_id_conflict`: another message of the integration (another eventId) came
 * with this `providerMessageId`. The channel's id names one message, or a target by it could not
 * say which; a retry of the same message is a duplicate, never this.
 */
export const providerMessageIdConflict = (providerMessageId: string): ConflictError =>
  new ConflictError('provider_message_id_conflict', `providerMessageId '${providerMessageId}' was already used by another message of this integration.`);

/** 409 `ambiguous_target`: the target's providerMessageId names a customer message and an operator reply (rules/targets.ts). */
export const ambiguousTarget = (providerMessageId: string): ConflictError =>
  new ConflictError('ambiguous_target', `target.providerMessageId: '${providerMessageId}' names both a customer message and an operator reply; name the customer message by target.eventId.`);

/** 404 `target_not_found`: the event's target is not a message it may touch (docs/contract.md#message-events). */
export function targetNotFound(event: { type: string; target?: { eventId?: string | undefined; providerMessageId?: string | undefined } | undefined }): NotFoundError {
  const named = event.target?.eventId !== undefined ? `target.eventId: '${event.target.eventId}'` : `target.providerMessageId: '${event.target?.providerMessageId ?? ''}'`;
  const whose = event.type === 'reaction' ? 'a message of this conversation' : "a message of this sender's in this conversation";
  return new NotFoundError('target_not_found', `${named} is not ${whose}.`);
}
