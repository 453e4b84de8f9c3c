/**
 * processDelivery with `{ send, edit?, unsend? }`: the claim's `kind` picks the callback, the
 * callback gets the claim's `target`, a callback without ids completes with the target's ids, and a
 * kind without a callback is failed `unsupported_kind` without being started. Against a fake
 * delivery service over real HTTP; time on a fake clock.
 */
import { ConnectorClient, type DeliveryEvent, type Provider, type ProviderEditInput, ProviderPermanentError, type ProviderUnsendInput, runPullLoop } from '../../src/index.js';
import { errorReply, fakeSleep, KEY, type RecordedRequest, reply, startServer, type TestServer } from './helpers/server.js';
import { fakeClock, trackedFetch, type FakeClock } from './helpers/clock.js';
import { EventEmitter } from 'node:events';

const RECIPIENT = { externalConversationId: 'chat-1', externalCustomerId: 'cust-1' };
const TARGET = { deliveryId: 'd_reply', providerMessageIds: ['wamid.1', 'wamid.2'] };
const LEASE = { leaseId: 'lease-1', leaseExpiresAt: 1_900_000_120_000 };
const PLAIN = { status: 'ready', ...LEASE, message: { text: 'Hello from support', recipient: RECIPIENT } };
const EDIT = { status: 'ready', kind: 'edit', ...LEASE, message: { text: 'Hello from support (fixed)', recipient: RECIPIENT }, target: TARGET };
const UNSEND = { status: 'ready', kind: 'unsend', ...LEASE, message: { recipient: RECIPIENT }, target: TARGET };
const NOTIFICATION = { deliveryId: 'd_1', workspaceId: 'ws', integrationId: 'int', conversationId: 'c_1', messageId: 'm_1' };

let server: TestServer;
let client: ConnectorClient;
let clock: FakeClock;

function serve(claim: unknown): void {
  server.setHandler((req: RecordedRequest, res) => {
    const op = req.path.replace('/v1/deliveries/', '');
    if (op === 'claim') return reply(res, 200, claim);
    if (op === 'start') return reply(res, 200, { status: 'sending' });
    if (op === 'complete') return reply(res, 200, { status: 'sent' });
    if (op === 'fail') return reply(res, 200, { status: (req.json as { outcome: string }).outcome === 'retry' ? 'queued' : (req.json as { outcome: string }).outcome });
    return errorReply(res, 404, 'not_found');
  });
}
const calls = (): string[] => server.requests.map((r) => r.path.replace('/v1/deliveries/', ''));
const body = (op: string): unknown => server.requests.find((r) => r.path === `/v1/deliveries/${op}`)?.json;

beforeEach(async () => {
  server = await startServer();
  const http = trackedFetch();
  clock = fakeClock({ busy: () => http.inFlight() > 0 });
  client = new ConnectorClient({ integrationKey: KEY, baseUrl: server.url, sleep: fakeSleep().sleep, fetch: http.fetch });
});
afterEach(async () => {
  await server.close();
});

