/**
 * POST /v1/messages through Hosting and the Functions emulator: new events (201), identical
 * retries (200 duplicate), reuse of an eventId with other content (409 event_conflict), what is
 * stored, and tenancy per integration. Concurrent retries: ./concurrent-retries.test.ts.
 */
import { expectAccepted, expectError, expectRequestId } from '../helpers/assertions';
import { MESSAGES_PATH, findCustomers, listMessageDocs, newMessage, readConversationDoc, readMessageDoc } from '../helpers/messages';
import {
  closeStack,
  createTestIntegration,
  functionsUrl,
  listImageFiles,
  messageParts,
  postJson,
  postMultipart,
  workspaceDocPaths,
} from '../helpers/stack';
import { jpeg, png } from '../../unit/fixtures/image-bytes';

jest.setTimeout(60_000);
afterAll(closeStack);

const IMAGE_A = png(64, 48);
const IMAGE_B = jpeg(32, 32);

describe('POST /v1/messages: new events and retries', () => {
  test('a new event is 201 and stores event, conversation, message and customer', async () => {
    const integ = await createTestIntegration();
    const msg = newMessage();
    const res = await postJson(MESSAGES_PATH, msg, { key: integ.key });
    const body = expectAccepted(res, 201);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);

    const sender = msg.sender as { externalId: string };
    const paths = await workspaceDocPaths(integ.workspaceId);
    expect(paths).toHaveLength(5);
    expect(paths).toEqual(
      expect.arrayContaining([
        `integrations/${integ.integrationId}`,
        `conversations/${body.conversationId}`,
        `conversations/${body.conversationId}/messages/${body.messageId}`,
        expect.stringMatching(/^events\/[A-Za-z0-9_-]+$/),
        expect.stringMatching(/^customers\/[A-Za-z0-9_-]+$/),
      ]),
    );

    const stored = await readMessageDoc(integ.workspaceId, body.conversationId, body.messageId);
    expect(stored).toMatchObject({
      direction: 'inbound',
      kind: 'message',
      integrationId: integ.integrationId,
      eventId: msg.eventId,
      text: 'Hello, my order has not arrived.',
      sender: { externalId: sender.externalId, displayName: 'Ada Lovelace', kind: 'customer' },
      images: [],
    });
    const conversation = await readConversationDoc(integ.workspaceId, body.conversationId);
    expect(conversation).toMatchObject({
      integrationId: integ.integrationId,
      externalConversationId: msg.externalConversationId,
      lastCustomerExternalId: sender.externalId,
      lastSenderExternalId: sender.externalId,
    });
    const customers = await findCustomers(integ.workspaceId, sender.externalId);
    expect(customers).toHaveLength(1);
    expect(customers[0]).toMatchObject({ integrationId: integ.integrationId, displayName: 'Ada Lovelace' });
    expect((stored?.sender as { customerId: string }).customerId).toBe(customers[0]?.id);
  });

  test('an identical retry is 200 duplicate with the original ids and writes nothing new', async () => {
    const integ = await createTestIntegration();
    const msg = newMessage();
    const firstRes = await postJson(MESSAGES_PATH, msg, { key: integ.key });
    const first = expectAccepted(firstRes, 201);
    const pathsAfterFirst = await workspaceDocPaths(integ.workspaceId);

    const retry = await postJson(MESSAGES_PATH, msg, { key: integ.key });
    const second = expectAccepted(retry, 200);
    expect(second).toEqual({ ...first, duplicate: true });
    // Each response has its own request id.
    expect(expectRequestId(retry)).not.toBe(expectRequestId(firstRes));
    expect(await workspaceDocPaths(integ.workspaceId)).toEqual(pathsAfterFirst);
    expect(await listMessageDocs(integ.workspaceId, first.conversationId)).toHaveLength(1);
  });

  test('the fingerprint is over parsed content after defaults: key order, whitespace and default kind do not matter', async () => {
    const integ = await createTestIntegration();
    const msg = newMessage();
    const sender = msg.sender as { externalId: string; displayName: string };
    const first = expectAccepted(await postJson(MESSAGES_PATH, msg, { key: integ.key }), 201);
    // Same content: other key order, extra whitespace, `kind` omitted (defaults to customer).
    const reordered = `{ "message": {"text": ${JSON.stringify((msg.message as { text: string }).text)}},
      "sender": {"displayName": ${JSON.stringify(sender.displayName)}, "externalId": ${JSON.stringify(sender.externalId)}},
      "externalConversationId": ${JSON.stringify(msg.externalConversationId)}, "eventId": ${JSON.stringify(msg.eventId)} }`;
    const res = await postJson(MESSAGES_PATH, reordered, { key: integ.key, raw: true });
    expect(expectAccepted(res, 200)).toEqual({ ...first, duplicate: true });
  });

  test('the same event sent as JSON and as multipart without images is the same content', async () => {
    const integ = await createTestIntegration();
    const msg = newMessage();
    const first = expectAccepted(await postJson(MESSAGES_PATH, msg, { key: integ.key }), 201);
    const res = await postMultipart(MESSAGES_PATH, messageParts(msg), { key: integ.key });
    expect(expectAccepted(res, 200)).toEqual({ ...first, duplicate: true });
  });

  const changes: Array<[string, (m: ReturnType<typeof newMessage>) => ReturnType<typeof newMessage>]> = [
    ['text', (m) => ({ ...m, message: { text: 'Something else' } })],
    ['text with trailing space', (m) => ({ ...m, message: { text: `${String(m.message?.text)} ` } })],
    ['externalConversationId', (m) => ({ ...m, externalConversationId: `${String(m.externalConversationId)}-other` })],
    ['sender.externalId', (m) => ({ ...m, sender: { ...m.sender, externalId: 'someone-else' } })],
    ['sender.displayName', (m) => ({ ...m, sender: { ...m.sender, displayName: 'Grace Hopper' } })],
    ['sender.displayName omitted', (m) => ({ ...m, sender: { externalId: m.sender?.externalId, kind: 'customer' } })],
    ['sender.kind', (m) => ({ ...m, sender: { ...m.sender, kind: 'service' } })],
  ];
  test.each(changes)('same eventId with a different %s is 409 event_conflict and writes nothing', async (_name, change) => {
    const integ = await createTestIntegration();
    const msg = newMessage();
    const first = expectAccepted(await postJson(MESSAGES_PATH, msg, { key: integ.key }), 201);
    const pathsAfterFirst = await workspaceDocPaths(integ.workspaceId);

    const res = await postJson(MESSAGES_PATH, change(msg), { key: integ.key });
    const message = expectError(res, 409, 'event_conflict');
    expect(message).toContain(String(msg.eventId));
    expect(await workspaceDocPaths(integ.workspaceId)).toEqual(pathsAfterFirst);
    // The original is still what a retry of the original gets.
    expect(expectAccepted(await postJson(MESSAGES_PATH, msg, { key: integ.key }), 200)).toEqual({ ...first, duplicate: true });
  });
});

