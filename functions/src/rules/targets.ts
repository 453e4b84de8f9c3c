/**
 * Which message a `target: { providerMessageId }` names (docs/contract.md#message-events), pure.
 * A channel's webhook gives one message id; the connector need not know whether it named a
 * customer message (the `providerMessageId` sent with `POST /v1/messages`) or an operator reply
 * (an id reported with `POST /v1/deliveries/complete`, the reply's or one of its parts'): the
 * service looks on both sides, and this rule decides. The service's events transaction
 * (functions/src/messages/event-store.ts) and the SDK's test service both ask it.
 */

/** Where a provider message id was found on one side: the message it names. */
export interface TargetLocation {
  conversationId: string;
  messageId: string;
}

/** The answer of the rule. */
export type ProviderTargetResolution<L extends TargetLocation> =
  /** Found on exactly one side: that message; the rules of message events apply to it as to a target by eventId. */
  | { kind: 'found'; side: 'inbound' | 'reply'; location: L }
  /** Found on both sides: 409 `ambiguous_target`, nothing written (name the customer message by `{ eventId }`). */
  | { kind: 'ambiguous' }
  /** On neither side yet: the event waits for it (202), 24 hours at most, as a target by eventId. */
  | { kind: 'absent' };

/**
 * Resolves a provider message id from what each side holds: `inbound`, the customer message (or
 * alert) of the integration that came with this id; `reply`, the operator reply whose delivery
 * (or one of its parts) was completed with it. Neither side wins over the other: a channel that
 * gives a customer message and a reply the same id is one the service cannot tell apart, and
 * guessing would change the wrong message without an error.
 */
export function resolveProviderTarget<L extends TargetLocation>(inbound: L | undefined, reply: L | undefined): ProviderTargetResolution<L> {
  if (inbound !== undefined && reply !== undefined) return { kind: 'ambiguous' };
  if (inbound !== undefined) return { kind: 'found', side: 'inbound', location: inbound };
  if (reply !== undefined) return { kind: 'found', side: 'reply', location: reply };
  return { kind: 'absent' };
}
