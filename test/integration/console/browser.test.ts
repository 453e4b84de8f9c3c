/**
 * The workspace console in a real browser (headless Chromium from Debian's `chromium` package,
 * driven by playwright-core) against the real local stack: Hosting serves /console/, the console
 * signs in on the Auth emulator and reads/writes Firestore with the client SDK under the real
 * firestore.rules, and a connector in this process (the SDK's processDelivery on the integration's
 * topic) delivers the replies. One workspace, steps in order:
 *
 *   admin signs in -> creates an integration, reads its key once (only the hash is stored)
 *   -> a message posted with the SDK appears live -> a reply reaches `sent`
 *   -> a reply fails, its code is shown, Resend gets it `sent`
 *   -> a conversation in every list shard appears in the list
 *   -> "Skip to content" in an open thread moves focus and keeps the route
 *   -> an operator sees integrations read-only and the rules deny its admin writes
 *   -> the admin ends a rotation overlap early and re-keys (the new key shown once)
 *   -> the keys are nowhere in plain text (Firestore, the browser console, the emulator log)
 *   -> 60 conversations, none of the 8 list shards full: "Load older" shows and reaches every one.
 *
 * CONSOLE_SCREENSHOTS=<dir> also saves the screenshots docs/screenshots/ holds. Recall before send
 * and integration health are recall-health.test.ts.
 * @long the console end to end in a browser (about 70 s)
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { initializeApp, deleteApp, type FirebaseApp } from 'firebase/app';
import { connectAuthEmulator, getAuth, signInWithEmailAndPassword } from 'firebase/auth';
import { connectFirestoreEmulator, doc, getFirestore, serverTimestamp, setDoc, terminate, updateDoc, collection } from 'firebase/firestore';
import type { DocumentReference } from 'firebase-admin/firestore';
import { ConnectorClient, ProviderPermanentError, type ProviderSendInput } from '../../../sdk/src/index.js';
import { adminDb, apiBaseUrl, closeStack, firestoreEmulatorHost, listDocPaths, projectId } from '../helpers/stack';
import { closePubSub, createTestTopic, eventually, sleep, type TestTopic } from '../helpers/deliveries';
import { png } from '../../unit/fixtures/image-bytes';
import { hashKey } from '../../../functions/src/integrations/keys';
import { CONVERSATION_LIST_SHARDS, conversationListShard, TOPIC_NAME_FORMAT } from '../../../functions/src/contract';
import { conversationIdFor } from '../../../functions/src/platform/ids';
import { authHost, createUser, expectUnderCsp, launchChromium, newPage as openPage, shot, signIn as signInTo } from './browser-helpers';

jest.setTimeout(180_000);

const workspaceId = `ws_console_${randomUUID().slice(0, 8)}`;
const admin = { email: `admin-${randomUUID().slice(0, 8)}@console.test`, password: `pw-${randomUUID()}`, uid: '' };
const operator = { email: `operator-${randomUUID().slice(0, 8)}@console.test`, password: `pw-${randomUUID()}`, uid: '' };

let browser: Browser;
let topic: TestTopic;
/** Every console message of every page, to check the key never reaches it. */
const browserLog: string[] = [];
let adminPage: Page;
let key = '';
/** The key after the console's re-key. */
let rekeyed = '';
let integrationId = '';
let conversationId = '';
const connector = { running: false, loop: Promise.resolve(), failedOnce: new Set<string>(), sent: 0, errors: [] as string[] };

async function newPage(context?: BrowserContext): Promise<Page> {
  return openPage(browser, browserLog, context);
}

async function signIn(page: Page, user: { email: string; password: string }): Promise<void> {
  await signInTo(page, workspaceId, user);
}

