import {
  ConnectorClient,
  ConflictError,
  DeliveryReportError,
  type DeliveryEvent,
  type ProcessDeliveryResult,
  ProviderPermanentError,
  ProviderRetryableError,
  type ProviderSendInput,
  ProviderUnknownOutcomeError,
  parsePulledNotification,
  parsePushNotification,
} from '../../src/index.js';
import { toFailCode } from '../../src/internal/process.js';
import { extendDelay, MIN_EXTEND_DELAY_MS } from '../../src/internal/lease.js';
import { errorReply, fakeSleep, KEY, type RecordedRequest, reply, startServer, type TestServer } from './helpers/server.js';
import { fakeClock, trackedFetch, type FakeClock } from './helpers/clock.js';

const READY = {
  status: 'ready',
  leaseId: 'lease-1',
  leaseExpiresAt: 1_900_000_120_000,
  message: { text: 'Hello from support', recipient: { externalConversationId: 'chat-1', externalCustomerId: 'cust-1' } },
};
const NOTIFICATION = { deliveryId: 'd_1', workspaceId: 'ws', integrationId: 'int', conversationId: 'c_1', messageId: 'm_1' };

type Routes = Partial<Record<'claim' | 'start' | 'extend' | 'complete' | 'fail', (req: RecordedRequest, res: import('node:http').ServerResponse, n: number) => void>>;

let server: TestServer;
let client: ConnectorClient;
let delays: number[];
/** The time of the tests that wait (lease keeping, provider durations): it moves when the code is idle. */
let clock: FakeClock;

/** A fake delivery service: claim -> ready, start -> sending, complete -> sent, fail -> status by outcome; overridable per route. */
function serve(routes: Routes = {}): void {
  const counts: Record<string, number> = {};
  server.setHandler((req, res) => {
    const op = req.path.replace('/v1/deliveries/', '') as keyof Routes;
    counts[op] = (counts[op] ?? 0) + 1;
    const custom = routes[op];
    if (custom) return custom(req, res, counts[op] - 1);
    if (op === 'claim') return reply(res, 200, READY);
    if (op === 'start') return reply(res, 200, { status: 'sending' });
    if (op === 'complete') return reply(res, 200, { status: 'sent' });
    if (op === 'fail') {
      const outcome = (req.json as { outcome: string }).outcome;
      return reply(res, 200, { status: outcome === 'retry' ? 'queued' : outcome });
    }
    return errorReply(res, 404, 'not_found');
  });
}
const calls = () => server.requests.map((r) => r.path.replace('/v1/deliveries/', ''));
const body = (op: string) => server.requests.find((r) => r.path === `/v1/deliveries/${op}`)?.json;

beforeEach(async () => {
  server = await startServer();
  const s = fakeSleep();
  delays = s.delays;
  const http = trackedFetch();
  clock = fakeClock({ busy: () => http.inFlight() > 0 });
  client = new ConnectorClient({ integrationKey: KEY, baseUrl: server.url, sleep: s.sleep, fetch: http.fetch });
});
afterEach(async () => {
  await server.close();
});

function provider(impl: (input: ProviderSendInput) => unknown) {
  const inputs: ProviderSendInput[] = [];
  const send = async (input: ProviderSendInput) => {
    inputs.push(input);
    return (await impl(input)) as string[];
  };
  return { send, inputs };
}

