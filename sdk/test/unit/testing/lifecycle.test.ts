/**
 * The test service after the send: the operator's edits and unsends of sent replies (capability,
 * window and state rules; deliveries of kind edit / unsend in conversation order with the claim
 * shapes of the contract; the reply's history), and the inbound events of POST /v1/messages/events
 * (applied / pending / ignored / duplicate / 409 / 404, pending ones applied when their target
 * arrives). Through real HTTP with the SDK's client; the service clock is a variable.
 */
import { ConnectorClient, type ProviderEditInput, type ProviderUnsendInput } from '../../../src/index.js';
import { startTestService, type CreatedIntegration, type TestService } from '../../../src/testing/index.js';

let clock = Date.parse('2026-01-01T00:00:00Z');
let service: TestService;
let integration: CreatedIntegration;
let client: ConnectorClient;

const LIFECYCLE = { edit: { windowSeconds: 900 }, unsend: { windowSeconds: 3600 } };
const CUSTOMER = { externalId: 'cust-1', displayName: 'Ada' };

beforeEach(async () => {
  clock = Date.parse('2026-01-01T00:00:00Z');
  service = await startTestService({ now: () => clock });
  integration = await service.createIntegration({ lifecycle: LIFECYCLE });
  client = new ConnectorClient({ integrationKey: integration.key, baseUrl: service.baseUrl, retry: 0 });
});
afterEach(() => service.close());

async function conversation(eventId = 'msg-1', text = 'Hello') {
  const sent = await client.messages.send({ eventId, externalConversationId: 'chat-1', sender: CUSTOMER, text });
  return sent.conversationId;
}

/** An operator reply, delivered by processDelivery with the given provider ids. */
async function sentReply(conversationId: string, ids: string[] = ['wamid.1'], text = 'Your order ships today') {
  const created = service.reply({ conversationId, text });
  const result = await client.processDelivery(created.deliveryId, () => ids);
  expect(result.kind).toBe('sent');
  return created;
}

const codeOf = (fn: () => unknown): unknown => {
  try {
    fn();
  } catch (error) {
    return (error as { code?: unknown }).code;
  }
  return 'no error';
};

