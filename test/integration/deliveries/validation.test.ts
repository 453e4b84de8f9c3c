/**
 * Request validation, authentication and tenancy of the lease-holding delivery operations (claim, start, extend, complete, fail) (docs/contract.md#limits,
 * 5, 7 and 8): every bound at its limit and one past it, strict bodies, JSON only, 401/403, and
 * 404 for a foreign delivery exactly like an unknown one.
 */
import { randomUUID } from 'node:crypto';
import { createTestIntegration, postJson, type ApiResponse, type TestIntegration } from '../helpers/stack';
import { claimReady, type ConversationSetup, deliveryDoc, expectApiError, expectOk, expectSent, mapLimit, mirrorOnceStatus, op, replyAndNotify, sharedConversationFixture } from '../helpers/deliveries';

type OpName = 'claim' | 'start' | 'extend' | 'complete' | 'fail';
const OPS: OpName[] = ['claim', 'start', 'extend', 'complete', 'fail'];

let setup: ConversationSetup;
let key: string;
const shared = sharedConversationFixture((first) => {
  setup = first;
  key = first.integration.key;
});

/** A body for `name` that is valid in shape (the delivery and lease need not exist). */
function validBody(name: OpName, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const base: Record<OpName, Record<string, unknown>> = {
    claim: { deliveryId: 'd_unknown', requestId: 'r-1' },
    start: { deliveryId: 'd_unknown', leaseId: 'l-1' },
    extend: { deliveryId: 'd_unknown', leaseId: 'l-1' },
    complete: { deliveryId: 'd_unknown', leaseId: 'l-1', providerMessageIds: ['p-1'] },
    fail: { deliveryId: 'd_unknown', leaseId: 'l-1', outcome: 'failed', code: 'provider_error' },
  };
  return { ...base[name], ...overrides };
}

const s = (n: number, c = 'a') => c.repeat(n);

/** Asserts a 400 that names the offending field (docs/contract.md#errors). */
function expect400(res: ApiResponse, field: string): void {
  const message = expectApiError(res, 400, 'invalid_request');
  expect(message).toContain(field);
}

test('401 invalid_key without a key, with a malformed header or an unknown key; 403 for an inactive integration or a disabled source', async () => {
  const [inactive, disabled] = await Promise.all([createTestIntegration({ active: false }), createTestIntegration({ sourceEnabled: false })]);
  const cases: Array<{ name: OpName; headers: Record<string, string>; status: number; code: string }> = [];
  for (const name of OPS) {
    cases.push({ name, headers: {}, status: 401, code: 'invalid_key' });
    cases.push({ name, headers: { authorization: `Basic ${key}` }, status: 401, code: 'invalid_key' });
    cases.push({ name, headers: { authorization: 'Bearer sdk_test_thisKeyDoesNotExistAnywhere0123456789abcdef' }, status: 401, code: 'invalid_key' });
    cases.push({ name, headers: { authorization: `Bearer ${inactive.key}` }, status: 403, code: 'integration_inactive' });
    cases.push({ name, headers: { authorization: `Bearer ${disabled.key}` }, status: 403, code: 'source_disabled' });
  }
  const results = await mapLimit(cases, 4, (c) => postJson(`/v1/deliveries/${c.name}`, validBody(c.name), { headers: c.headers }));
  results.forEach((res, i) => {
    const c = cases[i]!;
    expectApiError(res, c.status, c.code);
    expect(res.text).not.toContain(key);
  });
});

