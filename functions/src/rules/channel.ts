/**
 * The channel as the connector declares it (`PUT /v1/channel`, docs/contract.md#channel): the reply
 * window and the message templates of the integration's channel. The rules the request schema
 * cannot say (a template's placeholders against its params, the unique (name, language) pair) and
 * what an update does to the stored channel. Pure: the service (functions/src/integrations/channel.ts)
 * and the SDK's test service run this same module (copied by scripts/sdk-generate.mjs).
 */
import { TEMPLATE_MAX_PARAMS, TEMPLATE_PARAM_MAX_CODE_POINTS } from '../contract';
import { placeholdersOf } from '../contract/templates';

/** The limits of a channel update (docs/contract.md#channel). */
export const CHANNEL_LIMITS = {
  /** The reply window, in seconds: one minute to seven days (WhatsApp's is 86400). */
  windowMinSeconds: 60,
  windowMaxSeconds: 604_800,
  maxTemplates: 200,
  templateName: 512,
  /** A BCP 47 tag is at most 35 characters in practice (RFC 5646 §4.4.1 recommends supporting 35). */
  language: 35,
  maxParams: TEMPLATE_MAX_PARAMS,
  paramName: 64,
  /** A param's `maxLength`, in code points; a template's whole preview is at most 1024 too. */
  paramMaxLength: TEMPLATE_PARAM_MAX_CODE_POINTS,
  preview: 1024,
} as const;

/** A template's name: WhatsApp's rule (lower-case letters, digits and underscores). */
export const TEMPLATE_NAME_PATTERN = '^[a-z0-9_]{1,512}$';
/** A param's name, as its `{{name}}` placeholder writes it. */
export const PARAM_NAME_PATTERN = '^[A-Za-z0-9_]{1,64}$';
/**
 * A BCP 47 tag, pragmatically: a primary language of 2 to 8 letters and subtags of 1 to 8 letters
 * or digits (`en`, `en-US`, `pt-BR`, `zh-Hant-TW`, `es-419`). The registry of subtags is not
 * checked: the channel decides which languages it has.
 */
export const LANGUAGE_PATTERN = '^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$';

/** One variable part of a template. */
interface TemplateParam {
  name: string;
  /** At most this many code points; absent: only the channel's own limit applies. */
  maxLength?: number | undefined;
}

/** One message template the channel accepts outside the reply window. */
export interface ChannelTemplate {
  name: string;
  language: string;
  params: readonly TemplateParam[];
  /** The template's text with a `{{param}}` placeholder for each param. */
  preview: string;
}

/** The reply window: how long after the customer's latest message a free-text reply may go out. */
interface ChannelWindow {
  seconds: number;
}

/** A `PUT /v1/channel` body after the schema: each field it names replaces the stored one. */
export interface ChannelUpdate {
  window?: ChannelWindow | null | undefined;
  templates?: readonly ChannelTemplate[] | undefined;
}

/** The stored channel, and the answer of `PUT /v1/channel`. */
export interface Channel {
  window: ChannelWindow | null;
  templates: ChannelTemplate[];
  /** When the channel last changed, epoch ms. */
  updatedAt: number;
}

/** A problem of an update, by the path of the field it names (as the 400's message writes it). */
export interface ChannelProblem {
  path: Array<string | number>;
  message: string;
}

/** The pair that identifies a template; BCP 47 tags are case-insensitive, so `en-US` and `en-us` are one language. */
const templateKey = (t: Pick<ChannelTemplate, 'name' | 'language'>): string => `${t.name}\u0000${t.language.toLowerCase()}`;

/** The problems of one template's params and preview (its fields' own formats are the schema's). */
function templateProblems(template: ChannelTemplate, at: number): ChannelProblem[] {
  const problems: ChannelProblem[] = [];
  const declared = new Map<string, number>();
  template.params.forEach((param, i) => {
    const first = declared.get(param.name);
    if (first === undefined) declared.set(param.name, i);
    else problems.push({ path: ['templates', at, 'params', i, 'name'], message: `duplicates params[${first}].name '${param.name}'` });
  });
  const used = placeholdersOf(template.preview);
  for (const name of used) {
    if (!declared.has(name)) problems.push({ path: ['templates', at, 'preview'], message: `placeholder {{${name}}} names no param of the template` });
  }
  for (const name of declared.keys()) {
    if (!used.includes(name)) problems.push({ path: ['templates', at, 'preview'], message: `does not use param '${name}' (write it as {{${name}}})` });
  }
  return problems;
}

/**
 * What the request schema cannot check of an update: it names at least one field, each template's
 * preview uses exactly its declared params, params are unique in their template, and no two
 * templates share (name, language). Empty when the update is valid.
 */
export function channelUpdateProblems(update: ChannelUpdate): ChannelProblem[] {
  if (update.window === undefined && update.templates === undefined) return [{ path: [], message: 'must name window, templates or both' }];
  const templates = update.templates ?? [];
  const problems = templates.flatMap((template, i) => templateProblems(template, i));
  const seen = new Map<string, number>();
  templates.forEach((template, i) => {
    const key = templateKey(template);
    const first = seen.get(key);
    if (first === undefined) seen.set(key, i);
    else problems.push({ path: ['templates', i], message: `duplicates templates[${first}] (name '${template.name}', language '${template.language}')` });
  });
  return problems;
}

/** A template with its fields in one order and no absent `maxLength`: what is stored, and what "the same" compares. */
function normalTemplate(template: ChannelTemplate): ChannelTemplate {
  return {
    name: template.name,
    language: template.language,
    params: template.params.map((p) => (p.maxLength === undefined ? { name: p.name } : { name: p.name, maxLength: p.maxLength })),
    preview: template.preview,
  };
}

/** The channel of an integration that never declared one: no window known, no templates. */
const EMPTY_CHANNEL: Omit<Channel, 'updatedAt'> = { window: null, templates: [] };

/**
 * What a valid update makes of the stored channel (null: none stored yet): the fields it names
 * replace the stored ones, the others stay. `changed` is false when the result equals what is stored
 * (the same body again), and then `updatedAt` stays too, so a repeated update writes nothing.
 */
export function applyChannelUpdate(stored: Channel | null, update: ChannelUpdate, now: number): { channel: Channel; changed: boolean } {
  const before = stored ?? { ...EMPTY_CHANNEL, updatedAt: now };
  const window = update.window === undefined ? before.window : update.window === null ? null : { seconds: update.window.seconds };
  const templates = (update.templates ?? before.templates).map(normalTemplate);
  const same = stored !== null && JSON.stringify({ window, templates }) === JSON.stringify({ window: stored.window, templates: stored.templates.map(normalTemplate) });
  return same ? { channel: stored, changed: false } : { channel: { window, templates, updatedAt: now }, changed: true };
}
