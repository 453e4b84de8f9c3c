/**
 * The console's queue in a real browser (headless Chromium) against the real local stack
 * (docs/console.md#the-queue): rows by customer with the last message and badges (needs reply,
 * failed, typing), the filters, unread per member, the tab title's count, notifications while the
 * tab is hidden, and search over 1,000 conversations, with the reads of a list page and of a
 * search measured by the console's read meter. Messages come through the real API (the SDK), so
 * the queue fields are the service's own.
 * @long a browser over seeded conversations (about 45 s)
 */
import { randomUUID } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { ConnectorClient } from '../../../sdk/src/index.js';
import { adminDb, apiBaseUrl, closeStack, createTestIntegration, type TestIntegration } from '../helpers/stack';
import { claimReady, closePubSub, createTestTopic, eventually, expectOk, expectSent, op, waitForMirror, type TestTopic } from '../helpers/deliveries';
import { Timestamp } from 'firebase-admin/firestore';
import { conversationIdFor, customerIdFor, deliveryIdFor } from '../../../functions/src/platform/ids';
import { conversationListShard } from '../../../functions/src/contract';
import { conversationSearchKeys, searchKeyOf } from '../../../functions/src/contract/conversation-search';
import { createUser, expectUnderCsp, launchChromium, newPage as openPage, shot, signIn } from './browser-helpers';

jest.setTimeout(300_000);

const admin = { email: `queue-admin-${randomUUID().slice(0, 8)}@console.test`, password: `pw-${randomUUID()}`, uid: '' };
const operator = { email: `queue-operator-${randomUUID().slice(0, 8)}@console.test`, password: `pw-${randomUUID()}`, uid: '' };
const browserLog: string[] = [];

let browser: Browser;
let topic: TestTopic;
let integration: TestIntegration;
let client: ConnectorClient;
let adminPage: Page;

type Reads = Record<'list' | 'watch' | 'search' | 'preview' | 'marker' | 'customer' | 'count', number>;
const readsOf = (page: Page): Promise<Reads> => page.evaluate<Reads>('window.deskConsole.reads()');
const conversationIdOf = async (externalConversationId: string): Promise<string> => {
  const found = await adminDb().collection(`workspaces/${integration.workspaceId}/conversations`).where('externalConversationId', '==', externalConversationId).get();
  const id = found.docs[0]?.id;
  if (id === undefined) throw new Error(`no conversation ${externalConversationId}`);
  return id;
};
const row = (page: Page, conversationId: string) => page.locator(`#conversation-list a[data-conversation="${conversationId}"]`);
const rowIds = (page: Page): Promise<string[]> => page.locator('#conversation-list a[data-conversation]').evaluateAll((links) => links.map((a) => a.getAttribute('data-conversation') ?? ''));

/** The conversation list after a reload of the page (the sign-in is kept; the read meter starts again). */
async function reloadList(page: Page): Promise<void> {
  await page.evaluate("location.hash = '#/conversations'");
  await page.reload();
  await page.locator('#conversation-list').waitFor();
}

/** Writes an operator reply as the console does, and the connector fails its delivery for good. */
async function failedReply(conversationId: string, text: string): Promise<void> {
  const ref = adminDb().collection(`workspaces/${integration.workspaceId}/conversations/${conversationId}/messages`).doc();
  await ref.create({ direction: 'outbound', author: { type: 'operator', uid: admin.uid }, text, createdAt: new Date() });
  const deliveryId = deliveryIdFor(conversationId, ref.id);
  const setup = { integration, conversationId };
  await waitForMirror(setup, ref.id, (m) => m.status === 'queued');
  const claim = await claimReady(integration.key, deliveryId);
  expectOk(await op('start', integration.key, { deliveryId, leaseId: claim.leaseId }), { status: 'sending' });
  expectSent(await op('fail', integration.key, { deliveryId, leaseId: claim.leaseId, outcome: 'failed', code: 'recipient_blocked' }), deliveryId, 'failed');
  await waitForMirror(setup, ref.id, (m) => m.status === 'failed');
}

beforeAll(async () => {
  topic = await createTestTopic();
  integration = await createTestIntegration({ topic: topic.topicPath });
  await adminDb().doc(`workspaces/${integration.workspaceId}/integrations/${integration.integrationId}`).update({ name: 'Shop chat' });
  admin.uid = await createUser(admin.email, admin.password);
  operator.uid = await createUser(operator.email, operator.password);
  const ws = adminDb().collection('workspaces').doc(integration.workspaceId);
  await ws.set({ name: 'Queue test workspace' }, { merge: true });
  await ws.collection('members').doc(admin.uid).set({ role: 'admin' });
  await ws.collection('members').doc(operator.uid).set({ role: 'operator' });
  client = new ConnectorClient({ integrationKey: integration.key, baseUrl: apiBaseUrl(), timeoutMs: 20_000 });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await topic?.close();
  await closePubSub();
  await closeStack();
});

