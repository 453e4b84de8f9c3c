/**
 * File names through real HTTP (docs/console.md#console-endpoints): bidi controls and invisible
 * characters never reach a stored name, the upload's answer, the media's and the connector's
 * `Content-Disposition` or the claim's `message.attachments[].name`, whoever wrote the name and
 * whenever it was stored; an empty file name is `attachment`; a long name keeps an extension of
 * up to 16 code points and cuts a longer one with the rest.
 */
import { randomUUID } from 'node:crypto';
import { ATTACHMENT_LIMITS } from '../../../functions/src/contract';
import { adminDb, apiBaseUrl, closeStack } from '../helpers/stack';
import { allowAttachments, newMember, seedUpload, upload, uploaded, writeReplyWithAttachments, type Member, type Uploaded } from '../helpers/console-uploads';
import { closePubSub, eventually, op, setupConversation, type ConversationSetup } from '../helpers/deliveries';

const PDF = Buffer.from('%PDF-1.4\n1 0 obj << >> endobj\ntrailer << >>\n%%EOF\n');
/** The name of the report: `invoice`, a right-to-left override, `gnp.exe` (displayed "invoiceexe.png"). */
const LYING = 'invoice\u202Egnp.exe';
const HIDDEN = ['\u200B', '\u200C', '\u200D', '\u200E', '\u200F', '\u202A', '\u202B', '\u202C', '\u202D', '\u202E', '\u2066', '\u2067', '\u2068', '\u2069', '\u061C', '\uFEFF'];

let setup: ConversationSetup;
let workspaceId: string;
let member: Member;

async function mediaDisposition(attachmentId: string): Promise<string | null> {
  const res = await fetch(`${apiBaseUrl()}/console/v1/media?${new URLSearchParams({ workspaceId, conversationId: setup.conversationId, attachmentId }).toString()}`, { headers: { authorization: `Bearer ${member.idToken}` } });
  await res.arrayBuffer();
  expect(res.status).toBe(200);
  return res.headers.get('content-disposition');
}

beforeAll(async () => {
  setup = await setupConversation();
  workspaceId = setup.integration.workspaceId;
  await allowAttachments(workspaceId, setup.integration.integrationId, { contentTypes: ['application/pdf'], maxBytes: 1_000_000, maxCount: 5 });
  member = await newMember(workspaceId);
});

afterAll(async () => {
  await setup.topic.close();
  await closePubSub();
  await closeStack();
});

test('bidi controls and invisible characters are removed from the stored name, the answer and Content-Disposition', async () => {
  const lying = await uploaded(member, workspaceId, setup.conversationId, { bytes: PDF, name: `${LYING}.pdf`, type: 'application/pdf' });
  expect(lying.name).toBe('invoicegnp.exe.pdf');
  const every = await uploaded(member, workspaceId, setup.conversationId, { bytes: PDF, name: `a${HIDDEN.join('')}b.pdf`, type: 'application/pdf' });
  expect(every.name).toBe('ab.pdf');
  for (const file of [lying, every]) {
    expect((await adminDb().doc(`workspaces/${workspaceId}/attachmentUploads/${file.attachmentId}`).get()).get('name')).toBe(file.name);
    expect(await mediaDisposition(file.attachmentId)).toBe(`attachment; filename="${file.name}"; filename*=UTF-8''${file.name}`);
  }
});

