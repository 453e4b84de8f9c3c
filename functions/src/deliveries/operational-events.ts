/**
 * The delivery feature's operational events (docs/operations.md#operational-events), built here
 * and sent by ../platform/operational-events.ts: `delivery.exhausted` (written by ./transition.ts
 * with the transition that ends the delivery), `conversation.blocked` (./blocked.ts), and the
 * integration's `integration.unhealthy` / `integration.recovered` (./health-rollup.ts).
 */
import { iso, type OperationalEvent } from '../platform/operational-events';
import { NOT_CLAIMED, type DeliveryRecord } from '../rules/record';

/** The retry budget's code, and the unclaimed expiry's: the two ends of a delivery nobody could send. */
const EXHAUSTED_CODES: ReadonlySet<string> = new Set(['retry_exhausted', NOT_CLAIMED]);

/** `delivery.exhausted` when this write ends the delivery by its retry budget or `not_claimed`; otherwise null. */
export function exhaustedEvent(before: DeliveryRecord | null, next: DeliveryRecord, now: number): OperationalEvent | null {
  if (next.status !== 'failed' || before === null || before.status === 'failed') return null;
  const code = next.error?.code;
  if (code === undefined || !EXHAUSTED_CODES.has(code)) return null;
  return {
    eventId: `delivery.exhausted:${next.deliveryId}`,
    type: 'delivery.exhausted',
    workspaceId: next.workspaceId,
    integrationId: next.integrationId,
    conversationId: next.conversationId,
    deliveryId: next.deliveryId,
    at: iso(now),
    detail: { code, attempts: next.attempts, messageId: next.messageId, traceId: next.traceId ?? null },
  };
}

/** `conversation.blocked` of the head delivery `d`, claimable since `d.pendingAt` (one per such episode). */
export function blockedEvent(d: DeliveryRecord & { pendingAt: number }, now: number): OperationalEvent {
  return {
    eventId: `conversation.blocked:${d.deliveryId}:${d.pendingAt}`,
    type: 'conversation.blocked',
    workspaceId: d.workspaceId,
    integrationId: d.integrationId,
    conversationId: d.conversationId,
    deliveryId: d.deliveryId,
    at: iso(now),
    detail: { claimableSince: iso(d.pendingAt), claimableForSeconds: Math.floor((now - d.pendingAt) / 1000), attempts: d.attempts, traceId: d.traceId ?? null },
  };
}

/** Why an integration is unhealthy (docs/operations.md#operational-events), as stored on its health document. */
export type HealthProblem =
  | { code: 'claimable_too_old'; deliveryId: string; ageSeconds: number }
  | { code: 'outcomes_failing'; failed: number; of: number };

/** `integration.unhealthy` (problems found, none open before) or `integration.recovered` (none left); one per episode, keyed by its start. */
export function integrationHealthEvent(
  owner: { workspaceId: string; integrationId: string },
  unhealthySince: number,
  problems: readonly HealthProblem[],
  now: number,
): OperationalEvent {
  const type = problems.length > 0 ? 'integration.unhealthy' : 'integration.recovered';
  return {
    eventId: `${type}:${owner.integrationId}:${unhealthySince}`,
    type,
    workspaceId: owner.workspaceId,
    integrationId: owner.integrationId,
    at: iso(now),
    detail: problems.length > 0 ? { problems, unhealthySince: iso(unhealthySince) } : { unhealthySince: iso(unhealthySince), recoveredAt: iso(now) },
  };
}
