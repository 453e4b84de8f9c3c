/**
 * Channel receipts (docs/contract.md#receipts) through real HTTP: POST /v1/deliveries/receipt on sent
 * deliveries, recorded monotonically on the delivery and mirrored on the reply for the console.
 */
import { randomUUID } from 'node:crypto';
import { createTestIntegration } from '../helpers/stack';
import { claimReady, deliverFully, deliveryDoc, expectApiError, expectOk, expectSent, op, replyAndNotify, sharedConversationFixture, waitForMirror } from '../helpers/deliveries';

let key: string;
const { conversation } = sharedConversationFixture((first) => {
  key = first.integration.key;
});

async function sentReply() {
  const setup = await conversation();
  const reply = await replyAndNotify(setup, `receipt test ${randomUUID().slice(0, 8)}`);
  await deliverFully(key, reply.deliveryId);
  return { setup, ...reply };
}

test('delivered, then read: both recorded in order, mirrored on the reply; the delivery stays sent', async () => {
  const { setup, deliveryId, messageId } = await sentReply();
  const deliveredAt = Date.now() - 5_000;
  expectOk(await op('receipt', key, { deliveryId, status: 'delivered', at: deliveredAt }), { status: 'sent' });
  expect((await deliveryDoc(setup, deliveryId)).receipt).toEqual({ status: 'delivered', at: deliveredAt, code: null, providerMessageId: null });
  expectOk(await op('receipt', key, { deliveryId, status: 'read' }), { status: 'sent' });
  const stored = await deliveryDoc(setup, deliveryId);
  expect(stored).toMatchObject({ status: 'sent', receipt: { status: 'read', code: null } });
  const mirror = await waitForMirror(setup, messageId, (m) => (m.receipt as { status?: string } | undefined)?.status === 'read');
  expect(mirror).toMatchObject({ status: 'sent', receipt: { status: 'read' } });
  expect((mirror.receipt as Record<string, unknown>).code).toBeUndefined();
});

test('read, then a late delivered: no regression, answered 200 all the same', async () => {
  const { setup, deliveryId } = await sentReply();
  expectOk(await op('receipt', key, { deliveryId, status: 'read' }), { status: 'sent' });
  const afterRead = await deliveryDoc(setup, deliveryId);
  expectOk(await op('receipt', key, { deliveryId, status: 'delivered' }), { status: 'sent' });
  expect(await deliveryDoc(setup, deliveryId)).toEqual(afterRead);
});

test('failed after sent is recorded with its code (and mirrored); a receipt without the code is 400', async () => {
  const { setup, deliveryId, messageId } = await sentReply();
  expectApiError(await op('receipt', key, { deliveryId, status: 'failed' }), 400, 'invalid_request');
  expectOk(await op('receipt', key, { deliveryId, status: 'failed', code: 'recipient_unreachable', providerMessageId: 'p-1' }), { status: 'sent' });
  expect((await deliveryDoc(setup, deliveryId)).receipt).toMatchObject({ status: 'failed', code: 'recipient_unreachable', providerMessageId: 'p-1' });
  const mirror = await waitForMirror(setup, messageId, (m) => (m.receipt as { status?: string } | undefined)?.status === 'failed');
  expect(mirror.receipt).toMatchObject({ status: 'failed', code: 'recipient_unreachable' });
});

test('a receipt on a delivery that is not sent is 409 delivery_not_sent, and nothing is written', async () => {
  const setup = await conversation();
  const { deliveryId } = await replyAndNotify(setup, 'not sent yet');
  const queued = await deliveryDoc(setup, deliveryId);
  expectApiError(await op('receipt', key, { deliveryId, status: 'delivered' }), 409, 'delivery_not_sent');
  const claim = await claimReady(key, deliveryId);
  expectApiError(await op('receipt', key, { deliveryId, status: 'read' }), 409, 'delivery_not_sent');
  expect((await deliveryDoc(setup, deliveryId)).receipt).toEqual(queued.receipt);
  expectSent(await op('fail', key, { deliveryId, leaseId: claim.leaseId, outcome: 'failed', code: 'blocked' }), deliveryId, 'failed');
  expectApiError(await op('receipt', key, { deliveryId, status: 'delivered' }), 409, 'delivery_not_sent');
});

test("another integration's delivery is 404 delivery_not_found, like an unknown id; unknown fields are 400", async () => {
  const { deliveryId } = await sentReply();
  const other = await createTestIntegration();
  expectApiError(await op('receipt', other.key, { deliveryId, status: 'delivered' }), 404, 'delivery_not_found');
  expectApiError(await op('receipt', key, { deliveryId: `d_${randomUUID()}`, status: 'delivered' }), 404, 'delivery_not_found');
  expectApiError(await op('receipt', key, { deliveryId, status: 'delivered', leaseId: 'x' }), 400, 'invalid_request');
  expectApiError(await op('receipt', key, { deliveryId, status: 'seen' }), 400, 'invalid_request');
});