describe('POST /v1/messages: images are part of the content fingerprint', () => {
  test('same payload with the same, other, reordered or no images', async () => {
    const integ = await createTestIntegration();
    const msg = newMessage();
    const imagesDir = `workspaces/${integ.workspaceId}`;
    const first = expectAccepted(await postMultipart(MESSAGES_PATH, messageParts(msg, [IMAGE_A, IMAGE_B]), { key: integ.key }), 201);
    const paths = await workspaceDocPaths(integ.workspaceId);
    const files = await listImageFiles(imagesDir);
    expect(files).toHaveLength(2);

    // Identical retry, even with other filenames and declared types: 200 duplicate.
    const retry = await postMultipart(
      MESSAGES_PATH,
      messageParts(msg, [
        { data: IMAGE_A, contentType: 'image/jpeg', filename: 'renamed.jpg' },
        { data: IMAGE_B, contentType: 'image/png', filename: 'other.png' },
      ]),
      { key: integ.key },
    );
    expect(expectAccepted(retry, 200)).toEqual({ ...first, duplicate: true });

    const variants: Array<[string, Buffer[]]> = [
      ['one image replaced', [IMAGE_A, jpeg(33, 32)]],
      ['images reordered', [IMAGE_B, IMAGE_A]],
      ['an image dropped', [IMAGE_A]],
      ['an image added', [IMAGE_A, IMAGE_B, png(2, 2)]],
      ['no images', []],
    ];
    for (const [what, images] of variants) {
      const res = await postMultipart(MESSAGES_PATH, messageParts(msg, images), { key: integ.key });
      expect({ what, response: res.text }).toEqual({ what, response: expect.stringContaining('event_conflict') });
      expectError(res, 409, 'event_conflict');
    }
    // A JSON body (no images) with the same payload conflicts too.
    expectError(await postJson(MESSAGES_PATH, msg, { key: integ.key }), 409, 'event_conflict');

    // Nothing from the rejected requests was stored: no documents, no image files.
    expect(await workspaceDocPaths(integ.workspaceId)).toEqual(paths);
    expect(await listImageFiles(imagesDir)).toEqual(files);
  });
});

