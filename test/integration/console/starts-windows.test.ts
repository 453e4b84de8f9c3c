/**
 * The console for decision 17 in a real browser against the real local stack (helpers:
 * ./browser-helpers.ts): the channel's reply window, template replies and conversations the desk
 * starts. One workspace with an integration whose connector declared a window of one day and two
 * templates (`PUT /v1/channel`, through the SDK), conversations created through the API, an admin
 * and an operator on the Auth emulator. The members' documents (the integration's start setting,
 * template replies, start requests, resends) are written through the UI under the real
 * firestore.rules; the service answers starts itself (a new conversation waiting for the channel,
 * a refusal); what it writes on other occasions (a conversation's `window` from the customer's
 * messages, connector metadata, `mergedInto` after a merge) is seeded with the Admin SDK where
 * noted, on exactly the documented shapes; failed replies and starts fail through the connector API:
 *
 *   admin: the address kinds of starts on the integration card (stored exactly; none chosen is
 *      refused in the form; removed again)
 *   -> the window's time left ticks with the browser's clock, then "Window closed" turns the
 *      composer into the template picker (free text disabled, with the reason)
 *   -> a template reply from the picker (a param over its limit refused in the form, the live
 *      preview), inside the window and once it closed, written exactly as the rules take it
 *   -> replies failed `window_closed` / `template_invalid` say so in words
 *   -> New conversation: only integrations with starts, the address checked as the rules check
 *      it, a template required on a windowed channel, the start request written exactly, the
 *      service's answer followed (the new conversation opened)
 *   -> that conversation waiting for the channel (composer disabled), its start failed by the
 *      connector with Resend, then merged and followed to its target
 *   -> a start the service refuses (replies off), said in words
 *   -> axe on each of these views, and the Content-Security-Policy respected throughout.
 */
import { randomUUID } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { FieldValue, Timestamp, type DocumentData } from 'firebase-admin/firestore';
import { ConnectorClient } from '../../../sdk/src/index.js';
import { adminDb, apiBaseUrl, closeStack, createTestIntegration } from '../helpers/stack';
import { claimReady, closePubSub, eventually, expectOk, expectSent, op, setupConversation, waitForMirror, type ConversationSetup } from '../helpers/deliveries';
import { consoleUrl, createUser, expectNoAxeViolations, expectUnderCsp, launchChromium, newPage, scrollTo, shot, shotOf, signIn, type TestUser } from './browser-helpers';

jest.setTimeout(180_000);

const admin: TestUser = { email: `admin-${randomUUID().slice(0, 8)}@d17.test`, password: `pw-${randomUUID()}`, uid: '' };
const operator: TestUser = { email: `operator-${randomUUID().slice(0, 8)}@d17.test`, password: `pw-${randomUUID()}`, uid: '' };
const browserLog: string[] = [];
let browser: Browser;
let setup: ConversationSetup;
let workspaceId = '';
let adminPage: Page;
let operatorPage: Page;
/** The conversation the New conversation test started (the next test follows it). */
let startedConversationId = '';

const TEMPLATES = [
  { name: 'order_update', language: 'en-US', params: [{ name: 'order', maxLength: 12 }], preview: 'Your order {{order}} has shipped.' },
  { name: 'welcome', language: 'en', params: [{ name: 'name' }, { name: 'agent' }], preview: 'Hello {{name}}, this is {{ agent }} from the shop.' },
];

const ws = () => adminDb().collection('workspaces').doc(workspaceId);
const integrationDoc = () => ws().collection('integrations').doc(setup.integration.integrationId);
const conversationDoc = (id: string) => ws().collection('conversations').doc(id);
const messagesOf = (id: string) => conversationDoc(id).collection('messages');
const thread = (page: Page, conversationId: string) => page.goto(consoleUrl(workspaceId, `#/conversations/${conversationId}`));

/** The conversation's `window` as the service keeps it (seeded: the window's service is helper W's). */
const seedWindow = (conversationId: string, closesAtMs: number) => conversationDoc(conversationId).update({ window: { closesAt: Timestamp.fromMillis(closesAtMs) } });

