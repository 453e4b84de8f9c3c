/**
 * Crash matrix for connectors (test/integration/reliability/README.md, docs/contract.md#delivery-states).
 *
 * A connector "dies" by abandoning its flow at one point; a lost response is a request that
 * reached the service whose answer never came back (the SDK's `fetch` is wrapped to forward the
 * request, then throw like a reset connection). Time passes by rewriting `lease.expiresAt` into
 * the past with the Admin SDK; expiry is then applied by `sweep(adminDb())` run in-process, or
 * lazily by the next claim. Connectors are the SDK (`ConnectorClient.processDelivery`, or its
 * `deliveries` calls to stop half-way) with a counting fake provider.
 *
 *  | crash point                              | expected (docs/contract.md#delivery-states)                 |
 *  |------------------------------------------|-------------------------------------------------------------|
 *  | claim answer lost                        | SDK retry, same requestId -> same lease; sent, provider x1  |
 *  | start answer lost                        | SDK retry under the lease -> sending again; provider x1     |
 *  | dies after claim (sweeper)               | queued + re-notified; next connector delivers, provider x1  |
 *  | dies after claim (lazy, next claim)      | next claim gets a new lease; delivered once, provider x1    |
 *  | dies after start                         | unknown / lease_expired_after_start; never sent again       |
 *  | dies after provider accepted, no complete| unknown, successor released; late complete = sent (truth)   |
 *  | complete answer lost                     | SDK retry -> sent; provider x1                              |
 *  | complete answer lost, retried after expiry + sweep | still sent (same lease, same ids); provider x1    |
 *  | fail(unknown) answer lost                | SDK retry -> unknown (same answer, no second transition)    |
 *
 * Across the file the provider is never called twice under one lease, and never again once a
 * delivery was started under an expired lease.
 *
 * @serial runs the global sweeper on leases it expired, asserting the lazy (no-sweep) path and exact notification counts a concurrent sweep would change
 */
import { sweep } from '../../../functions/src/deliveries/sweep';
import { ConnectorClient, DeliveryReportError, type FetchLike } from '../../../sdk/src/index';
import { adminDb, apiBaseUrl } from '../helpers/stack';
import {
  deliveryDoc,
  expectSkip,
  mirrorOnceStatus,
  notificationsFor,
  replyAndNotify,
  setLeaseExpiry,
  sharedConversationFixture,
  sleep,
  waitForNotifications,
  type ConversationSetup,
  type TestTopic,
} from '../helpers/deliveries';
import type { TestIntegration } from '../helpers/stack';
import { countingProvider, expectNoKeyMaterialInLogs, type CountingProvider } from './support';

jest.setTimeout(120_000);

let topic: TestTopic;
let integration: TestIntegration;
const { conversation } = sharedConversationFixture((first) => {
  ({ topic, integration } = first);
});

/** Every provider of the file, to check the "never twice per lease" rule over all of them. */
const providers: CountingProvider[] = [];
const matrix: Array<{ crash: string; final: string; providerCalls: number }> = [];

afterAll(() => {
  console.log(`crash matrix (${matrix.length} crashes simulated):\n${matrix.map((r) => `  ${r.crash.padEnd(58)} -> ${r.final.padEnd(40)} provider calls: ${r.providerCalls}`).join('\n')}`);
});

function provider(behave?: Parameters<typeof countingProvider>[0]): CountingProvider {
  const p = countingProvider(behave);
  providers.push(p);
  return p;
}

interface Fault {
  /** `/v1/deliveries/claim` etc. */
  path: string;
  /** Which call to that path (1-based) the fault hits. */
  nth?: number;
  /** `lose`: the request reaches the service, its answer is lost. `die`: the connector dies before sending it. */
  mode: 'lose' | 'die';
  /** Runs after the lost request was processed, before the SDK sees the failure (e.g. to let time pass). */
  afterLoss?: () => Promise<void>;
}

