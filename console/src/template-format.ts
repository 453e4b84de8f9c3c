/**
 * Template replies, the pure part (no DOM, no Firebase): which template a reply names, each param's
 * limit and its check in words as the rules make them (1..1024 code points, at most the param's own
 * `maxLength`, exactly the template's params), and the preview filled with the params, which is the
 * text a channel without real templates sends (docs/contract.md#channel). Shared by the thread's
 * composer, the New conversation form and the reply cards.
 */
import { codePointLength } from '../../functions/src/contract';
import { fillTemplate, paramMaxCodePoints, templateIndexKey, type ReplyTemplate } from '../../functions/src/contract/templates';
import type { ChannelTemplateView, TemplateParamView } from './integration-channel-format';

/** What a template reply (and a start by template) carries: `template: { name, language, params }`, the service's type. */
export type TemplateChoice = ReplyTemplate;

/** The one key of a template in the picker and the index (the service's `templateIndex` key: name and lower-case language). */
export const templateKey = (t: Pick<ChannelTemplateView, 'name' | 'language'>): string => templateIndexKey(t.name, t.language);

/** The template of `templates` a choice names, if the channel (still) declares it. */
export function findTemplate(templates: readonly ChannelTemplateView[], choice: Pick<TemplateChoice, 'name' | 'language'>): ChannelTemplateView | undefined {
  const key = templateKey(choice);
  return templates.find((t) => templateKey(t) === key);
}

/** The most code points a param takes (the service's rule); a stored `maxLength` that is not positive counts as none. */
export function paramMaxLength(param: TemplateParamView): number {
  return paramMaxCodePoints(param.maxLength !== undefined && param.maxLength > 0 ? param.maxLength : undefined);
}

/** Why one param's value would be refused, or undefined when it is fine. */
export function paramProblem(param: TemplateParamView, value: string): string | undefined {
  const n = codePointLength(value);
  if (value === '') return `Fill in ${param.name}.`;
  const max = paramMaxLength(param);
  if (n > max) return `${param.name} is too long by ${n - max} characters (at most ${max}).`;
  return undefined;
}

/** The first problem of a template's values (every declared param, in order), or undefined when they are all fine. */
export function templateProblem(template: ChannelTemplateView, values: Readonly<Record<string, string>>): string | undefined {
  for (const param of template.params) {
    const problem = paramProblem(param, values[param.name] ?? '');
    if (problem !== undefined) return problem;
  }
  return undefined;
}

/**
 * The preview with each `{{param}}` replaced by its value (the service's fill: what the customer
 * reads, and what the claim's `message.text` carries). A param without a value yet keeps its
 * placeholder, so the live preview shows what is still missing.
 */
export function fillPreview(preview: string, values: Readonly<Record<string, string>>): string {
  return fillTemplate(preview, Object.fromEntries(Object.entries(values).filter(([, value]) => value !== '')));
}

/** The choice the reply writes: exactly the template's params (no other key), each value as typed. */
export function templateChoice(template: ChannelTemplateView, values: Readonly<Record<string, string>>): TemplateChoice {
  return { name: template.name, language: template.language, params: Object.fromEntries(template.params.map((p) => [p.name, values[p.name] ?? ''])) };
}

/** A template as the picker lists it: "order_update (en-US)". */
export const templateLabel = (t: Pick<ChannelTemplateView, 'name' | 'language'>): string => `${t.name} (${t.language})`;

/**
 * What a template reply shows as its text: the preview filled in when the channel (still) declares
 * the template, else the template's label and its params as written.
 */
export function templateReplyText(choice: TemplateChoice, templates: readonly ChannelTemplateView[]): string {
  const template = findTemplate(templates, choice);
  if (template !== undefined) return fillPreview(template.preview, choice.params);
  const params = Object.entries(choice.params).map(([name, value]) => `${name}: ${value}`);
  return `${templateLabel(choice)}${params.length > 0 ? ` · ${params.join(' · ')}` : ''}`;
}