describe('processDelivery', () => {
  test('provider succeeds: claim, start, send once, complete with its ids', async () => {
    serve();
    const p = provider(() => ({ providerMessageIds: ['wamid.1', 'wamid.2'] }));
    const result = await client.processDelivery(NOTIFICATION, p.send);
    expect(result).toEqual<ProcessDeliveryResult>({ kind: 'sent', deliveryId: 'd_1', leaseId: 'lease-1', providerMessageIds: ['wamid.1', 'wamid.2'] });
    expect(calls()).toEqual(['claim', 'start', 'complete']);
    expect(p.inputs).toHaveLength(1);
    expect(p.inputs[0]).toMatchObject({
      deliveryId: 'd_1',
      leaseId: 'lease-1',
      leaseExpiresAt: READY.leaseExpiresAt,
      text: 'Hello from support',
      recipient: { externalConversationId: 'chat-1', externalCustomerId: 'cust-1' },
    });
    expect(p.inputs[0]?.signal).toBeInstanceOf(AbortSignal);
    expect(body('claim')).toEqual({ deliveryId: 'd_1', requestId: expect.any(String) });
    expect(body('start')).toEqual({ deliveryId: 'd_1', leaseId: 'lease-1' });
    expect(body('complete')).toEqual({ deliveryId: 'd_1', leaseId: 'lease-1', providerMessageIds: ['wamid.1', 'wamid.2'] });
  });

  test('accepts a bare deliveryId and a provider returning an array', async () => {
    serve();
    const result = await client.processDelivery('d_9', () => ['id-1']);
    expect(result).toMatchObject({ kind: 'sent', deliveryId: 'd_9', providerMessageIds: ['id-1'] });
    expect(body('claim')).toMatchObject({ deliveryId: 'd_9' });
  });

  test('claim skip: nothing else happens, provider not called', async () => {
    serve({ claim: (_req, res) => reply(res, 200, { status: 'skip', reason: 'waiting_for_previous' }) });
    const p = provider(() => ['x']);
    await expect(client.processDelivery(NOTIFICATION, p.send)).resolves.toEqual({ kind: 'skipped', deliveryId: 'd_1', reason: 'waiting_for_previous' });
    expect(calls()).toEqual(['claim']);
    expect(p.inputs).toHaveLength(0);
  });

  test.each([
    ['already_sent', 'sent'],
    ['already_failed', 'failed'],
    ['outcome_unknown', 'unknown'],
  ])('claim skip %s: already_finished with status %s, provider not called', async (reason, status) => {
    serve({ claim: (_req, res) => reply(res, 200, { status: 'skip', reason }) });
    const p = provider(() => ['x']);
    await expect(client.processDelivery(NOTIFICATION, p.send)).resolves.toEqual({ kind: 'already_finished', deliveryId: 'd_1', status, reason });
    expect(calls()).toEqual(['claim']);
    expect(p.inputs).toHaveLength(0);
  });

  test('a skip reason this SDK does not know yet is a plain skip (acknowledge, a new notification comes)', async () => {
    serve({ claim: (_req, res) => reply(res, 200, { status: 'skip', reason: 'paused_by_operator' }) });
    await expect(client.processDelivery(NOTIFICATION, () => ['x'])).resolves.toEqual({ kind: 'skipped', deliveryId: 'd_1', reason: 'paused_by_operator' });
  });

  test('start answers sent: already_finished (the same kind as a claim skip already_sent), provider NOT called, no complete', async () => {
    serve({ start: (_req, res) => reply(res, 200, { status: 'sent' }) });
    const p = provider(() => ['x']);
    await expect(client.processDelivery(NOTIFICATION, p.send)).resolves.toEqual({ kind: 'already_finished', deliveryId: 'd_1', status: 'sent', reason: 'already_sent', leaseId: 'lease-1' });
    expect(calls()).toEqual(['claim', 'start']);
    expect(p.inputs).toHaveLength(0);
  });

  test('provider rejects temporarily -> fail retry with its code and retryAfterMs', async () => {
    serve();
    const err = new ProviderRetryableError('429 from provider', { code: 'Provider-Rate-Limited', retryAfterMs: 61_000.4 });
    const p = provider(() => {
      throw err;
    });
    const result = await client.processDelivery(NOTIFICATION, p.send);
    expect(result).toEqual({ kind: 'retry_scheduled', deliveryId: 'd_1', leaseId: 'lease-1', outcome: 'retry', code: 'provider_rate_limited', deliveryStatus: 'queued', retryAfterMs: 61_000, error: err });
    expect(calls()).toEqual(['claim', 'start', 'fail']);
    expect(body('fail')).toEqual({ deliveryId: 'd_1', leaseId: 'lease-1', outcome: 'retry', code: 'provider_rate_limited', retryAfterMs: 61_000 });
    expect(p.inputs).toHaveLength(1);
  });

  test('retryable without code/delay -> provider_temporary, no retryAfterMs; delay clamped to one hour', async () => {
    serve();
    await client.processDelivery(NOTIFICATION, () => {
      throw new ProviderRetryableError('busy');
    });
    expect(body('fail')).toEqual({ deliveryId: 'd_1', leaseId: 'lease-1', outcome: 'retry', code: 'provider_temporary' });
    server.requests.length = 0;
    await client.processDelivery(NOTIFICATION, () => {
      throw new ProviderRetryableError('busy', { retryAfterMs: 10 * 3_600_000 });
    });
    expect(body('fail')).toMatchObject({ retryAfterMs: 3_600_000 });
  });

  test('provider rejects permanently -> fail failed', async () => {
    serve();
    const result = await client.processDelivery(NOTIFICATION, async () => {
      throw new ProviderPermanentError('recipient blocked the bot', { code: 'recipient_blocked' });
    });
    expect(result).toMatchObject({ kind: 'failed', outcome: 'failed', code: 'recipient_blocked', deliveryStatus: 'failed' });
    expect(body('fail')).toEqual({ deliveryId: 'd_1', leaseId: 'lease-1', outcome: 'failed', code: 'recipient_blocked' });
  });

  test('provider times out (the SDK limit) -> fail unknown provider_timeout, signal aborted, never called twice', async () => {
    serve();
    let signal: AbortSignal | undefined;
    const p = provider((input) => {
      signal = input.signal;
      return new Promise(() => undefined); // hangs
    });
    const result = await client.processDelivery(NOTIFICATION, p.send, { providerTimeoutMs: 20 });
    expect(result).toMatchObject({ kind: 'unknown', outcome: 'unknown', code: 'provider_timeout', deliveryStatus: 'unknown' });
    expect((result as { error: unknown }).error).toBeInstanceOf(ProviderUnknownOutcomeError);
    expect(signal?.aborted).toBe(true);
    expect(p.inputs).toHaveLength(1);
    expect(calls()).toEqual(['claim', 'start', 'fail']);
    expect(body('fail')).toEqual({ deliveryId: 'd_1', leaseId: 'lease-1', outcome: 'unknown', code: 'provider_timeout' });
  });

  test("the provider's own timeout error (TimeoutError / AbortError) -> unknown provider_timeout", async () => {
    serve();
    const result = await client.processDelivery(NOTIFICATION, async () => {
      throw new DOMException('The operation timed out.', 'TimeoutError');
    });
    expect(result).toMatchObject({ outcome: 'unknown', code: 'provider_timeout' });
  });

  test('any other error -> unknown provider_error', async () => {
    serve();
    const result = await client.processDelivery(NOTIFICATION, () => {
      throw new Error('socket hang up');
    });
    expect(result).toMatchObject({ kind: 'unknown', outcome: 'unknown', code: 'provider_error', deliveryStatus: 'unknown' });
  });

  test('partial send -> unknown with the accepted ids', async () => {
    serve();
    await client.processDelivery(NOTIFICATION, () => {
      throw new ProviderUnknownOutcomeError('part 2 of 3 timed out', { code: 'partial_send', providerMessageIds: ['part-1', ''] });
    });
    expect(body('fail')).toEqual({ deliveryId: 'd_1', leaseId: 'lease-1', outcome: 'unknown', code: 'partial_send', providerMessageIds: ['part-1'] });
  });

  test('provider "succeeds" without usable ids -> unknown invalid_provider_result, never complete', async () => {
    serve();
    const result = await client.processDelivery(NOTIFICATION, () => []);
    expect(result).toMatchObject({ kind: 'unknown', outcome: 'unknown', code: 'invalid_provider_result' });
    expect(calls()).toEqual(['claim', 'start', 'fail']);
  });

  test('fail answering sent (a completion of this lease won): already_finished sent', async () => {
    serve({ fail: (_req, res) => reply(res, 200, { status: 'sent' }) });
    const result = await client.processDelivery(NOTIFICATION, () => {
      throw new ProviderPermanentError('x');
    });
    expect(result).toEqual({ kind: 'already_finished', deliveryId: 'd_1', status: 'sent', reason: 'already_sent', leaseId: 'lease-1' });
  });

  test('a retry the service no longer accepts (its retry budget is spent) is failed, not retry_scheduled', async () => {
    serve({ fail: (_req, res) => reply(res, 200, { status: 'failed' }) });
    const result = await client.processDelivery(NOTIFICATION, () => {
      throw new ProviderRetryableError('busy', { code: 'rate_limited' });
    });
    expect(result).toMatchObject({ kind: 'failed', outcome: 'retry', code: 'rate_limited', deliveryStatus: 'failed' });
  });

  test.each(['lease_busy', 'retry_delayed'])('a claim answered 503 %s is not retried: skipped at once with that reason (the service notifies again), the provider never runs', async (code) => {
    const events: string[] = [];
    serve({ claim: (_req, res) => errorReply(res, 503, code, undefined, { 'retry-after': '90' }) });
    const p = provider(() => ['p-1']);
    await expect(client.processDelivery(NOTIFICATION, p.send, { onEvent: (e) => events.push(e.type) })).resolves.toEqual({ kind: 'skipped', deliveryId: 'd_1', reason: code });
    expect(calls()).toEqual(['claim']);
    expect(p.inputs).toHaveLength(0);
    expect(events).toEqual(['skipped']);
  });

  test('claim, start and complete are retried with the same requestId / leaseId; the provider still runs once', async () => {
    serve({
      claim: (_req, res, n) => (n === 0 ? errorReply(res, 503, 'temporarily_unavailable', undefined, { 'retry-after': '3' }) : reply(res, 200, READY)),
      start: (_req, res, n) => (n === 0 ? res.socket?.destroy() : reply(res, 200, { status: 'sending' })),
      complete: (_req, res, n) => (n === 0 ? errorReply(res, 503, 'contention', undefined, { 'retry-after': '1' }) : reply(res, 200, { status: 'sent' })),
    });
    const p = provider(() => ['p-1']);
    await expect(client.processDelivery(NOTIFICATION, p.send, { requestId: 'req-fixed' })).resolves.toMatchObject({ kind: 'sent' });
    expect(calls()).toEqual(['claim', 'claim', 'start', 'start', 'complete', 'complete']);
    expect(server.requests.slice(0, 2).map((r) => r.json)).toEqual([
      { deliveryId: 'd_1', requestId: 'req-fixed' },
      { deliveryId: 'd_1', requestId: 'req-fixed' },
    ]);
    expect(p.inputs).toHaveLength(1);
    expect(delays[0]).toBe(3000);
  });

  test('claim errors propagate (nothing was sent)', async () => {
    serve({ claim: (_req, res) => errorReply(res, 404, 'delivery_not_found') });
    const p = provider(() => ['x']);
    await expect(client.processDelivery(NOTIFICATION, p.send)).rejects.toMatchObject({ status: 404, code: 'delivery_not_found' });
    expect(p.inputs).toHaveLength(0);
  });

  test('start 409 lease_lost propagates; provider not called', async () => {
    serve({ start: (_req, res) => errorReply(res, 409, 'lease_lost') });
    const p = provider(() => ['x']);
    await expect(client.processDelivery(NOTIFICATION, p.send)).rejects.toBeInstanceOf(ConflictError);
    expect(p.inputs).toHaveLength(0);
  });

  test('complete keeps failing after the provider sent -> DeliveryReportError with the ids; no fail, no second send', async () => {
    serve({ complete: (_req, res) => errorReply(res, 409, 'conflicting_completion') });
    const p = provider(() => ['sent-1']);
    const err = await client.processDelivery(NOTIFICATION, p.send).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DeliveryReportError);
    expect(err).toMatchObject({ step: 'complete', deliveryId: 'd_1', leaseId: 'lease-1', providerMessageIds: ['sent-1'] });
    expect((err as Error).cause).toBeInstanceOf(ConflictError);
    expect(calls()).toEqual(['claim', 'start', 'complete']);
    expect(p.inputs).toHaveLength(1);
  });

  test('fail cannot be reported -> DeliveryReportError with outcome, code and the provider error', async () => {
    serve({ fail: (_req, res) => errorReply(res, 409, 'lease_lost') });
    const providerError = new ProviderPermanentError('nope', { code: 'bad_recipient' });
    const err = await client
      .processDelivery(NOTIFICATION, () => {
        throw providerError;
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DeliveryReportError);
    expect(err).toMatchObject({ step: 'fail', outcome: 'failed', failCode: 'bad_recipient', providerError });
  });

  test('input validation', async () => {
    serve();
    await expect(client.processDelivery('', () => ['x'])).rejects.toThrow(TypeError);
    await expect(client.processDelivery('d', undefined as never)).rejects.toThrow(TypeError);
    await expect(client.processDelivery('d', () => ['x'], { providerTimeoutMs: 0 })).rejects.toThrow(RangeError);
    expect(server.requests).toHaveLength(0);
  });
});

