/**
 * The console's Privacy view (docs/console.md#privacy) in a real browser against the real local
 * stack (helpers: ./browser-helpers.ts). One workspace with an integration whose customer wrote
 * through the API, an admin and an operator on the Auth emulator; steps in order:
 *
 *   the admin sets the retention period (and back to keep forever)
 *   -> erases the customer (integration + external id, then a preview of what it deletes and a
 *      confirmation): the audit shows done with the counts, and the connector "waiting since"
 *   -> the example connector (examples/connector: processErasures with its log purge) purges and
 *      acknowledges: the console shows "connector confirmed"
 *   -> from a conversation, erases its customer: "Erase this customer's data…" opens the erasure
 *      pre-filled, the preview counts the sole and shared conversations and the messages (the same
 *      numbers the job then reports), and the erasure runs to done
 *   -> a mistyped id is said to match nothing before anything runs, and no erasure document is written
 *   -> an address the desk started a conversation with and never reached (a second integration,
 *      with starts by email): the preview counts the start request and its conversation, and the
 *      erasure takes both
 *   -> the erase action is an admin's: an operator's thread of the same conversation has none
 *   -> exports another customer: done, with a download offered until the file expires; the admin
 *      downloads the JSON Lines file through the console and its lines are that customer's
 *   -> an operator sees no Privacy link and no controls, and the download function refuses their
 *      token (403 not_an_admin).
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { FieldValue } from 'firebase-admin/firestore';
import type { Browser, Page } from 'playwright-core';
import { ConnectorClient } from '../../../sdk/src/index.js';
import { adminDb, apiBaseUrl, closeStack, createTestIntegration, functionsUrl, integrationRef, type TestIntegration } from '../helpers/stack';
import { closePubSub, createTestTopic, eventually } from '../helpers/deliveries';
import { identity } from '../helpers/auth-emulator';
import { consoleUrl, createUser, expectUnderCsp, launchChromium, newPage, shot, signIn, type TestUser } from './browser-helpers';

jest.setTimeout(180_000);

const admin: TestUser = { email: `admin-${randomUUID().slice(0, 8)}@privacy.test`, password: `pw-${randomUUID()}`, uid: '' };
const operator: TestUser = { email: `operator-${randomUUID().slice(0, 8)}@privacy.test`, password: `pw-${randomUUID()}`, uid: '' };
const browserLog: string[] = [];
const customer = `customer-${randomUUID().slice(0, 8)}@example.test`;
let browser: Browser;
let integration: TestIntegration;
/** A second integration of the workspace, with replies and starts by email: its connector never sends them. */
let starting: TestIntegration;
let workspaceId = '';
let adminPage: Page;
/** The export the admin downloaded (the operator's refusal asks for the same file). */
let exportId = '';

/** A user's Firebase ID token from the Auth emulator (what the console holds after signing in). */
async function idTokenOf(user: TestUser): Promise<string> {
  return (await identity('accounts:signInWithPassword', { email: user.email, password: user.password, returnSecureToken: true })).idToken;
}

/** The parts of examples/connector/connector.js this test uses (the example is plain JS). */
interface ExampleModule {
  createMessageLog(): { add(entry: object): void; entries(): object[] };
  createReceiptStore(): object;
  purgeErasure(stores: { log: object; receipts: object }, erasure: object): { logEntries: number; receipts: number };
  startErasures(options: { client: ConnectorClient; purge: (erasure: object) => unknown; onEvent: (event: { type: string; erasureId?: string }) => void; intervalMs?: number }): {
    run(): Promise<void>;
    stop(): Promise<void>;
  };
}

const ws = () => adminDb().collection('workspaces').doc(workspaceId);
/** The test integration's name, as the console shows it. */
const integrationName = async (): Promise<string> => String((await ws().collection('integrations').doc(integration.integrationId).get()).get('name'));
/** Opens a console address in the signed-in page without reloading it (the router follows the hash). */
const openHash = (page: Page, hash: string) => page.evaluate(`location.hash = ${JSON.stringify(hash)}`);
/** The erasure documents requested for one external customer id (whatever the integration). */
const erasuresOf = async (externalCustomerId: string) => (await ws().collection('erasures').where('externalCustomerId', '==', externalCustomerId).get()).docs;

