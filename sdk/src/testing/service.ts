/**
 * The test service (`@support-desk/connector-sdk/testing`, decision 16): every connector operation
 * of openapi/openapi.yaml served on loopback from memory, with the service's validation (the
 * document's request schemas, ./requests.generated.ts), statuses, error codes and headers, the
 * delivery rules of the real service (its own code: ../internal/rules, generated), the operator's
 * side as calls, faults on demand and inspection. Zero dependencies: `node:` built-ins only.
 *
 * This module only wires the parts: the state (./state.ts), the operations' handlers
 * (./messages.ts, ./delivery-handlers.ts, ./erasures.ts) behind the HTTP front (./http.ts), the
 * operator's side (./operator.ts), the notifications (./notifications.ts), the faults
 * (./faults.ts) and the inspection (./inspection.ts).
 *
 * Lease expiry is applied to every delivery before each request and on a short timer (the real
 * service applies it lazily on each operation and by its sweeper every minute): the same outcome,
 * without waiting for a sweep. Notifications due later (a retry's) are published when the service
 * clock reaches their time.
 */
import { deliveryHandlers } from './delivery-handlers.js';
import { channelHandlers } from './channel.js';
import { erasureHandlers } from './erasures.js';
import { faultCalls } from './faults.js';
import { serve } from './http.js';
import { inspection } from './inspection.js';
import { messageHandlers } from './messages.js';
import type { Handlers } from './operations.js';
import { operatorCalls } from './operator.js';
import { sweep } from './outbox.js';
import { createState, notifyWaiters, type ServiceState } from './state.js';
import type { StartTestServiceOptions, TestService } from './types.js';

/**
 * The integration id a call names, when the test service has it: a missing or unknown one is a
 * mistake in the test, said at once (a subscription of an id nobody publishes to would wait forever).
 */
function knownIntegration(state: ServiceState, integrationId: unknown, call: string): string {
  if (typeof integrationId === 'string' && state.integrations.has(integrationId)) return integrationId;
  const named = typeof integrationId === 'string' ? `'${integrationId}'` : String(integrationId);
  throw new Error(`test service: ${call}(integrationId): no integration ${named} (createIntegration() returns its integrationId)`);
}

/** Starts a test service on loopback. Resolves once it listens (in milliseconds). */
export async function startTestService(options: StartTestServiceOptions = {}): Promise<TestService> {
  const state = createState(options);
  const handlers = { ...messageHandlers(state), ...deliveryHandlers(state), ...erasureHandlers(state), ...channelHandlers(state) } satisfies Handlers;
  const http = await serve(state, handlers, options.port ?? 0);
  const ticker = setInterval(() => {
    sweep(state);
    notifyWaiters(state);
  }, 20);
  ticker.unref();
  return {
    baseUrl: http.baseUrl,
    ...operatorCalls(state),
    subscription: (integrationId) => state.notifications.subscribe(knownIntegration(state, integrationId, 'subscription')),
    pushTo: (integrationId, url) => state.notifications.pushTo(knownIntegration(state, integrationId, 'pushTo'), url),
    ...faultCalls(state, handlers),
    ...inspection(state),
    async close() {
      clearInterval(ticker);
      await state.notifications.close();
      await http.close();
    },
  };
}
