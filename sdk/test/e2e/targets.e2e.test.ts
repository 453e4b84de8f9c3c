/**
 * SDK end to end, on both targets (the emulator stack, and the test service in the jest project
 * `kit`): message events that name their target by the channel's own id (`target.providerMessageId`),
 * whether it is a customer message (sent with `providerMessageId`) or an operator reply (the ids the
 * connector reported). An edit, a reaction and a deletion by that id store exactly what the same
 * events by eventId store; another message with the id is 409 `provider_message_id_conflict`; an id
 * naming a customer message and a reply is 409 `ambiguous_target`; an event before its message waits
 * for it; typing in a chat the desk does not know stores nothing. And the receipt tracker's
 * answers: a receipt for a part of a multi-part reply that overtakes the completion is
 * `not_yet_sent`, held, and reported once the delivery is remembered.
 */
import { randomUUID } from 'node:crypto';
import type { DocumentData } from 'firebase-admin/firestore';
import { createReceiptTracker, type ConnectorClient, type HeldReceiptOutcome } from '../../src/index.js';
import { conversationIdFor, eventDocIdFor } from '../../../functions/src/platform/ids';
import { adminDb, eventually, messageDoc, onTestService, replyAndWait, replyReactions, sdkDeliveryFixture, startConversation, waitForMirror, type RawTopic, type TestIntegration } from './helpers';
import { storedForChat } from './target';

jest.setTimeout(120_000);

let topic: RawTopic;
let integration: TestIntegration;
let client: ConnectorClient;
sdkDeliveryFixture((stack) => {
  ({ topic, integration, client } = stack);
});

const newChat = () => ({ externalConversationId: `chat-${randomUUID()}`, sender: { externalId: `cust-${randomUUID().slice(0, 8)}`, displayName: 'Ada' } });

/** What the desk (the console) reads of a message after its events, without the times. */
function shown(doc: DocumentData | undefined) {
  return {
    text: doc?.text ?? null,
    edits: ((doc?.edits ?? []) as { text: string }[]).map((e) => e.text),
    reactions: ((doc?.reactions ?? []) as { emoji: string; senderExternalId: string }[]).map((r) => [r.emoji, r.senderExternalId]),
    deleted: doc?.deleted !== undefined,
    images: ((doc?.images ?? []) as unknown[]).length,
  };
}

/** An operator reply in a fresh conversation, delivered by processDelivery with `providerId`; resolves once a reaction by that id is applied (the id names the reply). */
async function replySentAs(providerId: string) {
  const conversation = await startConversation(client, integration);
  const { replyId, message } = await replyAndWait(topic, conversation, 'Your parcel ships today.');
  const deliveryId = (JSON.parse(message.data.toString('utf8')) as { deliveryId: string }).deliveryId;
  await expect(client.processDelivery(deliveryId, () => [providerId])).resolves.toMatchObject({ kind: 'sent' });
  const sender = { externalId: conversation.customerId };
  // Pending until the service recorded the id (on the emulators a trigger does, after the completion), or applied at once.
  await expect(client.messages.react({ externalConversationId: conversation.externalConversationId, sender, target: { providerMessageId: providerId }, emoji: '👀' })).resolves.toMatchObject({ applied: expect.any(Boolean) });
  await eventually(async () => ((await replyReactions(conversation, replyId)).length > 0 ? true : undefined), `the reply named by ${providerId}`, 30_000);
  return { conversation, replyId, sender };
}

