/**
 * Where the SDK end-to-end scenarios run (decision 16, parity): the emulator stack (default), or
 * the SDK's own test service (`SDK_E2E_TARGET=test-service`, the jest project `kit`, run by `npm
 * test` beside the unit tests). The helpers (./helpers.ts) do each step on the chosen target, so one
 * suite file passes on both: an integration, a conversation, an operator reply, its notification,
 * and what the tests inspect of a delivery.
 */
import type { DocumentData } from 'firebase-admin/firestore';
import { startTestService, type DeliveryView, type TestService } from '../../src/testing/index.js';

/** True when the scenarios run against the test service instead of the emulator stack. */
export const onTestService = process.env.SDK_E2E_TARGET === 'test-service';

let service: TestService | undefined;

// One test service per suite file, started before the file's own hooks (registered first) and
// closed after them.
if (onTestService) {
  beforeAll(async () => {
    service = await startTestService();
  });
  afterAll(async () => {
    await service?.close();
  });
}

/** The running test service of this file. */
export function testService(): TestService {
  if (service === undefined) throw new Error('the test service is not started (SDK_E2E_TARGET=test-service, inside tests or hooks)');
  return service;
}

/** A delivery as the emulator tests read its record (`readDeliveryDoc`): the fields the test service shows too. */
export function deliveryDocOf(view: DeliveryView): DocumentData {
  return {
    deliveryId: view.deliveryId,
    status: view.status,
    attempts: view.attempts.filter((a) => a.event === 'claimed').length,
    providerMessageIds: [...view.providerMessageIds],
    error: view.failure === undefined ? null : { outcome: view.failure.outcome, code: view.failure.code },
    notBefore: view.notBefore,
    lastFail: view.lastFail,
  };
}

/** A delivery as the emulator tests read the reply's mirror (`waitForMirror`). */
export function mirrorOf(view: DeliveryView): DocumentData {
  const { deliveryId, status, providerMessageIds, error } = deliveryDocOf(view);
  return { deliveryId, status, providerMessageIds, error, ...(view.receipts.length > 0 ? { receipt: view.receipts.at(-1) } : {}) };
}
