/**
 * The console's parts of recall before send and integration health (docs/decisions.md#recall-before-send-cancel, docs/decisions.md#integration-health) in a real browser against the real local stack
 * (helpers: ./browser-helpers.ts): recall before send and integration health. One workspace with
 * an integration, its topic and a conversation (created through the API), an admin and an
 * operator on the Auth emulator; steps in order:
 *
 *   no connector: two replies written in the console, Cancel send on the first (queued): it
 *   shows failed/cancelled and the second, released, is delivered by a connector started then
 *   -> a reply the connector has claimed and started while the console still shows it queued
 *      (the page is offline for that moment): Cancel send shows "too late", the status stays
 *      sending, and the connector then completes it
 *   -> health: "not computed yet", then the roll-up run in-process (as health.test.ts does; the
 *      schedule does not run on the emulator) shows the exact counts, the oldest claimable age,
 *      the last sent and the last error, live; again once nothing is claimable
 *   -> an operator sees health read-only and cancels a reply; a cancel the rules deny says why.
 */
import { randomUUID } from 'node:crypto';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { FieldValue } from 'firebase-admin/firestore';
import { ConnectorClient } from '../../../sdk/src/index.js';
import { rollUpIntegration } from '../../../functions/src/deliveries/health-rollup';
import { formatAge } from '../../../console/src/format';
import { adminDb, apiBaseUrl, closeStack } from '../helpers/stack';
import { claimReady, closePubSub, type ConversationSetup, deliverFully, eventually, expectOk, expectSent, op, readReply, setupConversation, waitForMirror } from '../helpers/deliveries';
import { announcements, consoleUrl, createUser, expectUnderCsp, launchChromium, newPage, recordAnnouncements, shot, signIn, type TestUser } from './browser-helpers';

jest.setTimeout(180_000);

const admin: TestUser = { email: `admin-${randomUUID().slice(0, 8)}@recall.test`, password: `pw-${randomUUID()}`, uid: '' };
const operator: TestUser = { email: `operator-${randomUUID().slice(0, 8)}@recall.test`, password: `pw-${randomUUID()}`, uid: '' };
const browserLog: string[] = [];
let browser: Browser;
let setup: ConversationSetup;
let workspaceId = '';
let adminPage: Page;
let adminContext: BrowserContext;
const connector = { running: false, loop: Promise.resolve(), sent: 0, errors: [] as string[] };

/** The connector: the SDK's processDelivery on the integration's topic (a provider that accepts). */
function startConnector(): void {
  const client = new ConnectorClient({ integrationKey: setup.integration.key, baseUrl: apiBaseUrl(), timeoutMs: 20_000 });
  connector.running = true;
  connector.loop = (async () => {
    while (connector.running) {
      for (const n of await setup.topic.pull(1, 300)) {
        try {
          await client.processDelivery(n.deliveryId, async () => {
            connector.sent += 1;
            return { providerMessageIds: [`prov-${connector.sent}`] };
          });
        } catch (err) {
          connector.errors.push(err instanceof Error ? err.message : String(err));
        }
      }
    }
  })();
}

async function stopConnector(): Promise<void> {
  connector.running = false;
  await connector.loop;
}

const replyItem = (page: Page, text: string, attrs = '') => page.locator(`li.message.outbound${attrs}`, { hasText: text });

/** Sends a reply from the console's compose box; returns its message id once the service queued it. */
async function sendFromConsole(page: Page, text: string): Promise<string> {
  await page.getByLabel('Reply', { exact: true }).fill(text);
  await page.getByLabel('Reply', { exact: true }).press('Control+Enter');
  await replyItem(page, text, '[data-status="queued"]').waitFor();
  return (await replyItem(page, text).getAttribute('data-message')) ?? '';
}


const iso = (t: { toDate(): Date }): string => t.toDate().toISOString();

beforeAll(async () => {
  setup = await setupConversation();
  workspaceId = setup.integration.workspaceId;
  admin.uid = await createUser(admin.email, admin.password);
  operator.uid = await createUser(operator.email, operator.password);
  const ws = adminDb().collection('workspaces').doc(workspaceId);
  await ws.set({ name: 'Recall and health' }, { merge: true });
  await ws.collection('members').doc(admin.uid).set({ role: 'admin' });
  await ws.collection('members').doc(operator.uid).set({ role: 'operator' });
  browser = await launchChromium();
});