/** The stored retention document once it is `expected` (the page shows its own write before the server has it). */
const storedRetention = (expected: object | undefined) =>
  eventually(async () => {
    const data = (await ws().collection('settings').doc('retention').get()).data();
    return JSON.stringify(data) === JSON.stringify(expected) ? true : undefined;
  }, `retention stored as ${JSON.stringify(expected)}`);

beforeAll(async () => {
  integration = await createTestIntegration();
  workspaceId = integration.workspaceId;
  admin.uid = await createUser(admin.email, admin.password);
  operator.uid = await createUser(operator.email, operator.password);
  await ws().set({ name: 'Privacy test workspace' }, { merge: true });
  await ws().collection('members').doc(admin.uid).set({ role: 'admin' });
  await ws().collection('members').doc(operator.uid).set({ role: 'operator' });
  starting = await createTestIntegration({ workspaceId, topic: (await createTestTopic()).topicPath });
  await integrationRef(workspaceId, starting.integrationId).update({ conversations: { start: { addressKinds: ['email'] } } });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await closePubSub();
  await closeStack();
});

test('an admin sets the retention period, and back to keep forever', async () => {
  adminPage = await newPage(browser, browserLog);
  await signIn(adminPage, workspaceId, admin);
  await adminPage.getByRole('link', { name: 'Privacy' }).click();
  await adminPage.locator('[data-retention="forever"]').waitFor();

  await adminPage.getByLabel('Delete after').check();
  await adminPage.getByLabel('Days').fill('30');
  await adminPage.getByRole('button', { name: 'Save retention' }).click();
  await adminPage.locator('[data-retention="30"]', { hasText: 'Deleted after 30 days.' }).waitFor();
  await storedRetention({ days: 30 });

  // Out of range: refused in the form, nothing written.
  await adminPage.getByLabel('Days').fill('4000');
  await adminPage.getByRole('button', { name: 'Save retention' }).click();
  await adminPage.getByRole('alert').filter({ hasText: 'from 1 to 3650' }).waitFor();
  expect((await ws().collection('settings').doc('retention').get()).data()).toEqual({ days: 30 });

  await adminPage.getByLabel('Keep forever').check();
  await adminPage.getByRole('button', { name: 'Save retention' }).click();
  await adminPage.locator('[data-retention="forever"]').waitFor();
  await storedRetention(undefined);

  // Leave 90 days set for the screenshot.
  await adminPage.getByLabel('Delete after').check();
  await adminPage.getByLabel('Days').fill('90');
  await adminPage.getByRole('button', { name: 'Save retention' }).click();
  await adminPage.locator('[data-retention="90"]').waitFor();
});

