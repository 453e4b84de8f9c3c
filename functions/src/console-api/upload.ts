/**
 * `POST /console/v1/attachments` (docs/console.md#console-endpoints): a member uploads one file for
 * a reply in one conversation. The body is `multipart/form-data` (./multipart.ts); the bytes are
 * sniffed (../deliveries/sniff.ts: the declared type is never trusted) and checked against the
 * conversation's integration capability (./rules.ts), hashed, and stored as one object per upload
 * with its record (./store.ts). Every refusal comes before the first write, so a refused upload
 * stores nothing. Answers 201 `{ attachmentId, name, contentType, size, sha256 }`, which the
 * console's reply then carries in `attachments`.
 */
import { createHash } from 'node:crypto';
import type { Request } from 'firebase-functions/v2/https';
import * as logger from '../platform/log';
import { config } from '../platform/config';
import { BadRequestError, ForbiddenError, NotFoundError } from '../rules/errors';
import { errorMessage } from '../platform/failures';
import { db } from '../platform/firebase';
import { memberRole } from '../platform/http/id-token';
import { parseMediaType } from '../platform/http/pipeline';
import type { HttpResult } from '../platform/http/types';
import { isStorableDocumentId } from '../platform/ids';
import { attachmentPath } from '../platform/object-store';
import { sniffAttachmentType } from '../deliveries/sniff';
import type { ConsoleContext } from './context';
import { parseUploadBody } from './multipart';
import { objectStore } from './objects';
import { uploadName, uploadRefusal } from './rules';
import { conversationCapability, createUploadRecord, deleteUploadRecord, newAttachmentId } from './store';

/** The 403 of a caller who is not a member of the workspace the request names. */
export const notAMember = () => new ForbiddenError('not_a_member', 'You are not a member of this workspace.');

/** Receives one upload; see the module comment. */
export async function receiveUpload(req: Request, context: ConsoleContext): Promise<HttpResult> {
  const contentType = req.get('content-type') ?? '';
  parseMediaType(contentType, ['multipart/form-data']);
  const body = await parseUploadBody(contentType, req.rawBody ?? Buffer.alloc(0));
  const { workspaceId, conversationId, file } = body;
  if (!isStorableDocumentId(workspaceId)) throw new BadRequestError('invalid_request', 'workspaceId: is not a workspace id.');
  if (!isStorableDocumentId(conversationId)) throw new BadRequestError('invalid_request', 'conversationId: is not a conversation id.');
  context.logFields.workspaceId = workspaceId;
  context.logFields.conversationId = conversationId;
  if ((await memberRole(workspaceId, context.uid)) === null) throw notAMember();
  const conversation = await conversationCapability(db(), workspaceId, conversationId);
  if (!conversation.found) throw new NotFoundError('conversation_not_found', 'conversationId: no such conversation in this workspace.');
  const sniffed = sniffAttachmentType(file.bytes);
  context.logFields.size = file.bytes.length;
  const refusal = uploadRefusal({ sniffed, declared: file.declaredType, size: file.bytes.length, capability: conversation.capability });
  if (refusal !== null || sniffed === null) throw refusal ?? new Error('unreachable: an unknown type is always refused');
  context.logFields.contentType = sniffed;

  const sha256 = createHash('sha256').update(file.bytes).digest('hex');
  const attachmentId = newAttachmentId();
  const name = uploadName(file.filename);
  context.logFields.attachmentId = attachmentId;
  context.deadline.assertTimeLeft();
  // The record first, then the object: a crash in between leaves a record the cleanup finds (and
  // whose missing object it ignores), never an object nothing points to.
  const upload = { workspaceId, conversationId, attachmentId, uploadedBy: context.uid, name, contentType: sniffed, size: file.bytes.length, sha256, now: Date.now(), shardCount: config().queueShards };
  await createUploadRecord(db(), upload);
  try {
    await objectStore().put(attachmentPath(workspaceId, conversationId, attachmentId), file.bytes, sniffed);
  } catch (err) {
    await deleteUploadRecord(db(), workspaceId, attachmentId).catch((cleanupErr: unknown) =>
      logger.warn('upload.record_left_for_cleanup', { workspaceId, attachmentId, detail: errorMessage(cleanupErr) }),
    );
    throw err;
  }
  return { status: 201, body: { attachmentId, name, contentType: sniffed, size: file.bytes.length, sha256 } };
}
