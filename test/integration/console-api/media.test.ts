/**
 * `GET /console/v1/media` through real HTTP (Hosting -> the console function; in the framework
 * phase the production functions framework), with ID tokens of the Auth emulator
 * (docs/console.md#console-endpoints): an incoming image of a message and a file uploaded for a
 * reply, for members only, with the stored type and the headers that keep a browser from
 * reinterpreting them; 404 for anything not in that conversation of that workspace.
 */
import { randomUUID } from 'node:crypto';
import { getAuth } from 'firebase-admin/auth';
import { apiBaseUrl, closeStack, createTestIntegration, postJson, postMultipart, messageParts, type TestIntegration } from '../helpers/stack';
import { allowAttachments, newMember, realPng, uploaded, type Member, type Uploaded } from '../helpers/console-uploads';

const PDF = Buffer.from('%PDF-1.4\n1 0 obj << >> endobj\ntrailer << >>\n%%EOF\n');
const TEXT = Buffer.from('hello <script>alert(1)</script>\n');
const IMAGE = realPng(32, 16, [10, 20, 30]);

let integration: TestIntegration;
let workspaceId: string;
let conversationId: string;
let otherConversationId: string;
let imageMessageId: string;
let textMessageId: string;
let member: Member;
let pdf: Uploaded;
let text: Uploaded;
let elsewhere: Uploaded;

/** A customer message in a new conversation (with `images`, if any); its ids. */
async function customerMessage(images: Buffer[] = []): Promise<{ conversationId: string; messageId: string }> {
  const payload = { eventId: randomUUID(), externalConversationId: `chat-${randomUUID()}`, sender: { externalId: 'cust-1' }, message: { text: 'look' } };
  const res =
    images.length === 0
      ? await postJson('/v1/messages', payload, { key: integration.key })
      : await postMultipart('/v1/messages', messageParts(payload, images.map((data) => ({ data, contentType: 'image/png', filename: 'shot.png' }))), { key: integration.key });
  if (res.status !== 201) throw new Error(`message: ${res.status} ${res.text}`);
  return res.body as { conversationId: string; messageId: string };
}

async function media(query: Record<string, string>, token?: string, method = 'GET') {
  const res = await fetch(`${apiBaseUrl()}/console/v1/media?${new URLSearchParams(query).toString()}`, { method, headers: token === undefined ? {} : { authorization: `Bearer ${token}` } });
  const bytes = Buffer.from(await res.arrayBuffer());
  let error: string | undefined;
  if ((res.headers.get('content-type') ?? '').startsWith('application/json')) error = (JSON.parse(bytes.toString('utf8')) as { error?: { code?: string } }).error?.code;
  return { status: res.status, headers: res.headers, bytes, error };
}

beforeAll(async () => {
  integration = await createTestIntegration();
  workspaceId = integration.workspaceId;
  await allowAttachments(workspaceId, integration.integrationId, { contentTypes: ['application/pdf', 'text/plain'], maxBytes: 1_000_000, maxCount: 3 });
  ({ conversationId, messageId: imageMessageId } = await customerMessage([IMAGE]));
  ({ conversationId: otherConversationId, messageId: textMessageId } = await customerMessage());
  member = await newMember(workspaceId);
  pdf = await uploaded(member, workspaceId, conversationId, { bytes: PDF, name: 'Rechnung "1".pdf', type: 'application/pdf' });
  text = await uploaded(member, workspaceId, conversationId, { bytes: TEXT, name: 'notes.txt', type: 'text/plain' });
  elsewhere = await uploaded(member, workspaceId, otherConversationId, { bytes: PDF, name: 'other.pdf', type: 'application/pdf' });
});

afterAll(async () => {
  await closeStack();
});

