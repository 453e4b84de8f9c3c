import { mkdir, open, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { dirname, join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import * as logger from './log';
import type { Config } from './config';
import { ServiceUnavailableError } from '../rules/errors';
import { errorCode } from './failures';

/**
 * The object store of incoming images and reply attachments: Cloud Storage deployed, a local
 * directory on the emulators. Shared by messages/ (incoming images), console-api/ (uploads) and
 * deliveries/ (reply attachments), hence in platform/.
 *
 * Paths are derived by the service (never from a client filename): incoming images from their
 * content hash (a retried message writes the same object once), reply attachments from their
 * upload's id (`attachmentPath`).
 */
export interface ImageStore {
  /** Stores `bytes` at `path` unless an object is already there (content-addressed: same bytes). */
  put(path: string, bytes: Buffer, contentType: string): Promise<void>;
  /** The bytes at `path`, or null when there is no object there. */
  get(path: string): Promise<Buffer | null>;
  /**
   * The object at `path` as a stream, with its stored size, or null when there is no object there.
   * For answering a file without holding it in memory (docs/decisions.md#stored-files-are-streamed):
   * the caller must consume or destroy `stream`.
   */
  open(path: string): Promise<StoredObject | null>;
  /** Removes the object at `path` (nothing when there is none). */
  remove(path: string): Promise<void>;
}

/** An object opened for reading: its size as stored, and its bytes as they are read. */
interface StoredObject {
  size: number;
  stream: Readable;
}

/** Cloud Storage, for deployments. `ifGenerationMatch: 0` makes a retry a no-op instead of a rewrite. */
class CloudStorageImageStore implements ImageStore {
  constructor(private readonly bucketName: string) {}

  async put(path: string, bytes: Buffer, contentType: string): Promise<void> {
    const { getStorage } = await import('firebase-admin/storage');
    const bucket = getStorage().bucket(this.bucketName);
    try {
      await bucket.file(path).save(bytes, { resumable: false, contentType, preconditionOpts: { ifGenerationMatch: 0 } });
    } catch (err) {
      // 412: the object exists already, which for a content-addressed path means the same bytes.
      if (errorCode(err) === 412) return;
      throw err;
    }
  }

  async get(path: string): Promise<Buffer | null> {
    const { getStorage } = await import('firebase-admin/storage');
    try {
      const [bytes] = await getStorage().bucket(this.bucketName).file(path).download();
      return bytes;
    } catch (err) {
      if (errorCode(err) === 404) return null;
      throw err;
    }
  }

  async open(path: string): Promise<StoredObject | null> {
    const { getStorage } = await import('firebase-admin/storage');
    const file = getStorage().bucket(this.bucketName).file(path);
    try {
      const [metadata] = await file.getMetadata();
      // Pinned to the generation whose size we announce: an object replaced meanwhile is not mixed in.
      const generation = metadata.generation === undefined ? undefined : Number(metadata.generation);
      const stream = (generation === undefined ? file : getStorage().bucket(this.bucketName).file(path, { generation })).createReadStream();
      return { size: Number(metadata.size), stream };
    } catch (err) {
      if (errorCode(err) === 404) return null;
      throw err;
    }
  }

  async remove(path: string): Promise<void> {
    const { getStorage } = await import('firebase-admin/storage');
    await getStorage().bucket(this.bucketName).file(path).delete({ ignoreNotFound: true });
  }
}

/**
 * A local directory, used under the emulators when no Storage emulator runs (it cannot start
 * offline). Writes go to a temp file then rename, so a crash never leaves a partial image.
 */
class LocalDirectoryImageStore implements ImageStore {
  private readonly root: string;
  constructor(root: string) {
    this.root = resolve(root);
  }

  private target(path: string): string {
    const target = join(this.root, path);
    if (!target.startsWith(this.root + '/')) throw new Error('image path escapes the store root');
    return target;
  }

  async get(path: string): Promise<Buffer | null> {
    try {
      return await readFile(this.target(path));
    } catch (err) {
      if ((err as { code?: unknown }).code === 'ENOENT') return null;
      throw err;
    }
  }

  async open(path: string): Promise<StoredObject | null> {
    let handle;
    try {
      handle = await open(this.target(path), 'r');
    } catch (err) {
      if ((err as { code?: unknown }).code === 'ENOENT') return null;
      throw err;
    }
    // The size and the stream of one open file: a rename over the path meanwhile does not mix two objects.
    try {
      const { size } = await handle.stat();
      return { size, stream: handle.createReadStream() };
    } catch (err) {
      await handle.close();
      throw err;
    }
  }

  async remove(path: string): Promise<void> {
    try {
      await unlink(this.target(path));
    } catch (err) {
      if ((err as { code?: unknown }).code !== 'ENOENT') throw err;
    }
  }

  async put(path: string, bytes: Buffer): Promise<void> {
    const target = this.target(path);
    try {
      await stat(target);
      return;
    } catch {
      // not there yet
    }
    await mkdir(dirname(target), { recursive: true });
    const temp = `${target}.${randomBytes(6).toString('hex')}.tmp`;
    await writeFile(temp, bytes);
    await rename(temp, target);
  }
}

/** Seconds before a client retries a message with images when no bucket is configured (an operator must act). */
const IMAGE_STORE_RETRY_AFTER_SECONDS = 60;

/**
 * A deployment without `IMAGE_BUCKET`. Failing at load time would crash-loop every instance and
 * take text messages down with it; instead each message with images is refused with a 503 the
 * connector retries (same eventId, same files), and each refusal logs an ERROR naming the setting.
 */
class MisconfiguredImageStore implements ImageStore {
  get(): Promise<Buffer | null> {
    return this.put();
  }
  open(): Promise<StoredObject | null> {
    return this.put();
  }
  remove(): Promise<void> {
    return this.put();
  }
  put(): Promise<never> {
    logger.error('image_store.misconfigured', {
      setting: 'IMAGE_BUCKET',
      problem: 'IMAGE_BUCKET is not set: messages with images are refused with 503 image_store_unavailable until it names the images bucket (functions/.env, see docs/operations.md).',
    });
    return Promise.reject(
      new ServiceUnavailableError('image_store_unavailable', 'Images cannot be stored at the moment; retry later with the same eventId and files. Messages without images are not affected.', IMAGE_STORE_RETRY_AFTER_SECONDS),
    );
  }
}

export function createImageStore(settings: Config['imageStore']): ImageStore {
  if (settings.kind === 'local') return new LocalDirectoryImageStore(settings.dir);
  return settings.bucket === undefined ? new MisconfiguredImageStore() : new CloudStorageImageStore(settings.bucket);
}

/**
 * The object path of an incoming message's image: one object per message and image
 * (docs/decisions.md#stored-files-under-erasure-retention-and-export). The message id is
 * deterministic (the integration, the eventId and the content), so a retried eventId writes the
 * same object once; two messages with the same bytes have two objects, so erasing or expiring one
 * never deletes the other's image.
 */
export function imagePath(workspaceId: string, conversationId: string, messageId: string, sha256: string, format: string): string {
  return `workspaces/${workspaceId}/conversations/${conversationId}/messages/${messageId}/images/${sha256}.${format}`;
}

/**
 * Whether `path` is an image stored before images had one object per message: content-addressed
 * per integration (`workspaces/{ws}/integrations/{id}/images/{sha256}.{ext}`), so possibly named
 * by other messages too. Such paths stay readable; they are deleted only once no other message
 * names them (privacy/stored-objects.ts).
 */
export const isSharedImagePath = (path: string): boolean => /^workspaces\/[^/]+\/integrations\/[^/]+\/images\/[0-9a-f]{64}\.[a-z]+$/.test(path);

/**
 * Object path of one uploaded reply attachment (docs/data-model.md#attachment-uploads): per upload,
 * not per content, so that each object belongs to exactly one upload record and deleting one
 * conversation's files (retention, erasure, the unused-upload cleanup) never removes a file another
 * conversation or reply uses, even when the bytes are the same.
 */
export function attachmentPath(workspaceId: string, conversationId: string, attachmentId: string): string {
  return `workspaces/${workspaceId}/conversations/${conversationId}/attachments/${attachmentId}`;
}
