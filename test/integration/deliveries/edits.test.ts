/**
 * Edits and unsends of sent replies (docs/contract.md#edits-and-unsends) through the real reply
 * trigger, outbox, Pub/Sub and HTTP: the console's `edit` / `unsend` request on a sent reply (as
 * firestore.rules allow it: console/lifecycle-rules.test.ts) becomes a delivery of that kind at the
 * end of the conversation's queue, notified with the attribute `kind`, claimed with `kind` and
 * `target`, and mirrored in the reply's `edits` / `unsends` (never in its `delivery`); `unsent` once
 * an unsend is sent. Requests the service refuses (written with the Admin SDK, past the rules)
 * get a failed history entry and no delivery.
 */
import { randomUUID } from 'node:crypto';
import { FieldValue, Timestamp, type DocumentData } from 'firebase-admin/firestore';
import { requestLifecycle } from '../../../functions/src/deliveries/lifecycle';
import { adminDb, integrationRef } from '../helpers/stack';
import { attributeLog, claimReady, conversationDeliveries, type ConversationSetup, deliverFully, deliveryDoc, deliveryDocRef, eventually, expectOk, expectSent, expectSkip, fileFixture, op, type Published, readReply, type Reply, replyAndNotify, setupConversation, waitForMirror, waitForNotifications } from '../helpers/deliveries';

const EDIT_WINDOW_S = 900;
const UNSEND_WINDOW_S = 3600;

const fixture = fileFixture(async (file) => {
  // One integration with the capability (its topic is tracked by ownConversation) ...
  const first = await file.ownConversation();
  await integrationRef(first.integration.workspaceId, first.integration.integrationId).update({
    'replies.lifecycle': { edit: { windowSeconds: EDIT_WINDOW_S }, unsend: { windowSeconds: UNSEND_WINDOW_S } },
  });
  const published = file.track(await attributeLog(first.topic.topicPath));
  // ... and one without (a v1 connector).
  const plain = await file.ownConversation();
  return { first, published, plain };
});

/** A new conversation in the integration with the capability. */
const conversation = (): Promise<ConversationSetup> => setupConversation({ topic: fixture().first.topic, integration: fixture().first.integration });

const replyRef = (setup: ConversationSetup, messageId: string) =>
  adminDb().collection('workspaces').doc(setup.integration.workspaceId).collection('conversations').doc(setup.conversationId).collection('messages').doc(messageId);

/** What the console writes for an edit (firestore.rules: exactly this, on a sent reply). */
async function requestEdit(setup: ConversationSetup, messageId: string, text: string, uid = 'operator-1'): Promise<void> {
  await replyRef(setup, messageId).update({ edit: { text, requestedAt: FieldValue.serverTimestamp(), uid } });
}

async function requestUnsend(setup: ConversationSetup, messageId: string, uid = 'operator-1'): Promise<void> {
  await replyRef(setup, messageId).update({ unsend: { requestedAt: FieldValue.serverTimestamp(), uid } });
}

/** The reply's `edits` / `unsends` once `predicate` holds. */
function waitForHistory(setup: ConversationSetup, messageId: string, field: 'edits' | 'unsends', predicate: (entries: DocumentData[]) => boolean, what: string): Promise<DocumentData[]> {
  return eventually(async () => {
    const entries = ((await readReply(setup, messageId))?.[field] ?? []) as DocumentData[];
    return predicate(entries) ? entries : undefined;
  }, `${what} (${field} of ${messageId})`, 20_000);
}

/** A reply claimed, started and completed with these provider ids (and parts, when given); returns it with its sent mirror. */
async function sentReply(setup: ConversationSetup, text: string, providerMessageIds: string[], parts?: unknown[]): Promise<Reply & { mirror: DocumentData }> {
  const reply = await replyAndNotify(setup, text);
  const claim = await claimReady(setup.integration.key, reply.deliveryId);
  expectOk(await op('start', setup.integration.key, { deliveryId: reply.deliveryId, leaseId: claim.leaseId }), { status: 'sending' });
  expectSent(await op('complete', setup.integration.key, { deliveryId: reply.deliveryId, leaseId: claim.leaseId, providerMessageIds, ...(parts ? { parts } : {}) }), reply.deliveryId);
  const mirror = await waitForMirror(setup, reply.messageId, (m) => m.status === 'sent');
  return { ...reply, mirror };
}

