/**
 * Targets by the channel's id (functions/src/rules/targets.ts) and what a providerMessageId does to
 * a message's fingerprint (rules/fingerprint.ts), on the service's modules and (project rules-sdk)
 * on the SDK's copies that its test service runs.
 */
import { resolveProviderTarget } from '../../../functions/src/rules/targets';
import { fingerprint } from '../../../functions/src/rules/fingerprint';
import { messageEventProblems } from '../../../functions/src/rules/message-events';

const customer = { conversationId: 'c_1', messageId: 'm_customer' };
const reply = { conversationId: 'c_1', messageId: 'm_reply' };

describe('resolveProviderTarget', () => {
  test('found on one side: that message, named with its side', () => {
    expect(resolveProviderTarget(customer, undefined)).toEqual({ kind: 'found', side: 'inbound', location: customer });
    expect(resolveProviderTarget(undefined, reply)).toEqual({ kind: 'found', side: 'reply', location: reply });
  });
  test('on both sides: ambiguous, neither side wins (whatever their conversations)', () => {
    expect(resolveProviderTarget(customer, reply)).toEqual({ kind: 'ambiguous' });
    expect(resolveProviderTarget(customer, { ...reply, conversationId: 'c_2' })).toEqual({ kind: 'ambiguous' });
  });
  test('on neither side: absent (the event waits for it)', () => {
    expect(resolveProviderTarget(undefined, undefined)).toEqual({ kind: 'absent' });
  });
});

describe('a message fingerprint and its providerMessageId', () => {
  const base = { externalConversationId: 'chat', sender: { externalId: 'cust', displayName: null, kind: 'customer' as const }, text: 'hi', images: [] };
  test('absent, the fingerprint is the one messages had before the field existed', () => {
    // Pinned: the fingerprint of this message as recorded before providerMessageId was added (v1 canonical document).
    expect(fingerprint(base)).toBe('75bb20ba890bdf6c1c4cbd2d2505fac2abfdc0ea41aeaee9aa01ea13a3534c4c');
    expect(fingerprint({ ...base, providerMessageId: undefined })).toBe('75bb20ba890bdf6c1c4cbd2d2505fac2abfdc0ea41aeaee9aa01ea13a3534c4c');
  });
  test('given, it is content: another id is another fingerprint', () => {
    expect(fingerprint({ ...base, providerMessageId: 'wamid.1' })).not.toBe(fingerprint(base));
    expect(fingerprint({ ...base, providerMessageId: 'wamid.1' })).not.toBe(fingerprint({ ...base, providerMessageId: 'wamid.2' }));
  });
});

describe('every event type with a target takes a providerMessageId', () => {
  test.each([
    ['edited', { type: 'edited' as const, target: { providerMessageId: 'p' }, text: 'x' }],
    ['deleted', { type: 'deleted' as const, target: { providerMessageId: 'p' } }],
    ['reaction', { type: 'reaction' as const, target: { providerMessageId: 'p' }, emoji: '👍' }],
  ])('%s', (_name, event) => {
    expect(messageEventProblems(event)).toEqual([]);
  });
});
