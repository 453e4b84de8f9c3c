/**
 * Reply windows and template replies end to end on the emulator stack or the test service
 * (./target.ts): the connector declares a window and a template with `channel.update`, a template
 * reply reaches its `send` with `template` and the filled preview, and the channel's own
 * `window_closed` refusal (a `ProviderPermanentError` with that code) ends the delivery failed with
 * it. The same assertions on both targets: the test service runs the service's own rules.
 */
import { ProviderPermanentError, type ProviderSendInput } from '../../src/index.js';
import { replyAndWait, sdkDeliveryFixture, startConversation, type RawTopic, type TestIntegration } from './helpers';
import { writeTemplateReply } from './target';
import type { ConnectorClient } from '../../src/index.js';

// The first calls of a run meet cold functions in the emulator; triggers and Pub/Sub add seconds.
jest.setTimeout(120_000);

let topic: RawTopic;
let integration: TestIntegration;
let client: ConnectorClient;
sdkDeliveryFixture((stack) => {
  ({ topic, integration, client } = stack);
});

const ORDER = { name: 'order_update', language: 'en-US', params: [{ name: 'order' }], preview: 'Your order {{order}} has shipped.' };

beforeAll(async () => {
  await client.channel.update({ window: { seconds: 86_400 }, templates: [ORDER] });
});

const deliveryIdOf = (data: Buffer): string => (JSON.parse(data.toString('utf8')) as { deliveryId: string }).deliveryId;

test('a template reply reaches send with its template and the filled preview', async () => {
  const conversation = await startConversation(client, integration);
  const replyId = await writeTemplateReply(conversation, { name: 'order_update', language: 'en-us', params: { order: 'A-1' } });
  const message = await topic.waitFor(replyId);
  const inputs: ProviderSendInput[] = [];
  const result = await client.processDelivery(deliveryIdOf(message.data), (input) => {
    inputs.push(input);
    return ['wamid.t-1'];
  });
  expect(result).toMatchObject({ kind: 'sent' });
  expect(inputs[0]).toMatchObject({ text: 'Your order A-1 has shipped.', template: { name: 'order_update', language: 'en-US', params: { order: 'A-1' } } });
});

test("the channel's window_closed refusal ends the delivery failed with window_closed; a free-form reply has no template", async () => {
  const conversation = await startConversation(client, integration);
  const { message } = await replyAndWait(topic, conversation, 'Here is your answer');
  const inputs: ProviderSendInput[] = [];
  const result = await client.processDelivery(deliveryIdOf(message.data), (input) => {
    inputs.push(input);
    throw new ProviderPermanentError('131047 re-engagement message', { code: 'window_closed' });
  });
  expect(result).toMatchObject({ kind: 'failed', code: 'window_closed', deliveryStatus: 'failed' });
  expect(inputs).toHaveLength(1);
  expect('template' in (inputs[0] as object)).toBe(false);
});
