/**
 * The console after the send (edits, unsends, reactions, typing) in a real browser against the real local stack (helpers:
 * ./browser-helpers.ts). One workspace with an integration, its topic and a conversation (created
 * through the API), an admin and an operator on the Auth emulator. Replies are delivered through
 * the API as a connector does; what the service writes after the send (the edit and unsend
 * answers, `unsent`, the customers' edits, tombstones, reactions, typing) is seeded with the Admin
 * SDK where noted, so that the console's display is tested on exactly the documented shapes:
 *
 *   the admin sets `replies.lifecycle` in Integrations (stored exactly; a window out of bounds refused in the form;
 *      the open form keeps its draft when the card re-renders for a change elsewhere)
 *   -> Edit and Unsend show on a sent reply only: not on a queued one, not without the capability
 *      (it follows the integration live), not once unsent, and each disappears when its window
 *      passes (the browser's clock moved)
 *   -> Edit writes exactly `edit: { text, requestedAt, uid }`, Unsend (after its confirmation)
 *      `unsend: { requestedAt, uid }`, with the operator's own credentials; each one's progress is
 *      announced in the live region; a request the rules deny (membership withdrawn) says why
 *   -> the display: the latest sent edit with "edited" and the history (failed and unknown shown
 *      as such, and Edit offered again), "unsent" struck out, a failed unsend, reaction chips on both
 *      sides, a customer's edit with its history, a tombstone without content, and "typing…" for 8 s.
 */
import { randomUUID } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { FieldValue, Timestamp, type DocumentData } from 'firebase-admin/firestore';
import { adminDb, closeStack, postJson } from '../helpers/stack';
import { closePubSub, deliverFully, eventually, readReply, setupConversation, waitForMirror, type ConversationSetup } from '../helpers/deliveries';
import { announcements, consoleUrl, createUser, expectUnderCsp, launchChromium, newPage, recordAnnouncements, SCREENSHOTS, scrollTo, shot, shotOf, signIn, type TestUser } from './browser-helpers';

jest.setTimeout(180_000);

const admin: TestUser = { email: `admin-${randomUUID().slice(0, 8)}@after.test`, password: `pw-${randomUUID()}`, uid: '' };
const operator: TestUser = { email: `operator-${randomUUID().slice(0, 8)}@after.test`, password: `pw-${randomUUID()}`, uid: '' };
const browserLog: string[] = [];
let browser: Browser;
let setup: ConversationSetup;
let workspaceId = '';
let adminPage: Page;

const LIFECYCLE = { edit: { windowSeconds: 900 }, unsend: { windowSeconds: 3600 } };

const messagesCol = () => adminDb().collection(`workspaces/${workspaceId}/conversations/${setup.conversationId}/messages`);
const integrationDoc = () => adminDb().doc(`workspaces/${workspaceId}/integrations/${setup.integration.integrationId}`);
const replyItem = (page: Page, text: string, attrs = '') => page.locator(`li.message.outbound${attrs}`, { hasText: text });

/** An operator reply written as the console writes it, delivered through the API (claim, start, complete): `sent`. Returns its id and the service's `delivery.sentAt`. */
async function sentReply(text: string): Promise<{ id: string; sentAtMs: number }> {
  const ref = messagesCol().doc();
  await ref.create({ direction: 'outbound', author: { type: 'operator', uid: admin.uid }, text, createdAt: FieldValue.serverTimestamp() });
  const { deliveryId } = (await waitForMirror(setup, ref.id, (m) => m.status === 'queued')) as { deliveryId: string };
  await deliverFully(setup.integration.key, deliveryId, [`prov-${ref.id}`]);
  // The service adds `sentAt` to the mirror with the sent status: the windows run from it.
  const mirror = await waitForMirror(setup, ref.id, (m) => m.status === 'sent');
  expect(mirror.sentAt).toBeInstanceOf(Timestamp);
  return { id: ref.id, sentAtMs: (mirror.sentAt as Timestamp).toMillis() };
}

/** A customer message through the API; its message id. */
async function customerMessage(text: string): Promise<string> {
  const res = await postJson('/v1/messages', { eventId: randomUUID(), externalConversationId: setup.externalConversationId, sender: { externalId: setup.customerId, displayName: 'Grace Hopper' }, message: { text } }, { key: setup.integration.key });
  expect(res.status).toBe(201);
  return (res.body as { messageId: string }).messageId;
}