/** The published notifications of a delivery (waits for `count`). */
function publishedFor(deliveryId: string, count = 1): Promise<Published[]> {
  return eventually(async () => {
    const found = fixture().published.seen.get(deliveryId) ?? [];
    return found.length >= count ? found : undefined;
  }, `${count} published notification(s) of ${deliveryId}`, 20_000);
}

test('edit end to end: a plain claim keeps its v1 shape; the edit is its own delivery with kind and target, notified with attribute kind; the history follows it; the reply and its delivery mirror stay', async () => {
  const setup = await conversation();
  const key = setup.integration.key;
  const reply = await replyAndNotify(setup, 'We are on it!');

  // The reply's own claim and notification: exactly as before edits existed.
  const claimRes = await op('claim', key, { deliveryId: reply.deliveryId, requestId: randomUUID() });
  const plainClaim = claimRes.body as { leaseId: string; leaseExpiresAt: number };
  expect(claimRes.body).toEqual({
    status: 'ready',
    leaseId: plainClaim.leaseId,
    leaseExpiresAt: plainClaim.leaseExpiresAt,
    message: { text: 'We are on it!', recipient: { externalConversationId: setup.externalConversationId, externalCustomerId: setup.customerId } },
  });
  const [replyNotification] = await publishedFor(reply.deliveryId);
  expect(replyNotification?.attributes).not.toHaveProperty('kind');
  expectOk(await op('start', key, { deliveryId: reply.deliveryId, leaseId: plainClaim.leaseId }), { status: 'sending' });
  expectSent(await op('complete', key, { deliveryId: reply.deliveryId, leaseId: plainClaim.leaseId, providerMessageIds: ['p-1', 'p-2'] }), reply.deliveryId);
  const sentMirror = await waitForMirror(setup, reply.messageId, (m) => m.status === 'sent');
  expect(sentMirror.sentAt).toBeInstanceOf(Timestamp);

  await requestEdit(setup, reply.messageId, 'We are on it, sorry!');
  const [queued] = await waitForHistory(setup, reply.messageId, 'edits', (e) => e.length === 1, 'the edit entry');
  expect(queued).toEqual({ text: 'We are on it, sorry!', requestedAt: expect.any(Timestamp), uid: 'operator-1', deliveryId: expect.any(String), status: 'queued' });
  const editId = queued?.deliveryId as string;
  expect(editId).not.toBe(reply.deliveryId);
  const editRecord = await deliveryDoc(setup, editId);
  expect(editRecord).toMatchObject({ kind: 'edit', messageId: reply.messageId, text: 'We are on it, sorry!', status: 'queued', head: true, target: { deliveryId: reply.deliveryId, providerMessageIds: ['p-1', 'p-2'] } });
  expect(editRecord.requestedAt).toBe((queued?.requestedAt as Timestamp).toMillis());
  expect(editRecord.seq).toBe((await deliveryDoc(setup, reply.deliveryId)).seq + 1);

  // Notified like any delivery (its own deliveryId, the reply's messageId), with the attribute `kind`.
  const [notification] = await publishedFor(editId);
  expect(notification?.body).toEqual({ deliveryId: editId, workspaceId: setup.integration.workspaceId, integrationId: setup.integration.integrationId, conversationId: setup.conversationId, messageId: reply.messageId });
  expect(notification?.attributes).toMatchObject({ kind: 'edit', deliveryId: editId });

  const editClaim = await op('claim', key, { deliveryId: editId, requestId: randomUUID() });
  const { leaseId, leaseExpiresAt } = editClaim.body as { leaseId: string; leaseExpiresAt: number };
  expect(editClaim.body).toEqual({
    status: 'ready',
    kind: 'edit',
    leaseId,
    leaseExpiresAt,
    message: { text: 'We are on it, sorry!', recipient: { externalConversationId: setup.externalConversationId, externalCustomerId: setup.customerId } },
    target: { deliveryId: reply.deliveryId, providerMessageIds: ['p-1', 'p-2'] },
  });
  await waitForHistory(setup, reply.messageId, 'edits', (e) => e[0]?.status === 'leased', 'the edit leased');
  expectOk(await op('start', key, { deliveryId: editId, leaseId }), { status: 'sending' });
  await waitForHistory(setup, reply.messageId, 'edits', (e) => e[0]?.status === 'sending', 'the edit sending');
  // The provider kept the ids: the connector reports the target's.
  expectSent(await op('complete', key, { deliveryId: editId, leaseId, providerMessageIds: ['p-1', 'p-2'] }), editId);
  const [sent] = await waitForHistory(setup, reply.messageId, 'edits', (e) => e[0]?.status === 'sent', 'the edit sent');
  expect(sent).toEqual({ text: 'We are on it, sorry!', requestedAt: queued?.requestedAt, uid: 'operator-1', deliveryId: editId, status: 'sent', at: expect.any(Timestamp) });

  // The reply: its text as written, its `delivery` mirror still the reply's own (never the edit's).
  const stored = await readReply(setup, reply.messageId);
  expect(stored?.text).toBe('We are on it!');
  expect(stored?.delivery).toMatchObject({ deliveryId: reply.deliveryId, status: 'sent', providerMessageIds: ['p-1', 'p-2'], sentAt: sentMirror.sentAt });
  expect(stored?.unsent).toBeUndefined();
  // A receipt for the edit does not touch the reply's mirror either.
  expectOk(await op('receipt', key, { deliveryId: editId, status: 'read' }), { status: 'sent' });
  expect((await readReply(setup, reply.messageId))?.delivery).toEqual(stored?.delivery);
});

