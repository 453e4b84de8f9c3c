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
import { dirname, join } from 'node:path';
import Ajv2020, { type Options, type ValidateFunction } from 'ajv/dist/2020';
import standaloneCode from 'ajv/dist/standalone';
import { parse } from 'yaml';

export const OPENAPI_FILE = join(__dirname, '..', '..', '..', 'openapi', 'openapi.yaml');
/** The parsed document as JSON, named by the YAML's hash (see `openApiDocument`). */
const PARSED_CACHE_DIR = join(__dirname, '..', '..', '..', '.local', 'openapi-parsed');
/** The response validators compiled to code once (see `precompiledValidators`), named by what they are compiled from. */
const VALIDATORS_CACHE_DIR = join(__dirname, '..', '..', '..', '.local', 'openapi-validators');

type Obj = Record<string, unknown>;

/** Thrown when a response is not described by the document. */
export class ContractViolation extends Error {
  override readonly name = 'ContractViolation';
}

/** Anything with `get(name)` (fetch `Headers`) or a plain header record. */
export type HeaderSource = { get(name: string): string | null } | Record<string, string | undefined>;

const COMPONENTS_ID = 'https://openapi.invalid/components.json';
/** The `$id` prefix of the response schemas compiled ahead (`precompiledValidators`). */
const VALIDATOR_ID = 'https://openapi.invalid/validators';
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

/** The ajv of a document: its components added, OpenAPI's `discriminator` allowed. */
function documentAjv(document: Obj, options: Options = {}): Ajv2020 {
  const ajv = new Ajv2020({ strict: true, allErrors: true, ...options });
  // OpenAPI's discriminator is an annotation here: `oneOf` does the validation.
  ajv.addKeyword({ keyword: 'discriminator', schemaType: 'object' });
  const components = isObj(document.components) ? document.components : {};
  ajv.addSchema({ $id: COMPONENTS_ID, $defs: rewriteRefs(components.schemas ?? {}) });
  return ajv;
}

/** The key a response header's schema is compiled under (one per distinct schema of a name). */
const headerKey = (name: string, schema: Obj): string => `header:${name}:${JSON.stringify(schema)}`;
/** The key a response body's schema is compiled under: the documented operation, status key (`200`, `5XX`, `default`) and media type. */
const bodyKey = (method: string, path: string, statusKey: string, mediaType: string): string => `body:${method} ${path} ${statusKey} ${mediaType}`;
const headerSchema = (header: Obj): Obj => (isObj(header.schema) ? header.schema : {});

export class Contract {
  private readonly ajv: Ajv2020;
  private readonly cache = new Map<string, ValidateFunction>();

  constructor(readonly document: Obj) {
    this.ajv = documentAjv(document);
  }

  /** Takes validators compiled elsewhere (`precompiledValidators`) under their keys: `compile` then returns them. */
  preload(validators: ReadonlyMap<string, ValidateFunction>): void {
    for (const [key, validate] of validators) this.cache.set(key, validate);
  }

