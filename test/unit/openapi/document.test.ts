/**
 * The OpenAPI document (openapi/openapi.yaml): committed == freshly generated from the zod
 * schemas, a valid OpenAPI 3.1 document (@seriousme/openapi-schema-validator), every schema
 * compiles and every example matches its schema, the error codes it lists are exactly the ones
 * the sources throw (with the right status), and the response validator used by the integration
 * tests (test/integration/helpers/openapi.ts) rejects what the document does not describe.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import fc from 'fast-check';
import { parse, stringify } from 'yaml';
import * as errors from '../../../functions/src/rules/errors';
import { IMAGE_ERROR_CODES } from '../../../functions/src/rules/images';
import { ClaimRequestSchema } from '../../../functions/src/deliveries/schemas';
import { YAML_HEADER, YAML_OPTIONS, buildOpenApiDocument } from '../../../functions/src/openapi/document';
import { ERROR_CODES } from '../../../functions/src/openapi/error-codes';
import { httpOperations } from '../../../functions/src/operations';
import { Contract, ContractViolation, OPENAPI_FILE } from '../../integration/helpers/openapi';

const ROOT = join(__dirname, '..', '..', '..');
const SERVED_FILE = join(ROOT, 'hosting', 'public', 'openapi.yaml');

type Obj = Record<string, unknown>;
const fresh = buildOpenApiDocument() as Obj;
const freshText = YAML_HEADER + stringify(fresh, YAML_OPTIONS);
const committed = parse(readFileSync(OPENAPI_FILE, 'utf8')) as Obj;
const contract = new Contract(committed);

const paths = fresh.paths as Record<string, Record<string, Obj>>;
const components = fresh.components as Record<string, Record<string, Obj>>;
const operations = Object.entries(paths).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ path, method, op })));
const deref = (value: Obj, kind: string): Obj =>
  typeof value.$ref === 'string' ? (components[kind]?.[value.$ref.split('/').at(-1) as string] as Obj) : value;
const responsesOf = (op: Obj): Array<[string, Obj]> => Object.entries(op.responses as Record<string, Obj>).map(([s, r]) => [s, deref(r, 'responses')]);

describe('the committed document', () => {
  test.each([
    ['openapi/openapi.yaml', OPENAPI_FILE],
    ['hosting/public/openapi.yaml (served at /openapi.yaml)', SERVED_FILE],
  ])('%s equals a fresh build (run `npm run openapi` after changing schemas or error codes)', (_name, file) => {
    expect(readFileSync(file, 'utf8')).toBe(freshText);
  });

  test('is a valid OpenAPI 3.1 document (@seriousme/openapi-schema-validator)', () => {
    // The validator is ESM-only and reads its meta-schemas via import.meta: run it in plain Node.
    const script = `
      import { Validator } from '@seriousme/openapi-schema-validator';
      const chunks = [];
      for await (const c of process.stdin) chunks.push(c);
      const validator = new Validator();
      const result = await validator.validate(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      process.stdout.write(JSON.stringify({ ...result, version: validator.version }));`;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, input: JSON.stringify(committed), encoding: 'utf8' });
    expect(run.stderr).toBe('');
    const result = JSON.parse(run.stdout) as { valid: boolean; errors?: unknown; version: string };
    expect(result).toEqual({ valid: true, version: '3.1' });
  });

  // What a connector developer's tools make of it: Redocly's strict ruleset (redocly.yaml: every
  // warning is an error) and the types openapi-typescript generates, which the openapi-fetch client
  // of test/integration/openapi-client.test.ts is typed with (committed, so a change shows in review).
  test('passes `redocly lint` with the recommended-strict rules', () => {
    const run = spawnSync(join(ROOT, 'node_modules', '.bin', 'redocly'), ['lint', 'openapi/openapi.yaml', '--format', 'stylish'], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    });
    expect({ status: run.status, output: run.stdout + run.stderr }).toEqual({ status: 0, output: expect.stringContaining('Your API description is valid') });
    expect(run.stdout + run.stderr).not.toMatch(/warning/i);
  });

  test('test/openapi-client/api.generated.d.ts is what openapi-typescript makes of it (run `npm run openapi`)', () => {
    // openapi-typescript loads ESM-only modules: generate in plain Node, as scripts/openapi.mjs does.
    const script = `
      import openapiTS, { astToString } from 'openapi-typescript';
      import { readFileSync } from 'node:fs';
      process.stdout.write(astToString(await openapiTS(readFileSync(process.argv[1], 'utf8'))));`;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script, OPENAPI_FILE], { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 << 20 });
    expect(run.stderr).toBe('');
    expect(readFileSync(join(ROOT, 'test', 'openapi-client', 'api.generated.d.ts'), 'utf8')).toBe(run.stdout);
  });

  test('info, servers, security and operation ids', () => {
    expect(fresh.openapi).toBe('3.1.0');
    expect((fresh.info as Obj).version).toBe('1.0.0');
    // The base host is the Hosting site; the fallback is the same site's firebaseapp.com domain.
    expect((fresh.servers as Obj[]).map((s) => [s.url, Object.keys((s.variables ?? {}) as Obj)])).toEqual([
      ['https://{site}.web.app', ['site']],
      ['https://{site}.firebaseapp.com', ['site']],
      ['http://127.0.0.1:5000', []],
    ]);
    expect(components.securitySchemes).toEqual({ integrationKey: expect.objectContaining({ type: 'http', scheme: 'bearer' }) });
    expect(fresh.security).toEqual([{ integrationKey: [] }]);
    // One path per operation of the catalogue (functions/src/operations.ts), in its order, each with its one method (POST unless the entry names one).
    expect(operations.map(({ method, path, op }) => `${method} ${path} ${op.operationId}`)).toEqual(
      httpOperations().map((op) => `${(op.method ?? 'POST').toLowerCase()} ${op.path} ${op.operationId}`),
    );
    expect(operations.map(({ path }) => path)).toEqual(expect.arrayContaining(['/v1/messages', '/v1/deliveries/claim', '/v1/deliveries/receipt']));
  });

  test("each operation's summary, description, tag and error codes are its catalogue entry's", () => {
    for (const entry of httpOperations()) {
      const op = paths[entry.path]?.[(entry.method ?? 'POST').toLowerCase()] as Obj;
      expect({ id: entry.operationId, summary: op.summary, tag: op.tags }).toEqual({ id: entry.operationId, summary: entry.summary, tag: [entry.path.split('/')[2]] });
      expect(typeof op.description === 'string' && op.description.length > 0).toBe(true);
      const documented = responsesOf(op).flatMap(([status, response]) => {
        if (Number(status) < 400) return [];
        const media = (response.content as Record<string, Obj>)['application/json'] as Obj;
        return Object.keys(media.examples as Obj);
      });
      expect({ id: entry.operationId, codes: [...documented].sort() }).toEqual({ id: entry.operationId, codes: [...entry.errorCodes].sort() });
    }
  });

  test('every response declares X-Request-Id; 429 and 503 declare Retry-After; 405 declares Allow', () => {
    for (const { op } of operations) {
      for (const [status, response] of responsesOf(op)) {
        const headers = response.headers as Obj;
        expect([status, Object.keys(headers)]).toEqual([status, expect.arrayContaining(['X-Request-Id'])]);
        if (status === '429' || status === '503') expect(deref(headers['Retry-After'] as Obj, 'headers').required).toBe(true);
        if (status === '405') expect(headers.Allow).toBeDefined();
      }
      expect(Object.keys(op.responses as Obj)).toEqual(expect.arrayContaining(['200', '400', '401', '403', '405', '413', '415', '503']));
    }
  });

  test('request bounds come from the zod schemas, including the code-point bounds of text()', () => {
    const claim = components.schemas?.ClaimRequest as { properties: Record<string, Obj> };
    expect(claim.properties.deliveryId).toMatchObject({ type: 'string', minLength: 1, maxLength: 128 });
    const complete = components.schemas?.CompleteRequest as { properties: Record<string, Obj> };
    expect(complete.properties.providerMessageIds).toMatchObject({ minItems: 1, maxItems: 20, items: { minLength: 1, maxLength: 200 } });
    const fail = components.schemas?.FailRequest as { properties: Record<string, Obj> };
    expect(fail.properties.code).toMatchObject({ maxLength: 80, pattern: '^[a-z][a-z0-9_]*$' });
    expect(fail.properties.retryAfterMs).toMatchObject({ type: 'integer', minimum: 0, maximum: 3600000 });
    const message = components.schemas?.IncomingMessage as { properties: Record<string, Obj> };
    expect((message.properties.message as { properties: Record<string, Obj> }).properties.text).toMatchObject({ maxLength: 10000 });
    expect(components.schemas?.IncomingMessageMultipart).toMatchObject({ properties: { images: { type: 'array', maxItems: 3 } } });
    expect(components.schemas?.ClaimResponse).toMatchObject({ discriminator: { propertyName: 'status' } });
  });

  test('request schemas state their defaults in prose, never as `default` (generated clients would make those fields required)', () => {
    const requestSchemas = Object.entries(components.schemas ?? {}).filter(([name]) => name.endsWith('Request') || name.startsWith('IncomingMessage') && !name.endsWith('Response'));
    expect(requestSchemas.map(([name]) => name)).toEqual(expect.arrayContaining(['IncomingMessage', 'ClaimRequest', 'PendingRequest']));
    const defaults = (node: unknown, at: string): string[] =>
      typeof node !== 'object' || node === null
        ? []
        : Object.entries(node).flatMap(([key, value]) => (key === 'default' ? [at] : defaults(value, `${at}.${key}`)));
    expect(requestSchemas.flatMap(([name, schema]) => defaults(schema, name))).toEqual([]);
    const sender = (components.schemas?.IncomingMessage as { properties: Record<string, { properties: Record<string, Obj> }> }).properties.sender;
    expect(sender?.properties.kind).toMatchObject({ description: expect.stringContaining('Default: `"customer"`') });
    expect((components.schemas?.PendingRequest as { properties: Record<string, Obj> }).properties.limit).toMatchObject({ description: expect.stringMatching(/default 50/) });
  });

  test('every schema compiles (ajv, JSON Schema 2020-12, strict) and every example matches its schema', () => {
    let checked = 0;
    const check = (what: string, schema: Obj, examples: Obj | undefined) => {
      const validate = contract.compile(schema);
      for (const [name, example] of Object.entries(examples ?? {})) {
        const value = (example as Obj).value;
        const ok = validate(value);
        expect({ what: `${what} example ${name}`, errors: ok ? null : validate.errors }).toEqual({ what: `${what} example ${name}`, errors: null });
        checked++;
      }
    };
    for (const { path, op } of operations) {
      const body = op.requestBody as { content: Record<string, Obj> };
      for (const [mediaType, media] of Object.entries(body.content)) {
        check(`${path} request ${mediaType}`, media.schema as Obj, media.examples as Obj);
        if (mediaType === 'multipart/form-data') {
          for (const example of Object.values(media.examples as Record<string, { value: { payload: string } }>)) {
            check(`${path} multipart payload`, { $ref: '#/components/schemas/IncomingMessage' }, { payload: { value: JSON.parse(example.value.payload) } });
          }
        }
      }
      for (const [status, response] of responsesOf(op)) {
        for (const [mediaType, media] of Object.entries((response.content ?? {}) as Record<string, Obj>)) {
          check(`${path} ${status} ${mediaType}`, media.schema as Obj, media.examples as Obj);
        }
      }
    }
    for (const [name, schema] of Object.entries(components.schemas ?? {})) contract.compile(schema, `component ${name}`);
    expect(checked).toBeGreaterThan(40);
  });

  test('JSON Schema maxLength counts code points, like the service (text() in platform/schema.ts)', () => {
    const validate = contract.compile({ $ref: '#/components/schemas/ClaimRequest' });
    const accepts = (deliveryId: string) => ({ zod: ClaimRequestSchema.safeParse({ deliveryId, requestId: 'r' }).success, ajv: validate({ deliveryId, requestId: 'r' }) });
    expect(accepts('😀'.repeat(128))).toEqual({ zod: true, ajv: true });
    expect(accepts('😀'.repeat(129))).toEqual({ zod: false, ajv: false });
    expect(accepts('')).toEqual({ zod: false, ajv: false });
    fc.assert(
      fc.property(fc.string({ unit: 'binary', minLength: 0, maxLength: 140 }), (s) => {
        const { zod, ajv } = accepts(s);
        expect(ajv).toBe(zod);
      }),
      { numRuns: 200 },
    );
    // The one difference JSON Schema cannot express: lone surrogates (documented in info.description).
    expect(accepts('\ud800')).toEqual({ zod: false, ajv: true });
  });
});

describe('error codes', () => {
  /**
   * `new <Class>Error('<code>'` and `new <Class>Error(IMAGE_ERROR_CODES.x` in functions/src (not the
   * CLI, nor the console's function, console-api/: not a connector operation, its codes are in
   * docs/console.md#console-endpoints).
   */
  function thrownCodes(): Map<string, Set<number>> {
    const found = new Map<string, Set<number>>();
    const visit = (dir: string) => {
      for (const entry of readdirSync(dir)) {
        const full = join(dir, entry);
        if (statSync(full).isDirectory()) {
          if (!['cli', 'openapi', 'console-api'].includes(entry)) visit(full);
          continue;
        }
        if (!full.endsWith('.ts')) continue;
        const source = readFileSync(full, 'utf8');
        for (const m of source.matchAll(/new (\w+Error)\(\s*(?:'([a-z][a-z0-9_]*)'|IMAGE_ERROR_CODES\.(\w+))/g)) {
          const [, className, literal, imageKey] = m;
          const code = literal ?? IMAGE_ERROR_CODES[imageKey as keyof typeof IMAGE_ERROR_CODES];
          const Class = (errors as unknown as Record<string, new (code: string, message: string, retryAfter: number) => errors.ApiError>)[className as string];
          if (Class === undefined) throw new Error(`${relative(ROOT, full)}: ${className} is not an ApiError subclass of functions/src/rules/errors.ts`);
          const status = new Class(code as string, '', 1).status;
          found.set(code as string, (found.get(code as string) ?? new Set()).add(status));
        }
      }
    };
    visit(join(ROOT, 'functions', 'src'));
    return found;
  }

  test('the catalogue lists exactly the codes the sources throw, with their status', () => {
    const thrown = thrownCodes();
    const fromSources = Object.fromEntries([...thrown].map(([code, statuses]) => [code, [...statuses]]).sort());
    const fromCatalogue = Object.fromEntries(Object.entries(ERROR_CODES).map(([code, info]) => [code, [info.status]]).sort());
    expect(fromCatalogue).toEqual(fromSources);
  });

  test('every catalogued code is documented for at least one operation', () => {
    const used = new Set(httpOperations().flatMap((op) => op.errorCodes));
    expect(Object.keys(ERROR_CODES).filter((code) => !used.has(code as keyof typeof ERROR_CODES))).toEqual([]);
  });

  test('each documented error response enumerates its codes and gives one example per code', () => {
    for (const { op } of operations) {
      for (const [status, response] of responsesOf(op)) {
        if (Number(status) < 400) continue;
        const media = (response.content as Record<string, Obj>)['application/json'] as Obj;
        const codes = (((media.schema as { allOf: Obj[] }).allOf[1] as Obj).properties as { error: { properties: { code: { enum: string[] } } } }).error.properties.code.enum;
        expect(codes.length).toBeGreaterThan(0);
        expect(Object.keys(media.examples as Obj)).toEqual(codes);
        for (const code of codes) expect(ERROR_CODES[code as keyof typeof ERROR_CODES].status).toBe(Number(status));
      }
    }
  });
});

