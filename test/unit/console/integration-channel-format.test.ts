/**
 * console/src/integration-channel-format.ts: the stored `channel` as the card reads it (defensively: the
 * service writes it, an older or broken document must still render) and the window in words.
 */
import { channelWindowText, readChannel } from '../../../console/src/integration-channel-format';

test('reads the stored channel; no channel field is "not declared"', () => {
  const stored = { window: { seconds: 86_400 }, templates: [{ name: 'order_update', language: 'en-US', params: [{ name: 'order' }], preview: 'Your order {{order}} has shipped.' }], updatedAt: 1 };
  expect(readChannel(stored)).toEqual({ windowSeconds: 86_400, templates: [{ name: 'order_update', language: 'en-US', params: [{ name: 'order' }], preview: 'Your order {{order}} has shipped.' }] });
  expect(readChannel({ templates: [{ name: 'a', language: 'en', params: [{ name: 'x', maxLength: 20 }, 'junk'], preview: '{{x}}' }] })?.templates[0]?.params).toEqual([{ name: 'x', maxLength: 20 }, { name: '' }]);
  expect(readChannel(undefined)).toBeUndefined();
  expect(readChannel({ window: null, templates: 'broken' })).toEqual({ windowSeconds: null, templates: [] });
});

test('the window in words', () => {
  expect(channelWindowText({ windowSeconds: 86_400, templates: [] })).toBe("Free-text replies within 1 day of the customer's latest message.");
  expect(channelWindowText({ windowSeconds: 5400, templates: [] })).toBe("Free-text replies within 1 h 30 min of the customer's latest message.");
  expect(channelWindowText({ windowSeconds: null, templates: [] })).toBe('No reply window declared.');
});
