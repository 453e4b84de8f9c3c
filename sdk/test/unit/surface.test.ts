/**
 * The SDK's deliberate surface (sdk/src/index.ts over internal/): exactly these runtime exports,
 * error names that survive minification, and request limits taken from the OpenAPI document.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';
import * as sdk from '../../src/index.js';
import { FAIL_CODE_MAX_LENGTH, FAIL_CODE_PATTERN, MAX_FAIL_RETRY_AFTER_MS, MAX_PROVIDER_MESSAGE_IDS } from '../../src/internal/limits.generated.js';

const ROOT = join(__dirname, '..', '..', '..');

const ERRORS = [
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
  'MAX_RETRY_AFTER_MS',
  'NEVER_RETRY_STATUSES',
  'RETRY_METHODS',
  'RETRY_STATUSES',
  'SDK_VERSION',
];
const NOTIFICATIONS = ['parseNotificationJson', 'parsePulledNotification', 'parsePushNotification'];
const LOOPS = ['ackActionFor', 'createPushHandler', 'DEFAULT_CATCH_UP_INTERVAL_MS', 'DEFAULT_PULL_CONCURRENCY', 'DEFAULT_STOP_TIMEOUT_MS', 'isTransientError', 'MAX_PUSH_BODY_BYTES', 'runPullLoop'];

test('the index exports the client and its defaults, the errors, the notification parsers and the delivery loops, nothing else', () => {
  expect(Object.keys(sdk).sort()).toEqual([...CLIENT, ...ERRORS, ...NOTIFICATIONS, ...LOOPS].sort());
});

test.each(ERRORS)('%s has a literal name equal to its export name', (exportName) => {
  const source = readFileSync(join(ROOT, 'sdk', 'src', 'errors.ts'), 'utf8');
  expect(source).toContain(`'${exportName}'`);
  const Class = (sdk as unknown as Record<string, new (...args: never[]) => Error>)[exportName];
  const details = { status: 400, code: 'x', method: 'POST', path: '/v1/x', attempts: 1, requestMayHaveArrived: true, step: 'fail', deliveryId: 'd', leaseId: 'l', providerMessageIds: [], cause: null };
  const instance = new (Class as unknown as new (a: unknown, b?: unknown) => Error)(exportName.startsWith('Provider') || exportName === 'ConnectorError' || exportName === 'InvalidNotificationError' ? 'message' : details);
  expect(instance.name).toBe(exportName);
  expect(instance).toBeInstanceOf(sdk.ConnectorError);
});

test('error names never come from the class at run time (a minifier renames classes)', () => {
  expect(readFileSync(join(ROOT, 'sdk', 'src', 'errors.ts'), 'utf8')).not.toMatch(/new\.target\.name|constructor\.name/);
});

test('the request limits are generated from openapi/openapi.yaml and up to date', () => {
  const check = spawnSync(process.execPath, [join(ROOT, 'scripts', 'sdk-limits.mjs'), '--check'], { encoding: 'utf8' });
  expect(check.stderr).toBe('');
  expect(check.status).toBe(0);
  const schemas = YAML.parse(readFileSync(join(ROOT, 'openapi', 'openapi.yaml'), 'utf8')).components.schemas;
  const fail = schemas.FailRequest.properties;
  expect(FAIL_CODE_MAX_LENGTH).toBe(fail.code.maxLength);
  expect(FAIL_CODE_PATTERN.source).toBe(fail.code.pattern);
  expect(MAX_FAIL_RETRY_AFTER_MS).toBe(fail.retryAfterMs.maximum);
  expect(MAX_PROVIDER_MESSAGE_IDS).toBe(schemas.CompleteRequest.properties.providerMessageIds.maxItems);
});
