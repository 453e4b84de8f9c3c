import * as z from 'zod';
import { codePointLength } from '../contract';
import { BadRequestError } from '../rules/errors';


/**
 * A string bounded in code points that is well-formed Unicode (no lone surrogates, which
 * Firestore would silently replace).
 */
export function text(min: number, max: number) {
  return z
    .string()
    .refine((s) => s.isWellFormed(), { message: 'must be well-formed Unicode (no lone surrogates)' })
    .refine((s) => codePointLength(s) >= min, { message: `must be at least ${min} character${min === 1 ? '' : 's'}` })
    .refine((s) => codePointLength(s) <= max, { message: `must be at most ${max} characters` })
    .meta({ minLength: min, maxLength: max });
}

/** Renders the first zod issue as `path: message` (docs/contract.md#errors: 400s name the offending field). */
function describeIssues(error: z.ZodError): string {
  const issues = error.issues.slice(0, 5).map((issue) => {
    const path = issue.path.length === 0 ? 'body' : issue.path.map((p) => (typeof p === 'number' ? `[${p}]` : String(p))).join('.').replace(/\.\[/g, '[');
    if (issue.code === 'unrecognized_keys') return `${path}: unknown propert${issue.keys.length === 1 ? 'y' : 'ies'} ${issue.keys.map((k) => `'${k}'`).join(', ')}`;
    return `${path}: ${issue.message}`;
  });
  return issues.join('; ');
}

/** Validates `input` against `schema`, throwing a 400 `invalid_request` that names the field. */
export function parseOrThrow<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input);
  if (!result.success) throw new BadRequestError('invalid_request', describeIssues(result.error));
  return result.data;
}
