/**
 * Sign-in and membership. Who may do what is decided by firestore.rules from
 * `workspaces/{ws}/members/{uid}` (written by provisioning); the console reads that document with
 * the signed-in user's own rights to learn the role it shows and which controls to offer.
 */
import { signInWithEmailAndPassword, signOut, type User } from 'firebase/auth';
import { doc, getDoc } from 'firebase/firestore';
import { describeError, errorCode } from './errors';
import type { Services } from './firebase';

type Role = 'admin' | 'operator';

export interface Session {
  services: Services;
  user: User;
  workspaceId: string;
  role: Role;
}

const WORKSPACE_KEY = 'console.workspace';

/** The workspace to pre-fill: `?workspace=` wins, then the last one used, then the local demo. */
export function preferredWorkspace(services: Services): string {
  const fromUrl = new URLSearchParams(location.search).get('workspace');
  return fromUrl ?? localStorage.getItem(WORKSPACE_KEY) ?? services.defaultWorkspace;
}

export function rememberWorkspace(workspaceId: string): void {
  localStorage.setItem(WORKSPACE_KEY, workspaceId);
}

export async function signIn(services: Services, email: string, password: string): Promise<void> {
  await signInWithEmailAndPassword(services.auth, email, password);
}

export async function leave(services: Services): Promise<void> {
  await signOut(services.auth);
}

export type Membership = { ok: true; role: Role } | { ok: false; reason: string };

/** Reads the user's own membership document (allowed by the rules only to members). */
export async function loadMembership(services: Services, user: User, workspaceId: string): Promise<Membership> {
  try {
    const snap = await getDoc(doc(services.db, 'workspaces', workspaceId, 'members', user.uid));
    const role: unknown = snap.get('role');
    if (role === 'admin' || role === 'operator') return { ok: true, role };
    return { ok: false, reason: `${user.email ?? user.uid} is not a member of workspace “${workspaceId}”.` };
  } catch (err) {
    if (errorCode(err) === 'permission-denied') {
      return { ok: false, reason: `${user.email ?? user.uid} is not a member of workspace “${workspaceId}” (an administrator adds members).` };
    }
    return { ok: false, reason: describeError(err, 'only members of the workspace may read it') };
  }
}