test('unsend end to end: claim with the recipient and the target per part; the reply becomes unsent; a later edit is refused', async () => {
  const setup = await conversation();
  const key = setup.integration.key;
  const reply = await sentReply(setup, 'Sent to the wrong person', ['p-a', 'p-b'], [{ part: 'text', status: 'sent', providerMessageIds: ['p-a', 'p-b'] }]);

  await requestUnsend(setup, reply.messageId);
  const [queued] = await waitForHistory(setup, reply.messageId, 'unsends', (e) => e.length === 1, 'the unsend entry');
  expect(queued).toEqual({ requestedAt: expect.any(Timestamp), uid: 'operator-1', deliveryId: expect.any(String), status: 'queued' });
  const unsendId = queued?.deliveryId as string;
  const [notification] = await publishedFor(unsendId);
  expect(notification?.attributes).toMatchObject({ kind: 'unsend' });

  const claim = await op('claim', key, { deliveryId: unsendId, requestId: randomUUID() });
  const { leaseId, leaseExpiresAt } = claim.body as { leaseId: string; leaseExpiresAt: number };
  expect(claim.body).toEqual({
    status: 'ready',
    kind: 'unsend',
    leaseId,
    leaseExpiresAt,
    message: { recipient: { externalConversationId: setup.externalConversationId, externalCustomerId: setup.customerId } },
    target: { deliveryId: reply.deliveryId, providerMessageIds: ['p-a', 'p-b'], parts: [{ part: 'text', providerMessageIds: ['p-a', 'p-b'] }] },
  });
  expectOk(await op('start', key, { deliveryId: unsendId, leaseId }), { status: 'sending' });
  expectSent(await op('complete', key, { deliveryId: unsendId, leaseId, providerMessageIds: ['p-a', 'p-b'] }), unsendId);
  await waitForHistory(setup, reply.messageId, 'unsends', (e) => e[0]?.status === 'sent', 'the unsend sent');
  const unsent = await eventually(async () => ((await readReply(setup, reply.messageId))?.unsent as DocumentData | undefined), 'unsent on the reply');
  expect(unsent).toEqual({ at: expect.any(Timestamp) });
  expect((await readReply(setup, reply.messageId))?.delivery).toMatchObject({ deliveryId: reply.deliveryId, status: 'sent' });

  // Past the rules (Admin SDK): the service refuses an edit of an unsent reply, no delivery.
  const before = (await conversationDeliveries(setup)).length;
  await requestEdit(setup, reply.messageId, 'Too late');
  const [refused] = await waitForHistory(setup, reply.messageId, 'edits', (e) => e.length === 1, 'the refused edit');
  expect(refused).toEqual({ text: 'Too late', requestedAt: expect.any(Timestamp), uid: 'operator-1', deliveryId: null, status: 'failed', at: expect.any(Timestamp), error: { outcome: 'failed', code: 'reply_unsent' } });
  expect(await conversationDeliveries(setup)).toHaveLength(before);
});