afterAll(async () => {
  await stopConnector();
  await browser?.close();
  await setup?.topic.close();
  await closePubSub();
  await closeStack();
});

test('Cancel send recalls a queued reply (failed, cancelled); the next reply is then delivered', async () => {
  adminContext = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  adminPage = await newPage(browser, browserLog, adminContext);
  await signIn(adminPage, workspaceId, admin);
  await adminPage.locator('#whoami', { hasText: '(admin)' }).waitFor();
  await adminPage.goto(consoleUrl(workspaceId, `#/conversations/${setup.conversationId}`));
  await adminPage.locator('#messages').getByText('Hello, I need help').waitFor();
  await recordAnnouncements(adminPage);

  const firstId = await sendFromConsole(adminPage, 'First: your refund is on its way.');
  await sendFromConsole(adminPage, 'Second: anything else I can do?');
  const first = replyItem(adminPage, 'First: your refund');
  // Keyboard: the labelled button, activated with Enter.
  const cancel = first.getByRole('button', { name: 'Cancel send' });
  await expect(cancel.getAttribute('aria-describedby')).resolves.toBe(`text-${firstId}`);
  await cancel.focus();
  await adminPage.keyboard.press('Enter');
  await replyItem(adminPage, 'First: your refund', '[data-status="failed"][data-cancel="cancelled"]').waitFor();
  await first.getByText('cancelled before sending').waitFor();
  await first.locator('.error-code', { hasText: 'cancelled' }).waitFor();
  await expect(first.getByRole('button', { name: 'Cancel send' }).count()).resolves.toBe(0);
  // Focus stays on the recalled reply across the re-renders.
  await expect(adminPage.evaluate<string>("document.activeElement?.closest('li[data-message]')?.getAttribute('data-message') ?? ''")).resolves.toBe(firstId);
  await eventually(async () => ((await announcements(adminPage)).some((a) => a.includes('First: your refund') && a.includes('cancelled before sending')) ? true : undefined), 'the cancel announced');

  // Written with the client SDK under the rules: exactly the request, by the admin.
  const stored = await readReply(setup, firstId);
  expect(stored?.cancel).toEqual({ requestedAt: expect.anything(), uid: admin.uid });
  expect(stored?.delivery).toMatchObject({ status: 'failed', error: { outcome: 'failed', code: 'cancelled' }, cancel: { status: 'cancelled' } });

  // The second was released: a connector started now delivers it (and skips the recalled one).
  startConnector();
  await replyItem(adminPage, 'Second: anything else', '[data-status="sent"]').waitFor();
  await expect(replyItem(adminPage, 'Second: anything else').getByRole('button', { name: 'Cancel send' }).count()).resolves.toBe(0);
  await stopConnector();
  expect(connector.sent).toBe(1);
  expect((await readReply(setup, firstId))?.delivery?.status).toBe('failed');
});

test('Cancel send on a reply the connector has already started shows "too late" and it stays sending', async () => {
  const text = 'Third: it is being sent right now.';
  const messageId = await sendFromConsole(adminPage, text);
  const reply = replyItem(adminPage, text);
  await reply.getByRole('button', { name: 'Cancel send' }).waitFor();
  const { deliveryId } = (await waitForMirror(setup, messageId)) as { deliveryId: string };

  // The operator's view lags: offline, the page still shows the reply queued while the connector
  // claims and starts it.
  await adminContext.setOffline(true);
  const claim = await claimReady(setup.integration.key, deliveryId);
  expectOk(await op('start', setup.integration.key, { deliveryId, leaseId: claim.leaseId }), { status: 'sending' });
  await waitForMirror(setup, messageId, (m) => m.status === 'sending');
  await expect(reply.getAttribute('data-status')).resolves.toBe('queued');
  await reply.getByRole('button', { name: 'Cancel send' }).click();
  await reply.locator('.cancel-pending', { hasText: 'cancel requested' }).waitFor();
  await adminContext.setOffline(false);

  await replyItem(adminPage, text, '[data-status="sending"][data-cancel="too_late"]').waitFor({ timeout: 90_000 });
  await reply.getByText('too late to cancel').waitFor();
  await eventually(async () => ((await announcements(adminPage)).some((a) => a.includes('Third:') && a.includes('too late to cancel')) ? true : undefined), 'too late announced');
  const mirror = (await readReply(setup, messageId))?.delivery as { status: string; cancel: unknown };
  expect(mirror).toMatchObject({ status: 'sending', cancel: { status: 'too_late' } });

  // Nothing left hanging: the connector completes it; "too late" stays with the sent reply.
  expectSent(await op('complete', setup.integration.key, { deliveryId, leaseId: claim.leaseId, providerMessageIds: ['prov-late'] }), deliveryId);
  await replyItem(adminPage, text, '[data-status="sent"][data-cancel="too_late"]').waitFor();
  await shot(adminPage, 'reply-cancelled');
});

