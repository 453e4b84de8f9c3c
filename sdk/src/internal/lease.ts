/**
 * Lease keeping for `processDelivery`: while the provider call runs, the delivery's lease is
 * extended at half of what is left of it (docs/contract.md#connector-rules), on an injected
 * `Clock` so that its timing can be tested without waiting.
 */
import { ConnectorApiError } from '../errors.js';
import type { Clock } from './clock.js';
import type { DeliveriesApi } from './deliveries.js';

/** Never schedule extensions closer together than this (a lease that seems already over, e.g. a skewed clock). */
export const MIN_EXTEND_DELAY_MS = 1_000;
/** setTimeout's largest delay (a longer one fires at once). */
const MAX_TIMER_MS = 2_147_483_647;

/** When to extend a lease that ends at `expiresAt`, seen at `now`: at half of what is left, within the bounds above. */
export function extendDelay(expiresAt: number, now: number): number {
  return Math.min(MAX_TIMER_MS, Math.max(MIN_EXTEND_DELAY_MS, Math.floor((expiresAt - now) / 2)));
}

/** What lease keeping reports: each granted extension, and each failed one (with whether it tries again). */
type LeaseEvent = { type: 'extended'; leaseExpiresAt: number } | { type: 'extend_failed'; error: unknown; willRetry: boolean };

export interface KeepLeaseOptions {
  deliveryId: string;
  leaseId: string;
  /** When the lease ends now (the claim's `leaseExpiresAt`). */
  leaseExpiresAt: number;
  clock: Clock;
  report: (event: LeaseEvent) => void;
  /** Sent on every extend call (docs/contract.md#tracing). */
  traceparent?: string | undefined;
}

/**
 * Keeps the lease alive while the provider call runs: an extension at half of the remaining
 * lease, then again at half of what the extension granted, until `stop()`. A refusal (any 4xx:
 * the lease is lost, at its `LEASE_MAX_MS` limit, or the delivery finished) ends it; a failure after
 * the transport's own retries (network, 503) tries again at half of the time left, while some is.
 * Never throws, and leaves nothing running after `stop()`.
 */
export function keepLeaseAlive(deliveries: Pick<DeliveriesApi, 'extend'>, options: KeepLeaseOptions): { stop(): void } {
  const { deliveryId, leaseId, clock, report, traceparent } = options;
  const controller = new AbortController();
  const call = traceparent === undefined ? { signal: controller.signal } : { signal: controller.signal, traceparent };
  let timer: unknown;
  let expiresAt = options.leaseExpiresAt;
  const schedule = (): void => {
    if (controller.signal.aborted) return;
    timer = clock.setTimeout(() => void extendOnce(), extendDelay(expiresAt, clock.now()));
  };
  const extendOnce = async (): Promise<void> => {
    try {
      const answer = await deliveries.extend({ deliveryId, leaseId }, call);
      expiresAt = Math.max(expiresAt, answer.leaseExpiresAt);
      report({ type: 'extended', leaseExpiresAt: answer.leaseExpiresAt });
      schedule();
    } catch (err) {
      if (controller.signal.aborted) return;
      const refused = err instanceof ConnectorApiError && typeof err.status === 'number' && err.status >= 400 && err.status < 500 && err.status !== 429;
      // Refused: the lease cannot be kept; the provider call goes on and its outcome is reported as usual.
      const willRetry = !refused && expiresAt - clock.now() > MIN_EXTEND_DELAY_MS;
      report({ type: 'extend_failed', error: err, willRetry });
      if (willRetry) schedule();
    }
  };
  schedule();
  return {
    stop() {
      clock.clearTimeout(timer);
      controller.abort(new Error('the provider call ended: no more lease extensions'));
    },
  };
}
