/**
 * `POST /console/v1/attachments` through real HTTP (the test router -> the console function on
 * the production functions framework, scripts/test-stack.mjs), with ID tokens
 * of the Auth emulator (docs/console.md#console-endpoints): what is stored for an accepted file,
 * and for every refusal its own 4xx envelope and nothing stored (no upload record, no object).
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { ATTACHMENT_LIMITS } from '../../../functions/src/contract';
import { adminDb, apiBaseUrl, closeStack, createTestIntegration, imageFilePath, listImageFiles, postJson, projectId, type TestIntegration } from '../helpers/stack';
import { allowAttachments, newMember, upload, type Member, type Uploaded } from '../helpers/console-uploads';

const CAPABILITY = { contentTypes: ['image/png', 'application/pdf', 'text/plain'], maxBytes: 100_000, maxCount: 3 };
const PNG = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), randomBytes(2048)]);
const PDF = Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(1024)]);
const TEXT = Buffer.from('Order 1234: zwei Stück, Grüße\n', 'utf8');
const GIF = Buffer.concat([Buffer.from('GIF89a'), randomBytes(64)]);
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

interface Scene {
  integration: TestIntegration;
  conversationId: string;
}

/** A workspace with an integration (capability given or not) and a conversation a customer started. */
async function scene(capability: typeof CAPABILITY | null, workspaceId?: string): Promise<Scene> {
  const integration = await createTestIntegration(workspaceId === undefined ? {} : { workspaceId });
  if (capability !== null) await allowAttachments(integration.workspaceId, integration.integrationId, capability);
  const res = await postJson('/v1/messages', { eventId: randomUUID(), externalConversationId: `chat-${randomUUID()}`, sender: { externalId: 'cust-1' }, message: { text: 'hi' } }, { key: integration.key });
  if (res.status !== 201) throw new Error(`no conversation: ${res.status} ${res.text}`);
  return { integration, conversationId: (res.body as { conversationId: string }).conversationId };
}

/** What the workspace holds of uploads: its upload records and the objects under its conversations. */
async function stored(workspaceId: string): Promise<{ records: string[]; objects: string[] }> {
  const records = (await adminDb().collection(`workspaces/${workspaceId}/attachmentUploads`).listDocuments()).map((d) => d.id);
  const objects = (await listImageFiles(`workspaces/${workspaceId}/conversations`)).filter((p) => p.includes('/attachments/'));
  return { records, objects };
}

function expectRefused(res: { status: number; body: unknown }, status: number, code: string): void {
  expect({ status: res.status, code: (res.body as { error?: { code?: string } }).error?.code }).toEqual({ status, code });
  expect(typeof (res.body as { error: { message?: unknown } }).error.message).toBe('string');
}

/** A raw request to the upload endpoint (for bodies the FormData helper cannot make). */
async function rawUpload(headers: Record<string, string>, body?: Buffer | string, method = 'POST', path = '/console/v1/attachments') {
  const init: RequestInit = { method, headers };
  if (body !== undefined) init.body = typeof body === 'string' ? body : new Uint8Array(body);
  const res = await fetch(`${apiBaseUrl()}${path}`, init);
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // kept as text
  }
  return { status: res.status, headers: res.headers, body: parsed };
}

/** An unsigned ID token as the Auth emulator accepts them, for `uid`, expiring at `exp` (seconds). */
function craftedToken(uid: string, exp: number): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  // Issued now for a live token (earlier than the user's creation would read as revoked), before its expiry otherwise.
  const iat = exp > now ? now : exp - 600;
  return `${part({ alg: 'none', typ: 'JWT' })}.${part({ iss: `https://securetoken.google.com/${projectId()}`, aud: projectId(), sub: uid, user_id: uid, iat, auth_time: iat, exp, firebase: { sign_in_provider: 'password', identities: {} } })}.`;
}

let main: Scene;
let member: Member;

beforeAll(async () => {
  main = await scene(CAPABILITY);
  member = await newMember(main.integration.workspaceId);
});

afterAll(async () => {
  await closeStack();
});

