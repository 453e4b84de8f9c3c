/**
 * No operation can be half-added (test/unit/completeness.ts): every operation of the catalogue
 * (functions/src/operations.ts) has an SDK method that calls it, a section of docs/contract.md
 * and integration suites that call it. Each check is also run against doctored inputs, to show
 * that it fails and what it says.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { httpOperations } from '../../functions/src/operations';
import { ConnectorClient, OPERATION_METHODS } from '../../sdk/src/client.js';
import { startTestService } from '../../sdk/src/testing/index.js';
import { REQUESTS } from '../../sdk/src/testing/requests.generated.js';
import { incompleteOperations, unservedOperations, type CompletenessInput } from './completeness';

const ROOT = join(__dirname, '..', '..');

/** `export const X = '/v1/...'` in the integration helpers. */
function helperPathConstants(): Map<string, string> {
  const constants = new Map<string, string>();
  const dir = join(ROOT, 'test', 'integration', 'helpers');
  for (const file of readdirSync(dir)) {
    for (const m of readFileSync(join(dir, file), 'utf8').matchAll(/export const (\w+) = '(\/v1\/[^']*)'/g)) constants.set(m[1] as string, m[2] as string);
  }
  return constants;
}

const real: CompletenessInput = {
  operations: httpOperations(),
  sdkMethods: OPERATION_METHODS,
  client: new ConnectorClient({ integrationKey: 'sdk_test_key', baseUrl: 'https://desk.invalid' }),
  contract: readFileSync(join(ROOT, 'docs', 'contract.md'), 'utf8'),
  readSuite: (path) => (existsSync(join(ROOT, path)) ? readFileSync(join(ROOT, path), 'utf8') : undefined),
  pathConstants: helperPathConstants(),
};

test('every operation of the catalogue has an SDK method that calls it, a contract section and suites that call it', () => {
  expect(incompleteOperations(real)).toEqual([]);
});

describe('the test service serves every operation of the catalogue (decision 16)', () => {
  test('each operation answers at its path on a running test service; a path it lacks is named', async () => {
    const service = await startTestService();
    try {
      const { key } = await service.createIntegration();
      expect(await unservedOperations(httpOperations(), { baseUrl: service.baseUrl, key })).toEqual([]);
      expect(await unservedOperations([{ operationId: 'toyDelivery', path: '/v1/deliveries/toy' }], { baseUrl: service.baseUrl, key })).toEqual([
        'toyDelivery: the test service does not serve POST /v1/deliveries/toy (a delivery transition is served from DELIVERY_TRANSITIONS in the rules; any other operation needs its handler in sdk/src/testing/, e.g. delivery-handlers.ts)',
      ]);
    } finally {
      await service.close();
    }
  });

  test("its OperationId (derived from the generated request schemas, which type its handler table) names exactly the catalogue's operations", () => {
    expect(Object.keys(REQUESTS).sort()).toEqual(httpOperations().map((op) => op.operationId).sort());
    expect(httpOperations().map((op) => op.operationId).sort()).toEqual(Object.keys(OPERATION_METHODS).sort());
  });
});

test('the check sees every operation of the catalogue', () => {
  expect(real.operations.map((op) => op.operationId).sort()).toEqual(Object.keys(OPERATION_METHODS).sort());
});

describe('each check fails on a half-added operation', () => {
  /** An operation with nothing but its catalogue entry. */
  const toy = { operationId: 'toyDelivery', path: '/v1/deliveries/toy', suites: ['test/integration/deliveries/toy.test.ts'] } as const;
  const claim = real.operations.find((op) => op.operationId === 'claimDelivery');
  if (claim === undefined) throw new Error('the catalogue has no claimDelivery');
  const only = (op: CompletenessInput['operations'][number], changes: Partial<CompletenessInput> = {}): string[] =>
    incompleteOperations({ ...real, ...changes, operations: [op] });

  test('an entry alone: no SDK method, no contract section, no suite file', () => {
    expect(only(toy)).toEqual([
      'toyDelivery: no SDK method (add one to sdk/src and name it in sdk/src/client.ts OPERATION_METHODS)',
      'toyDelivery: no section of docs/contract.md introduces it as `POST /v1/deliveries/toy` (operationId `toyDelivery`)',
      'toyDelivery: its suite test/integration/deliveries/toy.test.ts does not exist',
    ]);
  });

  test('(a) the SDK: no method named, a method the client does not have, a method that calls another operation', () => {
    const { claimDelivery: _dropped, ...withoutClaim } = OPERATION_METHODS;
    expect(only(claim, { sdkMethods: withoutClaim })).toEqual(['claimDelivery: no SDK method (add one to sdk/src and name it in sdk/src/client.ts OPERATION_METHODS)']);
    expect(only(claim, { sdkMethods: { ...OPERATION_METHODS, claimDelivery: 'deliveries.lease' } })).toEqual(['claimDelivery: the SDK method deliveries.lease does not exist on the client']);
    expect(only(claim, { sdkMethods: { ...OPERATION_METHODS, claimDelivery: 'deliveries.start' } })).toEqual(['claimDelivery: the SDK method deliveries.start does not call claimDelivery']);
  });

  test('(b) the contract: the section that introduces the operation is missing', () => {
    const contract = real.contract.replace('`POST /v1/deliveries/claim` (operationId `claimDelivery`)', '`POST /v1/deliveries/claim`');
    expect(contract).not.toBe(real.contract);
    expect(only(claim, { contract })).toEqual(['claimDelivery: no section of docs/contract.md introduces it as `POST /v1/deliveries/claim` (operationId `claimDelivery`)']);
  });

  test('(c) the suites: none listed, a missing file, a suite that does not call the path', () => {
    expect(only({ ...claim, suites: [] })).toEqual(['claimDelivery: its catalogue entry names no integration suite']);
    expect(only({ ...claim, suites: ['test/integration/deliveries/gone.test.ts'] })).toEqual(['claimDelivery: its suite test/integration/deliveries/gone.test.ts does not exist']);
    expect(only({ ...claim, suites: ['test/integration/privacy/erasure-ack.test.ts'] })).toEqual([
      'claimDelivery: its suite test/integration/privacy/erasure-ack.test.ts does not call /v1/deliveries/claim',
    ]);
  });
});