test('ordering: an edit behind an unfinished later reply waits for it; a reply behind an unfinished edit waits for the edit', async () => {
  const setup = await conversation();
  const key = setup.integration.key;
  const first = await sentReply(setup, 'First', ['p-first']);
  const second = await replyAndNotify(setup, 'Second, not sent yet');

  // The edit of the first reply goes after the second (never before an earlier unfinished delivery).
  await requestEdit(setup, first.messageId, 'First, fixed');
  const editId = (await waitForHistory(setup, first.messageId, 'edits', (e) => e.length === 1, 'the edit'))[0]?.deliveryId as string;
  const edit = await deliveryDoc(setup, editId);
  expect(edit.seq).toBeGreaterThan((await deliveryDoc(setup, second.deliveryId)).seq);
  expect(edit.head).toBeUndefined();
  await waitForNotifications(setup.topic, editId, 1);
  await expectSkip(key, editId, 'waiting_for_previous');

  // A third reply written now waits behind the edit.
  const third = await replyAndNotify(setup, 'Third');
  expect((await deliveryDoc(setup, third.deliveryId)).seq).toBeGreaterThan(edit.seq);

  // The second is sent: the edit is woken (a new notification), delivered; only then the third.
  await deliverFully(key, second.deliveryId);
  await waitForNotifications(setup.topic, editId, 2);
  await expectSkip(key, third.deliveryId, 'waiting_for_previous');
  const claim = await claimReady(key, editId);
  expect(claim).toMatchObject({ kind: 'edit', message: { text: 'First, fixed' }, target: { deliveryId: first.deliveryId, providerMessageIds: ['p-first'] } });
  expectOk(await op('start', key, { deliveryId: editId, leaseId: claim.leaseId }), { status: 'sending' });
  await expectSkip(key, third.deliveryId, 'waiting_for_previous');
  expectSent(await op('complete', key, { deliveryId: editId, leaseId: claim.leaseId, providerMessageIds: ['p-first'] }), editId);
  await waitForNotifications(setup.topic, third.deliveryId, 2);
  await deliverFully(key, third.deliveryId);
  expect((await conversationDeliveries(setup)).map((d) => [d.messageId, d.kind ?? 'reply', d.status])).toEqual([
    [first.messageId, 'reply', 'sent'],
    [second.messageId, 'reply', 'sent'],
    [first.messageId, 'edit', 'sent'],
    [third.messageId, 'reply', 'sent'],
  ]);
});

test('concurrency: two edits of one reply requested together become two deliveries in write order, none lost', async () => {
  const setup = await conversation();
  const key = setup.integration.key;
  const reply = await sentReply(setup, 'Original', ['p-orig']);

  await Promise.all([requestEdit(setup, reply.messageId, 'Edit A', 'operator-1'), requestEdit(setup, reply.messageId, 'Edit B', 'operator-2')]);
  const entries = await waitForHistory(setup, reply.messageId, 'edits', (e) => e.length >= 2 && e.every((x) => typeof x.deliveryId === 'string'), 'two edits taken');
  expect(entries).toHaveLength(2);
  const [older, newer] = entries as [DocumentData, DocumentData];
  // In write order, the later write last: its text is the reply's `edit` now. Not by request time:
  // the emulator stamps a write when it arrives, and the second of two racing writes to commit may
  // carry the earlier time (functions/src/deliveries/lifecycle.ts); neither is refused for it.
  expect(new Set([older.text, newer.text])).toEqual(new Set(['Edit A', 'Edit B']));
  expect(new Set([older.uid, newer.uid])).toEqual(new Set(['operator-1', 'operator-2']));
  expect((await readReply(setup, reply.messageId))?.edit?.text).toBe(newer.text);
  const deliveries = (await conversationDeliveries(setup)).filter((d) => d.kind === 'edit');
  expect(deliveries.map((d) => [d.deliveryId, d.text])).toEqual([
    [older.deliveryId, older.text],
    [newer.deliveryId, newer.text],
  ]);

  // Delivered in that order: the newer waits for the older.
  await waitForNotifications(setup.topic, newer.deliveryId as string, 1);
  await expectSkip(key, newer.deliveryId as string, 'waiting_for_previous');
  await deliverFully(key, older.deliveryId as string, ['p-orig']);
  await waitForNotifications(setup.topic, newer.deliveryId as string, 2);
  await deliverFully(key, newer.deliveryId as string, ['p-orig']);
  await waitForHistory(setup, reply.messageId, 'edits', (e) => e.length === 2 && e.every((x) => x.status === 'sent'), 'both edits sent');
  expect((await conversationDeliveries(setup)).filter((d) => d.kind === 'edit')).toHaveLength(2);
});

