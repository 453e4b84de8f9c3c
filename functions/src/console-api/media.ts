/**
 * `GET /console/v1/media?workspaceId&conversationId&(messageId&image | attachmentId)`
 * (docs/console.md#console-endpoints): the bytes of an incoming image of a message, or of a file
 * uploaded for a reply, for the workspace's members only. Whatever the query names must be in that
 * conversation of that workspace (404 `media_not_found` otherwise, the same answer for an id that
 * does not exist and one of another conversation). Answered with the stored (sniffed) type,
 * `X-Content-Type-Options: nosniff`, `Cache-Control: private, no-store`,
 * `Content-Security-Policy: sandbox; default-src 'none'` and a Content-Disposition that is
 * `inline` for an image and `attachment` for a PDF or a text (a download, never a document of the
 * console's origin); the browser never learns where the store keeps it.
 */
import type { Request } from 'firebase-functions/v2/https';
import { NotFoundError } from '../rules/errors';
import { db } from '../platform/firebase';
import { storedFileHeaders } from '../rules/file-headers';
import { memberRole } from '../platform/http/id-token';
import { StreamedBody } from '../platform/http/streamed-body';
import type { HttpResult } from '../platform/http/types';
import type { ConsoleContext } from './context';
import { objectStore } from './objects';
import { parseMediaQuery } from './rules';
import { findMedia } from './store';
import { notAMember } from './upload';

const notFound = () => new NotFoundError('media_not_found', 'No such image or file in this conversation.');

/** Serves one stored file; see the module comment. */
export async function serveMedia(req: Request, context: ConsoleContext): Promise<HttpResult> {
  const ref = parseMediaQuery(req.query as Record<string, unknown>);
  context.logFields.workspaceId = ref.workspaceId;
  context.logFields.conversationId = ref.conversationId;
  if ((await memberRole(ref.workspaceId, context.uid)) === null) throw notAMember();
  const media = await findMedia(db(), ref);
  if (media === null) throw notFound();
  // Deleted by retention or an erasure while the record or message was still being read.
  const stored = await objectStore().open(media.path);
  if (stored === null) throw notFound();
  context.logFields.size = stored.size;
  try {
    context.deadline.assertTimeLeft();
  } catch (err) {
    stored.stream.destroy();
    throw err;
  }
  // Streamed as it is read (docs/decisions.md#stored-files-are-streamed), with the stored size:
  // a read that fails or ends short cuts the answer off instead of completing it.
  const disposition = media.contentType.startsWith('image/') ? 'inline' : 'attachment';
  return { status: 200, body: new StreamedBody(stored.stream, { length: stored.size }), headers: storedFileHeaders(media.contentType, media.name, disposition) };
}
