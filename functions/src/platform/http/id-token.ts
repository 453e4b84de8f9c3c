/**
 * The console's callers: a workspace member signed in with Firebase Auth sends its ID token as
 * `Authorization: Bearer <token>` (docs/console.md#attachments-and-media). The token is verified
 * with the Admin SDK (signature, expiry, project; the Auth emulator's tokens under the emulators),
 * and the membership is the workspace's `members/{uid}` document. Shared by every function that
 * serves the console (the export download, the console function); the connectors' functions use
 * integration keys instead (integrations/auth.ts).
 */
import * as logger from 'firebase-functions/logger';
import { errorMessage } from '../failures';
import { db } from '../firebase';
import { paths } from '../paths';

/**
 * The uid of a valid Firebase Auth ID token in `authorization` (`Bearer <token>`), or null when
 * there is none or it is refused (malformed, expired, revoked, of another project). `event` names
 * the log line of a refusal, which says why, never the token itself.
 */
export async function idTokenUid(authorization: string | undefined, event: string): Promise<string | null> {
  const match = /^Bearer (\S+)$/.exec(authorization ?? '');
  if (match?.[1] === undefined) return null;
  try {
    const { getAuth } = await import('firebase-admin/auth');
    db(); // initialises the default app, which getAuth() uses
    return (await getAuth().verifyIdToken(match[1])).uid;
  } catch (err) {
    logger.warn(event, { detail: errorMessage(err) });
    return null;
  }
}

/** A member's role in a workspace (`members/{uid}.role`), or null when the user is not a member. */
export async function memberRole(workspaceId: string, uid: string): Promise<'admin' | 'operator' | null> {
  const role: unknown = (await db().doc(paths.member(workspaceId, uid)).get()).get('role');
  return role === 'admin' || role === 'operator' ? role : null;
}