test('415 for anything but application/json (none, text/plain, form, multipart), 400 for an empty body or a non-object, 405 for PUT', async () => {
  // Not covered here: malformed JSON and a non-utf-8 charset on application/json are answered by
  // the runtime's body parser before the function runs (HTML, not our envelope), a platform
  // limitation shared with /v1/messages and covered by its suite.
  const contentTypes = [null, 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonx'];
  const calls: Array<() => Promise<void>> = [];
  for (const name of OPS) {
    for (const contentType of contentTypes) {
      calls.push(() =>
        postJson(`/v1/deliveries/${name}`, JSON.stringify(validBody(name)), { key, raw: true, contentType }).then((res) => {
          expectApiError(res, 415, 'unsupported_media_type');
        }),
      );
    }
    calls.push(() => postJson(`/v1/deliveries/${name}`, '', { key, raw: true }).then((res) => void expectApiError(res, 400, 'invalid_json')));
    calls.push(() => postJson(`/v1/deliveries/${name}`, '[]', { key, raw: true }).then((res) => void expectApiError(res, 400, 'invalid_request')));
    calls.push(() => postJson(`/v1/deliveries/${name}`, validBody(name), { key, contentType: 'application/json; charset=utf-8' }).then((res) => void expectApiError(res, 404, 'delivery_not_found')));
    calls.push(() => postJson(`/v1/deliveries/${name}`, validBody(name), { key, method: 'PUT' }).then((res) => void expectApiError(res, 405, 'method_not_allowed')));
  }
  await mapLimit(calls, 4, (call) => call());
});

test('400 for extra properties, missing fields and wrong types on every operation, naming the field', async () => {
  const cases: Array<{ name: OpName; body: unknown; field: string }> = [];
  for (const name of OPS) {
    cases.push({ name, body: validBody(name, { extra: 1 }), field: 'extra' });
    cases.push({ name, body: validBody(name, { workspaceId: 'ws' }), field: 'workspaceId' });
    cases.push({ name, body: validBody(name, { deliveryId: 42 }), field: 'deliveryId' });
    cases.push({ name, body: validBody(name, { deliveryId: '' }), field: 'deliveryId' });
    const { deliveryId: _omit, ...withoutId } = validBody(name);
    cases.push({ name, body: withoutId, field: 'deliveryId' });
  }
  const { requestId: _r, ...claimWithoutRequest } = validBody('claim');
  cases.push({ name: 'claim', body: claimWithoutRequest, field: 'requestId' });
  for (const name of ['start', 'extend', 'complete', 'fail'] as const) {
    const { leaseId: _l, ...withoutLease } = validBody(name);
    cases.push({ name, body: withoutLease, field: 'leaseId' });
    cases.push({ name, body: validBody(name, { leaseId: null }), field: 'leaseId' });
  }
  const { providerMessageIds: _p, ...completeWithoutIds } = validBody('complete');
  cases.push({ name: 'complete', body: completeWithoutIds, field: 'providerMessageIds' });
  cases.push({ name: 'complete', body: validBody('complete', { providerMessageIds: 'p-1' }), field: 'providerMessageIds' });
  cases.push({ name: 'complete', body: validBody('complete', { providerMessageIds: [1] }), field: 'providerMessageIds[0]' });
  cases.push({ name: 'fail', body: validBody('fail', { outcome: 'maybe' }), field: 'outcome' });
  cases.push({ name: 'fail', body: validBody('fail', { outcome: undefined }), field: 'outcome' });
  cases.push({ name: 'fail', body: validBody('fail', { code: undefined }), field: 'code' });
  const results = await mapLimit(cases, 4, (c) => op(c.name, key, c.body));
  results.forEach((res, i) => expect400(res, cases[i]!.field));
});

test('bounds of spec 4.2-4.5 / 8 at the limit (accepted) and one past it (400)', async () => {
  // One past the limit, or malformed: 400 naming the field.
  const over: Array<{ name: OpName; body: unknown; field: string }> = [];
  for (const name of OPS) over.push({ name, body: validBody(name, { deliveryId: s(129) }), field: 'deliveryId' });
  over.push({ name: 'claim', body: validBody('claim', { requestId: s(129) }), field: 'requestId' });
  over.push({ name: 'claim', body: validBody('claim', { requestId: '' }), field: 'requestId' });
  for (const name of ['start', 'extend', 'complete', 'fail'] as const) {
    over.push({ name, body: validBody(name, { leaseId: s(129) }), field: 'leaseId' });
    over.push({ name, body: validBody(name, { leaseId: '' }), field: 'leaseId' });
  }
  over.push({ name: 'complete', body: validBody('complete', { providerMessageIds: [] }), field: 'providerMessageIds' });
  over.push({ name: 'complete', body: validBody('complete', { providerMessageIds: Array.from({ length: 21 }, (_, i) => `p${i}`) }), field: 'providerMessageIds' });
  over.push({ name: 'complete', body: validBody('complete', { providerMessageIds: ['ok', s(201)] }), field: 'providerMessageIds[1]' });
  over.push({ name: 'complete', body: validBody('complete', { providerMessageIds: [''] }), field: 'providerMessageIds[0]' });
  over.push({ name: 'fail', body: validBody('fail', { code: s(81) }), field: 'code' });
  for (const code of ['', 'Provider_error', '1error', '_error', 'provider-error', 'provider error', 'błąd']) {
    over.push({ name: 'fail', body: validBody('fail', { code }), field: 'code' });
  }
  for (const retryAfterMs of [3_600_001, -1, 1.5, '1000', null]) {
    over.push({ name: 'fail', body: validBody('fail', { outcome: 'retry', retryAfterMs }), field: 'retryAfterMs' });
  }
  over.push({ name: 'fail', body: validBody('fail', { providerMessageIds: Array.from({ length: 21 }, (_, i) => `p${i}`) }), field: 'providerMessageIds' });
  over.push({ name: 'fail', body: validBody('fail', { providerMessageIds: [s(201)] }), field: 'providerMessageIds[0]' });
  const overResults = await mapLimit(over, 4, (c) => op(c.name, key, c.body));
  overResults.forEach((res, i) => expect400(res, over[i]!.field));

  // At the limit, against unknown ids: the body passes validation and the answer is about the id.
  const atLimit: Array<{ name: OpName; body: unknown }> = [];
  for (const name of OPS) atLimit.push({ name, body: validBody(name, { deliveryId: s(128) }) });
  atLimit.push({ name: 'fail', body: validBody('fail', { code: s(80), outcome: 'retry', retryAfterMs: 3_600_000, providerMessageIds: [] }) });
  atLimit.push({ name: 'fail', body: validBody('fail', { code: 'a', retryAfterMs: 0 }) });
  const atResults = await mapLimit(atLimit, 4, (c) => op(c.name, key, c.body));
  atResults.forEach((res) => expectApiError(res, 404, 'delivery_not_found'));

  // At the limit against a real delivery: 128-character requestId and leaseId, 20 ids of 200 characters.
  const a = await replyAndNotify(setup, 'bounds A');
  const claim = await claimReady(key, a.deliveryId, s(128, 'r'));
  expectOk(await op('claim', key, { deliveryId: a.deliveryId, requestId: s(128, 'r') }), claim);
  expectApiError(await op('start', key, { deliveryId: a.deliveryId, leaseId: s(128, 'l') }), 409, 'lease_lost');
  expectApiError(await op('extend', key, { deliveryId: a.deliveryId, leaseId: s(128, 'l') }), 409, 'lease_lost');
  expectOk(await op('start', key, { deliveryId: a.deliveryId, leaseId: claim.leaseId }), { status: 'sending' });
  const twentyIds = Array.from({ length: 20 }, (_, i) => `${String(i).padStart(2, '0')}${s(198, 'x')}`);
  expectSent(await op('complete', key, { deliveryId: a.deliveryId, leaseId: claim.leaseId, providerMessageIds: twentyIds }), a.deliveryId);
  expect(await mirrorOnceStatus(setup, a.messageId, 'sent')).toMatchObject({ providerMessageIds: twentyIds });

  // fail at every limit at once: 80-character code, retryAfterMs 3600000, 20 provider ids (ignored for retry).
  const b = await replyAndNotify(setup, 'bounds B');
  const claimB = await claimReady(key, b.deliveryId);
  const before = Date.now();
  expectOk(await op('fail', key, { deliveryId: b.deliveryId, leaseId: claimB.leaseId, outcome: 'retry', code: `${s(79, 'z')}9`, retryAfterMs: 3_600_000, providerMessageIds: twentyIds }), { status: 'queued' });
  const stored = await deliveryDoc(setup, b.deliveryId);
  expect(stored.notBefore).toBeGreaterThanOrEqual(before + 3_600_000 - 1_000);
  expect(stored.lastFail).toMatchObject({ code: `${s(79, 'z')}9` });
  expect(stored.providerMessageIds).toEqual([]);
});

test('a delivery of another integration (other workspace, or same workspace) is 404 delivery_not_found, exactly like an unknown id', async () => {
  // Its own conversation: the bounds test left a delivery queued for an hour in the shared one.
  const mine = await shared.conversation();
  const { deliveryId, messageId } = await replyAndNotify(mine, 'mine');
  const owner = await claimReady(key, deliveryId);
  const strangers: TestIntegration[] = await Promise.all([
    createTestIntegration(),
    createTestIntegration({ workspaceId: setup.integration.workspaceId }),
  ]);
  const bodies = (id: string): Record<OpName, Record<string, unknown>> => ({
    claim: { deliveryId: id, requestId: randomUUID() },
    start: { deliveryId: id, leaseId: owner.leaseId },
    extend: { deliveryId: id, leaseId: owner.leaseId },
    complete: { deliveryId: id, leaseId: owner.leaseId, providerMessageIds: ['p'] },
    fail: { deliveryId: id, leaseId: owner.leaseId, outcome: 'failed', code: 'stolen' },
  });
  for (const stranger of strangers) {
    for (const name of OPS) {
      const foreign = await op(name, stranger.key, bodies(deliveryId)[name]);
      const unknown = await op(name, stranger.key, bodies(`d_${randomUUID()}`)[name]);
      expectApiError(foreign, 404, 'delivery_not_found');
      expectApiError(unknown, 404, 'delivery_not_found');
      expect(foreign.body).toEqual(unknown.body);
      expect(foreign.text).not.toContain(setup.integration.integrationId);
    }
  }
  // Unknown ids for the owner too.
  for (const name of OPS) expectApiError(await op(name, key, bodies(`d_${randomUUID()}`)[name]), 404, 'delivery_not_found');
  // Nothing happened to the delivery: still leased by its owner, who completes it.
  expect(await deliveryDoc(mine, deliveryId)).toMatchObject({ status: 'leased', lease: { leaseId: owner.leaseId } });
  expectSent(await op('complete', key, { deliveryId, leaseId: owner.leaseId, providerMessageIds: ['p'] }), deliveryId);
  await mirrorOnceStatus(mine, messageId, 'sent');
});