test('an integration without the capability gets no kinds: an edit or unsend written past the rules is refused, no delivery, no notification', async () => {
  const { plain } = fixture();
  const setup = await setupConversation({ topic: plain.topic, integration: plain.integration });
  const reply = await sentReply(setup, 'Plain connector', ['p-plain']);
  await requestEdit(setup, reply.messageId, 'Fixed');
  await requestUnsend(setup, reply.messageId);
  const [edit] = await waitForHistory(setup, reply.messageId, 'edits', (e) => e.length === 1, 'the refused edit');
  const [unsend] = await waitForHistory(setup, reply.messageId, 'unsends', (e) => e.length === 1, 'the refused unsend');
  expect(edit).toMatchObject({ text: 'Fixed', deliveryId: null, status: 'failed', error: { outcome: 'failed', code: 'lifecycle_disabled' } });
  expect(unsend).toMatchObject({ deliveryId: null, status: 'failed', error: { outcome: 'failed', code: 'lifecycle_disabled' } });
  expect(unsend).not.toHaveProperty('text');
  expect((await conversationDeliveries(setup)).map((d) => d.deliveryId)).toEqual([reply.deliveryId]);
  expect(plain.topic.received.filter((n) => n.messageId === reply.messageId)).toHaveLength(1);
});

test('the service re-checks: past the window, a reply not sent, a bad text; a connector without the kind fails it unsupported_kind', async () => {
  const setup = await conversation();
  const key = setup.integration.key;
  // Past the edit window, within the unsend window: the send time moved back (a test fixture for time).
  const old = await sentReply(setup, 'Sent a while ago', ['p-old']);
  await deliveryDocRef(setup.integration.workspaceId, old.deliveryId).update({ sentAt: Date.now() - (EDIT_WINDOW_S + 60) * 1000 });
  await requestEdit(setup, old.messageId, 'Too late to edit');
  const [late] = await waitForHistory(setup, old.messageId, 'edits', (e) => e.length === 1, 'the late edit');
  expect(late).toMatchObject({ deliveryId: null, status: 'failed', error: { code: 'edit_window_passed' } });
  await requestUnsend(setup, old.messageId);
  const [unsend] = await waitForHistory(setup, old.messageId, 'unsends', (e) => e.length === 1, 'the unsend');
  expect(typeof unsend?.deliveryId).toBe('string');

  // The connector has no unsend: it fails the delivery `unsupported_kind`; the history says so.
  const claim = await claimReady(key, unsend?.deliveryId as string);
  expect(claim).toMatchObject({ kind: 'unsend' });
  expectOk(await op('fail', key, { deliveryId: unsend?.deliveryId, leaseId: claim.leaseId, outcome: 'failed', code: 'unsupported_kind' }), { status: 'failed' });
  const [failed] = await waitForHistory(setup, old.messageId, 'unsends', (e) => e[0]?.status === 'failed', 'the unsend failed');
  expect(failed).toEqual({ requestedAt: unsend?.requestedAt, uid: 'operator-1', deliveryId: unsend?.deliveryId, status: 'failed', at: expect.any(Timestamp), error: { outcome: 'failed', code: 'unsupported_kind' } });
  expect((await readReply(setup, old.messageId))?.unsent).toBeUndefined();

  // A reply whose delivery is not sent yet, and an edit text over the limit.
  const queued = await replyAndNotify(setup, 'Not sent yet');
  await requestEdit(setup, queued.messageId, 'Early');
  expect((await waitForHistory(setup, queued.messageId, 'edits', (e) => e.length === 1, 'the early edit'))[0]).toMatchObject({ deliveryId: null, error: { code: 'reply_not_sent' } });
  await deliverFully(key, queued.deliveryId);
  await waitForMirror(setup, queued.messageId, (m) => m.status === 'sent');
  await requestEdit(setup, queued.messageId, 'x'.repeat(10_001));
  expect((await waitForHistory(setup, queued.messageId, 'edits', (e) => e.length === 2, 'the long edit'))[1]).toMatchObject({ deliveryId: null, error: { code: 'invalid_edit' } });
});

