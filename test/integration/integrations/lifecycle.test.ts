/**
 * Integration lifecycle on the server side (docs/data-model.md): the integrations trigger checks
 * the replies topic against the Pub/Sub emulator and records `replies.topicStatus`; the outbox
 * honours a broken status instead of retrying forever, and re-checks a stale one; a key hash
 * copied onto a second integration never authenticates anyone and is revoked.
 *
 * The permission paths (testIamPermissions is UNIMPLEMENTED on the emulator) are unit-tested with
 * fake topics in test/unit/integrations/topics.test.ts.
 */
import { randomUUID } from 'node:crypto';
import { FieldValue, Timestamp, type DocumentData } from 'firebase-admin/firestore';
import { createTestIntegration, integrationRef, keyCacheTtls, postJson, projectId, revocationBoundMs, type TestIntegration } from '../helpers/stack';
import { createTestTopic, deliveryTestFile, eventually, setupConversation, waitForMirror, writeReply, type TestTopic } from '../helpers/deliveries';

const file = deliveryTestFile();
const freshTopic = async (): Promise<TestTopic> => file.track(await createTestTopic());

const readIntegration = async (i: TestIntegration): Promise<DocumentData> => (await integrationRef(i.workspaceId, i.integrationId).get()).data() ?? {};

/** Waits until the trigger recorded a topic status satisfying `predicate`; returns `replies`. */
function waitForTopicStatus(i: TestIntegration, predicate: (replies: DocumentData) => boolean = (r) => typeof r.topicStatus === 'string'): Promise<DocumentData> {
  return eventually(async () => {
    const replies = (await readIntegration(i)).replies as DocumentData | undefined;
    return replies && predicate(replies) ? replies : undefined;
  }, `the topic status of integration ${i.integrationId}`);
}

const missingTopic = () => `projects/${projectId()}/topics/missing-${randomUUID()}`;

function message(key: string) {
  return postJson('/v1/messages', { eventId: randomUUID(), externalConversationId: `chat-${randomUUID()}`, sender: { externalId: 'c-1' }, message: { text: 'hi' } }, { key });
}

describe('replies topic check', () => {
  test('an existing topic: ok (publish permission not verifiable on the emulator, said in the message)', async () => {
    const topic = await freshTopic();
    const integration = await createTestIntegration({ topic: topic.topicPath });
    const replies = await waitForTopicStatus(integration);
    expect(replies).toEqual({
      enabled: true,
      topic: topic.topicPath,
      topicStatus: 'ok',
      topicMessage: expect.stringContaining('emulator'),
      topicCheckedAt: expect.any(Timestamp),
    });
  });

  test('a missing topic: not_found; a reply is recorded failed with topic_not_found, not retried', async () => {
    const integration = await createTestIntegration({ topic: missingTopic() });
    const replies = await waitForTopicStatus(integration);
    expect(replies).toMatchObject({ topicStatus: 'not_found', topicMessage: expect.stringContaining('does not exist') });

    const setup = await setupConversation({ integration, topic: await freshTopic() });
    const messageId = await writeReply(setup, 'to nowhere');
    const mirror = await waitForMirror(setup, messageId, (m) => m.status !== 'queued');
    expect(mirror).toMatchObject({ status: 'failed', error: { outcome: 'failed', code: 'topic_not_found' } });
  });

  test('a topic name the CLI pattern rejects (written by the Admin SDK): invalid', async () => {
    const integration = await createTestIntegration();
    await integrationRef(integration.workspaceId, integration.integrationId).update({ replies: { enabled: true, topic: 'not-a-topic' } });
    expect(await waitForTopicStatus(integration)).toMatchObject({ topic: 'not-a-topic', topicStatus: 'invalid', topicMessage: expect.stringContaining('projects/<project>/topics/<topic>') });
  });

  test('changing the topic re-checks it; removing the status (the console "check again") re-checks too', async () => {
    const integration = await createTestIntegration({ topic: missingTopic() });
    await waitForTopicStatus(integration);
    const topic = await freshTopic();
    const ref = integrationRef(integration.workspaceId, integration.integrationId);
    // The console writes the whole replies map (the rules make it drop the old status).
    await ref.update({ replies: { enabled: true, topic: topic.topicPath } });
    expect(await waitForTopicStatus(integration)).toMatchObject({ topic: topic.topicPath, topicStatus: 'ok' });

    await ref.update({ 'replies.topicStatus': 'not_found', 'replies.topicMessage': 'stale' }); // as if checked before the topic existed
    await ref.update({ 'replies.topicStatus': FieldValue.delete(), 'replies.topicMessage': FieldValue.delete(), 'replies.topicCheckedAt': FieldValue.delete() });
    expect(await waitForTopicStatus(integration)).toMatchObject({ topicStatus: 'ok' });
  });

  test('the outbox honours a recent broken status even for a topic that would accept the publish', async () => {
    const topic = await freshTopic();
    const setup = await setupConversation({ topic });
    await waitForTopicStatus(setup.integration);
    // What the trigger records when the owner has not granted the publisher role (not producible on the emulator).
    await integrationRef(setup.integration.workspaceId, setup.integration.integrationId).update({
      'replies.topicStatus': 'permission_denied',
      'replies.topicMessage': 'The service may not publish to it.',
      'replies.topicCheckedAt': FieldValue.serverTimestamp(),
    });
    const messageId = await writeReply(setup, 'blocked');
    const mirror = await waitForMirror(setup, messageId, (m) => m.status !== 'queued');
    expect(mirror).toMatchObject({ status: 'failed', error: { outcome: 'failed', code: 'topic_permission_denied' } });
    expect(topic.received.filter((n) => n.messageId === messageId)).toEqual([]);
  });

  test('a broken status older than a minute is re-checked on the next delivery (permission granted later: delivered)', async () => {
    const topic = await freshTopic();
    const setup = await setupConversation({ topic });
    await waitForTopicStatus(setup.integration);
    const ref = integrationRef(setup.integration.workspaceId, setup.integration.integrationId);
    await ref.update({
      'replies.topicStatus': 'permission_denied',
      'replies.topicMessage': 'checked before the grant',
      'replies.topicCheckedAt': Timestamp.fromMillis(Date.now() - 5 * 60_000),
    });
    const messageId = await writeReply(setup, 'after the grant');
    const [notification] = await topic.pull(1, 20_000);
    expect(notification).toMatchObject({ messageId, conversationId: setup.conversationId });
    expect(((await readIntegration(setup.integration)).replies as DocumentData).topicStatus).toBe('ok');
  });
});