/** The messages of a conversation written by `uid`, newest last. */
async function repliesBy(conversationId: string, uid: string): Promise<DocumentData[]> {
  const snap = await messagesOf(conversationId).orderBy('createdAt').get();
  return snap.docs.map((d): DocumentData => ({ id: d.id, ...d.data() })).filter((m) => (m.author as { uid?: string } | undefined)?.uid === uid);
}

/** A text reply written as the console writes it, claimed and failed by the connector with `code`: its message id. */
async function failedReply(conversationId: string, text: string, code: string): Promise<string> {
  const ref = messagesOf(conversationId).doc();
  await ref.create({ direction: 'outbound', author: { type: 'operator', uid: admin.uid }, text, createdAt: FieldValue.serverTimestamp() });
  const { deliveryId } = (await waitForMirror({ ...setup, conversationId }, ref.id, (m) => m.status === 'queued')) as { deliveryId: string };
  const { key } = setup.integration;
  const claim = await claimReady(key, deliveryId);
  expectOk(await op('start', key, { deliveryId, leaseId: claim.leaseId }), { status: 'sending' });
  expectSent(await op('fail', key, { deliveryId, leaseId: claim.leaseId, outcome: 'failed', code }), deliveryId, 'failed');
  await waitForMirror({ ...setup, conversationId }, ref.id, (m) => m.status === 'failed');
  return ref.id;
}

beforeAll(async () => {
  setup = await setupConversation();
  workspaceId = setup.integration.workspaceId;
  admin.uid = await createUser(admin.email, admin.password);
  operator.uid = await createUser(operator.email, operator.password);
  await ws().set({ name: 'Windows and starts' }, { merge: true });
  await ws().collection('members').doc(admin.uid).set({ role: 'admin' });
  await ws().collection('members').doc(operator.uid).set({ role: 'operator' });
  const client = new ConnectorClient({ integrationKey: setup.integration.key, baseUrl: apiBaseUrl(), timeoutMs: 20_000 });
  await client.channel.update({ window: { seconds: 86_400 }, templates: TEMPLATES });
  browser = await launchChromium();
  adminPage = await newPage(browser, browserLog);
  await signIn(adminPage, workspaceId, admin);
  await adminPage.locator('#whoami', { hasText: '(admin)' }).waitFor();
  operatorPage = await newPage(browser, browserLog);
  await signIn(operatorPage, workspaceId, operator);
  await operatorPage.locator('#whoami', { hasText: '(operator)' }).waitFor();
});

afterAll(async () => {
  await browser?.close();
  await setup?.topic.close();
  await closePubSub();
  await closeStack();
});

test('an admin sets the address kinds of starts on the integration card: stored exactly, none refused in the form, removed again', async () => {
  await adminPage.goto(consoleUrl(workspaceId, '#/integrations'));
  const card = adminPage.locator(`[data-integration="${setup.integration.integrationId}"]`);
  const summary = card.locator('.starts-capability');
  await summary.filter({ hasText: 'Members cannot start conversations on this integration.' }).waitFor();
  await card.getByText('Let members start conversations').click();
  const form = card.getByRole('form', { name: `Conversation starts of ${setup.integration.integrationId}` });
  await form.getByRole('button', { name: 'Save starts' }).click();
  await form.getByRole('alert').filter({ hasText: 'Choose at least one address kind (or turn starts off).' }).waitFor();
  expect((await integrationDoc().get()).get('conversations')).toBeUndefined();

  await form.getByLabel('phone number').check();
  await form.getByLabel('email address').check();
  await form.getByRole('button', { name: 'Save starts' }).click();
  await summary.filter({ hasText: 'Members may start conversations by phone number or email address.' }).waitFor();
  await expect(eventually(async () => (await integrationDoc().get()).get('conversations') as unknown, 'the stored start setting')).resolves.toEqual({ start: { addressKinds: ['phone', 'email'] } });
  await card.locator('details.starts-edit summary').click();
  await expectNoAxeViolations(adminPage, 'integrations with the starts editor open');
  await scrollTo(card.locator('section.starts-settings'));
  await shot(adminPage, 'integrations-starts');

  // Turned off: the field is removed (no starts), then allowed again for the tests below.
  await card.getByRole('button', { name: 'Turn starts off' }).click();
  await summary.filter({ hasText: 'Members cannot start conversations' }).waitFor();
  await eventually(async () => ((await integrationDoc().get()).get('conversations') === undefined ? true : undefined), 'the start setting removed');
  await card.getByText('Let members start conversations').click();
  await form.getByLabel('phone number').check();
  await form.getByRole('button', { name: 'Save starts' }).click();
  await summary.filter({ hasText: 'Members may start conversations by phone number.' }).waitFor();

  // An operator sees the setting, and no editor.
  await operatorPage.goto(consoleUrl(workspaceId, '#/integrations'));
  const opCard = operatorPage.locator(`[data-integration="${setup.integration.integrationId}"]`);
  await opCard.locator('.starts-capability', { hasText: 'Members may start conversations by phone number.' }).waitFor();
  await expect(opCard.locator('details.starts-edit').count()).resolves.toBe(0);
});

