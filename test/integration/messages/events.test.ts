/**
 * POST /v1/messages/events (docs/contract.md#message-events), through real HTTP on the emulators
 * (and a customer message's `providerMessageId` on POST /v1/messages, which targets may name):
 * every per-type field rule (400 naming the field, nothing written), each type applied (201), an
 * event that waits for its target (202) and is applied when the target arrives, an edit of a
 * deleted message (200, not applied), duplicates and conflicts in the eventId space shared with
 * messages (both ways), 404 `target_not_found`, reactions on operator replies by provider message
 * id (one pending until the reply is completed), typing with its `expireAt`, and the key, rate
 * limit and body limits as `/v1/messages`.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { eventDocIdFor } from '../../../functions/src/platform/ids';
import { readFileSync } from 'node:fs';
import { Timestamp, type DocumentData } from 'firebase-admin/firestore';
import { pendingEventsIdFor } from '../../../functions/src/messages/event-ids';
import { expectError, guardNoWrites } from '../helpers/assertions';
import { MESSAGES_PATH, listMessageDocs, newMessage, readMessageDoc } from '../helpers/messages';
import { adminDb, createTestIntegration, imageFilePath, listImageFilesExceptOtherWorkspaces, postJson, postMultipart, messageParts, workspaceDocPaths, type ApiResponse, type TestIntegration } from '../helpers/stack';
import { deliveryTestFile, deliverFully, eventually, replyAndNotify, readReply } from '../helpers/deliveries';
import { png } from '../../unit/fixtures/image-bytes';

jest.setTimeout(90_000);
// The delivery helpers' file fixture closes the topics it opened, Pub/Sub and the stack after the file.
const file = deliveryTestFile();

const EVENTS_PATH = '/v1/messages/events';

/**
 * The service's log lines so far: what the functions printed, on the production runtime and in the
 * Functions emulator (EMULATOR_LOG_FILE, written by scripts/test.mjs).
 */
function emulatorLog(): string {
  const path = process.env.EMULATOR_LOG_FILE;
  if (path === undefined) throw new Error('EMULATOR_LOG_FILE is not set (run through scripts/test.mjs)');
  return readFileSync(path, 'utf8');
}

interface Sent {
  eventId: string;
  conversationId: string;
  messageId: string;
  externalConversationId: string;
  senderExternalId: string;
}

/** Sends a customer message through POST /v1/messages and returns its ids. */
async function sendMessage(integ: TestIntegration, overrides: Record<string, unknown> = {}): Promise<Sent> {
  const body = newMessage(overrides);
  const res = await postJson(MESSAGES_PATH, body, { key: integ.key });
  if (res.status !== 201) throw new Error(`message not accepted: ${res.status} ${res.text}`);
  const { conversationId, messageId } = res.body as { conversationId: string; messageId: string };
  return { eventId: String(body.eventId), conversationId, messageId, externalConversationId: String(body.externalConversationId), senderExternalId: String(body.sender?.externalId) };
}

/** An event about `about` by its sender (overrides replace top-level fields). */
function eventAbout(about: Pick<Sent, 'externalConversationId' | 'senderExternalId'>, fields: Record<string, unknown>): Record<string, unknown> {
  return { eventId: `evt_${randomUUID()}`, externalConversationId: about.externalConversationId, sender: { externalId: about.senderExternalId }, ...fields };
}

const postEvent = (integ: TestIntegration, body: unknown): Promise<ApiResponse> => postJson(EVENTS_PATH, body, { key: integ.key });

/**
 * Posts as a connector would under contention: a 503 (with `Retry-After`, the contract's temporary
 * failure: here the emulator gave up on a transaction that waited on the others' locks) is sent
 * again, the same body, until it is answered otherwise. What the test asserts is the final answers.
 */
async function postEventRetrying503(integ: TestIntegration, body: unknown, attempts = 5): Promise<ApiResponse> {
  for (let attempt = 1; ; attempt += 1) {
    const res = await postEvent(integ, body);
    if (res.status !== 503 || attempt >= attempts) return res;
    expectError(res, 503, 'temporarily_unavailable');
    expect(res.headers.get('retry-after')).toMatch(/^[1-9][0-9]*$/);
  }
}

/** Asserts a success answer of the events endpoint. */
function expectAnswer(res: ApiResponse, status: 200 | 201 | 202, body: { applied: boolean; duplicate: boolean }, conversationId?: string): void {
  const context = `HTTP ${res.status}: ${res.text.slice(0, 500)}`;
  expect({ status: res.status, context }).toEqual({ status, context });
  expect(res.body).toEqual({ conversationId: conversationId ?? expect.stringMatching(/^c_/), ...body });
}

const message = (integ: TestIntegration, sent: Pick<Sent, 'conversationId' | 'messageId'>): Promise<DocumentData | undefined> => readMessageDoc(integ.workspaceId, sent.conversationId, sent.messageId);

let integ: TestIntegration;
beforeAll(async () => {
  integ = await createTestIntegration();
});