beforeAll(async () => {
  setup = await setupConversation();
  workspaceId = setup.integration.workspaceId;
  admin.uid = await createUser(admin.email, admin.password);
  operator.uid = await createUser(operator.email, operator.password);
  const ws = adminDb().collection('workspaces').doc(workspaceId);
  await ws.set({ name: 'After the send' }, { merge: true });
  await ws.collection('members').doc(admin.uid).set({ role: 'admin' });
  await ws.collection('members').doc(operator.uid).set({ role: 'operator' });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await setup?.topic.close();
  await closePubSub();
  await closeStack();
});

test('the admin sets edits and unsends with their windows: stored exactly; a window out of bounds is refused in the form', async () => {
  adminPage = await newPage(browser, browserLog);
  await signIn(adminPage, workspaceId, admin);
  await adminPage.locator('#whoami', { hasText: '(admin)' }).waitFor();
  await adminPage.goto(consoleUrl(workspaceId, '#/integrations'));
  const card = adminPage.locator(`[data-integration="${setup.integration.integrationId}"]`);
  await card.locator('.lifecycle-capability', { hasText: 'No edits or unsends after sending.' }).waitFor();
  await card.getByText('Allow edits or unsends').click();
  const form = card.getByRole('form', { name: `After the send of ${setup.integration.integrationId}` });
  await form.getByLabel('Edits', { exact: true }).check();
  await form.getByLabel('Edits: window in seconds').fill('30');
  // A change elsewhere on the integration re-renders its card: the open form keeps the admin's draft.
  await integrationDoc().update({ name: 'Renamed meanwhile' });
  await card.locator('h3', { hasText: 'Renamed meanwhile' }).waitFor();
  expect(await form.isVisible()).toBe(true);
  expect(await form.getByLabel('Edits', { exact: true }).isChecked()).toBe(true);
  expect(await form.getByLabel('Edits: window in seconds').inputValue()).toBe('30');
  await form.getByRole('button', { name: 'Save' }).click();
  await form.getByRole('alert').filter({ hasText: 'The edit window is a whole number of seconds from 60 (1 minute) to 604800 (7 days).' }).waitFor();
  expect((await integrationDoc().get()).get('replies.lifecycle')).toBeUndefined();

  await form.getByLabel('Edits: window in seconds').fill('900');
  await form.getByLabel('Unsends', { exact: true }).check();
  await form.getByLabel('Unsends: window in seconds').fill('3600');
  await form.getByRole('button', { name: 'Save' }).click();
  await card.locator('.lifecycle-capability[data-lifecycle="on"]', { hasText: 'Edits within 15 min of sending; unsends within 1 h.' }).waitFor();
  // The page shows its own write at once; the server has it once the rules accepted it.
  await expect(eventually(async () => (await integrationDoc().get()).get('replies.lifecycle') as unknown, 'the stored capability')).resolves.toEqual(LIFECYCLE);
  await card.locator('details.lifecycle-edit summary').click();
  await scrollTo(card.locator('section.lifecycle-settings'));
  await shot(adminPage, 'integrations-lifecycle');
});

