/**
 * scripts/sdk-generate.mjs: the SDK's copy of the contract module, and the wire types and readers
 * generated from the OpenAPI document, for every operation it has (a new one included, without
 * editing the script).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import YAML from 'yaml';
import { generateApi, generateContract } from '../../../scripts/sdk-generate.mjs';

const ROOT = join(__dirname, '..', '..', '..');
const openapiText = readFileSync(join(ROOT, 'openapi', 'openapi.yaml'), 'utf8');

interface Operation {
  operationId: string;
  method: string;
  path: string;
  read(status: number, body: unknown): unknown;
}

/** The generated TypeScript, type-checked strictly like the SDK, then loaded. */
function load(source: string): Record<string, Operation> & { OPERATIONS: Record<string, Operation> } {
  const file = '/generated/api.generated.ts';
  const options: ts.CompilerOptions = { strict: true, noUncheckedIndexedAccess: true, exactOptionalPropertyTypes: true, target: ts.ScriptTarget.ES2023, lib: ['lib.es2024.d.ts'], noEmit: true, skipLibCheck: true, types: [] };
  const host = ts.createCompilerHost(options);
  const readFile = host.readFile.bind(host);
  host.readFile = (name) => (name === file ? source : readFile(name));
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (name) => name === file || fileExists(name);
  const program = ts.createProgram([file], options, host);
  const problems = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
  expect(problems).toEqual([]);
  const js = ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2023 } }).outputText;
  const module = { exports: {} as Record<string, unknown> };
  new Function('module', 'exports', js)(module, module.exports);
  return module.exports as ReturnType<typeof load>;
}

test('the generated readers check the documented shape and keep only documented fields', () => {
  const api = load(generateApi(openapiText));
  const claim = api.claimDelivery as Operation;
  expect(claim).toMatchObject({ operationId: 'claimDelivery', method: 'POST', path: '/v1/deliveries/claim' });
  expect(claim.read(200, { status: 'skip', reason: 'waiting_for_previous', extra: 1 })).toEqual({ status: 'skip', reason: 'waiting_for_previous' });
  const ready = { status: 'ready', leaseId: 'l', leaseExpiresAt: 5, message: { text: 't', recipient: { externalConversationId: 'c', externalCustomerId: 'u' } } };
  expect(claim.read(200, ready)).toEqual(ready);
  expect(claim.read(200, { ...ready, leaseExpiresAt: 1.5 })).toBeUndefined(); // integer
  expect(claim.read(200, { ...ready, message: { text: 't' } })).toBeUndefined(); // required recipient
  expect(claim.read(200, { status: 'other', reason: 'x' })).toBeUndefined(); // neither option
  const send = api.sendMessage as Operation;
  expect(send.read(201, { conversationId: 'c', messageId: 'm', duplicate: false })).toEqual({ conversationId: 'c', messageId: 'm', duplicate: false });
  expect(send.read(201, { conversationId: 'c', messageId: 'm', duplicate: true })).toBeUndefined(); // 201 is never a duplicate
  expect(send.read(200, { conversationId: 'c', messageId: 'm', duplicate: true })).toEqual({ conversationId: 'c', messageId: 'm', duplicate: true });
  const pending = api.listPendingDeliveries as Operation;
  expect(pending.read(200, { deliveries: [], nextCursor: null })).toEqual({ deliveries: [], nextCursor: null });
  expect(pending.read(200, { deliveries: [{ deliveryId: 'd' }], nextCursor: null })).toBeUndefined();
  expect(pending.read(200, { deliveries: [] })).toBeUndefined();
});

test('a new operation in the document gets its types and reader without editing the script', () => {
  const document = YAML.parse(openapiText);
  document.paths['/v1/things/ping'] = {
    post: {
      operationId: 'pingThing',
      summary: 'A toy operation',
      requestBody: { content: { 'application/json': { schema: { type: 'object', properties: { ids: { type: 'array', items: { type: 'string' } } }, required: ['ids'] } } } },
      responses: {
        '200': { content: { 'application/json': { schema: { type: 'object', properties: { pong: { type: 'boolean' }, at: { type: ['integer', 'null'] } }, required: ['pong', 'at'] } } } },
        '400': { $ref: '#/components/responses/Unauthorized' },
      },
    },
  };
  const source = generateApi(YAML.stringify(document));
  expect(source).toContain('export type PingThingRequest = {\n  ids: readonly string[];\n};');
  expect(source).toContain('export type PingThingResponse = {\n  pong: boolean;\n  at: number | null;\n};');
  const api = load(source);
  expect(Object.keys(api.OPERATIONS)).toContain('pingThing');
  const ping = api.pingThing as Operation;
  expect(ping.path).toBe('/v1/things/ping');
  expect(ping.read(200, { pong: true, at: null, more: 'x' })).toEqual({ pong: true, at: null });
  expect(ping.read(200, { pong: 'yes', at: 1 })).toBeUndefined();
});

test('the contract copy is verbatim, and a contract module that imports anything is refused', () => {
  const source = readFileSync(join(ROOT, 'functions', 'src', 'contract', 'index.ts'), 'utf8');
  expect(generateContract(source).endsWith(source)).toBe(true);
  expect(() => generateContract(`import { x } from './x';\n${source}`)).toThrow(/must not import/);
  expect(() => generateContract(`export { x } from './x';\n${source}`)).toThrow(/must not import/);
});
