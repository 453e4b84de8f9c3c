/**
 * Erasures on the connector's side, end to end on the emulator stack or the test service
 * (./target.ts): an admin's erasure (written as the console writes it; the test service's `erase`)
 * runs in the service, then the SDK lists it (`erasures.pending`,
 * `pendingItems`), `processErasures` purges and acknowledges it, and the audit shows the
 * acknowledgement; another integration cannot see or acknowledge it. Then the example connector
 * (examples/connector, imported) purges its own log of the customer and acknowledges.
 */
import { randomUUID } from 'node:crypto';
import { join, resolve } from 'node:path';
import { NotFoundError, processErasures, type ErasureNotice } from '../../src/index.js';
import {
  closePubSub,
  closeStack,
  createRawTopic,
  createTestIntegration,
  exampleConnectionEnv,
  exampleDeps,
  erasureAudit,
  erasureDone,
  eventually,
  requestErasure,
  sdkClient,
  waitForMirror,
  writeReply,
  type TestIntegration,
} from './helpers';

jest.setTimeout(120_000);

/** When the connector first acknowledged the erasure (undefined before). */
const acknowledgedAtOf = async (integration: TestIntegration, erasureId: string): Promise<unknown> => (await erasureAudit(integration, erasureId))?.acknowledgedAt;

afterAll(async () => {
  await closePubSub();
  await closeStack();
});

test('pending lists a finished erasure with its conversations; processErasures purges then acks; foreign acks are 404', async () => {
  const integration = await createTestIntegration();
  const other = await createTestIntegration({ workspaceId: integration.workspaceId });
  const client = sdkClient(integration.key);
  const customer = `cust-${randomUUID().slice(0, 8)}`;
  const chats = [`chat-${randomUUID()}`, `chat-${randomUUID()}`].sort();
  for (const chat of chats) await client.messages.send({ externalConversationId: chat, sender: { externalId: customer }, text: 'please forget me' });

  const erasureId = await requestErasure(integration, customer);
  const audit = await erasureDone(integration, erasureId);
  expect(audit.counts).toMatchObject({ conversations: 2, messages: 2 });

  // One page, then the iterator: the same erasure, with the customer and both chats.
  const page = await client.erasures.pending({ limit: 10 });
  const expected: ErasureNotice = { erasureId, externalCustomerId: customer, externalConversationIds: chats, requestedAt: expect.any(Number) as number };
  expect(page).toEqual({ erasures: [expected], nextCursor: null });
  const listed: ErasureNotice[] = [];
  for await (const e of client.erasures.pendingItems({ limit: 1 })) listed.push(e);
  expect(listed).toEqual([expected]);

  // Another integration of the workspace neither sees nor acknowledges it.
  const otherClient = sdkClient(other.key);
  await expect(otherClient.erasures.pending()).resolves.toEqual({ erasures: [], nextCursor: null });
  await expect(otherClient.erasures.ack({ erasureId })).rejects.toBeInstanceOf(NotFoundError);
  await expect(client.erasures.ack({ erasureId: `er-${randomUUID()}` })).rejects.toMatchObject({ status: 404, code: 'erasure_not_found' });
  expect(await acknowledgedAtOf(integration, erasureId)).toBeUndefined();

  // purge, then ack; a second run finds nothing; a repeated ack is still fine.
  const purged: ErasureNotice[] = [];
  await expect(processErasures(client, (e) => void purged.push(e))).resolves.toEqual({ acknowledged: [erasureId], failed: [] });
  expect(purged).toEqual([expected]);
  const acknowledgedAt = await acknowledgedAtOf(integration, erasureId);
  expect(typeof acknowledgedAt).toBe('number');
  await expect(processErasures(client, (e) => void purged.push(e))).resolves.toEqual({ acknowledged: [], failed: [] });
  await expect(client.erasures.ack({ erasureId })).resolves.toEqual({ acknowledged: true });
  expect(await acknowledgedAtOf(integration, erasureId)).toBe(acknowledgedAt);
});