describe('400 invalid_request: the per-type field rules name the field, nothing is written', () => {
  const about = { externalConversationId: 'chat-1', senderExternalId: 'cust-1' };
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['edited without text', { type: 'edited', target: { eventId: 'e1' } }, 'text: required'],
    ['edited without target', { type: 'edited', text: 'x' }, 'target: required'],
    ['edited with an empty text', { type: 'edited', target: { eventId: 'e1' }, text: '' }, 'text:'],
    ['edited with 10001 characters', { type: 'edited', target: { eventId: 'e1' }, text: '😀'.repeat(10_001) }, 'text: must be at most 10000'],
    ['edited with an emoji', { type: 'edited', target: { eventId: 'e1' }, text: 'x', emoji: '👍' }, 'emoji: not allowed'],
    ['deleted with text', { type: 'deleted', target: { eventId: 'e1' }, text: 'x' }, 'text: not allowed'],
    ['deleted with removed', { type: 'deleted', target: { eventId: 'e1' }, removed: true }, 'removed: not allowed'],
    ['deleted without target', { type: 'deleted' }, 'target: required'],
    ['reaction without emoji', { type: 'reaction', target: { eventId: 'e1' } }, 'emoji: required'],
    ['reaction with two emoji', { type: 'reaction', target: { eventId: 'e1' }, emoji: '👍👍' }, 'emoji: must be one emoji'],
    ['reaction with a word', { type: 'reaction', target: { eventId: 'e1' }, emoji: 'ok' }, 'emoji: must be one emoji'],
    ['reaction with an empty emoji', { type: 'reaction', target: { eventId: 'e1' }, emoji: '' }, 'emoji:'],
    ['reaction with over 32 bytes', { type: 'reaction', target: { eventId: 'e1' }, emoji: `👍${'\u{1F3FB}'.repeat(8)}` }, 'emoji: must be at most 32 bytes'],
    ['reaction with removed: false', { type: 'reaction', target: { eventId: 'e1' }, emoji: '👍', removed: false }, 'removed:'],
    ['reaction with text', { type: 'reaction', target: { eventId: 'e1' }, emoji: '👍', text: 'x' }, 'text: not allowed'],
    ['a target with both ids', { type: 'reaction', target: { eventId: 'e1', providerMessageId: 'p1' }, emoji: '👍' }, 'target: exactly one'],
    ['an empty target', { type: 'reaction', target: {}, emoji: '👍' }, 'target.eventId: required'],
    ['a target with an unknown field', { type: 'deleted', target: { eventId: 'e1', id: 'x' } }, "target: unknown property 'id'"],
    ['typing with a target', { type: 'typing', target: { eventId: 'e1' } }, 'target: not allowed'],
    ['typing with text', { type: 'typing', text: 'x' }, 'text: not allowed'],
    ['an unknown type', { type: 'read' }, 'type:'],
    ['no type', {}, 'type:'],
    ['an unknown field', { type: 'typing', extra: 1 }, "unknown property 'extra'"],
  ];

  test.each(cases)('%s', async (_name, fields, mentions) => {
    const own = await createTestIntegration();
    const check = await guardNoWrites(own);
    const res = await postEvent(own, eventAbout(about, fields));
    expect(expectError(res, 400, 'invalid_request')).toContain(mentions);
    await check();
  });

  test('the common fields as /v1/messages: a missing eventId, sender.externalId over its limit', async () => {
    const res1 = await postEvent(integ, { externalConversationId: 'c', sender: { externalId: 's' }, type: 'typing' });
    expect(expectError(res1, 400, 'invalid_request')).toContain('eventId');
    const res2 = await postEvent(integ, { eventId: 'e', externalConversationId: 'c', sender: { externalId: 'x'.repeat(257) }, type: 'typing' });
    expect(expectError(res2, 400, 'invalid_request')).toContain('sender.externalId');
  });

  test('one emoji: a flag, a skin tone and a ZWJ family are each one grapheme cluster', async () => {
    const sent = await sendMessage(integ);
    for (const emoji of ['🇵🇱', '👍🏽', '👨‍👩‍👧‍👦', '❤️', '+']) {
      expectAnswer(await postEvent(integ, eventAbout(sent, { type: 'reaction', target: { eventId: sent.eventId }, emoji })), 201, { applied: true, duplicate: false }, sent.conversationId);
    }
    const reactions = ((await message(integ, sent))?.reactions ?? []) as Array<{ emoji: string }>;
    expect(reactions.map((r) => r.emoji)).toEqual(['🇵🇱', '👍🏽', '👨‍👩‍👧‍👦', '❤️', '+']);
  });
});

