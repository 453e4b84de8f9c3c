/**
 * The desk CLI (`npm run desk`, console/cli, docs/cli.md) against the real local stack, run through
 * its `main` in this process (desk-helpers.ts; a few runs through the launcher as a child process,
 * `node scripts/desk.mjs ...`) with the stack's environment, as a member of this suite's own
 * workspace signed in through the Auth emulator: the rules refuse what they refuse to
 * the console. One integration with a topic and two conversations; the test plays the connector
 * itself (claim, fetch, start, complete, receipt through the API):
 *
 *   usage errors (exit 2), help, a stack that is not running (exit 1)
 *   -> an operator (the demo account, `--as operator`) may not set capabilities: the rules' refusal, nothing written
 *   -> the admin enables attachments with `capabilities`, exactly the capability asked for
 *   -> `conversations` lists the conversations with their last message
 *   -> `reply --file` uploads a PNG and writes the reply; the claim carries the file; the CLI waits for `sent`
 *   -> `status` shows the mirror: status, parts, receipt, attempts
 *   -> `cancel` recalls a queued reply; `resend` delivers it again; a second resend is refused
 *   -> who is typing in `status` (a typing event through the API; quiet once 8 s passed)
 *   -> `erase` (by the customer's id) as the admin; refused to the operator
 *   -> `erasures`: pending until the connector acknowledges it through the API, then acknowledged; refused to the operator
 * @long dozens of CLI runs, each signing in (about 25 s alone)
 */
import { account, demoUsers, desk, deskProcess, expectExit, json } from './desk-helpers';
import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { customerDocId } from '../../../console/src/format';
import { realPng } from '../helpers/console-uploads';
import { type ConversationSetup, deliveryTestFile, eventually, expectHttp, expectOk, expectSent, op, setupConversation, waitForMirror } from '../helpers/deliveries';
import { Timestamp } from 'firebase-admin/firestore';
import { adminDb, apiBaseUrl, postJson } from '../helpers/stack';

jest.setTimeout(120_000);

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const file = deliveryTestFile();
let first: ConversationSetup;
let second: ConversationSetup;
let workspaceId = '';
let integrationId = '';
const admin = { email: `admin-${randomUUID().slice(0, 8)}@desk.test`, password: `pw-${randomUUID()}`, uid: '' };
/** The signed-in admin of this suite's workspace, through the environment (DESK_EMAIL / DESK_PASSWORD). */
let asAdmin: Record<string, string> = {};
/** The demo operator (`--as operator`), made an operator of this suite's workspace. */
let asDemoOperator: Record<string, string> = {};
const PNG = realPng(64, 48, [200, 80, 20]);
let pngPath = '';
/** The reply the `reply` test sends (edited and unsent afterwards). */
let sentReplyId = '';
/** The erasure the `erase` test requests (listed by `erasures`). */
let erasureId = '';

beforeAll(async () => {
  first = await file.ownConversation();
  second = await setupConversation({ topic: first.topic, integration: first.integration });
  workspaceId = first.integration.workspaceId;
  integrationId = first.integration.integrationId;
  // Provisioning (Admin SDK), as `npm start` seeds the demo workspace: accounts and memberships.
  admin.uid = await account(admin.email, admin.password);
  await adminDb().doc(`workspaces/${workspaceId}/members/${admin.uid}`).set({ role: 'admin' });
  const demoOperator = demoUsers().find((u) => u.role === 'operator');
  if (demoOperator === undefined) throw new Error('no demo operator in scripts/lib/seed.mjs');
  const operatorUid = await account(demoOperator.email, demoOperator.password);
  await adminDb().doc(`workspaces/${workspaceId}/members/${operatorUid}`).set({ role: 'operator' });
  asAdmin = { DESK_WORKSPACE: workspaceId, DESK_EMAIL: admin.email, DESK_PASSWORD: admin.password };
  asDemoOperator = { DESK_WORKSPACE: workspaceId };
  const dir = mkdtempSync(join(tmpdir(), 'desk-'));
  pngPath = join(dir, 'label.png');
  writeFileSync(pngPath, PNG);
});

