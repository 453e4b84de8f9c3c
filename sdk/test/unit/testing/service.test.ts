/**
 * The test service (sdk/src/testing) through real HTTP on loopback: with the SDK's ConnectorClient
 * as a connector uses it, and with raw fetch where the SDK would not send such a request.
 */
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConflictError, ConnectorClient, createPushHandler, runPullLoop, type ProviderSendInput } from '../../../src/index.js';
import { startTestService, type CreatedIntegration, type TestService } from '../../../src/testing/index.js';
import { png } from '../../../../test/unit/fixtures/image-bytes';

// A whole 1x1 PNG: the test service checks images with the service's rules, which refuse a truncated header.
const PNG = Uint8Array.from(png(1, 1));

let clock = Date.parse('2026-01-01T00:00:00Z');
let service: TestService;
let integration: CreatedIntegration;
let client: ConnectorClient;

beforeEach(async () => {
  clock = Date.parse('2026-01-01T00:00:00Z');
  service = await startTestService({ now: () => clock });
  integration = await service.createIntegration({ attachments: true });
  client = new ConnectorClient({ integrationKey: integration.key, baseUrl: service.baseUrl, retry: 0 });
});
afterEach(() => service.close());

const post = (path: string, body: unknown, init: { key?: string | null; contentType?: string; method?: string } = {}) =>
  fetch(`${service.baseUrl}${path}`, {
    method: init.method ?? 'POST',
    headers: { ...(init.key === null ? {} : { authorization: `Bearer ${init.key ?? integration.key}` }), 'content-type': init.contentType ?? 'application/json' },
    ...(init.method === 'GET' ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });

async function conversation(text = 'Hello') {
  const sent = await client.messages.send({ externalConversationId: `chat-${Math.random()}`, sender: { externalId: 'cust-1', displayName: 'Ada' }, text });
  return sent.conversationId;
}

test('starts in milliseconds and serves on loopback', async () => {
  const started = performance.now();
  const other = await startTestService();
  const ms = performance.now() - started;
  await other.close();
  expect(other.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  expect(ms).toBeLessThan(500);
});

describe('the common pipeline', () => {
  test('405 for a non-POST (with Allow), 401 invalid_key, 415, 413, invalid_json, invalid_request naming the field; X-Request-Id on each', async () => {
    const get = await post('/v1/deliveries/claim', null, { method: 'GET' });
    expect([get.status, get.headers.get('allow'), ((await get.json()) as { error: { code: string } }).error.code]).toEqual([405, 'POST', 'method_not_allowed']);
    const noKey = await post('/v1/deliveries/claim', {}, { key: null });
    expect([noKey.status, ((await noKey.json()) as { error: { code: string } }).error.code]).toEqual([401, 'invalid_key']);
    const unknownKey = await post('/v1/deliveries/claim', {}, { key: `sdk_test_${'A'.repeat(43)}` });
    expect(unknownKey.status).toBe(401);
    const text = await post('/v1/deliveries/claim', 'x', { contentType: 'text/plain' });
    expect([text.status, ((await text.json()) as { error: { code: string } }).error.code]).toEqual([415, 'unsupported_media_type']);
    const big = await post('/v1/deliveries/claim', JSON.stringify({ deliveryId: 'x'.repeat(70_000) }));
    expect(big.status).toBe(413);
    const bad = await post('/v1/deliveries/claim', '{"deliveryId":');
    expect([bad.status, ((await bad.json()) as { error: { code: string } }).error.code]).toEqual([400, 'invalid_json']);
    const invalid = await post('/v1/deliveries/claim', { deliveryId: 'd_1', requestId: 'x'.repeat(129), extra: 1 });
    const envelope = (await invalid.json()) as { error: { code: string; message: string } };
    expect(invalid.status).toBe(400);
    expect(envelope.error.code).toBe('invalid_request');
    expect(envelope.error.message).toContain('requestId: must be at most 128 characters');
    expect(envelope.error.message).toContain("unknown property 'extra'");
    for (const r of [get, noKey, text, big, bad, invalid]) expect(r.headers.get('x-request-id')).toMatch(/^req_/);
    const missing = await post('/v1/deliveries/claim', { deliveryId: 'd_nope', requestId: 'r1' });
    expect([missing.status, ((await missing.json()) as { error: { code: string } }).error.code]).toEqual([404, 'delivery_not_found']);
  });

  test('string lengths are counted in code points, as the service counts them', async () => {
    const emoji = '😀'.repeat(128); // 256 UTF-16 units, 128 code points: allowed
    const ok = await post('/v1/deliveries/claim', { deliveryId: emoji, requestId: 'r1' });
    expect(ok.status).toBe(404);
    const tooLong = await post('/v1/deliveries/claim', { deliveryId: `${emoji}😀`, requestId: 'r1' });
    expect(tooLong.status).toBe(400);
  });
});

describe('messages', () => {
  test('201 new, 200 duplicate, 409 conflict by eventId, RateLimit-* headers, empty_message', async () => {
    const body = { eventId: 'evt-1', externalConversationId: 'chat-1', sender: { externalId: 'cust-1' }, message: { text: 'Hi' } };
    const first = await post('/v1/messages', body);
    expect(first.status).toBe(201);
    expect(first.headers.get('ratelimit-limit')).toBe('1200');
    expect(first.headers.get('ratelimit-remaining')).toBe('1199');
    const created = (await first.json()) as { conversationId: string; messageId: string; duplicate: boolean };
    expect(created).toEqual({ conversationId: expect.stringMatching(/^c_/), messageId: expect.stringMatching(/^m_/), duplicate: false });
    const again = await post('/v1/messages', { ...body, sender: { externalId: 'cust-1', kind: 'customer' } });
    expect([again.status, await again.json()]).toEqual([200, { ...created, duplicate: true }]);
    const conflict = await post('/v1/messages', { ...body, message: { text: 'Other' } });
    expect([conflict.status, ((await conflict.json()) as { error: { code: string } }).error.code]).toEqual([409, 'event_conflict']);
    const empty = await post('/v1/messages', { ...body, eventId: 'evt-2', message: { text: '' } });
    expect([empty.status, ((await empty.json()) as { error: { code: string } }).error.code]).toEqual([400, 'empty_message']);
    expect(service.messages({ integrationId: integration.integrationId })).toHaveLength(1);
  });

  test('multipart with images (the SDK sends it), a non-image refused, the rate limit as 429 with Retry-After', async () => {
    const sent = await client.messages.send({ externalConversationId: 'chat-img', sender: { externalId: 'c' }, images: [{ data: PNG, contentType: 'image/png' }, { data: PNG }] });
    expect(sent.duplicate).toBe(false);
    expect(service.messages({ conversationId: sent.conversationId })[0]?.images).toEqual([
      { part: 'images[0]', contentType: 'image/png', width: 1, height: 1, bytes: PNG.length, sha256: createHash('sha256').update(PNG).digest('hex'), status: 'stored' },
      { part: 'images[1]', contentType: 'image/png', width: 1, height: 1, bytes: PNG.length, sha256: createHash('sha256').update(PNG).digest('hex'), status: 'stored' },
    ]);
    await expect(client.messages.send({ externalConversationId: 'chat-img', sender: { externalId: 'c' }, images: [{ data: new Uint8Array([1, 2, 3]) }] })).rejects.toMatchObject({ status: 400, code: 'unsupported_image' });

    const limited = await startTestService({ messagesPerMinute: 1, now: () => clock });
    try {
      const i = await limited.createIntegration();
      const send = (eventId: string) =>
        fetch(`${limited.baseUrl}/v1/messages`, { method: 'POST', headers: { authorization: `Bearer ${i.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ eventId, externalConversationId: 'c', sender: { externalId: 's' }, message: { text: 't' } }) });
      expect((await send('e1')).status).toBe(201);
      const refused = await send('e2');
      expect([refused.status, refused.headers.get('retry-after'), refused.headers.get('ratelimit-remaining')]).toEqual([429, '60', '0']);
    } finally {
      await limited.close();
    }
  });
});

describe('deliveries', () => {
  test('claim, start, complete, receipt through the SDK; per-conversation order; start answers sent once sent; 409s', async () => {
    const conversationId = await conversation();
    const first = service.reply({ conversationId, text: 'First' });
    const second = service.reply({ conversationId, text: 'Second' });
    expect(await client.deliveries.claim({ deliveryId: second.deliveryId, requestId: 'r2' })).toEqual({ status: 'skip', reason: 'waiting_for_previous' });
    const claim = await client.deliveries.claim({ deliveryId: first.deliveryId, requestId: 'r1' });
    if (claim.status !== 'ready') throw new Error('not ready');
    expect(claim.message).toEqual({ text: 'First', recipient: { externalConversationId: expect.stringMatching(/^chat-/), externalCustomerId: 'cust-1' } });
    expect(claim.leaseExpiresAt).toBe(clock + 120_000);
    expect(await client.deliveries.claim({ deliveryId: first.deliveryId, requestId: 'r1' })).toEqual(claim);
    await expect(client.deliveries.claim({ deliveryId: first.deliveryId, requestId: 'other' })).rejects.toMatchObject({ status: 503, code: 'lease_busy' });
    expect(await client.deliveries.start({ deliveryId: first.deliveryId, leaseId: claim.leaseId })).toEqual({ status: 'sending' });
    await client.deliveries.complete({ deliveryId: first.deliveryId, leaseId: claim.leaseId, providerMessageIds: ['p-1'] });
    expect(await client.deliveries.start({ deliveryId: first.deliveryId, leaseId: claim.leaseId })).toEqual({ status: 'sent' });
    await expect(client.deliveries.complete({ deliveryId: first.deliveryId, leaseId: claim.leaseId, providerMessageIds: ['p-2'] })).rejects.toMatchObject({ code: 'conflicting_completion' });
    await expect(client.deliveries.start({ deliveryId: first.deliveryId, leaseId: 'l_never' })).rejects.toBeInstanceOf(ConflictError);
    await client.deliveries.receipt({ deliveryId: first.deliveryId, status: 'delivered', providerMessageId: 'p-1' });
    // The first is sent: the second is released and claimable.
    const next = await client.deliveries.claim({ deliveryId: second.deliveryId, requestId: 'r3' });
    expect(next.status).toBe('ready');
    const [view] = service.deliveries({ conversationId });
    expect(view).toMatchObject({ deliveryId: first.deliveryId, status: 'sent', providerMessageIds: ['p-1'], receipts: [{ status: 'delivered', providerMessageId: 'p-1', at: clock }] });
    expect(view?.attempts.map((a) => a.event)).toEqual(['claimed', 'started', 'sent']);
  });

  test('fail: retry re-queues with the backoff (503 retry_delayed until then), failed and unknown end it, a late complete resolves unknown', async () => {
    const conversationId = await conversation();
    const { deliveryId } = service.reply({ conversationId, text: 'Hi' });
    const claim = await client.deliveries.claim({ deliveryId, requestId: 'r1' });
    if (claim.status !== 'ready') throw new Error('not ready');
    expect(await client.deliveries.fail({ deliveryId, leaseId: claim.leaseId, outcome: 'retry', code: 'provider_busy', retryAfterMs: 10_000 })).toEqual({ status: 'queued' });
    const delayed = await post('/v1/deliveries/claim', { deliveryId, requestId: 'r2' });
    expect([delayed.status, delayed.headers.get('retry-after')]).toEqual([503, '10']);
    clock += 10_000;
    const again = await client.deliveries.claim({ deliveryId, requestId: 'r2' });
    if (again.status !== 'ready') throw new Error('not ready');
    await client.deliveries.start({ deliveryId, leaseId: again.leaseId });
    expect(await client.deliveries.fail({ deliveryId, leaseId: again.leaseId, outcome: 'unknown', code: 'provider_timeout' })).toEqual({ status: 'unknown' });
    expect(await client.deliveries.complete({ deliveryId, leaseId: again.leaseId, providerMessageIds: ['late'] })).toEqual({ status: 'sent' });
    expect(service.deliveries({ conversationId })[0]).toMatchObject({ status: 'sent', providerMessageIds: ['late'] });
  });

  test('extend: 120 s more, never past 15 minutes from the claim (lease_limit_reached)', async () => {
    const conversationId = await conversation();
    const { deliveryId } = service.reply({ conversationId, text: 'Hi' });
    const claim = await client.deliveries.claim({ deliveryId, requestId: 'r1' });
    if (claim.status !== 'ready') throw new Error('not ready');
    const claimedAt = clock;
    for (let i = 0; i < 7; i++) {
      clock += 110_000;
      await client.deliveries.extend({ deliveryId, leaseId: claim.leaseId });
    }
    clock += 110_000;
    expect((await client.deliveries.extend({ deliveryId, leaseId: claim.leaseId })).leaseExpiresAt).toBe(claimedAt + 15 * 60_000);
    await expect(client.deliveries.extend({ deliveryId, leaseId: claim.leaseId })).rejects.toMatchObject({ code: 'lease_limit_reached' });
  });

  test('attachments: the claim lists them, the fetch has its headers, processDelivery checks and sends them; parts recorded', async () => {
    const conversationId = await conversation();
    const { deliveryId } = service.reply({ conversationId, text: 'See file', files: [{ fileName: 'a.txt', contentType: 'text/plain', data: Buffer.from('hello') }] });
    const claim = await client.deliveries.claim({ deliveryId, requestId: 'r1' });
    if (claim.status !== 'ready' || 'kind' in claim) throw new Error('not a ready reply');
    const attachment = claim.message.attachments?.[0];
    if (attachment === undefined) throw new Error('no attachment');
    const raw = await post('/v1/deliveries/attachment', { deliveryId, leaseId: claim.leaseId, attachmentId: attachment.attachmentId });
    expect(raw.status).toBe(200);
    expect(raw.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(raw.headers.get('etag')).toBe(`"${attachment.sha256}"`);
    expect(raw.headers.get('content-length')).toBe('5');
    expect(raw.headers.get('content-disposition')).toContain('filename="a.txt"');
    expect(await raw.text()).toBe('hello');
    const wrong = await post('/v1/deliveries/attachment', { deliveryId, leaseId: claim.leaseId, attachmentId: 'a_nope' });
    expect(wrong.status).toBe(404);
    clock += 120_000; // the lease ran out: the fetch is refused
    const late = await post('/v1/deliveries/attachment', { deliveryId, leaseId: claim.leaseId, attachmentId: attachment.attachmentId });
    expect(((await late.json()) as { error: { code: string } }).error.code).toBe('lease_lost');

    const got: string[] = [];
    const result = await client.processDelivery(deliveryId, async (input: ProviderSendInput) => {
      for (const a of input.attachments) got.push(Buffer.from((await a.fetch()).bytes).toString());
      return { providerMessageIds: ['p'], parts: [{ part: 'text', status: 'sent' }, { part: input.attachments[0]?.attachmentId ?? '', status: 'sent' }] };
    });
    expect(result.kind).toBe('sent');
    expect(got).toEqual(['hello']);
    expect(service.deliveries({ conversationId })[0]).toMatchObject({ parts: [{ part: 'text', status: 'sent' }, { part: attachment.attachmentId, status: 'sent' }], fetchedAttachments: [attachment.attachmentId] });
  });

  test('catch-up list: claimable deliveries oldest first, paged behind a cursor', async () => {
    const ids = [];
    for (let i = 0; i < 3; i++) {
      ids.push(service.reply({ conversationId: await conversation(), text: `r${i}` }).deliveryId);
      clock += 1;
    }
    const first = await post('/v1/deliveries/pending', { limit: 2 });
    const page = (await first.json()) as { deliveries: { deliveryId: string }[]; nextCursor: string };
    expect(page.deliveries.map((d) => d.deliveryId)).toEqual(ids.slice(0, 2));
    const second = (await (await post('/v1/deliveries/pending', { limit: 2, cursor: page.nextCursor })).json()) as { deliveries: { deliveryId: string }[]; nextCursor: null };
    expect(second).toEqual({ deliveries: [expect.objectContaining({ deliveryId: ids[2] })], nextCursor: null });
    expect((await post('/v1/deliveries/pending', { cursor: 'bogus' })).status).toBe(400);
  });
});

describe('the operator side and faults', () => {
  test('metadata and sentAt on the service\'s rules: merge, the claim\'s conversation, 5 minutes ahead of the fake clock, a shared conversation\'s metadata erased', async () => {
    const chat = { externalConversationId: 'chat-meta' };
    const first = await client.messages.send({ ...chat, sender: { externalId: 'cust-1' }, text: 'a', metadata: { orderId: 'A-1', locale: 'pl' }, sentAt: clock - 1000 });
    await client.messages.send({ ...chat, sender: { externalId: 'cust-2' }, text: 'b', metadata: { locale: null, plan: 'gold' } });
    expect(service.messages({ conversationId: first.conversationId }).map((m) => m.sentAt)).toEqual([clock - 1000, clock]);
    const { deliveryId } = service.reply({ conversationId: first.conversationId, text: 'Hi' });
    const claim = await client.deliveries.claim({ deliveryId, requestId: 'r1' });
    expect(claim).toMatchObject({ status: 'ready', conversation: { metadata: { orderId: 'A-1', plan: 'gold' } } });
    // Five minutes ahead is the limit; a minute of the fake clock later the same time is fine.
    const ahead = clock + 5 * 60_000 + 1;
    await expect(client.messages.send({ ...chat, sender: { externalId: 'cust-1' }, text: 'c', sentAt: ahead })).rejects.toMatchObject({ status: 400, code: 'invalid_request' });
    clock += 60_000;
    await expect(client.messages.send({ ...chat, sender: { externalId: 'cust-1' }, text: 'c', sentAt: ahead })).resolves.toMatchObject({ duplicate: false });
    // The merge past 16 keys is refused, nothing stored.
    const many = Object.fromEntries(Array.from({ length: 15 }, (_, i) => [`k${i}`, 'v']));
    await expect(client.messages.send({ ...chat, sender: { externalId: 'cust-1' }, text: 'd', metadata: many })).rejects.toMatchObject({ status: 400, code: 'invalid_request' });
    expect(service.messages({ conversationId: first.conversationId })).toHaveLength(3);
    // An erasure of one of two customers: the shared conversation stays, its metadata goes.
    service.erase(integration.integrationId, 'cust-1');
    const next = service.reply({ conversationId: first.conversationId, text: 'Again' });
    const after = await client.deliveries.claim({ deliveryId: next.deliveryId, requestId: 'r2' });
    expect(after.status).toBe('ready');
    expect(after).not.toHaveProperty('conversation');
  });

  test('cancel before start, too_late after; resend creates a new delivery; erase fails unfinished ones and lists an erasure to acknowledge', async () => {
    const conversationId = await conversation();
    const a = service.reply({ conversationId, text: 'A' });
    expect(service.cancel(a.deliveryId)).toBe('cancelled');
    expect(service.deliveries({ conversationId })[0]).toMatchObject({ status: 'failed', cancelled: true, failure: { code: 'cancelled' } });
    const again = service.resend(a.deliveryId);
    expect(again.deliveryId).not.toBe(a.deliveryId);
    const claim = await client.deliveries.claim({ deliveryId: again.deliveryId, requestId: 'r' });
    if (claim.status !== 'ready') throw new Error('not ready');
    await client.deliveries.start({ deliveryId: again.deliveryId, leaseId: claim.leaseId });
    expect(service.cancel(again.deliveryId)).toBe('too_late');

    const pending = service.reply({ conversationId, text: 'B' });
    const { erasureId } = service.erase(integration.integrationId, 'cust-1');
    expect(service.deliveries({ conversationId }).find((d) => d.deliveryId === pending.deliveryId)).toMatchObject({ status: 'failed', failure: { code: 'erased' } });
    expect(service.messages({ conversationId })).toEqual([]);
    const page = await client.erasures.pending();
    expect(page.erasures).toEqual([expect.objectContaining({ erasureId, externalCustomerId: 'cust-1' })]);
    expect(service.violations({ final: true }).map((v) => v.rule)).toContain('erasure_not_acknowledged');
    await client.erasures.ack({ erasureId });
    expect(service.erasures(integration.integrationId)).toEqual([
      {
        erasureId,
        integrationId: integration.integrationId,
        externalCustomerId: 'cust-1',
        externalConversationIds: [expect.stringMatching(/^chat-/)],
        requestedAt: clock,
        // The customer was the conversation's only customer: it goes, with their message and the replies A (and its resend) and B.
        counts: { conversations: 1, messages: 3 },
        acknowledged: true,
        acknowledgedAt: clock,
      },
    ]);
    expect((await post('/v1/erasures/ack', { erasureId: 'x_nope' })).status).toBe(404);
  });

  test('inject answers the fault instead of the operation, times times, with Retry-After; calls() records it', async () => {
    service.inject('claimDelivery', { status: 503, retryAfterSeconds: 7, times: 2 });
    service.inject('sendMessage', { status: 429, code: 'rate_limited' });
    const conversationId = await conversation().catch((e: unknown) => e);
    expect(conversationId).toMatchObject({ status: 429, code: 'rate_limited' });
    const real = await conversation();
    const { deliveryId } = service.reply({ conversationId: real, text: 'Hi' });
    for (let i = 0; i < 2; i++) {
      const r = await post('/v1/deliveries/claim', { deliveryId, requestId: 'r' });
      expect([r.status, r.headers.get('retry-after'), ((await r.json()) as { error: { code: string } }).error.code]).toEqual([503, '7', 'temporarily_unavailable']);
    }
    expect((await post('/v1/deliveries/claim', { deliveryId, requestId: 'r' })).status).toBe(200);
    const claims = service.calls({ operationId: 'claimDelivery' });
    expect(claims.map((c) => [c.response.status, c.injected])).toEqual([[503, true], [503, true], [200, false]]);
    expect(claims[0]).toMatchObject({ integrationId: integration.integrationId, method: 'POST', path: '/v1/deliveries/claim', request: { body: { deliveryId, requestId: 'r' } } });
    expect(claims[0]?.request.headers.authorization).not.toContain(integration.key);
  });

  test('expireLease: leased -> queued and notified again; sending -> unknown lease_expired_after_start, which releases the next', async () => {
    const conversationId = await conversation();
    const first = service.reply({ conversationId, text: '1' });
    const second = service.reply({ conversationId, text: '2' });
    const claim = await client.deliveries.claim({ deliveryId: first.deliveryId, requestId: 'r1' });
    if (claim.status !== 'ready') throw new Error('not ready');
    service.expireLease(first.deliveryId);
    expect(service.deliveries({ conversationId })[0]?.status).toBe('queued');
    await expect(client.deliveries.start({ deliveryId: first.deliveryId, leaseId: claim.leaseId })).rejects.toMatchObject({ code: 'lease_lost' });
    const claim2 = await client.deliveries.claim({ deliveryId: first.deliveryId, requestId: 'r2' });
    if (claim2.status !== 'ready') throw new Error('not ready');
    await client.deliveries.start({ deliveryId: first.deliveryId, leaseId: claim2.leaseId });
    service.expireLease(first.deliveryId);
    expect(service.deliveries({ conversationId })[0]).toMatchObject({ status: 'unknown', failure: { code: 'lease_expired_after_start' } });
    expect((await client.deliveries.claim({ deliveryId: second.deliveryId, requestId: 'r3' })).status).toBe('ready');
  });
});

describe('notifications', () => {
  test('subscription() drives runPullLoop; notifyAgain publishes a duplicate the loop acks without a second claim (it finished that delivery)', async () => {
    const subscription = service.subscription(integration.integrationId);
    const sent: string[] = [];
    const loop = runPullLoop(client, subscription, (input) => {
      sent.push(input.text);
      return [`p-${sent.length}`];
    }, { catchUpOnStart: false });
    try {
      const conversationId = await conversation();
      const { deliveryId } = service.reply({ conversationId, text: 'Pulled' });
      await service.waitFor(() => service.deliveries({ conversationId })[0]?.status === 'sent' && subscription.outstanding === 0);
      service.notifyAgain(deliveryId);
      await service.waitFor(() => subscription.outstanding === 0);
      // Acknowledged from the loop's memory of the deliveries it finished (REMEMBERED_FINISHED_DELIVERIES).
      expect(service.calls({ operationId: 'claimDelivery' })).toHaveLength(1);
      expect(sent).toEqual(['Pulled']);
      expect(service.violations()).toEqual([]);
    } finally {
      await loop.stop();
    }
  });

  test('subscription() and pushTo() without an integration id, or with an unknown one, throw at once instead of waiting forever', () => {
    expect(() => service.subscription('i_nobody')).toThrow(/subscription\(integrationId\): no integration 'i_nobody' \(createIntegration\(\) returns its integrationId\)/);
    expect(() => service.pushTo('', 'http://127.0.0.1:1/')).toThrow(/pushTo\(integrationId\): no integration ''/);
    expect(() => (service.subscription as (id?: string) => unknown)()).toThrow(/no integration undefined/);
  });

  test('pushTo() posts the Pub/Sub push format to createPushHandler, redelivering after a non-2xx', async () => {
    let refuse = 1;
    const handler = createPushHandler(client, (input) => [`push-${input.deliveryId}`], { auth: 'none' });
    const server: Server = createServer((req, res) => {
      if (refuse-- > 0) {
        req.resume();
        res.writeHead(503);
        res.end();
        return;
      }
      void handler(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const stop = service.pushTo(integration.integrationId, `http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    try {
      const conversationId = await conversation();
      const { deliveryId } = service.reply({ conversationId, text: 'Pushed' });
      await service.waitFor(() => service.deliveries({ conversationId })[0]?.status === 'sent');
      expect(service.deliveries({ conversationId })[0]?.providerMessageIds).toEqual([`push-${deliveryId}`]);
    } finally {
      stop();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  test('corruptAttachment: the download is cut off, processDelivery never sends the wrong file', async () => {
    const conversationId = await conversation();
    const { deliveryId } = service.reply({ conversationId, text: '', files: [{ fileName: 'x.png', contentType: 'image/png', data: PNG }] });
    service.corruptAttachment(deliveryId);
    let fetched = false;
    const result = await client.processDelivery(deliveryId, async (input) => {
      for (const a of input.attachments) await a.fetch();
      fetched = true;
      return ['never'];
    });
    expect(fetched).toBe(false);
    expect(result.kind).not.toBe('sent');
    const fetches = service.calls({ operationId: 'getDeliveryAttachment' });
    expect(fetches.length).toBeGreaterThan(0);
    expect(fetches[0]?.response.body).toEqual({ bytes: PNG.length - 1, cutOff: true });
    expect(service.deliveries({ conversationId })[0]?.fetchedAttachments).toEqual([]);
  });
});
