/**
 * The stored objects behind a customer's data (docs/privacy.md#stored-objects), for erasure,
 * retention and export: incoming images, named by their message (`images[].path`), and reply
 * attachments, named by their upload record (`attachmentUploads/{attachmentId}`, whose
 * `storagePath` names the object: docs/data-model.md#attachment-uploads). A reply's
 * `attachments` carry no path; the upload record is the one place that knows it, so this module
 * never derives a path itself.
 *
 * An object is removed only when nothing that stays names it:
 * - an image stored since images have one object per message is named by that message alone;
 *   one stored before (content-addressed per integration, `isSharedImagePath`) may be named by
 *   other messages, even other customers', so it is removed only when every message that names it
 *   is going too (a query on the exact image entry);
 * - an attachment object is removed only when no other upload record names its path (one query
 *   per object; with one object per upload that is always the record itself).
 * A missing object is not an error, so every removal here can be repeated after a crash.
 */
import type { DocumentData, DocumentSnapshot, Firestore, QueryDocumentSnapshot } from 'firebase-admin/firestore';
import { isSharedImagePath } from '../platform/object-store';
import { paths } from '../platform/paths';
import { collectionQuery, groupQuery, QUERIES } from '../platform/queries';
import { isStorableDocumentId } from '../platform/ids';
import type { ImageStore } from '../messages/image-store';
import { attachmentIdsOf } from '../deliveries/reply';

/** An image entry of a message as stored (`images[]`): the object's path and what the export shows. */
export type ImageEntry = Record<string, unknown> & { path: string };

const isMap = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The image entries of a message that name an object (anything else is ignored). */
export function imageEntriesOf(message: DocumentData | undefined): ImageEntry[] {
  const list: unknown = message?.images;
  return Array.isArray(list) ? list.filter((item): item is ImageEntry => isMap(item) && typeof item.path === 'string') : [];
}

/** The upload records of a reply's attachments that still exist (the reply names them by `attachmentId`). */
export async function uploadRecordsOf(db: Firestore, workspaceId: string, message: DocumentData | undefined): Promise<DocumentSnapshot[]> {
  const ids = [...new Set(attachmentIdsOf(message?.attachments))].filter(isStorableDocumentId);
  if (ids.length === 0) return [];
  const snaps = await db.getAll(...ids.map((id) => db.doc(paths.attachmentUpload(workspaceId, id))));
  return snaps.filter((snap) => snap.exists);
}

/**
 * A reply's attachments as the export shows them: each entry as the reply names it, with the
 * object's store path from its upload record (`path`, like an image's; null when the record is
 * gone). The bytes stay in the store.
 */
export async function attachmentReferencesOf(db: Firestore, workspaceId: string, message: DocumentData): Promise<Array<Record<string, unknown>> | undefined> {
  const list: unknown = message.attachments;
  if (!Array.isArray(list)) return undefined;
  const uploads = new Map((await uploadRecordsOf(db, workspaceId, message)).map((u) => [u.id, storagePathOf(u.data())]));
  return list.filter(isMap).map((entry) => ({ ...entry, path: uploads.get(String(entry.attachmentId)) ?? null }));
}

/** The object path an upload record names, or null. */
export const storagePathOf = (upload: DocumentData | undefined): string | null => (typeof upload?.storagePath === 'string' && upload.storagePath !== '' ? upload.storagePath : null);

/** What a removal did: documents read (the reference checks) and objects removed. */
export interface Removal {
  reads: number;
  removed: number;
}

/** Messages naming one shared image that a check reads beyond the ones going; more than that: the object is kept. */
const SHARED_SCAN = 20;

/**
 * Removes the images of `messages` (all going now) from the store. A shared (content-addressed)
 * image is kept while a message that is not going names it; `stays(other)` says whether such a
 * message stays (the default: any message not in `messages`). When more messages name it than one
 * check reads, it is kept too: a leftover object is better than another customer's lost image.
 */
export async function removeImages(db: Firestore, store: ImageStore, messages: readonly QueryDocumentSnapshot[], stays?: (other: QueryDocumentSnapshot) => boolean): Promise<Removal> {
  const going = new Set(messages.map((m) => m.ref.path));
  const keepIf = stays ?? ((other: QueryDocumentSnapshot) => !going.has(other.ref.path));
  const byPath = new Map<string, ImageEntry>();
  for (const m of messages) for (const entry of imageEntriesOf(m.data())) byPath.set(entry.path, entry);
  const result: Removal = { reads: 0, removed: 0 };
  for (const [path, entry] of byPath) {
    if (isSharedImagePath(path)) {
      // Every message naming a shared image holds the identical entry (path, hash, type, size and
      // dimensions all follow from the bytes), so the exact entry finds them all.
      const limit = going.size + SHARED_SCAN;
      const naming = await groupQuery(db, QUERIES.messagesNamingImage, entry).limit(limit).get();
      result.reads += naming.size;
      if (naming.size >= limit || naming.docs.some(keepIf)) continue;
    }
    await store.remove(path);
    result.removed += 1;
  }
  return result;
}

/**
 * Removes the objects of `uploads` (upload records all going now), each unless another upload
 * record names the same path.
 */
export async function removeAttachmentObjects(db: Firestore, store: ImageStore, workspaceId: string, uploads: readonly DocumentSnapshot[]): Promise<Removal> {
  const going = new Set(uploads.map((u) => u.ref.path));
  const result: Removal = { reads: 0, removed: 0 };
  for (const path of new Set(uploads.map((u) => storagePathOf(u.data())).filter((p): p is string => p !== null))) {
    const naming = await collectionQuery(db.collection(paths.attachmentUploads(workspaceId)), QUERIES.uploadsOfStoragePath, path).limit(going.size + 1).get();
    result.reads += naming.size;
    if (naming.docs.some((other) => !going.has(other.ref.path))) continue;
    await store.remove(path);
    result.removed += 1;
  }
  return result;
}
