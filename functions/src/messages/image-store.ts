/**
 * Content-addressed image storage for incoming messages: the shared object store of
 * ../platform/object-store.ts (reply attachments use the same store).
 */
export { createImageStore, imagePath, isSharedImagePath, type ImageStore } from '../platform/object-store';
