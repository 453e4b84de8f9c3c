/**
 * Response validation against the committed OpenAPI document (openapi/openapi.yaml).
 *
 * `assertResponseMatchesContract(method, path, status, headers, body)` throws a
 * `ContractViolation` when the document does not describe the response:
 *  - the path is not documented; the method is not documented (unless the status is the 405 the
 *    path documents for other methods);
 *  - the status is not documented for the operation;
 *  - a header the response declares as required is missing (e.g. `Retry-After` on 429/503), or a
 *    declared header's value does not match its schema; `X-Request-Id` must be present on every
 *    response (the document: "every response the service produces carries X-Request-Id");
 *  - the Content-Type is not one the response documents, or the body does not match its schema.
 *
 * `send()` in ./stack.ts calls it for every `/v1/` response unless the caller passes
 * `skipContractCheck: true`. Schemas are compiled with ajv (JSON Schema 2020-12, the dialect of
 * OpenAPI 3.1; `minLength` / `maxLength` count code points, like the service).
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import { parse } from 'yaml';

export const OPENAPI_FILE = join(__dirname, '..', '..', '..', 'openapi', 'openapi.yaml');
/** The parsed document as JSON, named by the YAML's hash (see `openApiDocument`). */
const PARSED_CACHE_DIR = join(__dirname, '..', '..', '..', '.local', 'openapi-parsed');

type Obj = Record<string, unknown>;

/** Thrown when a response is not described by the document. */
export class ContractViolation extends Error {
  override readonly name = 'ContractViolation';
}

/** Anything with `get(name)` (fetch `Headers`) or a plain header record. */
export type HeaderSource = { get(name: string): string | null } | Record<string, string | undefined>;

const COMPONENTS_ID = 'https://openapi.invalid/components.json';
const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Rewrites `#/components/schemas/X` references to the ajv schema that holds the components. */
function rewriteRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rewriteRefs);
  if (!isObj(value)) return value;
  const out: Obj = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] = k === '$ref' && typeof v === 'string' && v.startsWith('#/components/schemas/') ? `${COMPONENTS_ID}#/$defs/${v.slice('#/components/schemas/'.length)}` : rewriteRefs(v);
  }
  return out;
}

function headerValue(headers: HeaderSource, name: string): string | null {
  if (typeof headers.get === 'function') return (headers as { get(name: string): string | null }).get(name);
  const lower = name.toLowerCase();
  for (const [k, v] of Object.entries(headers as Record<string, string | undefined>)) if (k.toLowerCase() === lower && v !== undefined) return v;
  return null;
}

function snippet(body: unknown): string {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return text === undefined ? String(body) : text.length > 400 ? `${text.slice(0, 400)}…` : text;
}

export class Contract {
  private readonly ajv: Ajv2020;
  private readonly cache = new Map<string, ValidateFunction>();

  constructor(readonly document: Obj) {
    this.ajv = new Ajv2020({ strict: true, allErrors: true });
    // OpenAPI's discriminator is an annotation here: `oneOf` does the validation.
    this.ajv.addKeyword({ keyword: 'discriminator', schemaType: 'object' });
    const components = isObj(document.components) ? document.components : {};
    this.ajv.addSchema({ $id: COMPONENTS_ID, $defs: rewriteRefs(components.schemas ?? {}) });
  }

  /** Compiles a schema of the document (references to components allowed). */
  compile(schema: unknown, cacheKey?: string): ValidateFunction {
    const cached = cacheKey === undefined ? undefined : this.cache.get(cacheKey);
    if (cached) return cached;
    const fn = this.ajv.compile(rewriteRefs(schema) as Obj);
    if (cacheKey !== undefined) this.cache.set(cacheKey, fn);
    return fn;
  }

  private deref(value: unknown, kind: 'responses' | 'headers' | 'requestBodies'): Obj {
    if (isObj(value) && typeof value.$ref === 'string') {
      const prefix = `#/components/${kind}/`;
      if (!value.$ref.startsWith(prefix)) throw new Error(`unsupported $ref ${value.$ref}`);
      const components = this.document.components as Obj;
      const target = (components[kind] as Obj | undefined)?.[value.$ref.slice(prefix.length)];
      if (!isObj(target)) throw new Error(`dangling $ref ${value.$ref}`);
      return target;
    }
    if (!isObj(value)) throw new Error(`not an object: ${JSON.stringify(value)}`);
    return value;
  }

