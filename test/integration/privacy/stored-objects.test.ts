/**
 * Stored files under erasure and retention (docs/privacy.md#stored-objects), through the real
 * API, triggers and the functions' local store:
 *  - the cascade of a customer whose sole conversation has reply attachments (used and unused
 *    uploads): their objects and upload records go, each counted once as an attachment, also when
 *    the job crashes after every committed step (and the trigger runs it at the same time);
 *  - two customers send the same image: erasing one leaves the other's image (one object per
 *    message), and an image stored the old way (content-addressed per integration, shared by both
 *    messages) stays until the last message naming it goes;
 *  - retention deletes a reply's attachment objects and upload records with the reply (more in
 *    retention-objects.test.ts);
 *  - the export names a reply's attachments by their store path (from the upload record).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { FieldValue, type DocumentData, type DocumentReference } from 'firebase-admin/firestore';
import { runErasure, type StepKind } from '../../../functions/src/privacy/erasure';
import { runRetention } from '../../../functions/src/privacy/retention';
import { exportFilePath } from '../../../functions/src/privacy/export';
import { adminDb, integrationRef, testImageDir } from '../helpers/stack';
import { deliverFully, deliveryTestFile, eventually, waitForMirror, type ConversationSetup } from '../helpers/deliveries';
import { seedUpload, writeReplyWithAttachments, type Uploaded } from '../helpers/console-uploads';
import { png } from '../../unit/fixtures/image-bytes';
import { age, localStore, requestErasure, send, waitForErasure, ws } from './helpers';

const file = deliveryTestFile();
const DAY = 86_400_000;
const CAPABILITY = { contentTypes: ['image/png', 'application/pdf', 'text/plain'], maxBytes: 10 * 1024 * 1024, maxCount: 5 };
const OPERATOR = { uid: 'operator-1', idToken: '' };
const PNG_HEADER = Buffer.from('89504e470d0a1a0a', 'hex');

const present = async (path: string): Promise<boolean> => (await localStore().get(path)) !== null;
const uploadRef = (workspaceId: string, attachmentId: string): DocumentReference => ws(workspaceId).collection('attachmentUploads').doc(attachmentId);
const storagePathOf = async (workspaceId: string, attachmentId: string): Promise<string> => String((await uploadRef(workspaceId, attachmentId).get()).get('storagePath'));
const imagePathsOf = async (ref: DocumentReference): Promise<string[]> => (((await ref.get()).get('images') ?? []) as Array<{ path: string }>).map((i) => i.path);
const messageRef = (workspaceId: string, conversationId: string, messageId: string): DocumentReference =>
  ws(workspaceId).collection('conversations').doc(conversationId).collection('messages').doc(messageId);

async function withAttachments(setup: ConversationSetup): Promise<void> {
  await integrationRef(setup.integration.workspaceId, setup.integration.integrationId).update({ 'replies.attachments': CAPABILITY });
}

/** A reply with `files`, written as the console writes it, once the trigger has made its delivery. */
async function replyWith(setup: ConversationSetup, text: string, files: Uploaded[]): Promise<{ messageId: string; deliveryId: string }> {
  const messageId = await writeReplyWithAttachments(setup.integration.workspaceId, setup.conversationId, OPERATOR, text, files);
  const mirror = await waitForMirror(setup, messageId, (m) => typeof m.deliveryId === 'string');
  return { messageId, deliveryId: mirror.deliveryId as string };
}

interface Scene {
  setup: ConversationSetup;
  /** The erased customer's sole conversation: a used upload, one never sent, and one whose bytes another conversation uploaded too. */
  uploads: { used: Uploaded; unused: Uploaded; sameBytes: Uploaded };
  /** The other customer's conversation, with an upload of the same bytes as `sameBytes`, and an image of the same bytes as the erased customer's. */
  other: { conversationId: string; upload: Uploaded; imageMessage: DocumentReference };
  erasedImagePaths: string[];
}

