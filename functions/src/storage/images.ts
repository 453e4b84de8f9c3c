import { mkdir, rename, stat, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Config } from '../config';

/**
 * Where accepted images are stored. Paths are derived by the service from the content hash
 * (never from a client filename), so a retried upload writes the same object once.
 */
export interface ImageStore {
  /** Stores `bytes` at `path` unless an object is already there (content-addressed: same bytes). */
  put(path: string, bytes: Buffer, contentType: string): Promise<void>;
}

/** Cloud Storage, for deployments. `ifGenerationMatch: 0` makes a retry a no-op instead of a rewrite. */
export class CloudStorageImageStore implements ImageStore {
  constructor(private readonly bucketName: string | undefined) {}

  async put(path: string, bytes: Buffer, contentType: string): Promise<void> {
    const { getStorage } = await import('firebase-admin/storage');
    const bucket = this.bucketName ? getStorage().bucket(this.bucketName) : getStorage().bucket();
    try {
      await bucket.file(path).save(bytes, { resumable: false, contentType, preconditionOpts: { ifGenerationMatch: 0 } });
    } catch (err) {
      // 412: the object exists already, which for a content-addressed path means the same bytes.
      if (typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 412) return;
      throw err;
    }
  }
}

/**
 * A local directory, used under the emulators when no Storage emulator runs (it cannot start
 * offline). Writes go to a temp file then rename, so a crash never leaves a partial image.
 */
export class LocalDirectoryImageStore implements ImageStore {
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
}

export function createImageStore(settings: Config['imageStore']): ImageStore {
  return settings.kind === 'local' ? new LocalDirectoryImageStore(settings.dir) : new CloudStorageImageStore(settings.bucket);
}

/** Content-addressed object path for an image of an integration. */
export function imagePath(workspaceId: string, integrationId: string, sha256: string, format: string): string {
  return `workspaces/${workspaceId}/integrations/${integrationId}/images/${sha256}.${format}`;
}