/** A `fetch` for the SDK that injects faults; counts requests per path. */
function faultyFetch(faults: Fault[]): { fetch: FetchLike; requests: Map<string, number> } {
  const requests = new Map<string, number>();
  const fetchImpl: FetchLike = async (input, init) => {
    const path = new URL(input).pathname;
    const n = (requests.get(path) ?? 0) + 1;
    requests.set(path, n);
    const fault = faults.find((f) => f.path === path && (f.nth ?? 1) === n);
    if (fault?.mode === 'die') throw new Error(`connector process died before ${path}`);
    const res = await fetch(input, init);
    if (fault?.mode === 'lose') {
      await res.text();
      await fault.afterLoss?.();
      throw new TypeError('fetch failed', { cause: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }) });
    }
    return res;
  };
  return { fetch: fetchImpl, requests };
}

/** An SDK client for the integration; retries do not wait (the answers are immediate here). */
function connector(options: { fetch?: FetchLike; retry?: number } = {}): ConnectorClient {
  return new ConnectorClient({
    integrationKey: integration.key,
    baseUrl: apiBaseUrl(),
    timeoutMs: 20_000,
    retry: { limit: options.retry ?? 3 },
    sleep: async () => undefined,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
}

/** Advances time for one delivery: its lease is now 1 s in the past. */
const expire = (setup: ConversationSetup, deliveryId: string) => setLeaseExpiry(setup, deliveryId);

test('claim answer lost: the SDK retries with the same requestId, gets the same lease; delivered once', async () => {
  const setup = await conversation();
  const { deliveryId, messageId } = await replyAndNotify(setup, 'claim answer lost');
  const faults = faultyFetch([{ path: '/v1/deliveries/claim', mode: 'lose' }]);
  const p = provider();
  const result = await connector({ fetch: faults.fetch }).processDelivery(deliveryId, p.send);
  expect(result).toMatchObject({ kind: 'sent' });
  expect(faults.requests.get('/v1/deliveries/claim')).toBe(2);
  const doc = await deliveryDoc(setup, deliveryId);
  // The lost answer's lease is the one used: one attempt, one lease.
  expect(doc).toMatchObject({ status: 'sent', attempts: 1, leaseHistory: [(result as { leaseId: string }).leaseId] });
  expect(p.callsFor(deliveryId)).toBe(1);
  await mirrorOnceStatus(setup, messageId, 'sent');
  matrix.push({ crash: 'claim answer lost', final: 'sent (same lease, 1 attempt)', providerCalls: p.callsFor(deliveryId) });
});

test('start answer lost: the SDK retries start under the same lease (sending again); the provider is called once', async () => {
  const setup = await conversation();
  const { deliveryId } = await replyAndNotify(setup, 'start answer lost');
  const faults = faultyFetch([{ path: '/v1/deliveries/start', mode: 'lose' }]);
  const p = provider();
  const result = await connector({ fetch: faults.fetch }).processDelivery(deliveryId, p.send);
  expect(result).toMatchObject({ kind: 'sent' });
  expect(faults.requests.get('/v1/deliveries/start')).toBe(2);
  expect(p.callsFor(deliveryId)).toBe(1);
  expect(await deliveryDoc(setup, deliveryId)).toMatchObject({ status: 'sent', attempts: 1 });
  matrix.push({ crash: 'start answer lost', final: 'sent', providerCalls: p.callsFor(deliveryId) });
});

test('dies after claim, swept: back to queued and re-notified; the next connector delivers it, the provider is called once', async () => {
  const setup = await conversation();
  const { deliveryId, messageId } = await replyAndNotify(setup, 'dies after claim (sweeper)');
  const dead = await connector().deliveries.claim({ deliveryId });
  expect(dead.status).toBe('ready');
  await expire(setup, deliveryId);

  await sweep(adminDb());
  expect(await deliveryDoc(setup, deliveryId)).toMatchObject({ status: 'queued', attempts: 1 });
  // The sweeper re-publishes the notification: the next connector acts on it.
  const [, again] = await waitForNotifications(topic, deliveryId, 2);
  const p = provider();
  const result = await connector().processDelivery(again as { deliveryId: string }, p.send);
  expect(result).toMatchObject({ kind: 'sent' });
  const doc = await deliveryDoc(setup, deliveryId);
  expect(doc).toMatchObject({ status: 'sent', attempts: 2, completion: { leaseId: (result as { leaseId: string }).leaseId } });
  expect(doc.leaseHistory).toHaveLength(2);
  expect(p.callsFor(deliveryId)).toBe(1);
  await mirrorOnceStatus(setup, messageId, 'sent');
  // Should the dead connector come back, start tells it not to send (sent), and it cannot complete.
  if (dead.status === 'ready') {
    const revenant = connector({ retry: 0 });
    expect(await revenant.deliveries.start({ deliveryId, leaseId: dead.leaseId })).toEqual({ status: 'sent' });
    await expect(revenant.deliveries.complete({ deliveryId, leaseId: dead.leaseId, providerMessageIds: ['x'] })).rejects.toMatchObject({ status: 409, code: 'conflicting_completion' });
  }
  matrix.push({ crash: 'dies after claim (sweeper)', final: 'queued -> re-notified -> sent by next', providerCalls: p.callsFor(deliveryId) });
});

test('dies after claim, no sweep: a redelivered notification is claimed with a new lease (lazy expiry); delivered once', async () => {
  const setup = await conversation();
  const { deliveryId } = await replyAndNotify(setup, 'dies after claim (lazy)');
  const dead = await connector().deliveries.claim({ deliveryId });
  expect(dead.status).toBe('ready');
  // Before expiry the next connector is told to come back later (503 lease_busy), not to send:
  // processDelivery returns it at once as skipped (the service notifies again once the lease ran
  // out unused), with its default retries too.
  const early = provider();
  await expect(connector().processDelivery(deliveryId, early.send)).resolves.toEqual({ kind: 'skipped', deliveryId, reason: 'lease_busy' });
  expect(early.calls).toHaveLength(0);

  await expire(setup, deliveryId);
  const p = provider();
  const result = await connector().processDelivery(deliveryId, p.send);
  expect(result).toMatchObject({ kind: 'sent' });
  expect(await deliveryDoc(setup, deliveryId)).toMatchObject({ status: 'sent', attempts: 2 });
  expect(p.callsFor(deliveryId)).toBe(1);
  matrix.push({ crash: 'dies after claim (lazy expiry on next claim)', final: 'sent by next', providerCalls: p.callsFor(deliveryId) });
});

test('dies after start: unknown / lease_expired_after_start, the next reply is released, and nobody sends it again', async () => {
  const setup = await conversation();
  const a = await replyAndNotify(setup, 'A: dies after start');
  const b = await replyAndNotify(setup, 'B: waits for A');
  const client = connector();
  const lease = await client.deliveries.claim({ deliveryId: a.deliveryId });
  if (lease.status !== 'ready') throw new Error('expected a ready claim');
  expect(await client.deliveries.start({ deliveryId: a.deliveryId, leaseId: lease.leaseId })).toEqual({ status: 'sending' });
  // B is claimed meanwhile: it waits for A.
  const waiting = provider();
  expect(await connector().processDelivery(b.deliveryId, waiting.send)).toMatchObject({ kind: 'skipped', reason: 'waiting_for_previous' });
  expect(waiting.calls).toHaveLength(0);
  await expire(setup, a.deliveryId);

  await sweep(adminDb());
  expect(await deliveryDoc(setup, a.deliveryId)).toMatchObject({ status: 'unknown', error: { outcome: 'unknown', code: 'lease_expired_after_start' } });
  await mirrorOnceStatus(setup, a.messageId, 'unknown');
  // B is woken (its notification re-published) and delivered.
  const [, wake] = await waitForNotifications(topic, b.deliveryId, 2);
  const p = provider();
  expect(await connector().processDelivery(wake as { deliveryId: string }, p.send)).toMatchObject({ kind: 'sent' });
  expect(p.callsFor(b.deliveryId)).toBe(1);

  // A is never offered again: no re-notification, and a redelivered one is skipped.
  const aNotifications = notificationsFor(topic, a.deliveryId).length;
  await sweep(adminDb());
  // A negative check (the sweep published nothing for A): an outbox publish and its streaming pull
  // take well under this; nothing observable marks "none is coming".
  await sleep(1_500);
  expect(notificationsFor(topic, a.deliveryId)).toHaveLength(aNotifications);
  const redelivered = provider();
  expect(await connector().processDelivery(a.deliveryId, redelivered.send)).toMatchObject({ kind: 'already_finished', status: 'unknown', reason: 'outcome_unknown' });
  expect(redelivered.callsFor(a.deliveryId) + p.callsFor(a.deliveryId) + waiting.callsFor(a.deliveryId)).toBe(0);
  expect(await deliveryDoc(setup, a.deliveryId)).toMatchObject({ status: 'unknown', attempts: 1 });
  matrix.push({ crash: 'dies after start', final: 'unknown / lease_expired_after_start', providerCalls: 0 });
});

test('dies after the provider accepted, before complete: unknown after expiry (next reply released); the late complete is accepted as the truth', async () => {
  const setup = await conversation();
  const a = await replyAndNotify(setup, 'A: provider accepted, then the connector died');
  const b = await replyAndNotify(setup, 'B');
  const p = provider();
  // complete never leaves the dying process (no retries: it is gone).
  const dying = connector({ fetch: faultyFetch([{ path: '/v1/deliveries/complete', mode: 'die' }]).fetch, retry: 0 });
  const crash = await dying.processDelivery(a.deliveryId, p.send).then(
    () => null,
    (err: unknown) => err,
  );
  expect(crash).toBeInstanceOf(DeliveryReportError);
  const report = crash as DeliveryReportError;
  expect(report.step).toBe('complete');
  expect(report.providerMessageIds).toHaveLength(1);
  expect(p.callsFor(a.deliveryId)).toBe(1);
  expect(await deliveryDoc(setup, a.deliveryId)).toMatchObject({ status: 'sending' });

  await expire(setup, a.deliveryId);
  await sweep(adminDb());
  expect(await deliveryDoc(setup, a.deliveryId)).toMatchObject({ status: 'unknown', error: { code: 'lease_expired_after_start' } });
  // Another connector gets a redelivered notification: it must not send again.
  const other = provider();
  expect(await connector().processDelivery(a.deliveryId, other.send)).toMatchObject({ kind: 'already_finished', status: 'unknown', reason: 'outcome_unknown' });
  // The successor was released by the terminal transition and can be delivered.
  expect(await connector().processDelivery(b.deliveryId, other.send)).toMatchObject({ kind: 'sent' });

  // The connector restarts and reports what it knows: the provider accepted it.
  const restarted = connector();
  expect(await restarted.deliveries.complete({ deliveryId: a.deliveryId, leaseId: report.leaseId, providerMessageIds: report.providerMessageIds })).toEqual({ status: 'sent' });
  const doc = await deliveryDoc(setup, a.deliveryId);
  expect(doc).toMatchObject({ status: 'sent', error: null, providerMessageIds: [...report.providerMessageIds], completion: { leaseId: report.leaseId } });
  expect(await mirrorOnceStatus(setup, a.messageId, 'sent')).toMatchObject({ providerMessageIds: [...report.providerMessageIds] });
  await expectSkip(integration.key, a.deliveryId, 'already_sent');
  expect(p.callsFor(a.deliveryId) + other.callsFor(a.deliveryId)).toBe(1);
  expect(other.callsFor(b.deliveryId)).toBe(1);
  matrix.push({ crash: 'dies after provider accepted, before complete', final: 'unknown -> late complete -> sent', providerCalls: 1 });
});

test('complete answer lost: the SDK retries complete and gets sent; the provider is called once', async () => {
  const setup = await conversation();
  const { deliveryId, messageId } = await replyAndNotify(setup, 'complete answer lost');
  const faults = faultyFetch([{ path: '/v1/deliveries/complete', mode: 'lose' }]);
  const p = provider();
  const result = await connector({ fetch: faults.fetch }).processDelivery(deliveryId, p.send);
  expect(result).toMatchObject({ kind: 'sent' });
  expect(faults.requests.get('/v1/deliveries/complete')).toBe(2);
  expect(p.callsFor(deliveryId)).toBe(1);
  expect(await deliveryDoc(setup, deliveryId)).toMatchObject({ status: 'sent', attempts: 1 });
  await mirrorOnceStatus(setup, messageId, 'sent');
  matrix.push({ crash: 'complete answer lost (immediate retry)', final: 'sent', providerCalls: p.callsFor(deliveryId) });
});

test('complete answer lost and retried only after the lease expired and the sweeper ran: still sent, nothing changes', async () => {
  const setup = await conversation();
  const { deliveryId } = await replyAndNotify(setup, 'complete answer lost, late retry');
  const faults = faultyFetch([
    {
      path: '/v1/deliveries/complete',
      mode: 'lose',
      afterLoss: async () => {
        await expire(setup, deliveryId);
        await sweep(adminDb());
      },
    },
  ]);
  const p = provider();
  const result = await connector({ fetch: faults.fetch }).processDelivery(deliveryId, p.send);
  expect(result).toMatchObject({ kind: 'sent' });
  expect(faults.requests.get('/v1/deliveries/complete')).toBe(2);
  const doc = await deliveryDoc(setup, deliveryId);
  // The sweeper found it sent (terminal): the expired lease of a sent delivery changes nothing.
  expect(doc).toMatchObject({ status: 'sent', attempts: 1, error: null });
  expect(p.callsFor(deliveryId)).toBe(1);
  matrix.push({ crash: 'complete answer lost, retried after expiry + sweep', final: 'sent', providerCalls: p.callsFor(deliveryId) });
});

test('fail(unknown) answer lost: the SDK retries and gets the same answer; one transition, the provider is not called again', async () => {
  const setup = await conversation();
  const { deliveryId, messageId } = await replyAndNotify(setup, 'fail answer lost');
  const faults = faultyFetch([{ path: '/v1/deliveries/fail', mode: 'lose' }]);
  const p = provider(() => {
    throw new Error('provider connection reset mid-send');
  });
  const result = await connector({ fetch: faults.fetch }).processDelivery(deliveryId, p.send);
  expect(result).toMatchObject({ kind: 'unknown', outcome: 'unknown', code: 'provider_error', deliveryStatus: 'unknown' });
  expect(faults.requests.get('/v1/deliveries/fail')).toBe(2);
  expect(p.callsFor(deliveryId)).toBe(1);
  expect(await deliveryDoc(setup, deliveryId)).toMatchObject({ status: 'unknown', attempts: 1, error: { outcome: 'unknown', code: 'provider_error' } });
  await mirrorOnceStatus(setup, messageId, 'unknown');
  // A redelivered notification does not send it again.
  const again = provider();
  expect(await connector().processDelivery(deliveryId, again.send)).toMatchObject({ kind: 'already_finished', status: 'unknown', reason: 'outcome_unknown' });
  expect(again.calls).toHaveLength(0);
  matrix.push({ crash: 'fail(unknown) answer lost', final: 'unknown (one transition)', providerCalls: p.callsFor(deliveryId) });
});

test('over the whole matrix: never two provider calls under one lease', () => {
  expect(matrix).toHaveLength(9);
  const all = providers.flatMap((p) => p.calls);
  const perLease = new Map<string, number>();
  for (const c of all) perLease.set(`${c.deliveryId} ${c.leaseId}`, (perLease.get(`${c.deliveryId} ${c.leaseId}`) ?? 0) + 1);
  expect(Math.max(...perLease.values())).toBe(1);
  // Every provider call carried a lease of its own (no lease was ever used to send twice).
  expect(new Set(all.map((c) => c.leaseId)).size).toBe(all.length);
  expect(all.every((c) => c.leaseId !== '' && c.text !== '')).toBe(true);
});

test('no key material of the crash matrix in the emulator log', async () => {
  await expectNoKeyMaterialInLogs([integration.key]);
});
