/**
 * Retention of stored objects (docs/privacy.md#stored-objects), with a one-day period, through the
 * real API, the reply trigger and the functions' local store. A message that names stored objects
 * has no TTL stamp; the pass deletes its objects and then the message once the day is over, never
 * before, and resumes cleanly after a crash in between. The passes here run with `deleteDue: false`
 * (as deployed: no emulator stand-in for TTL), so what goes was deleted by the pass itself; one
 * with the stand-in shows a message without objects still goes by its `expireAt`.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { Timestamp, type DocumentReference } from 'firebase-admin/firestore';
import { runRetention } from '../../../functions/src/privacy/retention';
import type { ImageStore } from '../../../functions/src/messages/image-store';
import { adminDb, integrationRef } from '../helpers/stack';
import { deliverFully, deliveryTestFile, waitForMirror, type ConversationSetup } from '../helpers/deliveries';
import { seedUpload, writeReplyWithAttachments } from '../helpers/console-uploads';
import { localStore, send, ws } from './helpers';

const file = deliveryTestFile();
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const OPERATOR = { uid: 'operator-1', idToken: '' };
const PNG_HEADER = Buffer.from('89504e470d0a1a0a', 'hex');

const present = async (path: string): Promise<boolean> => (await localStore().get(path)) !== null;
const messages = (setup: ConversationSetup) => ws(setup.integration.workspaceId).collection('conversations').doc(setup.conversationId).collection('messages');
const imagePathsOf = async (ref: DocumentReference): Promise<string[]> => (((await ref.get()).get('images') ?? []) as Array<{ path: string }>).map((i) => i.path);
const pass = (setup: ConversationSetup, now: number, store: ImageStore = localStore(), deleteDue = false) =>
  runRetention(adminDb(), store, { now, deleteDue, workspaceIds: [setup.integration.workspaceId] });

/** A conversation whose workspace keeps data for one day. */
async function oneDay(): Promise<ConversationSetup> {
  const setup = await file.ownConversation();
  await ws(setup.integration.workspaceId).collection('settings').doc('retention').set({ days: 1 });
  return setup;
}

/** The local store, crashing (after the removal) on the removal of `crashOn`. */
function crashingAfterRemoving(crashOn: string): ImageStore {
  const store = localStore();
  return {
    put: (path, bytes, type) => store.put(path, bytes, type),
    get: (path) => store.get(path),
    open: (path) => store.open(path),
    remove: async (path) => {
      await store.remove(path);
      if (path === crashOn) throw new Error('crash between the objects and the document');
    },
  };
}

test('a message with an image: kept with its image through the first day, then its image and itself go; a crash in between resumes', async () => {
  const setup = await oneDay();
  const withImage = await send(setup.integration, setup.externalConversationId, setup.customerId, { withImage: true });
  const ref = messages(setup).doc(withImage.messageId);
  const [imagePath] = await imagePathsOf(ref);
  if (imagePath === undefined) throw new Error('the message has no image');
  const sentAt = ((await ref.get()).get('createdAt') as Timestamp).toMillis();
  // No TTL stamp: TTL would delete the message at an unknown moment, the pass deletes it.
  expect((await ref.get()).get('expireAt')).toBeUndefined();

  // A few hours old: image and message stay, still without a stamp.
  await pass(setup, sentAt + 5 * HOUR);
  expect(await present(imagePath)).toBe(true);
  expect((await ref.get()).exists).toBe(true);
  expect((await ref.get()).get('expireAt')).toBeUndefined();

  // Older than a day (the next daily pass): the pass crashes after removing the image, before deleting the message.
  const late = sentAt + 5 * HOUR + DAY;
  await expect(pass(setup, late, crashingAfterRemoving(imagePath))).rejects.toThrow('crash between');
  expect(await present(imagePath)).toBe(false);
  expect((await ref.get()).exists).toBe(true);
  // The next run finds the message again and finishes: the document goes, the conversation with it.
  const stats = await pass(setup, late);
  expect((await ref.get()).exists).toBe(false);
  expect(stats.deleted).toBeGreaterThanOrEqual(2);
  expect((await ws(setup.integration.workspaceId).collection('conversations').doc(setup.conversationId).get()).exists).toBe(false);
  // The first message (no objects) is TTL's: stamped at its time plus a day, not deleted by the pass.
  const plain = (await messages(setup).get()).docs;
  expect(plain.map((d) => d.id)).not.toContain(withImage.messageId);
  for (const doc of plain) expect((doc.get('expireAt') as Timestamp).toMillis()).toBe((doc.get('createdAt') as Timestamp).toMillis() + DAY);
});

