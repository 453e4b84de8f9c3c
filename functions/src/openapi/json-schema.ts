/**
 * Conversion of the zod schemas (the ones the functions validate with) to the JSON Schema 2020-12
 * objects of OpenAPI 3.1, and references to the document's components. Pure; knows no operation.
 */
import * as z from 'zod';

type Json = string | number | boolean | null | readonly Json[] | { readonly [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export const schemaRef = (name: string): JsonObject => ({ $ref: `#/components/schemas/${name}` });
export const headerRef = (name: string): JsonObject => ({ $ref: `#/components/headers/${name}` });
export const responseRef = (name: string): JsonObject => ({ $ref: `#/components/responses/${name}` });

const isJsonObject = (value: Json | undefined): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * A zod schema as a JSON Schema 2020-12 object (the dialect of OpenAPI 3.1), without `$schema`.
 * A request schema states its defaults in its descriptions instead of `default` keywords.
 */
export function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonObject {
  const generated = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'throw', cycles: 'throw', reused: 'inline' }) as JsonObject;
  const { $schema: _dialect, ...rest } = generated;
  if ('$defs' in rest || JSON.stringify(rest).includes('"$ref"')) throw new Error('OpenAPI generation expects self-contained schemas');
  return io === 'input' ? defaultsInProse(rest) : rest;
}

/**
 * Moves each `default` of a request schema into its description. The schemas are shared
 * components, and client generators type a component property that has a `default` as always
 * present (openapi-typescript's `defaultNonNullable` applies to components, not only to
 * responses), which would make an optional request field such as `sender.kind` or `limit`
 * required for the caller. The server applies the default either way.
 */
function defaultsInProse(node: JsonObject): JsonObject {
  const out: JsonObject = {};
  const schemas = (value: Json): Json => (Array.isArray(value) ? value.map(schemas) : isJsonObject(value) ? defaultsInProse(value) : value);
  for (const [key, value] of Object.entries(node)) {
    if (key === 'default') continue;
    if (key === 'properties' && isJsonObject(value)) {
      // A map of property names (one may be called `default`) to schemas.
      out[key] = Object.fromEntries(Object.entries(value).map(([name, schema]) => [name, schemas(schema)]));
    } else {
      out[key] = key === 'examples' || key === 'example' || key === 'enum' || key === 'const' ? value : schemas(value);
    }
  }
  if ('default' in node) {
    const stated = `Default: \`${JSON.stringify(node.default)}\`.`;
    const description = typeof node.description === 'string' ? node.description : '';
    out.description = /\bdefault\b/i.test(description) ? description : `${description}${description === '' ? '' : ' '}${stated}`;
  }
  return out;
}

/**
 * A union of objects told apart by a constant property as components: each option becomes
 * `<prefix><Tag>` and the union a `oneOf` of references with an OpenAPI `discriminator` (with
 * explicit mapping). The property is the zod discriminated union's, or for a plain union the one
 * every option has as a constant (`status`).
 *
 * Options that share a tag (the claim's three `ready` answers: a reply, an edit, an unsend, told
 * apart by `kind`, absent for a reply) become one component `<prefix><Tag>`, a `oneOf` of
 * `<prefix><Tag><Title>` (stating the tag), each option naming itself with zod's `.meta({ title })` (the title is
 * the component's name, not kept in it). Their order is the zod union's: readers that take the
 * first match and ignore unknown properties need the most specific option first.
 */
export function discriminatedUnion(prefix: string, schema: z.ZodUnion, io: 'input' | 'output'): { union: JsonObject; options: Record<string, JsonObject> } {
  const converted = schema.options.map((option) => {
    const { title, ...rest } = jsonSchema(option as z.ZodType, io);
    return { title, schema: rest, properties: isJsonObject(rest.properties) ? rest.properties : {} };
  });
  const discriminator = schema instanceof z.ZodDiscriminatedUnion ? schema._zod.def.discriminator : commonConstant(prefix, converted.map((c) => c.properties));
  const groups = new Map<string, typeof converted>();
  for (const option of converted) {
    const property = option.properties[discriminator];
    const tag = isJsonObject(property) ? property.const : undefined;
    if (typeof tag !== 'string') throw new Error(`${prefix}: option without a literal '${discriminator}'`);
    groups.set(tag, [...(groups.get(tag) ?? []), option]);
  }
  const options: Record<string, JsonObject> = {};
  const mapping: JsonObject = {};
  for (const [tag, members] of groups) {
    const name = `${prefix}${capitalised(tag)}`;
    const [only] = members;
    if (members.length === 1 && only !== undefined) {
      options[name] = only.schema;
    } else {
      options[name] = {}; // the group before its members in the document
      const names = members.map(({ title, schema: member }) => {
        if (typeof title !== 'string' || title === '') throw new Error(`${prefix}: options sharing '${discriminator}: ${tag}' need a title each (.meta({ title }))`);
        const memberName = `${name}${capitalised(title)}`;
        if (memberName in options) throw new Error(`${prefix}: two options named ${memberName}`);
        options[memberName] = member;
        return memberName;
      });
      // An object schema stating the shared tag, not a bare `oneOf`: a discriminator's mapping must
      // point at an object schema for client generators (openapi-typescript) to read it.
      options[name] = {
        type: 'object',
        properties: { [discriminator]: { type: 'string', const: tag } },
        required: [discriminator],
        oneOf: names.map(schemaRef),
      };
    }
    mapping[tag] = schemaRef(name).$ref as string;
  }
  const union: JsonObject = {
    oneOf: [...groups.keys()].map((tag) => schemaRef(`${prefix}${capitalised(tag)}`)),
    discriminator: { propertyName: discriminator, mapping },
  };
  const description = schema.description;
  if (description !== undefined) union.description = description;
  return { union, options };
}

const capitalised = (word: string): string => `${word.charAt(0).toUpperCase()}${word.slice(1)}`;

/** The first property every option has as a string constant: what tells a plain union's options apart. */
function commonConstant(prefix: string, options: readonly JsonObject[]): string {
  const [first] = options;
  const found = Object.keys(first ?? {}).find((key) => options.every((properties) => isJsonObject(properties[key]) && typeof properties[key].const === 'string'));
  if (found === undefined) throw new Error(`${prefix}: a union of objects needs a property every option has as a constant`);
  return found;
}
