/**
 * The console's callers: a workspace member signed in with Firebase Auth sends its ID token as
 * `Authorization: Bearer <token>` (docs/console.md#attachments-and-media). The token is verified
 * with the Admin SDK (signature, expiry, project; the Auth emulator's tokens under the emulators)
 * and checked against the user's record on every request: a disabled user, or a token issued
 * before the user's tokens were revoked, is refused at once, not when the token expires. The
 * membership is the workspace's `members/{uid}` document, read on every request too. Shared by
 * every function that serves the console (the export download, the console function); the
 * connectors' functions use integration keys instead (integrations/auth.ts).
 */
import * as logger from 'firebase-functions/logger';
import { ServiceUnavailableError } from '../../rules/errors';
import { errorCode, errorMessage } from '../failures';
import { db } from '../firebase';
import { paths } from '../paths';

/** What of the Admin SDK's Auth the check uses (a stand-in in the unit tests). */
export interface IdTokenVerifier {
  verifyIdToken(idToken: string, checkRevoked?: boolean): Promise<{ uid: string }>;
}

/**
 * Failures of the check that say nothing about the token: the Auth backend (the user's record, the
 * signing keys) could not be reached. A 503 with Retry-After, never a 401 that would sign the user out.
 */
const UNAVAILABLE_CODES: ReadonlySet<unknown> = new Set(['auth/internal-error', 'app/network-error', 'app/network-timeout', 'auth/quota-exceeded']);

/** Seconds to wait after the Auth backend could not be reached. */
const AUTH_UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

/**
 * The uid of a valid ID token, or null when it is refused (malformed, expired, of another project,
 * revoked, its user disabled or deleted). `checkRevoked` is always passed: without it the Admin SDK
 * checks revocation and disabled users only against the Auth emulator, so tests would pass while
 * production accepted a revoked token until it expired (up to an hour). Throws a 503 when the Auth
 * backend could not answer. `event` names the log line of a refusal, which says why, never the token.
 */
export async function verifiedUid(auth: IdTokenVerifier, idToken: string, event: string): Promise<string | null> {
  try {
    return (await auth.verifyIdToken(idToken, true)).uid;
  } catch (err) {
    if (UNAVAILABLE_CODES.has(errorCode(err))) {
      logger.warn(`${event}_unverified`, { detail: errorMessage(err) });
      throw new ServiceUnavailableError('temporarily_unavailable', 'Your sign-in cannot be checked at the moment; retry after the indicated delay.', AUTH_UNAVAILABLE_RETRY_AFTER_SECONDS);
    }
    logger.warn(event, { code: String(errorCode(err)), detail: errorMessage(err) });
    return null;
  }
}

/**
 * The uid of a valid Firebase Auth ID token in `authorization` (`Bearer <token>`), or null when
 * there is none or it is refused (`verifiedUid`); throws a 503 when it cannot be checked now.
 */
export async function idTokenUid(authorization: string | undefined, event: string): Promise<string | null> {
  const match = /^Bearer (\S+)$/.exec(authorization ?? '');
  if (match?.[1] === undefined) return null;
  const { getAuth } = await import('firebase-admin/auth');
  db(); // initialises the default app, which getAuth() uses
  return verifiedUid(getAuth(), match[1], event);
}

/** A member's role in a workspace (`members/{uid}.role`), or null when the user is not a member. */
export async function memberRole(workspaceId: string, uid: string): Promise<'admin' | 'operator' | null> {
  const role: unknown = (await db().doc(paths.member(workspaceId, uid)).get()).get('role');
  return role === 'admin' || role === 'operator' ? role : null;
}
