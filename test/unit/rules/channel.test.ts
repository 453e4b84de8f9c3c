/**
 * functions/src/rules/channel.ts: what `PUT /v1/channel` checks across fields (placeholders against
 * params, unique pairs, at least one field) and what an update does to the stored channel
 * (replaces what it names, the same body again changes nothing). The field formats are the
 * schema's: test/unit/integrations/channel-schemas.test.ts.
 */
import { applyChannelUpdate, channelUpdateProblems, type ChannelTemplate } from '../../../functions/src/rules/channel';
import { placeholdersOf } from '../../../functions/src/contract/templates';

const template = (overrides: Partial<ChannelTemplate> = {}): ChannelTemplate => ({
  name: 'order_update',
  language: 'en-US',
  params: [{ name: 'order', maxLength: 32 }],
  preview: 'Your order {{order}} has shipped.',
  ...overrides,
});

describe('placeholdersOf', () => {
  test('each placeholder once, in order; spaces inside the braces are not part of the name', () => {
    expect(placeholdersOf('Hi {{name}}, order {{ order }} for {{name}}')).toEqual(['name', 'order']);
  });
  test('anything between the braces is a placeholder, even what no param could be called', () => {
    expect(placeholdersOf('{{}} and {{first name}} and {single}')).toEqual(['', 'first name']);
  });
});

describe('channelUpdateProblems', () => {
  test('a valid update has none', () => {
    expect(channelUpdateProblems({ window: { seconds: 86400 }, templates: [template(), template({ language: 'de' })] })).toEqual([]);
    expect(channelUpdateProblems({ window: null })).toEqual([]);
    expect(channelUpdateProblems({ templates: [] })).toEqual([]);
  });

  test('a body naming neither field is refused as a whole', () => {
    expect(channelUpdateProblems({})).toEqual([{ path: [], message: 'must name window, templates or both' }]);
  });

  test('a placeholder naming no param names the preview', () => {
    expect(channelUpdateProblems({ templates: [template({ preview: 'Order {{order}} for {{customer}}' })] })).toEqual([
      { path: ['templates', 0, 'preview'], message: 'placeholder {{customer}} names no param of the template' },
    ]);
  });

  test('a param the preview does not use names the preview', () => {
    expect(channelUpdateProblems({ templates: [template({ params: [{ name: 'order' }, { name: 'eta' }] })] })).toEqual([
      { path: ['templates', 0, 'preview'], message: "does not use param 'eta' (write it as {{eta}})" },
    ]);
  });

  test('a param declared twice names the second', () => {
    expect(channelUpdateProblems({ templates: [template({ params: [{ name: 'order' }, { name: 'order' }] })] })).toEqual([
      { path: ['templates', 0, 'params', 1, 'name'], message: "duplicates params[0].name 'order'" },
    ]);
  });

  test('the same (name, language) twice names the second template; the language is compared without case', () => {
    expect(channelUpdateProblems({ templates: [template(), template({ name: 'other' }), template({ language: 'en-us' })] })).toEqual([
      { path: ['templates', 2], message: "duplicates templates[0] (name 'order_update', language 'en-us')" },
    ]);
  });

  test('the same name in another language is another template', () => {
    expect(channelUpdateProblems({ templates: [template(), template({ language: 'pt-BR' })] })).toEqual([]);
  });
});

describe('applyChannelUpdate', () => {
  const stored = { window: { seconds: 86400 }, templates: [template()], updatedAt: 1000 };

  test('nothing stored yet: the fields named, the others empty, stamped now', () => {
    expect(applyChannelUpdate(null, { window: { seconds: 3600 } }, 5000)).toEqual({ channel: { window: { seconds: 3600 }, templates: [], updatedAt: 5000 }, changed: true });
    expect(applyChannelUpdate(null, { templates: [template()] }, 5000)).toEqual({ channel: { window: null, templates: [template()], updatedAt: 5000 }, changed: true });
  });

  test('a body with only the window keeps the templates, and the other way round', () => {
    expect(applyChannelUpdate(stored, { window: null }, 5000).channel).toEqual({ window: null, templates: stored.templates, updatedAt: 5000 });
    expect(applyChannelUpdate(stored, { templates: [] }, 5000).channel).toEqual({ window: stored.window, templates: [], updatedAt: 5000 });
  });

  test('the same body again changes nothing: the stored channel, its updatedAt kept', () => {
    expect(applyChannelUpdate(stored, { window: { seconds: 86400 }, templates: [template()] }, 5000)).toEqual({ channel: stored, changed: false });
    // Naming one field with its stored value is the same body too.
    expect(applyChannelUpdate(stored, { window: { seconds: 86400 } }, 5000)).toEqual({ channel: stored, changed: false });
  });

  test('an empty channel stored by a first update of [] is the same as a second []', () => {
    const first = applyChannelUpdate(null, { templates: [] }, 5000);
    expect(first.changed).toBe(true);
    expect(applyChannelUpdate(first.channel, { templates: [] }, 9000)).toEqual({ channel: first.channel, changed: false });
  });

  test('the order of a template\'s keys does not matter; an absent maxLength is not stored', () => {
    const reordered = { preview: 'Your order {{order}} has shipped.', params: [{ maxLength: 32, name: 'order' }], language: 'en-US', name: 'order_update' };
    expect(applyChannelUpdate(stored, { templates: [reordered] }, 5000).changed).toBe(false);
    const { channel } = applyChannelUpdate(null, { templates: [template({ params: [{ name: 'order', maxLength: undefined }] })] }, 5000);
    expect(channel.templates[0]?.params[0]).toStrictEqual({ name: 'order' });
  });

  test('another order of the templates is a change (the console lists them as declared)', () => {
    const two = { ...stored, templates: [template(), template({ language: 'de' })] };
    expect(applyChannelUpdate(two, { templates: [template({ language: 'de' }), template()] }, 5000).changed).toBe(true);
  });
});