async function scene(): Promise<Scene> {
  const setup = await file.ownConversation();
  const { integration } = setup;
  const workspaceId = integration.workspaceId;
  await withAttachments(setup);
  const image = png(40 + Math.floor(Math.random() * 200), 7);
  const mine = await send(integration, setup.externalConversationId, setup.customerId, { image });
  const otherCustomer = `other-${randomUUID().slice(0, 8)}`;
  const theirs = await send(integration, `theirs-${randomUUID()}`, otherCustomer, { image });
  const shared = Buffer.concat([PNG_HEADER, randomBytes(256)]);
  const used = await seedUpload(workspaceId, setup.conversationId, OPERATOR.uid, { bytes: Buffer.concat([PNG_HEADER, randomBytes(128)]), name: 'used.png', type: 'image/png' });
  const unused = await seedUpload(workspaceId, setup.conversationId, OPERATOR.uid, { bytes: Buffer.from(`never sent ${randomUUID()}\n`), name: 'draft.txt', type: 'text/plain' });
  const sameBytes = await seedUpload(workspaceId, setup.conversationId, OPERATOR.uid, { bytes: shared, name: 'same.png', type: 'image/png' });
  const otherUpload = await seedUpload(workspaceId, theirs.conversationId, OPERATOR.uid, { bytes: shared, name: 'same-elsewhere.png', type: 'image/png' });
  const reply = await replyWith(setup, 'two files', [used, sameBytes]);
  await deliverFully(integration.key, reply.deliveryId);
  return {
    setup,
    uploads: { used, unused, sameBytes },
    other: { conversationId: theirs.conversationId, upload: otherUpload, imageMessage: messageRef(workspaceId, theirs.conversationId, theirs.messageId) },
    erasedImagePaths: await imagePathsOf(messageRef(workspaceId, mine.conversationId, mine.messageId)),
  };
}

// The sole conversation: the first message, the image message and one reply; its three uploads; one delivery.
const EXPECTED_COUNTS = { conversations: 1, messages: 3, images: 1, attachments: 3, deliveries: 1 };

test('the cascade deletes the reply attachments and upload records, counted once, through a crash after every committed step; the other customer keeps the same image and file', async () => {
  // The erasure's trigger runs it too; when it got every upload step first, this run crashed after
  // none of them, so the scene is set up again (at most 8 times: with the message-events phase in
  // the cascade, a fresh-clone run once lost the race 4 times in a row).
  let s = await scene();
  let erasureId = '';
  const crashedAfter = new Set<StepKind>();
  for (let attempt = 0; attempt < 8 && !crashedAfter.has('uploads'); attempt += 1) {
    if (attempt > 0) s = await scene();
    const workspaceId = s.setup.integration.workspaceId;
    const paths = await Promise.all(Object.values(s.uploads).map((u) => storagePathOf(workspaceId, u.attachmentId)));
    for (const path of [...paths, ...s.erasedImagePaths]) expect(await present(path)).toBe(true);
    erasureId = await requestErasure(s.setup.integration, s.setup.customerId);
    // Runs that each die right after a step that deleted something committed (an instance crash),
    // until one finishes: every kind of step is interrupted at least once.
    for (let run = 0; run < 50; run += 1) {
      let crashed = false;
      const result = await runErasure(adminDb(), localStore(), workspaceId, erasureId, 30_000, {
        afterCommit: (deleted, kind) => {
          if (deleted > 0 && kind !== undefined) {
            crashed = true;
            crashedAfter.add(kind);
            throw new Error('injected crash');
          }
        },
      }).catch((err: unknown) => {
        if (!(err instanceof Error && err.message === 'injected crash')) throw err;
        return null;
      });
      if (!crashed && result?.done === true) break;
    }
  }
  expect(crashedAfter.has('uploads')).toBe(true);
  const workspaceId = s.setup.integration.workspaceId;
  const audit = await waitForErasure(workspaceId, erasureId);
  expect(audit.counts).toEqual(EXPECTED_COUNTS);

  // The erased conversation's upload records and their objects are gone (used or not) ...
  for (const u of Object.values(s.uploads)) expect((await uploadRef(workspaceId, u.attachmentId).get()).exists).toBe(false);
  for (const path of s.erasedImagePaths) expect(await present(path)).toBe(false);
  // ... except an object another conversation's upload names too (content-addressed storage):
  // the other conversation's file is still there, and so is its image of the same bytes.
  const otherPath = await storagePathOf(workspaceId, s.other.upload.attachmentId);
  expect(await present(otherPath)).toBe(true);
  const otherImages = await imagePathsOf(s.other.imageMessage);
  expect(otherImages).toHaveLength(1);
  for (const path of otherImages) expect(await present(path)).toBe(true);
  expect(otherImages).not.toEqual(s.erasedImagePaths);

  // Running it again (a redelivered trigger) changes nothing.
  expect(await runErasure(adminDb(), localStore(), workspaceId, erasureId, 30_000)).toMatchObject({ done: true, deleted: 0 });
  expect(((await ws(workspaceId).collection('erasures').doc(erasureId).get()).data() as DocumentData).counts).toEqual(EXPECTED_COUNTS);
  // Up to 8 scenes of a few seconds each (see above).
}, 150_000);