test('a purge that throws leaves the erasure pending; the next run purges and acks it', async () => {
  const integration = await createTestIntegration();
  const client = sdkClient(integration.key);
  const customer = `cust-${randomUUID().slice(0, 8)}`;
  await client.messages.send({ externalConversationId: `chat-${randomUUID()}`, sender: { externalId: customer }, text: 'hi' });
  const erasureId = await requestErasure(integration, customer);
  await erasureDone(integration, erasureId);
  const first = await processErasures(client, () => {
    throw new Error('our database is down');
  });
  expect(first).toMatchObject({ acknowledged: [], failed: [{ erasureId, step: 'purge' }] });
  expect((await client.erasures.pending()).erasures.map((e) => e.erasureId)).toEqual([erasureId]);
  await expect(processErasures(client, () => undefined)).resolves.toEqual({ acknowledged: [erasureId], failed: [] });
});

/** The parts of examples/connector/connector.js this test uses (the example is plain JS). */
interface ExampleModule {
  loadConfig(env: Record<string, string | undefined>): Record<string, unknown>;
  createFakeProvider(options: { write: (line: string) => void }): unknown;
  runConnector(
    config: Record<string, unknown>,
    deps: { send: unknown; pubsub?: unknown; onEvent: (event: { type: string; erasureId?: string; removed?: unknown; result?: { kind: string } }) => void },
  ): Promise<{
    incoming: { conversationId: string; messageId: string };
    log: { entries(): Array<{ direction: string; externalCustomerId: string; externalConversationId: string }> };
    processErasures(): Promise<void>;
    stop(): Promise<void>;
  }>;
}

test('the example connector purges its log of the erased customer (and keeps the others), then acknowledges', async () => {
  const topic = await createRawTopic({ listen: false });
  const integration = await createTestIntegration({ topic: topic.topicPath });
  const example = (await import(join(resolve(__dirname, '..', '..', '..'), 'examples', 'connector', 'connector.js'))) as ExampleModule;
  const customer = `example-cust-${randomUUID().slice(0, 8)}`;
  const chat = `example-chat-${randomUUID()}`;
  const events: Array<{ type: string; erasureId?: string; removed?: unknown; result?: { kind: string } }> = [];
  const config = example.loadConfig({
    INTEGRATION_KEY: integration.key,
    ...exampleConnectionEnv(topic),
    EXTERNAL_CONVERSATION_ID: chat,
    CUSTOMER_ID: customer,
    STARTUP_TEXT: 'My address is 1 Main St.',
  });
  const connector = await example.runConnector(config, { ...exampleDeps(topic), send: example.createFakeProvider({ write: () => undefined }), onEvent: (e) => events.push(e) });
  try {
    // A reply is delivered, so the log holds the customer's message and our reply to them.
    const conversation = { integration, conversationId: connector.incoming.conversationId };
    const replyId = await writeReply(conversation, 'We will ship it today');
    await waitForMirror(conversation, replyId, (m) => m.status === 'sent');
    await eventually(async () => (connector.log.entries().length === 2 ? true : undefined), 'the reply logged');
    // Another customer's entry stays.
    const client = sdkClient(integration.key);
    const bystander = `chat-${randomUUID()}`;
    await client.messages.send({ externalConversationId: bystander, sender: { externalId: 'someone-else' }, text: 'hi' });
    (connector.log as unknown as { add(e: object): void }).add({ direction: 'in', externalConversationId: bystander, externalCustomerId: 'someone-else', text: 'hi' });

    const erasureId = await requestErasure(integration, customer);
    await erasureDone(integration, erasureId);
    await connector.processErasures();
    expect(events.filter((e) => e.type.startsWith('erasure'))).toEqual([{ type: 'erasure_purged', erasureId, removed: { logEntries: 2, receipts: 1 } }]);
    expect(connector.log.entries().map((e) => e.externalCustomerId)).toEqual(['someone-else']);
    expect(typeof (await acknowledgedAtOf(integration, erasureId))).toBe('number');
  } finally {
    await connector.stop();
    await topic.close();
  }
});
