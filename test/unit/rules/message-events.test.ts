/**
 * The reaction rule of message events (functions/src/rules/message-events.ts `applyEvent`), on the
 * service's module and (project rules-sdk) on the SDK's copy that its test service runs.
 */
import { applyEvent, type TargetMessage } from '../../../functions/src/rules/message-events';

const message = (reactions: TargetMessage['reactions'] = []): TargetMessage => ({ direction: 'inbound', kind: 'message', senderExternalId: 'cust-1', text: 'hello', deleted: false, edits: [], reactions, images: [] });
const react = (emoji: string, removed = false) => ({ type: 'reaction' as const, senderExternalId: 'cust-1', emoji, removed });

describe('a reaction that changes nothing is ignored, not applied', () => {
  test('a new reaction is applied; the same again is ignored (no_change), the first one kept', () => {
    const added = applyEvent(message(), react('👍'), 1000);
    expect(added).toEqual({ kind: 'applied', fields: { reactions: [{ emoji: '👍', senderExternalId: 'cust-1', at: 1000 }] }, removedImages: [] });
    expect(applyEvent(message([{ emoji: '👍', senderExternalId: 'cust-1', at: 1000 }]), react('👍'), 2000)).toEqual({ kind: 'ignored', code: 'no_change' });
  });

  test('taking back a reaction is applied; taking back one that is not there is ignored (no_change)', () => {
    expect(applyEvent(message([{ emoji: '👍', senderExternalId: 'cust-1', at: 1000 }]), react('👍', true), 2000)).toEqual({ kind: 'applied', fields: { reactions: [] }, removedImages: [] });
    expect(applyEvent(message([{ emoji: '👍', senderExternalId: 'other', at: 1000 }]), react('👍', true), 2000)).toEqual({ kind: 'ignored', code: 'no_change' });
  });

  test('a deleted target ignores a reaction as deleted, whatever it would change', () => {
    expect(applyEvent({ ...message(), deleted: true }, react('👍'), 1000)).toEqual({ kind: 'ignored', code: 'target_deleted' });
  });
});

describe('an edit that changes nothing is ignored, not applied', () => {
  const edit = (text: string) => ({ type: 'edited' as const, senderExternalId: 'cust-1', text });
  test('the text the message came with, or its latest edit, again: ignored (no_change); another text is applied', () => {
    expect(applyEvent(message(), edit('hello'), 1000)).toEqual({ kind: 'ignored', code: 'no_change' });
    const edited = { ...message(), edits: [{ text: 'hello!', at: 1000 }] };
    expect(applyEvent(edited, edit('hello!'), 2000)).toEqual({ kind: 'ignored', code: 'no_change' });
    // Back to the original text is a change: the desk shows 'hello!' now.
    expect(applyEvent(edited, edit('hello'), 2000)).toEqual({ kind: 'applied', fields: { edits: [{ text: 'hello!', at: 1000 }, { text: 'hello', at: 2000 }] }, removedImages: [] });
  });

  test('a message that came with images only takes any text as an edit', () => {
    expect(applyEvent({ ...message(), text: null }, edit('caption'), 1000)).toMatchObject({ kind: 'applied' });
  });
});