describe('usage and the stack', () => {
  test('an unknown command or a missing argument: the reason and the usage, exit 2; help: exit 0', async () => {
    // The launcher as a process for the unknown command and help (its exit status and streams), in this process for the rest.
    const [unknown, missing, noText, help] = await Promise.all([deskProcess(['bogus']), desk(['cancel', 'c_1']), desk(['reply', 'c_1']), deskProcess(['help'])]);
    expectExit(unknown, 2);
    expect(unknown.stderr).toMatch(/^desk: unknown command "bogus" \(one of conversations, start, reply, status, cancel, resend, edit, unsend, capabilities, erase, erasures, help\)\n/);
    expect(unknown.stderr).toContain('Usage: npm run desk -- <command>');
    expectExit(missing, 2);
    expect(missing.stderr).toMatch(/^desk: cancel needs <conversationId> <replyId>\n/);
    expect(missing.stderr).toContain('cancel <conversationId> <replyId> [--no-wait | --wait-seconds N]');
    expectExit(noText, 2);
    expect(noText.stderr).toMatch(/^desk: reply needs --text "..." or at least one --file <path> \(or both\)/);
    expectExit(help, 0);
    for (const command of ['conversations', 'reply', 'status', 'cancel', 'resend', 'edit', 'unsend', 'capabilities', 'erase', 'erasures']) expect(help.stdout).toContain(`  ${command} `);
    // Each option with its line: one of a command, and one of every command.
    expect(help.stdout).toMatch(/\n {6}--pending {11}only those the connector has not acknowledged/);
    expect(help.stdout).toMatch(/\n {2}--workspace <id> {8}the workspace/);
  });

  test('a stack that is not running: said so, with how to start it, exit 1', async () => {
    const port = await closedPort();
    const run = await deskProcess(['conversations'], { FIREBASE_AUTH_EMULATOR_HOST: `127.0.0.1:${port}`, FIRESTORE_EMULATOR_HOST: `127.0.0.1:${port}` });
    expectExit(run, 1);
    expect(run.stderr).toContain(`desk: the local stack is not running: nothing answers at 127.0.0.1:${port} and 127.0.0.1:${port}`);
    expect(run.stderr).toContain('Start it with `npm start`');
  });
});

