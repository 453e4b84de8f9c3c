/**
 * The console's accessibility, as a test: axe-core (browser-helpers.ts expectNoAxeViolations, every
 * rule it runs by default) on every view, as an admin and as an operator, at desktop width
 * (1280×800) and phone width (390×844), in a real browser against the real local stack; then the
 * Conversations view's keyboard shortcuts (console/src/keyboard.ts) with real key presses. One
 * workspace with two integrations (one with its health computed, one not yet), two conversations
 * and, in the first, a reply sent and a reply failed (with its Resend button); the views:
 *
 *   sign-in form -> conversations list -> an open thread -> integrations -> privacy
 *   (admin; the operator's integrations and privacy are read-only or a notice)
 *   -> keyboard: j/k move through the list, Enter opens, r focuses the composer, Esc leaves it
 *      and then closes the thread (focus back on its row), ? opens the shortcuts dialog (Esc closes
 *      it, focus returns), the single-key shortcuts can be turned off there.
 * @long axe-core on every view, for two roles at two sizes (about 35 s)
 */
import { randomUUID } from 'node:crypto';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { FieldValue } from 'firebase-admin/firestore';
import { rollUpIntegration } from '../../../functions/src/deliveries/health-rollup';
import { adminDb, closeStack, createTestIntegration, postJson } from '../helpers/stack';
import { claimReady, closePubSub, deliverFully, eventually, expectOk, expectSent, op, setupConversation, waitForMirror, type ConversationSetup } from '../helpers/deliveries';
import { consoleUrl, createUser, expectNoAxeViolations, expectUnderCsp, launchChromium, newPage, signIn, type TestUser } from './browser-helpers';

jest.setTimeout(180_000);

const admin: TestUser = { email: `admin-${randomUUID().slice(0, 8)}@a11y.test`, password: `pw-${randomUUID()}`, uid: '' };
const operator: TestUser = { email: `operator-${randomUUID().slice(0, 8)}@a11y.test`, password: `pw-${randomUUID()}`, uid: '' };
const browserLog: string[] = [];
let browser: Browser;
let setup: ConversationSetup;
let workspaceId = '';
/** The second conversation (on the second integration), with the customer's display name. */
let secondConversationId = '';
let secondIntegrationId = '';

const WIDTHS = [
  ['desktop', { width: 1280, height: 800 }],
  ['phone', { width: 390, height: 844 }],
] as const;

/** An operator reply written as the console writes it, once the service mirrored its delivery; returns the delivery id. */
async function reply(text: string): Promise<string> {
  const ref = adminDb().collection(`workspaces/${workspaceId}/conversations/${setup.conversationId}/messages`).doc();
  await ref.create({ direction: 'outbound', author: { type: 'operator', uid: admin.uid }, text, createdAt: FieldValue.serverTimestamp() });
  return (await waitForMirror(setup, ref.id)).deliveryId as string;
}

beforeAll(async () => {
  setup = await setupConversation();
  workspaceId = setup.integration.workspaceId;
  const { key } = setup.integration;
  admin.uid = await createUser(admin.email, admin.password);
  operator.uid = await createUser(operator.email, operator.password);
  const ws = adminDb().collection('workspaces').doc(workspaceId);
  await ws.set({ name: 'Accessibility' }, { merge: true });
  await ws.collection('members').doc(admin.uid).set({ role: 'admin' });
  await ws.collection('members').doc(operator.uid).set({ role: 'operator' });

  // A second integration (its health not computed yet) and a conversation on it, from a named customer.
  const second = await createTestIntegration({ workspaceId });
  secondIntegrationId = second.integrationId;
  const posted = await postJson(
    '/v1/messages',
    { eventId: randomUUID(), externalConversationId: 'chat-a11y-2', sender: { externalId: 'cust-ada', displayName: 'Ada Lovelace' }, message: { text: 'Where is my parcel?' } },
    { key: second.key },
  );
  expect(posted.status).toBe(201);
  secondConversationId = (posted.body as { conversationId: string }).conversationId;

  // In the first conversation: a reply the channel refused for good (Resend shown), one sent.
  const failed = await reply('We could not reach you by phone.');
  const claim = await claimReady(key, failed);
  expectOk(await op('start', key, { deliveryId: failed, leaseId: claim.leaseId }), { status: 'sending' });
  expectSent(await op('fail', key, { deliveryId: failed, leaseId: claim.leaseId, outcome: 'failed', code: 'recipient_blocked' }), failed, 'failed');
  await deliverFully(key, await reply('Your parcel ships today.'));
  // The first integration's health card with counts (the roll-up's schedule does not run on the emulator).
  await rollUpIntegration(adminDb(), workspaceId, setup.integration.integrationId, Date.now());
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await setup?.topic.close();
  await closePubSub();
  await closeStack();
});

