/**
 * The console function's Firestore reads and writes (docs/data-model.md#attachment-uploads): the
 * conversation an upload is for and its integration's capability, the upload record, and what a
 * media request names. Plain functions over the Admin SDK's client.
 */
import { randomBytes } from 'node:crypto';
import type { Firestore } from 'firebase-admin/firestore';
import type { AttachmentCapability, AttachmentContentType } from '../contract';
import { paths } from '../platform/paths';
import { attachmentPath } from '../platform/object-store';
import { shardOf } from '../platform/shards';
import { readIntegration } from '../integrations/store';
import { uploadRecordOf } from '../deliveries/reply';
import type { MediaRef } from './rules';

/** How long an upload no reply uses is kept (docs/data-model.md#attachment-uploads). */
const UNUSED_UPLOAD_LIFETIME_MS = 24 * 60 * 60 * 1000;

/** A new upload's id: `a_` and 24 base64url characters (144 random bits; the contract's `ATTACHMENT_ID_PATTERN`). */
export const newAttachmentId = (): string => `a_${randomBytes(18).toString('base64url')}`;

/**
 * The capability of the conversation's integration: `found: false` when the conversation does not
 * exist in the workspace; `capability: null` when its integration takes no files.
 */
export async function conversationCapability(db: Firestore, workspaceId: string, conversationId: string): Promise<{ found: false } | { found: true; capability: AttachmentCapability | null }> {
  const conversation = await db.doc(paths.conversation(workspaceId, conversationId)).get();
  if (!conversation.exists) return { found: false };
  const integrationId: unknown = conversation.get('integrationId');
  const integration = typeof integrationId === 'string' ? await readIntegration(db, workspaceId, integrationId) : null;
  return { found: true, capability: integration?.replies.attachments ?? null };
}

/** The stored record of one upload (docs/data-model.md#attachment-uploads). */
export interface NewUpload {
  workspaceId: string;
  conversationId: string;
  attachmentId: string;
  uploadedBy: string;
  name: string;
  contentType: AttachmentContentType;
  size: number;
  sha256: string;
  now: number;
  /** The shard of the cleanup's index (`QUEUE_SHARDS`, docs/capacity.md). */
  shardCount: number;
}

/**
 * The upload record: unused (`usedBy: null`) and due for the cleanup at `cleanupAt` until a reply's
 * sequencing takes it (../deliveries/reply.ts `markUploadUsed`). `storagePath` is where its bytes
 * are (one object per upload), which retention and erasure delete with the reply.
 */
export function uploadRecord(u: NewUpload): Record<string, unknown> {
  return {
    workspaceId: u.workspaceId,
    conversationId: u.conversationId,
    uploadedBy: u.uploadedBy,
    name: u.name,
    contentType: u.contentType,
    size: u.size,
    sha256: u.sha256,
    storagePath: attachmentPath(u.workspaceId, u.conversationId, u.attachmentId),
    createdAt: u.now,
    usedBy: null,
    cleanupAt: u.now + UNUSED_UPLOAD_LIFETIME_MS,
    shard: shardOf(u.attachmentId, u.shardCount),
  };
}

/** Writes the record of a new upload (`create`: an id is never reused). */
export async function createUploadRecord(db: Firestore, upload: NewUpload): Promise<void> {
  await db.doc(paths.attachmentUpload(upload.workspaceId, upload.attachmentId)).create(uploadRecord(upload));
}

/** Deletes an upload record whose object could not be stored (the cleanup would find it otherwise, a day later). */
export async function deleteUploadRecord(db: Firestore, workspaceId: string, attachmentId: string): Promise<void> {
  await db.doc(paths.attachmentUpload(workspaceId, attachmentId)).delete();
}

/** A stored file a media request may answer: where it is, its type and its name. */
export interface StoredMedia {
  path: string;
  contentType: string;
  name: string;
}

const isMap = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The stored file `ref` names, or null when there is none in that conversation of that workspace:
 * an incoming message's image at its index (the message's `images[i].path`), or an upload of that
 * conversation (its record's `storagePath`).
 */
export async function findMedia(db: Firestore, ref: MediaRef): Promise<StoredMedia | null> {
  if (ref.kind === 'attachment') {
    const data = (await db.doc(paths.attachmentUpload(ref.workspaceId, ref.attachmentId)).get()).data();
    const upload = uploadRecordOf(data);
    if (upload === null || upload.workspaceId !== ref.workspaceId || upload.conversationId !== ref.conversationId) return null;
    const name: unknown = data?.name;
    return { path: upload.storagePath, contentType: upload.contentType, name: typeof name === 'string' ? name : ref.attachmentId };
  }
  const message = await db.doc(paths.message(ref.workspaceId, ref.conversationId, ref.messageId)).get();
  if (message.get('direction') !== 'inbound') return null;
  const images: unknown = message.get('images');
  const image: unknown = Array.isArray(images) ? images[ref.index] : undefined;
  if (!isMap(image) || typeof image.path !== 'string' || typeof image.contentType !== 'string') return null;
  const extension = image.contentType.split('/')[1] ?? 'bin';
  return { path: image.path, contentType: image.contentType, name: `image-${ref.index + 1}.${extension}` };
}
