/**
 * The example connector (examples/connector) after the send, on the test service: its fake provider
 * edits and deletes the replies it sent when the operator asks, and its simulated customer edits,
 * deletes, types and reacts through the SDK. The example is plain JS; it imports the SDK by its
 * package name, mapped here to the SDK's sources.
 */
import { join, resolve } from 'node:path';
import { ProviderPermanentError } from '../../src/index.js';
import { startTestService, type TestService } from '../../src/testing/index.js';

jest.mock('@support-desk/connector-sdk', () => jest.requireActual('../../src/index'), { virtual: true });

const DIR = join(resolve(__dirname, '..', '..', '..'), 'examples', 'connector');

interface ChannelMessage {
  text?: string;
  deleted?: boolean;
}
type Send = ((input: unknown) => Promise<{ providerMessageIds: string[] }>) & {
  edit(input: unknown): Promise<undefined>;
  unsend(input: unknown): Promise<undefined>;
  message(id: string): ChannelMessage | undefined;
};
interface Customer {
  afterStartup(eventId: string, text: string): Promise<void>;
  reactToReply(providerMessageId: string): Promise<void>;
}
interface ExampleEvent {
  type: string;
  event?: string;
  outcome?: string;
  result?: { kind: string; deliveryKind?: string; providerMessageIds?: string[] };
}
interface Example {
  createFakeProvider(options: { write: (line: string) => void }): Send;
  simulateCustomer(options: { client: unknown; externalConversationId: string; customerId: string; onEvent: (e: ExampleEvent) => void }): Customer;
  startConnector(options: { client: unknown; subscription: unknown; send: Send; customer?: Customer; onEvent: (e: ExampleEvent) => void; erasureIntervalMs?: number }): { stop(): Promise<void> };
  loadConfig(env: Record<string, string | undefined>, stack: unknown): { customerEvents: boolean };
}

const example = async (): Promise<Example> => (await import(join(DIR, 'connector.js'))) as Example;
const RECIPIENT = { externalConversationId: 'chat-1', externalCustomerId: 'cust-1' };

test('the fake provider edits the text of what it sent, deletes it, and refuses an edit with #noedit', async () => {
  const { createFakeProvider } = await example();
  const lines: string[] = [];
  const send = createFakeProvider({ write: (line) => lines.push(line) });
  const signal = new AbortController().signal;
  const { providerMessageIds } = await send({ text: 'Hello', recipient: RECIPIENT, attachments: [], signal });
  const target = { deliveryId: 'd_1', providerMessageIds };
  expect(send.message(providerMessageIds[0]!)).toEqual({ text: 'Hello' });
  await expect(send.edit({ text: 'Hello again', recipient: RECIPIENT, target, signal })).resolves.toBeUndefined();
  expect(send.message(providerMessageIds[0]!)).toEqual({ text: 'Hello again' });
  await expect(send.edit({ text: 'late #noedit', recipient: RECIPIENT, target, signal })).rejects.toBeInstanceOf(ProviderPermanentError);
  await expect(send.unsend({ recipient: RECIPIENT, target, signal })).resolves.toBeUndefined();
  expect(send.message(providerMessageIds[0]!)).toEqual({ deleted: true });
  expect(lines.at(-1)).toBe(`[fake-provider] to chat-1: deleted ${providerMessageIds[0]}`);
});

test('CUSTOMER_EVENTS=on turns the simulated customer on (off by default)', async () => {
  const { loadConfig } = await example();
  const stack = { apiBaseUrl: 'http://127.0.0.1:1', projectId: 'p', pubsubEmulatorHost: '127.0.0.1:2' };
  expect(loadConfig({ INTEGRATION_KEY: 'k' }, stack).customerEvents).toBe(false);
  expect(loadConfig({ INTEGRATION_KEY: 'k', CUSTOMER_EVENTS: 'on' }, stack).customerEvents).toBe(true);
});

