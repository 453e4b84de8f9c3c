/**
 * Privacy of message events (docs/privacy.md): an erasure deletes the customer's edits, tombstones
 * and reactions with their messages, and removes their reactions on messages that stay (an
 * operator reply, another customer's message), their events still waiting for a target and their
 * typing document, while another customer's stay; an export holds the edits, the tombstone and
 * the reactions (and the customer's reactions on other messages), never typing; retention deletes
 * a message with its edits and reactions, and a tombstone like any message; where the job deletes
 * expired documents itself (the emulators), it deletes expired typing documents and pending events.
 */
import { randomUUID } from 'node:crypto';
import { FieldValue, Timestamp, type DocumentData } from 'firebase-admin/firestore';
import { exportFilePath } from '../../../functions/src/privacy/export';
import { runRetention } from '../../../functions/src/privacy/retention';
import { functionsUrl, postJson, projectId, type ApiResponse, type TestIntegration } from '../helpers/stack';
import { deliverFully, deliveryTestFile, eventually, readReply, replyAndNotify } from '../helpers/deliveries';
import { age, localStore, requestErasure, send, waitForErasure, ws } from './helpers';

const file = deliveryTestFile();
const DAY = 86_400_000;

/** Posts a message event; asserts its status. */
async function event(integration: TestIntegration, body: Record<string, unknown>, status: number): Promise<ApiResponse> {
  const res = await postJson('/v1/messages/events', { eventId: `evt-${randomUUID()}`, ...body }, { key: integration.key });
  expect({ status: res.status, text: res.text }).toEqual({ status, text: expect.any(String) as string });
  return res;
}

interface Scene {
  integration: TestIntegration;
  conversationId: string;
  /** The customer to erase and the other customer of the shared conversation. */
  customer: string;
  other: string;
  ownMessageId: string;
  otherMessageId: string;
  replyId: string;
  setup: Awaited<ReturnType<typeof file.ownConversation>>;
}

/** A conversation of two customers, an operator reply sent with provider id `p`, and everyone's events on it. */
async function scene(): Promise<Scene> {
  const setup = await file.ownConversation();
  const { integration, externalConversationId } = setup;
  const customer = setup.customerId;
  const other = `other-${randomUUID().slice(0, 8)}`;
  const own = await send(integration, externalConversationId, customer, { text: 'my first words' });
  const theirs = await send(integration, externalConversationId, other, { text: 'their words' });
  const reply = await replyAndNotify(setup, 'an answer to both');
  const providerId = `wamid.${randomUUID()}`;
  await deliverFully(integration.key, reply.deliveryId, [providerId]);
  await eventually(async () => ((await ws(integration.workspaceId).collection('providerMessages').where('messageId', '==', reply.messageId).get()).size === 1 ? true : undefined), 'the provider id recorded');

  const as = (externalId: string) => ({ externalConversationId, sender: { externalId } });
  await event(integration, { ...as(customer), type: 'edited', target: { eventId: own.eventId }, text: 'my edited words' }, 201);
  await event(integration, { ...as(other), type: 'reaction', target: { eventId: own.eventId }, emoji: '👀' }, 201);
  await event(integration, { ...as(customer), type: 'reaction', target: { providerMessageId: providerId }, emoji: '👍' }, 201);
  await event(integration, { ...as(other), type: 'reaction', target: { providerMessageId: providerId }, emoji: '🙏' }, 201);
  await event(integration, { ...as(customer), type: 'reaction', target: { eventId: theirs.eventId }, emoji: '❤️' }, 201);
  // Waiting for targets that never come: the customer's and the other's.
  await event(integration, { ...as(customer), type: 'reaction', target: { eventId: `never-${randomUUID()}` }, emoji: '😀' }, 202);
  await event(integration, { ...as(other), type: 'reaction', target: { eventId: `never-${randomUUID()}` }, emoji: '😀' }, 202);
  await event(integration, { ...as(customer), type: 'typing' }, 201);
  return { integration, conversationId: setup.conversationId, customer, other, ownMessageId: own.messageId, otherMessageId: theirs.messageId, replyId: reply.messageId, setup };
}

const emojiBySender = (data: DocumentData | undefined): string[] => ((data?.reactions ?? []) as Array<{ emoji: string; senderExternalId: string }>).map((r) => `${r.senderExternalId}:${r.emoji}`);

test('export: edits, the tombstone and reactions with the messages, the customer\'s reactions on other messages; never typing', async () => {
  const s = await scene();
  const { integration } = s;
  // A second message of the customer, deleted: its tombstone is exported, its text is not.
  const gone = await send(integration, s.setup.externalConversationId, s.customer, { text: 'regrettable words' });
  await event(integration, { externalConversationId: s.setup.externalConversationId, sender: { externalId: s.customer }, type: 'deleted', target: { eventId: gone.eventId } }, 201);

  const exportId = `ex-${randomUUID()}`;
  await ws(integration.workspaceId).collection('exports').doc(exportId).create({ integrationId: integration.integrationId, externalCustomerId: s.customer, requestedAt: FieldValue.serverTimestamp(), requestedBy: 'admin-1' });
  await eventually(async () => ((await ws(integration.workspaceId).collection('exports').doc(exportId).get()).get('status') === 'done' ? true : undefined), 'the export');
  const text = (await localStore().get(exportFilePath(integration.workspaceId, exportId)))?.toString('utf8') ?? '';
  const lines = text.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);

  const own = lines.find((l) => l.type === 'message' && l.messageId === s.ownMessageId);
  expect(own).toMatchObject({ text: 'my first words', edits: [{ text: 'my edited words', at: expect.any(Number) as number }], reactions: [{ emoji: '👀', senderExternalId: s.other, at: expect.any(Number) as number }] });
  expect(own).not.toHaveProperty('reactionCustomerIds');
  const tombstone = lines.find((l) => l.type === 'message' && l.messageId === gone.messageId);
  expect(tombstone).toMatchObject({ text: null, deleted: { at: expect.any(Number) as number } });
  const reactions = lines.filter((l) => l.type === 'reaction').map((l) => `${String(l.messageId)}:${String(l.emoji)}`).sort();
  expect(reactions).toEqual([`${s.otherMessageId}:❤️`, `${s.replyId}:👍`].sort());
  expect(text).not.toContain('regrettable words');
  expect(text).not.toContain('typing');
  expect(text).not.toContain('their words');
});

