/**
 * "No operation can be half-added": what an operation of the catalogue (functions/src/operations.ts)
 * needs besides its entry, its schemas and its handler (which the compiler checks), checked by
 * test/unit/completeness.test.ts:
 *
 * (a) an SDK method: sdk/src/client.ts `OPERATION_METHODS` names one, the client has it, and its
 *     code calls the operation (names its descriptor, `claimDelivery.path`);
 * (b) a section of docs/contract.md that introduces it as `` `<method> <path>` (operationId `<id>`) `` (POST unless the entry names its method);
 * (c) integration suites: its entry's `suites` exist and each names its path.
 *
 * Pure: every input is passed in, so the test can run it against a doctored catalogue, SDK table,
 * contract or suite and see each check fail.
 */

/** What the checks need of a catalogue entry. */
export interface CatalogueOperation {
  operationId: string;
  path: string;
  /** Absent: POST. */
  method?: string;
  suites: readonly string[];
}

export interface CompletenessInput {
  operations: readonly CatalogueOperation[];
  /** operationId -> `api.method` of the client (sdk/src/client.ts `OPERATION_METHODS`). */
  sdkMethods: Readonly<Record<string, string>>;
  /** A constructed client: the methods are looked up on it. */
  client: object;
  /** docs/contract.md. */
  contract: string;
  /** A suite's source, or undefined when the file does not exist. */
  readSuite: (path: string) => string | undefined;
  /** `export const X = '/v1/...'` of the integration helpers: a suite using X names that path. */
  pathConstants: ReadonlyMap<string, string>;
}

/** A suite calls `path`: it writes it out, uses a helper constant holding it, or quotes its last segment (`op('claim', ...)`). */
export const suiteNamesPath = (source: string, path: string, pathConstants: ReadonlyMap<string, string>): boolean =>
  source.includes(`'${path}'`) ||
  [...pathConstants].some(([name, value]) => value === path && new RegExp(`\\b${name}\\b`).test(source)) ||
  new RegExp(`['"]${path.split('/').at(-1) ?? ''}['"]`).test(source);

/** The `## ` sections of a Markdown document, each with its text. */
const sectionsOf = (markdown: string): string[] => markdown.split(/^(?=## )/m).filter((s) => s.startsWith('## '));

/** (a) The SDK method of the operation, or why there is none. */
function sdkProblems(op: CatalogueOperation, input: CompletenessInput): string[] {
  const method = input.sdkMethods[op.operationId];
  if (method === undefined) return [`${op.operationId}: no SDK method (add one to sdk/src and name it in sdk/src/client.ts OPERATION_METHODS)`];
  const [api, name] = method.split('.');
  const owner: unknown = api === undefined ? undefined : (input.client as Record<string, unknown>)[api];
  const fn: unknown = typeof owner === 'object' && owner !== null && name !== undefined ? (owner as Record<string, unknown>)[name] : undefined;
  if (typeof fn !== 'function') return [`${op.operationId}: the SDK method ${method} does not exist on the client`];
  // The method's own code must name the operation's descriptor (`claimDelivery.path`): a method
  // mapped to the wrong operation fails here.
  if (!new RegExp(`\\b${op.operationId}\\b`).test(Function.prototype.toString.call(fn))) {
    return [`${op.operationId}: the SDK method ${method} does not call ${op.operationId}`];
  }
  return [];
}

/** (b) The section of docs/contract.md that introduces the operation. */
function contractProblems(op: CatalogueOperation, input: CompletenessInput): string[] {
  const intro = `\`${op.method ?? 'POST'} ${op.path}\``;
  const id = `operationId \`${op.operationId}\``;
  const found = sectionsOf(input.contract).some((section) => section.includes(intro) && section.includes(id));
  return found ? [] : [`${op.operationId}: no section of docs/contract.md introduces it as ${intro} (${id})`];
}

/** (c) The integration suites the entry names. */
function suiteProblems(op: CatalogueOperation, input: CompletenessInput): string[] {
  if (op.suites.length === 0) return [`${op.operationId}: its catalogue entry names no integration suite`];
  return op.suites.flatMap((suite) => {
    const source = input.readSuite(suite);
    if (source === undefined) return [`${op.operationId}: its suite ${suite} does not exist`];
    return suiteNamesPath(source, op.path, input.pathConstants) ? [] : [`${op.operationId}: its suite ${suite} does not call ${op.path}`];
  });
}

/** Every way an operation of the catalogue is half-added; empty when each has all its parts. */
export function incompleteOperations(input: CompletenessInput): string[] {
  return input.operations.flatMap((op) => [...sdkProblems(op, input), ...contractProblems(op, input), ...suiteProblems(op, input)]);
}

/**
 * The operations of the catalogue the test service (`@support-desk/connector-sdk/testing`) does not
 * serve (decision 16: a new operation without a test-service implementation fails a test): each is
 * called at its path on a running test service with a valid key and an empty body; an operation it
 * serves answers its own validation (400), a path it does not serve answers 404 `not_found`.
 */
export async function unservedOperations(operations: readonly Pick<CatalogueOperation, 'operationId' | 'path'>[], service: { baseUrl: string; key: string }): Promise<string[]> {
  const out: string[] = [];
  for (const op of operations) {
    const answer = await fetch(`${service.baseUrl}${op.path}`, { method: 'POST', headers: { authorization: `Bearer ${service.key}`, 'content-type': 'application/json' }, body: '{}' });
    const body = (await answer.json()) as { error?: { code?: string } };
    if (answer.status === 404 && body.error?.code === 'not_found') out.push(`${op.operationId}: the test service does not serve POST ${op.path} (a delivery transition is served from DELIVERY_TRANSITIONS in the rules; any other operation needs its handler in sdk/src/testing/, e.g. delivery-handlers.ts)`);
  }
  return out;
}