  /**
   * Every schema `assertResponse` validates with, under the key it compiles it by: each documented
   * response's body (per media type) and each of its headers.
   */
  responseSchemas(): Array<[key: string, schema: Obj]> {
    const found = new Map<string, Obj>();
    for (const [path, item] of Object.entries(this.document.paths as Obj)) {
      if (!isObj(item)) continue;
      for (const method of HTTP_METHODS) {
        const operation = item[method];
        if (!isObj(operation) || !isObj(operation.responses)) continue;
        for (const [statusKey, raw] of Object.entries(operation.responses)) {
          const response = this.deref(raw, 'responses');
          for (const [name, header] of Object.entries(isObj(response.headers) ? response.headers : {})) {
            const schema = headerSchema(this.deref(header, 'headers'));
            found.set(headerKey(name, schema), schema);
          }
          for (const [mediaType, media] of Object.entries(isObj(response.content) ? response.content : {})) {
            if (isObj(media) && isObj(media.schema)) found.set(bodyKey(method, path, statusKey, mediaType), media.schema);
          }
        }
      }
    }
    return [...found];
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
  private responseFor(method: string, path: string, status: number): { response: Obj; where: string; key: (mediaType: string) => string } {
    const where = `${method.toUpperCase()} ${path} -> ${status}`;
    const paths = this.document.paths as Obj;
    const item = paths[path];
    if (!isObj(item)) throw new ContractViolation(`${where}: path ${path} is not in the OpenAPI document`);
    let operationMethod = method.toLowerCase();
    let operation = item[operationMethod];
    if (!isObj(operation)) {
      // No operation for this method: the only documented answer is the path's 405.
      operationMethod = HTTP_METHODS.find((m) => isObj(item[m]) && isObj((item[m] as Obj).responses) && '405' in ((item[m] as Obj).responses as Obj)) ?? '';
      operation = item[operationMethod];
      if (status !== 405 || !isObj(operation)) {
        throw new ContractViolation(`${where}: method ${method.toUpperCase()} is not documented for ${path} (only its 405 is)`);
      }
    }
    const responses = (operation as Obj).responses as Obj;
    const statusText = String(status);
    const statusKey = [statusText, `${statusText[0]}XX`, 'default'].find((k) => responses[k] !== undefined);
    if (statusKey === undefined) {
      throw new ContractViolation(`${where}: status ${status} is not documented (documented: ${Object.keys(responses).join(', ')})`);
    }
    return { response: this.deref(responses[statusKey], 'responses'), where, key: (mediaType) => bodyKey(operationMethod, path, statusKey, mediaType) };
  }

  assertResponse(method: string, path: string, status: number, headers: HeaderSource, body: unknown): void {
    const cleanPath = path.split('?')[0] ?? path;
    const { response, where, key } = this.responseFor(method, cleanPath, status);
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
      const schema = headerSchema(header);
      let typed: unknown = value;
      if (schema.type === 'integer' || schema.type === 'number') {
        typed = /^-?\d+(\.\d+)?$/.test(value.trim()) ? Number(value) : value;
      }
      const validate = this.compile(schema, headerKey(name, schema));
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
        const validate = this.compile(media.schema, key(mediaType));
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
 * Keeps `text` at `file` for the next test files: written whole, then renamed, so that a parallel
 * worker reads either nothing or all of it.
 */
function keep(file: string, text: string): void {
  mkdirSync(dirname(file), { recursive: true });
  const partial = `${file}.${process.pid}.tmp`;
  writeFileSync(partial, text);
  renameSync(partial, file);
}

/**
 * The committed document, parsed, and the hash of its YAML. Parsing the YAML (about 230 KB) costs
 * about 0.4 s of CPU, and every test file parses it again (each has its own module registry under
 * Jest): the first to parse a version of the file keeps the result as JSON, named by the YAML's
 * hash, and the others read that (a few ms). A changed document has another hash, so nothing
 * stale is ever read.
 */
function openApiDocument(): { document: Obj; hash: string } {
  const text = readFileSync(OPENAPI_FILE, 'utf8');
  const hash = createHash('sha256').update(text).digest('hex');
  const cached = join(PARSED_CACHE_DIR, `${hash}.json`);
  try {
    return { document: JSON.parse(readFileSync(cached, 'utf8')) as Obj, hash };
  } catch {
    // Not parsed yet (or written by nobody yet): parse it, and keep it for the next files.
  }
  const document = parse(text) as Obj;
  keep(cached, JSON.stringify(document));
  return { document, hash };
}

/**
 * The validators of every response schema of `contract` (`Contract.responseSchemas`), compiled to
 * code once and loaded by each test file. ajv compiles a response schema in about 75 ms of CPU (a
 * warm Jest worker), and every test file compiled the ones its responses needed again (its own
 * module registry): a few hundred milliseconds a file, over the ninety integration files. The
 * first file to need a version writes ajv's standalone code of all of them under .local, named by
 * the hash of the document, ajv's version and this file; the others evaluate that code (ajv's
 * runtime helpers come from node_modules). Kept as the parsed document is (`keep`).
 */
function precompiledValidators(contract: Contract, documentHash: string): Map<string, ValidateFunction> {
  const schemas = contract.responseSchemas();
  const ajvVersion = (JSON.parse(readFileSync(require.resolve('ajv/package.json'), 'utf8')) as { version: string }).version;
  const hash = createHash('sha256').update(documentHash).update(ajvVersion).update(readFileSync(__filename)).digest('hex');
  const file = join(VALIDATORS_CACHE_DIR, `${hash}.cjs`);
  let code: string;
  try {
    code = readFileSync(file, 'utf8');
  } catch {
    const ajv = documentAjv(contract.document, { code: { source: true } });
    schemas.forEach(([, schema], i) => ajv.addSchema({ ...(rewriteRefs(schema) as Obj), $id: `${VALIDATOR_ID}/${i}` }));
    code = standaloneCode(ajv, Object.fromEntries(schemas.map((_, i) => [`v${i}`, `${VALIDATOR_ID}/${i}`])));
    keep(file, code);
  }
  // Evaluated rather than required: Jest keeps .local out of its module map (jest.config.cjs).
  // The code is ajv's own output for the committed document, from the file written above.
  const loaded = { exports: {} as Record<string, ValidateFunction | undefined> };
  new Function('module', 'exports', 'require', code)(loaded, loaded.exports, require);
  return new Map(
    schemas.map(([key], i) => {
      const validate = loaded.exports[`v${i}`];
      if (validate === undefined) throw new Error(`${file} has no validator v${i} (${key})`);
      return [key, validate];
    }),
  );
}

/** The contract of the committed document, its response validators compiled ahead (`precompiledValidators`). */
export function contract(): Contract {
  if (shared === undefined) {
    const { document, hash } = openApiDocument();
    shared = new Contract(document);
    shared.preload(precompiledValidators(shared, hash));
  }
  return shared;
}

/** Throws a `ContractViolation` unless openapi/openapi.yaml describes this response. */
export function assertResponseMatchesContract(method: string, path: string, status: number, headers: HeaderSource, body: unknown): void {
  contract().assertResponse(method, path, status, headers, body);
}
