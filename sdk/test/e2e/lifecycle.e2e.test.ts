/**
 * SDK end to end after the send, on both targets (the emulator stack, and the test service in the
 * jest project `kit`): an operator's edit and unsend of a reply the SDK delivered reach the edit /
 * unsend callbacks with the target's provider ids and end in the reply's history; a connector
 * without a callback fails the kind `unsupported_kind`; a customer's edit, deletion, reaction (on a
 * message and on a reply) and typing go through `client.messages`, with the event that overtakes
 * its message applied when the message arrives.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join, resolve } from 'node:path';
import { type ProviderEditInput, type ProviderUnsendInput } from '../../src/index.js';
import {
  allowLifecycle,
  eventually,
  messageDocs,
  replyAndWait,
  replyHistory,
  replyReactions,
  requestLifecycle,
  sdkDeliveryFixture,
  startConversation,
  onTestService,
  waitForMirror,
  type LifecycleEntry,
  type RawTopic,
  type TestIntegration,
} from './helpers';
import type { ConnectorClient } from '../../src/index.js';
import { projectId } from '../../../test/integration/helpers/stack';

// The first calls of a run meet cold functions in the emulator; triggers and Pub/Sub add seconds.
jest.setTimeout(120_000);

let topic: RawTopic;
let integration: TestIntegration;
let client: ConnectorClient;
sdkDeliveryFixture((stack) => {
  ({ topic, integration, client } = stack);
});

/** A conversation with one operator reply, delivered by processDelivery with `ids`. */
async function sentReply(ids: string[]) {
  const conversation = await startConversation(client, integration);
  const { replyId, message } = await replyAndWait(topic, conversation, 'Your parcel ships today.');
  const deliveryId = (JSON.parse(message.data.toString('utf8')) as { deliveryId: string }).deliveryId;
  await expect(client.processDelivery(deliveryId, () => ids)).resolves.toMatchObject({ kind: 'sent' });
  await waitForMirror(conversation, replyId, (m) => m.status === 'sent');
  return { conversation, replyId, deliveryId };
}

/** The history entry once it has a delivery (the service's trigger took the request). */
function takenEntry(conversation: Parameters<typeof replyHistory>[0], replyId: string, field: 'edits' | 'unsends', index: number, done: (e: LifecycleEntry) => boolean = (e) => e.deliveryId !== null): Promise<LifecycleEntry> {
  return eventually(async () => {
    const entry = (await replyHistory(conversation, replyId))[field][index];
    return entry !== undefined && done(entry) ? entry : undefined;
  }, `${field}[${index}] of reply ${replyId}`, 30_000);
}

beforeAll(async () => {
  await allowLifecycle(integration, { edit: { windowSeconds: 900 }, unsend: { windowSeconds: 900 } });
});

test('an edit then an unsend of a reply the SDK delivered: the callbacks get the target ids, complete with them, the history and unsent follow', async () => {
  const { conversation, replyId, deliveryId } = await sentReply(['wamid.e2e-1']);
  const edits: ProviderEditInput[] = [];
  const unsends: ProviderUnsendInput[] = [];
  const provider = { send: () => ['never'], edit: (input: ProviderEditInput) => void edits.push(input), unsend: (input: ProviderUnsendInput) => void unsends.push(input) };

  await requestLifecycle(conversation, replyId, 'Your parcel ships tomorrow.');
  const edit = await takenEntry(conversation, replyId, 'edits', 0);
  await expect(client.processDelivery(edit.deliveryId ?? '', provider)).resolves.toMatchObject({ kind: 'sent', deliveryKind: 'edit', providerMessageIds: ['wamid.e2e-1'] });
  expect(edits).toHaveLength(1);
  expect(edits[0]).toMatchObject({ text: 'Your parcel ships tomorrow.', target: { deliveryId, providerMessageIds: ['wamid.e2e-1'] }, recipient: { externalConversationId: conversation.externalConversationId } });
  await expect(takenEntry(conversation, replyId, 'edits', 0, (e) => e.status === 'sent')).resolves.toMatchObject({ text: 'Your parcel ships tomorrow.', status: 'sent' });

  await requestLifecycle(conversation, replyId);
  const unsend = await takenEntry(conversation, replyId, 'unsends', 0);
  await expect(client.processDelivery(unsend.deliveryId ?? '', provider)).resolves.toMatchObject({ kind: 'sent', deliveryKind: 'unsend', providerMessageIds: ['wamid.e2e-1'] });
  expect(unsends[0]?.target).toMatchObject({ deliveryId, providerMessageIds: ['wamid.e2e-1'] });
  const history = await eventually(async () => {
    const h = await replyHistory(conversation, replyId);
    return h.unsent ? h : undefined;
  }, 'the reply unsent', 30_000);
  // The reply's own text and delivery stay as they were.
  expect(history.text).toBe('Your parcel ships today.');
  await expect(waitForMirror(conversation, replyId)).resolves.toMatchObject({ deliveryId, status: 'sent', providerMessageIds: ['wamid.e2e-1'] });
});

test('a connector with a send function only fails an edit unsupported_kind, without starting it', async () => {
  const { conversation, replyId } = await sentReply(['wamid.e2e-2']);
  await requestLifecycle(conversation, replyId, 'Fixed text');
  const edit = await takenEntry(conversation, replyId, 'edits', 0);
  const send = jest.fn(() => ['x']);
  await expect(client.processDelivery(edit.deliveryId ?? '', send)).resolves.toMatchObject({ kind: 'failed', code: 'unsupported_kind', deliveryStatus: 'failed' });
  expect(send).not.toHaveBeenCalled();
  await expect(takenEntry(conversation, replyId, 'edits', 0, (e) => e.status === 'failed')).resolves.toMatchObject({ error: { code: 'unsupported_kind' } });
});