/** The connector: pulls notifications from the integration's topic and runs processDelivery. */
function startConnector(): void {
  const client = new ConnectorClient({ integrationKey: key, baseUrl: apiBaseUrl(), timeoutMs: 20_000 });
  const send = async ({ text }: ProviderSendInput) => {
    // A reply marked #fail-once is refused the first time (a permanent provider error).
    if (text.includes('#fail-once') && !connector.failedOnce.has(text)) {
      connector.failedOnce.add(text);
      throw new ProviderPermanentError('test provider: recipient blocked', { code: 'recipient_blocked' });
    }
    connector.sent += 1;
    return { providerMessageIds: [`prov-${connector.sent}`] };
  };
  connector.running = true;
  connector.loop = (async () => {
    while (connector.running) {
      for (const n of await topic.pull(1, 300)) {
        try {
          await client.processDelivery(n.deliveryId, send);
        } catch (err) {
          // A transient API error: the service notifies again (or the test times out, visibly).
          connector.errors.push(err instanceof Error ? err.message : String(err));
        }
      }
    }
  })();
}

beforeAll(async () => {
  admin.uid = await createUser(admin.email, admin.password);
  operator.uid = await createUser(operator.email, operator.password);
  const ws = adminDb().collection('workspaces').doc(workspaceId);
  await ws.set({ name: 'Console test workspace' });
  await ws.collection('members').doc(admin.uid).set({ role: 'admin' });
  await ws.collection('members').doc(operator.uid).set({ role: 'operator' });
  topic = await createTestTopic();
  browser = await launchChromium();
});

afterAll(async () => {
  connector.running = false;
  await connector.loop;
  await browser?.close();
  await topic?.close();
  await closePubSub();
  await closeStack();
});

test('an admin signs in, creates an integration and reads its key once; only its hash is stored', async () => {
  adminPage = await newPage();
  await adminPage.goto(`${apiBaseUrl()}/console/?workspace=${encodeURIComponent(workspaceId)}`);
  await expect(adminPage.getByLabel('Workspace').inputValue()).resolves.toBe(workspaceId);
  await shot(adminPage, 'sign-in');

  // A wrong password is refused with a reason.
  await adminPage.getByLabel('Email').fill(admin.email);
  await adminPage.getByLabel('Password').fill('wrong-password');
  await adminPage.getByRole('button', { name: 'Sign in' }).click();
  await adminPage.getByRole('alert').filter({ hasText: 'Wrong email or password' }).waitFor();

  await signIn(adminPage, admin);
  await adminPage.locator('#whoami', { hasText: `${admin.email} (admin)` }).waitFor();
  await adminPage.getByRole('link', { name: 'Integrations' }).click();
  await adminPage.getByText('No integrations yet').waitFor();

  await adminPage.getByLabel('Name').fill('Telegram bot');
  await adminPage.getByLabel('Replies topic (optional)').fill('not a topic');
  await adminPage.getByRole('button', { name: 'Create integration' }).click();
  // The console states the contract's topic-name rule, in the contract's words.
  await adminPage.getByRole('alert').filter({ hasText: `The topic must look like ${TOPIC_NAME_FORMAT}.` }).waitFor();
  await adminPage.getByLabel('Replies topic (optional)').fill(topic.topicPath);
  await adminPage.getByRole('button', { name: 'Create integration' }).click();

  key = (await adminPage.locator('#new-key').textContent()) ?? '';
  expect(key).toMatch(/^sdk_test_[A-Za-z0-9_-]{43}$/);
  await expect(adminPage.getByRole('button', { name: 'Copy key' }).isVisible()).resolves.toBe(true);

  // Only the hash reached Firestore, in exactly the contract's shape.
  const snaps = await adminDb().collection('workspaces').doc(workspaceId).collection('integrations').get();
  expect(snaps.size).toBe(1);
  const stored = snaps.docs[0]!;
  integrationId = stored.id;
  expect(stored.data()).toEqual({
    name: 'Telegram bot',
    active: true,
    sourceEnabled: true,
    keyHash: hashKey(key),
    keyPrefix: key.slice(0, 13),
    replies: expect.objectContaining({ enabled: true, topic: topic.topicPath }),
    createdAt: expect.anything(),
    createdBy: admin.uid,
  });

  // The service's topic check shows up live.
  const card = adminPage.locator(`[data-integration="${integrationId}"]`);
  await card.locator('.badge-topic-ok').waitFor();
  await expect(adminPage.getByRole('heading', { name: 'Key for “Telegram bot”' }).isVisible()).resolves.toBe(true);
  await shot(adminPage, 'integrations-key-once', { fullPage: true });

  // Shown once: "Done" removes it from the page, and a reload does not bring it back.
  await adminPage.getByRole('button', { name: 'Done, hide the key' }).click();
  await expect(adminPage.content()).resolves.not.toContain(key);
  await adminPage.reload();
  await card.waitFor();
  await expect(adminPage.content()).resolves.not.toContain(key);
  await expect(card.textContent()).resolves.toContain(key.slice(0, 13));
});