describe('key, media type and body limits as /v1/messages', () => {
  test('401 invalid_key, 415 for multipart, 413 over 64 KiB, 400 invalid_json', async () => {
    expectError(await postJson(EVENTS_PATH, { type: 'typing' }, {}), 401, 'invalid_key');
    const parts = messageParts(newMessage());
    expectError(await postMultipart(EVENTS_PATH, parts, { key: integ.key }), 415, 'unsupported_media_type');
    expectError(await postJson(EVENTS_PATH, { pad: 'x'.repeat(70_000) }, { key: integ.key }), 413, 'payload_too_large');
    expectError(await postJson(EVENTS_PATH, '{"eventId":', { key: integ.key, raw: true }), 400, 'invalid_json');
  });

  test('403 for an inactive integration', async () => {
    const inactive = await createTestIntegration({ active: false });
    expectError(await postEvent(inactive, eventAbout({ externalConversationId: 'c', senderExternalId: 's' }, { type: 'typing' })), 403, 'integration_inactive');
  });

  test('429 rate_limited with Retry-After and the RateLimit headers, over the integration limit', async () => {
    const limited = await createTestIntegration({ messagesPerMinute: 2 });
    const about = { externalConversationId: `chat-${randomUUID()}`, senderExternalId: 'cust' };
    const answers: ApiResponse[] = [];
    for (let i = 0; i < 4; i += 1) answers.push(await postEvent(limited, eventAbout(about, { type: 'typing' })));
    const limitedAnswer = answers.find((r) => r.status === 429);
    expect(limitedAnswer).toBeDefined();
    if (limitedAnswer === undefined) return;
    expectError(limitedAnswer, 429, 'rate_limited');
    expect(limitedAnswer.headers.get('retry-after')).toMatch(/^[1-9][0-9]*$/);
    expect(limitedAnswer.headers.get('ratelimit-limit')).toBe('2');
    expect(answers[0]?.headers.get('ratelimit-limit')).toBe('2');
  });
});

const eventRecord = async (integ: TestIntegration, eventId: string): Promise<boolean> =>
  (await adminDb().doc(`workspaces/${integ.workspaceId}/events/${eventDocIdFor(integ.integrationId, eventId)}`).get()).exists;

describe('edited', () => {
  test('201 applied: the edit is appended, the original text stays; a retry is 200 duplicate; other content is 409', async () => {
    const sent = await sendMessage(integ);
    const edit = eventAbout(sent, { type: 'edited', target: { eventId: sent.eventId }, text: 'Hello, my order #5531 has not arrived.' });
    expectAnswer(await postEvent(integ, edit), 201, { applied: true, duplicate: false }, sent.conversationId);
    const second = eventAbout(sent, { type: 'edited', target: { eventId: sent.eventId }, text: 'Third version' });
    expectAnswer(await postEvent(integ, second), 201, { applied: true, duplicate: false }, sent.conversationId);
    const stored = await message(integ, sent);
    expect(stored?.text).toBe('Hello, my order has not arrived.');
    const edits = stored?.edits as Array<{ text: string; at: { toMillis(): number } }>;
    expect(edits.map((e) => e.text)).toEqual(['Hello, my order #5531 has not arrived.', 'Third version']);
    expect(edits[0]?.at.toMillis()).toBeLessThanOrEqual(edits[1]?.at.toMillis() ?? 0);

    expectAnswer(await postEvent(integ, edit), 200, { applied: true, duplicate: true }, sent.conversationId);
    expectError(await postEvent(integ, { ...edit, text: 'something else' }), 409, 'event_conflict');
    expect(((await message(integ, sent))?.edits as unknown[]).length).toBe(2);
  });

  test('404 target_not_found for a message of another sender, an alert, or another conversation: nothing written', async () => {
    const sent = await sendMessage(integ);
    const byOther = eventAbout({ ...sent, senderExternalId: 'someone-else' }, { type: 'edited', target: { eventId: sent.eventId }, text: 'x' });
    expect(expectError(await postEvent(integ, byOther), 404, 'target_not_found')).toContain(`target.eventId: '${sent.eventId}'`);
    expect(await eventRecord(integ, String(byOther.eventId))).toBe(false);

    const alert = await sendMessage(integ, { sender: { externalId: 'monitoring', kind: 'service' } });
    expectError(await postEvent(integ, eventAbout(alert, { type: 'deleted', target: { eventId: alert.eventId }, sender: { externalId: 'monitoring', kind: 'service' } })), 404, 'target_not_found');

    const elsewhere = eventAbout({ ...sent, externalConversationId: `chat-${randomUUID()}` }, { type: 'edited', target: { eventId: sent.eventId }, text: 'x' });
    expectError(await postEvent(integ, elsewhere), 404, 'target_not_found');
    expect(await eventRecord(integ, String(elsewhere.eventId))).toBe(false);
    const stored = await message(integ, sent);
    expect(stored?.edits).toBeUndefined();
    expect(stored?.deleted).toBeUndefined();
  });

  test('the target must be a message: the eventId of an event is 404', async () => {
    const sent = await sendMessage(integ);
    const typing = eventAbout(sent, { type: 'typing' });
    expectAnswer(await postEvent(integ, typing), 201, { applied: true, duplicate: false });
    expectError(await postEvent(integ, eventAbout(sent, { type: 'reaction', target: { eventId: typing.eventId }, emoji: '👍' })), 404, 'target_not_found');
  });
});

