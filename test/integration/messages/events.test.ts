/**
 * POST /v1/messages/events (docs/contract.md#message-events), through real HTTP on the emulators:
 * every per-type field rule (400 naming the field, nothing written), each type applied (201), an
 * event that waits for its target (202) and is applied when the target arrives, an edit of a
 * deleted message (200, not applied), duplicates and conflicts in the eventId space shared with
 * messages (both ways), 404 `target_not_found`, reactions on operator replies by provider message
 * id (one pending until the reply is completed), typing with its `expireAt`, and the key, rate
 * limit and body limits as `/v1/messages`.
 */
import { randomUUID } from 'node:crypto';
import type { DocumentData } from 'firebase-admin/firestore';
import { expectError, guardNoWrites } from '../helpers/assertions';
import { MESSAGES_PATH, newMessage, readMessageDoc } from '../helpers/messages';
import { closeStack, createTestIntegration, postJson, postMultipart, messageParts, type ApiResponse, type TestIntegration } from '../helpers/stack';
import { closePubSub } from '../helpers/deliveries';

jest.setTimeout(90_000);
afterAll(async () => {
  await closePubSub();
  await closeStack();
});

const EVENTS_PATH = '/v1/messages/events';

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
    ['edited by provider message id', { type: 'edited', target: { providerMessageId: 'p1' }, text: 'x' }, 'target.providerMessageId: not allowed'],
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
