/**
 * client.messages.edit / delete / react / typing: one POST /v1/messages/events each, with its
 * `type` and only the fields of that type; the eventId generated once per call and reused on the
 * retries; the answer read as applied / pending / ignored / duplicate. Against a fake server over
 * real HTTP; retries wait on a fake sleep.
 */
import { BadRequestError, ConflictError, ConnectorClient, NotFoundError } from '../../src/index.js';
import { errorReply, fakeSleep, KEY, reply, startServer, type TestServer } from './helpers/server.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const SENDER = { externalId: 'cust-1', displayName: 'Ada' };
const BASE = { externalConversationId: 'chat-1', sender: SENDER };

let server: TestServer;
let delays: number[];
let client: ConnectorClient;
beforeEach(async () => {
  server = await startServer((_req, res) => reply(res, 201, { conversationId: 'c_1', applied: true, duplicate: false }));
  const s = fakeSleep();
  delays = s.delays;
  client = new ConnectorClient({ integrationKey: KEY, baseUrl: server.url, sleep: s.sleep });
});
afterEach(async () => {
  await server.close();
});

const sent = (i = 0): unknown => server.requests[i]?.json;

describe('the four events: path, type and fields', () => {
  test('edit: type edited, target.eventId, text', async () => {
    const result = await client.messages.edit({ eventId: 'ev-edit-1', ...BASE, target: { eventId: 'msg-1' }, text: 'Fixed typo' });
    expect(result).toEqual({ conversationId: 'c_1', applied: true, duplicate: false, outcome: 'applied', eventId: 'ev-edit-1' });
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]?.path).toBe('/v1/messages/events');
    expect(server.requests[0]?.headers['content-type']).toMatch(/^application\/json/);
    expect(sent()).toEqual({ eventId: 'ev-edit-1', externalConversationId: 'chat-1', sender: SENDER, type: 'edited', target: { eventId: 'msg-1' }, text: 'Fixed typo' });
  });

  test('delete: type deleted and the target only', async () => {
    await client.messages.delete({ eventId: 'ev-del-1', ...BASE, target: { eventId: 'msg-1' } });
    expect(sent()).toEqual({ eventId: 'ev-del-1', externalConversationId: 'chat-1', sender: SENDER, type: 'deleted', target: { eventId: 'msg-1' } });
  });

  test("edit and delete by the channel's id: target.providerMessageId as given", async () => {
    await client.messages.edit({ eventId: 'ev-edit-2', ...BASE, target: { providerMessageId: 'wamid.7' }, text: 'Fixed' });
    await client.messages.delete({ eventId: 'ev-del-2', ...BASE, target: { providerMessageId: 'wamid.7' } });
    expect(sent(0)).toEqual({ eventId: 'ev-edit-2', externalConversationId: 'chat-1', sender: SENDER, type: 'edited', target: { providerMessageId: 'wamid.7' }, text: 'Fixed' });
    expect(sent(1)).toEqual({ eventId: 'ev-del-2', externalConversationId: 'chat-1', sender: SENDER, type: 'deleted', target: { providerMessageId: 'wamid.7' } });
  });

  test('react: by eventId or by a provider id of a reply; removed only when true', async () => {
    await client.messages.react({ eventId: 'ev-r-1', ...BASE, target: { eventId: 'msg-1' }, emoji: '👍' });
    await client.messages.react({ eventId: 'ev-r-2', ...BASE, target: { providerMessageId: 'wamid.9' }, emoji: '❤️', removed: true });
    await client.messages.react({ eventId: 'ev-r-3', ...BASE, target: { providerMessageId: 'wamid.9' }, emoji: '❤️', removed: false });
    expect(sent(0)).toEqual({ eventId: 'ev-r-1', externalConversationId: 'chat-1', sender: SENDER, type: 'reaction', target: { eventId: 'msg-1' }, emoji: '👍' });
    expect(sent(1)).toEqual({ eventId: 'ev-r-2', externalConversationId: 'chat-1', sender: SENDER, type: 'reaction', target: { providerMessageId: 'wamid.9' }, emoji: '❤️', removed: true });
    expect(sent(2)).toEqual({ eventId: 'ev-r-3', externalConversationId: 'chat-1', sender: SENDER, type: 'reaction', target: { providerMessageId: 'wamid.9' }, emoji: '❤️' });
  });

  test('typing: nothing but who and where; an eventId is generated (a UUID) when omitted', async () => {
    const result = await client.messages.typing(BASE);
    expect(result.eventId).toMatch(UUID);
    expect(sent()).toEqual({ eventId: result.eventId, externalConversationId: 'chat-1', sender: SENDER, type: 'typing' });
  });
});

