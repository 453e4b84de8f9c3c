/**
 * Content-addressed image storage for incoming messages: the shared object store of
 * ../platform/object-store.ts (reply attachments use the same store), and the content address
 * itself: the SHA-256 of an image's bytes (images.ts, a pure rules module, does not hash).
 */
import { createHash } from 'node:crypto';
import type { InspectedImage } from '../rules/images';

export { createImageStore, imagePath, isSharedImagePath, type ImageStore } from '../platform/object-store';

/** An inspected image and its content address. */
export interface HashedImage extends InspectedImage {
  /** Lowercase hex SHA-256 of the file bytes: the stored object's name and the fingerprint's input. */
  sha256: string;
}

/** `image` (what inspectImage said of `bytes`) with the lowercase hex SHA-256 of `bytes`. */
export function withSha256(image: InspectedImage, bytes: Uint8Array): HashedImage {
  return { ...image, sha256: createHash('sha256').update(bytes).digest('hex') };
}