describe('deleted', () => {
  test('201: text, edits and images go (the stored file too), the tombstone stays; later edits and reactions are 200 not applied', async () => {
    const body = newMessage({ message: { text: 'a photo' } });
    const res = await postMultipart(MESSAGES_PATH, messageParts(body, [png(5, 4)]), { key: integ.key });
    expect(res.status).toBe(201);
    const { conversationId, messageId } = res.body as { conversationId: string; messageId: string };
    const sent: Sent = { eventId: String(body.eventId), conversationId, messageId, externalConversationId: String(body.externalConversationId), senderExternalId: String(body.sender?.externalId) };
    const imagePath = ((await message(integ, sent))?.images as Array<{ path: string }>)[0]?.path ?? '';
    expect(existsSync(imageFilePath(imagePath))).toBe(true);
    expectAnswer(await postEvent(integ, eventAbout(sent, { type: 'edited', target: { eventId: sent.eventId }, text: 'a photo of the label' })), 201, { applied: true, duplicate: false });

    const del = eventAbout(sent, { type: 'deleted', target: { eventId: sent.eventId } });
    expectAnswer(await postEvent(integ, del), 201, { applied: true, duplicate: false }, conversationId);
    const stored = await message(integ, sent);
    expect(stored).toMatchObject({ text: null, images: [], deleted: { at: expect.anything() }, direction: 'inbound', eventId: sent.eventId });
    expect(stored?.edits).toBeUndefined();
    expect(existsSync(imageFilePath(imagePath))).toBe(false);

    const late = eventAbout(sent, { type: 'edited', target: { eventId: sent.eventId }, text: 'too late' });
    expectAnswer(await postEvent(integ, late), 200, { applied: false, duplicate: false }, conversationId);
    expectAnswer(await postEvent(integ, late), 200, { applied: false, duplicate: true }, conversationId);
    expectAnswer(await postEvent(integ, eventAbout(sent, { type: 'reaction', target: { eventId: sent.eventId }, emoji: '👍' })), 200, { applied: false, duplicate: false });
    expectAnswer(await postEvent(integ, del), 200, { applied: true, duplicate: true }, conversationId);
    const after = await message(integ, sent);
    expect(after?.edits).toBeUndefined();
    expect(after?.reactions).toBeUndefined();
  });
});

describe('reaction', () => {
  test('at most one per sender and emoji (again: 200 not applied); removed takes it back (when there is none: 200 not applied); other senders and emoji stay side by side', async () => {
    const sent = await sendMessage(integ);
    const react = (sender: string, emoji: string, removed?: true) =>
      postEvent(integ, eventAbout({ ...sent, senderExternalId: sender }, { type: 'reaction', target: { eventId: sent.eventId }, emoji, ...(removed ? { removed } : {}) }));
    expectAnswer(await react(sent.senderExternalId, '👍'), 201, { applied: true, duplicate: false });
    // The same reaction again changes nothing: 200, not applied.
    expectAnswer(await react(sent.senderExternalId, '👍'), 200, { applied: false, duplicate: false });
    expectAnswer(await react('agent-bot', '👍'), 201, { applied: true, duplicate: false });
    expectAnswer(await react(sent.senderExternalId, '❤️'), 201, { applied: true, duplicate: false });
    const reactions = () => message(integ, sent).then((m) => ((m?.reactions ?? []) as Array<{ emoji: string; senderExternalId: string }>).map((r) => `${r.senderExternalId}:${r.emoji}`));
    expect(await reactions()).toEqual([`${sent.senderExternalId}:👍`, 'agent-bot:👍', `${sent.senderExternalId}:❤️`]);
    expectAnswer(await react(sent.senderExternalId, '👍', true), 201, { applied: true, duplicate: false });
    expect(await reactions()).toEqual(['agent-bot:👍', `${sent.senderExternalId}:❤️`]);
    // Taking back a reaction that is not there changes nothing either.
    expectAnswer(await react(sent.senderExternalId, '👍', true), 200, { applied: false, duplicate: false });
    expect(await reactions()).toEqual(['agent-bot:👍', `${sent.senderExternalId}:❤️`]);
  });

  test('on an alert by its eventId', async () => {
    const alert = await sendMessage(integ, { sender: { externalId: 'monitoring', kind: 'service' } });
    expectAnswer(await postEvent(integ, eventAbout({ ...alert, senderExternalId: 'cust-9' }, { type: 'reaction', target: { eventId: alert.eventId }, emoji: '👀' })), 201, { applied: true, duplicate: false });
  });
});