describe('operator edits and unsends', () => {
  test('refused as the console rules refuse: no capability, not sent, window passed, bad text, unsent', async () => {
    const conversationId = await conversation();
    const queued = service.reply({ conversationId, text: 'not yet sent' });
    expect(codeOf(() => service.edit(queued.messageId, 'x'))).toBe('reply_not_sent');
    await client.processDelivery(queued.deliveryId, () => ['p-0']);
    expect(codeOf(() => service.edit(queued.messageId, ''))).toBe('invalid_edit');
    expect(codeOf(() => service.edit(queued.messageId, 'x'.repeat(10_001)))).toBe('invalid_edit');

    clock += 900_000 + 1;
    expect(codeOf(() => service.edit(queued.messageId, 'late'))).toBe('edit_window_passed');
    // The unsend window (1 h) is still open. Once an unsend is queued, no edit and no second unsend.
    const unsend = service.unsend(queued.messageId);
    clock -= 900_001;
    expect(codeOf(() => service.edit(queued.messageId, 'in time, but unsent'))).toBe('reply_unsent');
    expect(codeOf(() => service.unsend(queued.messageId))).toBe('reply_unsent');
    clock += 900_001;
    await client.processDelivery(unsend.deliveryId, { send: () => ['x'], unsend: () => undefined });
    expect(codeOf(() => service.unsend(queued.messageId))).toBe('reply_unsent');

    service.setCapabilities(integration.integrationId, { lifecycle: {} });
    const other = await sentReply(conversationId, ['p-1']);
    expect(codeOf(() => service.edit(other.messageId, 'x'))).toBe('lifecycle_disabled');
    // A malformed window counts as no capability.
    service.setCapabilities(integration.integrationId, { lifecycle: { edit: { windowSeconds: 59 } } });
    expect(codeOf(() => service.edit(other.messageId, 'x'))).toBe('lifecycle_disabled');
  });

  test('an edit: a delivery of kind edit, notified with the attribute kind, claimed with kind, the new text and the target; a plain claim keeps its v1 shape', async () => {
    const conversationId = await conversation();
    const subscription = service.subscription(integration.integrationId);
    const attributes: Record<string, string>[] = [];
    subscription.on('message', (m) => {
      const message = m as { attributes: Record<string, string>; ack(): void };
      attributes.push(message.attributes);
      message.ack();
    });
    const reply = service.reply({ conversationId, text: 'Your order ships today' });
    const plain = await client.deliveries.claim({ deliveryId: reply.deliveryId });
    expect(Object.keys(plain).sort()).toEqual(['leaseExpiresAt', 'leaseId', 'message', 'status']);
    if (plain.status !== 'ready') throw new Error('not ready');
    await client.deliveries.start({ deliveryId: reply.deliveryId, leaseId: plain.leaseId });
    await client.deliveries.complete({ deliveryId: reply.deliveryId, leaseId: plain.leaseId, providerMessageIds: ['wamid.1', 'wamid.2'] });

    const edit = service.edit(reply.messageId, 'Your order ships tomorrow');
    expect(edit.messageId).toBe(reply.messageId);
    expect(edit.deliveryId).not.toBe(reply.deliveryId);
    const claim = await client.deliveries.claim({ deliveryId: edit.deliveryId });
    expect(claim).toEqual({
      status: 'ready',
      kind: 'edit',
      leaseId: expect.any(String),
      leaseExpiresAt: clock + 120_000,
      message: { text: 'Your order ships tomorrow', recipient: { externalConversationId: 'chat-1', externalCustomerId: 'cust-1' } },
      target: { deliveryId: reply.deliveryId, providerMessageIds: ['wamid.1', 'wamid.2'] },
    });
    await service.waitFor(() => attributes.length === 2);
    expect(attributes[0]).not.toHaveProperty('kind');
    expect(attributes[1]).toMatchObject({ deliveryId: edit.deliveryId, kind: 'edit' });
    expect(service.deliveries({ conversationId }).find((d) => d.deliveryId === edit.deliveryId)).toMatchObject({ kind: 'edit', messageId: reply.messageId, target: { deliveryId: reply.deliveryId } });
    await subscription.close();
  });

  test('processDelivery runs edit and unsend with the target; the reply keeps its text and shows its history and unsent', async () => {
    const conversationId = await conversation();
    const reply = await sentReply(conversationId, ['wamid.1']);
    const sentAt = clock;
    clock += 1000;
    const edits: ProviderEditInput[] = [];
    const unsends: ProviderUnsendInput[] = [];
    const provider = { send: () => ['never'], edit: (input: ProviderEditInput) => void edits.push(input), unsend: (input: ProviderUnsendInput) => void unsends.push(input) };

    const first = service.edit(reply.messageId, 'fixed once');
    const second = service.edit(reply.messageId, 'fixed twice', { uid: 'member-2' });
    expect(first.deliveryId).not.toBe(second.deliveryId);
    // Two edits requested together: two ordered deliveries, the second waits for the first.
    await expect(client.processDelivery(second.deliveryId, provider)).resolves.toMatchObject({ kind: 'skipped', reason: 'waiting_for_previous' });
    await expect(client.processDelivery(first.deliveryId, provider)).resolves.toMatchObject({ kind: 'sent', deliveryKind: 'edit', providerMessageIds: ['wamid.1'] });
    await expect(client.processDelivery(second.deliveryId, provider)).resolves.toMatchObject({ kind: 'sent', deliveryKind: 'edit' });
    expect(edits.map((e) => [e.text, e.target.providerMessageIds])).toEqual([
      ['fixed once', ['wamid.1']],
      ['fixed twice', ['wamid.1']],
    ]);
    const unsend = service.unsend(reply.messageId);
    await expect(client.processDelivery(unsend.deliveryId, provider)).resolves.toMatchObject({ kind: 'sent', deliveryKind: 'unsend', providerMessageIds: ['wamid.1'] });
    expect(unsends).toHaveLength(1);

    const [view] = service.replies({ conversationId });
    expect(view).toMatchObject({
      messageId: reply.messageId,
      text: 'Your order ships today',
      delivery: { deliveryId: reply.deliveryId, status: 'sent', sentAt },
      edits: [
        { text: 'fixed once', requestedAt: sentAt + 1000, uid: 'operator', deliveryId: first.deliveryId, status: 'sent', at: clock },
        { text: 'fixed twice', requestedAt: sentAt + 1000, uid: 'member-2', deliveryId: second.deliveryId, status: 'sent', at: clock },
      ],
      unsends: [{ deliveryId: unsend.deliveryId, status: 'sent', at: clock }],
      unsent: { at: clock },
    });
    // The reply's own delivery is untouched by its edits.
    expect(service.deliveries({ conversationId }).find((d) => d.deliveryId === reply.deliveryId)?.providerMessageIds).toEqual(['wamid.1']);
  });

  test('conversation order: an edit waits behind an unfinished earlier reply, and a later reply waits behind the edit', async () => {
    const conversationId = await conversation();
    const first = await sentReply(conversationId);
    const pending = service.reply({ conversationId, text: 'second reply, not sent yet' });
    const edit = service.edit(first.messageId, 'edited first reply');
    const later = service.reply({ conversationId, text: 'third reply' });
    const provider = { send: () => ['p'], edit: () => undefined };
    await expect(client.processDelivery(edit.deliveryId, provider)).resolves.toMatchObject({ kind: 'skipped', reason: 'waiting_for_previous' });
    await expect(client.processDelivery(pending.deliveryId, provider)).resolves.toMatchObject({ kind: 'sent' });
    await expect(client.processDelivery(later.deliveryId, provider)).resolves.toMatchObject({ kind: 'skipped', reason: 'waiting_for_previous' });
    await expect(client.processDelivery(edit.deliveryId, provider)).resolves.toMatchObject({ kind: 'sent', deliveryKind: 'edit' });
    await expect(client.processDelivery(later.deliveryId, provider)).resolves.toMatchObject({ kind: 'sent' });
  });

  test('a connector without an edit callback fails the edit unsupported_kind; the history shows it', async () => {
    const conversationId = await conversation();
    const reply = await sentReply(conversationId);
    const edit = service.edit(reply.messageId, 'new text');
    await expect(client.processDelivery(edit.deliveryId, () => ['p'])).resolves.toMatchObject({ kind: 'failed', code: 'unsupported_kind' });
    expect(service.replies({ conversationId })[0]?.edits).toEqual([
      { text: 'new text', requestedAt: clock, uid: 'operator', deliveryId: edit.deliveryId, status: 'failed', at: clock, error: { outcome: 'failed', code: 'unsupported_kind' } },
    ]);
    // Started never: the rules checker has nothing to say.
    expect(service.violations()).toEqual([]);
  });
});

