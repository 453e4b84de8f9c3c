/**
 * Conversations the desk starts in the test service and the SDK (docs/contract.md#conversations-the-desk-starts):
 * `startConversation()` decided by the service's own rule (refusals included), the SDK's `send` of
 * a start (the address, `input.start`, the thread it returns passed to `complete`), the thread's
 * messages then joining the conversation, a second start to the address reused, and a start whose
 * `send` returns no thread failed `unknown`; a failed start resent as a start; the operator's reply in a
 * started conversation that joined its thread following `mergedInto`. Through real HTTP with the SDK's client.
 */
import { ConnectorClient, ProviderPermanentError, type ProviderSendInput } from '../../../src/index.js';
import { startTestService, type CreatedIntegration, type TestService } from '../../../src/testing/index.js';

let service: TestService;
let integration: CreatedIntegration;
let client: ConnectorClient;

beforeEach(async () => {
  service = await startTestService();
  integration = await service.createIntegration({ conversations: { start: { addressKinds: ['email'] } } });
  client = new ConnectorClient({ integrationKey: integration.key, baseUrl: service.baseUrl, retry: 0 });
});
afterEach(() => service.close());

test('a start: send gets the address, returns the thread; the answer joins it; the next start to the address is a reply', async () => {
  const started = service.startConversation({ integrationId: integration.integrationId, to: { kind: 'email', value: 'ana@example.com' }, text: 'Your order is ready' });
  expect(started.result).toEqual({ conversationId: expect.stringMatching(/^c_/) as string, reused: false });
  const calls: ProviderSendInput[] = [];
  const result = await client.processDelivery(started.deliveryId as string, (input) => {
    calls.push(input);
    return { providerMessageIds: ['mail-1'], conversation: { externalConversationId: 'thread-1', externalCustomerId: 'ana@example.com' } };
  });
  expect(result.kind).toBe('sent');
  expect(calls[0]).toMatchObject({ text: 'Your order is ready', start: {}, recipient: { externalConversationId: '', externalCustomerId: '', address: { kind: 'email', value: 'ana@example.com' } }, attachments: [] });

  const answer = await client.messages.send({ eventId: 'm-1', externalConversationId: 'thread-1', sender: { externalId: 'ana@example.com' }, text: 'Thanks' });
  const again = service.startConversation({ integrationId: integration.integrationId, to: { kind: 'email', value: 'ana@example.com' }, text: 'One more thing' });
  expect(again.result).toEqual({ conversationId: answer.conversationId, reused: true });
  const replyCalls: ProviderSendInput[] = [];
  await client.processDelivery(again.deliveryId as string, (input) => {
    replyCalls.push(input);
    return ['mail-2'];
  });
  expect(replyCalls[0]).toMatchObject({ text: 'One more thing', recipient: { externalConversationId: 'thread-1', externalCustomerId: 'ana@example.com' } });
  expect(replyCalls[0]).not.toHaveProperty('start');
});

test('refused by the service rule: kind not allowed, bad address, starts off', async () => {
  expect(service.startConversation({ integrationId: integration.integrationId, to: { kind: 'phone', value: '+4915112345678' }, text: 'x' }).error?.code).toBe('address_kind_not_allowed');
  expect(service.startConversation({ integrationId: integration.integrationId, to: { kind: 'email', value: 'nobody' }, text: 'x' }).error?.code).toBe('invalid_address');
  const plain = await service.createIntegration();
  expect(service.startConversation({ integrationId: plain.integrationId, to: { kind: 'email', value: 'a@example.com' }, text: 'x' }).error?.code).toBe('starts_disabled');
});

test('a send that returns no thread: unknown start_without_conversation, never completed', async () => {
  const started = service.startConversation({ integrationId: integration.integrationId, to: { kind: 'email', value: 'bo@example.com' }, text: 'Hi' });
  const result = await client.processDelivery(started.deliveryId as string, () => ['mail-3']);
  expect(result).toMatchObject({ kind: 'unknown', code: 'start_without_conversation' });
});

test('a failed start is resent as a start: the new delivery claims the address again, and its complete joins the thread', async () => {
  const started = service.startConversation({ integrationId: integration.integrationId, to: { kind: 'email', value: 'cy@example.com' }, text: 'Your parcel' });
  const failed = await client.processDelivery(started.deliveryId as string, () => {
    throw new ProviderPermanentError('mailbox unavailable', { code: 'recipient_unreachable' });
  });
  expect(failed).toMatchObject({ kind: 'failed', code: 'recipient_unreachable' });

  const resent = service.resend(started.deliveryId as string);
  const view = service.deliveries({ integrationId: integration.integrationId }).find((d) => d.deliveryId === resent.deliveryId);
  expect(view).toMatchObject({ conversationId: started.result?.conversationId, start: { to: { kind: 'email', value: 'cy@example.com' } }, status: 'queued' });
  expect(view?.start).not.toHaveProperty('thread');
  const calls: ProviderSendInput[] = [];
  const result = await client.processDelivery(resent.deliveryId, (input) => {
    calls.push(input);
    return { providerMessageIds: ['mail-9'], conversation: { externalConversationId: 'thread-cy', externalCustomerId: 'cy@example.com' } };
  });
  expect(result.kind).toBe('sent');
  expect(calls[0]).toMatchObject({ start: {}, text: 'Your parcel', recipient: { address: { kind: 'email', value: 'cy@example.com' } } });
  expect(service.deliveries({ integrationId: integration.integrationId }).find((d) => d.deliveryId === resent.deliveryId)?.start).toEqual({ to: { kind: 'email', value: 'cy@example.com' }, thread: { externalConversationId: 'thread-cy', externalCustomerId: 'cy@example.com' } });
});

test("after the start joined its thread, the operator's reply in the started conversation follows mergedInto to the thread's conversation", async () => {
  const started = service.startConversation({ integrationId: integration.integrationId, to: { kind: 'email', value: 'di@example.com' }, text: 'Hello Di' });
  await client.processDelivery(started.deliveryId as string, () => ({ providerMessageIds: ['mail-10'], conversation: { externalConversationId: 'thread-di', externalCustomerId: 'di@example.com' } }));
  const answer = await client.messages.send({ eventId: 'm-di', externalConversationId: 'thread-di', sender: { externalId: 'di@example.com' }, text: 'Hi!' });
  expect(answer.conversationId).not.toBe(started.result?.conversationId);

  // The console opens the started conversation, follows `mergedInto`, and replies there: one queue with the customer's answer.
  const followUp = service.reply({ conversationId: started.result?.conversationId as string, text: 'Glad you answered' });
  const view = service.deliveries({ integrationId: integration.integrationId }).find((d) => d.deliveryId === followUp.deliveryId);
  expect(view?.conversationId).toBe(answer.conversationId);
  const calls: ProviderSendInput[] = [];
  await client.processDelivery(followUp.deliveryId, (input) => {
    calls.push(input);
    return ['mail-11'];
  });
  expect(calls[0]).toMatchObject({ text: 'Glad you answered', recipient: { externalConversationId: 'thread-di', externalCustomerId: 'di@example.com' } });
  expect(calls[0]).not.toHaveProperty('start');
});