/** Rewrites a message's image entry as it was stored before images had one object per message (content-addressed per integration). */
async function storeTheOldWay(ref: DocumentReference, integrationId: string, workspaceId: string, bytes: Buffer): Promise<string> {
  const [entry] = ((await ref.get()).get('images') ?? []) as Array<Record<string, unknown>>;
  const legacy = `workspaces/${workspaceId}/integrations/${integrationId}/images/${String(entry?.sha256)}.png`;
  const local = join(testImageDir(), legacy);
  await mkdir(dirname(local), { recursive: true });
  await writeFile(local, bytes);
  await ref.update({ images: [{ ...entry, path: legacy }] });
  return legacy;
}

test('an image stored the old way (one object for every message with the same bytes) stays until the last message naming it is erased', async () => {
  const setup = await file.ownConversation();
  const { integration } = setup;
  const workspaceId = integration.workspaceId;
  const image = png(300 + Math.floor(Math.random() * 300), 9);
  const first = await send(integration, setup.externalConversationId, setup.customerId, { image });
  const secondCustomer = `second-${randomUUID().slice(0, 8)}`;
  const second = await send(integration, `second-${randomUUID()}`, secondCustomer, { image });
  const firstRef = messageRef(workspaceId, first.conversationId, first.messageId);
  const secondRef = messageRef(workspaceId, second.conversationId, second.messageId);
  const legacy = await storeTheOldWay(firstRef, integration.integrationId, workspaceId, image);
  expect(await storeTheOldWay(secondRef, integration.integrationId, workspaceId, image)).toBe(legacy);

  const one = await waitForErasure(workspaceId, await requestErasure(integration, setup.customerId));
  // The conversation's first message (text) and the image message.
  expect(one.counts).toMatchObject({ messages: 2, images: 1 });
  expect((await firstRef.get()).exists).toBe(false);
  // The second customer's message still names it: it is still there.
  expect(await present(legacy)).toBe(true);

  await waitForErasure(workspaceId, await requestErasure(integration, secondCustomer));
  expect((await secondRef.get()).exists).toBe(false);
  expect(await present(legacy)).toBe(false);
});

