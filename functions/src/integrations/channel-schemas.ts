/**
 * Wire shapes of `PUT /v1/channel` (docs/contract.md#channel): the formats and limits of each field
 * here (so the OpenAPI document and the SDK's test service say them too), the rules across fields
 * in ../rules/channel.ts (`channelUpdateProblems`, run by the schema's refinement).
 */
import * as z from 'zod';
import { text } from '../platform/schema';
import { CHANNEL_LIMITS, channelUpdateProblems, LANGUAGE_PATTERN, PARAM_NAME_PATTERN, TEMPLATE_NAME_PATTERN } from '../rules/channel';

const WindowSchema = z
  .strictObject({
    seconds: z
      .number()
      .int()
      .min(CHANNEL_LIMITS.windowMinSeconds)
      .max(CHANNEL_LIMITS.windowMaxSeconds)
      .describe(`How long after the customer's latest message a free-text reply may go out, ${CHANNEL_LIMITS.windowMinSeconds} to ${CHANNEL_LIMITS.windowMaxSeconds} seconds (WhatsApp: 86400).`),
  })
  .describe("The channel's reply window.");

const ParamSchema = z.strictObject({
  name: z.string().regex(new RegExp(PARAM_NAME_PATTERN)).describe('The param, as its placeholder `{{name}}` in `preview` writes it: letters, digits, `_`, 1 to 64. Unique in its template.'),
  maxLength: z.number().int().min(1).max(CHANNEL_LIMITS.paramMaxLength).optional().describe(`At most this many characters (code points), 1 to ${CHANNEL_LIMITS.paramMaxLength}; absent: no limit of its own.`),
});

const TemplateSchema = z.strictObject({
  name: z.string().regex(new RegExp(TEMPLATE_NAME_PATTERN)).describe("The template's name on the channel: lower-case letters, digits, `_`, 1 to 512."),
  language: z.string().max(CHANNEL_LIMITS.language).regex(new RegExp(LANGUAGE_PATTERN)).describe('A BCP 47 language tag (`en`, `en-US`, `pt-BR`). (`name`, `language`) is unique among the templates, the tag compared without case.'),
  params: z.array(ParamSchema).max(CHANNEL_LIMITS.maxParams).describe(`Its variable parts, at most ${CHANNEL_LIMITS.maxParams}; each used in \`preview\`.`),
  preview: text(1, CHANNEL_LIMITS.preview).describe(
    'The text as the customer reads it, 1 to 1024 characters (code points), with a placeholder `{{name}}` (spaces inside the braces allowed) for each param: every param used, no placeholder naming another.',
  ),
});

/** A `PUT /v1/channel` body: the fields it names replace the stored ones. */
export const ChannelUpdateSchema = z
  .strictObject({
    window: WindowSchema.nullable().optional().describe('The reply window, or null: the channel has none (or the connector does not know it). Absent: the stored one stays.'),
    templates: z.array(TemplateSchema).max(CHANNEL_LIMITS.maxTemplates).optional().describe(`Every template of the channel, at most ${CHANNEL_LIMITS.maxTemplates}, replacing the stored list (\`[]\`: none). Absent: the stored list stays.`),
  })
  .superRefine((update, ctx) => {
    for (const problem of channelUpdateProblems(update)) ctx.addIssue({ code: 'custom', path: problem.path, message: problem.message });
  })
  .describe("What the connector declares of its channel: the reply window, the templates, or both. At least one of the two.");

/** The stored channel: the answer of `PUT /v1/channel`. */
export const ChannelSchema = z.strictObject({
  window: z.strictObject({ seconds: z.number().int() }).nullable().describe('The reply window, or null when none was declared.'),
  templates: z
    .array(
      z.strictObject({
        name: z.string(),
        language: z.string(),
        params: z.array(z.strictObject({ name: z.string(), maxLength: z.number().int().optional() })),
        preview: z.string(),
      }),
    )
    .describe('The templates, in the order declared.'),
  updatedAt: z.number().int().describe('When the channel last changed, Unix epoch milliseconds (the same body again leaves it).'),
});
