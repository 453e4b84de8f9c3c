import { randomUUID } from 'node:crypto';
import { op, sharedConversationFixture, waitForMirror, writeReply, type ConversationSetup } from '../helpers/deliveries';

let setup: ConversationSetup;
sharedConversationFixture((first) => {
  setup = first;
});

test('an operator reply is notified, claimed, started and completed', async () => {
  const messageId = await writeReply(setup, 'We are on it!');
  const [notification] = await setup.topic.pull(1);
  expect(notification).toEqual({
    deliveryId: expect.stringMatching(/^d_/),
    workspaceId: setup.integration.workspaceId,
    integrationId: setup.integration.integrationId,
    conversationId: setup.conversationId,
    messageId,
  });
  const deliveryId = notification!.deliveryId;
  const claim = await op('claim', setup.integration.key, { deliveryId, requestId: randomUUID() });
  expect(claim.status).toBe(200);
  expect(claim.body).toEqual({
    status: 'ready',
    leaseId: expect.any(String),
    leaseExpiresAt: expect.any(Number),
    message: { text: 'We are on it!', recipient: { externalConversationId: setup.externalConversationId, externalCustomerId: setup.customerId } },
  });
  const leaseId = (claim.body as { leaseId: string }).leaseId;
  expect((await op('start', setup.integration.key, { deliveryId, leaseId })).body).toEqual({ status: 'sending' });
  expect((await op('complete', setup.integration.key, { deliveryId, leaseId, providerMessageIds: ['p-1'] })).body).toEqual({ status: 'sent' });
  const mirror = await waitForMirror(setup, messageId, (m) => m.status === 'sent');
  expect(mirror).toMatchObject({ deliveryId, status: 'sent', providerMessageIds: ['p-1'] });
});
