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
 * A discriminated union as components: each option becomes `<prefix><Tag>` and the union a
 * `oneOf` of references with an OpenAPI `discriminator` (with explicit mapping).
 */
export function discriminatedUnion(prefix: string, schema: z.ZodDiscriminatedUnion, io: 'input' | 'output'): { union: JsonObject; options: Record<string, JsonObject> } {
  const discriminator = schema._zod.def.discriminator;
  const options: Record<string, JsonObject> = {};
  const mapping: JsonObject = {};
  for (const option of schema.options) {
    const converted = jsonSchema(option as z.ZodType, io);
    const properties = converted.properties as JsonObject;
    const tag = (properties[discriminator] as JsonObject).const;
    if (typeof tag !== 'string') throw new Error(`${prefix}: option without a literal '${discriminator}'`);
    const name = `${prefix}${tag.charAt(0).toUpperCase()}${tag.slice(1)}`;
    options[name] = converted;
    mapping[tag] = schemaRef(name).$ref as string;
  }
  const union: JsonObject = {
    oneOf: Object.keys(options).map(schemaRef),
    discriminator: { propertyName: discriminator, mapping },
  };
  const description = schema.description;
  if (description !== undefined) union.description = description;
  return { union, options };
}