test('each row: the customer by name, the last message\'s first line, badges; "Needs reply" and "Failed" filter the queue; the title counts', async () => {
  await client.messages.send({ externalConversationId: 'chat-grace', sender: { externalId: 'grace-1', displayName: 'Grace Hopper' }, text: 'My parcel is late\nOrder 1234, sent Monday' });
  await client.messages.send({ externalConversationId: 'chat-ada', sender: { externalId: 'ada-1', displayName: 'Ada Lovelace' }, text: 'A question about my invoice' });
  await client.messages.send({ externalConversationId: 'chat-alan', sender: { externalId: 'alan-1' }, text: 'Hello?' });
  const [grace, ada, alan] = await Promise.all(['chat-grace', 'chat-ada', 'chat-alan'].map(conversationIdOf)) as [string, string, string];
  await failedReply(alan, 'We could not reach you');

  adminPage = await openPage(browser, browserLog);
  await signIn(adminPage, integration.workspaceId, admin);
  await row(adminPage, grace).waitFor();

  // Ada gets an answer from the console itself: her row stops needing a reply.
  await row(adminPage, ada).click();
  const composer = adminPage.getByLabel('Reply', { exact: true });
  await composer.fill('Looking into it now.\nIt will take a minute.');
  await adminPage.getByRole('button', { name: 'Send reply' }).click();
  await eventually(async () => ((await row(adminPage, ada).getAttribute('data-needs-reply')) === null ? true : undefined), "Ada's row no longer needs a reply", 20_000);
  await client.messages.typing({ externalConversationId: 'chat-grace', sender: { externalId: 'grace-1', displayName: 'Grace Hopper' } });

  const graceRow = row(adminPage, grace);
  await graceRow.locator('.badge-typing').waitFor();
  await expect(graceRow.locator('.title').textContent()).resolves.toBe('Grace Hopper (grace-1)');
  await expect(graceRow.locator('.preview').textContent()).resolves.toBe('My parcel is late');
  await expect(graceRow.locator('.badges').textContent()).resolves.toContain('Needs reply');
  await expect(graceRow.locator('.where').textContent()).resolves.toBe('chat-grace · Shop chat');
  const adaRow = row(adminPage, ada);
  await eventually(async () => ((await adaRow.locator('.preview').textContent()) === 'Reply: Looking into it now.' ? true : undefined), "Ada's preview is the reply's first line");
  await expect(adaRow.locator('.badge-needs-reply').count()).resolves.toBe(0);
  const alanRow = row(adminPage, alan);
  await expect(alanRow.locator('.title').textContent()).resolves.toBe('alan-1');
  await expect(alanRow.locator('.badge-failed').textContent()).resolves.toBe('1 failed');
  await expect(alanRow.locator('.preview').textContent()).resolves.toBe('Reply: We could not reach you');
  await shot(adminPage, 'queue');

  await adminPage.locator('#filter-needs-reply').click();
  await eventually(async () => ((await rowIds(adminPage)).join() === grace ? true : undefined), 'only Grace needs a reply');
  await expect(adminPage.locator('#filter-needs-reply').getAttribute('aria-pressed')).resolves.toBe('true');
  await adminPage.locator('#filter-failed').click();
  await eventually(async () => ((await rowIds(adminPage)).join() === alan ? true : undefined), 'only Alan has a failed reply');
  await adminPage.locator('#filter-all').click();
  await eventually(async () => ((await rowIds(adminPage)).length === 3 ? true : undefined), 'all three again');

  // The tab title counts the conversations that need a reply (Grace only).
  await eventually(async () => ((await adminPage.title()) === '(1) Support desk console' ? true : undefined), 'the title counts 1', 20_000);
  // The typing badge goes 8 s after the latest typing event.
  await graceRow.locator('.badge-typing').waitFor({ state: 'detached', timeout: 15_000 });
});