/** A signed-in page of `user` in a new context of `viewport`. */
async function signedIn(user: TestUser, viewport: { width: number; height: number }): Promise<Page> {
  const context: BrowserContext = await browser.newContext({ viewport });
  const page = await newPage(browser, browserLog, context);
  await signIn(page, workspaceId, user);
  await page.locator('#whoami', { hasText: `(${user === admin ? 'admin' : 'operator'})` }).waitFor();
  return page;
}

/**
 * The list, complete: both rows with their names (customer and integration) and previews as they finally read.
 * `attached` where the list is hidden (phone width, a thread open). The list re-renders its rows
 * as names arrive, and a re-rendered row loses keyboard focus: the keyboard tests wait for this.
 */
async function listSettled(page: Page, state: 'visible' | 'attached' = 'visible'): Promise<void> {
  await page.locator(`#conversation-list [data-conversation="${setup.conversationId}"] .meta.where`, { hasText: 'integration test' }).waitFor({ state });
  await page.locator(`#conversation-list [data-conversation="${secondConversationId}"] .meta.where`, { hasText: 'integration test' }).waitFor({ state });
  await page.locator(`#conversation-list [data-conversation="${secondConversationId}"] .title`, { hasText: 'Ada Lovelace (cust-ada)' }).waitFor({ state });
  // The rows' previews (their last messages) are in.
  for (const id of [setup.conversationId, secondConversationId]) await page.locator(`#conversation-list [data-conversation="${id}"] .preview`).filter({ hasNotText: /^…$/ }).waitFor({ state });
}

/** The first conversation's thread, complete: both replies in their final state, the header's line. */
async function threadSettled(page: Page): Promise<void> {
  await page.locator('li.message.outbound[data-status="failed"]', { hasText: 'could not reach you' }).getByRole('button', { name: 'Resend' }).waitFor();
  await page.locator('li.message.outbound[data-status="sent"]', { hasText: 'ships today' }).waitFor();
  await page.getByText(/^Customer .* · integration integration test .* · last message /).waitFor();
  await page.getByLabel('Reply', { exact: true }).waitFor();
}

/** Both integration cards, the first with its computed health, the second "not computed yet". */
async function integrationsSettled(page: Page): Promise<void> {
  await page.locator(`[data-integration="${setup.integration.integrationId}"] [data-health="computed-at"] time`).waitFor();
  await page.locator(`[data-integration="${secondIntegrationId}"]`).getByText('Health not computed yet').waitFor();
}