test('the integrations page shows the health roll-up live: counts, oldest claimable, last sent, last error', async () => {
  const { key, integrationId } = setup.integration;
  await adminPage.getByRole('link', { name: 'Integrations' }).click();
  const card = adminPage.locator(`[data-integration="${integrationId}"]`);
  await card.getByText('Health not computed yet: the roll-up runs every minute.').waitFor();

  // A reply the connector fails for good (the last error), then one left claimable.
  const fourthId = await writeAndMirror('Fourth: refused by the channel.');
  const fourth = (await waitForMirror(setup, fourthId)).deliveryId as string;
  const claim = await claimReady(key, fourth);
  expectOk(await op('start', key, { deliveryId: fourth, leaseId: claim.leaseId }), { status: 'sending' });
  expectSent(await op('fail', key, { deliveryId: fourth, leaseId: claim.leaseId, outcome: 'failed', code: 'recipient_blocked' }), fourth, 'failed');
  const fifthId = await writeAndMirror('Fifth: waiting for the connector.');
  const fifth = (await waitForMirror(setup, fifthId, (m) => m.status === 'queued')).deliveryId as string;

  const now = Date.now();
  const health = await rollUpIntegration(adminDb(), workspaceId, integrationId, now);
  // first cancelled + fourth failed; second and third sent; fifth queued.
  expect(health.counts).toEqual({ queued: 1, leased: 0, sending: 0, sent: 2, failed: 2, unknown: 0 });
  expect(health.oldestClaimable?.deliveryId).toBe(fifth);
  const stored = (await adminDb().doc(`workspaces/${workspaceId}/integrationHealth/${integrationId}`).get()).data() ?? {};

  const count = (status: string) => card.locator(`[data-count="${status}"] dd`).textContent();
  await card.locator('[data-health="computed-at"] time').waitFor();
  for (const [status, n] of Object.entries({ ...health.counts, total: 5 })) await expect(count(status)).resolves.toBe(String(n));
  await expect(card.locator('[data-health="computed-at"] time').getAttribute('datetime')).resolves.toBe(new Date(now).toISOString());
  const age = stored.oldestClaimable.ageSeconds as number;
  await expect(card.locator('[data-health="oldest"] [data-age-seconds]').getAttribute('data-age-seconds')).resolves.toBe(String(age));
  await expect(card.locator('[data-health="oldest"]').textContent()).resolves.toContain(`waiting ${formatAge(age)}`);
  await expect(card.locator('[data-health="oldest"] time').getAttribute('datetime')).resolves.toBe(iso(stored.oldestClaimable.since));
  await expect(card.locator('[data-health="last-sent"] time').getAttribute('datetime')).resolves.toBe(iso(stored.lastSent.at));
  expect(stored.lastError).toMatchObject({ deliveryId: fourth, status: 'failed', code: 'recipient_blocked' });
  await expect(card.locator('[data-health="last-error"] code').textContent()).resolves.toBe('recipient_blocked');
  await expect(card.locator('[data-health="last-error"] .badge').textContent()).resolves.toBe('failed');
  await expect(card.locator('[data-health="last-error"] time').getAttribute('datetime')).resolves.toBe(iso(stored.lastError.at));
  // The facts in words, and never "No open problems." beside the red failed count.
  await expect(card.locator('[data-health="facts"]').textContent()).resolves.toBe(`2 failed in 24 h, oldest waiting ${formatAge(age)}.`);
  await expect(card.getByText('No open problems.').count()).resolves.toBe(0);
  await shot(adminPage, 'integrations-health', { fullPage: true });

  // Once the fifth is delivered nothing is claimable: the next roll-up shows it live.
  await deliverFully(key, fifth);
  const later = await rollUpIntegration(adminDb(), workspaceId, integrationId, Date.now());
  expect(later.oldestClaimable).toBeNull();
  await card.locator('[data-health="oldest"]', { hasText: 'none waiting' }).waitFor();
  await expect(card.locator('[data-health="facts"]').textContent()).resolves.toBe('2 failed in 24 h.');
  await expect(count('sent')).resolves.toBe('3');
  await expect(count('queued')).resolves.toBe('0');
  await expect(card.locator('[data-health="last-sent"] time').getAttribute('datetime')).resolves.toBe(new Date(later.lastSent?.at ?? 0).toISOString());

  // Readable at phone width: nothing scrolls sideways.
  const phone = await newPage(browser, browserLog, await browser.newContext({ viewport: { width: 375, height: 812 }, deviceScaleFactor: 2 }));
  await signIn(phone, workspaceId, admin);
  await phone.locator('#whoami').waitFor();
  await phone.goto(consoleUrl(workspaceId, '#/integrations'));
  await phone.locator(`[data-integration="${integrationId}"] [data-count="sent"]`).waitFor();
  await expect(phone.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth')).resolves.toBeLessThanOrEqual(0);
  await shot(phone, 'integrations-health-phone', { fullPage: true });
  await phone.context().close();
});

/** An operator reply written as the console writes it (helpers' writeReply), once mirrored. */
async function writeAndMirror(text: string): Promise<string> {
  const ref = adminDb().collection(`workspaces/${workspaceId}/conversations/${setup.conversationId}/messages`).doc();
  await ref.create({ direction: 'outbound', author: { type: 'operator', uid: admin.uid }, text, createdAt: FieldValue.serverTimestamp() });
  await waitForMirror(setup, ref.id);
  return ref.id;
}

test('an operator sees health read-only and may cancel a reply; a cancel the rules deny says why', async () => {
  const page = await newPage(browser, browserLog);
  await signIn(page, workspaceId, operator);
  await page.locator('#whoami', { hasText: '(operator)' }).waitFor();
  await page.getByRole('link', { name: 'Integrations' }).click();
  const card = page.locator(`[data-integration="${setup.integration.integrationId}"]`);
  await expect(card.locator('[data-count="sent"] dd').textContent()).resolves.toBe('3');
  await card.locator('[data-health="last-error"] code', { hasText: 'recipient_blocked' }).waitFor();
  await expect(card.getByRole('button').count()).resolves.toBe(0);

  await page.goto(consoleUrl(workspaceId, `#/conversations/${setup.conversationId}`));
  const sixth = await sendFromConsole(page, 'Sixth: from the operator.');
  await replyItem(page, 'Sixth:').getByRole('button', { name: 'Cancel send' }).click();
  await replyItem(page, 'Sixth:', '[data-status="failed"][data-cancel="cancelled"]').waitFor();
  expect((await readReply(setup, sixth))?.cancel).toEqual({ requestedAt: expect.anything(), uid: operator.uid });

  // Denied: the operator's membership is withdrawn mid-session; the reply says why, Cancel stays.
  await sendFromConsole(page, 'Seventh: recalled too late in the day.');
  await adminDb().doc(`workspaces/${workspaceId}/members/${operator.uid}`).set({ role: 'former' });
  try {
    await replyItem(page, 'Seventh:').getByRole('button', { name: 'Cancel send' }).click();
    await replyItem(page, 'Seventh:').getByRole('alert').filter({ hasText: 'Denied by the workspace rules' }).waitFor();
    await replyItem(page, 'Seventh:').getByRole('button', { name: 'Cancel send' }).waitFor();
  } finally {
    await adminDb().doc(`workspaces/${workspaceId}/members/${operator.uid}`).set({ role: 'operator' });
  }
  await page.context().close();
});

test("every view ran under the console's Content-Security-Policy, and it refused nothing", () => {
  expectUnderCsp(browserLog);
});