test('a delivered reply with attachments: kept with its files through the first day, then its objects, upload records and itself go; a crash in between resumes', async () => {
  const setup = await oneDay();
  const workspaceId = setup.integration.workspaceId;
  await integrationRef(workspaceId, setup.integration.integrationId).update({ 'replies.attachments': { contentTypes: ['image/png', 'text/plain'], maxBytes: 1_000_000, maxCount: 5 } });
  const files = [
    await seedUpload(workspaceId, setup.conversationId, OPERATOR.uid, { bytes: Buffer.concat([PNG_HEADER, randomBytes(96)]), name: 'a.png', type: 'image/png' }),
    await seedUpload(workspaceId, setup.conversationId, OPERATOR.uid, { bytes: Buffer.from(`notes ${randomUUID()}\n`), name: 'b.txt', type: 'text/plain' }),
  ];
  const uploads = files.map((f) => ws(workspaceId).collection('attachmentUploads').doc(f.attachmentId));
  const paths = await Promise.all(uploads.map(async (u) => String((await u.get()).get('storagePath'))));
  const messageId = await writeReplyWithAttachments(workspaceId, setup.conversationId, OPERATOR, 'two files', files);
  const mirror = await waitForMirror(setup, messageId, (m) => typeof m.deliveryId === 'string');
  await deliverFully(setup.integration.key, mirror.deliveryId as string);
  const ref = messages(setup).doc(messageId);
  const repliedAt = ((await ref.get()).get('createdAt') as Timestamp).toMillis();

  await pass(setup, repliedAt + 3 * HOUR);
  for (const path of paths) expect(await present(path)).toBe(true);
  for (const u of uploads) expect((await u.get()).exists).toBe(true);
  expect((await ref.get()).exists).toBe(true);
  expect((await ref.get()).get('expireAt')).toBeUndefined();

  const late = repliedAt + 3 * HOUR + DAY;
  const [first, second] = paths;
  if (first === undefined || second === undefined) throw new Error('two uploads expected');
  await expect(pass(setup, late, crashingAfterRemoving(first))).rejects.toThrow('crash between');
  expect(await present(first)).toBe(false);
  for (const u of uploads) expect((await u.get()).exists).toBe(true);
  expect((await ref.get()).exists).toBe(true);

  const stats = await pass(setup, late);
  expect(await present(second)).toBe(false);
  for (const u of uploads) expect((await u.get()).exists).toBe(false);
  expect((await ref.get()).exists).toBe(false);
  expect(stats.objectsDeleted).toBeGreaterThanOrEqual(1);
});

test('a message without objects is stamped when accepted and by the pass as before; the emulator stand-in deletes it when due', async () => {
  const setup = await oneDay();
  const plain = await send(setup.integration, setup.externalConversationId, setup.customerId, { text: 'no image' });
  const ref = messages(setup).doc(plain.messageId);
  const createdAt = ((await ref.get()).get('createdAt') as Timestamp).toMillis();
  expect(((await ref.get()).get('expireAt') as Timestamp).toMillis()).toBe(createdAt + DAY);

  await pass(setup, createdAt + 2 * HOUR);
  expect(((await ref.get()).get('expireAt') as Timestamp).toMillis()).toBe(createdAt + DAY);
  // A conversation is never stamped: the pass deletes it.
  expect((await ws(setup.integration.workspaceId).collection('conversations').doc(setup.conversationId).get()).get('expireAt')).toBeUndefined();

  await pass(setup, createdAt + 2 * HOUR + DAY, localStore(), true);
  expect((await ref.get()).exists).toBe(false);
  expect((await messages(setup).get()).size).toBe(0);
  expect((await ws(setup.integration.workspaceId).collection('conversations').doc(setup.conversationId).get()).exists).toBe(false);
});