describe('an event that overtakes its message (202, applied on arrival)', () => {
  test('an edit and a reaction before the message: 202 each, applied in order when the message arrives; a retry answers the first answer', async () => {
    const body = newMessage();
    const about = { externalConversationId: String(body.externalConversationId), senderExternalId: String(body.sender?.externalId) };
    const edit1 = eventAbout(about, { type: 'edited', target: { eventId: body.eventId }, text: 'first edit' });
    const react = eventAbout(about, { type: 'reaction', target: { eventId: body.eventId }, emoji: '🙏' });
    const edit2 = eventAbout(about, { type: 'edited', target: { eventId: body.eventId }, text: 'second edit' });
    for (const e of [edit1, react, edit2]) expectAnswer(await postEvent(integ, e), 202, { applied: false, duplicate: false });
    expectAnswer(await postEvent(integ, edit1), 200, { applied: false, duplicate: true });

    const res = await postJson(MESSAGES_PATH, body, { key: integ.key });
    expect(res.status).toBe(201);
    const { conversationId, messageId } = res.body as { conversationId: string; messageId: string };
    const stored = await message(integ, { conversationId, messageId });
    expect(stored?.text).toBe(body.message?.text);
    expect((stored?.edits as Array<{ text: string }>).map((e) => e.text)).toEqual(['first edit', 'second edit']);
    expect((stored?.reactions as Array<{ emoji: string }>).map((r) => r.emoji)).toEqual(['🙏']);
    const pending = await adminDb().collection(`workspaces/${integ.workspaceId}/pendingEvents`).get();
    expect(pending.docs.filter((d) => (d.get('target') as { eventId?: string } | undefined)?.eventId === body.eventId)).toEqual([]);
  });

  test('a deletion before a message with an image: it arrives as a tombstone and its image is not kept', async () => {
    const body = newMessage({ message: { text: 'oops' } });
    const about = { externalConversationId: String(body.externalConversationId), senderExternalId: String(body.sender?.externalId) };
    expectAnswer(await postEvent(integ, eventAbout(about, { type: 'deleted', target: { eventId: body.eventId } })), 202, { applied: false, duplicate: false });
    const res = await postMultipart(MESSAGES_PATH, messageParts(body, [png(6, 4)]), { key: integ.key });
    expect(res.status).toBe(201);
    const { conversationId, messageId } = res.body as { conversationId: string; messageId: string };
    const stored = await message(integ, { conversationId, messageId });
    expect(stored).toMatchObject({ text: null, images: [], deleted: { at: expect.anything() } });
    const dir = imageFilePath(`workspaces/${integ.workspaceId}/conversations/${conversationId}/messages/${messageId}/images`);
    expect(existsSync(dir) ? readdirSync(dir) : []).toEqual([]);
  });

  test('a pending edit by another sender is dropped when the message arrives', async () => {
    const body = newMessage();
    const other = { externalConversationId: String(body.externalConversationId), senderExternalId: 'not-the-author' };
    expectAnswer(await postEvent(integ, eventAbout(other, { type: 'edited', target: { eventId: body.eventId }, text: 'hijack' })), 202, { applied: false, duplicate: false });
    const res = await postJson(MESSAGES_PATH, body, { key: integ.key });
    const { conversationId, messageId } = res.body as { conversationId: string; messageId: string };
    expect((await message(integ, { conversationId, messageId }))?.edits).toBeUndefined();
  });
});

describe('after 24 hours a pending event is dropped, with a log line', () => {
  test('an edit older than 24 hours is not applied when its message arrives', async () => {
    const body = newMessage();
    const about = { externalConversationId: String(body.externalConversationId), senderExternalId: String(body.sender?.externalId) };
    expectAnswer(await postEvent(integ, eventAbout(about, { type: 'edited', target: { eventId: body.eventId }, text: 'stale' })), 202, { applied: false, duplicate: false });
    // Test fixture for time: the entry as if received 24 hours and a minute ago.
    const pendingRef = adminDb().doc(`workspaces/${integ.workspaceId}/pendingEvents/${pendingEventsIdFor(integ.integrationId, { eventId: String(body.eventId) })}`);
    const events = (await pendingRef.get()).get('events') as Array<Record<string, unknown>>;
    await pendingRef.update({ events: events.map((e) => ({ ...e, receivedAt: Timestamp.fromMillis(Date.now() - 24 * 3_600_000 - 60_000) })) });
    const res = await postJson(MESSAGES_PATH, body, { key: integ.key });
    const { conversationId, messageId } = res.body as { conversationId: string; messageId: string };
    expect((await message(integ, { conversationId, messageId }))?.edits).toBeUndefined();
    expect((await pendingRef.get()).exists).toBe(false);
    await eventually(async () => (emulatorLog().includes('"code":"pending_expired"') && emulatorLog().includes(messageId) ? true : undefined), 'the log line of the dropped event');
  });

  test('a pending document deleted by its TTL logs each of its events as dropped', async () => {
    const about = { externalConversationId: `chat-${randomUUID()}`, senderExternalId: 'cust-ttl' };
    const target = `never-${randomUUID()}`;
    expectAnswer(await postEvent(integ, eventAbout(about, { type: 'deleted', target: { eventId: target } })), 202, { applied: false, duplicate: false });
    const pendingRef = adminDb().doc(`workspaces/${integ.workspaceId}/pendingEvents/${pendingEventsIdFor(integ.integrationId, { eventId: target })}`);
    const eventDocId = ((await pendingRef.get()).get('events') as Array<{ eventDocId: string }>)[0]?.eventDocId ?? '';
    // What Firestore's TTL does after `expireAt` (the emulator has no TTL): the document goes.
    await pendingRef.update({ expireAt: Timestamp.fromMillis(Date.now() - 1_000) });
    await pendingRef.delete();
    await eventually(async () => (emulatorLog().includes(`"eventDocId":"${eventDocId}"`) ? true : undefined), 'the log line of the dropped event');
    expect(emulatorLog()).toMatch(new RegExp(`"code":"pending_expired"[^\n]*"eventDocId":"${eventDocId}"`));
  });
});

