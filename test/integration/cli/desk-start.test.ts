/**
 * `npm run desk -- start` (console/cli, docs/cli.md) against the real local stack: the CLI, run
 * through its `main` in this process (desk-helpers.ts; desk.test.ts runs the launcher as a process)
 * signed in as a member of this suite's workspace, writes the start request as the
 * console's New conversation form does (under firestore.rules), and the real start trigger answers
 * on the start document:
 *
 *   a start by email with a text: the conversation id the service made (exit 0), the request as the
 *   console writes it; a second start to the same address: `reused`
 *   -> a start by handle with a template on a windowed channel, the params as given
 *   -> a start the service refuses (the integration's replies are off): its code and words, exit 1
 *   -> bad arguments (an address the rules refuse, a kind the integration does not allow, a text on
 *      a windowed channel, a template the channel does not declare): refused, nothing written
 */
import { randomUUID } from 'node:crypto';
import { startedConversationId } from '../../../functions/src/rules/starts';
import { closePubSub, createTestTopic, eventually, type TestTopic } from '../helpers/deliveries';
import { adminDb, createTestIntegration, integrationRef, postJson, type TestIntegration } from '../helpers/stack';
import { account, desk, expectExit, json } from './desk-helpers';

// The first start of a run meets a cold trigger in the emulator; each CLI run signs in.
jest.setTimeout(120_000);

const TEMPLATE = { name: 'hello', language: 'en-US', params: [{ name: 'name', maxLength: 20 }], preview: 'Hi {{name}}, we have news.' };

const workspaceId = `ws_${randomUUID()}`;
/** The integrations' replies topic: a start becomes a delivery notified there (without a topic the service refuses it `replies_disabled`). */
let topic: TestTopic;
/** Starts by email and handle, no window. */
let open: TestIntegration;
/** Starts by handle, a reply window and one template. */
let windowed: TestIntegration;
/** Starts by email allowed, but its replies are off: the service refuses the start. */
let silent: TestIntegration;
const member = { email: `operator-${randomUUID().slice(0, 8)}@desk.test`, password: `pw-${randomUUID()}`, uid: '' };
let asMember: Record<string, string> = {};

const starts = () => adminDb().collection('workspaces').doc(workspaceId).collection('conversationStarts');
const startCount = async (): Promise<number> => (await starts().get()).size;

beforeAll(async () => {
  topic = await createTestTopic();
  const make = () => createTestIntegration({ workspaceId, topic: topic.topicPath });
  [open, windowed, silent] = await Promise.all([make(), make(), make()]);
  await integrationRef(workspaceId, open.integrationId).update({ conversations: { start: { addressKinds: ['email', 'handle'] } } });
  await integrationRef(workspaceId, windowed.integrationId).update({ conversations: { start: { addressKinds: ['handle'] } } });
  // The connector declares its channel through the API: the service stores it and the template index the rules check a start's template against.
  const declared = await postJson('/v1/channel', { window: { seconds: 86_400 }, templates: [TEMPLATE] }, { key: windowed.key, method: 'PUT' });
  if (declared.status !== 200) throw new Error(`PUT /v1/channel answered ${declared.status}: ${declared.text}`);
  await integrationRef(workspaceId, silent.integrationId).update({ conversations: { start: { addressKinds: ['email'] } }, 'replies.enabled': false });
  // Provisioning (Admin SDK), as `npm start` seeds the demo workspace: the account and its membership.
  member.uid = await account(member.email, member.password);
  await adminDb().doc(`workspaces/${workspaceId}/members/${member.uid}`).set({ role: 'operator' });
  asMember = { DESK_WORKSPACE: workspaceId, DESK_EMAIL: member.email, DESK_PASSWORD: member.password };
});
afterAll(async () => {
  await topic?.close();
  await closePubSub();
});

test('a start by email with a text: the service answers with the conversation (exit 0); the same address again is reused', async () => {
  const address = `ana-${randomUUID().slice(0, 6)}@example.com`;
  const started = json<{ startId: string; conversationId: string; reused: boolean }>(
    await desk(['start', '--integration', open.integrationId, '--to', `email:${address}`, '--text', 'Hello Ana, your order is ready.', '--json'], asMember),
  );
  expect(started).toEqual({ startId: expect.any(String), conversationId: startedConversationId(open.integrationId, started.startId), reused: false });
  // The console's write, exactly: the member's uid, the address, the text; the service's answer beside it.
  const stored = (await starts().doc(started.startId).get()).data();
  expect(stored).toMatchObject({ integrationId: open.integrationId, to: { kind: 'email', value: address }, text: 'Hello Ana, your order is ready.', uid: member.uid, result: { conversationId: started.conversationId, reused: false } });
  expect(stored).not.toHaveProperty('template');
  const conversation = (await adminDb().doc(`workspaces/${workspaceId}/conversations/${started.conversationId}`).get()).data();
  expect(conversation).toMatchObject({ origin: 'desk', integrationId: open.integrationId, to: { kind: 'email', value: address } });
  // The start became a delivery of the conversation, notified to the integration's connector.
  await eventually(async () => topic.received.find((n) => n.conversationId === started.conversationId), `the notification of the start of ${started.conversationId}`, 30_000);

  // A second start to the same address: the service adds the message to the customer's conversation.
  const again = await desk(['start', '--integration', open.integrationId, '--to', `email:${address}`, '--text', 'One more thing.'], asMember);
  expectExit(again, 0);
  expect(again.stdout).toMatch(/^Start \S+ requested: email address .+ on integration /m);
  expect(again.stdout).toContain(`Conversation ${started.conversationId}: this customer already has it, and the message was added to it (reused).`);
});

