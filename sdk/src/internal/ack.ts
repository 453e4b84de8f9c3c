/**
 * Acknowledge or redeliver: one rule for pulled messages (`runPullLoop`) and pushed requests
 * (`createPushHandler`), from what `processDelivery` returned or threw.
 */
import { ConnectorApiError, InvalidNotificationError } from '../errors.js';
import type { ProcessDeliveryResult } from './results.js';

/** `ack`: Pub/Sub forgets the message. `nack`: Pub/Sub delivers it again (after its own backoff). */
export type AckAction = 'ack' | 'nack';

/**
 * True for trouble that may be over on the next attempt, after the SDK's own retries: no answer
 * (network error, timeout), 429, or a 5xx (503 `lease_busy` / `retry_delayed` / `deadline_exceeded`,
 * 502 / 504 from the front end).
 */
export function isTransientError(error: unknown): boolean {
  return error instanceof ConnectorApiError && (error.status === undefined || error.status === 429 || error.status >= 500);
}

/**
 * What to do with the notification after `processDelivery`:
 *
 * | `processDelivery`                                                        | action |
 * |--------------------------------------------------------------------------|--------|
 * | returned any result (`sent`, `skipped`, `already_finished`, `retry_scheduled`, `failed`, `unknown`) | ack |
 * | the notification does not parse (`InvalidNotificationError`)              | ack    |
 * | threw a transient error (`isTransientError`: network, timeout, 429, 5xx)  | nack   |
 * | threw anything else (400/401/403/404/409, `DeliveryReportError`, a bug)   | ack    |
 *
 * Every result is acked because the service owns what happens next: `skipped`
 * (`waiting_for_previous`) and `retry_scheduled` are notified again by the service itself. A
 * 404 (a delivery of another integration, or none) or a 401/403 (a revoked key, an inactive
 * integration) will not get better by redelivery; the pending list (`deliveries.pendingItems()`)
 * finds the delivery again once the cause is fixed.
 */
export function ackActionFor(outcome: { result: ProcessDeliveryResult } | { error: unknown }): AckAction {
  if ('result' in outcome) return 'ack';
  if (outcome.error instanceof InvalidNotificationError) return 'ack';
  return isTransientError(outcome.error) ? 'nack' : 'ack';
}