describe('the operator and the admin, under the rules', () => {
  const integrationDoc = () => adminDb().doc(`workspaces/${workspaceId}/integrations/${integrationId}`);

  test('an operator may not set capabilities: the rules refuse it, exit 1, nothing written', async () => {
    const run = await desk(['capabilities', integrationId, '--attachments', 'on', '--as', 'operator'], asDemoOperator);
    expectExit(run, 1);
    expect(run.stderr).toBe('desk: Denied by the workspace rules: only workspace admins may create or change integrations, and only the fields the contract lists.\n');
    expect((await integrationDoc().get()).get('replies.attachments')).toBeUndefined();
    // An operator may read them.
    const read = await desk(['capabilities', integrationId, '--as', 'operator'], asDemoOperator);
    expectExit(read, 0);
    expect(read.stdout).toContain(`Integration ${integrationId}`);
    expect(read.stdout).toContain('files      off: replies are text only');
  });

  test('the admin enables attachments and the lifecycle: exactly the capability asked for; a bad lifecycle writes nothing', async () => {
    const usage = await desk(['capabilities', integrationId, '--attachments', 'on', '--lifecycle', 'on'], asAdmin);
    expectExit(usage, 2);
    expect(usage.stderr).toMatch(/^desk: --lifecycle takes off, or edit=SECONDS and\/or unsend=SECONDS separated by a comma \(e\.g\. edit=900,unsend=3600\), not "on"\n/);
    const outOfBounds = await desk(['capabilities', integrationId, '--attachments', 'on', '--lifecycle', 'edit=30'], asAdmin);
    expectExit(outOfBounds, 1);
    expect(outOfBounds.stderr).toBe('desk: The edit window is a whole number of seconds from 60 (1 minute) to 604800 (7 days). Nothing was written.\n');
    expect((await integrationDoc().get()).get('replies')).not.toHaveProperty('attachments');
    expect((await integrationDoc().get()).get('replies')).not.toHaveProperty('lifecycle');
    const refused = await desk(['capabilities', integrationId, '--lifecycle', 'edit=900', '--as', 'operator'], asDemoOperator);
    expectExit(refused, 1);
    expect(refused.stderr).toBe('desk: Denied by the workspace rules: only workspace admins may create or change integrations, and only the fields the contract lists.\n');

    const set = json<{ attachments: unknown; changed: boolean }>(await desk(['capabilities', integrationId, '--attachments', 'on', '--types', 'png,pdf', '--max-mb', '5', '--max-files', '2', '--lifecycle', 'edit=900,unsend=3600', '--json'], asAdmin));
    const capability = { contentTypes: ['image/png', 'application/pdf'], maxBytes: 5 * 1024 * 1024, maxCount: 2 };
    const lifecycle = { edit: { windowSeconds: 900 }, unsend: { windowSeconds: 3600 } };
    expect(set).toMatchObject({ attachments: capability, changed: true, lifecycle });
    expect((await integrationDoc().get()).get('replies.attachments')).toEqual(capability);
    expect((await integrationDoc().get()).get('replies.lifecycle')).toEqual(lifecycle);
    const printed = await desk(['capabilities', integrationId], asAdmin);
    expectExit(printed, 0);
    expect(printed.stdout).toContain('files      on: PNG, PDF; up to 5 MB each, 2 files per reply (10 MB in all).');
    expect(printed.stdout).toContain('lifecycle  on (edit=900,unsend=3600): Edits within 15 min of sending; unsends within 1 h.');
  });

  test('conversations: each with its customer, its last message and its latest reply', async () => {
    // Through the launcher: a process reaches the stack from the environment the runner sets.
    const rows = json<Array<Record<string, unknown>>>(await deskProcess(['conversations', '--json'], asAdmin));
    expect(rows.map((r) => r.conversationId).sort()).toEqual([first.conversationId, second.conversationId].sort());
    expect(rows.find((r) => r.conversationId === first.conversationId)).toEqual({
      conversationId: first.conversationId,
      integrationId,
      externalConversationId: first.externalConversationId,
      customer: { externalId: first.customerId, displayName: null },
      lastMessageAtMs: expect.any(Number),
      lastMessage: { id: expect.stringMatching(/^m_/), from: 'customer', text: 'Hello, I need help', files: 0, atMs: expect.any(Number) },
      latestReply: null,
    });
    const human = await desk(['conversations', '--limit', '1'], asAdmin);
    expectExit(human, 0);
    expect(human.stdout).toMatch(/^c_\S+ {2}\S+ \/ chat-/);
    expect(human.stdout).toContain('customer: “Hello, I need help”');
  });

  test('reply with a file: uploaded, the claim carries it, and the CLI waits until it is sent', async () => {
    await eventually(async () => ((await adminDb().doc(`workspaces/${workspaceId}/integrations/${integrationId}`).get()).get('replies.attachments') === undefined ? undefined : true), 'the capability');
    const running = desk(['reply', first.conversationId, '--text', 'Here is your label', '--file', pngPath, '--wait-seconds', '90', '--json'], asAdmin);

    // The connector's side, through the API: the notification, a claim with the file, its bytes, the parts sent.
    const notification = await eventually(async () => first.topic.received.find((n) => n.conversationId === first.conversationId), 'the reply notification', 60_000);
    const key = first.integration.key;
    const claim = await op('claim', key, { deliveryId: notification.deliveryId, requestId: randomUUID() });
    expectHttp(claim, 200);
    const claimed = claim.body as { leaseId: string; message: { text: string; attachments: Array<{ attachmentId: string }> } };
    const sha256 = createHash('sha256').update(PNG).digest('hex');
    expect(claimed.message).toMatchObject({ text: 'Here is your label', attachments: [{ attachmentId: expect.stringMatching(/^a_/), name: 'label.png', contentType: 'image/png', size: PNG.length, sha256 }] });
    const attachmentId = claimed.message.attachments[0]!.attachmentId;
    const bytes = await fetch(`${apiBaseUrl()}/v1/deliveries/attachment`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ deliveryId: notification.deliveryId, leaseId: claimed.leaseId, attachmentId }),
    });
    expect(bytes.status).toBe(200);
    expect(Buffer.from(await bytes.arrayBuffer()).equals(PNG)).toBe(true);
    expectOk(await op('start', key, { deliveryId: notification.deliveryId, leaseId: claimed.leaseId }), { status: 'sending' });
    const parts = [
      { part: 'text', status: 'sent', providerMessageIds: ['prov-text'] },
      { part: attachmentId, status: 'sent', providerMessageIds: ['prov-file'] },
    ];
    expectSent(await op('complete', key, { deliveryId: notification.deliveryId, leaseId: claimed.leaseId, providerMessageIds: ['prov-text', 'prov-file'], parts }), notification.deliveryId);

    const out = json<{ replyId: string; attachments: unknown[]; final: boolean; reply: { delivery: Record<string, unknown> } }>(await running);
    expect(out.replyId).toBe(notification.messageId);
    sentReplyId = out.replyId;
    expect(out.attachments).toEqual([{ attachmentId, name: 'label.png', contentType: 'image/png', size: PNG.length, sha256 }]);
    expect(out.final).toBe(true);
    expect(out.reply.delivery).toMatchObject({ deliveryId: notification.deliveryId, status: 'sent', providerMessageIds: ['prov-text', 'prov-file'], parts });
    // Exactly the console's reply document, written with the admin's own uid.
    const stored = (await adminDb().doc(`workspaces/${workspaceId}/conversations/${first.conversationId}/messages/${out.replyId}`).get()).data();
    expect(stored).toMatchObject({ direction: 'outbound', author: { type: 'operator', uid: admin.uid }, text: 'Here is your label', attachments: out.attachments });

    // A receipt, then the mirror as `status` shows it.
    expectOk(await op('receipt', key, { deliveryId: notification.deliveryId, status: 'delivered' }), { status: 'sent' });
    await waitForMirror(first, out.replyId, (m) => m.receipt !== undefined);
    const status = await desk(['status', first.conversationId], asAdmin);
    expectExit(status, 0);
    expect(status.stdout).toContain(`reply ${out.replyId} · `);
    expect(status.stdout).toContain(' · by you');
    expect(status.stdout).toContain('  files      label.png (PNG, ');
    expect(status.stdout).toContain(`  status     sent · delivery ${notification.deliveryId}`);
    expect(status.stdout).toContain('  parts      text: sent [prov-text] · label.png: sent [prov-file]');
    expect(status.stdout).toMatch(/ {2}receipt {4}delivered at (\d{4}-\d\d-\d\d )?\d\d:\d\d:\d\dZ/);
    expect(status.stdout).toMatch(/ {2}attempts {3}\S.* claimed → .+ started → .+ sent\n/);
  });

  test('edit and unsend a sent reply: exactly the console\'s requests, the service\'s deliveries, status shows "edited" and "unsent"; once unsent both are refused', async () => {
    const key = first.integration.key;
    const reply = () => adminDb().doc(`workspaces/${workspaceId}/conversations/${first.conversationId}/messages/${sentReplyId}`);
    /** The connector's side of the latest request of `field`: the service's delivery, claimed (of its kind), started, completed. */
    const deliverLatest = async (field: 'edits' | 'unsends', kind: 'edit' | 'unsend') => {
      const deliveryId = await eventually(async () => ((await reply().get()).get(field) as Array<{ deliveryId?: string | null }> | undefined)?.at(-1)?.deliveryId ?? undefined, `the ${field} entry`, 30_000);
      const claim = await op('claim', key, { deliveryId, requestId: randomUUID() });
      expectHttp(claim, 200);
      const claimed = claim.body as { leaseId: string; kind: string; target: { providerMessageIds: string[] } };
      expect(claimed).toMatchObject({ status: 'ready', kind, target: { providerMessageIds: ['prov-text', 'prov-file'] } });
      expectOk(await op('start', key, { deliveryId, leaseId: claimed.leaseId }), { status: 'sending' });
      expectSent(await op('complete', key, { deliveryId, leaseId: claimed.leaseId, providerMessageIds: claimed.target.providerMessageIds }), deliveryId);
    };

    const tooLong = await desk(['edit', first.conversationId, sentReplyId, '--text', 'x'.repeat(10_001)], asAdmin);
    expectExit(tooLong, 1);
    expect(tooLong.stderr).toBe('desk: Too long by 1 characters (at most 10000).\n');
    expect((await reply().get()).get('edit')).toBeUndefined();

    const editing = desk(['edit', first.conversationId, sentReplyId, '--text', 'Here is your label (reprinted)', '--wait-seconds', '60', '--json'], asAdmin);
    await deliverLatest('edits', 'edit');
    const edited = json<{ outcome: { status: string; text: string }; reply: { edits: unknown[] } }>(await editing);
    expect(edited.outcome).toMatchObject({ status: 'sent', text: 'Here is your label (reprinted)' });
    expect((await reply().get()).get('edit')).toEqual({ text: 'Here is your label (reprinted)', requestedAt: expect.anything(), uid: admin.uid });

    const unsending = desk(['unsend', first.conversationId, sentReplyId, '--wait-seconds', '60'], asDemoOperator);
    await deliverLatest('unsends', 'unsend');
    const unsent = await unsending;
    expectExit(unsent, 0);
    expect(unsent.stdout).toContain(`Unsend requested for reply ${sentReplyId}.`);
    expect(unsent.stdout).toMatch(/ {2}unsent {5}at (\d{4}-\d\d-\d\d )?\d\d:\d\d:\d\dZ \(taken back from the channel\)\n/);
    expect((await reply().get()).get('unsend')).toEqual({ requestedAt: expect.anything(), uid: expect.any(String) });

    const status = await desk(['status', first.conversationId, sentReplyId], asAdmin);
    expectExit(status, 0);
    expect(status.stdout).toContain('  text       Here is your label (reprinted) (edited)\n');
    expect(status.stdout).toContain('  original   Here is your label\n');
    expect(status.stdout).toMatch(/ {2}edits {6}1\. “Here is your label \(reprinted\)” sent at \S+/);
    expect(status.stdout).toMatch(/ {2}unsends {4}1\. sent at \S+/);

    // Unsent: the rules refuse both from now on, and say why.
    const again = await desk(['unsend', first.conversationId, sentReplyId], asAdmin);
    expectExit(again, 1);
    expect(again.stderr).toBe('desk: Denied by the workspace rules: a member may unsend only a sent operator reply of an integration that allows unsends, within its window, once.\n');
    const late = await desk(['edit', first.conversationId, sentReplyId, '--text', 'Too late'], asAdmin);
    expectExit(late, 1);
    expect(late.stderr).toMatch(/^desk: Denied by the workspace rules: a member may edit only a sent operator reply/);
  });

  test("customers' edits, tombstones and reactions (the service's fields, seeded) in status and conversations", async () => {
    const messages = adminDb().collection(`workspaces/${workspaceId}/conversations/${first.conversationId}/messages`);
    const customerMessage = (await messages.where('direction', '==', 'inbound').get()).docs[0];
    if (customerMessage === undefined) throw new Error('no customer message in the first conversation');
    const now = Timestamp.now();
    await customerMessage.ref.update({ edits: [{ text: 'Hello, I need help with my label', at: now }], reactions: [{ emoji: '👍', senderExternalId: first.customerId, at: now }] });
    const deleted = messages.doc();
    // A tombstone as the service stores it: the text and images gone, only the time of the deletion.
    await deleted.create({ direction: 'inbound', sender: { externalId: first.customerId }, text: null, images: [], createdAt: now, deleted: { at: now } });
    await messages.doc(sentReplyId).update({ reactions: [{ emoji: '🙏', senderExternalId: first.customerId, at: now }, { emoji: '🙏', senderExternalId: 'cust-x', at: now }] });

    const status = await desk(['status', first.conversationId], asAdmin);
    expectExit(status, 0);
    expect(status.stdout).toContain('  reactions  🙏 2\n');
    expect(status.stdout).toContain('Customer messages edited, deleted or reacted to (2), oldest first:');
    expect(status.stdout).toMatch(new RegExp(`message ${customerMessage.id} · \\S+ · customer ${first.customerId}\\n {2}text {7}Hello, I need help with my label \\(edited at \\S+\\)\\n {2}original {3}Hello, I need help\\n {2}reactions {2}👍 1`));
    expect(status.stdout).toMatch(new RegExp(`message ${deleted.id} · \\S+ · customer ${first.customerId}\\n {2}deleted {4}by the customer at \\S+ \\(content removed\\)`));
    const rows = json<Array<{ conversationId: string; lastMessage: unknown }>>(await desk(['conversations', '--json'], asAdmin));
    expect(rows.find((r) => r.conversationId === first.conversationId)?.lastMessage).toEqual({ id: deleted.id, from: 'customer', text: '', files: 0, atMs: now.toMillis(), deleted: true });
    const human = await desk(['conversations'], asAdmin);
    expect(human.stdout).toContain('customer: deleted by the customer');
  });

  test('cancel recalls a queued reply; resend delivers it again; a second resend is refused', async () => {
    const written = json<{ replyId: string; reply: null }>(await desk(['reply', second.conversationId, '--text', 'Please hold', '--no-wait', '--json'], asDemoOperator));
    expect(written.reply).toBeNull();
    const queued = await waitForMirror(second, written.replyId, (m) => m.status === 'queued');

    const cancelled = json<{ outcome: string; reply: { delivery: { status: string; errorCode: string } } }>(await desk(['cancel', second.conversationId, written.replyId, '--wait-seconds', '60', '--json'], asDemoOperator));
    expect(cancelled.outcome).toBe('cancelled');
    expect(cancelled.reply.delivery).toMatchObject({ status: 'failed', errorCode: 'cancelled' });

    const resent = await desk(['resend', second.conversationId, written.replyId, '--wait-seconds', '60'], asDemoOperator);
    expectExit(resent, 0);
    expect(resent.stdout).toContain(`Resend requested for reply ${written.replyId}.`);
    expect(resent.stdout).toMatch(/ {2}status {5}queued · delivery d_/);
    expect(resent.stdout).toContain('  previous   failed (cancelled)');
    const mirror = await waitForMirror(second, written.replyId, (m) => m.status === 'queued' && m.deliveryId !== queued.deliveryId);

    const again = await desk(['resend', second.conversationId, written.replyId], asDemoOperator);
    expectExit(again, 1);
    expect(again.stderr).toBe('desk: Denied by the workspace rules: a resend may be requested only once per failed or unknown delivery.\n');
    expect((await waitForMirror(second, written.replyId)).deliveryId).toBe(mirror.deliveryId);
  });

  test('status: who is typing (a typing event through the API), and nobody once it went quiet', async () => {
    const before = await desk(['status', first.conversationId], asAdmin);
    expectExit(before, 0);
    expect(before.stdout).toContain('\n  typing     nobody\n');
    /** A typing event through the API, then `status` (human, then JSON); the event's `at` is not before `postedAt`. */
    const typeThenStatus = async () => {
      const postedAt = Date.now();
      const typed = await postJson('/v1/messages/events', { eventId: `typing-${randomUUID()}`, externalConversationId: first.externalConversationId, sender: { externalId: first.customerId, displayName: 'Grace Hopper' }, type: 'typing' }, { key: first.integration.key });
      expect(typed.status).toBe(201);
      const [human, machine] = await Promise.all([desk(['status', first.conversationId], asAdmin), desk(['status', first.conversationId, '--json'], asAdmin)]);
      // Both read the document before now: within 8 s of postedAt they must show "typing" (on a slow machine, try again).
      return { human, machine, within: Date.now() - postedAt < 8000 };
    };
    let seen = await typeThenStatus();
    for (let attempt = 2; !seen.within && attempt <= 3; attempt++) seen = await typeThenStatus();
    expect(seen.within).toBe(true);
    expectExit(seen.human, 0);
    expect(seen.human.stdout).toMatch(new RegExp(`\\n {2}typing {5}Grace Hopper \\(${first.customerId}\\) is typing \\(since (\\d{4}-\\d\\d-\\d\\d )?\\d\\d:\\d\\d:\\d\\dZ\\)\\n`));
    expect(json<{ typing: unknown }>(seen.machine).typing).toEqual({ senderExternalId: first.customerId, displayName: 'Grace Hopper', atMs: expect.any(Number), typingNow: true });

    // The console shows "typing" for 8 s after the latest event; the document lives a minute. Moved back in time, it is quiet.
    await adminDb().doc(`workspaces/${workspaceId}/typing/${first.conversationId}`).update({ at: Timestamp.fromMillis(Date.now() - 30_000) });
    const quiet = await desk(['status', first.conversationId], asAdmin);
    expectExit(quiet, 0);
    expect(quiet.stdout).toMatch(new RegExp(`\\n {2}typing {5}nobody now \\(Grace Hopper \\(${first.customerId}\\) typed at \\S+\\)\\n`));
    expect(json<{ typing: { typingNow: boolean } }>(await desk(['status', first.conversationId, '--json'], asAdmin)).typing.typingNow).toBe(false);
  });

  test('erase: refused to an operator; the admin erases a customer by its id and sees it done', async () => {
    const refused = await desk(['erase', second.customerId, '--as', 'operator'], asDemoOperator);
    expectExit(refused, 1);
    expect(refused.stderr).toBe('desk: Denied by the workspace rules: only workspace admins may change retention or request erasures and exports, with exactly the fields the contract lists.\n');

    const customerId = await customerDocId(integrationId, second.customerId);
    const out = json<{ erasureId: string; done: boolean; erasure: { counts: Record<string, number> } }>(await desk(['erase', customerId, '--wait-seconds', '90', '--json'], asAdmin));
    expect(out).toMatchObject({ integrationId, externalCustomerId: second.customerId, done: true });
    expect(out.erasure.counts).toMatchObject({ conversations: 1 });
    // Exactly the four fields the rules accept, by the admin.
    const request = (await adminDb().doc(`workspaces/${workspaceId}/erasures/${out.erasureId}`).get()).data();
    expect(request).toMatchObject({ integrationId, externalCustomerId: second.customerId, requestedAt: expect.anything(), requestedBy: admin.uid });
    expect((await adminDb().doc(`workspaces/${workspaceId}/conversations/${second.conversationId}`).get()).exists).toBe(false);
    erasureId = out.erasureId;
  });

  test('erasures: pending until the connector acknowledges it (through the API), then acknowledged; refused to an operator', async () => {
    const refused = await desk(['erasures', '--as', 'operator'], asDemoOperator);
    expectExit(refused, 1);
    expect(refused.stderr).toBe('desk: Denied by the workspace rules: only workspace admins may read erasures.\n');

    type Listed = { id: string; integrationId: string; externalCustomerId: string; requestedBy: string; audit: { status: string; finishedAt: number; acknowledgedAt?: number } };
    const listed = json<Listed[]>(await desk(['erasures', '--json'], asAdmin));
    expect(listed).toEqual([expect.objectContaining({ id: erasureId, integrationId, externalCustomerId: second.customerId, requestedBy: admin.uid, audit: expect.objectContaining({ status: 'done', finishedAt: expect.any(Number) }) })]);
    expect(listed[0]?.audit.acknowledgedAt).toBeUndefined();
    const pending = await desk(['erasures', '--pending'], asAdmin);
    expectExit(pending, 0);
    expect(pending.stdout).toContain(`Erasures of workspace ${workspaceId} not acknowledged by their connector: 1, most recent first\n`);
    expect(pending.stdout).toContain(`erasure ${erasureId} · done\n  customer   ${second.customerId} of integration ${integrationId}\n  requested  `);
    expect(pending.stdout).toMatch(/ {2}requested {2}\S+ by you\n {2}finished {3}\S+\n {2}erased {5}1 conversations, /);
    expect(pending.stdout).toMatch(/ {2}connector {2}pending: told at \S+, waiting .+ for its acknowledgement\n?$/);

    // The connector purged its copies and says so, with the integration's key.
    const ack = await postJson('/v1/erasures/ack', { erasureId }, { key: first.integration.key });
    expect({ status: ack.status, body: ack.body }).toEqual({ status: 200, body: { acknowledged: true } });
    const acknowledgedAt = (await adminDb().doc(`workspaces/${workspaceId}/erasures/${erasureId}`).get()).get('acknowledgedAt') as number;
    expect(typeof acknowledgedAt).toBe('number');

    const after = await desk(['erasures'], asAdmin);
    expectExit(after, 0);
    expect(after.stdout).toContain(`Erasures of workspace ${workspaceId}: 1 (0 not acknowledged by their connector), most recent first\n`);
    expect(after.stdout).toContain(`  connector  acknowledged at ${new Date(acknowledgedAt).toISOString().slice(11, 19)}Z by the connector of ${integrationId} (it purged its own copies)`);
    expect(json<Listed[]>(await desk(['erasures', '--json'], asAdmin))[0]?.audit.acknowledgedAt).toBe(acknowledgedAt);
    const none = await desk(['erasures', '--pending'], asAdmin);
    expectExit(none, 0);
    expect(none.stdout).toBe(`No erasure of workspace ${workspaceId} is waiting for its connector.\n`);
  });
});