test('unread is per member: a new message is unread for each until they open it; the marker survives a reload', async () => {
  const operatorPage = await openPage(browser, browserLog);
  await signIn(operatorPage, integration.workspaceId, operator);
  await adminPage.locator('#conversation-list').waitFor();
  await client.messages.send({ externalConversationId: 'chat-katherine', sender: { externalId: 'kj-1', displayName: 'Katherine Johnson' }, text: 'Is anyone there?' });
  const katherine = await conversationIdOf('chat-katherine');
  for (const page of [adminPage, operatorPage]) await row(page, katherine).locator('.badge-unread').waitFor();
  await expect(row(adminPage, katherine).getAttribute('class')).resolves.toContain('unread');

  await row(adminPage, katherine).click();
  await adminPage.locator('#thread-title').getByText('chat-katherine').waitFor();
  await reloadList(adminPage);
  await row(adminPage, katherine).locator('.preview').getByText('Is anyone there?').waitFor();
  // Read for the admin after a reload (the marker is stored), still unread for the operator.
  await expect(row(adminPage, katherine).locator('.badge-unread').count()).resolves.toBe(0);
  await expect(row(operatorPage, katherine).locator('.badge-unread').count()).resolves.toBe(1);
  const markers = await adminDb().collection(`workspaces/${integration.workspaceId}/members/${admin.uid}/reads`).get();
  expect(markers.docs.map((d) => d.id)).toContain(katherine);
  expect((await adminDb().collection(`workspaces/${integration.workspaceId}/members/${operator.uid}/reads`).get()).docs.map((d) => d.id)).not.toContain(katherine);

  // A new message makes it unread again for the admin.
  await client.messages.send({ externalConversationId: 'chat-katherine', sender: { externalId: 'kj-1' }, text: 'Hello again' });
  await row(adminPage, katherine).locator('.badge-unread').waitFor();
  await operatorPage.close();
});

test('notifications: asked for on a click, never on load; a new customer message while the tab is hidden notifies, a visible tab does not', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, permissions: ['notifications'] });
  // Records what the page asks of the Notification API, and lets the test hide the tab.
  await context.addInitScript(`
    window.__asked = 0; window.__notified = []; window.__hidden = false;
    Object.defineProperty(Document.prototype, 'hidden', { configurable: true, get: () => window.__hidden });
    const Real = window.Notification;
    class Recorded extends Real {
      constructor(title, options) { window.__notified.push({ title, body: options && options.body, tag: options && options.tag }); super(title, options); }
      static get permission() { return Real.permission; }
      static requestPermission() { window.__asked += 1; return Real.requestPermission(); }
    }
    window.Notification = Recorded;
  `);
  const page = await openPage(browser, browserLog, context);
  await signIn(page, integration.workspaceId, admin);
  await page.locator('#conversation-list a[data-conversation]').first().waitFor();
  const toggle = page.locator('#notifications-toggle');
  await expect(toggle.textContent()).resolves.toBe('Notify me of new messages');
  await expect(page.evaluate<number>('window.__asked')).resolves.toBe(0);
  await toggle.click();
  await eventually(async () => ((await toggle.getAttribute('aria-pressed')) === 'true' ? true : undefined), 'notifications on');
  await expect(page.evaluate<number>('window.__asked')).resolves.toBe(1);
  await expect(toggle.textContent()).resolves.toBe('Notifications on');

  await page.evaluate('window.__hidden = true; document.dispatchEvent(new Event("visibilitychange"))');
  await client.messages.send({ externalConversationId: 'chat-margaret', sender: { externalId: 'mh-1', displayName: 'Margaret Hamilton' }, text: 'The build is red' });
  const margaret = await conversationIdOf('chat-margaret');
  await eventually(async () => ((await page.evaluate<unknown[]>('window.__notified')).length === 1 ? true : undefined), 'one notification');
  await expect(page.evaluate('window.__notified')).resolves.toEqual([{ title: 'New message from Margaret Hamilton (mh-1)', body: 'on Shop chat', tag: margaret }]);

  await page.evaluate('window.__hidden = false; document.dispatchEvent(new Event("visibilitychange"))');
  await client.messages.send({ externalConversationId: 'chat-margaret', sender: { externalId: 'mh-1' }, text: 'Still red' });
  await row(page, margaret).locator('.preview').getByText('Still red').waitFor();
  await expect(page.evaluate<unknown[]>('window.__notified')).resolves.toHaveLength(1);
  await context.close();
});