describe('on the test service', () => {
  let service: TestService;
  beforeEach(async () => {
    service = await startTestService();
  });
  afterEach(() => service.close());

  test('the operator edits and unsends a reply the example sent; the customer edits, deletes, types and reacts', async () => {
    const { createFakeProvider, simulateCustomer, startConnector } = await example();
    const { ConnectorClient } = await import('../../src/index.js');
    const integration = await service.createIntegration({ lifecycle: { edit: { windowSeconds: 900 }, unsend: { windowSeconds: 900 } } });
    const client = new ConnectorClient({ integrationKey: integration.key, baseUrl: service.baseUrl });
    const events: ExampleEvent[] = [];
    const onEvent = (e: ExampleEvent): void => void events.push(e);
    const opened = await client.messages.send({ eventId: 'startup-1', externalConversationId: 'chat-1', sender: { externalId: 'cust-1' }, text: 'My order has not arived' });
    const customer = simulateCustomer({ client, externalConversationId: 'chat-1', customerId: 'cust-1', onEvent });
    await customer.afterStartup('startup-1', 'My order has not arived');
    expect(events.filter((e) => e.type === 'customer_event').map((e) => [e.event, e.outcome])).toEqual([
      ['edited', 'applied'],
      ['sent', 'applied'],
      ['deleted', 'applied'],
      ['typing', 'applied'],
    ]);
    const [first, mistake] = service.messages({ conversationId: opened.conversationId });
    expect(first).toMatchObject({ text: 'My order has not arived', edits: [{ text: 'My order has not arived (order #1234, placed on Monday)' }] });
    // Deleted by the channel's id it was sent with.
    expect(mistake).toMatchObject({ providerMessageId: 'chan-startup-1:mistake', deleted: { at: expect.any(Number) }, edits: [] });
    expect(mistake).not.toHaveProperty('text');
    expect(service.typing()).toHaveLength(1);

    const send = createFakeProvider({ write: () => undefined });
    const connector = startConnector({ client, subscription: service.subscription(integration.integrationId), send, customer, onEvent });
    try {
      const reply = service.reply({ conversationId: opened.conversationId, text: 'It ships today' });
      await service.waitFor(() => (service.replies({ conversationId: opened.conversationId })[0]?.reactions.length ?? 0) > 0, 10_000);
      const ids = service.deliveries({ conversationId: opened.conversationId }).find((d) => d.deliveryId === reply.deliveryId)?.providerMessageIds ?? [];
      expect(service.replies({ conversationId: opened.conversationId })[0]?.reactions).toEqual([{ emoji: '👍', senderExternalId: 'cust-1', at: expect.any(Number) }]);

      const edit = service.edit(reply.messageId, 'It ships tomorrow');
      await service.waitFor(() => service.deliveries().some((d) => d.deliveryId === edit.deliveryId && d.status === 'sent'), 10_000);
      expect(send.message(ids[0]!)).toEqual({ text: 'It ships tomorrow' });
      const unsend = service.unsend(reply.messageId);
      await service.waitFor(() => service.replies({ conversationId: opened.conversationId })[0]?.unsent !== undefined, 10_000);
      expect(send.message(ids[0]!)).toEqual({ deleted: true });
      expect(service.deliveries().find((d) => d.deliveryId === unsend.deliveryId)?.providerMessageIds).toEqual(ids);
      // The loop reports the unsend once complete has answered.
      for (let i = 0; i < 100 && events.filter((e) => e.type === 'handled').length < 3; i += 1) await new Promise((done) => setTimeout(done, 20));
      // The edit and the unsend are not replies: no receipt, no reaction for them.
      expect(events.filter((e) => e.type === 'customer_event' && e.event === 'reaction')).toHaveLength(1);
      expect(events.filter((e) => e.type === 'handled').map((e) => e.result?.deliveryKind ?? 'reply')).toEqual(['reply', 'edit', 'unsend']);
      expect(service.violations()).toEqual([]);
    } finally {
      await connector.stop();
    }
  });
});
