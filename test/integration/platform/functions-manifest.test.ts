/**
 * The deployed shape of the functions, read from the compiled entry point the way the Firebase CLI
 * reads it (each exported function carries its `__endpoint` manifest entry): every HTTP function
 * runs in europe-central2 (Warsaw, docs/contract.md#hosts-and-versions), every trigger runs in the region
 * deliveries/triggers.ts addresses its task queue in, and every Hosting rewrite of firebase.json
 * names an exported HTTP function in that region. The HTTP functions are exactly the operation
 * catalogue's (functions/src/operations.ts), exported by index.js from it with its options, and each
 * is served by its bundle's `endpoints[operationId]`.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CONSOLE_API, CONSOLE_HTTP_FUNCTIONS, handlerBundles, httpOperations } from '../../../functions/src/operations';

const ROOT = join(__dirname, '..', '..', '..');
const REGION = 'europe-central2';

interface Endpoint {
  platform?: string;
  region?: string[];
  httpsTrigger?: Record<string, unknown>;
  eventTrigger?: Record<string, unknown>;
  [key: string]: unknown;
}

function loadEndpoints(): Record<string, Endpoint> {
  const entry = join(ROOT, 'functions', 'lib', 'index.js');
  if (!existsSync(entry)) throw new Error(`${entry} is missing: build the functions first (npm test does).`);
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const mod = require(entry) as Record<string, unknown>;
  const endpoints: Record<string, Endpoint> = {};
  for (const [name, value] of Object.entries(mod)) {
    const endpoint = typeof value === 'function' ? (value as { __endpoint?: Endpoint }).__endpoint : undefined;
    if (endpoint) endpoints[name] = endpoint;
  }
  return endpoints;
}

interface Rewrite {
  source: string;
  function?: string | { functionId: string; region?: string };
}

const endpoints = loadEndpoints();
const httpFunctions = Object.entries(endpoints).filter(([, e]) => e.httpsTrigger !== undefined);
const firebaseJson = JSON.parse(readFileSync(join(ROOT, 'firebase.json'), 'utf8')) as { hosting: { rewrites: Rewrite[] } };
const functionRewrites = firebaseJson.hosting.rewrites.filter((r) => r.function !== undefined);

describe('functions manifest', () => {
  test('the entry point exports HTTP functions, including messages', () => {
    expect(httpFunctions.map(([name]) => name)).toContain('messages');
  });

  test.each(httpFunctions.map(([name, e]) => [name, e] as const))('HTTP function %s runs only in europe-central2', (_name, endpoint) => {
    expect(endpoint.region).toEqual([REGION]);
    expect(endpoint.platform).toBe('gcfv2');
  });

  test('the triggers run where deliveries/triggers.ts addresses the publishDueNotification task queue', () => {
    // index.ts writes the triggers' region out instead of importing it, so that declaring them does
    // not load their code: this is what keeps the two in step.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const triggers = require(join(ROOT, 'functions', 'lib', 'deliveries', 'triggers.js')) as { REGION: string; PUBLISH_TASK_FUNCTION: string };
    expect(endpoints[triggers.PUBLISH_TASK_FUNCTION]?.taskQueueTrigger).toBeDefined();
    const triggerFunctions = Object.entries(endpoints).filter(([, e]) => e.httpsTrigger === undefined);
    expect(triggerFunctions.length).toBeGreaterThan(0);
    for (const [name, endpoint] of triggerFunctions) expect({ name, region: endpoint.region }).toEqual({ name, region: [triggers.REGION] });
  });

  test('the HTTP functions are publicly invokable (authentication is the integration key)', () => {
    for (const [name, endpoint] of httpFunctions) {
      expect({ name, invoker: endpoint.httpsTrigger?.invoker }).toEqual({ name, invoker: ['public'] });
    }
  });
});

describe('the HTTP functions are the operation catalogue', () => {
  test('one HTTP function per operation, under its functionName, and no other (besides the console functions)', () => {
    expect(httpFunctions.map(([name]) => name).sort()).toEqual([...httpOperations().map((op) => op.functionName), ...CONSOLE_HTTP_FUNCTIONS].sort());
  });

  test.each(httpOperations().map((op) => [op.functionName, op] as const))('%s has the options of its catalogue entry over the shared ones', (name, op) => {
    const endpoint = endpoints[name] as Endpoint;
    const memoryMb = { '256MiB': 256, '512MiB': 512, '1GiB': 1024, '2GiB': 2048 }[String(op.options.memory)];
    expect({ name, memoryMb: endpoint.availableMemoryMb, concurrency: endpoint.concurrency, maxInstances: endpoint.maxInstances, timeoutSeconds: endpoint.timeoutSeconds }).toEqual({
      name,
      memoryMb,
      concurrency: op.options.concurrency ?? 80,
      maxInstances: op.options.maxInstances ?? 20,
      timeoutSeconds: 60,
    });
    if (op.options.cpu !== undefined) expect(endpoint.cpu).toBe(op.options.cpu);
  });

  test('the console function has the sizing of its catalogue entry (docs/operations.md#the-console-function)', () => {
    expect(endpoints[CONSOLE_API.functionName]).toMatchObject({ availableMemoryMb: 1024, cpu: CONSOLE_API.options.cpu, concurrency: CONSOLE_API.options.concurrency, timeoutSeconds: 60, region: [REGION] });
    expect(endpoints[CONSOLE_API.functionName]?.httpsTrigger?.invoker).toEqual(['public']);
  });

  test("the messages function keeps its sizing (bench: multipart memory): 2 GiB, 1 vCPU, 32 concurrent, 50 instances", () => {
    expect(endpoints.messages).toMatchObject({ availableMemoryMb: 2048, cpu: 1, concurrency: 32, maxInstances: 50 });
  });
});

describe('handler bundles', () => {
  // index.js requires each handler's esbuild bundle (lib/bundles/, scripts/bundle-functions.mjs);
  // its types come from the source module, so check that the bundle exports the same.
  const lib = join(ROOT, 'functions', 'lib');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const load = (path: string) => require(path) as Record<string, unknown>;
  const exportsOf = (path: string): string[] => Object.keys(load(path)).sort();

  test.each(handlerBundles())('bundles/%s.js exists and exports what its source module exports', (bundle) => {
    expect(existsSync(join(lib, 'bundles', `${bundle}.js`))).toBe(true);
    expect(exportsOf(join(lib, `${bundle}.js`)).length).toBeGreaterThan(0);
    expect(exportsOf(join(lib, 'bundles', `${bundle}.js`))).toEqual(exportsOf(join(lib, `${bundle}.js`)));
  });

  test.each(httpOperations().map((op) => [op.operationId, op] as const))("%s is served by its bundle's endpoints", (id, op) => {
    const served = load(join(lib, 'bundles', `${op.bundle}.js`)).endpoints as Record<string, unknown> | undefined;
    expect({ id, handler: typeof served?.[id] }).toEqual({ id, handler: 'function' });
  });
});

describe('Hosting rewrites', () => {
  test('/v1/messages is rewritten to a function', () => {
    expect(functionRewrites.map((r) => r.source)).toContain('/v1/messages');
  });

  test.each(functionRewrites.map((r) => [r.source, r] as const))('%s names an exported HTTP function in europe-central2', (_source, rewrite) => {
    const target = typeof rewrite.function === 'string' ? { functionId: rewrite.function } : rewrite.function;
    expect(target?.region).toBe(REGION);
    const endpoint = endpoints[target?.functionId ?? ''];
    expect({ functionId: target?.functionId, exported: endpoint !== undefined }).toEqual({ functionId: target?.functionId, exported: true });
    expect(endpoint?.httpsTrigger).toBeDefined();
    expect(endpoint?.region).toEqual([REGION]);
  });

  test('every rewrite source is under /v1/, but the console function\'s /console/v1/**', () => {
    for (const rewrite of functionRewrites) expect(rewrite.source).toMatch(/^\/v1\/|^\/console\/v1\/\*\*$/);
    expect(functionRewrites.filter((r) => r.source.startsWith('/console/')).map((r) => r.function)).toEqual([{ functionId: 'consoleApi', region: REGION }]);
  });
});