test('Edit and Unsend show on sent replies only, follow the capability live and disappear when their windows pass', async () => {
  const sent = await sentReply('Your parcel left the depot this morning.');
  const queuedRef = messagesCol().doc();
  await queuedRef.create({ direction: 'outbound', author: { type: 'operator', uid: admin.uid }, text: 'Still waiting for the connector.', createdAt: FieldValue.serverTimestamp() });
  await waitForMirror(setup, queuedRef.id, (m) => m.status === 'queued');

  await adminPage.goto(consoleUrl(workspaceId, `#/conversations/${setup.conversationId}`));
  await adminPage.locator('#lifecycle-capability', { hasText: 'Edits within 15 min of sending; unsends within 1 h.' }).waitFor();
  const sentItem = replyItem(adminPage, 'Your parcel left', '[data-status="sent"]');
  await sentItem.getByRole('button', { name: 'Edit', exact: true }).waitFor();
  await sentItem.getByRole('button', { name: 'Unsend', exact: true }).waitFor();
  await expect(sentItem.getByRole('button', { name: 'Edit', exact: true }).getAttribute('aria-describedby')).resolves.toBe(`text-${sent.id}`);
  const queuedItem = replyItem(adminPage, 'Still waiting', '[data-status="queued"]');
  await queuedItem.waitFor();
  await expect(queuedItem.getByRole('button', { name: /^(Edit|Unsend)$/ }).count()).resolves.toBe(0);
  // The queued reply is recalled so that it holds nothing back.
  await queuedItem.getByRole('button', { name: 'Cancel send' }).click();
  await replyItem(adminPage, 'Still waiting', '[data-status="failed"]').waitFor();

  // The capability, live: unsends only, then none, then both again.
  await integrationDoc().update({ 'replies.lifecycle': { unsend: LIFECYCLE.unsend } });
  await sentItem.getByRole('button', { name: 'Edit', exact: true }).waitFor({ state: 'hidden' });
  await sentItem.getByRole('button', { name: 'Unsend', exact: true }).waitFor();
  await integrationDoc().update({ 'replies.lifecycle': FieldValue.delete() });
  await sentItem.getByRole('button', { name: 'Unsend', exact: true }).waitFor({ state: 'hidden' });
  await expect(adminPage.locator('#lifecycle-capability').textContent()).resolves.toBe('');
  await integrationDoc().update({ 'replies.lifecycle': LIFECYCLE });
  await sentItem.getByRole('button', { name: 'Edit', exact: true }).waitFor();

  // The windows, on a page of its own whose clock the test moves: Edit goes after 900 s, Unsend after 3600 s.
  const page = await newPage(browser, browserLog);
  await signIn(page, workspaceId, admin);
  await page.locator('#whoami').waitFor();
  await page.goto(consoleUrl(workspaceId, `#/conversations/${setup.conversationId}`));
  const item = replyItem(page, 'Your parcel left', '[data-status="sent"]');
  await item.getByRole('button', { name: 'Edit', exact: true }).waitFor();
  await page.clock.setFixedTime(sent.sentAtMs + 899_000);
  await page.waitForTimeout(1500);
  await expect(item.getByRole('button', { name: 'Edit', exact: true }).count()).resolves.toBe(1);
  await page.clock.setFixedTime(sent.sentAtMs + 901_000);
  await item.getByRole('button', { name: 'Edit', exact: true }).waitFor({ state: 'hidden' });
  await expect(item.getByRole('button', { name: 'Unsend', exact: true }).count()).resolves.toBe(1);
  await page.clock.setFixedTime(sent.sentAtMs + 3_601_000);
  await item.getByRole('button', { name: 'Unsend', exact: true }).waitFor({ state: 'hidden' });
  await page.context().close();

  // Once unsent (the service's `unsent`), neither is offered, and the text is struck out.
  const gone = await sentReply('This went to the wrong customer.');
  await messagesCol()
    .doc(gone.id)
    .update({ unsent: { at: Timestamp.now() }, unsends: [{ requestedAt: Timestamp.now(), deliveryId: 'd_seeded-unsend', status: 'sent', at: Timestamp.now() }] });
  const goneItem = replyItem(adminPage, 'This went to the wrong customer.', '[data-unsent="true"]');
  await goneItem.locator('del', { hasText: 'This went to the wrong customer.' }).waitFor();
  await goneItem.locator('.badge-unsent', { hasText: 'unsent' }).waitFor();
  await expect(goneItem.getByRole('button', { name: /^(Edit|Unsend)$/ }).count()).resolves.toBe(0);
});

/**
 * The connector's side of the latest request of `field` on the reply, once the service created its
 * delivery: claim, start and complete through the API (the provider's id). Returns the delivery id.
 */
async function deliverRequest(replyId: string, field: 'edits' | 'unsends'): Promise<string> {
  const deliveryId = await eventually(async () => {
    const entries = (await readReply(setup, replyId))?.[field] as Array<{ deliveryId?: string | null }> | undefined;
    return entries?.at(-1)?.deliveryId ?? undefined;
  }, `the service's ${field} entry of reply ${replyId}`, 30_000);
  await deliverFully(setup.integration.key, deliveryId, [`prov-${field}-${replyId}`]);
  return deliveryId;
}

