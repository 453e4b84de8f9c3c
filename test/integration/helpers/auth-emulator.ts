/**
 * Users of the Auth emulator for the suites that call the console's functions with an ID token.
 */

/** The Auth emulator's host:port (firebase.json emulators.auth, EMULATORS). */
export function authHost(): string {
  const host = process.env.FIREBASE_AUTH_EMULATOR_HOST;
  if (!host) throw new Error('FIREBASE_AUTH_EMULATOR_HOST is not set: the Auth emulator must run');
  return host;
}

/** One call of the Auth emulator's Identity Toolkit API (`accounts:signUp`, `accounts:signInWithPassword`, ...). */
export async function identity(path: string, body: object): Promise<{ localId: string; idToken: string }> {
  const res = await fetch(`http://${authHost()}/identitytoolkit.googleapis.com/v1/${path}?key=fake-api-key`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  const answer = (await res.json()) as { localId?: string; idToken?: string };
  if (!res.ok || !answer.localId || !answer.idToken) throw new Error(`${path}: ${res.status} ${JSON.stringify(answer)}`);
  return { localId: answer.localId, idToken: answer.idToken };
}

/**
 * A new email/password user and an ID token of theirs, from a sign-in after the sign-up. Not the
 * sign-up's own token: the emulator takes that token's `auth_time` before it sets the account's
 * `validSince`, both in whole seconds, so when a second boundary falls between the two (seen on a
 * loaded machine) the Admin SDK's revocation check, which the service always asks for, refuses the
 * token as revoked (`auth/id-token-revoked`). A sign-in comes later than both.
 */
export async function signedUpUser(email: string, password: string): Promise<{ uid: string; idToken: string }> {
  const { localId } = await identity('accounts:signUp', { email, password, returnSecureToken: true });
  const { idToken } = await identity('accounts:signInWithPassword', { email, password, returnSecureToken: true });
  return { uid: localId, idToken };
}