describe('an accepted file', () => {
  test.each([
    ['a PNG', PNG, 'screen shot.png', 'image/png', 'image/png'],
    ['a PDF', PDF, 'Rechnung-ü.pdf', 'application/pdf', 'application/pdf'],
    ['a UTF-8 text', TEXT, 'notes.txt', 'text/plain', 'text/plain'],
    ['a PDF declared as octet-stream (the bytes decide)', PDF, 'download', 'application/octet-stream', 'application/pdf'],
  ])('%s: 201 with its id, name, sniffed type, size and hash; one record and one object of exactly these bytes', async (_what, bytes, name, declared, type) => {
    const { workspaceId } = main.integration;
    const res = await upload(member, workspaceId, main.conversationId, { bytes, name, type: declared });
    expect(res.status).toBe(201);
    const body = res.body as Uploaded;
    expect(body).toEqual({ attachmentId: expect.stringMatching(/^a_[A-Za-z0-9_-]{24}$/), name, contentType: type, size: bytes.length, sha256: sha256(bytes) });
    const record = (await adminDb().doc(`workspaces/${workspaceId}/attachmentUploads/${body.attachmentId}`).get()).data();
    const storagePath = `workspaces/${workspaceId}/conversations/${main.conversationId}/attachments/${body.attachmentId}`;
    expect(record).toEqual({
      workspaceId,
      conversationId: main.conversationId,
      uploadedBy: member.uid,
      name,
      contentType: type,
      size: bytes.length,
      sha256: sha256(bytes),
      storagePath,
      createdAt: expect.any(Number),
      usedBy: null,
      cleanupAt: (record?.createdAt as number) + 24 * 3600 * 1000,
      shard: expect.any(Number),
    });
    await expect(readFile(imageFilePath(storagePath))).resolves.toEqual(bytes);
  });

  test('the same bytes uploaded twice are two uploads with two objects (an object belongs to one upload)', async () => {
    const { workspaceId } = main.integration;
    const first = (await upload(member, workspaceId, main.conversationId, { bytes: PNG, name: 'a.png', type: 'image/png' })).body as Uploaded;
    const second = (await upload(member, workspaceId, main.conversationId, { bytes: PNG, name: 'a.png', type: 'image/png' })).body as Uploaded;
    expect(second.attachmentId).not.toBe(first.attachmentId);
    const objects = (await stored(workspaceId)).objects;
    expect(objects).toEqual(expect.arrayContaining([first.attachmentId, second.attachmentId].map((id) => `workspaces/${workspaceId}/conversations/${main.conversationId}/attachments/${id}`)));
  });

  test('the name is the last segment of the file name, without control characters, at most 255 code points with its extension', async () => {
    const { workspaceId } = main.integration;
    const long = `${'ä'.repeat(300)}.pdf`;
    const res = await upload(member, workspaceId, main.conversationId, { bytes: PDF, name: long, type: 'application/pdf' });
    expect(res.status).toBe(201);
    const { name } = res.body as Uploaded;
    expect([...name]).toHaveLength(ATTACHMENT_LIMITS.name);
    expect(name.endsWith('ä.pdf')).toBe(true);
  });
});

