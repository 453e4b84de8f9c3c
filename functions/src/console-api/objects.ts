/** The object store of uploads and media (../platform/object-store.ts), created on first use per instance. */
import { config } from '../platform/config';
import { createImageStore, type ImageStore } from '../platform/object-store';

let store: ImageStore | undefined;
export const objectStore = (): ImageStore => (store ??= createImageStore(config().imageStore));