test('erasure: the customer\'s messages with their edits and reactions, their reactions elsewhere, pending events and typing go; the other customer\'s stay', async () => {
  const s = await scene();
  const { integration } = s;
  const base = ws(integration.workspaceId);
  const messages = base.collection('conversations').doc(s.conversationId).collection('messages');
  expect(emojiBySender(await readReply(s.setup, s.replyId))).toEqual([`${s.customer}:👍`, `${s.other}:🙏`]);
  expect((await base.collection('typing').doc(s.conversationId).get()).exists).toBe(true);
  expect((await base.collection('pendingEvents').get()).size).toBe(2);

  const erasureId = await requestErasure(integration, s.customer);
  await waitForErasure(integration.workspaceId, erasureId);

  expect((await messages.doc(s.ownMessageId).get()).exists).toBe(false);
  expect(emojiBySender(await readReply(s.setup, s.replyId))).toEqual([`${s.other}:🙏`]);
  expect((await readReply(s.setup, s.replyId))?.reactionCustomerIds).toHaveLength(1);
  const theirs = (await messages.doc(s.otherMessageId).get()).data();
  expect(theirs).toMatchObject({ text: 'their words' });
  expect(emojiBySender(theirs)).toEqual([]);
  expect((await base.collection('typing').doc(s.conversationId).get()).exists).toBe(false);
  const pending = (await base.collection('pendingEvents').get()).docs.map((d) => d.data());
  expect(pending.map((p) => (p.events as Array<{ senderExternalId: string }>).map((e) => e.senderExternalId))).toEqual([[s.other]]);
});

test('retention: a message goes with its edits and reactions, a tombstone like any message', async () => {
  const setup = await file.ownConversation();
  const { integration } = setup;
  const base = ws(integration.workspaceId);
  const kept = await send(integration, setup.externalConversationId, setup.customerId, { withImage: true, text: 'with an image' });
  const edited = await send(integration, setup.externalConversationId, setup.customerId, { text: 'to edit' });
  const as = { externalConversationId: setup.externalConversationId, sender: { externalId: setup.customerId } };
  await event(integration, { ...as, type: 'edited', target: { eventId: edited.eventId }, text: 'edited' }, 201);
  await event(integration, { ...as, type: 'reaction', target: { eventId: edited.eventId }, emoji: '👍' }, 201);
  await event(integration, { ...as, type: 'deleted', target: { eventId: kept.eventId } }, 201);
  const messages = base.collection('conversations').doc(setup.conversationId).collection('messages');
  expect((await messages.doc(kept.messageId).get()).get('images')).toEqual([]);

  for (const doc of (await messages.get()).docs) await age(doc.ref, 'createdAt', 2 * DAY);
  await age(base.collection('conversations').doc(setup.conversationId), 'lastMessageAt', 2 * DAY);
  await base.collection('settings').doc('retention').set({ days: 1 });
  await runRetention(base.firestore, localStore(), { deleteDue: true, workspaceIds: [integration.workspaceId] });
  expect((await messages.doc(edited.messageId).get()).exists).toBe(false);
  expect((await messages.doc(kept.messageId).get()).exists).toBe(false);
});

test('the emulator has no TTL: the scheduled job deletes expired typing documents and pending events, and leaves live ones', async () => {
  const setup = await file.ownConversation();
  const { integration } = setup;
  const base = ws(integration.workspaceId);
  const as = { externalConversationId: setup.externalConversationId, sender: { externalId: setup.customerId } };
  await event(integration, { ...as, type: 'typing' }, 201);
  await event(integration, { ...as, type: 'reaction', target: { eventId: `never-${randomUUID()}` }, emoji: '👍' }, 202);
  // A live typing document elsewhere (typing is stored only in a chat the desk knows: a message first).
  const other = `chat-${randomUUID()}`;
  await send(integration, other, setup.customerId, { text: 'another chat' });
  await event(integration, { externalConversationId: other, sender: { externalId: setup.customerId }, type: 'typing' }, 201);
  const typing = base.collection('typing').doc(setup.conversationId);
  const [pending] = (await base.collection('pendingEvents').get()).docs;
  expect(pending).toBeDefined();
  // Test fixture for time: as if their minute and their day had passed.
  await typing.update({ expireAt: Timestamp.fromMillis(Date.now() - 1_000) });
  await pending?.ref.update({ expireAt: Timestamp.fromMillis(Date.now() - 1_000) });

  const host = new URL(functionsUrl()).host;
  const res = await fetch(`http://${host}/functions/projects/${projectId()}/triggers/europe-central2-applyRetention-0`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  expect(res.ok).toBe(true);
  await eventually(async () => (!(await typing.get()).exists && !(await pending?.ref.get())?.exists ? true : undefined), 'the expired typing and pending documents deleted');
  expect((await base.collection('typing').get()).size).toBe(1);
});