  /** The operation for `method` on `path`, or (for another method) the path's documented 405. */
  private responseFor(method: string, path: string, status: number): { response: Obj; where: string } {
    const where = `${method.toUpperCase()} ${path} -> ${status}`;
    const paths = this.document.paths as Obj;
    const item = paths[path];
    if (!isObj(item)) throw new ContractViolation(`${where}: path ${path} is not in the OpenAPI document`);
    let operation = item[method.toLowerCase()];
    if (!isObj(operation)) {
      // No operation for this method: the only documented answer is the path's 405.
      const documented = HTTP_METHODS.map((m) => item[m]).filter(isObj);
      operation = documented.find((op) => isObj(op.responses) && '405' in op.responses);
      if (status !== 405 || !isObj(operation)) {
        throw new ContractViolation(`${where}: method ${method.toUpperCase()} is not documented for ${path} (only its 405 is)`);
      }
    }
    const responses = (operation as Obj).responses as Obj;
    const statusText = String(status);
    const response = responses[statusText] ?? responses[`${statusText[0]}XX`] ?? responses.default;
    if (response === undefined) {
      throw new ContractViolation(`${where}: status ${status} is not documented (documented: ${Object.keys(responses).join(', ')})`);
    }
    return { response: this.deref(response, 'responses'), where };
  }

  assertResponse(method: string, path: string, status: number, headers: HeaderSource, body: unknown): void {
    const cleanPath = path.split('?')[0] ?? path;
    const { response, where } = this.responseFor(method, cleanPath, status);
    const problems: string[] = [];
    const contentTypeHeader = headerValue(headers, 'content-type');
    const mediaType = contentTypeHeader === null ? null : (contentTypeHeader.split(';')[0] ?? '').trim().toLowerCase();

    // Headers.
    const declared = isObj(response.headers) ? response.headers : {};
    for (const [name, raw] of Object.entries(declared)) {
      const header = this.deref(raw, 'headers');
      const value = headerValue(headers, name);
      const mustBePresent = header.required === true || (name.toLowerCase() === 'x-request-id' && mediaType === 'application/json');
      if (value === null) {
        if (mustBePresent) problems.push(`header ${name} is missing`);
        continue;
      }
      const schema = isObj(header.schema) ? header.schema : {};
      let typed: unknown = value;
      if (schema.type === 'integer' || schema.type === 'number') {
        typed = /^-?\d+(\.\d+)?$/.test(value.trim()) ? Number(value) : value;
      }
      const validate = this.compile(schema, `header:${name}:${JSON.stringify(schema)}`);
      if (!validate(typed)) problems.push(`header ${name}: ${JSON.stringify(value)} ${this.ajv.errorsText(validate.errors)}`);
    }

    // Content.
    const content = isObj(response.content) ? response.content : undefined;
    if (content === undefined) {
      if (body !== undefined && body !== '') problems.push(`no body is documented, got ${snippet(body)}`);
    } else if (mediaType === null || !(mediaType in content)) {
      problems.push(`Content-Type ${contentTypeHeader ?? '(none)'} is not documented (documented: ${Object.keys(content).join(', ')})`);
    } else {
      const media = content[mediaType] as Obj;
      // A HEAD response has no body by definition (RFC 9110): only status and headers are checked.
      if (isObj(media.schema) && method.toUpperCase() !== 'HEAD') {
        let value = body;
        if (mediaType === 'application/json' && typeof body === 'string') {
          try {
            value = JSON.parse(body) as unknown;
          } catch {
            problems.push('the body is not valid JSON');
          }
        }
        const validate = this.compile(media.schema, `body:${method.toLowerCase()} ${cleanPath} ${status} ${mediaType}`);
        if (!validate(value)) problems.push(`body does not match the schema: ${this.ajv.errorsText(validate.errors, { separator: '; ' })}`);
      }
    }

    if (problems.length > 0) {
      throw new ContractViolation(`${where}: the response does not match the OpenAPI document:\n  - ${problems.join('\n  - ')}\n  body: ${snippet(body)}`);
    }
  }
}

let shared: Contract | undefined;

/**
 * The committed document, parsed. Parsing its YAML (about 230 KB) costs about 0.4 s of CPU, and
 * every test file parses it again (each has its own module registry under Jest): the first to
 * parse a version of the file keeps the result as JSON, named by the YAML's hash, and the others
 * read that (a few ms). A changed document has another hash, so nothing stale is ever read.
 */
function openApiDocument(): Obj {
  const text = readFileSync(OPENAPI_FILE, 'utf8');
  const cached = join(PARSED_CACHE_DIR, `${createHash('sha256').update(text).digest('hex')}.json`);
  try {
    return JSON.parse(readFileSync(cached, 'utf8')) as Obj;
  } catch {
    // Not parsed yet (or written by nobody yet): parse it, and keep it for the next files.
  }
  const document = parse(text) as Obj;
  mkdirSync(PARSED_CACHE_DIR, { recursive: true });
  // Written whole, then renamed: a parallel worker reads either nothing or all of it.
  const partial = `${cached}.${process.pid}.tmp`;
  writeFileSync(partial, JSON.stringify(document));
  renameSync(partial, cached);
  return document;
}

/** The contract of the committed document (compiled once per test file). */
export function contract(): Contract {
  shared ??= new Contract(openApiDocument());
  return shared;
}

/** Throws a `ContractViolation` unless openapi/openapi.yaml describes this response. */
export function assertResponseMatchesContract(method: string, path: string, status: number, headers: HeaderSource, body: unknown): void {
  contract().assertResponse(method, path, status, headers, body);
}