describe('processDelivery onEvent', () => {
  const record = () => {
    const events: DeliveryEvent[] = [];
    return { events, onEvent: (e: DeliveryEvent) => events.push(e), types: () => events.map((e) => e.type) };
  };

  test('sent: claimed, started, completed, each with the deliveryId, the time and the elapsed time; provider time measured', async () => {
    serve();
    const r = record();
    const before = clock.now();
    await clock.run(
      client.processDelivery(NOTIFICATION, async () => {
        await clock.sleep(60);
        return ['p-1'];
      }, { onEvent: r.onEvent, clock }),
    );
    expect(r.types()).toEqual(['claimed', 'started', 'completed']);
    for (const e of r.events) {
      expect(e.deliveryId).toBe('d_1');
      expect(e.at).toBeGreaterThanOrEqual(before);
      expect(e.elapsedMs).toBeGreaterThanOrEqual(0);
    }
    expect(r.events[0]).toMatchObject({ type: 'claimed', leaseId: 'lease-1', leaseExpiresAt: READY.leaseExpiresAt });
    const completed = r.events[2] as Extract<DeliveryEvent, { type: 'completed' }>;
    expect(completed).toMatchObject({ leaseId: 'lease-1', providerMessageIds: ['p-1'] });
    expect(completed.providerMs).toBeGreaterThanOrEqual(50);
    expect(completed.elapsedMs).toBeGreaterThanOrEqual(completed.providerMs);
  });

  test('one event per ending: skipped, already_finished, retry_scheduled, failed, unknown, report_failed', async () => {
    const ending = async (routes: Routes, send: () => unknown) => {
      serve(routes);
      const r = record();
      await client.processDelivery(NOTIFICATION, send as () => string[], { onEvent: r.onEvent }).catch(() => undefined);
      return r.events.at(-1);
    };
    const ok = () => ['p'];
    expect(await ending({ claim: (_q, res) => reply(res, 200, { status: 'skip', reason: 'waiting_for_previous' }) }, ok)).toMatchObject({ type: 'skipped', reason: 'waiting_for_previous' });
    expect(await ending({ start: (_q, res) => reply(res, 200, { status: 'sent' }) }, ok)).toMatchObject({ type: 'already_finished', status: 'sent', reason: 'already_sent', leaseId: 'lease-1' });
    const retry = new ProviderRetryableError('busy', { code: 'rate_limited' });
    expect(await ending({}, () => Promise.reject(retry))).toMatchObject({ type: 'retry_scheduled', outcome: 'retry', code: 'rate_limited', error: retry });
    expect(await ending({}, () => Promise.reject(new ProviderPermanentError('no')))).toMatchObject({ type: 'failed', outcome: 'failed', code: 'provider_rejected' });
    expect(await ending({}, () => Promise.reject(new Error('reset')))).toMatchObject({ type: 'unknown', outcome: 'unknown', code: 'provider_error' });
    expect(await ending({ complete: (_q, res) => errorReply(res, 409, 'lease_lost') }, ok)).toMatchObject({ type: 'report_failed', step: 'complete', error: expect.any(ConflictError) });
  });

  test('an observer that throws changes nothing', async () => {
    serve();
    const result = await client.processDelivery(NOTIFICATION, () => ['p-1'], {
      onEvent: () => {
        throw new Error('broken metrics exporter');
      },
    });
    expect(result).toMatchObject({ kind: 'sent', providerMessageIds: ['p-1'] });
    expect(calls()).toEqual(['claim', 'start', 'complete']);
  });
});