test('deactivate confirms in place (Keep it active writes nothing); deactivate and activate go through the rules and show live', async () => {
  const card = adminPage.locator(`[data-integration="${integrationId}"]`);
  const ref = adminDb().doc(`workspaces/${workspaceId}/integrations/${integrationId}`);
  // Deactivate confirms in place (its connector's calls are refused from then on): nothing is
  // written until "Deactivate now"; "Keep it active" backs out.
  await card.getByRole('button', { name: 'Deactivate', exact: true }).click();
  const confirmation = card.getByRole('group', { name: /^Deactivate / });
  await confirmation.getByText(/Its connector's calls are refused \(403 integration_inactive\)/).waitFor();
  await expect(adminPage.evaluate<string>('document.activeElement.textContent')).resolves.toBe('Deactivate now');
  await sleep(500);
  expect((await ref.get()).get('active')).toBe(true);
  await confirmation.getByRole('button', { name: 'Keep it active' }).click();
  await card.getByRole('button', { name: 'Deactivate', exact: true }).waitFor();
  await expect(adminPage.evaluate<string>('document.activeElement.textContent')).resolves.toBe('Deactivate');
  await expect(card.getByRole('group', { name: /^Deactivate / }).count()).resolves.toBe(0);
  expect((await ref.get()).get('active')).toBe(true);
  await card.getByRole('button', { name: 'Deactivate', exact: true }).click();
  await card.getByRole('button', { name: 'Deactivate now' }).click();
  await card.getByText('inactive', { exact: true }).waitFor();
  // The badge changes at once (the SDK's local view); the server has it once the write is acknowledged.
  await eventually(async () => ((await ref.get()).get('active') === false ? true : undefined), 'the deactivation in Firestore');
  await card.getByRole('button', { name: 'Activate' }).click();
  await card.getByText('active', { exact: true }).waitFor();
  await eventually(async () => ((await ref.get()).get('active') === true ? true : undefined), 'the activation in Firestore');
});

test('a message posted with the SDK appears live in the list and the thread', async () => {
  await adminPage.getByRole('link', { name: 'Conversations' }).click();
  await adminPage.getByText('No conversations yet').waitFor();

  const client = new ConnectorClient({ integrationKey: key, baseUrl: apiBaseUrl(), timeoutMs: 20_000 });
  const first = await client.messages.send({
    externalConversationId: 'chat-4711',
    sender: { externalId: 'customer-7', displayName: 'Ada Lovelace' },
    text: 'Hello! My order #1234 has not arrived yet.',
    images: [{ data: png(640, 480), contentType: 'image/png' }],
    metadata: { orderId: '1234', 'shop.region': 'eu-west' },
  });
  conversationId = first.conversationId;
  await client.messages.send({ externalConversationId: 'chat-4711', sender: { externalId: 'shop-monitor', displayName: 'Shop monitor', kind: 'service' }, text: 'Payment provider reports a delay.' });

  const entry = adminPage.locator(`[data-conversation="${conversationId}"]`);
  await entry.waitFor();
  await expect(entry.textContent()).resolves.toContain('chat-4711');
  await entry.click();
  const thread = adminPage.locator('#messages');
  await thread.getByText('Hello! My order #1234 has not arrived yet.').waitFor();
  await thread.locator('.message.alert', { hasText: 'Payment provider reports a delay.' }).getByText('Alert').waitFor();
  await thread.getByText('Image: image/png 640×480').waitFor();
  // The alert wrote last, yet the conversation's person stays the customer, in the list (once it
  // shows the alert's time) and in the thread's header.
  const conversation = (await adminDb().doc(`workspaces/${workspaceId}/conversations/${conversationId}`).get()).data() ?? {};
  expect(conversation.lastSenderExternalId).toBe('shop-monitor');
  const alertAt = (conversation.lastMessageAt as { toDate(): Date }).toDate().toISOString();
  await entry.locator(`time[datetime="${alertAt}"]`).waitFor();
  // Named by the display name the connector gave (the customer document), the external id beside it.
  // The integration by its name, not its id, in the row and in the thread's header.
  await entry.locator('.title', { hasText: 'Ada Lovelace (customer-7)' }).waitFor();
  await entry.locator('.where', { hasText: 'Telegram bot' }).waitFor();
  await adminPage.getByText(/^Customer Ada Lovelace \(customer-7\) · integration Telegram bot · last message /).waitFor();
  // The connector metadata the message carried, read-only under the header's "Details" (closed at first).
  const details = adminPage.locator('#conversation-details');
  await details.getByText('Details: connector metadata (2)').click();
  const metadata = details.locator('dl.conversation-metadata');
  await expect(metadata.locator('dt').allTextContents()).resolves.toEqual(['orderId', 'shop.region']);
  await expect(metadata.locator('dd').allTextContents()).resolves.toEqual(['1234', 'eu-west']);
  await expect(details.locator('input, textarea, button').count()).resolves.toBe(0);
});

test('a reply reaches sent through the connector, with its provider ids and attempt log', async () => {
  startConnector();
  const text = adminPage.getByLabel('Reply', { exact: true });
  await text.fill('Sorry about that ✓ it ships today.');
  await expect(adminPage.locator('#reply-counter').textContent()).resolves.toBe('34 / 10000');
  await adminPage.getByRole('button', { name: 'Send reply' }).click();
  const reply = adminPage.locator('li.message.outbound', { hasText: 'it ships today' });
  await adminPage.locator('li.message.outbound[data-status="sent"]', { hasText: 'it ships today' }).waitFor();
  // The provider and trace ids are behind "Details" (a developer's lookup, not the operator's reading).
  await expect(reply.getByText(/provider ids prov-\d+/).isVisible()).resolves.toBe(false);
  await reply.locator('details.delivery-ids > summary', { hasText: 'Details' }).click();
  await reply.getByText(/provider ids prov-\d+/).waitFor();
  await reply.getByText(/^trace [0-9a-f]{32}$/).waitFor();
  await reply.getByText('Attempt log (3)').click();
  await reply.getByText('claimed').waitFor();
  await expect(text.inputValue()).resolves.toBe('');
  // The limit is in code points, as the rules count: 10000 emoji (20000 UTF-16 units) may be sent, 10001 not.
  await text.fill('😀'.repeat(10000));
  await expect(adminPage.locator('#reply-counter').textContent()).resolves.toBe('10000 / 10000');
  await expect(adminPage.getByRole('button', { name: 'Send reply' }).isEnabled()).resolves.toBe(true);
  await text.fill('😀'.repeat(10001));
  await expect(adminPage.getByRole('button', { name: 'Send reply' }).isDisabled()).resolves.toBe(true);
  await text.fill('');
});

test('a failed reply shows its code; Resend gets it sent and keeps the failure as "before the resend"', async () => {
  await adminPage.getByLabel('Reply', { exact: true }).fill('Could you confirm your address? #fail-once');
  await adminPage.getByLabel('Reply', { exact: true }).press('Control+Enter');
  const reply = adminPage.locator('li.message.outbound', { hasText: 'confirm your address' });
  await adminPage.locator('li.message.outbound[data-status="failed"]', { hasText: 'confirm your address' }).waitFor();
  await reply.getByText('recipient_blocked').first().waitFor();
  await reply.getByText(/Attempt log/).click();
  await shot(adminPage, 'reply-failed');
  await reply.getByRole('button', { name: 'Resend' }).click();
  await adminPage.locator('li.message.outbound[data-status="sent"]', { hasText: 'confirm your address' }).waitFor();
  await reply.getByText('Before the resend: failed').waitFor();
  await expect(reply.getByRole('button', { name: 'Resend' }).count()).resolves.toBe(0);
  await shot(adminPage, 'conversations');

  // Phone width: the thread alone, with a way back to the list.
  const phone = await newPage(await browser.newContext({ viewport: { width: 375, height: 812 }, deviceScaleFactor: 2 }));
  await signIn(phone, admin);
  await phone.locator('#whoami').waitFor();
  await phone.goto(`${apiBaseUrl()}/console/?workspace=${encodeURIComponent(workspaceId)}#/conversations/${conversationId}`);
  await phone.locator('li.message.outbound[data-status="sent"]', { hasText: 'confirm your address' }).waitFor();
  await expect(phone.getByRole('link', { name: '← All conversations' }).isVisible()).resolves.toBe(true);
  // Evaluated in the page (a string: this file is type-checked without the DOM library).
  const overflow = await phone.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
  expect(overflow).toBeLessThanOrEqual(0);
  await shot(phone, 'conversations-phone');
  await phone.context().close();
});

test('the list shows a conversation in every list shard the service writes (the last one included)', async () => {
  // One conversation per conversation-list shard: the service writes `listShard` with the
  // contract's count, and the console must read every shard below it.
  const client = new ConnectorClient({ integrationKey: key, baseUrl: apiBaseUrl(), timeoutMs: 20_000 });
  const byShard = new Map<number, { externalId: string; conversationId: string }>();
  for (let i = 0; byShard.size < CONVERSATION_LIST_SHARDS; i++) {
    const externalId = `chat-shard-${i}`;
    const id = conversationIdFor(integrationId, externalId);
    const shard = conversationListShard(id);
    if (!byShard.has(shard)) byShard.set(shard, { externalId, conversationId: id });
  }
  for (const { externalId } of byShard.values()) {
    await client.messages.send({ externalConversationId: externalId, sender: { externalId: 'customer-9' }, text: `Hello from ${externalId}` });
  }
  for (const [shard, { conversationId: id }] of byShard) {
    expect((await adminDb().doc(`workspaces/${workspaceId}/conversations/${id}`).get()).get('listShard')).toBe(shard);
  }
  await adminPage.getByRole('link', { name: 'Conversations' }).click();
  for (const { conversationId: id, externalId } of byShard.values()) {
    const entry = adminPage.locator(`[data-conversation="${id}"]`);
    await entry.waitFor();
    await expect(entry.textContent()).resolves.toContain(externalId);
  }
});

test('"Skip to content" in an open thread moves focus to the content and keeps the thread open', async () => {
  await adminPage.goto(`${apiBaseUrl()}/console/#/conversations/${encodeURIComponent(conversationId)}`);
  await adminPage.locator('#messages').getByText('Hello! My order #1234 has not arrived yet.').waitFor();
  const route = await adminPage.evaluate<string>('location.hash');
  // Evaluated in the page (strings: this file is type-checked without the DOM library).
  await adminPage.evaluate('document.activeElement && document.activeElement.blur && document.activeElement.blur()');
  await adminPage.keyboard.press('Tab');
  await expect(adminPage.evaluate<string>('document.activeElement.textContent')).resolves.toBe('Skip to content');
  await adminPage.keyboard.press('Enter');
  await expect(adminPage.evaluate<string>('document.activeElement.id')).resolves.toBe('main');
  await expect(adminPage.evaluate<string>('location.hash')).resolves.toBe(route);
  await adminPage.locator('#messages').getByText('Hello! My order #1234 has not arrived yet.').waitFor();
});

test('a thread with images stays at its newest message as they load; scrolled up, a new message says "New messages below"', async () => {
  const client = new ConnectorClient({ integrationKey: key, baseUrl: apiBaseUrl(), timeoutMs: 20_000 });
  let id = '';
  for (let i = 0; i < 5; i++) {
    const sent = await client.messages.send({ externalConversationId: 'chat-gallery', sender: { externalId: 'customer-gallery' }, text: `Photo ${i + 1} of the damage`, images: [{ data: png(640, 480), contentType: 'image/png' }] });
    id = sent.conversationId;
  }
  const last = await client.messages.send({ externalConversationId: 'chat-gallery', sender: { externalId: 'customer-gallery' }, text: 'That is all the photos.' });
  await adminPage.goto(`${apiBaseUrl()}/console/#/conversations/${encodeURIComponent(id)}`);
  const thread = adminPage.locator('#messages');
  await thread.getByText('That is all the photos.').waitFor();
  // Five requests at once to the media endpoint: the emulator may start a worker process for each
  // (one request per process), which took over 15 s on a loaded machine.
  await eventually(async () => ((await thread.locator('figure.media[data-loaded="true"] img').count()) === 5 ? true : undefined), 'the 5 thumbnails loaded', 45_000);
  // Evaluated in the page (strings: this file is type-checked without the DOM library).
  const gap = 'const m = document.getElementById("messages"); m.scrollHeight - m.scrollTop - m.clientHeight';
  await expect(adminPage.evaluate<number>('document.getElementById("messages").scrollHeight > document.getElementById("messages").clientHeight')).resolves.toBe(true);
  await eventually(async () => ((await adminPage.evaluate<number>(gap)) < 40 ? true : undefined), 'the thread at its newest message after the images loaded', 5_000);
  await expect(thread.locator(`li[data-message="${last.messageId}"]`).isVisible()).resolves.toBe(true);

  // Scrolled up: a new message leaves the reader where they are and says so.
  await adminPage.evaluate('document.getElementById("messages").scrollTop = 0');
  await client.messages.send({ externalConversationId: 'chat-gallery', sender: { externalId: 'customer-gallery' }, text: 'One more thing.' });
  await thread.getByText('One more thing.').waitFor({ state: 'attached' });
  const below = adminPage.getByRole('button', { name: 'New messages below' });
  await below.waitFor();
  await expect(adminPage.evaluate<number>('document.getElementById("messages").scrollTop')).resolves.toBeLessThan(40);
  await below.click();
  await eventually(async () => ((await adminPage.evaluate<number>(gap)) < 40 ? true : undefined), 'the thread at its newest message after "New messages below"', 5_000);
  await below.waitFor({ state: 'hidden' });
});

test('an operator sees integrations read-only, and the rules deny its admin writes', async () => {
  // What the connector declared of its channel (PUT /v1/channel) is on the card, read-only.
  const client = new ConnectorClient({ integrationKey: key, baseUrl: apiBaseUrl(), timeoutMs: 20_000 });
  await client.channel.update({ window: { seconds: 86_400 }, templates: [{ name: 'order_update', language: 'en-US', params: [{ name: 'order' }], preview: 'Your order {{order}} has shipped.' }] });
  const page = await newPage();
  await signIn(page, operator);
  await page.locator('#whoami', { hasText: '(operator)' }).waitFor();
  await page.getByRole('link', { name: 'Integrations' }).click();
  const card = page.locator(`[data-integration="${integrationId}"]`);
  await card.waitFor();
  await page.getByText('only workspace admins can create, deactivate or re-key integrations').waitFor();
  const channel = card.locator('section.channel');
  await channel.getByText("Free-text replies within 1 day of the customer's latest message.").waitFor();
  await expect(channel.locator('[data-template="order_update/en-US"]').innerText()).resolves.toMatch(/order_update\s+en-US\s+Your order \{\{order\}\} has shipped\./);
  await expect(page.locator('#create-integration').count()).resolves.toBe(0);
  await expect(card.getByRole('button').count()).resolves.toBe(0);

  // The same writes with the operator's own credentials (client SDK, real rules) are denied.
  const app: FirebaseApp = initializeApp({ projectId: projectId(), apiKey: 'fake-api-key' }, `operator-${randomUUID()}`);
  try {
    const auth = getAuth(app);
    connectAuthEmulator(auth, `http://${authHost()}`, { disableWarnings: true });
    const [host, port] = firestoreEmulatorHost().split(':');
    const db = getFirestore(app);
    connectFirestoreEmulator(db, host ?? '127.0.0.1', Number(port));
    await signInWithEmailAndPassword(auth, operator.email, operator.password);
    const ref = doc(db, 'workspaces', workspaceId, 'integrations', integrationId);
    await expect(updateDoc(ref, { active: false, updatedAt: serverTimestamp() })).rejects.toMatchObject({ code: 'permission-denied' });
    await expect(updateDoc(ref, { keyHash: 'a'.repeat(64), keyPrefix: 'sdk_test_abcd' })).rejects.toMatchObject({ code: 'permission-denied' });
    const fresh = doc(collection(db, 'workspaces', workspaceId, 'integrations'));
    await expect(
      setDoc(fresh, { name: 'x', active: true, sourceEnabled: true, keyHash: 'b'.repeat(64), keyPrefix: 'sdk_test_abcd', replies: { enabled: false, topic: null }, createdAt: serverTimestamp(), createdBy: operator.uid }),
    ).rejects.toMatchObject({ code: 'permission-denied' });
    await terminate(db);
  } finally {
    await deleteApp(app);
  }
  expect((await adminDb().doc(`workspaces/${workspaceId}/integrations/${integrationId}`).get()).get('active')).toBe(true);

  // A denied write in the console says why: the operator's membership is withdrawn mid-session.
  await page.getByRole('link', { name: 'Conversations' }).click();
  await page.locator(`[data-conversation="${conversationId}"]`).click();
  await page.locator('#messages').getByText('it ships today').waitFor();
  await adminDb().doc(`workspaces/${workspaceId}/members/${operator.uid}`).set({ role: 'former' });
  try {
    await page.getByLabel('Reply', { exact: true }).fill('Am I still allowed?');
    await page.getByRole('button', { name: 'Send reply' }).click();
    await page.locator('#compose-error').getByRole('alert').filter({ hasText: 'Denied by the workspace rules' }).waitFor();
  } finally {
    await adminDb().doc(`workspaces/${workspaceId}/members/${operator.uid}`).set({ role: 'operator' });
  }
  await page.context().close();
});

test('an admin ends a CLI rotation overlap early and re-keys (no overlap); the new key is shown once', async () => {
  const ref = adminDb().doc(`workspaces/${workspaceId}/integrations/${integrationId}`);
  // What the CLI's rotate --overlap-hours leaves behind (Admin SDK, as functions/src/integrations/admin.ts).
  await ref.update({ previousKey: { hash: 'c'.repeat(64), prefix: 'sdk_test_prev', expiresAt: Date.now() + 3_600_000 } });
  await adminPage.getByRole('link', { name: 'Integrations' }).click();
  const card = adminPage.locator(`[data-integration="${integrationId}"]`);
  await card.getByText('Previous key').waitFor();
  await card.getByRole('button', { name: 'End overlap now' }).click();
  await eventually(async () => ((await ref.get()).get('previousKey') === undefined ? true : undefined), 'previousKey removed');
  await expect(card.getByText('Previous key').count()).resolves.toBe(0);

  adminPage.once('dialog', (dialog) => void dialog.accept());
  await card.getByRole('button', { name: 'Re-key' }).click();
  await adminPage.getByRole('heading', { name: 'New key for “Telegram bot”' }).waitFor();
  rekeyed = (await adminPage.locator('#new-key').textContent()) ?? '';
  expect(rekeyed).toMatch(/^sdk_test_[A-Za-z0-9_-]{43}$/);
  expect(rekeyed).not.toBe(key);
  await eventually(async () => ((await ref.get()).get('keyHash') === hashKey(rekeyed) ? true : undefined), 'the new key hash');
  expect((await ref.get()).get('keyPrefix')).toBe(rekeyed.slice(0, 13));
  await adminPage.getByRole('button', { name: 'Done, hide the key' }).click();
  await expect(adminPage.content()).resolves.not.toContain(rekeyed);
});

/** The workspace's document and every document under it, at any depth, with their data. */
async function allDocuments(root: DocumentReference): Promise<Array<{ path: string; data: unknown }>> {
  const snaps = await adminDb().getAll(root, ...(await listDocPaths(root)).map((path) => adminDb().doc(path)));
  return snaps.filter((snap) => snap.exists).map((snap) => ({ path: snap.ref.path, data: snap.data() }));
}

test('the key is never stored or logged in plain text by the console', async () => {
  expect(key).not.toBe('');
  expect(rekeyed).not.toBe('');
  const secrets = [key, rekeyed].map((k) => k.slice('sdk_test_'.length));
  const docs = await allDocuments(adminDb().collection('workspaces').doc(workspaceId));
  expect(docs.length).toBeGreaterThan(5);
  for (const d of docs) for (const secret of secrets) expect(JSON.stringify(d.data)).not.toContain(secret);
  expect(JSON.stringify(docs)).toContain(hashKey(rekeyed));

  for (const secret of secrets) expect(browserLog.join('\n')).not.toContain(secret);
  const logFile = process.env.EMULATOR_LOG_FILE;
  if (!logFile) throw new Error('EMULATOR_LOG_FILE is not set (npm test sets it)');
  await sleep(500); // let the log stream catch up
  const log = readFileSync(logFile, 'utf8');
  expect(log.length).toBeGreaterThan(0);
  for (const secret of secrets) expect(log).not.toContain(secret);
});

test('more conversations than a page, spread over the shards so that none is full: "Load older" reaches every one', async () => {
  // The list shows the 50 most recent; with 60 or so over 8 shards no shard returns a full window,
  // and the button used to stay hidden, leaving the oldest reachable only by URL.
  const client = new ConnectorClient({ integrationKey: rekeyed, baseUrl: apiBaseUrl(), timeoutMs: 20_000 });
  const conversations = adminDb().collection('workspaces').doc(workspaceId).collection('conversations');
  const existing = (await conversations.count().get()).data().count;
  const total = 60;
  for (let i = existing; i < total; i++) {
    await client.messages.send({ externalConversationId: `chat-page-${i}`, sender: { externalId: `customer-page-${i}` }, text: `Hello ${i}` });
  }
  const ids = (await conversations.get()).docs.map((d) => d.id);
  expect(ids).toHaveLength(total);
  const perShard = new Map<number, number>();
  for (const id of ids) perShard.set(conversationListShard(id), (perShard.get(conversationListShard(id)) ?? 0) + 1);
  expect(Math.max(...perShard.values())).toBeLessThan(50);

  await adminPage.getByRole('link', { name: 'Conversations' }).click();
  const rows = adminPage.locator('#conversation-list [data-conversation]');
  await eventually(async () => ((await rows.count()) === 50 ? true : undefined), 'the first page of 50 conversations', 20_000);
  const older = adminPage.locator('#load-older-conversations');
  await older.waitFor({ state: 'visible' });
  await older.click();
  await eventually(async () => ((await rows.count()) === total ? true : undefined), `all ${total} conversations after "Load older"`, 20_000);
  const shown = new Set<string | null>();
  for (let i = 0; i < total; i++) shown.add(await rows.nth(i).getAttribute('data-conversation'));
  expect(shown).toEqual(new Set(ids));
  // Waited for, not read once: the rows can render a moment before the button is hidden.
  await older.waitFor({ state: 'hidden', timeout: 20_000 });

  // The oldest, at the bottom of the long list: its thread opens in view with its composer (the
  // thread pane used to sit at the top of the page, thousands of pixels above the row clicked).
  // Found by its id, and clicked (which scrolls it into view) with Playwright's retries: a live
  // update re-renders the list, and a row found by position was once detached mid-scroll.
  const oldestId = await rows.nth(total - 1).getAttribute('data-conversation');
  const oldest = adminPage.locator(`#conversation-list [data-conversation="${oldestId}"]`);
  await oldest.click();
  const composer = adminPage.getByLabel('Reply', { exact: true });
  await composer.waitFor();
  const viewportHeight = await adminPage.evaluate<number>('window.innerHeight');
  for (const [what, box] of [['the composer', await composer.boundingBox()], ['the thread title', await adminPage.locator('#thread-title').boundingBox()]] as const) {
    expect({ what, top: (box?.y ?? -1) >= 0, bottom: (box?.y ?? Infinity) + (box?.height ?? 0) <= viewportHeight }).toEqual({ what, top: true, bottom: true });
  }
  await shot(adminPage, 'conversations-long-list');
});

test("every view ran under the console's Content-Security-Policy, and it refused nothing", () => {
  // Sign-in, conversations (list, thread, compose, resend), integrations (admin and operator), re-key, phone layout.
  expectUnderCsp(browserLog);
});
