// The connector's own test, on the in-memory test service: no emulators, no Java. `node --test`
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startTestService } from '@support-desk/connector-sdk/testing';
import * as connector from './connector.mjs';

test('an operator reply is sent once, then its receipt arrives', async () => {
  const service = await startTestService();
  const { key, integrationId } = await service.createIntegration();
  await connector.start({ baseUrl: service.baseUrl, key, subscription: service.subscription(integrationId) });

  const { conversationId } = await connector.sendIncoming({ text: 'Hello', externalConversationId: 'chat-1', externalCustomerId: 'ada' });
  const { deliveryId } = service.reply({ conversationId, text: 'Hi Ada!' });
  const delivery = () => service.deliveries().find((d) => d.deliveryId === deliveryId);
  await service.waitFor(() => delivery()?.receipts.length === 1);

  assert.equal(delivery().status, 'sent');
  assert.equal(delivery().receipts[0].status, 'delivered');
  assert.deepEqual(service.violations({ final: true }), []); // no delivery rule broken
  await connector.stop();
  await service.close();
});