test('retention: a reply goes with its attachment objects and upload records; the same image in a newer message stays', async () => {
  const setup = await file.ownConversation();
  const { integration } = setup;
  const workspaceId = integration.workspaceId;
  const base = ws(workspaceId);
  await withAttachments(setup);
  const image = png(600 + Math.floor(Math.random() * 300), 5);
  const old = await send(integration, setup.externalConversationId, setup.customerId, { image });
  const upload = await seedUpload(workspaceId, setup.conversationId, OPERATOR.uid, { bytes: Buffer.concat([PNG_HEADER, randomBytes(64)]), name: 'old.png', type: 'image/png' });
  const reply = await replyWith(setup, 'with a file', [upload]);
  await deliverFully(integration.key, reply.deliveryId);
  const attachmentPath = await storagePathOf(workspaceId, upload.attachmentId);
  // A newer message of another conversation with the same bytes (its own object).
  const fresh = await send(integration, `fresh-${randomUUID()}`, `fresh-${randomUUID().slice(0, 8)}`, { image });
  const freshImages = await imagePathsOf(messageRef(workspaceId, fresh.conversationId, fresh.messageId));
  const oldImages = await imagePathsOf(messageRef(workspaceId, old.conversationId, old.messageId));

  const conversation = base.collection('conversations').doc(setup.conversationId);
  // Five days old under a 3-day period: the reply and the old image message are past it (today's are not).
  for (const doc of (await conversation.collection('messages').get()).docs) await age(doc.ref, 'createdAt', 5 * DAY);
  await age(base.collection('deliveries').doc(reply.deliveryId), 'createdAt', 5 * DAY);
  await age(conversation, 'lastMessageAt', 5 * DAY);
  await base.collection('settings').doc('retention').set({ days: 3 });
  const stats = await runRetention(adminDb(), localStore(), { deleteDue: true, workspaceIds: [workspaceId] });

  expect((await conversation.collection('messages').doc(reply.messageId).get()).exists).toBe(false);
  expect((await uploadRef(workspaceId, upload.attachmentId).get()).exists).toBe(false);
  expect(await present(attachmentPath)).toBe(false);
  for (const path of oldImages) expect(await present(path)).toBe(false);
  expect(stats.objectsDeleted).toBeGreaterThanOrEqual(2);
  // The newer message and its image (same bytes, its own object) stay.
  expect((await messageRef(workspaceId, fresh.conversationId, fresh.messageId).get()).exists).toBe(true);
  for (const path of freshImages) expect(await present(path)).toBe(true);
});

test('the export names a reply\'s attachments by their store path, like the images', async () => {
  const setup = await file.ownConversation();
  const { integration } = setup;
  const workspaceId = integration.workspaceId;
  await withAttachments(setup);
  const withImage = await send(integration, setup.externalConversationId, setup.customerId, { withImage: true });
  const upload = await seedUpload(workspaceId, setup.conversationId, OPERATOR.uid, { bytes: Buffer.from(`invoice ${randomUUID()}\n`), name: 'invoice.txt', type: 'text/plain' });
  const reply = await replyWith(setup, 'your invoice', [upload]);
  const exportId = `ex-${randomUUID()}`;
  await ws(workspaceId).collection('exports').doc(exportId).create({ integrationId: integration.integrationId, externalCustomerId: setup.customerId, requestedAt: FieldValue.serverTimestamp(), requestedBy: 'admin-1' });
  await eventually(async () => ((await ws(workspaceId).collection('exports').doc(exportId).get()).get('status') === 'done' ? true : undefined), 'the export done');

  const text = String(await localStore().get(exportFilePath(workspaceId, exportId)));
  const lines = text.trimEnd().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
  const byId = (messageId: string) => lines.find((l) => l.type === 'message' && l.messageId === messageId);
  expect(byId(reply.messageId)?.attachments).toEqual([{ ...upload, path: await storagePathOf(workspaceId, upload.attachmentId) }]);
  const [image] = (byId(withImage.messageId)?.images ?? []) as Array<Record<string, unknown>>;
  expect(image).toMatchObject({ path: (await imagePathsOf(messageRef(workspaceId, withImage.conversationId, withImage.messageId)))[0], sha256: expect.stringMatching(/^[0-9a-f]{64}$/) as string, contentType: 'image/png' });
  expect(await present(String(image?.path))).toBe(true);
});
