/**
 * The conversation fields the console's queue and search read (docs/console.md#the-queue,
 * docs/data-model.md#conversations), kept by the service through the real API, triggers and
 * delivery endpoints: `needsReply` (the customer wrote last), `failedReplies` (replies that need
 * attention), `searchKeys` (search by the customer's name, their id, the channel's id).
 */
import { randomUUID } from 'node:crypto';
import { FieldValue } from 'firebase-admin/firestore';
import { searchKeyOf } from '../../../functions/src/contract/conversation-search';
import { adminDb, postJson } from '../helpers/stack';
import { claimReady, eventually, expectOk, expectSent, op, replyAndNotify, sharedConversationFixture, waitForMirror, writeReply, type ConversationSetup } from '../helpers/deliveries';
import { readConversationDoc } from '../helpers/messages';

const { conversation } = sharedConversationFixture();

const conversationDoc = async (setup: ConversationSetup) => (await readConversationDoc(setup.integration.workspaceId, setup.conversationId)) ?? {};

function waitForConversation(setup: ConversationSetup, what: string, predicate: (c: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> {
  return eventually(async () => {
    const c = await conversationDoc(setup);
    return predicate(c) ? c : undefined;
  }, what);
}

async function customerWrites(setup: ConversationSetup, text: string, sender: { externalId: string; displayName?: string; kind?: 'customer' | 'service' } = { externalId: setup.customerId }): Promise<void> {
  const res = await postJson('/v1/messages', { eventId: randomUUID(), externalConversationId: setup.externalConversationId, sender, message: { text } }, { key: setup.integration.key });
  expect(res.status).toBe(201);
}

async function failReply(setup: ConversationSetup, text: string, outcome: 'failed' | 'unknown' = 'failed'): Promise<{ messageId: string; deliveryId: string }> {
  const reply = await replyAndNotify(setup, text);
  const claim = await claimReady(setup.integration.key, reply.deliveryId);
  expectOk(await op('start', setup.integration.key, { deliveryId: reply.deliveryId, leaseId: claim.leaseId }), { status: 'sending' });
  expectSent(await op('fail', setup.integration.key, { deliveryId: reply.deliveryId, leaseId: claim.leaseId, outcome, code: 'recipient_blocked' }), reply.deliveryId, outcome);
  await waitForMirror(setup, reply.messageId, (m) => m.status === outcome);
  return reply;
}

test('needsReply: set by a customer message, cleared by an operator reply written after it, set again by the next customer message; an alert changes nothing', async () => {
  const setup = await conversation();
  const first = await conversationDoc(setup);
  expect(first.needsReply).toBe(true);
  expect(first.lastCustomerMessageAt).toEqual(first.lastMessageAt);

  await writeReply(setup, 'On it.');
  await waitForConversation(setup, 'needsReply false after the reply', (c) => c.needsReply === false);

  await customerWrites(setup, 'An alert', { externalId: 'billing-bot', kind: 'service' });
  expect((await conversationDoc(setup)).needsReply).toBe(false);

  await customerWrites(setup, 'Thanks, one more question');
  expect((await conversationDoc(setup)).needsReply).toBe(true);
});

test('a reply written before the customer\'s latest message does not clear needsReply, whenever its trigger runs', async () => {
  const setup = await conversation();
  // The reply's createdAt is before the customer's next message (a reply whose trigger runs late).
  const messages = adminDb().collection(`workspaces/${setup.integration.workspaceId}/conversations/${setup.conversationId}/messages`);
  const early = new Date(Date.now() - 60_000);
  const ref = messages.doc();
  await customerWrites(setup, 'Are you there?');
  await ref.create({ direction: 'outbound', author: { type: 'operator', uid: 'operator-1' }, text: 'Written a minute ago', createdAt: early });
  await waitForMirror(setup, ref.id);
  expect((await conversationDoc(setup)).needsReply).toBe(true);
});

test('failedReplies counts the replies that failed or ended unknown; a resend and a cancel are not failures', async () => {
  const setup = await conversation();
  expect((await conversationDoc(setup)).failedReplies).toBeUndefined();

  const failed = await failReply(setup, 'blocked');
  expect((await conversationDoc(setup)).failedReplies).toBe(1);
  await failReply(setup, 'unknown outcome', 'unknown');
  expect((await conversationDoc(setup)).failedReplies).toBe(2);

  // A resend replaces the failure with a new delivery (the count goes down when it is queued).
  await messagesRef(setup).doc(failed.messageId).update({ resend: { requestedAt: FieldValue.serverTimestamp(), uid: 'operator-1' } });
  await waitForConversation(setup, 'failedReplies 1 after the resend', (c) => c.failedReplies === 1);

  // An operator's cancel ends the reply failed `cancelled`: meant, not counted.
  const cancelled = await replyAndNotify(setup, 'never mind');
  await messagesRef(setup).doc(cancelled.messageId).update({ cancel: { requestedAt: FieldValue.serverTimestamp(), uid: 'operator-1' } });
  await waitForMirror(setup, cancelled.messageId, (m) => m.error?.code === 'cancelled');
  expect((await conversationDoc(setup)).failedReplies).toBe(1);
});

test('searchKeys: the channel id, the latest customer\'s id and display name, as prefixes; another customer replaces the previous one\'s', async () => {
  const setup = await conversation();
  await customerWrites(setup, 'Hi', { externalId: setup.customerId, displayName: 'Zoë Adámek' });
  const keys = (await conversationDoc(setup)).searchKeys as string[];
  for (const typed of ['zoe', 'ZOË ADA', 'adamek', setup.customerId.slice(0, 7), setup.externalConversationId.slice(0, 10)]) expect(keys).toContain(searchKeyOf(typed));

  // The customer's next message without a display name keeps the name (from the customer record).
  await customerWrites(setup, 'Still there?');
  expect((await conversationDoc(setup)).searchKeys).toEqual(keys);

  await customerWrites(setup, 'Me too', { externalId: `other-${randomUUID().slice(0, 6)}`, displayName: 'Grace Hopper' });
  const after = (await conversationDoc(setup)).searchKeys as string[];
  expect(after).toContain('grace');
  expect(after).not.toContain('zoe');
  // The query the console runs finds it, one page at most.
  const found = await adminDb().collection(`workspaces/${setup.integration.workspaceId}/conversations`).where('searchKeys', 'array-contains', searchKeyOf('grace h')).limit(50).get();
  expect(found.docs.map((d) => d.id)).toContain(setup.conversationId);
});

function messagesRef(setup: ConversationSetup) {
  return adminDb().collection(`workspaces/${setup.integration.workspaceId}/conversations/${setup.conversationId}/messages`);
}
