/**
 * Files through the service's console endpoints, with the signed-in user's Firebase Auth ID token
 * (docs/console.md#attachments-and-media): uploading a reply's file (`POST /console/v1/attachments`,
 * with progress) and showing stored media (`GET /console/v1/media`) as blob URLs. The browser never
 * gets a public or signed URL of the store: every byte comes through the members-only endpoint.
 */
import { shownFileName } from '../../functions/src/contract/file-names';
import { h, replace } from './dom';
import { isImage, uploadErrorText, type UploadedAttachment } from './attachments';
import { formatBytes, thumbnailBox } from './format';
import type { Session } from './session';

const UPLOAD_PATH = '/console/v1/attachments';
const MEDIA_PATH = '/console/v1/media';

/** What identifies a stored file for `GET /console/v1/media`: an incoming image (by its message and index) or a reply's attachment. */
export type MediaRef =
  | { kind: 'image'; conversationId: string; messageId: string; index: number }
  | { kind: 'attachment'; conversationId: string; attachmentId: string };

/** The media URL (same origin) of `ref` in the session's workspace. */
function mediaUrl(workspaceId: string, ref: MediaRef): string {
  const q = new URLSearchParams({ workspaceId, conversationId: ref.conversationId });
  if (ref.kind === 'image') {
    q.set('messageId', ref.messageId);
    q.set('image', String(ref.index));
  } else q.set('attachmentId', ref.attachmentId);
  return `${MEDIA_PATH}?${q.toString()}`;
}

/** An upload that failed: the service's sentence (from its error envelope) and code. */
class UploadError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

/**
 * Uploads one file for a reply in `conversationId` (multipart `workspaceId`, `conversationId`,
 * `file`), reporting progress (0..1). XMLHttpRequest, because fetch reports no upload progress.
 */
export async function uploadAttachment(session: Session, conversationId: string, file: File, onProgress: (fraction: number) => void, signal?: AbortSignal): Promise<UploadedAttachment> {
  const token = await session.user.getIdToken();
  const form = new FormData();
  form.append('workspaceId', session.workspaceId);
  form.append('conversationId', conversationId);
  form.append('file', file, file.name);
  return await new Promise<UploadedAttachment>((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', UPLOAD_PATH);
    xhr.setRequestHeader('Authorization', `Bearer ${token}`);
    xhr.upload.addEventListener('progress', (e) => {
      if (e.lengthComputable && e.total > 0) onProgress(e.loaded / e.total);
    });
    xhr.addEventListener('load', () => {
      if (xhr.status === 201) {
        try {
          resolve(JSON.parse(xhr.responseText) as UploadedAttachment);
        } catch {
          reject(new UploadError('The service answered something unexpected.', xhr.status));
        }
        return;
      }
      reject(new UploadError(uploadErrorText(xhr.status, xhr.responseText), xhr.status));
    });
    xhr.addEventListener('error', () => reject(new UploadError(uploadErrorText(0, ''), 0)));
    xhr.addEventListener('abort', () => reject(new UploadError('Upload cancelled.', 0)));
    signal?.addEventListener('abort', () => xhr.abort(), { once: true });
    xhr.send(form);
  });
}

/**
 * Blob URLs of media, one download per file and page; `revokeAll` when the view goes away. A
 * failed download is forgotten, so the next render tries again.
 */
export class MediaCache {
  readonly #urls = new Map<string, Promise<string>>();

  constructor(private readonly session: Session) {}

  load(ref: MediaRef): Promise<string> {
    const url = mediaUrl(this.session.workspaceId, ref);
    let pending = this.#urls.get(url);
    if (pending === undefined) {
      pending = (async () => {
        const token = await this.session.user.getIdToken();
        const res = await fetch(url, { headers: { Authorization: `Bearer ${token}` } });
        if (!res.ok) throw new UploadError(uploadErrorText(res.status, await res.text()), res.status);
        // Only an image keeps its type: anything else becomes bytes a browser can only save, so
        // that its blob URL (of the console's origin) can never be rendered as a document.
        const blob = await res.blob();
        return URL.createObjectURL(blob.type.startsWith('image/') ? blob : new Blob([blob], { type: 'application/octet-stream' }));
      })();
      pending.catch(() => this.#urls.delete(url));
      this.#urls.set(url, pending);
    }
    return pending;
  }

  revokeAll(): void {
    for (const pending of this.#urls.values()) pending.then((u) => URL.revokeObjectURL(u), () => undefined);
    this.#urls.clear();
  }
}

/**
 * One stored file in the thread: an image as a thumbnail that opens full size, any other file (a
 * PDF, a text) as a link that downloads it under its name; loaded through `cache`, with its error
 * shown in place. The name is shown without bidi controls or invisible characters.
 */
export function mediaElement(cache: MediaCache, ref: MediaRef, meta: { name: string; contentType?: string; size?: number; detail?: string; width?: number; height?: number }): HTMLElement {
  const name = shownFileName(meta.name);
  const label = `${name}${meta.size === undefined ? '' : `, ${formatBytes(meta.size)}`}`;
  const image = isImage(meta.contentType);
  const slot = h('span', { class: 'media-slot muted' }, 'loading…');
  // An image of known size takes its thumbnail's room at once: nothing moves when it arrives (the
  // thread keeps its place, thread-focus.ts). Set through the CSSOM, which the CSP allows.
  const box = image ? thumbnailBox(meta.width, meta.height) : undefined;
  if (box !== undefined) {
    slot.classList.add('media-slot-sized');
    slot.style.width = `${box.width}px`;
    slot.style.aspectRatio = `${box.width} / ${box.height}`;
  }
  const el = h('figure', { class: `media ${image ? 'media-image' : 'media-file'}`, 'data-media': ref.kind === 'image' ? `${ref.messageId}/${ref.index}` : ref.attachmentId }, slot, h('figcaption', {}, label, meta.detail ? h('span', { class: 'muted' }, ` ${meta.detail}`) : null));
  cache.load(ref).then(
    (blobUrl) => {
      // An image opens full size in a new tab (an image document runs nothing). A PDF or a text is
      // downloaded, never opened as a document of the console's origin: a PDF can carry scripts,
      // and its blob URL would share the console's origin (docs/console.md#attachments-and-media).
      const link = image
        ? h('a', { href: blobUrl, target: '_blank', rel: 'noopener', class: 'media-link', title: `Open ${name}` }, h('img', { src: blobUrl, alt: name, class: 'thumbnail', loading: 'lazy', ...(box === undefined ? {} : { width: String(box.width), height: String(box.height) }) }))
        : h('a', { href: blobUrl, download: name, class: 'media-link', title: `Download ${name}` }, `Download ${name}`);
      replace(slot, link);
      slot.classList.remove('muted');
      el.dataset.loaded = 'true';
    },
    (err: unknown) => {
      replace(slot, h('span', { class: 'error-code', role: 'note' }, err instanceof Error ? err.message : String(err)));
      el.dataset.loaded = 'error';
    },
  );
  return el;
}