describe('processDelivery with { send, edit, unsend }', () => {
  test('a plain reply still goes to send, exactly as with a bare send function', async () => {
    serve(PLAIN);
    const sent: string[] = [];
    const edit = jest.fn();
    const result = await client.processDelivery(NOTIFICATION, { send: (input) => (sent.push(input.text), ['p-1']), edit, unsend: edit });
    expect(result).toEqual({ kind: 'sent', deliveryId: 'd_1', leaseId: 'lease-1', providerMessageIds: ['p-1'] });
    expect(sent).toEqual(['Hello from support']);
    expect(edit).not.toHaveBeenCalled();
    expect(calls()).toEqual(['claim', 'start', 'complete']);
  });

  test('edit: claim, start, edit once with the new text and the target, complete with the ids the provider returned', async () => {
    serve(EDIT);
    const inputs: ProviderEditInput[] = [];
    const send = jest.fn();
    const events: DeliveryEvent[] = [];
    const result = await client.processDelivery(
      NOTIFICATION,
      { send, edit: (input) => (inputs.push(input), { providerMessageIds: ['wamid.1-v2'] }) },
      { onEvent: (e) => events.push(e), clock },
    );
    expect(result).toEqual({ kind: 'sent', deliveryId: 'd_1', leaseId: 'lease-1', providerMessageIds: ['wamid.1-v2'], deliveryKind: 'edit' });
    expect(send).not.toHaveBeenCalled();
    expect(inputs).toHaveLength(1);
    expect(inputs[0]).toMatchObject({ deliveryId: 'd_1', leaseId: 'lease-1', leaseExpiresAt: LEASE.leaseExpiresAt, text: 'Hello from support (fixed)', recipient: RECIPIENT, target: TARGET });
    expect(inputs[0]?.signal).toBeInstanceOf(AbortSignal);
    expect(calls()).toEqual(['claim', 'start', 'complete']);
    expect(body('complete')).toEqual({ deliveryId: 'd_1', leaseId: 'lease-1', providerMessageIds: ['wamid.1-v2'] });
    expect(events.map((e) => e.type)).toEqual(['claimed', 'started', 'completed']);
    expect(events[0]).toMatchObject({ type: 'claimed', deliveryKind: 'edit' });
  });

  test.each([
    ['undefined', undefined],
    ['an empty array', []],
    ['an empty providerMessageIds', { providerMessageIds: [] }],
  ])('edit returning %s: complete with the target ids (complete needs at least one)', async (_name, returned) => {
    serve(EDIT);
    const result = await client.processDelivery(NOTIFICATION, { send: () => ['x'], edit: () => returned });
    expect(result).toMatchObject({ kind: 'sent', providerMessageIds: TARGET.providerMessageIds, deliveryKind: 'edit' });
    expect(body('complete')).toEqual({ deliveryId: 'd_1', leaseId: 'lease-1', providerMessageIds: TARGET.providerMessageIds });
  });

  test('unsend: the callback gets the target (no text), an answer without ids completes with the target ids', async () => {
    serve(UNSEND);
    const inputs: ProviderUnsendInput[] = [];
    const result = await client.processDelivery(NOTIFICATION, { send: () => ['x'], unsend: async (input) => void inputs.push(input) });
    expect(result).toEqual({ kind: 'sent', deliveryId: 'd_1', leaseId: 'lease-1', providerMessageIds: TARGET.providerMessageIds, deliveryKind: 'unsend' });
    expect(inputs).toHaveLength(1);
    expect(inputs[0]).toMatchObject({ deliveryId: 'd_1', recipient: RECIPIENT, target: TARGET });
    expect(inputs[0]).not.toHaveProperty('text');
    expect(calls()).toEqual(['claim', 'start', 'complete']);
  });

  test('the target keeps its per-part ids', async () => {
    const parts = [{ part: 'text', providerMessageIds: ['wamid.1'] }, { part: 'att_1', providerMessageIds: ['wamid.2'] }];
    serve({ ...UNSEND, target: { ...TARGET, parts } });
    const inputs: ProviderUnsendInput[] = [];
    await client.processDelivery(NOTIFICATION, { send: () => ['x'], unsend: (input) => void inputs.push(input) });
    expect(inputs[0]?.target).toEqual({ ...TARGET, parts });
  });

  const none = (): undefined => undefined;
  const sendX = (): string[] => ['x'];
  test.each<[string, unknown, Provider]>([
    ['edit', EDIT, { send: sendX, unsend: none }],
    ['unsend', UNSEND, { send: sendX, edit: none }],
    ['edit (a bare send function)', EDIT, sendX],
    ['a kind this SDK does not know', { ...EDIT, kind: 'pin' }, { send: sendX, edit: none, unsend: none }],
  ])('%s without its callback: failed unsupported_kind, never started, nothing called', async (_name, claim, provider) => {
    serve(claim);
    const spy = jest.fn(() => ['x']);
    const wrapped = typeof provider === 'function' ? spy : { ...provider, send: spy };
    const events: DeliveryEvent[] = [];
    const result = await client.processDelivery(NOTIFICATION, wrapped, { onEvent: (e) => events.push(e) });
    expect(result).toMatchObject({ kind: 'failed', deliveryId: 'd_1', leaseId: 'lease-1', outcome: 'failed', code: 'unsupported_kind', deliveryStatus: 'failed' });
    expect((result as { error: unknown }).error).toBeInstanceOf(ProviderPermanentError);
    expect(spy).not.toHaveBeenCalled();
    expect(calls()).toEqual(['claim', 'fail']);
    expect(body('fail')).toEqual({ deliveryId: 'd_1', leaseId: 'lease-1', outcome: 'failed', code: 'unsupported_kind' });
    expect(events.map((e) => e.type)).toEqual(['claimed', 'failed']);
  });

  test('an edit claim without a usable target is failed unsupported_kind (never complete with no ids)', async () => {
    serve({ ...EDIT, target: { deliveryId: 'd_reply', providerMessageIds: [] } });
    const edit = jest.fn();
    const result = await client.processDelivery(NOTIFICATION, { send: () => ['x'], edit });
    expect(result).toMatchObject({ kind: 'failed', code: 'unsupported_kind' });
    expect(edit).not.toHaveBeenCalled();
    expect(calls()).toEqual(['claim', 'fail']);
  });

  test('an edit callback throws as send does: ProviderPermanentError -> failed with its code, other errors -> unknown', async () => {
    serve(EDIT);
    const permanent = await client.processDelivery(NOTIFICATION, {
      send: () => ['x'],
      edit: () => {
        throw new ProviderPermanentError('the channel says the edit window passed', { code: 'edit_window_passed' });
      },
    });
    expect(permanent).toMatchObject({ kind: 'failed', outcome: 'failed', code: 'edit_window_passed' });
    const unknown = await client.processDelivery(NOTIFICATION, {
      send: () => ['x'],
      edit: () => {
        throw new Error('socket hang up');
      },
    });
    expect(unknown).toMatchObject({ kind: 'unknown', outcome: 'unknown', code: 'provider_error' });
  });

  test('an edit callback that returns unusable ids is reported unknown (as for send), never completed', async () => {
    serve(EDIT);
    const result = await client.processDelivery(NOTIFICATION, { send: () => ['x'], edit: () => [''] });
    expect(result).toMatchObject({ kind: 'unknown', code: 'invalid_provider_result' });
    expect(calls()).toEqual(['claim', 'start', 'fail']);
  });

  test('an edit that hangs past providerTimeoutMs: the signal aborts, unknown provider_timeout (fake clock)', async () => {
    serve(EDIT);
    let aborted = false;
    const result = await clock.run(
      client.processDelivery(
        NOTIFICATION,
        {
          send: () => ['x'],
          edit: ({ signal }) =>
            new Promise(() => {
              signal.addEventListener('abort', () => (aborted = true));
            }),
        },
        { providerTimeoutMs: 5_000, extendLease: false, clock },
      ),
    );
    expect(aborted).toBe(true);
    expect(result).toMatchObject({ kind: 'unknown', code: 'provider_timeout' });
  });

  test('the provider argument is checked up front', async () => {
    serve(EDIT);
    await expect(client.processDelivery(NOTIFICATION, {} as never)).rejects.toThrow('processDelivery needs a provider send function or { send, edit?, unsend? }');
    await expect(client.processDelivery(NOTIFICATION, { send: () => ['x'], edit: 'no' } as never)).rejects.toThrow('edit must be a function');
    expect(() => runPullLoop(client, new EventEmitterSubscription(), { send: () => ['x'], unsend: 1 } as never)).toThrow('runPullLoop: unsend must be a function');
    expect(calls()).toEqual([]);
  });

  test('runPullLoop passes { send, edit, unsend } to every delivery', async () => {
    serve(EDIT);
    const subscription = new EventEmitterSubscription();
    const edited: string[] = [];
    const loop = runPullLoop(client, subscription, { send: () => ['x'], edit: (input) => void edited.push(input.text) }, { catchUpIntervalMs: 0, catchUpOnStart: false, clock });
    const acked = new Promise<void>((resolve) => {
      subscription.emit('message', { data: Buffer.from(JSON.stringify(NOTIFICATION)), attributes: { kind: 'edit' }, id: 'm1', ack: resolve, nack: () => undefined });
    });
    await clock.run(acked);
    await clock.run(loop.stop());
    expect(edited).toEqual(['Hello from support (fixed)']);
    expect(calls()).toEqual(['claim', 'start', 'complete']);
  });
});

/** A Pub/Sub subscription stand-in: an EventEmitter with close(). */
class EventEmitterSubscription extends EventEmitter {
  async close(): Promise<void> {
    this.removeAllListeners();
  }
}
