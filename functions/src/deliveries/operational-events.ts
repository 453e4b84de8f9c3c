/**
 * The delivery feature's operational events (docs/operations.md#operational-events), built here
 * and sent by ../platform/operational-events.ts: `delivery.exhausted` (written by ./store.ts
 * `writeRecord` with the transition that ends the delivery, as its plan says), `conversation.blocked` (./blocked.ts), and the
 * integration's `integration.unhealthy` / `integration.recovered` (./health-rollup.ts).
 */
import { iso, type OperationalEvent } from '../platform/operational-events';
import type { DeliveryRecord } from '../rules/record';

/** `delivery.exhausted` of `next`, which ran out of its retry budget or was never claimed (`code`, ../rules/plan.ts `RecordWrite.exhausted`). */
export function exhaustedEvent(next: DeliveryRecord, code: string, now: number): OperationalEvent {
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
