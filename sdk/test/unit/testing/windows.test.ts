/**
 * The test service's reply windows and template replies (docs/contract.md#windows), on the
 * service's own rules (generated copies of functions/src/rules/window.ts and
 * functions/src/contract/templates.ts): the window from the customer's `sentAt` on the service's
 * clock, a free-form reply refused once it closed, a template reply delivered with `template` and
 * its filled text to `send`, an invalid template refused, and the connector's `window_closed` fail
 * closing the window. Through real HTTP with the SDK's client; the service clock is a variable.
 */
import { ConnectorClient, ProviderPermanentError, type ProviderSendInput } from '../../../src/index.js';
import { startTestService, type CreatedIntegration, type TestService } from '../../../src/testing/index.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const DAY_MS = 86_400_000;
let clock = T0;
let service: TestService;
let integration: CreatedIntegration;
let client: ConnectorClient;

const ORDER = { name: 'order_update', language: 'en-US', params: [{ name: 'order' }], preview: 'Your order {{order}} has shipped.' };

beforeEach(async () => {
  clock = T0;
  service = await startTestService({ now: () => clock });
  integration = await service.createIntegration();
  client = new ConnectorClient({ integrationKey: integration.key, baseUrl: service.baseUrl, retry: 0 });
  await client.channel.update({ window: { seconds: 86_400 }, templates: [ORDER] });
});
afterEach(() => service.close());

async function customerWrites(sentAt?: number): Promise<string> {
  const sent = await client.messages.send({ eventId: `e-${clock}-${sentAt ?? 'now'}`, externalConversationId: 'chat-1', sender: { externalId: 'cust-1' }, text: 'Hello', ...(sentAt === undefined ? {} : { sentAt }) });
  return sent.conversationId;
}

const codeOf = (fn: () => unknown): unknown => {
  try {
    fn();
  } catch (error) {
    return (error as { code?: unknown }).code;
  }
  return 'no error';
};

test("the window counts from the customer's sentAt: a free-form reply goes before it closes and is refused after", async () => {
  const conversationId = await customerWrites(T0 - 3_600_000);
  // Closes at sentAt + 24 h - 60 s: 23 h - 60 s from now.
  clock = T0 + 23 * 3_600_000 - 61_000;
  expect(service.reply({ conversationId, text: 'In time' }).deliveryId).toMatch(/^d_/);
  clock += 1000;
  expect(codeOf(() => service.reply({ conversationId, text: 'Too late' }))).toBe('window_closed');
  // The customer writes again: the window opens again from that message.
  await customerWrites();
  expect(service.reply({ conversationId, text: 'Welcome back' }).deliveryId).toMatch(/^d_/);
});

test('a template reply goes out of the window: send gets the template and its filled preview', async () => {
  const conversationId = await customerWrites(T0 - 2 * DAY_MS);
  const created = service.reply({ conversationId, template: { name: 'order_update', language: 'en-us', params: { order: 'A-1' } } });
  let input: ProviderSendInput | undefined;
  const result = await client.processDelivery(created.deliveryId, (i) => {
    input = i;
    return ['wamid.1'];
  });
  expect(result.kind).toBe('sent');
  expect(input?.text).toBe('Your order A-1 has shipped.');
  expect(input?.template).toEqual({ name: 'order_update', language: 'en-US', params: { order: 'A-1' } });
});

test('a free-form reply has no template key; an unknown template or wrong params are refused template_invalid', async () => {
  const conversationId = await customerWrites();
  const created = service.reply({ conversationId, text: 'Hi' });
  let input: ProviderSendInput | undefined;
  await client.processDelivery(created.deliveryId, (i) => {
    input = i;
    return ['wamid.2'];
  });
  expect(input !== undefined && 'template' in input).toBe(false);
  expect(codeOf(() => service.reply({ conversationId, template: { name: 'nope', language: 'en-US', params: {} } }))).toBe('template_invalid');
  expect(codeOf(() => service.reply({ conversationId, template: { name: 'order_update', language: 'en-US', params: {} } }))).toBe('template_invalid');
  expect(codeOf(() => service.reply({ conversationId, template: { name: 'order_update', language: 'en-US', params: { order: 'A', x: 'y' } } }))).toBe('template_invalid');
});

test("the connector's window_closed fail closes the window at once", async () => {
  const conversationId = await customerWrites();
  const created = service.reply({ conversationId, text: 'Here you go' });
  const result = await client.processDelivery(created.deliveryId, () => {
    throw new ProviderPermanentError('131047 re-engagement message', { code: 'window_closed' });
  });
  expect(result).toMatchObject({ kind: 'failed' });
  expect(codeOf(() => service.reply({ conversationId, text: 'Still there?' }))).toBe('window_closed');
  expect(service.reply({ conversationId, template: { name: 'order_update', language: 'en-US', params: { order: 'A-2' } } }).deliveryId).toMatch(/^d_/);
});

test('an integration without a channel: no window, every reply goes', async () => {
  const plain = await service.createIntegration();
  const plainClient = new ConnectorClient({ integrationKey: plain.key, baseUrl: service.baseUrl, retry: 0 });
  const sent = await plainClient.messages.send({ eventId: 'p-1', externalConversationId: 'chat-p', sender: { externalId: 'cust-p' }, text: 'Hello', sentAt: T0 - 10 * DAY_MS });
  expect(service.reply({ conversationId: sent.conversationId, text: 'Late but fine' }).deliveryId).toMatch(/^d_/);
});
