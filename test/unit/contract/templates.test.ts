import { REPLY_MAX_CODE_POINTS, TEMPLATE_PARAM_MAX_CODE_POINTS } from '../../../functions/src/contract';
import { fillTemplate, placeholdersOf, templateIndexKey, templateIndexOf, templateReplyVerdict, type TemplateDeclaration } from '../../../functions/src/contract/templates';

const ORDER: TemplateDeclaration = { name: 'order_update', language: 'en-US', params: [{ name: 'name' }, { name: 'order', maxLength: 8 }], preview: 'Hi {{name}}, order {{ order }} shipped. Thanks, {{name}}!' };
const HELLO: TemplateDeclaration = { name: 'hello', language: 'pl', params: [], preview: 'Dzień dobry!' };
const TEMPLATES = [ORDER, HELLO];

describe('placeholdersOf and fillTemplate', () => {
  test('each placeholder once, spaces inside the braces allowed', () => {
    expect(placeholdersOf(ORDER.preview)).toEqual(['name', 'order']);
  });

  test('every occurrence is filled; a placeholder without a value stays as written', () => {
    expect(fillTemplate(ORDER.preview, { name: 'Ann', order: 'A-1' })).toBe('Hi Ann, order A-1 shipped. Thanks, Ann!');
    expect(fillTemplate('Hi {{name}} {{other}}', { name: 'Ann' })).toBe('Hi Ann {{other}}');
  });

  test('a value holding $ patterns or braces is inserted literally', () => {
    expect(fillTemplate('Hi {{name}}', { name: "$& $1 {{name}}" })).toBe('Hi $& $1 {{name}}');
  });
});

describe('templateIndexOf', () => {
  test('name:language (lower case) to the param names', () => {
    expect(templateIndexKey('order_update', 'en-US')).toBe('order_update:en-us');
    expect(templateIndexOf(TEMPLATES)).toEqual({ 'order_update:en-us': ['name', 'order'], 'hello:pl': [] });
    expect(templateIndexOf([])).toEqual({});
  });
});

describe('templateReplyVerdict', () => {
  test('a reply with exactly the params is accepted with the filled preview and the declared name and language', () => {
    expect(templateReplyVerdict({ name: 'order_update', language: 'en-us', params: { name: 'Zoë 👋', order: 'A-1' } }, TEMPLATES)).toEqual({
      accepted: true,
      template: { name: 'order_update', language: 'en-US', params: { name: 'Zoë 👋', order: 'A-1' } },
      text: 'Hi Zoë 👋, order A-1 shipped. Thanks, Zoë 👋!',
    });
    expect(templateReplyVerdict({ name: 'hello', language: 'pl', params: {} }, TEMPLATES)).toEqual({ accepted: true, template: { name: 'hello', language: 'pl', params: {} }, text: 'Dzień dobry!' });
  });

  test.each([
    ['an unknown template', { name: 'nope', language: 'en-US', params: {} }, /no template 'nope'/],
    ['a known name in another language', { name: 'hello', language: 'en', params: {} }, /no template 'hello' in language 'en'/],
    ['a missing param', { name: 'order_update', language: 'en-US', params: { name: 'Ann' } }, /param 'order' is missing/],
    ['an extra param', { name: 'order_update', language: 'en-US', params: { name: 'Ann', order: 'A', x: 'y' } }, /param 'x' is not a param/],
    ['an empty param', { name: 'order_update', language: 'en-US', params: { name: '', order: 'A' } }, /param 'name' must be 1 to 1024/],
    ['a param over its maxLength', { name: 'order_update', language: 'en-US', params: { name: 'Ann', order: '123456789' } }, /param 'order' must be 1 to 8/],
    ['a param that is not a string', { name: 'order_update', language: 'en-US', params: { name: 1, order: 'A' } }, /param 'name' is missing/],
    ['no params map', { name: 'hello', language: 'pl' }, /must be \{ name, language, params \}/],
    ['not a map', 'hello', /must be \{ name, language, params \}/],
  ])('%s is refused', (_, value, problem) => {
    const verdict = templateReplyVerdict(value, TEMPLATES);
    expect(verdict.accepted).toBe(false);
    if (!verdict.accepted) expect(verdict.problem).toMatch(problem);
  });

  test('a param of the limit in code points (astral characters count once) is accepted, one more is not', () => {
    const t: TemplateDeclaration = { name: 't', language: 'en', params: [{ name: 'p' }], preview: '{{p}}' };
    expect(templateReplyVerdict({ name: 't', language: 'en', params: { p: '😀'.repeat(TEMPLATE_PARAM_MAX_CODE_POINTS) } }, [t]).accepted).toBe(true);
    expect(templateReplyVerdict({ name: 't', language: 'en', params: { p: '😀'.repeat(TEMPLATE_PARAM_MAX_CODE_POINTS + 1) } }, [t]).accepted).toBe(false);
  });

  test('a lone surrogate is refused', () => {
    const t: TemplateDeclaration = { name: 't', language: 'en', params: [{ name: 'p' }], preview: '{{p}}' };
    expect(templateReplyVerdict({ name: 't', language: 'en', params: { p: 'a\uD800' } }, [t]).accepted).toBe(false);
  });

  test("a filled preview longer than a reply's limit is refused", () => {
    const params = Array.from({ length: 20 }, (_, i) => ({ name: `p${i}` }));
    const t: TemplateDeclaration = { name: 't', language: 'en', params, preview: params.map((p) => `{{${p.name}}}`).join('') };
    const values = Object.fromEntries(params.map((p) => [p.name, 'x'.repeat(TEMPLATE_PARAM_MAX_CODE_POINTS)]));
    expect(20 * TEMPLATE_PARAM_MAX_CODE_POINTS).toBeGreaterThan(REPLY_MAX_CODE_POINTS);
    const verdict = templateReplyVerdict({ name: 't', language: 'en', params: values }, [t]);
    expect(verdict.accepted).toBe(false);
  });
});