test('cancel and resend act on the reply own delivery only: a cancel after an edit is too late for the sent reply and leaves the edit queued', async () => {
  const setup = await conversation();
  const reply = await sentReply(setup, 'Sent', ['p-sent']);
  const blocker = await replyAndNotify(setup, 'In progress');
  await requestEdit(setup, reply.messageId, 'Sent, fixed');
  const editId = (await waitForHistory(setup, reply.messageId, 'edits', (e) => e.length === 1, 'the edit'))[0]?.deliveryId as string;

  await replyRef(setup, reply.messageId).update({ cancel: { requestedAt: FieldValue.serverTimestamp(), uid: 'operator-1' } });
  await waitForMirror(setup, reply.messageId, (m) => m.cancel?.status === 'too_late');
  expect(await deliveryDoc(setup, editId)).toMatchObject({ status: 'queued' });
  expect((await readReply(setup, reply.messageId))?.edits).toMatchObject([{ deliveryId: editId, status: 'queued' }]);
  await deliverFully(setup.integration.key, blocker.deliveryId);
  await eventually(async () => ((await deliveryDoc(setup, editId)).head === true ? true : undefined), 'the edit released');
  await deliverFully(setup.integration.key, editId, ['p-sent']);
  await waitForHistory(setup, reply.messageId, 'edits', (e) => e[0]?.status === 'sent', 'the edit sent');
});

test('requests taken out of order (their triggers raced): an older one after a newer is refused superseded; a request taken again does nothing', async () => {
  const setup = await conversation();
  const reply = await sentReply(setup, 'Original', ['p-orig']);
  const { workspaceId } = setup.integration;
  const now = Date.now();
  // As the creation gets them from the trigger (not written on the reply: no trigger runs for these).
  const newer = { requestedAt: Timestamp.fromMillis(now - 1000), uid: 'operator-2', text: 'Newer' };
  const older = { requestedAt: Timestamp.fromMillis(now - 2000), uid: 'operator-1', text: 'Older' };
  const taken = await requestLifecycle(adminDb(), workspaceId, setup.conversationId, reply.messageId, 'edit', [newer]);
  expect(taken).toMatchObject({ created: [expect.any(String)], refused: [] });
  expect(await requestLifecycle(adminDb(), workspaceId, setup.conversationId, reply.messageId, 'edit', [newer])).toEqual({ created: [], refused: [], outboxIds: [] });
  expect(await requestLifecycle(adminDb(), workspaceId, setup.conversationId, reply.messageId, 'edit', [older, newer])).toEqual({
    created: [],
    refused: [{ requestedAt: now - 2000, code: 'superseded' }],
    outboxIds: [],
  });
  const entries = ((await readReply(setup, reply.messageId))?.edits ?? []) as DocumentData[];
  expect(entries).toEqual([
    { text: 'Newer', requestedAt: newer.requestedAt, uid: 'operator-2', deliveryId: taken.created[0], status: 'queued' },
    { text: 'Older', requestedAt: older.requestedAt, uid: 'operator-1', deliveryId: null, status: 'failed', at: expect.any(Timestamp), error: { outcome: 'failed', code: 'superseded' } },
  ]);
  expect((await conversationDeliveries(setup)).filter((d) => d.kind === 'edit').map((d) => d.text)).toEqual(['Newer']);
});

test('the write order decides, not the request times: a later write stamped earlier than the one it replaced (the emulator stamps writes as they arrive) is taken after it', async () => {
  const setup = await conversation();
  const reply = await sentReply(setup, 'Original', ['p-orig']);
  const other = await sentReply(setup, 'Another', ['p-other']);
  const { workspaceId } = setup.integration;
  const now = Date.now();
  // Written first, stamped later; written second (the trigger's `after`, its `before` the first), stamped earlier.
  const first = { requestedAt: Timestamp.fromMillis(now - 1000), uid: 'operator-1', text: 'Written first' };
  const second = { requestedAt: Timestamp.fromMillis(now - 2000), uid: 'operator-2', text: 'Written second' };
  // The first write's trigger ran first and took it ...
  const taken = await requestLifecycle(adminDb(), workspaceId, setup.conversationId, reply.messageId, 'edit', [first]);
  expect(taken).toMatchObject({ created: [expect.any(String)], refused: [] });
  // ... then the second's, which hands over both: the second is newer by write order.
  const next = await requestLifecycle(adminDb(), workspaceId, setup.conversationId, reply.messageId, 'edit', [first, second]);
  expect(next).toMatchObject({ created: [expect.any(String)], refused: [] });
  expect((await conversationDeliveries(setup)).filter((d) => d.kind === 'edit').map((d) => d.text)).toEqual(['Written first', 'Written second']);

  // Both triggers' values in one run (the second's trigger first): both taken, in write order.
  const both = await requestLifecycle(adminDb(), workspaceId, setup.conversationId, other.messageId, 'edit', [first, second]);
  expect(both).toMatchObject({ created: [expect.any(String), expect.any(String)], refused: [] });
  expect(((await readReply(setup, other.messageId))?.edits as DocumentData[]).map((e) => e.text)).toEqual(['Written first', 'Written second']);
});
