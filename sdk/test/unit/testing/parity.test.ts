/**
 * What the test service shows so that the SDK's end-to-end scenarios run on it as on the emulator
 * stack (decision 16, sdk/test/e2e/target.ts), through real HTTP on loopback: inactive
 * integrations, what a stored message holds, the sweeper as of a time, an erasure's audit, arbitrary
 * data on the topic, a delivery's lease and files.
 */
import { createHash } from 'node:crypto';
import { ConnectorClient } from '../../../src/index.js';
import { startTestService, type CreatedIntegration, type TestService } from '../../../src/testing/index.js';
import { jpeg, png, webpExtended, webpLossless, webpLossy } from '../../../../test/unit/fixtures/image-bytes';

let clock = Date.parse('2026-01-01T00:00:00Z');
let service: TestService;
let integration: CreatedIntegration;
let client: ConnectorClient;

beforeEach(async () => {
  clock = Date.parse('2026-01-01T00:00:00Z');
  service = await startTestService({ now: () => clock });
  integration = await service.createIntegration({ attachments: true });
  client = new ConnectorClient({ integrationKey: integration.key, baseUrl: service.baseUrl, retry: 0 });
});
afterEach(() => service.close());

const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

test('an inactive integration is 403 integration_inactive on every operation; an unknown key is still 401; workspaceId is kept', async () => {
  const inactive = await service.createIntegration({ active: false, workspaceId: integration.workspaceId });
  expect(inactive.workspaceId).toBe(integration.workspaceId);
  const other = new ConnectorClient({ integrationKey: inactive.key, baseUrl: service.baseUrl, retry: 0 });
  await expect(other.messages.send({ externalConversationId: 'c', sender: { externalId: 'x' }, text: 'hi' })).rejects.toMatchObject({ status: 403, code: 'integration_inactive' });
  await expect(other.deliveries.claim({ deliveryId: 'd_x' })).rejects.toMatchObject({ status: 403, code: 'integration_inactive' });
  await expect(other.erasures.pending()).rejects.toMatchObject({ status: 403, code: 'integration_inactive' });
  expect(service.messages({ integrationId: inactive.integrationId })).toEqual([]);
  const unknown = new ConnectorClient({ integrationKey: `sdk_test_${'B'.repeat(43)}`, baseUrl: service.baseUrl, retry: 0 });
  await expect(unknown.deliveries.claim({ deliveryId: 'd_x' })).rejects.toMatchObject({ status: 401, code: 'invalid_key' });
});

test('messages(): the sender with the customer it is stored under (none for an alert); each image with its header dimensions and the SHA-256 of the bytes', async () => {
  const images = [png(2, 3), jpeg(4, 5), webpLossless(6, 7), webpLossy(8, 9), webpExtended(10, 11)];
  const sent = await client.messages.send({ externalConversationId: 'chat-1', sender: { externalId: 'cust-1', displayName: 'Ada' }, text: 'see', images: images.slice(0, 3).map((data) => ({ data })) });
  const more = await client.messages.send({ externalConversationId: 'chat-1', sender: { externalId: 'cust-1' }, images: images.slice(3).map((data) => ({ data })) });
  const alert = await client.messages.send({ externalConversationId: 'alerts', sender: { externalId: 'monitoring', kind: 'service' }, text: 'latency' });
  const [first, second] = service.messages({ conversationId: sent.conversationId });
  expect(first).toMatchObject({ messageId: sent.messageId, sender: { externalId: 'cust-1', displayName: 'Ada', kind: 'customer', customerId: expect.stringMatching(/^u_/) } });
  expect(first?.images.map(({ contentType, width, height, sha256: hash }) => [contentType, width, height, hash])).toEqual([
    ['image/png', 2, 3, sha256(images[0]!)],
    ['image/jpeg', 4, 5, sha256(images[1]!)],
    ['image/webp', 6, 7, sha256(images[2]!)],
  ]);
  expect(second).toMatchObject({ messageId: more.messageId, sender: { displayName: null, customerId: first?.sender.customerId } });
  expect(second?.images.map(({ width, height }) => [width, height])).toEqual([
    [8, 9],
    [10, 11],
  ]);
  expect(service.messages({ conversationId: alert.conversationId })[0]?.sender).toEqual({ externalId: 'monitoring', displayName: null, kind: 'service', customerId: null });
  // A PNG signature without its IHDR chunk has no dimensions: 400 invalid_image, as the service answers.
  await expect(client.messages.send({ externalConversationId: 'chat-2', sender: { externalId: 'x' }, images: [{ data: png(2, 3).subarray(0, 12) }] })).rejects.toMatchObject({ status: 400, code: 'invalid_image' });
});

