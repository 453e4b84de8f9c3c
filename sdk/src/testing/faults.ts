/**
 * Faults on demand: answers injected instead of an operation, time passing (the sweeper, a lease
 * running out), a notification again or anything else on the topic, and a corrupted file.
 */
import { injectFault } from './http.js';
import type { Handlers } from './operations.js';
import { sweep } from './outbox.js';
import { deliveryOrThrow, notifyWaiters, type ServiceState } from './state.js';
import type { TestService } from './types.js';

type FaultCalls = Pick<TestService, 'inject' | 'sweep' | 'expireLease' | 'notifyAgain' | 'publish' | 'corruptAttachment'>;

export function faultCalls(state: ServiceState, handlers: Handlers): FaultCalls {
  return {
    inject: (operationId, fault) => injectFault(state, handlers, operationId, fault),

    sweep(at = state.now()) {
      // The sweeper's lease expiry as of `at` (functions/src/deliveries/liveness.ts); the
      // notifications due by the service clock go out as usual.
      state.store.sweep(at);
      sweep(state);
      notifyWaiters(state);
    },

    expireLease(deliveryId) {
      const d = deliveryOrThrow(state, deliveryId);
      if (d.lease === null || (d.status !== 'leased' && d.status !== 'sending')) throw new Error(`test service: delivery ${deliveryId} holds no lease (it is ${d.status})`);
      const at = state.now();
      // The lease ran out just now: the same expiry as its 120 s running out (record.ts `isLeaseLive`: expired at `expiresAt`).
      // A fault, not a rule: the record is changed behind the rules' back, as time passing would.
      state.store.records.set(deliveryId, { ...d, lease: { ...d.lease, expiresAt: Math.min(d.lease.expiresAt, at) } });
      sweep(state);
      notifyWaiters(state);
    },

    notifyAgain: (deliveryId) => state.notifications.publishDelivery(deliveryOrThrow(state, deliveryId)),
    publish: (integrationId, data, attributes) => state.notifications.publish(integrationId, data, attributes),

    corruptAttachment(deliveryId, attachmentId) {
      const d = deliveryOrThrow(state, deliveryId);
      const file = attachmentId === undefined ? d.attachments?.[0] : d.attachments?.find((a) => a.attachmentId === attachmentId);
      const bytes = file === undefined ? undefined : state.files.get(file.attachmentId);
      if (file === undefined || bytes === undefined) throw new Error(`test service: delivery ${deliveryId} has no attachment ${attachmentId ?? ''}`);
      const corrupted = Buffer.from(bytes);
      corrupted[0] = (corrupted[0] ?? 0) ^ 0xff;
      state.files.set(file.attachmentId, corrupted);
    },
  };
}