test('search over 1,000 conversations: by customer name, customer id and conversation id (prefix, any case and accents), one page of reads at most', async () => {
  const total = 1000;
  const existing = (await adminDb().collection(`workspaces/${integration.workspaceId}/conversations`).count().get()).data().count;
  // The 1,000 are written as the service writes them (its id, shard and search-key functions), in
  // batches: through the API they take minutes on the emulator. The one searched for, and every
  // conversation of the tests above, came through the API (the service's own writes).
  const db = adminDb();
  const seeded = Array.from({ length: total - existing - 1 }, (_, n) => n);
  const now = Date.now();
  for (let i = 0; i < seeded.length; i += 150) {
    const batch = db.batch();
    for (const n of seeded.slice(i, i + 150)) {
      const externalConversationId = `order-${String(n).padStart(4, '0')}`;
      const externalId = `cust-${n}`;
      const displayName = `Customer Number ${n}`;
      const id = conversationIdFor(integration.integrationId, externalConversationId);
      const at = Timestamp.fromMillis(now - 3_600_000 + n);
      const ws = `workspaces/${integration.workspaceId}`;
      batch.set(db.doc(`${ws}/conversations/${id}`), {
        integrationId: integration.integrationId,
        externalConversationId,
        lastSenderExternalId: externalId,
        lastCustomerExternalId: externalId,
        lastMessageAt: at,
        lastCustomerMessageAt: at,
        needsReply: true,
        createdAt: at,
        updatedAt: at,
        listShard: conversationListShard(id),
        searchKeys: conversationSearchKeys({ externalConversationId, customerExternalId: externalId, customerName: displayName }),
      });
      // A message only where a preview is shown (the first page, and the broad search's matches): fewer writes, same reads.
      if (n >= seeded.length - 60 || String(n).startsWith('1')) batch.set(db.doc(`${ws}/conversations/${id}/messages/m_seed_${n}`), { direction: 'inbound', integrationId: integration.integrationId, kind: 'message', text: `Question ${n}`, sender: { externalId, displayName, kind: 'customer', customerId: null }, images: [], createdAt: at });
      batch.set(db.doc(`${ws}/customers/${customerIdFor(integration.integrationId, externalId)}`), { integrationId: integration.integrationId, externalId, displayName, lastSeenAt: at, createdAt: at, updatedAt: at });
    }
    await batch.commit();
  }
  await client.messages.send({ externalConversationId: 'ticket-ZX81', sender: { externalId: 'zoe-adamek', displayName: 'Zoë Adámek' }, text: 'Where is my refund?' });
  expect((await adminDb().collection(`workspaces/${integration.workspaceId}/conversations`).count().get()).data().count).toBe(total);
  const zoe = await conversationIdOf('ticket-ZX81');

  // A list page, measured from a fresh load: the shard windows, the new-message watch, and per row its preview, name and marker.
  await reloadList(adminPage);
  const rows = adminPage.locator('#conversation-list a[data-conversation]');
  await eventually(async () => ((await rows.count()) === 50 && (await adminPage.locator('#conversation-list .preview', { hasText: '…' }).count()) === 0 ? true : undefined), 'a page of 50 with previews', 30_000);
  await adminPage.waitForTimeout(1_500); // names and markers settle
  const page = await readsOf(adminPage);
  console.log(`reads of a list page (50 of ${total} conversations): ${JSON.stringify(page)}`);
  // 8 windows of 12 and the widenings the spread needs (docs/console.md#what-a-page-costs); windows of 50 read 400.
  expect(page.list).toBeLessThanOrEqual(150);
  expect(page.list).toBeGreaterThanOrEqual(50);
  expect(page.preview).toBe(50);

  const search = adminPage.getByRole('searchbox', { name: /Search conversations/ });
  const before = await readsOf(adminPage);
  for (const [typed, what] of [['zoe ada', 'name, without accents'], ['ZOË', 'name, any case'], ['zoe-ad', 'customer id prefix'], ['ticket-zx', 'conversation id prefix'], ['adámek', 'second word of the name']] as const) {
    await search.fill(typed);
    const status = adminPage.locator(`#list-status[data-search-key="${searchKeyOf(typed) ?? ''}"]`);
    await eventually(async () => ((await rowIds(adminPage)).join() === zoe && (await status.count()) === 1 && (await status.textContent()) === '1 match.' ? true : undefined), `"${typed}" finds Zoë by ${what}`, 15_000);
  }
  const searches = await readsOf(adminPage);
  console.log(`reads of 5 searches finding 1 conversation each: search ${searches.search - before.search}, previews ${searches.preview - before.preview}, names ${searches.customer - before.customer}, markers ${searches.marker - before.marker}`);
  expect(searches.search - before.search).toBe(5); // one document each

  // A broad search: one page at most, and it says so.
  const beforeBroad = await readsOf(adminPage);
  await search.fill('customer number 1');
  await eventually(async () => ((await adminPage.locator('#list-status').textContent()) === 'The first 50 matches: type more to narrow the search.' ? true : undefined), 'a full page of matches');
  expect(await rows.count()).toBe(50);
  const titles = adminPage.locator('#conversation-list .title');
  await eventually(async () => ((await titles.allTextContents()).every((t) => /^Customer Number 1\d* \(cust-1\d*\)$/.test(t)) ? true : undefined), 'every match titled by its customer');
  const broad = await readsOf(adminPage);
  console.log(`reads of a search matching more than a page: search ${broad.search - beforeBroad.search}`);
  expect(broad.search - beforeBroad.search).toBe(50);
  await shot(adminPage, 'queue-search');

  await search.fill('nobody-like-this');
  await adminPage.getByText('No conversation matches “nobody-like-this”.').waitFor();
  await search.fill('');
  await eventually(async () => ((await rows.count()) === 50 ? true : undefined), 'the queue again');
});

test("the queue's pages ran under the console's Content-Security-Policy, and it refused nothing", () => {
  expectUnderCsp(browserLog);
});
