/**
 * `GET downloadExport?workspaceId=&exportId=` (docs/privacy.md#export): an export's JSON Lines
 * file, for the workspace's admins only, for 7 days. The console sends its Firebase Auth ID token
 * as `Authorization: Bearer <token>`; the function verifies it (the Admin SDK) and reads the
 * caller's membership: not signed in (or revoked, or disabled) 401 `invalid_token`, the sign-in
 * not checkable now 503 `temporarily_unavailable` with Retry-After, not an admin of the workspace 403
 * `not_an_admin`, no finished export with that id (or expired) 404 `export_not_found`. Errors use
 * the envelope. A bearer header, not a cookie, authorises it, so answering any origin's CORS
 * request exposes nothing to a page without the token.
 */
import type { Request } from 'firebase-functions/v2/https';
import type { Response } from 'express';
import { config } from '../platform/config';
import { db } from '../platform/firebase';
import { ApiError } from '../rules/errors';
import { idTokenUid, memberRole } from '../platform/http/id-token';
import { isStorableDocumentId } from '../platform/ids';
import { paths } from '../platform/paths';
import { createImageStore } from '../messages/image-store';
import { exportFilePath } from './export';

function fail(res: Response, status: number, code: string, message: string): void {
  res.status(status).json({ error: { code, message } });
}

export async function downloadExport(req: Request, res: Response): Promise<void> {
  res.set('Access-Control-Allow-Origin', '*');
  res.set('Access-Control-Allow-Headers', 'authorization');
  if (req.method === 'OPTIONS') {
    res.status(204).end();
    return;
  }
  if (req.method !== 'GET') return fail(res, 405, 'method_not_allowed', 'Use GET.');
  const workspaceId = typeof req.query.workspaceId === 'string' ? req.query.workspaceId : '';
  const exportId = typeof req.query.exportId === 'string' ? req.query.exportId : '';
  if (!isStorableDocumentId(workspaceId) || !isStorableDocumentId(exportId)) return fail(res, 400, 'invalid_request', 'workspaceId and exportId are required.');
  let uid: string | null;
  try {
    uid = await idTokenUid(req.get('authorization'), 'export.download_unauthenticated');
  } catch (err) {
    if (!(err instanceof ApiError) || err.retryAfterSeconds === undefined) throw err;
    res.set('Retry-After', String(err.retryAfterSeconds));
    return fail(res, err.status, err.code, err.message);
  }
  if (uid === null) return fail(res, 401, 'invalid_token', 'Sign in: a valid Firebase ID token is required.');
  if ((await memberRole(workspaceId, uid)) !== 'admin') return fail(res, 403, 'not_an_admin', 'Only the workspace\'s admins download exports.');
  const request = (await db().doc(paths.exportRequest(workspaceId, exportId)).get()).data();
  const expiresAt: unknown = request?.fileExpiresAt;
  if (request?.status !== 'done' || typeof expiresAt !== 'number' || expiresAt <= Date.now()) return fail(res, 404, 'export_not_found', 'No downloadable export has this id (unknown, unfinished or expired).');
  const bytes = await createImageStore(config().imageStore).get(exportFilePath(workspaceId, exportId));
  if (bytes === null) return fail(res, 404, 'export_not_found', 'No downloadable export has this id (unknown, unfinished or expired).');
  res.set('Content-Type', 'application/x-ndjson; charset=utf-8');
  res.set('Content-Disposition', `attachment; filename="export-${exportId.replace(/[^A-Za-z0-9_-]/g, '_')}.jsonl"`);
  res.set('Cache-Control', 'private, no-store');
  res.status(200).send(bytes);
}
