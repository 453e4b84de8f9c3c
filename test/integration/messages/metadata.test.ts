/**
 * Connector metadata and `sentAt` of POST /v1/messages through Hosting and the Functions emulator
 * (docs/contract.md#connector-metadata): the conversation's merge (the latest message wins, null
 * removes), the claim's `conversation.metadata` (absent when empty), every refusal a 400 with
 * nothing written, `sentAt` stored and the conversation's latest customer `sentAt`, idempotency.
 */
import { randomUUID } from 'node:crypto';
import { Timestamp } from 'firebase-admin/firestore';
import { expectAccepted, expectError } from '../helpers/assertions';
import { claimReady, deliverFully, deliveryTestFile, replyAndNotify, type ConversationSetup } from '../helpers/deliveries';
import { MESSAGES_PATH, listMessageDocs, readConversationDoc } from '../helpers/messages';
import { messageParts, postJson, postMultipart, workspaceDocPaths } from '../helpers/stack';
import { png } from '../../unit/fixtures/image-bytes';

jest.setTimeout(60_000);
const file = deliveryTestFile();

/** A customer message of the setup's conversation with `extra` top-level fields. */
const message = (setup: ConversationSetup, extra: Record<string, unknown> = {}) => ({
  eventId: `evt-${randomUUID()}`,
  externalConversationId: setup.externalConversationId,
  sender: { externalId: setup.customerId },
  message: { text: 'about my order' },
  ...extra,
});

const post = (setup: ConversationSetup, body: unknown) => postJson(MESSAGES_PATH, body, { key: setup.integration.key });

test('the conversation keeps the merge (latest wins, null removes); every ready claim carries it; none without metadata', async () => {
  const setup = await file.ownConversation();
  // A conversation that never had metadata: its claims have no `conversation` key.
  const before = await replyAndNotify(setup, 'first answer');
  const plain = await deliverFully(setup.integration.key, before.deliveryId);
  expect(plain).not.toHaveProperty('conversation');
  expect((await readConversationDoc(setup.integration.workspaceId, setup.conversationId))?.metadata).toBeUndefined();

  expectAccepted(await post(setup, message(setup, { metadata: { orderId: 'A-1', locale: 'pl', 'shop.region': 'eu-1' } })), 201);
  expectAccepted(await post(setup, message(setup, { metadata: { orderId: 'A-2', locale: null, missing: null } })), 201);
  // A message without metadata changes nothing of it.
  expectAccepted(await post(setup, message(setup)), 201);
  const conversation = await readConversationDoc(setup.integration.workspaceId, setup.conversationId);
  expect(conversation?.metadata).toEqual({ orderId: 'A-2', 'shop.region': 'eu-1' });

  const reply = await replyAndNotify(setup, 'second answer');
  const requestId = randomUUID();
  const claim = await claimReady(setup.integration.key, reply.deliveryId, requestId);
  expect(claim).toMatchObject({ status: 'ready', conversation: { metadata: { orderId: 'A-2', 'shop.region': 'eu-1' } } });

  // Every ready claim reads it as it is then: a retried claim (same lease) after a change carries the change.
  expectAccepted(await post(setup, message(setup, { metadata: { orderId: 'A-3' } })), 201);
  const retried = await claimReady(setup.integration.key, reply.deliveryId, requestId);
  expect(retried).toEqual({ ...claim, conversation: { metadata: { orderId: 'A-3', 'shop.region': 'eu-1' } } });

  // Removing every key leaves no field, and the claim no `conversation` again.
  expectAccepted(await post(setup, message(setup, { metadata: { orderId: null, 'shop.region': null } })), 201);
  expect((await readConversationDoc(setup.integration.workspaceId, setup.conversationId))?.metadata).toBeUndefined();
  const { conversation: _gone, ...v1Shape } = claim as typeof claim & { conversation?: unknown };
  expect(await claimReady(setup.integration.key, reply.deliveryId, requestId)).toEqual(v1Shape);
});