test('an admin erases a customer from the console and sees it done with the counts; the example connector acknowledges and the console shows "connector confirmed"', async () => {
  const client = new ConnectorClient({ integrationKey: integration.key, baseUrl: apiBaseUrl(), timeoutMs: 20_000 });
  const chat = `chat-${randomUUID()}`;
  await client.messages.send({ externalConversationId: chat, sender: { externalId: customer, displayName: 'Erin' }, text: 'My phone number is 555-0100' });
  await client.messages.send({ externalConversationId: chat, sender: { externalId: customer }, text: 'Please delete my data' });

  await adminPage.getByLabel('Integration').selectOption(integration.integrationId);
  await adminPage.getByLabel('External customer id').fill(customer);
  await adminPage.getByRole('button', { name: 'Erase customer…' }).click();
  const dialog = adminPage.getByRole('alertdialog', { name: 'Erase this customer?' });
  await dialog.waitFor();
  await expect(dialog.textContent()).resolves.toContain(customer);
  await expect(dialog.locator('#erase-preview').textContent()).resolves.toBe(`This deletes 1 conversation and 2 messages of Erin (${customer}) on ${await integrationName()}.`);
  await shot(adminPage, 'privacy-erase-confirm', { fullPage: true });
  await dialog.getByRole('button', { name: 'Erase permanently' }).click();

  // The request is exactly what the rules accept; the service's audit follows live.
  const row = adminPage.locator('article.erasure', { hasText: customer });
  await adminPage.locator('article.erasure[data-status="done"]', { hasText: customer }).waitFor({ timeout: 60_000 });
  const erasures = await ws().collection('erasures').where('externalCustomerId', '==', customer).get();
  expect(erasures.size).toBe(1);
  const erasureId = erasures.docs[0]!.id;
  expect(erasures.docs[0]!.data()).toMatchObject({ integrationId: integration.integrationId, requestedBy: admin.uid, status: 'done' });
  const count = (kind: string) => row.locator(`[data-count="${kind}"] strong`).textContent();
  await expect(count('messages')).resolves.toBe('2');
  await expect(count('conversations')).resolves.toBe('1');
  await expect(count('deliveries')).resolves.toBe('0');
  await expect(row.locator('[data-field="connector"]').textContent()).resolves.toMatch(/^waiting .+ since /);
  await expect(row.locator('[data-field="finished"] time').getAttribute('datetime')).resolves.toBe(new Date(erasures.docs[0]!.get('finishedAt') as number).toISOString());
  await shot(adminPage, 'privacy-erasure-waiting', { fullPage: true });

  // The example connector's erasure loop: its log of the customer is purged, then it acknowledges.
  const example = (await import(join(resolve(__dirname, '..', '..', '..'), 'examples', 'connector', 'connector.js'))) as ExampleModule;
  const log = example.createMessageLog();
  const receipts = example.createReceiptStore();
  log.add({ direction: 'in', externalConversationId: chat, externalCustomerId: customer, text: 'My phone number is 555-0100' });
  const events: Array<{ type: string; erasureId?: string }> = [];
  const erasuresLoop = example.startErasures({ client, purge: (e) => example.purgeErasure({ log, receipts }, e), onEvent: (e) => events.push(e), intervalMs: 60_000 });
  try {
    await eventually(async () => (events.some((e) => e.type === 'erasure_purged' && e.erasureId === erasureId) ? true : undefined), 'the example connector acknowledged');
  } finally {
    await erasuresLoop.stop();
  }
  expect(log.entries()).toEqual([]);
  await row.locator('[data-field="connector"][data-confirmed="true"]', { hasText: 'connector confirmed' }).waitFor();
  await shot(adminPage, 'privacy', { fullPage: true });
  expect(browserLog.filter((line) => line.startsWith('pageerror'))).toEqual([]);
});