test("an edit, a reaction and a deletion by the channel's id store exactly what the same events by eventId store", async () => {
  const chat = newChat();
  const byEventId = await client.messages.send({ ...chat, eventId: `evt-${randomUUID()}`, text: 'Helo' });
  const providerMessageId = `wamid.${randomUUID()}`;
  const byChannelId = await client.messages.send({ ...chat, eventId: `evt-${randomUUID()}`, providerMessageId, text: 'Helo' });
  const targets = [{ eventId: byEventId.eventId }, { providerMessageId }] as const;

  for (const target of targets) {
    await expect(client.messages.edit({ ...chat, target, text: 'Hello' })).resolves.toMatchObject({ outcome: 'applied', applied: true, conversationId: byEventId.conversationId });
    // The text it already shows: nothing changes, and the answer says so.
    await expect(client.messages.edit({ ...chat, target, text: 'Hello' })).resolves.toMatchObject({ outcome: 'ignored', applied: false });
    await expect(client.messages.react({ ...chat, target, emoji: '👍' })).resolves.toMatchObject({ outcome: 'applied' });
    await expect(client.messages.react({ ...chat, target, emoji: '👍' })).resolves.toMatchObject({ outcome: 'ignored', applied: false });
    await expect(client.messages.edit({ ...chat, sender: { externalId: 'someone-else' }, target, text: 'not mine' })).rejects.toMatchObject({ status: 404, code: 'target_not_found' });
  }
  const edited = [await messageDoc(integration, byEventId.conversationId, byEventId.messageId), await messageDoc(integration, byChannelId.conversationId, byChannelId.messageId)];
  expect(shown(edited[0])).toEqual({ text: 'Helo', edits: ['Hello'], reactions: [['👍', chat.sender.externalId]], deleted: false, images: 0 });
  expect(shown(edited[1])).toEqual(shown(edited[0]));
  expect(edited[1]?.providerMessageId).toBe(providerMessageId);

  for (const target of targets) await expect(client.messages.delete({ ...chat, target })).resolves.toMatchObject({ outcome: 'applied' });
  const deleted = [await messageDoc(integration, byEventId.conversationId, byEventId.messageId), await messageDoc(integration, byChannelId.conversationId, byChannelId.messageId)];
  expect(shown(deleted[0])).toEqual({ text: null, edits: [], reactions: [['👍', chat.sender.externalId]], deleted: true, images: 0 });
  expect(shown(deleted[1])).toEqual(shown(deleted[0]));
});

test('another message with the same providerMessageId is 409 provider_message_id_conflict, nothing written; a retry of the first is a duplicate', async () => {
  const chat = newChat();
  const providerMessageId = `wamid.${randomUUID()}`;
  const input = { ...chat, eventId: `evt-${randomUUID()}`, providerMessageId, text: 'First' };
  const first = await client.messages.send(input);
  await expect(client.messages.send(input)).resolves.toEqual({ ...first, duplicate: true });
  await expect(client.messages.send({ ...chat, eventId: `evt-${randomUUID()}`, providerMessageId, text: 'Second' })).rejects.toMatchObject({ status: 409, code: 'provider_message_id_conflict' });
  // The same eventId with another providerMessageId is other content: the eventId's conflict.
  await expect(client.messages.send({ ...input, providerMessageId: `wamid.${randomUUID()}` })).rejects.toMatchObject({ status: 409, code: 'event_conflict' });
  expect((await storedForChat(integration, first.conversationId)).messages).toBe(1);
});

test('an edit by providerMessageId before its message waits (202) and is applied when the message arrives with that id', async () => {
  const chat = newChat();
  const providerMessageId = `wamid.${randomUUID()}`;
  await expect(client.messages.edit({ ...chat, target: { providerMessageId }, text: 'edited before it came' })).resolves.toMatchObject({ outcome: 'pending', applied: false });
  await expect(client.messages.react({ ...chat, target: { providerMessageId }, emoji: '🎉' })).resolves.toMatchObject({ outcome: 'pending' });
  const sent = await client.messages.send({ ...chat, providerMessageId, text: 'original' });
  expect(shown(await messageDoc(integration, sent.conversationId, sent.messageId))).toEqual({ text: 'original', edits: ['edited before it came'], reactions: [['🎉', chat.sender.externalId]], deleted: false, images: 0 });
});

