/**
 * Message templates as the clients and the service see them (docs/contract.md#channel): the
 * placeholders of a template's preview, the preview filled with a reply's params, the key a
 * template is found by, and the verdict on a template reply against the channel's templates.
 * Shared with the clients: the service (functions/src/deliveries/sequencing.ts), the SDK's test
 * service (a generated copy, scripts/sdk-generate.mjs) and the console (its template picker) all run
 * this one module. Pure; imports only the contract.
 */
import { codePointLength, REPLY_MAX_CODE_POINTS, TEMPLATE_PARAM_MAX_CODE_POINTS } from './index';

/** A template as the channel declares it (`PUT /v1/channel`), as far as a reply needs it. */
export interface TemplateDeclaration {
  name: string;
  language: string;
  params: ReadonlyArray<{ name: string; maxLength?: number | undefined }>;
  preview: string;
}

/** A template reply's `template` (the console writes it; the claim carries it as `message.template`). */
export interface ReplyTemplate {
  name: string;
  language: string;
  params: Record<string, string>;
}

/**
 * `{{name}}`, with optional spaces inside the braces (`{{ name }}` is the same placeholder: template
 * editors write both). Whatever else sits between the braces is a placeholder too, and names no param.
 */
const PLACEHOLDER = /\{\{\s*([^{}]*?)\s*\}\}/g;

/** The names of the placeholders of a preview, in order, each once. */
export function placeholdersOf(preview: string): string[] {
  return [...new Set([...preview.matchAll(PLACEHOLDER)].map((m) => m[1] ?? ''))];
}

/**
 * The preview with each placeholder replaced by its param's value: the text a channel without real
 * templates sends. A placeholder without a value stays as written (a checked reply has them all).
 */
export function fillTemplate(preview: string, params: Readonly<Record<string, string>>): string {
  return preview.replace(PLACEHOLDER, (whole, name: string) => (Object.prototype.hasOwnProperty.call(params, name) ? (params[name] ?? whole) : whole));
}

/**
 * The key of a template in the integration's `templateIndex` (docs/data-model.md): its name and its
 * language in lower case (BCP 47 tags are case-insensitive: `en-US` and `en-us` are one language).
 */
export const templateIndexKey = (name: string, language: string): string => `${name}:${language.toLowerCase()}`;

/** The integration's `templateIndex`: each template's key to its param names, what the rules check a reply against. */
export function templateIndexOf(templates: readonly TemplateDeclaration[]): Record<string, string[]> {
  return Object.fromEntries(templates.map((t) => [templateIndexKey(t.name, t.language), t.params.map((p) => p.name)]));
}

/** The most code points a param's value takes: its own `maxLength` when under the contract's TEMPLATE_PARAM_MAX_CODE_POINTS (the console's picker counts against the same). */
export function paramMaxCodePoints(maxLength: number | undefined): number {
  return Math.min(maxLength ?? TEMPLATE_PARAM_MAX_CODE_POINTS, TEMPLATE_PARAM_MAX_CODE_POINTS);
}

const isMap = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
// A lone surrogate (which Firestore would silently replace): in `u` mode a paired one is one code point and does not match.
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/** What a template reply becomes: the template as it goes out and its filled preview, or why it cannot go. */
export type TemplateReplyVerdict = { accepted: true; template: ReplyTemplate; text: string } | { accepted: false; problem: string };

/**
 * Whether `value` (a reply's `template` as written) is a reply of one of `templates`: the template
 * exists (name, and language case-insensitively), the params are exactly the template's (none
 * missing, none extra), each a string of 1 to TEMPLATE_PARAM_MAX_CODE_POINTS code points (at most
 * its `maxLength`), and the filled preview is a reply's length. Accepted with the declared
 * template's own name and language and the filled text; otherwise the reason (the service fails the
 * reply `template_invalid`, the console names the field).
 */
export function templateReplyVerdict(value: unknown, templates: readonly TemplateDeclaration[]): TemplateReplyVerdict {
  if (!isMap(value) || typeof value.name !== 'string' || typeof value.language !== 'string' || !isMap(value.params)) {
    return { accepted: false, problem: 'template must be { name, language, params }' };
  }
  const key = templateIndexKey(value.name, value.language);
  const declared = templates.find((t) => templateIndexKey(t.name, t.language) === key);
  if (declared === undefined) return { accepted: false, problem: `no template '${value.name}' in language '${value.language}'` };
  const given = value.params;
  const params: Record<string, string> = {};
  for (const param of declared.params) {
    const v = given[param.name];
    if (typeof v !== 'string') return { accepted: false, problem: `param '${param.name}' is missing` };
    const max = paramMaxCodePoints(param.maxLength);
    const length = codePointLength(v);
    if (length === 0 || length > max || LONE_SURROGATE.test(v)) return { accepted: false, problem: `param '${param.name}' must be 1 to ${max} characters` };
    params[param.name] = v;
  }
  const extra = Object.keys(given).find((name) => !declared.params.some((p) => p.name === name));
  if (extra !== undefined) return { accepted: false, problem: `param '${extra}' is not a param of the template` };
  const text = fillTemplate(declared.preview, params);
  if (codePointLength(text) > REPLY_MAX_CODE_POINTS) return { accepted: false, problem: `the filled template is longer than ${REPLY_MAX_CODE_POINTS} characters` };
  return { accepted: true, template: { name: declared.name, language: declared.language, params }, text };
}