test("from a conversation, an admin opens the customer's erasure: the preview counts what it deletes, and the erasure runs to done with those numbers", async () => {
  const client = new ConnectorClient({ integrationKey: integration.key, baseUrl: apiBaseUrl(), timeoutMs: 20_000 });
  // A "/" and an "@" in the id: the erasure address must carry them encoded.
  const grace = `grace/${randomUUID().slice(0, 8)}@example.test`;
  const other = `linus-${randomUUID().slice(0, 8)}@example.test`;
  const alone = `chat-${randomUUID()}`;
  const shared = `chat-${randomUUID()}`;
  // Grace's own conversation: her 2 messages and a service alert (all 3 go with the conversation).
  const first = await client.messages.send({ externalConversationId: alone, sender: { externalId: grace, displayName: 'Grace Hopper' }, text: 'My address is 1 Navy Way' });
  await client.messages.send({ externalConversationId: alone, sender: { externalId: grace }, text: 'Please delete my data' });
  await client.messages.send({ externalConversationId: alone, sender: { externalId: 'monitor', kind: 'service' }, text: 'Payment provider reports a delay.' });
  // A conversation shared with another customer: only her 1 message goes, Linus's stays.
  const sharedSent = await client.messages.send({ externalConversationId: shared, sender: { externalId: other }, text: 'Hi, Linus here' });
  await client.messages.send({ externalConversationId: shared, sender: { externalId: grace }, text: 'Grace here too' });

  await openHash(adminPage, `#/conversations/${encodeURIComponent(first.conversationId)}`);
  await adminPage.locator('#messages').getByText('Please delete my data').waitFor();
  await adminPage.getByRole('link', { name: 'Erase this customer’s data…' }).click();

  const dialog = adminPage.getByRole('alertdialog', { name: 'Erase this customer?' });
  await dialog.waitFor();
  await expect(dialog.locator('#erase-preview').textContent()).resolves.toBe(
    `This deletes 1 conversation and 4 messages of Grace Hopper (${grace}) on ${await integrationName()}; 1 shared conversation keeps the other customers’ messages.`,
  );
  // Pre-filled with the conversation's integration and customer, and the confirmation has the focus.
  await expect(adminPage.getByLabel('Integration').inputValue()).resolves.toBe(integration.integrationId);
  await expect(adminPage.getByLabel('External customer id').inputValue()).resolves.toBe(grace);
  await expect(adminPage.evaluate<string | undefined>('document.activeElement?.id')).resolves.toBe('erase-confirm-button');
  // Nothing is written before the confirmation.
  expect(await erasuresOf(grace)).toEqual([]);
  await shot(adminPage, 'privacy-erase-preview', { fullPage: true });
  await dialog.getByRole('button', { name: 'Erase permanently' }).click();

  const row = adminPage.locator('article.erasure[data-status="done"]', { hasText: grace });
  await row.waitFor({ timeout: 60_000 });
  const erasures = await erasuresOf(grace);
  expect(erasures.map((d) => d.data())).toEqual([expect.objectContaining({ integrationId: integration.integrationId, externalCustomerId: grace, requestedBy: admin.uid, status: 'done' })]);
  // The job deleted what the preview said.
  expect(erasures[0]!.get('counts')).toMatchObject({ conversations: 1, messages: 4 });
  await expect(row.locator('[data-count="messages"] strong').textContent()).resolves.toBe('4');
  await expect(row.locator('[data-count="conversations"] strong').textContent()).resolves.toBe('1');
  // The shared conversation stays with Linus's message only.
  const left = await ws().collection('conversations').doc(sharedSent.conversationId).collection('messages').get();
  expect(left.docs.map((d) => d.get('text') as unknown)).toEqual(['Hi, Linus here']);
  expect(browserLog.filter((line) => line.startsWith('pageerror'))).toEqual([]);
});

test('a mistyped customer id is said to match nothing before anything runs, and no erasure document is written', async () => {
  const mistyped = `grace-${randomUUID().slice(0, 8)}@example.test`;
  await openHash(adminPage, '#/privacy');
  await adminPage.locator('#customer-request').waitFor();
  await adminPage.getByLabel('Integration').selectOption(integration.integrationId);
  await adminPage.getByLabel('External customer id').fill(mistyped);
  await adminPage.getByRole('button', { name: 'Erase customer…' }).click();
  await adminPage.getByRole('alert').filter({ hasText: `No customer ${mistyped} on ${await integrationName()}: nothing would be erased. Check the id.` }).waitFor();
  await expect(adminPage.getByRole('button', { name: 'Erase permanently' }).count()).resolves.toBe(0);
  await expect(adminPage.getByRole('alertdialog').count()).resolves.toBe(0);
  // The admin is back in the id to correct it.
  await expect(adminPage.evaluate<string | undefined>('document.activeElement?.id')).resolves.toBe('privacy-customer');
  await shot(adminPage, 'privacy-erase-nothing', { fullPage: true });
  expect(await erasuresOf(mistyped)).toEqual([]);
});