/**
 * Automatic lease extension, with short leases on a fake clock (`clock`, given to processDelivery
 * and read by the server): the local server grants leases of LEASE ms (claim and extend answer like
 * the service, `now + LEASE`) and records when each call arrived, so the test sees whether every
 * extension came while the lease was still live. Times are the clock's; no test waits for them.
 */
describe('processDelivery keeps the lease alive while the provider call runs', () => {
  const LEASE = 2_400;
  const sleep = (ms: number) => clock.sleep(ms);

  /** A lease-keeping server: claim and extend grant `now + LEASE`; `extendAnswer` may refuse the n-th extend. */
  function leaseServer(extendAnswer?: (res: import('node:http').ServerResponse, n: number) => boolean) {
    const log = { expiresAt: 0, extends: [] as Array<{ at: number; liveBefore: boolean }>, completeAt: 0 };
    serve({
      claim: (_req, res) => {
        log.expiresAt = clock.now() + LEASE;
        reply(res, 200, { ...READY, leaseExpiresAt: log.expiresAt });
      },
      extend: (_req, res, n) => {
        const at = clock.now();
        log.extends.push({ at, liveBefore: at < log.expiresAt });
        if (extendAnswer?.(res, n)) return;
        log.expiresAt = at + LEASE;
        reply(res, 200, { leaseExpiresAt: log.expiresAt });
      },
      complete: (_req, res) => {
        log.completeAt = clock.now();
        reply(res, 200, { status: 'sent' });
      },
    });
    return log;
  }

  test('a provider call longer than the lease: extended at half of the remaining lease, each time while live; sent; no extension after the end', async () => {
    const log = leaseServer();
    const started = clock.now();
    const events: DeliveryEvent[] = [];
    const result = await clock.run(
      client.processDelivery(NOTIFICATION, async () => {
        await sleep(LEASE + 1_000);
        return ['wamid.slow'];
      }, { onEvent: (e) => events.push(e), clock }),
    );
    // Every extension is reported with the new expiry, between started and completed.
    const types = events.map((e) => e.type);
    expect(types).toEqual(['claimed', 'started', ...log.extends.map(() => 'extended'), 'completed']);
    expect(events.filter((e) => e.type === 'extended').every((e) => 'leaseExpiresAt' in e && e.leaseExpiresAt > started)).toBe(true);
    expect(result).toEqual<ProcessDeliveryResult>({ kind: 'sent', deliveryId: 'd_1', leaseId: 'lease-1', providerMessageIds: ['wamid.slow'] });
    // Half of 2.4 s, then half of each new lease: at about 1.2 s and 2.4 s of a 3.4 s call.
    expect(log.extends.length).toBeGreaterThanOrEqual(2);
    expect(log.extends.every((e) => e.liveBefore)).toBe(true);
    expect((log.extends[0]?.at ?? 0) - started).toBeGreaterThanOrEqual(LEASE / 2 - 300);
    expect((log.extends[0]?.at ?? 0) - started).toBeLessThan(LEASE);
    expect(log.completeAt).toBeLessThan(log.expiresAt);
    expect(body('extend')).toEqual({ deliveryId: 'd_1', leaseId: 'lease-1' });
    const count = log.extends.length;
    await clock.advance(LEASE);
    expect(log.extends).toHaveLength(count);
    expect(calls().filter((c) => c !== 'extend')).toEqual(['claim', 'start', 'complete']);
  }, 20_000);

  test.each(['lease_lost', 'lease_limit_reached'])('extend answered %s: no further extension, the provider call finishes and is reported as usual', async (code) => {
    const log = leaseServer((res) => {
      errorReply(res, 409, code);
      return true;
    });
    const events: DeliveryEvent[] = [];
    const result = await clock.run(
      client.processDelivery(NOTIFICATION, async () => {
        await sleep(LEASE + 500);
        return ['wamid.late'];
      }, { onEvent: (e) => events.push(e), clock }),
    );
    expect(events.find((e) => e.type === 'extend_failed')).toMatchObject({ willRetry: false, error: { code } });
    expect(result).toMatchObject({ kind: 'sent', providerMessageIds: ['wamid.late'] });
    expect(log.extends).toHaveLength(1);
    expect(calls()).toEqual(['claim', 'start', 'extend', 'complete']);
  }, 20_000);

  test('an extension that fails after the transport\'s retries (503) is tried again at half of what is left, and the lease kept', async () => {
    const started = clock.now();
    // Every attempt of the first extension (at half of the lease) meets a 503; the later ones are granted.
    const log = leaseServer((res) => {
      if (clock.now() > started + LEASE / 2) return false;
      errorReply(res, 503, 'unavailable');
      return true;
    });
    const events: DeliveryEvent[] = [];
    const result = await clock.run(
      client.processDelivery(NOTIFICATION, async () => {
        await sleep(LEASE + 1_100);
        return ['wamid.kept'];
      }, { onEvent: (e) => events.push(e), clock }),
    );
    expect(result).toMatchObject({ kind: 'sent', providerMessageIds: ['wamid.kept'] });
    expect(events.map((e) => e.type)).toEqual(['claimed', 'started', 'extend_failed', 'extended', 'extended', 'completed']);
    expect(events[2]).toMatchObject({ type: 'extend_failed', willRetry: true, error: { status: 503 } });
    // 1.2 s (every attempt refused, 1.2 s left), again after MIN_EXTEND_DELAY_MS (half of what is
    // left would be under it) at 2.2 s (lease to 4.6 s), then at half of that, 3.4 s; the call ends at 3.5 s.
    expect([...new Set(log.extends.map((e) => e.at - started))]).toEqual([LEASE / 2, LEASE / 2 + MIN_EXTEND_DELAY_MS, LEASE / 2 + MIN_EXTEND_DELAY_MS + LEASE / 2]);
    expect(log.extends.every((e) => e.liveBefore)).toBe(true);
    expect(log.completeAt - started).toBe(LEASE + 1_100);
    expect(log.completeAt).toBeLessThan(log.expiresAt);
  }, 20_000);

  test('extendDelay: half of what is left, never under MIN_EXTEND_DELAY_MS (a lease that seems over), never past the timer limit', () => {
    expect(extendDelay(10_000, 0)).toBe(5_000);
    expect(extendDelay(10_001, 0)).toBe(5_000);
    expect(extendDelay(1_000, 0)).toBe(MIN_EXTEND_DELAY_MS);
    expect(extendDelay(0, 5_000)).toBe(MIN_EXTEND_DELAY_MS);
    expect(extendDelay(Number.MAX_SAFE_INTEGER, 0)).toBe(2_147_483_647);
  });

  test('a clock without now(), setTimeout() and clearTimeout() is refused before any call', async () => {
    serve();
    await expect(client.processDelivery(NOTIFICATION, () => ['x'], { clock: { now: () => 0 } as never })).rejects.toThrow(TypeError);
    expect(server.requests).toHaveLength(0);
  });

  test('a provider error while extending: the failure is reported as usual and extending stops', async () => {
    const log = leaseServer();
    const result = await clock.run(
      client.processDelivery(NOTIFICATION, async () => {
        await sleep(LEASE / 2 + 400);
        throw new ProviderPermanentError('blocked', { code: 'recipient_blocked' });
      }, { clock }),
    );
    expect(result).toMatchObject({ kind: 'failed', outcome: 'failed', code: 'recipient_blocked' });
    expect(log.extends).toHaveLength(1);
    await clock.advance(LEASE);
    expect(log.extends).toHaveLength(1);
  }, 20_000);

  test('a short provider call never extends; extendLease: false never extends', async () => {
    leaseServer();
    await clock.run(client.processDelivery(NOTIFICATION, async () => ['quick'], { clock }));
    expect(calls()).toEqual(['claim', 'start', 'complete']);
    server.requests.length = 0;
    await clock.run(
      client.processDelivery(NOTIFICATION, async () => {
        await sleep(LEASE / 2 + 300);
        return ['slow'];
      }, { extendLease: false, clock }),
    );
    expect(calls()).toEqual(['claim', 'start', 'complete']);
  }, 20_000);
});