describe('concurrency', () => {
  test('the same event three times at once: applied once, the others duplicates; reactions of several senders at once: none lost', async () => {
    const sent = await sendMessage(integ);
    const edit = eventAbout(sent, { type: 'edited', target: { eventId: sent.eventId }, text: 'once' });
    const answers = await Promise.all([1, 2, 3].map(() => postEventRetrying503(integ, edit)));
    expect(answers.map((r) => r.status).sort()).toEqual([200, 200, 201]);
    for (const r of answers.filter((a) => a.status === 200)) expect(r.body).toEqual({ conversationId: sent.conversationId, applied: true, duplicate: true });
    expect(((await message(integ, sent))?.edits as unknown[]).length).toBe(1);

    const senders = ['s1', 's2', 's3', 's4'];
    const reactions = await Promise.all(senders.map((sender) => postEventRetrying503(integ, eventAbout({ ...sent, senderExternalId: sender }, { type: 'reaction', target: { eventId: sent.eventId }, emoji: '🎉' }))));
    expect(reactions.map((r) => r.status)).toEqual([201, 201, 201, 201]);
    const stored = ((await message(integ, sent))?.reactions ?? []) as Array<{ senderExternalId: string }>;
    expect(stored.map((r) => r.senderExternalId).sort()).toEqual(senders);
  });
});

describe('one eventId space for messages and events', () => {
  test("a message's eventId used for an event is 409, and an event's eventId used for a message is 409", async () => {
    const sent = await sendMessage(integ);
    expectError(await postEvent(integ, { ...eventAbout(sent, { type: 'typing' }), eventId: sent.eventId }), 409, 'event_conflict');

    const typing = eventAbout(sent, { type: 'typing' });
    expectAnswer(await postEvent(integ, typing), 201, { applied: true, duplicate: false });
    expectError(await postJson(MESSAGES_PATH, newMessage({ eventId: typing.eventId, externalConversationId: sent.externalConversationId }), { key: integ.key }), 409, 'event_conflict');
  });
});

describe('typing', () => {
  test('201: the typing document with a one-minute expireAt; never a message', async () => {
    const sent = await sendMessage(integ);
    const before = Date.now();
    const res = await postEvent(integ, eventAbout(sent, { type: 'typing', sender: { externalId: sent.senderExternalId, displayName: 'Ada' } }));
    expectAnswer(res, 201, { applied: true, duplicate: false }, sent.conversationId);
    const doc = (await adminDb().doc(`workspaces/${integ.workspaceId}/typing/${sent.conversationId}`).get()).data();
    expect(doc).toEqual({
      conversationId: sent.conversationId,
      integrationId: integ.integrationId,
      senderExternalId: sent.senderExternalId,
      displayName: 'Ada',
      at: expect.anything(),
      expireAt: expect.anything(),
    });
    const at = (doc?.at as { toMillis(): number }).toMillis();
    expect(at).toBeGreaterThanOrEqual(before - 5_000);
    expect((doc?.expireAt as { toMillis(): number }).toMillis() - at).toBe(60_000);
    expect((await listMessageDocs(integ.workspaceId, sent.conversationId)).length).toBe(1);
    // The queue's row shows it from the conversation (docs/console.md#the-queue): the same time.
    const conversation = (await adminDb().doc(`workspaces/${integ.workspaceId}/conversations/${sent.conversationId}`).get()).data();
    expect((conversation?.typingAt as { toMillis(): number }).toMillis()).toBe(at);
  });
});