describe('POST /v1/messages/events', () => {
  test('edit and delete of the sender own message: applied; the original text kept, the tombstone; then ignored; a retry is a duplicate', async () => {
    const conversationId = await conversation('msg-1', 'Helo');
    const edited = await client.messages.edit({ eventId: 'ev-1', externalConversationId: 'chat-1', sender: CUSTOMER, target: { eventId: 'msg-1' }, text: 'Hello' });
    expect(edited).toEqual({ conversationId, applied: true, duplicate: false, outcome: 'applied', eventId: 'ev-1' });
    expect(service.messages({ conversationId })[0]).toMatchObject({ text: 'Helo', edits: [{ text: 'Hello', at: clock }] });
    const again = await client.messages.edit({ eventId: 'ev-1', externalConversationId: 'chat-1', sender: CUSTOMER, target: { eventId: 'msg-1' }, text: 'Hello' });
    expect(again).toMatchObject({ applied: true, duplicate: true, outcome: 'duplicate' });

    await expect(client.messages.delete({ eventId: 'ev-2', externalConversationId: 'chat-1', sender: CUSTOMER, target: { eventId: 'msg-1' } })).resolves.toMatchObject({ outcome: 'applied' });
    const [tombstone] = service.messages({ conversationId });
    expect(tombstone).toMatchObject({ deleted: { at: clock }, edits: [], images: [] });
    expect(tombstone).not.toHaveProperty('text');
    await expect(client.messages.edit({ eventId: 'ev-3', externalConversationId: 'chat-1', sender: CUSTOMER, target: { eventId: 'msg-1' }, text: 'too late' })).resolves.toMatchObject({
      applied: false,
      duplicate: false,
      outcome: 'ignored',
    });
  });

  test('409 event_conflict: other content under an eventId, an event reusing a message eventId, a message reusing an event eventId', async () => {
    await conversation('msg-1');
    await client.messages.react({ eventId: 'ev-1', externalConversationId: 'chat-1', sender: CUSTOMER, target: { eventId: 'msg-1' }, emoji: '👍' });
    await expect(client.messages.react({ eventId: 'ev-1', externalConversationId: 'chat-1', sender: CUSTOMER, target: { eventId: 'msg-1' }, emoji: '🎉' })).rejects.toMatchObject({ status: 409, code: 'event_conflict' });
    await expect(client.messages.typing({ eventId: 'msg-1', externalConversationId: 'chat-1', sender: CUSTOMER })).rejects.toMatchObject({ status: 409, code: 'event_conflict' });
    await expect(client.messages.send({ eventId: 'ev-1', externalConversationId: 'chat-1', sender: CUSTOMER, text: 'x' })).rejects.toMatchObject({ status: 409, code: 'event_conflict' });
  });

  test('404 target_not_found: another sender, an alert, another conversation, an event; nothing written', async () => {
    const conversationId = await conversation('msg-1');
    await client.messages.send({ eventId: 'alert-1', externalConversationId: 'chat-1', sender: { externalId: 'monitor', kind: 'service' }, text: 'Disk full' });
    await client.messages.send({ eventId: 'other-chat', externalConversationId: 'chat-2', sender: CUSTOMER, text: 'elsewhere' });
    const base = { externalConversationId: 'chat-1', sender: CUSTOMER };
    await expect(client.messages.edit({ ...base, sender: { externalId: 'cust-2' }, target: { eventId: 'msg-1' }, text: 'x' })).rejects.toMatchObject({ status: 404, code: 'target_not_found' });
    await expect(client.messages.delete({ ...base, target: { eventId: 'alert-1' } })).rejects.toMatchObject({ code: 'target_not_found' });
    await expect(client.messages.react({ ...base, target: { eventId: 'other-chat' }, emoji: '👍' })).rejects.toMatchObject({ code: 'target_not_found' });
    await client.messages.typing({ ...base, eventId: 'ev-typing' });
    await expect(client.messages.react({ ...base, target: { eventId: 'ev-typing' }, emoji: '👍' })).rejects.toMatchObject({ code: 'target_not_found' });
    // A reaction on an alert is fine.
    await expect(client.messages.react({ ...base, target: { eventId: 'alert-1' }, emoji: '👀' })).resolves.toMatchObject({ outcome: 'applied' });
    expect(service.messages({ conversationId }).find((m) => m.eventId === 'msg-1')).toMatchObject({ edits: [], reactions: [] });
  });

  test('an event that overtakes its message: 202 pending, applied in order when the message arrives', async () => {
    const base = { externalConversationId: 'chat-1', sender: CUSTOMER };
    await expect(client.messages.edit({ ...base, eventId: 'ev-1', target: { eventId: 'late-msg' }, text: 'edited' })).resolves.toMatchObject({ applied: false, outcome: 'pending' });
    clock += 10;
    await expect(client.messages.react({ ...base, eventId: 'ev-2', target: { eventId: 'late-msg' }, emoji: '👍' })).resolves.toMatchObject({ outcome: 'pending' });
    await expect(client.messages.edit({ ...base, eventId: 'ev-1', target: { eventId: 'late-msg' }, text: 'edited' })).resolves.toMatchObject({ applied: false, duplicate: true });
    clock += 10;
    const conversationId = await conversation('late-msg', 'original');
    expect(service.messages({ conversationId })[0]).toMatchObject({
      text: 'original',
      edits: [{ text: 'edited', at: clock - 20 }],
      reactions: [{ emoji: '👍', senderExternalId: 'cust-1', at: clock - 10 }],
    });
  });

  test('reactions on an operator reply by provider id: pending until the reply is sent with that id, removable, one per sender and emoji', async () => {
    const conversationId = await conversation();
    const base = { externalConversationId: 'chat-1', sender: CUSTOMER };
    await expect(client.messages.react({ ...base, target: { providerMessageId: 'wamid.7' }, emoji: '👍' })).resolves.toMatchObject({ outcome: 'pending' });
    await sentReply(conversationId, ['wamid.7']);
    expect(service.replies({ conversationId })[0]?.reactions).toEqual([{ emoji: '👍', senderExternalId: 'cust-1', at: clock }]);
    await client.messages.react({ ...base, target: { providerMessageId: 'wamid.7' }, emoji: '👍' });
    expect(service.replies({ conversationId })[0]?.reactions).toHaveLength(1);
    await expect(client.messages.react({ ...base, target: { providerMessageId: 'wamid.7' }, emoji: '👍', removed: true })).resolves.toMatchObject({ outcome: 'applied' });
    expect(service.replies({ conversationId })[0]?.reactions).toEqual([]);
  });

  test('typing: stored for a minute by the service clock; 400 names the field a type does not take or lacks', async () => {
    const conversationId = await conversation();
    await client.messages.typing({ externalConversationId: 'chat-1', sender: CUSTOMER });
    expect(service.typing()).toEqual([{ conversationId, integrationId: integration.integrationId, senderExternalId: 'cust-1', displayName: 'Ada', at: clock, expireAt: clock + 60_000 }]);
    clock += 60_000;
    expect(service.typing()).toEqual([]);

    const post = async (body: unknown) => {
      const res = await fetch(`${service.baseUrl}/v1/messages/events`, { method: 'POST', headers: { authorization: `Bearer ${integration.key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return { status: res.status, body: (await res.json()) as { error?: { code: string; message: string } } };
    };
    const base = { eventId: 'e', externalConversationId: 'chat-1', sender: CUSTOMER };
    const textOnTyping = await post({ ...base, type: 'typing', text: 'x' });
    expect([textOnTyping.status, textOnTyping.body.error?.code]).toEqual([400, 'invalid_request']);
    expect(textOnTyping.body.error?.message).toContain("text: not allowed for type 'typing'");
    expect((await post({ ...base, type: 'edited', target: { eventId: 'm' } })).body.error?.message).toContain("text: required for type 'edited'");
    expect((await post({ ...base, type: 'deleted', target: {} })).body.error?.message).toContain('target.eventId: required (or target.providerMessageId)');
    expect((await post({ ...base, type: 'reaction', target: { eventId: 'm' }, emoji: '👍👍' })).body.error?.message).toContain('emoji:');
    expect((await post({ ...base, type: 'reaction', target: { eventId: 'm' }, emoji: '👍', extra: 1 })).status).toBe(400);
  });

  test('the erasure of a customer takes their reactions elsewhere and their typing', async () => {
    const conversationId = await conversation('msg-1');
    const reply = await sentReply(conversationId, ['wamid.1']);
    const other = { externalId: 'cust-2' };
    await client.messages.send({ eventId: 'msg-2', externalConversationId: 'chat-1', sender: other, text: 'me too' });
    await client.messages.react({ externalConversationId: 'chat-1', sender: other, target: { eventId: 'msg-1' }, emoji: '👍' });
    await client.messages.react({ externalConversationId: 'chat-1', sender: other, target: { providerMessageId: 'wamid.1' }, emoji: '❤️' });
    await client.messages.typing({ externalConversationId: 'chat-1', sender: other });
    service.erase(integration.integrationId, 'cust-2');
    expect(service.messages({ conversationId }).find((m) => m.eventId === 'msg-1')?.reactions).toEqual([]);
    expect(service.replies({ conversationId }).find((r) => r.messageId === reply.messageId)?.reactions).toEqual([]);
    expect(service.typing()).toEqual([]);
  });
});