test('Edit and Unsend write exactly the request with the member\'s uid; delivered, the reply shows "edited" and "unsent"; a request the rules deny says why', async () => {
  const page = await newPage(browser, browserLog);
  await signIn(page, workspaceId, operator);
  await page.locator('#whoami', { hasText: '(operator)' }).waitFor();
  await page.goto(consoleUrl(workspaceId, `#/conversations/${setup.conversationId}`));
  const item = replyItem(page, 'Your parcel left', '[data-status="sent"]');
  const replyId = (await item.getAttribute('data-message')) ?? '';
  await recordAnnouncements(page);
  const announced = (what: string, text: string) =>
    eventually(async () => ((await announcements(page)).some((a) => a.includes(what) && a.includes(text)) ? true : undefined), `"${what}" announced`);

  await item.getByRole('button', { name: 'Edit', exact: true }).click();
  const area = item.getByLabel('New text of the reply');
  await expect(area.inputValue()).resolves.toBe('Your parcel left the depot this morning.');
  await area.fill('Your parcel left the depot this afternoon.');
  await item.getByRole('button', { name: 'Save edit' }).click();
  await item.locator('.edit-pending').waitFor();
  // While the edit is pending, Edit is not offered again.
  await expect(item.getByRole('button', { name: 'Edit', exact: true }).count()).resolves.toBe(0);
  const requested = await eventually(async () => (await readReply(setup, replyId))?.edit as DocumentData | undefined, 'the edit request');
  expect(requested).toEqual({ text: 'Your parcel left the depot this afternoon.', requestedAt: expect.any(Timestamp), uid: operator.uid });
  // End to end: the service's edit delivery, delivered by the connector; the reply shows the new text, "edited".
  await deliverRequest(replyId, 'edits');
  const editedItem = replyItem(page, 'this afternoon', '[data-edited="true"]');
  await expect(editedItem.locator('p.text').textContent()).resolves.toBe('Your parcel left the depot this afternoon.');
  await editedItem.locator('.badge-edited').waitFor();
  await editedItem.getByRole('button', { name: 'Edit', exact: true }).waitFor();
  // Screen readers hear the edit's progress, which the reply's own status does not show.
  await announced('Your parcel left', ', edit: sent');

  const other = await sentReply('A second answer, to be taken back.');
  const otherItem = replyItem(page, 'A second answer', '[data-status="sent"]');
  await otherItem.getByRole('button', { name: 'Unsend', exact: true }).click();
  await otherItem.getByRole('button', { name: 'Keep it' }).click();
  await otherItem.getByRole('button', { name: 'Unsend', exact: true }).click();
  await otherItem.getByRole('button', { name: 'Unsend now' }).click();
  await otherItem.locator('.unsend-pending').waitFor();
  await expect(otherItem.getByRole('button', { name: /^(Edit|Unsend)$/ }).count()).resolves.toBe(0);
  const unsendRequest = await eventually(async () => (await readReply(setup, other.id))?.unsend as DocumentData | undefined, 'the unsend request');
  expect(unsendRequest).toEqual({ requestedAt: expect.any(Timestamp), uid: operator.uid });
  expect((await readReply(setup, other.id))?.edit).toBeUndefined();
  await deliverRequest(other.id, 'unsends');
  const unsentItem = replyItem(page, 'A second answer', '[data-unsent="true"]');
  await unsentItem.locator('del', { hasText: 'A second answer, to be taken back.' }).waitFor();
  await announced('A second answer', ', unsend: sent');
  await expect(unsentItem.getByRole('button', { name: /^(Edit|Unsend)$/ }).count()).resolves.toBe(0);

  // Denied: the operator's membership is withdrawn mid-session; the reply says why, nothing written.
  const third = await sentReply('A third answer.');
  const thirdItem = replyItem(page, 'A third answer.', '[data-status="sent"]');
  await thirdItem.getByRole('button', { name: 'Edit', exact: true }).waitFor();
  await adminDb().doc(`workspaces/${workspaceId}/members/${operator.uid}`).set({ role: 'former' });
  try {
    await thirdItem.getByRole('button', { name: 'Edit', exact: true }).click();
    await thirdItem.getByLabel('New text of the reply').fill('A third answer, corrected.');
    await thirdItem.getByRole('button', { name: 'Save edit' }).click();
    await thirdItem.getByRole('alert').filter({ hasText: 'Denied by the workspace rules' }).waitFor();
    expect((await readReply(setup, third.id))?.edit).toBeUndefined();
  } finally {
    await adminDb().doc(`workspaces/${workspaceId}/members/${operator.uid}`).set({ role: 'operator' });
  }
  await page.context().close();
});