describe('refusals: each its own 4xx envelope, nothing stored', () => {
  let refusals: Scene;
  let before: { records: string[]; objects: string[] };
  let refusalsMember: Member;
  beforeAll(async () => {
    refusals = await scene(CAPABILITY);
    refusalsMember = await newMember(refusals.integration.workspaceId);
  });
  beforeEach(async () => {
    before = await stored(refusals.integration.workspaceId);
  });
  afterEach(async () => {
    expect(await stored(refusals.integration.workspaceId)).toEqual(before);
  });
  const to = (file: { bytes: Buffer; name: string; type: string }, who?: Member, conversationId?: string, workspaceId?: string) =>
    upload(who ?? refusalsMember, workspaceId ?? refusals.integration.workspaceId, conversationId ?? refusals.conversationId, file);

  test('a lying type: text declared as a PNG is 415 unsupported_attachment_type', async () => {
    expectRefused(await to({ bytes: Buffer.from('this is not an image'), name: 'fake.png', type: 'image/png' }), 415, 'unsupported_attachment_type');
  });

  test('bytes that are none of the six types (a ZIP) are 415 unsupported_attachment_type, whatever was declared', async () => {
    expectRefused(await to({ bytes: Buffer.concat([Buffer.from('PK\x03\x04', 'latin1'), Buffer.alloc(64)]), name: 'a.zip', type: 'application/zip' }), 415, 'unsupported_attachment_type');
  });

  test('a type outside the capability (a GIF) is 415 unsupported_attachment_type', async () => {
    expectRefused(await to({ bytes: GIF, name: 'funny.gif', type: 'image/gif' }), 415, 'unsupported_attachment_type');
  });

  test("a file over the capability's maxBytes is 413 attachment_too_large", async () => {
    expectRefused(await to({ bytes: Buffer.concat([PNG.subarray(0, 8), randomBytes(CAPABILITY.maxBytes - 7)]), name: 'big.png', type: 'image/png' }), 413, 'attachment_too_large');
  });

  test('a file over 10 MB is 413 attachment_too_large (refused before it is parsed)', async () => {
    expectRefused(await to({ bytes: Buffer.concat([PNG.subarray(0, 8), Buffer.alloc(ATTACHMENT_LIMITS.maxBytesPerFile + 100_000)]), name: 'huge.png', type: 'image/png' }), 413, 'attachment_too_large');
  });

  test('an empty file is 400 invalid_request', async () => {
    expectRefused(await to({ bytes: Buffer.alloc(0), name: 'empty.txt', type: 'text/plain' }), 400, 'invalid_request');
  });

  test('a conversation whose integration takes no files is 409 attachments_unsupported', async () => {
    const textOnly = await scene(null, refusals.integration.workspaceId);
    expectRefused(await to({ bytes: PNG, name: 'a.png', type: 'image/png' }, undefined, textOnly.conversationId), 409, 'attachments_unsupported');
  });

  test('an unknown conversation, and a conversation of another workspace, are 404 conversation_not_found', async () => {
    expectRefused(await to({ bytes: PNG, name: 'a.png', type: 'image/png' }, undefined, 'c_does-not-exist'), 404, 'conversation_not_found');
    expectRefused(await to({ bytes: PNG, name: 'a.png', type: 'image/png' }, undefined, main.conversationId), 404, 'conversation_not_found');
  });

  test("a member of another workspace is 403 not_a_member (and the other workspace's files stay as they were)", async () => {
    const mainBefore = await stored(main.integration.workspaceId);
    expectRefused(await to({ bytes: PNG, name: 'a.png', type: 'image/png' }, member), 403, 'not_a_member');
    expectRefused(await to({ bytes: PNG, name: 'a.png', type: 'image/png' }, refusalsMember, main.conversationId, main.integration.workspaceId), 403, 'not_a_member');
    expect(await stored(main.integration.workspaceId)).toEqual(mainBefore);
  });

  test('a signed-in user who is a member of no workspace is 403 not_a_member', async () => {
    const stranger = await newMember(`ws_${randomUUID()}`);
    expectRefused(await to({ bytes: PNG, name: 'a.png', type: 'image/png' }, stranger), 403, 'not_a_member');
  });

  test('no token, a garbage token and a token of another scheme are 401 invalid_token', async () => {
    expectRefused(await to({ bytes: PNG, name: 'a.png', type: 'image/png' }, { uid: refusalsMember.uid, idToken: 'garbage' }), 401, 'invalid_token');
    expectRefused(await rawUpload({}, 'x'), 401, 'invalid_token');
    expectRefused(await rawUpload({ authorization: `Basic ${refusalsMember.idToken}` }, 'x'), 401, 'invalid_token');
  });

  test('an expired ID token is 401 invalid_token (the same token, unexpired, is accepted)', async () => {
    const now = Math.floor(Date.now() / 1000);
    expectRefused(await to({ bytes: PNG, name: 'a.png', type: 'image/png' }, { uid: refusalsMember.uid, idToken: craftedToken(refusalsMember.uid, now - 60) }), 401, 'invalid_token');
    // The crafted token is one the Auth emulator accepts when it has not expired: so it is the
    // expiry that was refused. (This upload is then removed again, to leave the store as it was.)
    const accepted = await to({ bytes: PNG, name: 'a.png', type: 'image/png' }, { uid: refusalsMember.uid, idToken: craftedToken(refusalsMember.uid, now + 600) });
    expect(accepted.status).toBe(201);
    const { attachmentId } = accepted.body as Uploaded;
    const record = adminDb().doc(`workspaces/${refusals.integration.workspaceId}/attachmentUploads/${attachmentId}`);
    const { rm } = await import('node:fs/promises');
    await rm(imageFilePath((await record.get()).get('storagePath') as string));
    await record.delete();
  });

  test('another method is 405 (Allow: POST); a path the function does not serve is 404', async () => {
    const get = await rawUpload({ authorization: `Bearer ${refusalsMember.idToken}` }, undefined, 'GET');
    expectRefused(get, 405, 'method_not_allowed');
    expect(get.headers.get('allow')).toBe('POST');
    expect(get.headers.get('x-request-id')).toMatch(/\S/);
    expectRefused(await rawUpload({ authorization: `Bearer ${refusalsMember.idToken}` }, undefined, 'GET', '/console/v1/nothing'), 404, 'not_found');
  });

  test('a body that is not multipart is 415 unsupported_media_type; a multipart body without the file, with two files or another field is 400 invalid_multipart', async () => {
    const auth = { authorization: `Bearer ${refusalsMember.idToken}` };
    expectRefused(await rawUpload({ ...auth, 'content-type': 'application/json' }, JSON.stringify({ workspaceId: refusals.integration.workspaceId })), 415, 'unsupported_media_type');
    const form = (build: (f: FormData) => void) => {
      const f = new FormData();
      f.append('workspaceId', refusals.integration.workspaceId);
      f.append('conversationId', refusals.conversationId);
      build(f);
      return fetch(`${apiBaseUrl()}/console/v1/attachments`, { method: 'POST', headers: auth, body: f }).then(async (r) => ({ status: r.status, body: (await r.json()) as unknown }));
    };
    expectRefused(await form(() => undefined), 400, 'invalid_multipart');
    expectRefused(await form((f) => { f.append('file', new Blob([PNG]), 'a.png'); f.append('file', new Blob([PDF]), 'b.pdf'); }), 400, 'invalid_multipart');
    expectRefused(await form((f) => { f.append('file', new Blob([PNG]), 'a.png'); f.append('note', 'x'); }), 400, 'invalid_multipart');
    expectRefused(await form((f) => f.append('images', new Blob([PNG]), 'a.png')), 400, 'invalid_multipart');
    expectRefused(await rawUpload({ ...auth, 'content-type': 'multipart/form-data' }, 'no boundary'), 400, 'invalid_multipart');
  });
});