describe('reactions on operator replies, by provider message id', () => {
  test('pending until the reply is completed with that id, then applied; then by another id of it at once; removed; another conversation is 404', async () => {
    const setup = await file.ownConversation();
    const { integration } = setup;
    const reply = await replyAndNotify(setup, 'Your parcel left the warehouse today.');
    const ids = [`wamid.${randomUUID()}`, `wamid.${randomUUID()}`];
    const customer = { externalConversationId: setup.externalConversationId, senderExternalId: setup.customerId };
    const thumbs = eventAbout(customer, { type: 'reaction', target: { providerMessageId: ids[0] }, emoji: '👍' });
    expectAnswer(await postEvent(integration, thumbs), 202, { applied: false, duplicate: false }, setup.conversationId);

    await deliverFully(integration.key, reply.deliveryId, ids);
    const reactionsOf = async () => ((await readReply(setup, reply.messageId))?.reactions ?? []) as Array<{ emoji: string; senderExternalId: string }>;
    await eventually(async () => ((await reactionsOf()).length === 1 ? true : undefined), 'the pending reaction applied to the reply');
    expect(await reactionsOf()).toEqual([{ emoji: '👍', senderExternalId: setup.customerId, at: expect.anything() }]);

    // The second id is recorded by the same trigger run: a reaction by it is applied at once.
    const heart = eventAbout(customer, { type: 'reaction', target: { providerMessageId: ids[1] }, emoji: '❤️' });
    expectAnswer(await postEvent(integration, heart), 201, { applied: true, duplicate: false }, setup.conversationId);
    expect((await reactionsOf()).map((r) => r.emoji)).toEqual(['👍', '❤️']);
    expectAnswer(await postEvent(integration, eventAbout(customer, { type: 'reaction', target: { providerMessageId: ids[0] }, emoji: '👍', removed: true })), 201, { applied: true, duplicate: false });
    expect((await reactionsOf()).map((r) => r.emoji)).toEqual(['❤️']);

    const elsewhere = eventAbout({ ...customer, externalConversationId: `chat-${randomUUID()}` }, { type: 'reaction', target: { providerMessageId: ids[1] }, emoji: '😡' });
    expectError(await postEvent(integration, elsewhere), 404, 'target_not_found');
  });
});

/** Everything the workspace holds (documents and stored images): equal before and after a refused request. */
async function workspaceSnapshot(integration: TestIntegration): Promise<{ docs: string[]; images: string[] }> {
  return { docs: (await workspaceDocPaths(integration.workspaceId)).sort(), images: await listImageFilesExceptOtherWorkspaces([integration.workspaceId]) };
}