describe('answers', () => {
  test.each([
    [201, { conversationId: 'c_1', applied: true, duplicate: false }, 'applied'],
    [202, { conversationId: 'c_1', applied: false, duplicate: false }, 'pending'],
    [200, { conversationId: 'c_1', applied: false, duplicate: false }, 'ignored'],
    [200, { conversationId: 'c_1', applied: true, duplicate: true }, 'duplicate'],
    [200, { conversationId: 'c_1', applied: false, duplicate: true }, 'duplicate'],
  ])('%i %j -> outcome %s', async (status, answer, outcome) => {
    server.setHandler((_req, res) => reply(res, status, answer));
    await expect(client.messages.edit({ eventId: 'e1', ...BASE, target: { eventId: 'm' }, text: 'x' })).resolves.toEqual({ ...answer, outcome, eventId: 'e1' });
  });

  test('409 event_conflict, 404 target_not_found and 400 are thrown as the typed errors, never retried', async () => {
    server.setHandler((_req, res) => errorReply(res, 409, 'event_conflict'));
    await expect(client.messages.delete({ eventId: 'e1', ...BASE, target: { eventId: 'm' } })).rejects.toBeInstanceOf(ConflictError);
    server.setHandler((_req, res) => errorReply(res, 404, 'target_not_found'));
    await expect(client.messages.react({ eventId: 'e2', ...BASE, target: { eventId: 'm' }, emoji: '👍' })).rejects.toMatchObject({ code: 'target_not_found' });
    await expect(client.messages.react({ eventId: 'e2', ...BASE, target: { eventId: 'm' }, emoji: '👍' })).rejects.toBeInstanceOf(NotFoundError);
    server.setHandler((_req, res) => errorReply(res, 400, 'invalid_request'));
    await expect(client.messages.typing({ eventId: 'e3', ...BASE })).rejects.toBeInstanceOf(BadRequestError);
    expect(server.requests).toHaveLength(4);
  });

  test('a 503 is retried after Retry-After with the same eventId and body (the generated one too)', async () => {
    server.setHandler((_req, res, n) => (n === 0 ? errorReply(res, 503, 'temporarily_unavailable', undefined, { 'Retry-After': '2' }) : reply(res, 202, { conversationId: 'c_1', applied: false, duplicate: false })));
    const result = await client.messages.react({ ...BASE, target: { eventId: 'not-yet' }, emoji: '🎉' });
    expect(result.outcome).toBe('pending');
    expect(server.requests).toHaveLength(2);
    expect(delays).toEqual([2000]);
    expect(sent(1)).toEqual(sent(0));
    expect((sent(0) as { eventId: string }).eventId).toBe(result.eventId);
  });

  test('typing in a chat the desk does not know: 200 without a conversationId is ignored, the result has none', async () => {
    server.setHandler((_req, res) => reply(res, 200, { applied: false, duplicate: false }));
    const result = await client.messages.typing({ eventId: 'e-t', ...BASE });
    expect(result).toEqual({ applied: false, duplicate: false, outcome: 'ignored', eventId: 'e-t' });
    expect('conversationId' in result).toBe(false);
  });

  test('an edit, deletion or reaction answered without a conversationId is an UnexpectedResponseError (only typing may have none)', async () => {
    server.setHandler((_req, res) => reply(res, 200, { applied: false, duplicate: false }));
    await expect(client.messages.react({ eventId: 'e', ...BASE, target: { eventId: 'm' }, emoji: '👍' })).rejects.toMatchObject({ name: 'UnexpectedResponseError' });
  });

  test('an answer without the documented fields is an UnexpectedResponseError', async () => {
    server.setHandler((_req, res) => reply(res, 201, { conversationId: 'c_1' }));
    await expect(client.messages.typing({ eventId: 'e', ...BASE })).rejects.toMatchObject({ name: 'UnexpectedResponseError' });
  });
});

describe('bad input is refused before any request', () => {
  test.each([
    ['edit without a target', () => client.messages.edit({ ...BASE, text: 'x' } as never), 'messages.edit: target is required'],
    ['edit by a numeric provider id', () => client.messages.edit({ ...BASE, target: { providerMessageId: 7 }, text: 'x' } as never), 'messages.edit: target is { eventId } or { providerMessageId }'],
    ['edit without text', () => client.messages.edit({ ...BASE, target: { eventId: 'm' } } as never), 'messages.edit: text is required'],
    ['delete with both ids', () => client.messages.delete({ ...BASE, target: { eventId: 'm', providerMessageId: 'p' } } as never), 'messages.delete: target is { eventId }'],
    ['react without emoji', () => client.messages.react({ ...BASE, target: { eventId: 'm' } } as never), 'messages.react: emoji is required'],
    ['typing without a sender', () => client.messages.typing({ externalConversationId: 'c' } as never), 'messages.typing: sender is required'],
  ])('%s', async (_name, call, message) => {
    await expect(call()).rejects.toThrow(message);
    expect(server.requests).toHaveLength(0);
  });
});

test('ConflictError is what a reused message eventId gives (the one eventId space)', async () => {
  server.setHandler((_req, res) => errorReply(res, 409, 'event_conflict', "eventId 'msg-1' was already used with different content."));
  await expect(client.messages.edit({ eventId: 'msg-1', ...BASE, target: { eventId: 'msg-1' }, text: 'x' })).rejects.toMatchObject({ status: 409, code: 'event_conflict' });
});