test('a start by handle with a template on a windowed channel: the template and its params as given', async () => {
  const handle = `grace_${randomUUID().slice(0, 6)}`;
  const run = await desk(['start', '--integration', windowed.integrationId, '--to', `handle:${handle}`, '--template', 'hello:en-us', '--param', 'name=Grace', '--json'], asMember);
  const started = json<{ startId: string; conversationId: string; reused: boolean }>(run);
  expect(started.reused).toBe(false);
  // The channel's own name and language (the form's choice), whatever case the command line used.
  expect((await starts().doc(started.startId).get()).data()).toMatchObject({ to: { kind: 'handle', value: handle }, template: { name: 'hello', language: 'en-US', params: { name: 'Grace' } } });
});

test('a start the service refuses: its code and words on stderr (and in --json), exit 1', async () => {
  const before = await startCount();
  const run = await desk(['start', '--integration', silent.integrationId, '--to', 'email:ben@example.com', '--text', 'Hello Ben', '--json'], asMember);
  expectExit(run, 1);
  expect(run.stderr).toContain("desk: This integration's replies are turned off, so nothing can be sent on it. (replies_disabled");
  expect(JSON.parse(run.stdout)).toEqual({ error: { code: 'replies_disabled', message: expect.stringContaining('replies_disabled') } });
  // The request was written (the service decides this one: the integration's replies are off) and carries the refusal.
  const written = (await starts().where('integrationId', '==', silent.integrationId).get()).docs.map((d) => d.data());
  expect(written).toEqual([expect.objectContaining({ error: expect.objectContaining({ code: 'replies_disabled' }) })]);
  expect(await startCount()).toBe(before + 1);
});

test('bad arguments are refused before anything is written', async () => {
  const before = await startCount();
  // A usage error: exit 2 and the command's usage.
  const badPhone = await desk(['start', '--integration', open.integrationId, '--to', 'phone:0770 090', '--text', 'Hi'], asMember);
  expectExit(badPhone, 2);
  expect(badPhone.stderr).toContain('desk: --to phone: A phone number is + then the country code and number');
  expect(badPhone.stderr).toContain('start --integration <id> --to kind:address');
  const missing = await desk(['start', '--integration', open.integrationId, '--text', 'Hi'], asMember);
  expectExit(missing, 2);
  // The integration's terms, as the New conversation form applies them: exit 1, the reason.
  const kind = await desk(['start', '--integration', windowed.integrationId, '--to', 'email:cy@example.com', '--template', 'hello:en-US', '--param', 'name=Cy'], asMember);
  expectExit(kind, 1);
  expect(kind.stderr).toContain(`desk: integration ${windowed.integrationId} starts conversations by handle, not by email address. Nothing was written.`);
  const text = await desk(['start', '--integration', windowed.integrationId, '--to', 'handle:cy', '--text', 'Hi'], asMember);
  expectExit(text, 1);
  expect(text.stderr).toContain('this channel has a reply window and the customer has not written yet: the first message is a template (--template name:language; it declares hello (en-US))');
  const unknown = await desk(['start', '--integration', windowed.integrationId, '--to', 'handle:cy', '--template', 'bye:en-US'], asMember);
  expectExit(unknown, 1);
  expect(unknown.stderr).toContain('the channel declares no template bye (en-US) (it declares hello (en-US))');
  const tooLong = await desk(['start', '--integration', windowed.integrationId, '--to', 'handle:cy', '--template', 'hello:en-US', '--param', `name=${'x'.repeat(21)}`], asMember);
  expectExit(tooLong, 1);
  expect(tooLong.stderr).toContain('template hello (en-US): name is too long by 1 characters (at most 20).');
  const stray = await desk(['start', '--integration', windowed.integrationId, '--to', 'handle:cy', '--template', 'hello:en-US', '--param', 'name=Cy', '--param', 'order=1'], asMember);
  expectExit(stray, 1);
  expect(stray.stderr).toContain('template hello (en-US) takes the params name, not order');
  const none = await desk(['start', '--integration', 'int_missing', '--to', 'handle:cy', '--text', 'Hi'], asMember);
  expectExit(none, 1);
  expect(none.stderr).toContain(`desk: no integration int_missing in workspace ${workspaceId}`);
  expect(await startCount()).toBe(before);
});