test("the window's time left ticks with the clock; once it passed, the composer turns into the template picker", async () => {
  const t0 = Date.now();
  await seedWindow(setup.conversationId, t0 + 7_230_000);
  // A page of its own whose clock the test moves (it writes nothing).
  const page = await newPage(browser, browserLog);
  await page.clock.setFixedTime(t0);
  await signIn(page, workspaceId, operator);
  await page.locator('#whoami', { hasText: '(operator)' }).waitFor();
  await thread(page, setup.conversationId);
  const line = page.locator('#reply-window');
  await line.filter({ hasText: 'Reply window: 2 h left for free text.' }).waitFor();
  await expect(page.locator('#reply-text').isEnabled()).resolves.toBe(true);
  await expect(page.locator('#template-compose').getAttribute('open')).resolves.toBeNull();
  await page.clock.setFixedTime(t0 + 7_200_000);
  await line.filter({ hasText: 'Reply window: 30 s left for free text.' }).waitFor();
  await page.clock.setFixedTime(t0 + 7_230_000);
  await line.filter({ hasText: 'Window closed: the channel takes only a template until the customer writes again.' }).waitFor();
  await expect(page.locator('#reply-text').isDisabled()).resolves.toBe(true);
  await expect(page.locator('#send-reply').isDisabled()).resolves.toBe(true);
  await page.locator('#compose-note', { hasText: 'The reply window is closed. Free text is off; send a template below.' }).waitFor();
  await expect(page.locator('#template-compose').getAttribute('open')).resolves.toBe('');
  await page.close();
});

