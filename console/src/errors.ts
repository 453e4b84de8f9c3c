/**
 * Turns Firebase errors into sentences for the person at the console. A denied write says which
 * rule of the workspace contract (firestore.rules, docs/data-model.md) refused it.
 */

/** The error code of a FirebaseError (`permission-denied`, `auth/invalid-credential`, ...), if any. */
export function errorCode(err: unknown): string | undefined {
  if (typeof err === 'object' && err !== null && 'code' in err && typeof (err as { code: unknown }).code === 'string') {
    return (err as { code: string }).code;
  }
  return undefined;
}

/**
 * `deniedBecause` is what the rules require for this action, e.g. "only workspace admins may
 * create integrations"; it is shown when the rules refuse the write.
 */
export function describeError(err: unknown, deniedBecause: string): string {
  const code = errorCode(err);
  switch (code) {
    case 'permission-denied':
      return `Denied by the workspace rules: ${deniedBecause}.`;
    case 'unavailable':
    case 'deadline-exceeded':
      return 'Cannot reach Firestore right now; check the connection and try again.';
    case 'auth/invalid-credential':
    case 'auth/wrong-password':
    case 'auth/user-not-found':
    case 'auth/invalid-email':
      return 'Wrong email or password.';
    case 'auth/too-many-requests':
      return 'Too many attempts; wait a moment and try again.';
    case 'auth/network-request-failed':
      return 'Cannot reach the sign-in service; check the connection and try again.';
    default: {
      const message = err instanceof Error ? err.message : String(err);
      return code === undefined ? message : `${message} (${code})`;
    }
  }
}