describe('key hash uniqueness', () => {
  test('a key hash copied onto another integration is revoked there; the original key keeps working', async () => {
    const original = await createTestIntegration();
    const keyHash = (await readIntegration(original)).keyHash as string;
    const copier = await createTestIntegration();
    const copierRef = integrationRef(copier.workspaceId, copier.integrationId);
    await copierRef.update({ keyHash });
    const revoked = await eventually(async () => {
      const data = (await copierRef.get()).data() ?? {};
      return data.keyRevoked ? data : undefined;
    }, 'the copied key hash to be revoked');
    expect(revoked).toMatchObject({ keyRevoked: { reason: 'duplicate_key_hash', at: expect.any(Timestamp) } });
    expect(revoked.keyHash).toBeUndefined();
    expect(await readIntegration(original)).toMatchObject({ keyHash });
    expect((await readIntegration(original)).keyRevoked).toBeUndefined();

    const res = await eventually(async () => {
      const r = await message(original.key);
      return r.status === 201 ? r : undefined;
    }, 'the original key to work', 20_000);
    expect((res.body as { conversationId: string }).conversationId).toMatch(/^c_/);
  });

  test('while two integrations claim one key hash, the key authenticates nobody (fails closed)', async () => {
    const original = await createTestIntegration();
    const keyHash = (await readIntegration(original)).keyHash as string;
    expect((await message(original.key)).status).toBe(201);
    // A previous-key hash is service-owned (only the Admin SDK writes it), so the trigger leaves it alone.
    const other = await createTestIntegration();
    const otherRef = integrationRef(other.workspaceId, other.integrationId);
    await otherRef.update({ previousKey: { hash: keyHash, prefix: 'sdk_test_XXXX', expiresAt: Date.now() + 3_600_000 } });
    // Within the key cache TTL (KEY_CACHE_TTL_MS, <= 30 s) the key stops working.
    await eventually(async () => ((await message(original.key)).status === 401 ? true : undefined), 'the ambiguous key to be refused', revocationBoundMs());
    await otherRef.update({ previousKey: FieldValue.delete() });
    // Refused lookups are remembered for the negative TTL (KEY_NEGATIVE_CACHE_TTL_MS), then it works again.
    await eventually(async () => ((await message(original.key)).status === 201 ? true : undefined), 'the key to work again', Math.min(30_000, keyCacheTtls().negativeMs + 5_000));
  }, 90_000);
});