describe('assertResponseMatchesContract (the integration tests use it on every /v1/ response)', () => {
  const json = { 'content-type': 'application/json; charset=utf-8', 'x-request-id': 'req_abc' };
  const ok = (method: string, path: string, status: number, headers: Record<string, string>, body: unknown) =>
    expect(() => contract.assertResponse(method, path, status, headers, body)).not.toThrow();
  const violation = (method: string, path: string, status: number, headers: Record<string, string>, body: unknown, pattern: RegExp) => {
    let thrown: unknown;
    try {
      contract.assertResponse(method, path, status, headers, body);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(ContractViolation);
    expect((thrown as Error).message).toMatch(pattern);
  };

  const rate = { 'ratelimit-limit': '60', 'ratelimit-remaining': '59', 'ratelimit-reset': '1' };
  test('accepts documented responses', () => {
    ok('POST', '/v1/messages', 201, { ...json, ...rate }, { conversationId: 'c', messageId: 'm', duplicate: false });
    ok('POST', '/v1/messages', 200, { ...json, ...rate }, { conversationId: 'c', messageId: 'm', duplicate: true });
    ok('POST', '/v1/messages', 400, { ...json, ...rate }, { error: { code: 'invalid_request', message: 'x' } });
    ok('POST', '/v1/messages', 400, json, { error: { code: 'invalid_json', message: 'from the runtime, before the key' } });
    ok('POST', '/v1/deliveries/extend', 200, json, { leaseExpiresAt: 1767268980000 });
    ok('POST', '/v1/deliveries/extend', 409, json, { error: { code: 'lease_limit_reached', message: 'x' } });
    ok('POST', '/v1/deliveries/claim', 200, json, { status: 'skip', reason: 'waiting_for_previous' });
    ok('POST', '/v1/deliveries/claim', 503, { ...json, 'retry-after': '7' }, { error: { code: 'lease_busy', message: 'busy' } });
    ok('POST', '/v1/messages', 429, { ...json, ...rate, 'ratelimit-remaining': '0', 'retry-after': '1' }, { error: { code: 'rate_limited' } });
    ok('GET', '/v1/deliveries/fail', 405, { ...json, allow: 'POST' }, { error: { code: 'method_not_allowed', message: 'POST only' } });
    ok('POST', '/v1/messages?x=1', 413, json, { error: { code: 'images_too_large', message: 'x' } });
    ok('HEAD', '/v1/messages', 405, { ...json, allow: 'POST' }, '');
  });

  test('rejects what the document does not describe', () => {
    // No platform exception any more: an HTML error page is a contract violation on every status.
    violation('POST', '/v1/messages', 400, { 'content-type': 'text/html; charset=utf-8' }, '<!DOCTYPE html><pre>Bad Request</pre>', /X-Request-Id is missing|text\/html/);
    violation('POST', '/v1/deliveries/claim', 415, { 'content-type': 'text/html; charset=utf-8' }, '<!DOCTYPE html><pre>x</pre>', /text\/html/);
    violation('POST', '/v1/messages', 413, { 'content-type': 'text/html; charset=utf-8' }, '<!DOCTYPE html><pre>x</pre>', /text\/html/);
    violation('POST', '/v1/nope', 200, json, {}, /path \/v1\/nope is not in the OpenAPI document/);
    // The rate-limit headers are required where the key is always known, and typed wherever they appear.
    violation('POST', '/v1/messages', 201, json, { conversationId: 'c', messageId: 'm', duplicate: false }, /RateLimit-Limit is missing/);
    violation('POST', '/v1/messages', 429, { ...json, 'retry-after': '1' }, { error: { code: 'rate_limited' } }, /RateLimit-Remaining is missing/);
    violation('POST', '/v1/messages', 400, { ...json, ...rate, 'ratelimit-reset': 'soon' }, { error: { code: 'invalid_request', message: 'x' } }, /RateLimit-Reset/);
    violation('GET', '/v1/messages', 200, json, {}, /method GET is not documented/);
    violation('POST', '/v1/deliveries/claim', 409, json, { error: { code: 'lease_lost' } }, /status 409 is not documented/);
    violation('POST', '/v1/deliveries/claim', 200, json, { status: 'ready', leaseId: 'l' }, /body does not match/);
    violation('POST', '/v1/messages', 201, json, { conversationId: 'c', messageId: 'm', duplicate: true }, /body does not match/);
    violation('POST', '/v1/messages', 201, json, { conversationId: 'c', messageId: 'm', duplicate: false, extra: 1 }, /body does not match/);
    violation('POST', '/v1/deliveries/start', 409, json, { error: { code: 'conflicting_completion' } }, /body does not match/);
    violation('POST', '/v1/deliveries/claim', 503, json, { error: { code: 'lease_busy' } }, /header Retry-After is missing/);
    violation('POST', '/v1/deliveries/claim', 503, { ...json, 'retry-after': 'soon' }, { error: { code: 'lease_busy' } }, /header Retry-After/);
    violation('POST', '/v1/messages', 429, json, { error: { code: 'rate_limited' } }, /header Retry-After is missing/);
    violation('POST', '/v1/deliveries/complete', 200, { 'content-type': 'application/json' }, { status: 'sent' }, /header X-Request-Id is missing/);
    violation('POST', '/v1/messages', 400, { 'content-type': 'application/json' }, { error: { code: 'invalid_json' } }, /header X-Request-Id is missing/);
    violation('POST', '/v1/deliveries/fail', 200, { ...json, 'content-type': 'text/plain' }, 'ok', /Content-Type text\/plain is not documented/);
    violation('POST', '/v1/deliveries/fail', 404, { 'content-type': 'text/html' }, '<html></html>', /header X-Request-Id is missing|Content-Type text\/html is not documented/);
    violation('POST', '/v1/deliveries/fail', 415, { 'content-type': 'application/json' }, { error: { code: 'unsupported_media_type' } }, /header X-Request-Id is missing/);
    violation('POST', '/v1/deliveries/fail', 400, { ...json, 'content-type': 'application/json' }, { error: { code: 'Bad' } }, /body does not match/);
  });

  test('the committed document and the fresh build describe the same contract', () => {
    expect(committed).toEqual(JSON.parse(JSON.stringify(fresh)));
  });
});