test("a customer's edit, deletion, reactions and typing through client.messages; an event before its message is applied when it arrives", async () => {
  const externalConversationId = `chat-${randomUUID()}`;
  const sender = { externalId: `cust-${randomUUID().slice(0, 8)}`, displayName: 'Ada' };
  const base = { externalConversationId, sender };
  const first = `msg-${randomUUID()}`;
  const late = `msg-${randomUUID()}`;

  // The edit of a message not there yet: pending, then applied when it arrives.
  await expect(client.messages.edit({ ...base, eventId: `ev-${randomUUID()}`, target: { eventId: late }, text: 'late, edited' })).resolves.toMatchObject({ outcome: 'pending', applied: false });
  const opened = await client.messages.send({ ...base, eventId: first, text: 'Helo' });
  await client.messages.send({ ...base, eventId: late, text: 'late, original' });
  const conversationId = opened.conversationId;

  const editId = `ev-${randomUUID()}`;
  await expect(client.messages.edit({ ...base, eventId: editId, target: { eventId: first }, text: 'Hello' })).resolves.toMatchObject({ outcome: 'applied', conversationId });
  await expect(client.messages.edit({ ...base, eventId: editId, target: { eventId: first }, text: 'Hello' })).resolves.toMatchObject({ outcome: 'duplicate', applied: true });
  await expect(client.messages.edit({ ...base, eventId: editId, target: { eventId: first }, text: 'Other' })).rejects.toMatchObject({ status: 409, code: 'event_conflict' });
  await expect(client.messages.react({ ...base, target: { eventId: first }, emoji: '👍' })).resolves.toMatchObject({ outcome: 'applied' });
  // The same reaction again, and taking back one that is not there, change nothing: the answer says so.
  await expect(client.messages.react({ ...base, target: { eventId: first }, emoji: '👍' })).resolves.toMatchObject({ outcome: 'ignored', applied: false });
  await expect(client.messages.react({ ...base, target: { eventId: first }, emoji: '🎉', removed: true })).resolves.toMatchObject({ outcome: 'ignored', applied: false });
  await expect(client.messages.delete({ ...base, target: { eventId: late } })).resolves.toMatchObject({ outcome: 'applied' });
  await expect(client.messages.edit({ ...base, target: { eventId: late }, text: 'after the deletion' })).resolves.toMatchObject({ outcome: 'ignored', applied: false });
  await expect(client.messages.edit({ ...base, sender: { externalId: 'someone-else' }, target: { eventId: first }, text: 'not mine' })).rejects.toMatchObject({ status: 404, code: 'target_not_found' });
  await expect(client.messages.typing(base)).resolves.toMatchObject({ outcome: 'applied' });

  const docs = await eventually(async () => {
    const all = await messageDocs(integration, conversationId);
    const lateDoc = all.find((d) => d.eventId === late);
    return lateDoc?.deleted !== undefined ? all : undefined;
  }, 'the deletion stored', 30_000);
  const firstDoc = docs.find((d) => d.eventId === first);
  expect(firstDoc?.text).toBe('Helo');
  expect((firstDoc?.edits as { text: string }[]).map((e) => e.text)).toEqual(['Hello']);
  expect((firstDoc?.reactions as { emoji: string; senderExternalId: string }[]).map((r) => [r.emoji, r.senderExternalId])).toEqual([['👍', sender.externalId]]);
  const lateDoc = docs.find((d) => d.eventId === late);
  expect(lateDoc?.text ?? null).toBeNull();
});

test('a reaction on an operator reply by the provider id the connector reported (pending before the reply is sent)', async () => {
  const conversation = await startConversation(client, integration);
  const providerId = `wamid.${randomUUID()}`;
  const sender = { externalId: conversation.customerId };
  await expect(client.messages.react({ externalConversationId: conversation.externalConversationId, sender, target: { providerMessageId: providerId }, emoji: '❤️' })).resolves.toMatchObject({ outcome: 'pending' });
  const { replyId, message } = await replyAndWait(topic, conversation, 'Here you go');
  const deliveryId = (JSON.parse(message.data.toString('utf8')) as { deliveryId: string }).deliveryId;
  await client.processDelivery(deliveryId, () => [providerId]);
  await expect(eventually(async () => {
    const reactions = await replyReactions(conversation, replyId);
    return reactions.length > 0 ? reactions : undefined;
  }, 'the pending reaction applied', 30_000)).resolves.toEqual([{ emoji: '❤️', senderExternalId: conversation.customerId }]);
});

// The local-stack helper writes to the Firestore emulator: no test service.
(onTestService ? test.skip : test)("examples/connector/reply-as-operator.js --edit writes the console's request and reports the edit delivery once it is sent", async () => {
  const { conversation, replyId } = await sentReply(['wamid.e2e-helper']);
  const script = join(resolve(__dirname, '..', '..', '..'), 'examples', 'connector', 'reply-as-operator.js');
  const child = spawn(process.execPath, [script, '--edit', conversation.conversationId, replyId, 'Edited by the helper'], {
    env: { ...process.env, WORKSPACE_ID: integration.workspaceId, GCLOUD_PROJECT: projectId() },
  });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (out += c.toString('utf8')));
  const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
  // The connector's side, while the helper waits for the entry to be final.
  const edit = await takenEntry(conversation, replyId, 'edits', 0);
  await expect(client.processDelivery(edit.deliveryId ?? '', { send: () => ['never'], edit: () => undefined })).resolves.toMatchObject({ kind: 'sent', deliveryKind: 'edit' });
  expect(await exited).toBe(0);
  expect(out).toContain(`[operator] edit of message ${replyId} requested`);
  expect(out).toContain(`[operator] edit delivery ${edit.deliveryId} of message ${replyId}: sent`);
});