describe('toFailCode', () => {
  test.each([
    ['rate_limited', 'rate_limited'],
    ['Rate-Limited!', 'rate_limited'],
    ['429', 'provider_429'],
    ['__x', 'x'],
    ['', 'fallback'],
    ['!!!', 'fallback'],
    [undefined, 'fallback'],
  ])('%p -> %p', (input, expected) => {
    expect(toFailCode(input, 'fallback')).toBe(expected);
  });

  test('at most 80 characters and always matching the pattern', () => {
    const c = toFailCode('a'.repeat(200), 'f');
    expect(c).toHaveLength(80);
    expect(c).toMatch(/^[a-z][a-z0-9_]*$/);
  });
});

describe('processDelivery trace context', () => {
  const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

  test('the notification`s traceparent goes on claim, start, fail and complete, and every event carries its trace id', async () => {
    serve();
    const events: DeliveryEvent[] = [];
    const notification = parsePulledNotification({ data: Buffer.from(JSON.stringify(NOTIFICATION)), attributes: { traceparent: TRACEPARENT, deliveryId: 'd_1' } });
    expect(notification.traceparent).toBe(TRACEPARENT);
    await client.processDelivery(notification, provider(() => ['p-1']).send, { onEvent: (e) => events.push(e) });
    expect(calls()).toEqual(['claim', 'start', 'complete']);
    expect(server.requests.map((r) => r.headers.traceparent)).toEqual([TRACEPARENT, TRACEPARENT, TRACEPARENT]);
    expect(events.length).toBeGreaterThan(0);
    expect(events.every((e) => e.traceId === '4bf92f3577b34da6a3ce929d0e0e4736')).toBe(true);

    server.requests.length = 0;
    await client.processDelivery(notification, provider(() => {
      throw new ProviderRetryableError('busy');
    }).send);
    expect(calls()).toEqual(['claim', 'start', 'fail']);
    expect(server.requests.every((r) => r.headers.traceparent === TRACEPARENT)).toBe(true);
  });

  test('a push envelope`s traceparent attribute is read; a malformed one is not forwarded; without one no header is sent', async () => {
    const data = Buffer.from(JSON.stringify(NOTIFICATION)).toString('base64');
    expect(parsePushNotification({ message: { data, attributes: { traceparent: TRACEPARENT }, messageId: '1' } }).traceparent).toBe(TRACEPARENT);
    expect(parsePushNotification({ message: { data, attributes: { traceparent: 'garbage' }, messageId: '1' } }).traceparent).toBeUndefined();
    serve();
    const events: DeliveryEvent[] = [];
    await client.processDelivery(NOTIFICATION, provider(() => ['p-1']).send, { onEvent: (e) => events.push(e) });
    expect(server.requests.every((r) => r.headers.traceparent === undefined)).toBe(true);
    expect(events.every((e) => e.traceId === undefined)).toBe(true);
  });

  test('send receives the notification`s traceparent and its trace id', async () => {
    serve();
    const p = provider(() => ['p-1']);
    const notification = parsePulledNotification({ data: Buffer.from(JSON.stringify(NOTIFICATION)), attributes: { traceparent: TRACEPARENT } });
    await client.processDelivery(notification, p.send);
    expect(p.inputs).toHaveLength(1);
    expect(p.inputs[0]).toMatchObject({ deliveryId: 'd_1', leaseId: 'lease-1', traceparent: TRACEPARENT, traceId: '4bf92f3577b34da6a3ce929d0e0e4736' });
  });

  test('the traceparent option reaches send too, and wins over the notification`s', async () => {
    serve();
    const other = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const p = provider(() => ['p-1']);
    const notification = parsePulledNotification({ data: Buffer.from(JSON.stringify(NOTIFICATION)), attributes: { traceparent: TRACEPARENT } });
    await client.processDelivery(notification, p.send, { traceparent: other });
    await client.processDelivery('d_1', p.send, { traceparent: other });
    expect(p.inputs.map((i) => [i.traceparent, i.traceId])).toEqual([
      [other, '0af7651916cd43dd8448eb211c80319c'],
      [other, '0af7651916cd43dd8448eb211c80319c'],
    ]);
  });

  test('without a (well-formed) traceparent, send gets neither field', async () => {
    serve();
    const p = provider(() => ['p-1']);
    await client.processDelivery(NOTIFICATION, p.send);
    await client.processDelivery('d_1', p.send);
    await client.processDelivery(NOTIFICATION, p.send, { traceparent: 'garbage' });
    expect(p.inputs).toHaveLength(3);
    for (const input of p.inputs) {
      expect(Object.hasOwn(input, 'traceparent')).toBe(false);
      expect(Object.hasOwn(input, 'traceId')).toBe(false);
    }
    expect(server.requests.every((r) => r.headers.traceparent === undefined)).toBe(true);
  });

  test('receipt and other calls take a traceparent in their options', async () => {
    server.setHandler((req, res) => reply(res, 200, { status: 'sent', receipt: { status: 'delivered', at: 1, code: null } }));
    await client.deliveries.receipt({ deliveryId: 'd_1', status: 'delivered' }, { traceparent: TRACEPARENT }).catch(() => undefined);
    expect(server.requests[0]?.headers.traceparent).toBe(TRACEPARENT);
  });
});