test('a name of invisible characters only, and an empty file name (filename=""), are the name attachment', async () => {
  const invisible = await uploaded(member, workspaceId, setup.conversationId, { bytes: PDF, name: '\u202E\u200B', type: 'application/pdf' });
  expect(invisible.name).toBe('attachment');
  // What a browser sends for a File whose name is empty: `filename=""`.
  const boundary = `----names-${randomUUID()}`;
  const field = (name: string, value: string) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
  const raw = Buffer.concat([
    Buffer.from(`${field('workspaceId', workspaceId)}${field('conversationId', setup.conversationId)}--${boundary}\r\nContent-Disposition: form-data; name="file"; filename=""\r\nContent-Type: application/pdf\r\n\r\n`),
    PDF,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  const res = await fetch(`${apiBaseUrl()}/console/v1/attachments`, { method: 'POST', headers: { authorization: `Bearer ${member.idToken}`, 'content-type': `multipart/form-data; boundary=${boundary}` }, body: new Uint8Array(raw) });
  expect({ status: res.status, name: ((await res.json()) as Uploaded).name }).toEqual({ status: 201, name: 'attachment' });
  // Node's FormData leaves the parameter out for an empty name.
  const empty = await upload(member, workspaceId, setup.conversationId, { bytes: PDF, name: '', type: 'application/pdf' });
  expect({ status: empty.status, name: (empty.body as Uploaded).name }).toEqual({ status: 201, name: 'attachment' });
});

test('a long name keeps an extension of up to 16 code points and cuts a longer one with the rest', async () => {
  const kept = `.${'e'.repeat(15)}`;
  const a = await uploaded(member, workspaceId, setup.conversationId, { bytes: PDF, name: `${'ä'.repeat(300)}${kept}`, type: 'application/pdf' });
  expect([...a.name]).toHaveLength(ATTACHMENT_LIMITS.name);
  expect(a.name.endsWith(`ä${kept}`)).toBe(true);
  const b = await uploaded(member, workspaceId, setup.conversationId, { bytes: PDF, name: `${'ä'.repeat(300)}.${'e'.repeat(16)}`, type: 'application/pdf' });
  expect(b.name).toBe('ä'.repeat(ATTACHMENT_LIMITS.name));
});

test("the connector's claim and download: a name written into the reply, or stored before the rule, is handed on without them", async () => {
  // Stored before the rule: the record keeps the name as it was written.
  const old = await seedUpload(workspaceId, setup.conversationId, member.uid, { bytes: PDF, name: `${LYING}.pdf`, type: 'application/pdf' });
  expect(await mediaDisposition(old.attachmentId)).toBe(`attachment; filename="invoicegnp.exe.pdf"; filename*=UTF-8''invoicegnp.exe.pdf`);
  // The reply names its files itself (the console copies the upload's answer; a member may write any name).
  const fresh = await uploaded(member, workspaceId, setup.conversationId, { bytes: PDF, name: 'ok.pdf', type: 'application/pdf' });
  const messageId = await writeReplyWithAttachments(workspaceId, setup.conversationId, member, 'files', [old, { ...fresh, name: `\u2067${LYING}\u2069.pdf` }]);
  const { deliveryId } = await eventually(async () => setup.topic.received.find((n) => n.messageId === messageId), `the notification of reply ${messageId}`, 20_000);
  const delivery = adminDb().doc(`workspaces/${workspaceId}/deliveries/${deliveryId}`);
  expect(((await delivery.get()).get('attachments') as Uploaded[]).map((a) => a.name)).toEqual(['invoicegnp.exe.pdf', 'invoicegnp.exe.pdf']);
  // A delivery recorded before the rule: its stored names are cleaned when the claim hands them on.
  await delivery.update({ attachments: [old, { ...fresh, name: `\uFEFF${LYING}.pdf` }] });

  const claim = await op('claim', setup.integration.key, { deliveryId, requestId: randomUUID() });
  const body = claim.body as { status: string; leaseId: string; message: { attachments: Uploaded[] } };
  expect(body.status).toBe('ready');
  expect(body.message.attachments).toEqual([{ ...old, name: 'invoicegnp.exe.pdf' }, { ...fresh, name: 'invoicegnp.exe.pdf' }]);
  const file = await op('attachment', setup.integration.key, { deliveryId, leaseId: body.leaseId, attachmentId: old.attachmentId });
  expect({ status: file.status, disposition: file.headers.get('content-disposition'), csp: file.headers.get('content-security-policy') }).toEqual({
    status: 200,
    disposition: `attachment; filename="invoicegnp.exe.pdf"; filename*=UTF-8''invoicegnp.exe.pdf`,
    csp: "sandbox; default-src 'none'",
  });
});
