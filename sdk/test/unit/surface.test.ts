/**
 * The SDK's deliberate surface (sdk/src/index.ts over internal/): exactly these runtime exports,
 * error names that survive minification, and the generated sources (the contract module's copy,
 * the wire types and readers of the OpenAPI document) up to date.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';
import * as sdk from '../../src/index.js';
import * as contract from '../../../functions/src/contract';
import { OPERATIONS } from '../../src/internal/api.generated.js';
import { FILE_OPERATIONS } from '../../src/internal/deliveries.js';
import * as copy from '../../src/internal/contract.generated.js';
import { DELIVERY_LIMITS, FAIL_CODE_PATTERN, LEASE_MAX_MS, LEASE_MS, MESSAGE_LIMITS } from '../../src/internal/contract.generated.js';

const ROOT = join(__dirname, '..', '..', '..');

const ERRORS = [
  'AttachmentIntegrityError',
  'AttachmentUnavailableError',
  'BadRequestError',
  'ConflictError',
  'ConnectorApiError',
  'ConnectorError',
  'ConnectorNetworkError',
  'ConnectorTimeoutError',
  'DeliveryReportError',
  'ForbiddenError',
  'InvalidNotificationError',
  'NotFoundError',
  'PayloadTooLargeError',
  'ProviderPermanentError',
  'ProviderRetryableError',
  'ProviderUnknownOutcomeError',
  'PushAuthenticationError',
  'ServiceUnavailableError',
  'TooManyRequestsError',
  'UnauthorizedError',
  'UnexpectedResponseError',
  'UnsupportedMediaTypeError',
];
const CLIENT = [
  'ConnectorClient',
  'CONNECT_FAILURE_CODES',
  'BACKOFF_BASE_MS',
  'BACKOFF_MAX_MS',
  'DEFAULT_PROVIDER_TIMEOUT_MS',
  'DEFAULT_RETRY_LIMIT',
  'DEFAULT_TIMEOUT_MS',
  'LEASE_MAX_MS',
  'LEASE_MS',
  'MAX_RETRY_AFTER_MS',
  'NEVER_RETRY_STATUSES',
  'RETRY_METHODS',
  'RETRY_STATUSES',
  'SDK_VERSION',
  // The fail code of a delivery whose kind has no callback (edit / unsend).
  'UNSUPPORTED_KIND_CODE',
];
const NOTIFICATIONS = ['parseNotificationJson', 'parsePulledNotification', 'parsePushNotification'];
const ERASURES = ['processErasures'];
// Pub/Sub push authentication (createPushHandler's `auth`, and the same check for other frameworks).
const PUSH_AUTH = ['DEFAULT_OIDC_JWKS_URL', 'OIDC_CLOCK_SKEW_MS', 'OIDC_JWKS_MIN_REFETCH_MS', 'OIDC_JWKS_FAILURE_BACKOFF_MS', 'OIDC_JWKS_STALE_MAX_MS', 'verifyPubSubOidcToken'];
// The channel's delivery reports to receipts (`providerMessageId -> deliveryId`).
const RECEIPTS = ['createReceiptTracker', 'DEFAULT_RECEIPT_MEMORY_ENTRIES', 'HELD_RECEIPT_MAX_AGE_MS', 'MAX_HELD_RECEIPTS'];
const LOOPS = ['ackActionFor', 'createPushHandler', 'DEFAULT_CATCH_UP_INTERVAL_MS', 'DEFAULT_PULL_CONCURRENCY', 'DEFAULT_STOP_TIMEOUT_MS', 'isTransientError', 'MAX_PUSH_BODY_BYTES', 'REMEMBERED_FINISHED_DELIVERIES', 'runPullLoop'];

test('the index exports the client and its defaults, the errors, the notification parsers, the delivery loops, push authentication, processErasures and the receipt tracker, nothing else', () => {
  expect(Object.keys(sdk).sort()).toEqual([...CLIENT, ...ERRORS, ...NOTIFICATIONS, ...LOOPS, ...PUSH_AUTH, ...ERASURES, ...RECEIPTS].sort());
});

test.each(ERRORS)('%s has a literal name equal to its export name', (exportName) => {
  const source = readFileSync(join(ROOT, 'sdk', 'src', 'errors.ts'), 'utf8');
  expect(source).toContain(`'${exportName}'`);
  const Class = (sdk as unknown as Record<string, new (...args: never[]) => Error>)[exportName];
  const details = { status: 400, code: 'x', method: 'POST', path: '/v1/x', attempts: 1, requestMayHaveArrived: true, step: 'fail', deliveryId: 'd', leaseId: 'l', providerMessageIds: [], cause: null };
  const args = exportName === 'PushAuthenticationError' ? ['missing_token', 'message'] : [exportName.startsWith('Provider') || exportName === 'ConnectorError' || exportName === 'InvalidNotificationError' ? 'message' : details];
  const instance = new (Class as unknown as new (...a: unknown[]) => Error)(...args);
  expect(instance.name).toBe(exportName);
  expect(instance).toBeInstanceOf(sdk.ConnectorError);
});

test('error names never come from the class at run time (a minifier renames classes)', () => {
  expect(readFileSync(join(ROOT, 'sdk', 'src', 'errors.ts'), 'utf8')).not.toMatch(/new\.target\.name|constructor\.name/);
});

test('the generated sources are up to date: the contract copy and the API types and readers', () => {
  const check = spawnSync(process.execPath, [join(ROOT, 'scripts', 'sdk-generate.mjs'), '--check'], { encoding: 'utf8' });
  expect(check.stderr).toBe('');
  expect(check.status).toBe(0);
});

test('the contract copy is the service module, and the service publishes its limits in the API document', () => {
  // The copy compiles to the same exports and values as the service's module (the check above compares the text).
  expect(Object.keys(copy).sort()).toEqual(Object.keys(contract).sort());
  expect({ DELIVERY_LIMITS, MESSAGE_LIMITS, LEASE_MS, LEASE_MAX_MS, FAIL_CODE_PATTERN: FAIL_CODE_PATTERN.source }).toEqual({
    DELIVERY_LIMITS: contract.DELIVERY_LIMITS,
    MESSAGE_LIMITS: contract.MESSAGE_LIMITS,
    LEASE_MS: contract.LEASE_MS,
    LEASE_MAX_MS: contract.LEASE_MAX_MS,
    FAIL_CODE_PATTERN: contract.FAIL_CODE_PATTERN.source,
  });
  const schemas = YAML.parse(readFileSync(join(ROOT, 'openapi', 'openapi.yaml'), 'utf8')).components.schemas;
  const fail = schemas.FailRequest.properties;
  expect(fail.code).toMatchObject({ maxLength: DELIVERY_LIMITS.failCode, pattern: FAIL_CODE_PATTERN.source });
  expect(fail.retryAfterMs.maximum).toBe(DELIVERY_LIMITS.retryAfterMs);
  expect(fail.providerMessageIds.maxItems).toBe(DELIVERY_LIMITS.providerMessageIds);
  expect(schemas.CompleteRequest.properties.providerMessageIds).toMatchObject({ maxItems: DELIVERY_LIMITS.providerMessageIds, items: { maxLength: DELIVERY_LIMITS.providerMessageId } });
  for (const request of ['ClaimRequest', 'StartRequest', 'ExtendRequest', 'CompleteRequest', 'FailRequest', 'ReceiptRequest']) {
    expect(schemas[request].properties.deliveryId.maxLength).toBe(DELIVERY_LIMITS.id);
  }
  expect(schemas.IncomingMessage.properties.message.properties.text.maxLength).toBe(MESSAGE_LIMITS.text);
});

test('every operation of the API document with a JSON answer has a generated reader at its path', () => {
  const document = YAML.parse(readFileSync(join(ROOT, 'openapi', 'openapi.yaml'), 'utf8'));
  type Op = { operationId: string; responses: Record<string, { content?: Record<string, unknown> }> };
  // A download (its 200 is the bytes of a file) has no JSON answer to read: no generated reader.
  const answersJson = (op: Op): boolean => op.responses['200']?.content?.['application/json'] !== undefined;
  const documented = Object.entries(document.paths as Record<string, Record<string, Op>>).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([, op]) => answersJson(op))
      .map(([method, op]) => [op.operationId, method.toUpperCase(), path]),
  );
  expect(Object.values(OPERATIONS).map((op) => [op.operationId, op.method, op.path]).sort()).toEqual(documented.sort());
});

test('the operations that answer a file are the SDK\'s own calls, at their documented paths', () => {
  const document = YAML.parse(readFileSync(join(ROOT, 'openapi', 'openapi.yaml'), 'utf8'));
  type Op = { operationId: string; responses: Record<string, { content?: Record<string, unknown> }> };
  const files = Object.entries(document.paths as Record<string, Record<string, Op>>).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([, op]) => op.responses['200']?.content !== undefined && op.responses['200']?.content?.['application/json'] === undefined)
      .map(([method, op]) => [op.operationId, method.toUpperCase(), path]),
  );
  expect(Object.values(FILE_OPERATIONS).map((op) => [op.operationId, op.method, op.path])).toEqual(files);
});
