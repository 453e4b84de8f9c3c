/** The operational events' pure parts (docs/operations.md#operational-events). */
import { healthProblems, recentFailures, type IntegrationHealth } from '../../../functions/src/deliveries/health';
import { blockedEvent, exhaustedEvent, integrationHealthEvent } from '../../../functions/src/deliveries/operational-events';
import { decideBlockedSignal } from '../../../functions/src/deliveries/blocked';
import { operationalOutboxId } from '../../../functions/src/platform/operational-events';
import type { DeliveryRecord } from '../../../functions/src/rules/record';

const base: DeliveryRecord = {
  deliveryId: 'd_1', workspaceId: 'w', integrationId: 'i', conversationId: 'c', messageId: 'm', seq: 1, status: 'queued', text: 't',
  attempts: 0, createdAt: 0, updatedAt: 0, notBefore: null, lease: null, leaseHistory: [], waiting: false, completion: null, lastFail: null,
  providerMessageIds: [], error: null, traceId: 'a'.repeat(32),
};

test('delivery.exhausted: the event of a write the plan says exhausted the delivery', () => {
  const failed: DeliveryRecord = { ...base, status: 'failed', attempts: 3, error: { outcome: 'failed', code: 'retry_exhausted' } };
  expect(exhaustedEvent(failed, 'retry_exhausted', 1000)).toEqual({
    eventId: 'delivery.exhausted:d_1', type: 'delivery.exhausted', workspaceId: 'w', integrationId: 'i', conversationId: 'c', deliveryId: 'd_1',
    at: new Date(1000).toISOString(), detail: { code: 'retry_exhausted', attempts: 3, messageId: 'm', traceId: 'a'.repeat(32) },
  });
});

test('conversation.blocked: one eventId per claimable period; the marker is written once per period', () => {
  const d = { ...base, pendingAt: 5000 };
  expect(blockedEvent(d, 5000 + 16 * 60_000)).toMatchObject({ eventId: 'conversation.blocked:d_1:5000', detail: { claimableForSeconds: 960 } });
  expect(decideBlockedSignal(d, 5000)?.next).toMatchObject({ blockedEventFor: 5000 });
  expect(decideBlockedSignal({ ...d, blockedEventFor: 5000 }, 5000)).toBeNull();
  expect(decideBlockedSignal({ ...d, blockedEventFor: 5000, pendingAt: 9000 }, 9000)?.next).toMatchObject({ blockedEventFor: 9000 });
  expect(decideBlockedSignal(base, 5000)).toBeNull();
});

test('the health rule: oldest claimable too old, or more than half of the last 20 outcomes failed', () => {
  expect(recentFailures([1, 2, 3], [4, 5])).toEqual({ failed: 2, of: 5 });
  expect(recentFailures(Array.from({ length: 30 }, (_, i) => 100 + i), [1, 2, 3])).toEqual({ failed: 0, of: 20 });
  expect(recentFailures([], Array.from({ length: 25 }, (_, i) => i))).toEqual({ failed: 20, of: 20 });
  const h = { oldestClaimable: { deliveryId: 'd', since: 0, ageMs: 16 * 60_000 } } as IntegrationHealth;
  expect(healthProblems(h, { failed: 10, of: 20 }, 15 * 60_000)).toEqual([{ code: 'claimable_too_old', deliveryId: 'd', ageSeconds: 960 }]);
  expect(healthProblems({ ...h, oldestClaimable: null }, { failed: 11, of: 20 }, 15 * 60_000)).toEqual([{ code: 'outcomes_failing', failed: 11, of: 20 }]);
  expect(healthProblems({ ...h, oldestClaimable: null }, { failed: 0, of: 0 }, 15 * 60_000)).toEqual([]);
});

test('integration events are keyed by the episode`s start; outbox ids are document ids', () => {
  const owner = { workspaceId: 'w', integrationId: 'i' };
  expect(integrationHealthEvent(owner, 7, [{ code: 'outcomes_failing', failed: 3, of: 4 }], 9).eventId).toBe('integration.unhealthy:i:7');
  expect(integrationHealthEvent(owner, 7, [], 9).eventId).toBe('integration.recovered:i:7');
  expect(operationalOutboxId('conversation.blocked:d_1:5')).toBe('ops_conversation.blocked_d_1_5');
});
