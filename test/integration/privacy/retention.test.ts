/**
 * Retention (docs/privacy.md#retention) is observable under the emulators: the scheduled job
 * (called through the emulator's trigger route, as `npm start` does every minute) stamps
 * `expireAt` and, the emulator having no TTL deletion, deletes what expired. Old data goes with
 * its stored objects; an unfinished delivery, its reply and its conversation stay; a change of
 * the period applies to data stored before it.
 */
import { Timestamp } from 'firebase-admin/firestore';
import { runRetention } from '../../../functions/src/privacy/retention';
import { adminDb, functionsUrl, projectId } from '../helpers/stack';
import { deliverFully, deliveryTestFile, replyAndNotify, replyAndSequence } from '../helpers/deliveries';
import { age, localStore, send, ws } from './helpers';

const file = deliveryTestFile();
const DAY = 86_400_000;

/** Runs the deployed scheduled function once, through the Functions emulator's trigger route. */
async function runScheduledRetention(): Promise<void> {
  const host = new URL(functionsUrl()).host;
  const res = await fetch(`http://${host}/functions/projects/${projectId()}/triggers/europe-central2-applyRetention-0`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  expect(res.ok).toBe(true);
}

test('old messages, objects, finished deliveries and customers go; the unfinished delivery, its reply and conversation stay; a new period applies to existing data', async () => {
  const setup = await file.ownConversation();
  const { integration } = setup;
  const base = ws(integration.workspaceId);
  const withImage = await send(integration, setup.externalConversationId, setup.customerId, { withImage: true });
  const sent = await replyAndNotify(setup, 'answered');
  await deliverFully(integration.key, sent.deliveryId);
  const queued = await replyAndSequence(setup, 'still queued: never deleted by retention');
  const finishedOnly = await send(integration, `quiet-${Date.now()}`, `quiet-customer-${Date.now()}`);

  const messages = base.collection('conversations').doc(setup.conversationId).collection('messages');
  const imagePath = (((await messages.doc(withImage.messageId).get()).get('images') ?? []) as Array<{ path: string }>)[0]?.path ?? '';
  expect((await localStore().get(imagePath)) !== null).toBe(true);

  // Ten years first: everything is stamped far ahead, nothing goes.
  await base.collection('settings').doc('retention').set({ days: 3650 });
  await runScheduledRetention();
  const quietMessages = base.collection('conversations').doc(finishedOnly.conversationId).collection('messages');
  const stamped = (await quietMessages.doc(finishedOnly.messageId).get()).get('expireAt') as Timestamp;
  expect(stamped.toMillis()).toBeGreaterThan(Date.now() + 3000 * DAY);
  // A message with an image has no stamp: the pass deletes it (its image first) when its period is over.
  expect((await messages.doc(withImage.messageId).get()).get('expireAt')).toBeUndefined();
  expect((await base.collection('deliveries').doc(sent.deliveryId).get()).get('expireAt')).toBeInstanceOf(Timestamp);
  // The unfinished delivery and its reply have none.
  expect((await base.collection('deliveries').doc(queued.deliveryId).get()).get('expireAt')).toBeUndefined();
  expect((await messages.doc(queued.messageId).get()).get('expireAt')).toBeUndefined();

  // Everything is two days old now, and the period becomes one day: the change applies to it.
  for (const doc of (await messages.get()).docs) await age(doc.ref, 'createdAt', 2 * DAY);
  for (const id of [sent.deliveryId, queued.deliveryId]) await age(base.collection('deliveries').doc(id), 'createdAt', 2 * DAY);
  await age(base.collection('conversations').doc(setup.conversationId), 'lastMessageAt', 2 * DAY);
  const quiet = base.collection('conversations').doc(finishedOnly.conversationId);
  await age(quiet, 'lastMessageAt', 2 * DAY);
  for (const doc of (await quiet.collection('messages').get()).docs) await age(doc.ref, 'createdAt', 2 * DAY);
  for (const doc of (await base.collection('customers').get()).docs) await age(doc.ref, 'lastSeenAt', 2 * DAY);
  await base.collection('settings').doc('retention').set({ days: 1 });
  await runScheduledRetention();

  const left = (await messages.get()).docs.map((d) => d.id);
  expect(left).toEqual([queued.messageId]);
  expect((await localStore().get(imagePath)) !== null).toBe(false);
  expect((await base.collection('deliveries').doc(sent.deliveryId).get()).exists).toBe(false);
  expect((await base.collection('deliveries').doc(queued.deliveryId).get()).get('status')).toBe('queued');
  expect((await base.collection('conversations').doc(setup.conversationId).get()).exists).toBe(true);
  // The quiet conversation had nothing unfinished: it is gone, with its messages; so are the customers.
  expect((await quiet.get()).exists).toBe(false);
  expect((await quiet.collection('messages').get()).size).toBe(0);
  expect((await base.collection('customers').get()).size).toBe(0);
  expect((await base.collection('settings').doc('retentionState').get()).data()).toMatchObject({ appliedDays: 1, cursor: null });
});

test('no period: nothing is stamped or deleted, and removing a period removes the stamps', async () => {
  const setup = await file.ownConversation();
  const base = ws(setup.integration.workspaceId);
  const conversation = base.collection('conversations').doc(setup.conversationId);
  await base.collection('settings').doc('retention').set({ days: 30 });
  const stats1 = await runRetention(adminDb(), localStore(), { deleteDue: true, workspaceIds: [setup.integration.workspaceId] });
  expect(stats1.stamped).toBeGreaterThan(0);
  for (const doc of (await conversation.collection('messages').get()).docs) expect(doc.get('expireAt')).toBeInstanceOf(Timestamp);
  // A conversation is never stamped: the pass deletes it once its newest message is past the period.
  expect((await conversation.get()).get('expireAt')).toBeUndefined();
  await base.collection('settings').doc('retention').delete();
  await runRetention(adminDb(), localStore(), { deleteDue: true, workspaceIds: [setup.integration.workspaceId], now: Date.now() + 365 * DAY });
  expect((await conversation.get()).exists).toBe(true);
  expect((await conversation.get()).get('expireAt')).toBeUndefined();
  for (const doc of (await conversation.collection('messages').get()).docs) expect(doc.get('expireAt')).toBeUndefined();
});