test("an operator reply's id: reactions by it land on the reply, an edit by it is 404; an id naming a customer message too is 409 ambiguous_target, nothing written", async () => {
  const providerId = `wamid.${randomUUID()}`;
  const { conversation, replyId, sender } = await replySentAs(providerId);
  const chat = { externalConversationId: conversation.externalConversationId, sender };
  await expect(client.messages.edit({ ...chat, target: { providerMessageId: providerId }, text: 'not a customer message' })).rejects.toMatchObject({ status: 404, code: 'target_not_found' });

  // A customer message of the same chat that the channel gave the same id (uniqueness is among customer messages).
  const clash = await client.messages.send({ ...chat, providerMessageId: providerId, text: 'Thanks!' });
  await expect(client.messages.react({ ...chat, target: { providerMessageId: providerId }, emoji: '❤️' })).rejects.toMatchObject({ status: 409, code: 'ambiguous_target' });
  await expect(client.messages.delete({ ...chat, target: { providerMessageId: providerId } })).rejects.toMatchObject({ status: 409, code: 'ambiguous_target' });
  expect(await replyReactions(conversation, replyId)).toEqual([{ emoji: '👀', senderExternalId: sender.externalId }]);
  expect(shown(await messageDoc(integration, clash.conversationId, clash.messageId))).toMatchObject({ text: 'Thanks!', reactions: [], deleted: false });
  // The documented way out: the customer message by its eventId.
  await expect(client.messages.react({ ...chat, target: { eventId: clash.eventId }, emoji: '❤️' })).resolves.toMatchObject({ outcome: 'applied' });
});

test('typing in a chat the desk does not know stores nothing and names no conversation; in a known chat it is shown', async () => {
  const chat = newChat();
  // The id the conversation will have (both targets derive it from the integration and the chat).
  const conversationId = conversationIdFor(integration.integrationId, chat.externalConversationId);
  const unknown = await client.messages.typing(chat);
  expect(unknown).toEqual({ applied: false, duplicate: false, outcome: 'ignored', eventId: expect.any(String) });
  expect(unknown).not.toHaveProperty('conversationId');
  expect(await storedForChat(integration, conversationId)).toEqual({ conversation: false, typing: false, messages: 0 });
  // Not even the event's record: a retry is answered the same way, never as a duplicate.
  if (!onTestService) expect((await adminDb().doc(`workspaces/${integration.workspaceId}/events/${eventDocIdFor(integration.integrationId, unknown.eventId)}`).get()).exists).toBe(false);
  await expect(client.messages.typing({ ...chat, eventId: unknown.eventId })).resolves.toEqual(unknown);

  const sent = await client.messages.send({ ...chat, text: 'hi' });
  expect(sent.conversationId).toBe(conversationId);
  expect(await storedForChat(integration, conversationId)).toEqual({ conversation: true, typing: false, messages: 1 });
  await expect(client.messages.typing(chat)).resolves.toMatchObject({ outcome: 'applied', applied: true, conversationId: sent.conversationId });
  expect((await storedForChat(integration, sent.conversationId)).typing).toBe(true);
});

test("the receipt tracker: a part's receipt that comes before the completion is not_yet_sent, held, and reported when the delivery is remembered; an id not ours is unknown_message", async () => {
  const conversation = await startConversation(client, integration);
  const { replyId, message } = await replyAndWait(topic, conversation, 'Two parts: text, then a photo.');
  const deliveryId = (JSON.parse(message.data.toString('utf8')) as { deliveryId: string }).deliveryId;
  const held: HeldReceiptOutcome[] = [];
  const tracker = createReceiptTracker(client, { onHeldReceipt: (o) => held.push(o) });
  const [textPart, photoPart] = [`wamid.${randomUUID()}`, `wamid.${randomUUID()}`];
  const early: unknown[] = [];
  const result = await client.processDelivery(deliveryId, async (input) => {
    tracker.sending(input.deliveryId, textPart);
    // The channel's "delivered" webhook for the text part, before the photo part is even sent.
    early.push(await tracker.report(textPart, 'delivered'));
    early.push(await tracker.report(`wamid.${randomUUID()}`, 'delivered'));
    tracker.sending(input.deliveryId, photoPart);
    return [textPart, photoPart];
  });
  expect(early).toEqual([
    { status: 'not_yet_sent', deliveryId, providerMessageId: textPart },
    { status: 'unknown_message', providerMessageId: expect.any(String) },
  ]);
  expect(await tracker.remember(result)).toBe(true);
  expect(held).toEqual([{ providerMessageId: textPart, deliveryId, status: 'delivered', outcome: 'reported', result: { status: 'sent' } }]);
  const mirror = await waitForMirror(conversation, replyId, (m) => m.status === 'sent' && m.receipt !== undefined);
  expect(mirror.receipt).toMatchObject({ status: 'delivered' });
  await expect(tracker.report(photoPart, 'read')).resolves.toMatchObject({ status: 'reported', deliveryId });
});