describe.each(WIDTHS)('at %s width', (width, viewport) => {
  let adminPage: Page;
  let operatorPage: Page;

  beforeAll(async () => {
    adminPage = await signedIn(admin, viewport);
    operatorPage = await signedIn(operator, viewport);
  });

  afterAll(async () => {
    await adminPage?.context().close();
    await operatorPage?.context().close();
  });

  test('the sign-in form, and its refusal', async () => {
    const page = await newPage(browser, browserLog, await browser.newContext({ viewport }));
    await page.goto(consoleUrl(workspaceId));
    await page.getByLabel('Email').waitFor();
    await expectNoAxeViolations(page, `sign-in (${width})`);
    await page.getByLabel('Email').fill(admin.email);
    await page.getByLabel('Password').fill('wrong-password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'Wrong email or password' }).waitFor();
    await expectNoAxeViolations(page, `sign-in refused (${width})`);
    await page.context().close();
  });

  test('conversations: the list', async () => {
    await adminPage.goto(consoleUrl(workspaceId, '#/conversations'));
    await listSettled(adminPage);
    await expectNoAxeViolations(adminPage, `conversations list, admin (${width})`);
  });

  test('conversations: an open thread with a sent reply and a failed one (Resend)', async () => {
    await adminPage.goto(consoleUrl(workspaceId, `#/conversations/${encodeURIComponent(setup.conversationId)}`));
    await threadSettled(adminPage);
    await expectNoAxeViolations(adminPage, `open thread, admin (${width})`);
  });

  test('integrations (admin): two integrations, health computed and not yet', async () => {
    await adminPage.goto(consoleUrl(workspaceId, '#/integrations'));
    await integrationsSettled(adminPage);
    await adminPage.locator('#create-integration').waitFor();
    await expectNoAxeViolations(adminPage, `integrations, admin (${width})`);
  });

  test('privacy (admin)', async () => {
    await adminPage.goto(consoleUrl(workspaceId, '#/privacy'));
    await adminPage.locator('#retention-now .notice-loading').waitFor({ state: 'detached' });
    await adminPage.locator('#erasure-list:not([aria-busy])').waitFor();
    await adminPage.locator('#export-list:not([aria-busy])').waitFor();
    await expectNoAxeViolations(adminPage, `privacy, admin (${width})`);
  });

  test('the operator: list, thread, integrations (read-only), privacy (a notice)', async () => {
    await operatorPage.goto(consoleUrl(workspaceId, '#/conversations'));
    await listSettled(operatorPage);
    await expectNoAxeViolations(operatorPage, `conversations list, operator (${width})`);
    await operatorPage.goto(consoleUrl(workspaceId, `#/conversations/${encodeURIComponent(setup.conversationId)}`));
    await threadSettled(operatorPage);
    await expectNoAxeViolations(operatorPage, `open thread, operator (${width})`);
    await operatorPage.goto(consoleUrl(workspaceId, '#/integrations'));
    await integrationsSettled(operatorPage);
    await operatorPage.getByText('only workspace admins can create, deactivate or re-key integrations').waitFor();
    await expectNoAxeViolations(operatorPage, `integrations, operator (${width})`);
    await operatorPage.goto(consoleUrl(workspaceId, '#/privacy'));
    await operatorPage.getByText('Only workspace admins manage retention, erasures and exports.').waitFor();
    await expectNoAxeViolations(operatorPage, `privacy, operator (${width})`);
  });
});

// Evaluated in the page (strings: this file is type-checked without the DOM library).
const focusedConversation = (page: Page): Promise<string | null> => page.evaluate<string | null>("document.activeElement?.getAttribute('data-conversation') ?? null");
/** Focus lands on the row of `conversationId`: the list re-renders as its live data arrives (keeping the focused row), so this waits a moment. */
async function expectFocusOn(page: Page, conversationId: string | undefined): Promise<void> {
  await eventually(async () => ((await focusedConversation(page)) === conversationId ? true : undefined), `focus on the row of ${String(conversationId)}`, 3_000).catch(async () => {
    expect(await focusedConversation(page)).toBe(conversationId);
  });
}
const focusedId = (page: Page): Promise<string> => page.evaluate<string>("document.activeElement?.id ?? ''");
const hash = (page: Page): Promise<string> => page.evaluate<string>('location.hash');

describe('keyboard shortcuts in Conversations', () => {
  let page: Page;
  /** The rows' conversation ids, top to bottom. */
  let order: string[] = [];

  beforeAll(async () => {
    page = await signedIn(admin, { width: 1280, height: 800 });
    await page.goto(consoleUrl(workspaceId, '#/conversations'));
    await listSettled(page);
    order = await page.evaluate<string[]>("[...document.querySelectorAll('#conversation-list a[data-conversation]')].map((a) => a.dataset.conversation)");
    expect(new Set(order)).toEqual(new Set([setup.conversationId, secondConversationId]));
  });

  afterAll(async () => {
    await page?.context().close();
  });

  test('j and k move focus through the list (from the first row, stopping at the ends); Enter opens the focused one', async () => {
    await page.evaluate('document.activeElement?.blur()');
    await page.keyboard.press('j');
    await expectFocusOn(page, order[0]);
    await page.keyboard.press('j');
    await expectFocusOn(page, order[1]);
    await page.keyboard.press('j');
    await expectFocusOn(page, order[1]);
    await page.keyboard.press('k');
    await expectFocusOn(page, order[0]);
    await page.keyboard.press('k');
    await expectFocusOn(page, order[0]);
    await page.keyboard.press('j');
    await page.keyboard.press('Enter');
    await eventually(async () => ((await hash(page)) === `#/conversations/${encodeURIComponent(order[1] ?? '')}` ? true : undefined), 'the second conversation opened');
    await page.locator(`#conversation-list [data-conversation="${order[1]}"][aria-current="true"]`).waitFor();
  });

  test('with no row focused, j starts at the open conversation', async () => {
    await page.evaluate('document.activeElement?.blur()');
    await page.keyboard.press('j');
    await expectFocusOn(page, order[1]);
  });

  test('r focuses the composer (typing no r); letters typed there are text; Esc leaves it, a second Esc closes the thread onto its row', async () => {
    const composer = page.getByLabel('Reply', { exact: true });
    await composer.waitFor();
    await page.keyboard.press('r');
    await expect(focusedId(page)).resolves.toBe('reply-text');
    await expect(composer.inputValue()).resolves.toBe('');
    await page.keyboard.type('jk?r');
    await expect(composer.inputValue()).resolves.toBe('jk?r');
    await expect(focusedId(page)).resolves.toBe('reply-text');
    await page.keyboard.press('Escape');
    await expect(focusedId(page)).resolves.not.toBe('reply-text');
    await expect(hash(page)).resolves.toBe(`#/conversations/${encodeURIComponent(order[1] ?? '')}`);
    await page.keyboard.press('Escape');
    await eventually(async () => ((await hash(page)) === '#/conversations' ? true : undefined), 'the thread closed');
    await expectFocusOn(page, order[1]);
    await expect(page.locator('#reply-text').count()).resolves.toBe(0);
    await composer.waitFor({ state: 'detached' });
  });

  test('? opens the shortcuts dialog (labelled, modal, no axe violations); Esc closes it and focus returns', async () => {
    await page.keyboard.press('?');
    const dialog = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
    await dialog.waitFor();
    await dialog.getByText('Next conversation in the list').waitFor();
    await expect(page.evaluate<boolean>("document.activeElement?.closest('dialog') !== null")).resolves.toBe(true);
    await expectNoAxeViolations(page, 'shortcuts dialog');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    await expectFocusOn(page, order[1]);
    await expect(hash(page)).resolves.toBe('#/conversations');
  });

  test('the single-key shortcuts can be turned off in the dialog (and on again); the header button opens it', async () => {
    await page.getByRole('button', { name: 'Shortcuts' }).click();
    const dialog = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
    await dialog.getByLabel('Single-key shortcuts (j, k, r, ?)').uncheck();
    await dialog.getByRole('button', { name: 'Close' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await page.locator(`#conversation-list [data-conversation="${order[0]}"]`).focus();
    await page.keyboard.press('j');
    await expectFocusOn(page, order[0]);
    await page.keyboard.press('?');
    await expect(dialog.isVisible()).resolves.toBe(false);
    await page.getByRole('button', { name: 'Shortcuts' }).click();
    await dialog.getByLabel('Single-key shortcuts (j, k, r, ?)').check();
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    await page.locator(`#conversation-list [data-conversation="${order[0]}"]`).focus();
    await page.keyboard.press('j');
    await expectFocusOn(page, order[1]);
  });

  test('outside Conversations the shortcuts do nothing and the Shortcuts button is hidden', async () => {
    await page.getByRole('link', { name: 'Integrations' }).click();
    await page.locator('#create-integration').waitFor();
    await page.evaluate('document.activeElement?.blur()');
    await page.keyboard.press('?');
    await page.keyboard.press('j');
    await expect(page.getByRole('dialog').count()).resolves.toBe(0);
    await expect(page.getByRole('button', { name: 'Shortcuts' }).isHidden()).resolves.toBe(true);
    await expect(hash(page)).resolves.toBe('#/integrations');
  });

  test('at phone width Esc closes the thread and focus lands on its row in the list shown again', async () => {
    const phone = await signedIn(admin, { width: 390, height: 844 });
    await phone.goto(consoleUrl(workspaceId, `#/conversations/${encodeURIComponent(setup.conversationId)}`));
    await threadSettled(phone);
    await listSettled(phone, 'attached');
    await phone.evaluate('document.activeElement?.blur()');
    await phone.keyboard.press('r');
    await expect(focusedId(phone)).resolves.toBe('reply-text');
    await phone.keyboard.press('Escape');
    await phone.keyboard.press('Escape');
    await eventually(async () => ((await hash(phone)) === '#/conversations' ? true : undefined), 'the thread closed');
    await expectFocusOn(phone, setup.conversationId);
    await expect(phone.locator(`#conversation-list [data-conversation="${setup.conversationId}"]`).isVisible()).resolves.toBe(true);
    await phone.context().close();
  });
});

test("every view ran under the console's Content-Security-Policy, and it refused nothing (axe included)", () => {
  expectUnderCsp(browserLog);
});
