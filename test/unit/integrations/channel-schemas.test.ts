/**
 * functions/src/integrations/channel-schemas.ts: the `PUT /v1/channel` body's formats and limits,
 * and the 400 each refusal is (`invalid_request`, naming the field) through `parseOrThrow`.
 */
import { ChannelUpdateSchema } from '../../../functions/src/integrations/channel-schemas';
import { parseOrThrow } from '../../../functions/src/platform/schema';

const template = { name: 'order_update', language: 'en-US', params: [{ name: 'order' }], preview: 'Order {{order}}' };

/** The 400's message for `body`, or null when it is accepted. */
function refusal(body: unknown): string | null {
  try {
    parseOrThrow(ChannelUpdateSchema, body);
    return null;
  } catch (err) {
    expect(err).toMatchObject({ status: 400, code: 'invalid_request' });
    return (err as Error).message;
  }
}

test.each([
  ['the window below a minute', { window: { seconds: 59 } }, 'window.seconds'],
  ['the window above seven days', { window: { seconds: 604_801 } }, 'window.seconds'],
  ['a fractional window', { window: { seconds: 86_400.5 } }, 'window.seconds'],
  ['an unknown property', { window: null, channel: 'whatsapp' }, "body: unknown property 'channel'"],
  ['neither field', {}, 'body: must name window, templates or both'],
  ['201 templates', { templates: Array.from({ length: 201 }, (_, i) => ({ ...template, name: `t${i}` })) }, 'templates'],
  ['21 params', { templates: [{ ...template, params: Array.from({ length: 21 }, (_, i) => ({ name: `p${i}` })), preview: Array.from({ length: 21 }, (_, i) => `{{p${i}}}`).join(' ') }] }, 'templates[0].params'],
  ['an upper-case template name', { templates: [{ ...template, name: 'Order' }] }, 'templates[0].name'],
  ['a template name of 513 characters', { templates: [{ ...template, name: 'a'.repeat(513) }] }, 'templates[0].name'],
  ['a language that is no BCP 47 tag', { templates: [{ ...template, language: 'english!' }] }, 'templates[0].language'],
  ['a param name with a hyphen', { templates: [{ ...template, params: [{ name: 'order-id' }], preview: '{{order-id}}' }] }, 'templates[0].params[0].name'],
  ['a maxLength of 0', { templates: [{ ...template, params: [{ name: 'order', maxLength: 0 }] }] }, 'templates[0].params[0].maxLength'],
  ['a maxLength above 1024', { templates: [{ ...template, params: [{ name: 'order', maxLength: 1025 }] }] }, 'templates[0].params[0].maxLength'],
  ['an empty preview', { templates: [{ ...template, params: [], preview: '' }] }, 'templates[0].preview'],
  ['a preview of 1025 code points', { templates: [{ ...template, params: [], preview: '😀'.repeat(1025) }] }, 'templates[0].preview'],
  ['an unknown placeholder', { templates: [{ ...template, preview: '{{order}} {{eta}}' }] }, 'templates[0].preview: placeholder {{eta}} names no param'],
  ['a param not used', { templates: [{ ...template, preview: 'Shipped.' }] }, "templates[0].preview: does not use param 'order'"],
  ['a pair twice', { templates: [template, template] }, 'templates[1]: duplicates templates[0]'],
])('%s: 400 naming %s', (_, body, field) => {
  expect(refusal(body)).toContain(field);
});

test('the limits themselves are accepted: 60 and 604800 seconds, 200 templates, 20 params, 1024 code points', () => {
  expect(refusal({ window: { seconds: 60 } })).toBeNull();
  expect(refusal({ window: { seconds: 604_800 } })).toBeNull();
  expect(refusal({ templates: Array.from({ length: 200 }, (_, i) => ({ ...template, name: `t${i}` })) })).toBeNull();
  const params = Array.from({ length: 20 }, (_, i) => ({ name: `p${i}`, maxLength: 1024 }));
  expect(refusal({ templates: [{ ...template, params, preview: params.map((p) => `{{ ${p.name} }}`).join('') }] })).toBeNull();
  expect(refusal({ templates: [{ ...template, params: [], preview: '😀'.repeat(1024) }] })).toBeNull();
  expect(refusal({ templates: [{ ...template, language: 'zh-Hant-TW' }, { ...template, language: 'es-419' }] })).toBeNull();
});
