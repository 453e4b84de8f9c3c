/**
 * A revoked or disabled user, and a member whose membership was removed, through real HTTP against
 * every console function (docs/console.md#console-endpoints): `consoleApi`'s upload and media
 * (Hosting -> the function) and the export download (`downloadExport`). Each is refused from the
 * next request on, not when the ID token expires. Against the Auth emulator the Admin SDK checks
 * revocation even when not asked to; test/unit/console-api/id-token.test.ts shows that the
 * functions ask for it (`checkRevoked`), which production needs.
 */
import { randomUUID } from 'node:crypto';
import { getAuth } from 'firebase-admin/auth';
import { adminDb, apiBaseUrl, closeStack, createTestIntegration, functionsUrl, postJson, type TestIntegration } from '../helpers/stack';
import { allowAttachments, newMember, uploaded, type Member, type Uploaded } from '../helpers/console-uploads';
import { identity, signedUpUser } from '../helpers/auth-emulator';

const PDF = Buffer.from('%PDF-1.4\n1 0 obj << >> endobj\ntrailer << >>\n%%EOF\n');

interface User extends Member {
  email: string;
  password: string;
}

let integration: TestIntegration;
let workspaceId: string;
let conversationId: string;
let file: Uploaded;


/** A new admin of the workspace, signed in (email and password kept to sign in again). */
async function newAdmin(): Promise<User> {
  const email = `revoke-${randomUUID().slice(0, 8)}@uploads.test`;
  const password = `pw-${randomUUID()}`;
  const { uid, idToken } = await signedUpUser(email, password);
  await adminDb().doc(`workspaces/${workspaceId}/members/${uid}`).set({ role: 'admin' });
  return { uid, idToken, email, password };
}

const signInAgain = async (user: User): Promise<string> => (await identity('accounts:signInWithPassword', { email: user.email, password: user.password, returnSecureToken: true })).idToken;

/** The seconds since the epoch at which an ID token was issued (its `auth_time`). */
const authTimeOf = (idToken: string): number => (JSON.parse(Buffer.from(idToken.split('.')[1] ?? '', 'base64url').toString('utf8')) as { auth_time: number }).auth_time;

/**
 * Revokes the user's tokens (what an admin does with the Admin SDK's `revokeRefreshTokens`). The
 * Auth service keeps revocation times in whole seconds and a token issued in the same second stays
 * valid, so this revokes again until the revocation time is past the token's issue.
 */
async function revoke(user: User): Promise<void> {
  const issued = authTimeOf(user.idToken);
  for (;;) {
    await getAuth().revokeRefreshTokens(user.uid);
    const validAfter = new Date((await getAuth().getUser(user.uid)).tokensValidAfterTime ?? 0).getTime() / 1000;
    if (validAfter > issued) return;
  }
}

/** The three console calls, each with `token`: its status and error code. */
async function everyFunction(token: string): Promise<Record<'upload' | 'media' | 'download', { status: number; code: string | undefined }>> {
  const outcome = async (res: Response) => ({ status: res.status, code: res.headers.get('content-type')?.startsWith('application/json') ? ((await res.json()) as { error?: { code?: string } }).error?.code : (await res.arrayBuffer(), undefined) });
  const form = new FormData();
  form.append('workspaceId', workspaceId);
  form.append('conversationId', conversationId);
  form.append('file', new Blob([PDF], { type: 'application/pdf' }), 'a.pdf');
  const authorization = { Authorization: `Bearer ${token}` };
  const [upload, media, download] = await Promise.all([
    fetch(`${apiBaseUrl()}/console/v1/attachments`, { method: 'POST', headers: authorization, body: form }).then(outcome),
    fetch(`${apiBaseUrl()}/console/v1/media?${new URLSearchParams({ workspaceId, conversationId, attachmentId: file.attachmentId }).toString()}`, { headers: authorization }).then(outcome),
    fetch(`${functionsUrl()}/downloadExport?${new URLSearchParams({ workspaceId, exportId: 'x_none' }).toString()}`, { headers: authorization }).then(outcome),
  ]);
  return { upload, media, download };
}

/** What a signed-in admin gets: the upload stored, the file, and no such export (the token passed). */
const SERVED = { upload: { status: 201, code: undefined }, media: { status: 200, code: undefined }, download: { status: 404, code: 'export_not_found' } };
const REFUSED = { status: 401, code: 'invalid_token' };

beforeAll(async () => {
  integration = await createTestIntegration();
  workspaceId = integration.workspaceId;
  await allowAttachments(workspaceId, integration.integrationId, { contentTypes: ['application/pdf'], maxBytes: 1_000_000, maxCount: 3 });
  const res = await postJson('/v1/messages', { eventId: randomUUID(), externalConversationId: `chat-${randomUUID()}`, sender: { externalId: 'cust-1' }, message: { text: 'hi' } }, { key: integration.key });
  if (res.status !== 201) throw new Error(`no conversation: ${res.status} ${res.text}`);
  conversationId = (res.body as { conversationId: string }).conversationId;
  const owner = await newMember(workspaceId);
  file = await uploaded(owner, workspaceId, conversationId, { bytes: PDF, name: 'invoice.pdf', type: 'application/pdf' });
});

afterAll(async () => {
  await closeStack();
});

test('a revoked user is refused by every console function at the next request; signed in again, served', async () => {
  const user = await newAdmin();
  await expect(everyFunction(user.idToken)).resolves.toEqual(SERVED);
  await revoke(user);
  await expect(everyFunction(user.idToken)).resolves.toEqual({ upload: REFUSED, media: REFUSED, download: REFUSED });
  await expect(everyFunction(await signInAgain(user))).resolves.toEqual(SERVED);
});

test('a disabled user is refused by every console function at the next request; enabled again, served', async () => {
  const user = await newAdmin();
  await expect(everyFunction(user.idToken)).resolves.toEqual(SERVED);
  await getAuth().updateUser(user.uid, { disabled: true });
  await expect(everyFunction(user.idToken)).resolves.toEqual({ upload: REFUSED, media: REFUSED, download: REFUSED });
  await getAuth().updateUser(user.uid, { disabled: false });
  await expect(everyFunction(user.idToken)).resolves.toEqual(SERVED);
});

test('a removed membership is refused at the next request, with the same unexpired token', async () => {
  const user = await newAdmin();
  await expect(everyFunction(user.idToken)).resolves.toEqual(SERVED);
  await adminDb().doc(`workspaces/${workspaceId}/members/${user.uid}`).delete();
  await expect(everyFunction(user.idToken)).resolves.toEqual({
    upload: { status: 403, code: 'not_a_member' },
    media: { status: 403, code: 'not_a_member' },
    download: { status: 403, code: 'not_an_admin' },
  });
});