test('sweep(at): a lease expires as of `at`, not before; an extended lease survives its original expiry; deliveries() shows the lease and the files', async () => {
  const conversationId = (await client.messages.send({ externalConversationId: 'chat-s', sender: { externalId: 'c' }, text: 'hi' })).conversationId;
  const reply = service.reply({ conversationId, text: 'Invoice', files: [{ fileName: 'a.pdf', contentType: 'application/pdf', data: Buffer.from('%PDF-1.7') }] });
  const view = () => service.deliveries({ conversationId }).find((d) => d.deliveryId === reply.deliveryId);
  expect(view()).toMatchObject({ lease: null, attachments: [{ attachmentId: expect.any(String), name: 'a.pdf', contentType: 'application/pdf', size: 8, sha256: sha256(Buffer.from('%PDF-1.7')) }] });
  const claim = await client.deliveries.claim({ deliveryId: reply.deliveryId });
  if (claim.status !== 'ready') throw new Error('not ready');
  expect(view()?.lease).toEqual({ expiresAt: claim.leaseExpiresAt });
  await client.deliveries.start({ deliveryId: reply.deliveryId, leaseId: claim.leaseId });
  service.sweep(claim.leaseExpiresAt - 1);
  expect(view()?.status).toBe('sending');
  clock += 10_000;
  const extended = await client.deliveries.extend({ deliveryId: reply.deliveryId, leaseId: claim.leaseId });
  expect(view()?.lease).toEqual({ expiresAt: extended.leaseExpiresAt });
  service.sweep(claim.leaseExpiresAt + 1_000);
  expect(view()?.status).toBe('sending');
  service.sweep(extended.leaseExpiresAt);
  expect(view()).toMatchObject({ status: 'unknown', failure: { code: 'lease_expired_after_start' }, lease: { expiresAt: extended.leaseExpiresAt } });
});

test('erasures(): the chats sorted, what went (a sole-customer conversation entirely), the first acknowledgement kept', async () => {
  const chats = ['chat-b', 'chat-a', 'chat-c'];
  for (const chat of chats) await client.messages.send({ externalConversationId: chat, sender: { externalId: 'cust-1' }, text: 'forget me' });
  // chat-c has another customer too: only cust-1's message goes there.
  const shared = await client.messages.send({ externalConversationId: 'chat-c', sender: { externalId: 'cust-2' }, text: 'me too' });
  const soleConversation = service.messages({ integrationId: integration.integrationId }).find((m) => m.externalConversationId === 'chat-a')?.conversationId ?? '';
  service.reply({ conversationId: soleConversation, text: 'a reply' });
  const { erasureId } = service.erase(integration.integrationId, 'cust-1');
  expect(service.erasures(integration.integrationId)).toEqual([
    { erasureId, integrationId: integration.integrationId, externalCustomerId: 'cust-1', externalConversationIds: ['chat-a', 'chat-b', 'chat-c'], requestedAt: clock, counts: { conversations: 2, messages: 4 }, acknowledged: false, acknowledgedAt: null },
  ]);
  expect(service.messages({ integrationId: integration.integrationId }).map((m) => m.messageId)).toEqual([shared.messageId]);
  const first = clock;
  await client.erasures.ack({ erasureId });
  clock += 5_000;
  await client.erasures.ack({ erasureId });
  expect(service.erasures(integration.integrationId)[0]).toMatchObject({ acknowledged: true, acknowledgedAt: first });
});

test('publish(): arbitrary data reaches the subscriptions; a closed subscription is not open', async () => {
  const subscription = service.subscription(integration.integrationId);
  const received: { data: Buffer; attributes: Record<string, string>; ack(): void }[] = [];
  subscription.on('message', (m) => {
    const message = m as (typeof received)[number];
    received.push(message);
    message.ack();
  });
  expect(subscription.isOpen).toBe(true);
  service.publish(integration.integrationId, Buffer.from('not json'), { source: 'elsewhere' });
  await service.waitFor(() => received.length === 1);
  expect(received[0]?.data.toString('utf8')).toBe('not json');
  expect(received[0]?.attributes).toEqual({ source: 'elsewhere' });
  expect(subscription.outstanding).toBe(0);
  await subscription.close();
  expect(subscription.isOpen).toBe(false);
});