test('a template reply from the picker, inside the window and after it closed, is written exactly as the rules take it', async () => {
  await seedWindow(setup.conversationId, Date.now() + 3_600_000);
  await thread(operatorPage, setup.conversationId);
  await operatorPage.locator('#reply-window', { hasText: /^Reply window: (59 min|1 h)/ }).waitFor();
  // Inside the window, an operator may still choose a template.
  await operatorPage.getByText('Send a template').click();
  const picker = operatorPage.getByRole('form', { name: 'Send a template' });
  await picker.getByLabel('Template').selectOption({ label: 'welcome (en)' });
  await picker.getByLabel('name', { exact: true }).fill('Grace');
  await operatorPage.locator('#reply-template-preview', { hasText: 'Hello Grace, this is {{ agent }} from the shop.' }).waitFor();
  await picker.getByRole('button', { name: 'Send template' }).click();
  await picker.getByRole('alert').filter({ hasText: 'Fill in agent.' }).waitFor();
  await picker.getByLabel('agent', { exact: true }).fill('Sam');
  await operatorPage.locator('#reply-template-preview', { hasText: 'Hello Grace, this is Sam from the shop.' }).waitFor();
  await picker.getByRole('button', { name: 'Send template' }).click();
  const welcome = await eventually(async () => (await repliesBy(setup.conversationId, operator.uid)).find((m) => m.template !== undefined), 'the template reply');
  const { id: welcomeId, createdAt: welcomeAt, ...welcomeDoc } = welcome;
  expect(welcomeAt).toBeInstanceOf(Timestamp);
  expect(welcomeDoc).toEqual({ direction: 'outbound', author: { type: 'operator', uid: operator.uid }, template: { name: 'welcome', language: 'en', params: { name: 'Grace', agent: 'Sam' } }, ...(welcomeDoc.delivery ? { delivery: welcomeDoc.delivery } : {}) });
  // The card reads as the customer reads it, with the template named.
  const card = operatorPage.locator(`li.message.outbound[data-message="${String(welcomeId)}"]`);
  await card.locator('.text', { hasText: 'Hello Grace, this is Sam from the shop.' }).waitFor();
  await card.locator('.template-line', { hasText: 'Template welcome (en)' }).waitFor();

  // The window closes (the service's clock): only a template now.
  await seedWindow(setup.conversationId, Date.now() - 60_000);
  await operatorPage.locator('#reply-window', { hasText: 'Window closed' }).waitFor();
  await expect(operatorPage.locator('#reply-text').isDisabled()).resolves.toBe(true);
  await picker.getByLabel('Template').selectOption({ label: 'order_update (en-US)' });
  await picker.getByLabel('order', { exact: true }).fill('#1234-5678-90');
  await operatorPage.locator('#reply-param-0-counter', { hasText: '13 / 12' }).waitFor();
  await picker.getByRole('button', { name: 'Send template' }).click();
  await picker.getByRole('alert').filter({ hasText: 'order is too long by 1 characters (at most 12).' }).waitFor();
  await picker.getByLabel('order', { exact: true }).fill('#1234');
  await operatorPage.locator('#reply-template-preview', { hasText: 'Your order #1234 has shipped.' }).waitFor();
  await expectNoAxeViolations(operatorPage, 'thread with the window closed and the template picker');
  // Tall enough for the whole thread pane (it scrolls within the viewport).
  await operatorPage.setViewportSize({ width: 1280, height: 1200 });
  await shotOf(operatorPage.locator('.thread'), 'thread-window-closed');
  await operatorPage.setViewportSize({ width: 1280, height: 860 });
  await picker.getByRole('button', { name: 'Send template' }).click();
  const order = await eventually(async () => (await repliesBy(setup.conversationId, operator.uid)).find((m) => (m.template as { name?: string } | undefined)?.name === 'order_update'), 'the order template reply');
  expect(order.template).toEqual({ name: 'order_update', language: 'en-US', params: { order: '#1234' } });
  expect(order.text).toBeUndefined();
  expect(order.attachments).toBeUndefined();
});

test('replies failed window_closed or template_invalid say so in words', async () => {
  const other = await setupConversation({ topic: setup.topic, integration: setup.integration });
  // template_invalid first: a window_closed fail closes the conversation's window (the connector's
  // word wins), after which the service fails a text reply itself, before any connector sees it.
  const invalid = await failedReply(other.conversationId, 'Here is the update.', 'template_invalid');
  const closed = await failedReply(other.conversationId, 'Are you still there?', 'window_closed');
  await thread(operatorPage, other.conversationId);
  const closedCard = operatorPage.locator(`li.message.outbound[data-message="${closed}"]`);
  await closedCard.locator('.failure-reason', { hasText: "Not sent: the channel's reply window had closed. Send a template instead." }).waitFor();
  await closedCard.getByRole('button', { name: 'Resend' }).waitFor();
  await operatorPage.locator(`li.message.outbound[data-message="${invalid}"] .failure-reason`, { hasText: 'Not sent: the channel does not declare this template' }).waitFor();
});