describe('POST /v1/messages: service alerts and tenancy', () => {
  test('sender.kind service is stored as an alert without a customer', async () => {
    const integ = await createTestIntegration();
    const msg = newMessage({ sender: { externalId: 'monitoring-bot', kind: 'service' }, message: { text: 'Disk almost full' } });
    const body = expectAccepted(await postJson(MESSAGES_PATH, msg, { key: integ.key }), 201);
    const stored = await readMessageDoc(integ.workspaceId, body.conversationId, body.messageId);
    expect(stored).toMatchObject({ direction: 'inbound', kind: 'alert', text: 'Disk almost full', sender: { externalId: 'monitoring-bot', kind: 'service', customerId: null } });
    expect(await findCustomers(integ.workspaceId, 'monitoring-bot')).toEqual([]);
    const conversation = await readConversationDoc(integ.workspaceId, body.conversationId);
    expect(conversation?.lastSenderExternalId).toBe('monitoring-bot');
    expect(conversation).not.toHaveProperty('lastCustomerExternalId');
  });

  test("the conversation's lastCustomerExternalId follows customers, not service alerts", async () => {
    const integ = await createTestIntegration();
    const externalConversationId = 'shared-chat';
    const send = async (externalId: string, kind: 'customer' | 'service') =>
      expectAccepted(await postJson(MESSAGES_PATH, newMessage({ externalConversationId, sender: { externalId, kind } }), { key: integ.key }), 201);
    const a = await send('alice', 'customer');
    const alert = await send('bot', 'service');
    expect(alert.conversationId).toBe(a.conversationId);
    expect(await readConversationDoc(integ.workspaceId, a.conversationId)).toMatchObject({ lastCustomerExternalId: 'alice', lastSenderExternalId: 'bot' });
    await send('bob', 'customer');
    expect(await readConversationDoc(integ.workspaceId, a.conversationId)).toMatchObject({ lastCustomerExternalId: 'bob', lastSenderExternalId: 'bob' });
    expect(await listMessageDocs(integ.workspaceId, a.conversationId)).toHaveLength(3);
  });

  test('conversations, customers and eventIds are per integration, even in one workspace', async () => {
    const one = await createTestIntegration();
    const two = await createTestIntegration({ workspaceId: one.workspaceId });
    const msg = newMessage({ sender: { externalId: 'same-customer', kind: 'customer' } });
    const r1 = expectAccepted(await postJson(MESSAGES_PATH, msg, { key: one.key }), 201);
    // The very same body (same eventId) under another integration is a new event there.
    const r2 = expectAccepted(await postJson(MESSAGES_PATH, msg, { key: two.key }), 201);
    expect(r2.conversationId).not.toBe(r1.conversationId);
    expect(r2.messageId).not.toBe(r1.messageId);
    const c1 = await readConversationDoc(one.workspaceId, r1.conversationId);
    const c2 = await readConversationDoc(one.workspaceId, r2.conversationId);
    expect(c1).toMatchObject({ integrationId: one.integrationId, externalConversationId: msg.externalConversationId, lastCustomerExternalId: 'same-customer' });
    expect(c2).toMatchObject({ integrationId: two.integrationId, externalConversationId: msg.externalConversationId, lastCustomerExternalId: 'same-customer' });
    const customers = await findCustomers(one.workspaceId, 'same-customer');
    expect(customers.map((c) => c.integrationId).sort()).toEqual([one.integrationId, two.integrationId].sort());
    expect(new Set(customers.map((c) => c.id)).size).toBe(2);
  });

  test('the function answers the same directly (FUNCTIONS_URL) as through Hosting', async () => {
    const integ = await createTestIntegration();
    const msg = newMessage();
    const direct = await postJson('/messages', msg, { key: integ.key, baseUrl: functionsUrl() });
    const first = expectAccepted(direct, 201);
    expect(expectAccepted(await postJson(MESSAGES_PATH, msg, { key: integ.key }), 200)).toEqual({ ...first, duplicate: true });
  });
});
