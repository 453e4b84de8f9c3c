import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import * as logger from 'firebase-functions/logger';
import type { Config } from '../platform/config';
import { ServiceUnavailableError } from '../platform/errors';
import { errorCode } from '../platform/failures';

/**
 * Where accepted images are stored. Paths are derived by the service from the content hash
 * (never from a client filename), so a retried upload writes the same object once.
 */
export interface ImageStore {
  /** Stores `bytes` at `path` unless an object is already there (content-addressed: same bytes). */
  put(path: string, bytes: Buffer, contentType: string): Promise<void>;
  /** Deletes the object at `path`; an object that is not there is not an error (retention and erasure repeat steps). */
  delete(path: string): Promise<void>;
  /** Whether an object is stored at `path` (tests and the erasure's checks). */
  exists(path: string): Promise<boolean>;
  /** The object at `path`, or null when there is none (an export's download). */
  read(path: string): Promise<Buffer | null>;
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

  async delete(path: string): Promise<void> {
    const { getStorage } = await import('firebase-admin/storage');
    await getStorage().bucket(this.bucketName).file(path).delete({ ignoreNotFound: true });
  }

  async exists(path: string): Promise<boolean> {
    const { getStorage } = await import('firebase-admin/storage');
    const [found] = await getStorage().bucket(this.bucketName).file(path).exists();
    return found;
  }

  async read(path: string): Promise<Buffer | null> {
    const { getStorage } = await import('firebase-admin/storage');
    try {
      const [bytes] = await getStorage().bucket(this.bucketName).file(path).download();
      return bytes;
    } catch (err) {
      if (errorCode(err) === 404) return null;
      throw err;
    }
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

  async put(path: string, bytes: Buffer): Promise<void> {
    const target = join(this.root, path);
    if (!target.startsWith(this.root + '/')) throw new Error('image path escapes the store root');
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

  private target(path: string): string {
    const target = join(this.root, path);
    if (!target.startsWith(this.root + '/')) throw new Error('object path escapes the store root');
    return target;
  }

  async delete(path: string): Promise<void> {
    await rm(this.target(path), { force: true });
  }

  async exists(path: string): Promise<boolean> {
    try {
      await stat(this.target(path));
      return true;
    } catch {
      return false;
    }
  }

  async read(path: string): Promise<Buffer | null> {
    try {
      return await readFile(this.target(path));
    } catch {
      return null;
    }
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
  // Nothing can have been stored without a bucket: there is nothing to delete.
  delete(): Promise<void> {
    return Promise.resolve();
  }

  exists(): Promise<boolean> {
    return Promise.resolve(false);
  }

  read(): Promise<Buffer | null> {
    return Promise.resolve(null);
  }

  put(): Promise<void> {
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

/** Content-addressed object path for an image of an integration. */
export function imagePath(workspaceId: string, integrationId: string, sha256: string, format: string): string {
  return `workspaces/${workspaceId}/integrations/${integrationId}/images/${sha256}.${format}`;
}