test('an address the desk started a conversation with, never reached: the preview counts the start and its conversation, and the erasure takes them', async () => {
  const address = `dee-${randomUUID().slice(0, 8)}@example.test`;
  const startId = `st_${randomUUID()}`;
  // What the console's New conversation writes; the service answers with the started conversation.
  await ws().collection('conversationStarts').doc(startId).set({ integrationId: starting.integrationId, uid: admin.uid, requestedAt: FieldValue.serverTimestamp(), to: { kind: 'email', value: address }, text: 'We tried to reach you' });
  const started = await eventually(async () => (await ws().collection('conversationStarts').doc(startId).get()).get('result.conversationId') as string | undefined, 'the start answered', 30_000);
  const startingName = String((await ws().collection('integrations').doc(starting.integrationId).get()).get('name'));

  await openHash(adminPage, '#/privacy');
  await adminPage.locator('#customer-request').waitFor();
  await adminPage.getByLabel('Integration').selectOption(starting.integrationId);
  await adminPage.getByLabel('External customer id').fill(address);
  await adminPage.getByRole('button', { name: 'Erase customer…' }).click();
  const dialog = adminPage.getByRole('alertdialog', { name: 'Erase this customer?' });
  await dialog.waitFor();
  await expect(dialog.locator('#erase-preview').textContent()).resolves.toBe(`This deletes 1 conversation and 1 message of ${address} on ${startingName}, and 1 request to start a conversation with that address.`);
  await dialog.getByRole('button', { name: 'Erase permanently' }).click();

  await adminPage.locator('article.erasure[data-status="done"]', { hasText: address }).waitFor({ timeout: 60_000 });
  expect((await erasuresOf(address)).map((e) => e.get('counts'))).toEqual([expect.objectContaining({ conversations: 1, messages: 1 })]);
  expect((await ws().collection('conversationStarts').doc(startId).get()).exists).toBe(false);
  expect((await ws().collection('conversations').doc(started).get()).exists).toBe(false);
});

test("the erase action is an admin's: an operator's thread of a conversation has none, and the erasure address shows them nothing to use", async () => {
  const client = new ConnectorClient({ integrationKey: integration.key, baseUrl: apiBaseUrl(), timeoutMs: 20_000 });
  const kept = `kept-${randomUUID().slice(0, 8)}@example.test`;
  const sent = await client.messages.send({ externalConversationId: `chat-${randomUUID()}`, sender: { externalId: kept }, text: 'Keep me' });
  const thread = `#/conversations/${encodeURIComponent(sent.conversationId)}`;
  // The admin's thread offers it (the same page the operator opens below)...
  await openHash(adminPage, thread);
  await adminPage.getByRole('link', { name: 'Erase this customer’s data…' }).waitFor();

  // ...the operator's does not, once the header has rendered the customer.
  const page = await newPage(browser, browserLog);
  await signIn(page, workspaceId, operator);
  await page.locator('#whoami', { hasText: '(operator)' }).waitFor();
  await openHash(page, thread);
  await page.locator('#messages').getByText('Keep me').waitFor();
  await page.locator('.thread p.muted', { hasText: `Customer ${kept}` }).waitFor();
  await expect(page.getByRole('link', { name: /erase/i }).count()).resolves.toBe(0);
  await expect(page.locator('#erase-customer').count()).resolves.toBe(0);
  // Typed by hand, the erasure address gives an operator only the admins-only notice.
  await openHash(page, `#/privacy/erase/${encodeURIComponent(integration.integrationId)}/${encodeURIComponent(kept)}`);
  await page.getByRole('status').filter({ hasText: 'Only workspace admins manage retention, erasures and exports.' }).waitFor();
  await expect(page.locator('#customer-request').count()).resolves.toBe(0);
  expect(await erasuresOf(kept)).toEqual([]);
  await page.close();
  // The admin goes back to Privacy for the export below.
  await openHash(adminPage, '#/privacy');
  await adminPage.locator('#customer-request').waitFor();
});