test('every bad metadata is 400 invalid_request with the envelope, and nothing is written', async () => {
  const setup = await file.ownConversation();
  const { workspaceId } = setup.integration;
  expectAccepted(await post(setup, message(setup, { metadata: { kept: 'yes' } })), 201);
  const pathsBefore = await workspaceDocPaths(workspaceId);
  const conversationBefore = await readConversationDoc(workspaceId, setup.conversationId);
  const seventeen = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v']));
  const bad: Array<[string, unknown]> = [
    ['a nested value', { a: { b: 'c' } }],
    ['an array value', { a: ['x'] }],
    ['a number', { a: 1 }],
    ['a bad key', { 'no spaces': 'x' }],
    ['a 65-character key', { ['k'.repeat(65)]: 'x' }],
    ['a value over 512 characters', { a: 'x'.repeat(513) }],
    ['17 keys', seventeen],
    ['over 2 KB in all', { a: 'é'.repeat(512), b: 'é'.repeat(512), c: 'x'.repeat(10) }],
    ['not an object', ['a']],
  ];
  for (const [what, metadata] of bad) {
    const res = await post(setup, message(setup, { metadata }));
    expect({ what, message: expectError(res, 400, 'invalid_request') }).toEqual({ what, message: expect.stringContaining('metadata') });
  }
  // Each message within the limits, but the conversation's merge over them: refused too.
  const sixteen = Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`m${i}`, 'v']));
  expectError(await post(setup, message(setup, { metadata: sixteen })), 400, 'invalid_request');
  // The same in a multipart body (its `payload`), where an image would have been stored.
  const multipart = await postMultipart(MESSAGES_PATH, messageParts(message(setup, { metadata: { a: { b: 1 } } }), [png(8, 8)]), { key: setup.integration.key });
  expectError(multipart, 400, 'invalid_request');

  expect(await workspaceDocPaths(workspaceId)).toEqual(pathsBefore);
  expect(await readConversationDoc(workspaceId, setup.conversationId)).toEqual(conversationBefore);
});

test('sentAt: stored on the message (default: receipt time); the conversation keeps the latest customer sentAt; more than 5 minutes ahead is 400', async () => {
  const setup = await file.ownConversation();
  const { workspaceId } = setup.integration;
  const now = Date.now();
  const newer = now - 60_000;
  const older = now - 3_600_000;
  const first = expectAccepted(await post(setup, message(setup, { sentAt: newer })), 201);
  // An older message arriving late does not move the conversation's time back.
  expectAccepted(await post(setup, message(setup, { sentAt: older })), 201);
  const before = Date.now();
  const defaulted = expectAccepted(await post(setup, message(setup)), 201);
  const messages = await listMessageDocs(workspaceId, setup.conversationId);
  const byId = new Map(messages.map((m) => [String(m.id ?? ''), m]));
  const sentAtOf = (id: string): number => (byId.get(id)?.sentAt as Timestamp).toMillis();
  expect(sentAtOf(first.messageId)).toBe(newer);
  // The default is the receipt time (the emulator's clock, within the request's span).
  expect(sentAtOf(defaulted.messageId)).toBeGreaterThanOrEqual(before - 5_000);
  expect(sentAtOf(defaulted.messageId)).toBeLessThanOrEqual(Date.now() + 5_000);
  const latest = (await readConversationDoc(workspaceId, setup.conversationId))?.lastCustomerSentAt as Timestamp;
  expect(latest.toMillis()).toBe(sentAtOf(defaulted.messageId));

  // A few seconds ahead is a channel clock's skew: accepted.
  expectAccepted(await post(setup, message(setup, { sentAt: Date.now() + 60_000 })), 201);
  const pathsBefore = await workspaceDocPaths(workspaceId);
  for (const sentAt of [Date.now() + 10 * 60_000, -1, 1.5, 'yesterday', null]) {
    expect({ sentAt, message: expectError(await post(setup, message(setup, { sentAt })), 400, 'invalid_request') }).toEqual({ sentAt, message: expect.stringContaining('sentAt') });
  }
  expect(await workspaceDocPaths(workspaceId)).toEqual(pathsBefore);
});

test('idempotency: the same body again is 200 duplicate; the same eventId with other metadata or sentAt is 409 event_conflict', async () => {
  const setup = await file.ownConversation();
  const sentAt = Date.now() - 1_000;
  const body = message(setup, { metadata: { orderId: 'A-1', old: null }, sentAt });
  const first = expectAccepted(await post(setup, body), 201);
  // Key order is not content.
  const reordered = { ...body, metadata: { old: null, orderId: 'A-1' } };
  expect(expectAccepted(await post(setup, reordered), 200)).toMatchObject({ ...first, duplicate: true });
  expectError(await post(setup, { ...body, metadata: { orderId: 'A-2', old: null } }), 409, 'event_conflict');
  expectError(await post(setup, { ...body, metadata: undefined }), 409, 'event_conflict');
  expectError(await post(setup, { ...body, sentAt: sentAt + 1 }), 409, 'event_conflict');
  expect((await readConversationDoc(setup.integration.workspaceId, setup.conversationId))?.metadata).toEqual({ orderId: 'A-1' });

  // Without the new fields, a message keeps the v1 fingerprint: its retry is a duplicate as before.
  const v1 = message(setup);
  const created = expectAccepted(await post(setup, v1), 201);
  expect(expectAccepted(await post(setup, { ...v1, metadata: {} }), 200)).toMatchObject({ ...created, duplicate: true });
});