describe('for a member', () => {
  test("an incoming image: its bytes, its stored type, private and not sniffable", async () => {
    const res = await media({ workspaceId, conversationId, messageId: imageMessageId, image: '0' }, member.idToken);
    expect(res.status).toBe(200);
    expect(res.bytes.equals(IMAGE)).toBe(true);
    expect(res.headers.get('content-type')).toBe('image/png');
    expect(res.headers.get('content-length')).toBe(String(IMAGE.length));
    expect(res.headers.get('cache-control')).toMatch(/^private\b/);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('content-disposition')).toMatch(/^inline; filename="image-1\.png"/);
    expect(res.headers.get('content-security-policy')).toBe("sandbox; default-src 'none'");
  });

  test("a reply's files: the bytes, the sniffed type (text with its charset) and the sanitised name, as a download in a sandbox", async () => {
    const a = await media({ workspaceId, conversationId, attachmentId: pdf.attachmentId }, member.idToken);
    expect({ status: a.status, same: a.bytes.equals(PDF), type: a.headers.get('content-type') }).toEqual({ status: 200, same: true, type: 'application/pdf' });
    // A PDF or a text is never a document of the console's origin: a download, and a sandbox that loads nothing should it be rendered.
    expect(a.headers.get('content-disposition')).toBe(`attachment; filename="Rechnung _1_.pdf"; filename*=UTF-8''Rechnung%20_1_.pdf`);
    expect({ csp: a.headers.get('content-security-policy'), nosniff: a.headers.get('x-content-type-options'), cache: a.headers.get('cache-control') }).toEqual({ csp: "sandbox; default-src 'none'", nosniff: 'nosniff', cache: 'private, no-store' });
    const t = await media({ workspaceId, conversationId, attachmentId: text.attachmentId }, member.idToken);
    expect({ status: t.status, same: t.bytes.equals(TEXT), type: t.headers.get('content-type'), nosniff: t.headers.get('x-content-type-options') }).toEqual({ status: 200, same: true, type: 'text/plain; charset=utf-8', nosniff: 'nosniff' });
    expect({ disposition: t.headers.get('content-disposition'), csp: t.headers.get('content-security-policy') }).toEqual({ disposition: `attachment; filename="notes.txt"; filename*=UTF-8''notes.txt`, csp: "sandbox; default-src 'none'" });
  });

  test('404 media_not_found for what is not in that conversation of that workspace', async () => {
    const cases: Array<Record<string, string>> = [
      { workspaceId, conversationId, messageId: imageMessageId, image: '1' }, // no second image
      { workspaceId, conversationId: otherConversationId, messageId: imageMessageId, image: '0' }, // the message is in another conversation
      { workspaceId, conversationId: otherConversationId, messageId: textMessageId, image: '0' }, // a message without images
      { workspaceId, conversationId, attachmentId: elsewhere.attachmentId }, // an upload of another conversation
      { workspaceId, conversationId: otherConversationId, attachmentId: pdf.attachmentId },
      { workspaceId, conversationId, attachmentId: 'a_unknown' },
      { workspaceId, conversationId: 'c_unknown', messageId: 'm_unknown', image: '0' },
    ];
    for (const query of cases) expect({ query, ...(await media(query, member.idToken)) }).toMatchObject({ query, status: 404, error: 'media_not_found' });
  });

  test('400 invalid_request for a query that names nothing, or both kinds', async () => {
    for (const query of [{ workspaceId }, { workspaceId, conversationId }, { workspaceId, conversationId, messageId: imageMessageId }, { workspaceId, conversationId, messageId: imageMessageId, image: 'x' }, { workspaceId, conversationId, messageId: imageMessageId, image: '0', attachmentId: pdf.attachmentId }]) {
      expect({ query, ...(await media(query, member.idToken)) }).toMatchObject({ query, status: 400, error: 'invalid_request' });
    }
  });
});

describe('for anyone else', () => {
  const query = () => ({ workspaceId, conversationId, attachmentId: pdf.attachmentId });

  test('a member of another workspace, and a user of no workspace, are 403 not_a_member', async () => {
    const otherWorkspace = await createTestIntegration();
    const outsider = await newMember(otherWorkspace.workspaceId);
    expect(await media(query(), outsider.idToken)).toMatchObject({ status: 403, error: 'not_a_member' });
    const stranger = await newMember(`ws_${randomUUID()}`);
    expect(await media({ workspaceId, conversationId, messageId: imageMessageId, image: '0' }, stranger.idToken)).toMatchObject({ status: 403, error: 'not_a_member' });
    // Their own workspace's id does not open this workspace's files either.
    expect(await media({ ...query(), workspaceId: otherWorkspace.workspaceId }, outsider.idToken)).toMatchObject({ status: 404, error: 'media_not_found' });
  });

  test('no token or a garbage token is 401 invalid_token; another method is 405', async () => {
    expect(await media(query())).toMatchObject({ status: 401, error: 'invalid_token' });
    expect(await media(query(), 'not.a.token')).toMatchObject({ status: 401, error: 'invalid_token' });
    const post = await media(query(), member.idToken, 'POST');
    expect({ status: post.status, error: post.error, allow: post.headers.get('allow') }).toEqual({ status: 405, error: 'method_not_allowed', allow: 'GET' });
  });

  test('a disabled user is 401 invalid_token at the next request, a member still (test/integration/console-api/revocation.test.ts covers revocation and every function)', async () => {
    const user = await newMember(workspaceId);
    expect((await media(query(), user.idToken)).status).toBe(200);
    await getAuth().updateUser(user.uid, { disabled: true });
    expect(await media(query(), user.idToken)).toMatchObject({ status: 401, error: 'invalid_token' });
  });
});