test('New conversation: only integrations with starts, the address checked as the rules do, a template on a windowed channel, the request written exactly; the service opens a conversation waiting for the channel', async () => {
  await operatorPage.goto(consoleUrl(workspaceId, '#/conversations'));
  await operatorPage.getByRole('link', { name: 'New conversation' }).click();
  await operatorPage.locator('#start-title', { hasText: 'New conversation' }).waitFor();
  const form = operatorPage.locator('form.start-form');
  // Shown once the integrations arrived (hidden while none allows starts).
  await form.waitFor();
  await expect(form.getByLabel('Integration').locator('option').count()).resolves.toBe(1);
  await expect(form.getByLabel('Address kind').locator('option').allTextContents()).resolves.toEqual(['phone number']);
  // The channel has a window: the customer has not written, so the first message is a template.
  await expect(operatorPage.locator('#start-mode-text').isDisabled()).resolves.toBe(true);
  await expect(operatorPage.locator('#start-mode-template').isChecked()).resolves.toBe(true);
  await operatorPage.locator('#start-mode-note', { hasText: 'the first message is a template' }).waitFor();

  await form.getByLabel('Address', { exact: true }).fill('07700 900123');
  await form.getByRole('button', { name: 'Start conversation' }).click();
  await form.getByRole('alert').filter({ hasText: 'A phone number is + then the country code and number' }).waitFor();
  await form.getByLabel('Address', { exact: true }).fill('+447700900123');
  await form.getByRole('combobox', { name: 'Template' }).selectOption({ label: 'order_update (en-US)' });
  await form.getByLabel('order', { exact: true }).fill('#42');
  await operatorPage.locator('#start-template-preview', { hasText: 'Your order #42 has shipped.' }).waitFor();
  await expectNoAxeViolations(operatorPage, 'new conversation');
  await shotOf(operatorPage.locator('.thread.start'), 'conversation-new');
  // At phone width the form is the whole screen, and nothing scrolls sideways.
  await operatorPage.setViewportSize({ width: 375, height: 812 });
  await expect(operatorPage.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth')).resolves.toBeLessThanOrEqual(0);
  await expectNoAxeViolations(operatorPage, 'new conversation (phone)');
  await operatorPage.setViewportSize({ width: 1280, height: 860 });
  await form.getByRole('button', { name: 'Start conversation' }).click();

  const start = await eventually(async () => (await ws().collection('conversationStarts').where('uid', '==', operator.uid).get()).docs[0], 'the start request');
  const { requestedAt, result: _result, error: _error, updatedAt: _updatedAt, ...request } = start.data();
  expect(requestedAt).toBeInstanceOf(Timestamp);
  expect(request).toEqual({
    integrationId: setup.integration.integrationId,
    to: { kind: 'phone', value: '+447700900123' },
    template: { name: 'order_update', language: 'en-US', params: { order: '#42' } },
    uid: operator.uid,
  });
  // The service's answer: a new conversation (the address is not known yet), which the console opens.
  const result = await eventually(async () => (await start.ref.get()).get('result') as { conversationId: string; reused: boolean } | undefined, 'the start result');
  expect(result.reused).toBe(false);
  const startedId = result.conversationId;
  await operatorPage.waitForURL((url) => url.hash === `#/conversations/${startedId}`);
  startedConversationId = startedId;
});

test('a started conversation waits for the channel (composer disabled), its failed start says why and offers Resend, and a merged one opens its target', async () => {
  const startedId = startedConversationId;
  expect(startedId).not.toBe('');
  await operatorPage.locator('#reply-window', { hasText: 'Waiting for the channel: the message that starts this conversation has not been sent yet.' }).waitFor();
  await expect(operatorPage.locator('#reply-text').isDisabled()).resolves.toBe(true);
  await expect(operatorPage.locator('#send-reply').isDisabled()).resolves.toBe(true);
  await expect(operatorPage.locator('#template-compose').isHidden()).resolves.toBe(true);
  await operatorPage.locator('#compose-note', { hasText: 'Waiting for the channel' }).waitFor();
  await operatorPage.getByText('started by the desk to phone number +447700900123').waitFor();
  // Connector metadata (seeded: the service keeps it from the connector's messages) shows read-only under Details.
  await conversationDoc(startedId).update({ metadata: { campaign: 'spring' } });
  await operatorPage.getByText('Details: connector metadata (1)').click();
  await operatorPage.locator('dl.conversation-metadata dd', { hasText: 'spring' }).waitFor();

  // The connector cannot reach the address: the start fails, said in words, with Resend and no Cancel send.
  const first = await eventually(async () => (await messagesOf(startedId).get()).docs.find((d) => d.get('start') !== undefined), 'the start message');
  const { deliveryId } = (await waitForMirror({ ...setup, conversationId: startedId }, first.id, (m) => m.status === 'queued')) as { deliveryId: string };
  const card = operatorPage.locator(`li.message.outbound[data-message="${first.id}"]`);
  await card.locator('.start-line', { hasText: 'Started the conversation to phone number +447700900123' }).waitFor();
  await card.locator('.text', { hasText: 'Your order #42 has shipped.' }).waitFor();
  await expect(card.getByRole('button', { name: 'Cancel send' }).count()).resolves.toBe(0);
  const { key } = setup.integration;
  const claim = await claimReady(key, deliveryId);
  expect(claim).toMatchObject({ kind: 'start', message: { recipient: { address: { kind: 'phone', value: '+447700900123' } } } });
  expectOk(await op('start', key, { deliveryId, leaseId: claim.leaseId }), { status: 'sending' });
  expectSent(await op('fail', key, { deliveryId, leaseId: claim.leaseId, outcome: 'failed', code: 'recipient_unreachable' }), deliveryId, 'failed');
  await card.locator('.failure-reason', { hasText: 'Not sent: the channel cannot reach this address.' }).waitFor();
  await expectNoAxeViolations(operatorPage, 'a started conversation waiting for the channel');
  await operatorPage.setViewportSize({ width: 1280, height: 1200 });
  await shotOf(operatorPage.locator('.thread'), 'thread-started-waiting');
  await operatorPage.setViewportSize({ width: 1280, height: 860 });
  await card.getByRole('button', { name: 'Resend' }).click();
  const resend = await eventually(async () => (await messagesOf(startedId).doc(first.id).get()).get('resend') as DocumentData | undefined, 'the resend request');
  expect(resend.uid).toBe(operator.uid);

  // Merged into the conversation the channel already had (seeded: the service's merge on complete): the console opens that one.
  await conversationDoc(startedId).update({ mergedInto: setup.conversationId });
  await operatorPage.waitForURL((url) => url.hash === `#/conversations/${setup.conversationId}`);
  await operatorPage.locator('#thread-title').waitFor();
});

test("New conversation: the service's refusal is said in words and the form stays", async () => {
  // A second integration without a replies topic (its replies are off) that allows starts by email.
  const quiet = await createTestIntegration({ workspaceId });
  await ws().collection('integrations').doc(quiet.integrationId).update({ name: 'Quiet shop', conversations: { start: { addressKinds: ['email'] } } });
  await operatorPage.getByRole('link', { name: 'New conversation' }).click();
  const form = operatorPage.locator('form.start-form');
  await form.getByLabel('Integration').locator('option', { hasText: 'Quiet shop' }).waitFor({ state: 'attached' });
  await form.getByLabel('Integration').selectOption({ label: 'Quiet shop' });
  await expect(form.getByLabel('Address kind').locator('option').allTextContents()).resolves.toEqual(['email address']);
  // No window declared: a text may start it.
  await expect(operatorPage.locator('#start-mode-text').isChecked()).resolves.toBe(true);
  await form.getByLabel('Address', { exact: true }).fill('ada@example.com');
  await form.getByLabel('Message').fill('Your parcel is ready for pickup.');
  await form.getByRole('button', { name: 'Start conversation' }).click();
  // The service's refusal, stored on the start document first: how soon the start trigger runs is
  // the emulator's (its events reach the functions in bursts under load, docs/toolchain.md#emulators-under-load),
  // what the page does once the answer is stored is the console's, and each wait says which failed.
  const refused = await eventually(
    async () => (await ws().collection('conversationStarts').where('integrationId', '==', quiet.integrationId).get()).docs.find((d) => d.get('error') !== undefined),
    'the refused start',
    90_000,
  );
  expect(refused.get('text')).toBe('Your parcel is ready for pickup.');
  expect(refused.get('error')).toMatchObject({ code: 'replies_disabled' });
  try {
    await form.getByRole('alert').filter({ hasText: "This integration's replies are turned off, so nothing can be sent on it. (replies_disabled" }).waitFor();
  } catch (err) {
    // The answer was stored and the page did not show it: what the page showed instead.
    const shown = await operatorPage.evaluate<unknown>("({ hash: location.hash, formAttached: document.querySelector('form.start-form') !== null, status: document.getElementById('start-status')?.textContent ?? null })");
    throw new Error(`the stored refusal did not show: ${String(err)}\npage: ${JSON.stringify(shown)}\nstart document: ${JSON.stringify(refused.data())}`);
  }
  await expect(form.getByRole('button', { name: 'Start conversation' }).isEnabled()).resolves.toBe(true);
});

test('the suite ran under the console Content-Security-Policy', () => {
  expectUnderCsp(browserLog);
});