test('an admin exports a customer: done, and offered for download until it expires', async () => {
  const client = new ConnectorClient({ integrationKey: integration.key, baseUrl: apiBaseUrl(), timeoutMs: 20_000 });
  const exported = `export-${randomUUID().slice(0, 8)}@example.test`;
  const chat = `chat-${randomUUID()}`;
  await client.messages.send({ externalConversationId: chat, sender: { externalId: exported }, text: 'What do you know about me?' });

  await adminPage.getByLabel('Integration').selectOption(integration.integrationId);
  await adminPage.getByLabel('External customer id').fill(exported);
  await adminPage.getByRole('button', { name: 'Export customer' }).click();
  const row = adminPage.locator('article.export[data-status="done"]', { hasText: exported });
  await row.waitFor({ timeout: 60_000 });
  const stored = await ws().collection('exports').where('externalCustomerId', '==', exported).get();
  expect(stored.size).toBe(1);
  expect(stored.docs[0]!.data()).toMatchObject({ integrationId: integration.integrationId, requestedBy: admin.uid, status: 'done' });

  // Offered until the service's fileExpiresAt (7 days).
  await expect(row.getByRole('button', { name: 'Download (JSON Lines)' }).isVisible()).resolves.toBe(true);
  await expect(row.locator('[data-field="download"] time').getAttribute('datetime')).resolves.toBe(new Date(stored.docs[0]!.get('fileExpiresAt') as number).toISOString());
  await shot(adminPage, 'privacy-export', { fullPage: true });

  // The download: the console fetches the file with the admin's token and hands it to the browser.
  exportId = stored.docs[0]!.id;
  const [download] = await Promise.all([adminPage.waitForEvent('download'), row.getByRole('button', { name: 'Download (JSON Lines)' }).click()]);
  expect(download.suggestedFilename()).toBe(`export-${exportId}.jsonl`);
  const text = await readFile(await download.path(), 'utf8');
  expect(text.endsWith('\n')).toBe(true);
  const lines = text.trimEnd().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
  expect(lines.find((l) => l.type === 'customer')).toMatchObject({ externalId: exported });
  const messages = lines.filter((l) => l.type === 'message');
  expect(messages.map((m) => m.text)).toEqual(['What do you know about me?']);
  expect(messages[0]).toMatchObject({ direction: 'inbound', sender: { externalId: exported } });
  // Nothing of the customer erased before, nor of anyone else.
  expect(text).not.toContain(customer);
  expect(browserLog.filter((line) => line.startsWith('pageerror'))).toEqual([]);
});

test('an operator sees no Privacy link and none of the admin controls', async () => {
  const page = await newPage(browser, browserLog);
  await signIn(page, workspaceId, operator);
  await page.locator('#whoami', { hasText: '(operator)' }).waitFor();
  await expect(page.getByRole('link', { name: 'Privacy' }).count()).resolves.toBe(0);
  await page.goto(consoleUrl(workspaceId, '#/privacy'));
  await page.getByRole('status').filter({ hasText: 'Only workspace admins manage retention, erasures and exports.' }).waitFor();
  for (const control of ['#retention', '#customer-request', '#erasure-list', '#export-list']) await expect(page.locator(control).count()).resolves.toBe(0);
  await page.close();

  // Nor can an operator fetch the file the admin downloaded with their own token, as the console would.
  expect(exportId).not.toBe('');
  const res = await fetch(`${functionsUrl()}/downloadExport?${new URLSearchParams({ workspaceId, exportId }).toString()}`, { headers: { Authorization: `Bearer ${await idTokenOf(operator)}` } });
  expect(res.status).toBe(403);
  expect(await res.json()).toEqual({ error: { code: 'not_an_admin', message: expect.any(String) as string } });
});

test("every view ran under the console's Content-Security-Policy, and it refused nothing", () => {
  expectUnderCsp(browserLog);
});