test('the thread shows edits with their history, unsent and failed unsends, reactions, customers\' edits, tombstones and typing', async () => {
  // An operator reply edited twice: the first edit sent, the second failed (its text not shown as current).
  const reply = await sentReply('Thanks for waiting, we will refund you.');
  const t = (offsetMs: number) => Timestamp.fromMillis(reply.sentAtMs + offsetMs);
  await messagesCol()
    .doc(reply.id)
    .update({
      edits: [
        { text: 'Thanks for waiting, we have refunded you.', requestedAt: t(10_000), deliveryId: 'd_seeded-edit-1', status: 'sent', at: t(11_000) },
        { text: 'Thanks for waiting: refunded (EUR 42).', requestedAt: t(20_000), deliveryId: 'd_seeded-edit-2', status: 'failed', at: t(21_000), error: { outcome: 'failed', code: 'message_too_old' } },
      ],
      unsends: [{ requestedAt: t(30_000), deliveryId: null, status: 'failed', at: t(30_500), error: { outcome: 'failed', code: 'unsend_window_passed' } }],
      reactions: [
        // Emoji the test browser's fonts draw (it has no colour emoji font): the screenshot shows them.
        { emoji: '❤️', senderExternalId: setup.customerId, at: t(40_000) },
        { emoji: '☺️', senderExternalId: setup.customerId, at: t(41_000) },
        { emoji: '❤️', senderExternalId: 'cust-other', at: t(42_000) },
      ],
    });
  // Customer messages: one edited twice, one deleted (the service removes its text), one with a reaction.
  const editedId = await customerMessage('My order number is 1243');
  const deletedId = await customerMessage('Here is my card number 4111 ...');
  const reactedId = await customerMessage('Thank you!');
  const now = Timestamp.now();
  await messagesCol()
    .doc(editedId)
    .update({
      edits: [
        { text: 'My order number is 1234', at: now },
        { text: 'My order number is #1234', at: now },
      ],
    });
  // A tombstone as the service stores it: the text and images gone, only the time of the deletion.
  await messagesCol().doc(deletedId).update({ text: null, images: [], deleted: { at: now } });
  await messagesCol()
    .doc(reactedId)
    .update({ reactions: [{ emoji: '✔️', senderExternalId: setup.customerId, at: now }] });

  await adminPage.goto(consoleUrl(workspaceId, `#/conversations/${setup.conversationId}`));
  const item = replyItem(adminPage, 'we have refunded you', '[data-edited="true"]');
  await expect(item.locator('p.text').textContent()).resolves.toBe('Thanks for waiting, we have refunded you.');
  await item.locator('.badge-edited', { hasText: 'edited' }).waitFor();
  await item.locator('.edit-outcome', { hasText: 'latest edit failed (message_too_old)' }).waitFor();
  await item.locator('.unsend-outcome', { hasText: 'unsend failed (unsend_window_passed)' }).waitFor();
  // A failed request lets the member ask again.
  await item.getByRole('button', { name: 'Edit', exact: true }).waitFor();
  await item.getByRole('button', { name: 'Unsend', exact: true }).waitFor();
  // The history on demand: the original and each request with its status.
  const history = item.locator('details.edit-history');
  await expect(history.locator('li').count()).resolves.toBe(4);
  await expect(history.isVisible()).resolves.toBe(true);
  await expect(history.locator('ol').isVisible()).resolves.toBe(false);
  await history.locator('summary').click();
  await expect(history.locator('li[data-entry-status="original"]').textContent()).resolves.toContain('Thanks for waiting, we will refund you.');
  await expect(history.locator('li[data-entry-status="sent"]').textContent()).resolves.toContain('we have refunded you');
  await expect(history.locator('li[data-entry-status="failed"]').nth(0).textContent()).resolves.toContain('failed (message_too_old)');
  await expect(history.locator('li[data-entry-status="failed"]').nth(1).textContent()).resolves.toContain('unsend');
  // Reaction chips, grouped by emoji with counts.
  await expect(item.locator('.reaction[data-emoji="❤️"]').getAttribute('data-count')).resolves.toBe('2');
  await expect(item.locator('.reaction[data-emoji="☺️"]').getAttribute('data-count')).resolves.toBe('1');
  await expect(item.locator('.reaction').allTextContents()).resolves.toEqual(['❤️ 2', '☺️ 1']);

  const edited = adminPage.locator(`li.message.inbound[data-message="${editedId}"][data-edited="true"]`);
  await expect(edited.locator('p.text').textContent()).resolves.toBe('My order number is #1234');
  await edited.locator('summary').click();
  await expect(edited.locator('details.edit-history li').allTextContents()).resolves.toEqual([
    expect.stringContaining('My order number is 1243'),
    expect.stringContaining('My order number is 1234'),
    expect.stringContaining('My order number is #1234'),
  ]);
  const deleted = adminPage.locator(`li.message.inbound[data-message="${deletedId}"][data-deleted="true"]`);
  await deleted.locator('.tombstone', { hasText: 'deleted by the customer' }).waitFor();
  await expect(deleted.textContent()).resolves.not.toContain('4111');
  await expect(adminPage.locator(`li.message.inbound[data-message="${reactedId}"] .reaction[data-emoji="✔️"]`).getAttribute('data-count')).resolves.toBe('1');

  // Typing: shown while the latest typing event is under 8 s old (the browser's clock moved past it on a page of its own).
  const at = Timestamp.now();
  await adminDb()
    .doc(`workspaces/${workspaceId}/typing/${setup.conversationId}`)
    .set({ conversationId: setup.conversationId, integrationId: setup.integration.integrationId, senderExternalId: setup.customerId, displayName: 'Grace Hopper', at, expireAt: Timestamp.fromMillis(at.toMillis() + 60_000) });
  await adminPage.locator('#typing', { hasText: 'Grace Hopper is typing…' }).waitFor();
  if (SCREENSHOTS) {
    // The whole thread in one picture: a page tall enough for every message, the histories open.
    const tall = await newPage(browser, browserLog, await browser.newContext({ viewport: { width: 1280, height: 3400 } }));
    await signIn(tall, workspaceId, admin);
    await tall.locator('#whoami').waitFor();
    await tall.goto(consoleUrl(workspaceId, `#/conversations/${setup.conversationId}`));
    const refunded = replyItem(tall, 'we have refunded you');
    await refunded.locator('details.edit-history summary').click();
    await tall.locator(`li.message.inbound[data-message="${editedId}"] details.edit-history summary`).click();
    await adminDb().doc(`workspaces/${workspaceId}/typing/${setup.conversationId}`).update({ at: Timestamp.now() });
    await tall.locator('#typing', { hasText: 'is typing…' }).waitFor();
    await shotOf(tall.locator('.thread'), 'after-send-thread');
    await tall.context().close();
  }
  // The latest typing event (the screenshot above renews it).
  const typingAt = ((await adminDb().doc(`workspaces/${workspaceId}/typing/${setup.conversationId}`).get()).get('at') as Timestamp).toMillis();
  const page = await newPage(browser, browserLog);
  await signIn(page, workspaceId, admin);
  await page.locator('#whoami').waitFor();
  await page.clock.setFixedTime(typingAt + 2000);
  await page.goto(consoleUrl(workspaceId, `#/conversations/${setup.conversationId}`));
  await page.locator('#typing', { hasText: 'Grace Hopper is typing…' }).waitFor();
  await page.clock.setFixedTime(typingAt + 8500);
  await page.locator('#typing').waitFor({ state: 'hidden' });
  await page.context().close();
});

test("every view ran under the console's Content-Security-Policy, and it refused nothing", () => {
  expectUnderCsp(browserLog);
});