describe("targets by the channel's id (providerMessageId)", () => {
  test('a message with a providerMessageId: stored with it; a retry is 200 duplicate; another message with it (JSON or multipart) is 409 provider_message_id_conflict, nothing written', async () => {
    const own = await createTestIntegration();
    const providerMessageId = `wamid.${randomUUID()}`;
    const body = newMessage({ providerMessageId });
    const first = await postJson(MESSAGES_PATH, body, { key: own.key });
    expect(first.status).toBe(201);
    const { conversationId, messageId } = first.body as { conversationId: string; messageId: string };
    expect((await readMessageDoc(own.workspaceId, conversationId, messageId))?.providerMessageId).toBe(providerMessageId);
    const retry = await postJson(MESSAGES_PATH, body, { key: own.key });
    expect([retry.status, retry.body]).toEqual([200, { conversationId, messageId, duplicate: true }]);

    const before = await workspaceSnapshot(own);
    expectError(await postJson(MESSAGES_PATH, newMessage({ providerMessageId }), { key: own.key }), 409, 'provider_message_id_conflict');
    expectError(await postMultipart(MESSAGES_PATH, messageParts(newMessage({ providerMessageId }), [png(3, 3)]), { key: own.key }), 409, 'provider_message_id_conflict');
    // The eventId of the first with another providerMessageId is other content: event_conflict.
    expectError(await postJson(MESSAGES_PATH, { ...body, providerMessageId: `wamid.${randomUUID()}` }, { key: own.key }), 409, 'event_conflict');
    expect(await workspaceSnapshot(own)).toEqual(before);
    // Another integration may use the same id.
    const other = await createTestIntegration();
    expect((await postJson(MESSAGES_PATH, newMessage({ providerMessageId }), { key: other.key })).status).toBe(201);
  });

  test('two messages with one providerMessageId at once: exactly one is created', async () => {
    const providerMessageId = `wamid.${randomUUID()}`;
    const chat = `chat-${randomUUID()}`;
    const answers = await Promise.all([1, 2, 3].map(() => postJson(MESSAGES_PATH, newMessage({ providerMessageId, externalConversationId: chat }), { key: integ.key })));
    expect(answers.map((a) => a.status).sort()).toEqual([201, 409, 409]);
    const created = answers.find((a) => a.status === 201)?.body as { conversationId: string };
    expect(await listMessageDocs(integ.workspaceId, created.conversationId)).toHaveLength(1);
  });

  test('edited, reaction and deleted by the providerMessageId of a customer message: applied as by its eventId', async () => {
    const providerMessageId = `wamid.${randomUUID()}`;
    const sent = await sendMessage(integ, { providerMessageId, message: { text: 'Helo' } });
    const target = { providerMessageId };
    expectAnswer(await postEvent(integ, eventAbout(sent, { type: 'edited', target, text: 'Hello' })), 201, { applied: true, duplicate: false }, sent.conversationId);
    // The same text again changes nothing: 200 not applied, no second history entry.
    expectAnswer(await postEvent(integ, eventAbout(sent, { type: 'edited', target, text: 'Hello' })), 200, { applied: false, duplicate: false }, sent.conversationId);
    expectAnswer(await postEvent(integ, eventAbout(sent, { type: 'reaction', target, emoji: '👍' })), 201, { applied: true, duplicate: false });
    expectError(await postEvent(integ, eventAbout({ ...sent, senderExternalId: 'someone-else' }, { type: 'deleted', target })), 404, 'target_not_found');
    expectError(await postEvent(integ, eventAbout({ ...sent, externalConversationId: `chat-${randomUUID()}` }, { type: 'reaction', target, emoji: '👍' })), 404, 'target_not_found');
    const edited = await message(integ, sent);
    expect((edited?.edits as Array<{ text: string }>).map((e) => e.text)).toEqual(['Hello']);
    expect((edited?.reactions as Array<{ emoji: string }>).map((r) => r.emoji)).toEqual(['👍']);
    expectAnswer(await postEvent(integ, eventAbout(sent, { type: 'deleted', target })), 201, { applied: true, duplicate: false });
    expect(await message(integ, sent)).toMatchObject({ text: null, deleted: { at: expect.anything() }, reactions: [{ emoji: '👍' }] });
  });

  test('events by a providerMessageId not seen yet wait (202) and are applied, with those by its eventId, in the order received when the message arrives', async () => {
    const providerMessageId = `wamid.${randomUUID()}`;
    const body = newMessage({ providerMessageId, message: { text: 'original' } });
    const about = { externalConversationId: String(body.externalConversationId), senderExternalId: String(body.sender?.externalId) };
    expectAnswer(await postEvent(integ, eventAbout(about, { type: 'edited', target: { eventId: body.eventId }, text: 'one' })), 202, { applied: false, duplicate: false });
    expectAnswer(await postEvent(integ, eventAbout(about, { type: 'edited', target: { providerMessageId }, text: 'two' })), 202, { applied: false, duplicate: false });
    expectAnswer(await postEvent(integ, eventAbout(about, { type: 'reaction', target: { providerMessageId }, emoji: '🎉' })), 202, { applied: false, duplicate: false });
    const res = await postJson(MESSAGES_PATH, body, { key: integ.key });
    expect(res.status).toBe(201);
    const sent = res.body as { conversationId: string; messageId: string };
    const doc = await message(integ, sent);
    expect((doc?.edits as Array<{ text: string }>).map((e) => e.text)).toEqual(['one', 'two']);
    expect((doc?.reactions as Array<{ emoji: string }>).map((r) => r.emoji)).toEqual(['🎉']);
    for (const target of [{ eventId: String(body.eventId) }, { providerMessageId }]) {
      expect((await adminDb().doc(`workspaces/${integ.workspaceId}/pendingEvents/${pendingEventsIdFor(integ.integrationId, target)}`).get()).exists).toBe(false);
    }
  });

  test('an id naming a customer message and an operator reply is 409 ambiguous_target, nothing written; an edit by a reply id is 404', async () => {
    const setup = await file.ownConversation();
    const { integration } = setup;
    const reply = await replyAndNotify(setup, 'Here is your tracking link.');
    const providerId = `wamid.${randomUUID()}`;
    await deliverFully(integration.key, reply.deliveryId, [providerId]);
    const customer = { externalConversationId: setup.externalConversationId, senderExternalId: setup.customerId };
    // Once the trigger recorded the reply's id, a reaction by it finds its target: 201 applied, or 200
    // applied: false when an earlier probe's reaction (202, pending) was applied by the trigger meanwhile.
    await eventually(async () => {
      const res = await postEvent(integration, eventAbout(customer, { type: 'reaction', target: { providerMessageId: providerId }, emoji: '👀' }));
      return res.status === 201 || res.status === 200 ? true : undefined;
    }, 'the reply id recorded');
    expectError(await postEvent(integration, eventAbout(customer, { type: 'edited', target: { providerMessageId: providerId }, text: 'x' })), 404, 'target_not_found');

    const clash = await sendMessage(integration, { externalConversationId: setup.externalConversationId, sender: { externalId: setup.customerId }, providerMessageId: providerId });
    const before = await workspaceSnapshot(integration);
    const ambiguous = eventAbout(customer, { type: 'reaction', target: { providerMessageId: providerId }, emoji: '❤️' });
    expectError(await postEvent(integration, ambiguous), 409, 'ambiguous_target');
    expectError(await postEvent(integration, eventAbout(customer, { type: 'deleted', target: { providerMessageId: providerId } })), 409, 'ambiguous_target');
    expect(await workspaceSnapshot(integration)).toEqual(before);
    expect(await eventRecord(integration, String(ambiguous.eventId))).toBe(false);
    expectAnswer(await postEvent(integration, eventAbout(customer, { type: 'reaction', target: { eventId: clash.eventId }, emoji: '❤️' })), 201, { applied: true, duplicate: false });
  });

  test('typing in a chat the desk does not know: 200 not applied, no conversationId, nothing written', async () => {
    const own = await createTestIntegration();
    const check = await guardNoWrites(own);
    const typing = eventAbout({ externalConversationId: `chat-${randomUUID()}`, senderExternalId: 'cust' }, { type: 'typing' });
    const res = await postEvent(own, typing);
    expect([res.status, res.body]).toEqual([200, { applied: false, duplicate: false }]);
    await check();
  });
});
