/**
 * Operations (docs/operations.md), through real HTTP, the real triggers, outbox and the Pub/Sub
 * emulator, and the log lines the functions emulator printed (EMULATOR_LOG_FILE, written by
 * scripts/test.mjs):
 *  - one reply's trace id, followed from its mirror through the notification's `traceparent`
 *    attribute, the SDK's calls (processDelivery) and its events, to the service's log lines;
 *  - a malformed `traceparent` is ignored (a new trace), never a 400;
 *  - `conversation.blocked` once per episode, `delivery.exhausted`, `integration.unhealthy` and
 *    `integration.recovered` on the workspace's operations topic, and a missing topic recorded on
 *    the settings document.
 *
 * Time is simulated as in deliveries/liveness.test.ts: a fixture moves a delivery's claimable
 * period into the past (record, schedule and check document), then the sweeper runs in-process.
 *
 * @serial runs the global sweeper on deliveries it rewound (blocked episodes, exhaustion); another suite's sweep would re-notify or fail them out of its order, and its sweeps touch others' due leases
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ConnectorClient, parsePulledNotification, type DeliveryEvent } from '../../../sdk/src/index';
import { sweep } from '../../../functions/src/deliveries/sweep';
import { integrationHealthRef, rollUpIntegration } from '../../../functions/src/deliveries/health-rollup';
import { adminDb, apiBaseUrl, createTestIntegration, postJson, projectId } from '../helpers/stack';
import { claimReady, type ConversationSetup, deliveryDocRef, deliveryTestFile, eventually, expectOk, expectSent, listenTo, op, pubsubClient, sleep, waitForMirror, writeReply } from '../helpers/deliveries';

const MIN = 60_000;
const file = deliveryTestFile();
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/;

interface Received {
  data: Record<string, unknown>;
  attributes: Record<string, string>;
}

/** A topic and subscription that keep each message's attributes (the shared helper keeps the data only). */
async function attributeTopic(): Promise<{ topicPath: string; received: Received[]; close(): Promise<void> }> {
  const name = `ops-${randomUUID()}`;
  const [topic] = await pubsubClient().createTopic(name);
  const [subscription] = await topic.createSubscription(`${name}-sub`, { ackDeadlineSeconds: 10 });
  const received: Received[] = [];
  const listening = listenTo(subscription, (message) => {
    received.push({ data: JSON.parse(message.data.toString('utf8')) as Record<string, unknown>, attributes: { ...message.attributes } });
    message.ack();
  });
  return {
    topicPath: `projects/${projectId()}/topics/${name}`,
    received,
    close: () => listening.close(),
  };
}

/** The structured JSON lines the functions printed so far (`>  {...}` in the emulator's output). */
function logLines(): Array<Record<string, unknown>> {
  const path = process.env.EMULATOR_LOG_FILE;
  if (path === undefined) throw new Error('EMULATOR_LOG_FILE is not set (run through scripts/test.mjs)');
  return readFileSync(path, 'utf8')
    .split('\n')
    .flatMap((line) => {
      const start = line.indexOf('{');
      if (!line.trimStart().startsWith('>') || start < 0) return [];
      try {
        return [JSON.parse(line.slice(start)) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
}

const traceField = (traceId: string) => `projects/${projectId()}/traces/${traceId}`;

/** Waits until the log has lines matching every predicate; returns them. */
async function waitForLogLines(what: string, ...predicates: Array<(line: Record<string, unknown>) => boolean>): Promise<Array<Record<string, unknown>>> {
  return eventually(async () => {
    const lines = logLines();
    const found = predicates.map((p) => lines.find(p));
    return found.every((l) => l !== undefined) ? (found as Array<Record<string, unknown>>) : undefined;
  }, what, 20_000);
}

/** Moves a claimable delivery's claimable period `byMs` into the past (record, schedule, check document). */
async function rewindClaimable(workspaceId: string, deliveryId: string, byMs: number): Promise<number> {
  const checkRef = adminDb().collection('deliveryChecks').doc(deliveryId);
  return adminDb().runTransaction(async (tx) => {
    const ref = deliveryDocRef(workspaceId, deliveryId);
    const d = (await tx.get(ref)).data();
    const liveness = d?.liveness as { checkAt: number; intervalMs: number; expiresAt: number } | undefined;
    if (d?.pendingAt === undefined || liveness === undefined) throw new Error(`${deliveryId} is not claimable`);
    const pendingAt = (d.pendingAt as number) - byMs;
    const shifted = { ...liveness, checkAt: liveness.checkAt - byMs, expiresAt: liveness.expiresAt - byMs };
    tx.update(ref, { pendingAt, liveness: shifted });
    tx.update(checkRef, { dueAt: shifted.checkAt, pendingAt });
    return pendingAt;
  });
}

async function setOperationsTopic(workspaceId: string, topic: string): Promise<void> {
  await adminDb().doc(`workspaces/${workspaceId}/settings/operations`).set({ topic });
}

async function replyDelivery(setup: ConversationSetup, text: string): Promise<{ messageId: string; deliveryId: string }> {
  const messageId = await writeReply(setup, text);
  const mirror = await waitForMirror(setup, messageId);
  return { messageId, deliveryId: mirror.deliveryId as string };
}

const eventsOf = (topic: { received: Received[] }, type: string, filter: (e: Record<string, unknown>) => boolean = () => true) =>
  topic.received.filter((m) => m.attributes.type === type && m.data.type === type && filter(m.data));

test('one reply`s trace id: its mirror, every notification`s traceparent, the SDK`s calls and events, and the service`s log lines', async () => {
  const replies = await attributeTopic();
  file.track(replies);
  const setup = await file.ownConversation({ integration: await createTestIntegration({ topic: replies.topicPath }) });

  const messageId = await writeReply(setup, 'Traced reply');
  const message = await eventually(async () => replies.received.find((m) => m.data.messageId === messageId), 'the traced notification', 20_000);
  const match = TRACEPARENT.exec(message.attributes.traceparent ?? '');
  expect(match).not.toBeNull();
  const traceId = match?.[1] as string;
  const deliveryId = message.data.deliveryId as string;
  const mirror = await waitForMirror(setup, messageId);
  expect(mirror.traceId).toBe(traceId);
  expect((await deliveryDocRef(setup.integration.workspaceId, deliveryId).get()).get('traceId')).toBe(traceId);

  // The connector: the SDK reads the attribute and sends it back on claim, start and complete.
  const client = new ConnectorClient({ integrationKey: setup.integration.key, baseUrl: apiBaseUrl() });
  const events: DeliveryEvent[] = [];
  const notification = parsePulledNotification({ data: Buffer.from(JSON.stringify(message.data)), attributes: message.attributes });
  const result = await client.processDelivery(notification, () => ['p-traced'], { onEvent: (e) => events.push(e) });
  expect(result.kind).toBe('sent');
  expect(events.map((e) => e.type)).toEqual(['claimed', 'started', 'completed']);
  expect(events.every((e) => e.traceId === traceId)).toBe(true);

  // The service's lines about the delivery: the notification's publish and each connector call.
  const trace = traceField(traceId);
  const [published, claim, start, complete] = await waitForLogLines(
    'the traced log lines',
    (l) => l.message === 'notification.published' && l.deliveryId === deliveryId,
    (l) => l.message === 'request' && l.endpoint === 'POST /v1/deliveries/claim' && l.deliveryId === deliveryId,
    (l) => l.message === 'request' && l.endpoint === 'POST /v1/deliveries/start' && l.deliveryId === deliveryId,
    (l) => l.message === 'request' && l.endpoint === 'POST /v1/deliveries/complete' && l.deliveryId === deliveryId,
  );
  for (const line of [published, claim, start, complete]) expect(line?.['logging.googleapis.com/trace']).toBe(trace);
  // The notification's span is the parent the connector named.
  expect(published?.['logging.googleapis.com/spanId']).toBe(match?.[2]);
  expect(claim?.parentSpanId).toBe(match?.[2]);
  expect(claim?.callerTraceId).toBe(traceId);
  expect(typeof claim?.claimLatencyMs).toBe('number');
  expect(logLines().filter((l) => l.deliveryId === deliveryId).every((l) => l['logging.googleapis.com/trace'] === trace)).toBe(true);
});

test('a malformed traceparent is ignored (a new trace), never a 400; a valid one on POST /v1/messages names the request`s trace', async () => {
  const setup = await file.ownConversation();
  const send = (traceparent: string) =>
    postJson(
      '/v1/messages',
      { eventId: randomUUID(), externalConversationId: setup.externalConversationId, sender: { externalId: setup.customerId }, message: { text: 'traced' } },
      { key: setup.integration.key, headers: { traceparent } },
    );
  const bad = await send('00-not-a-trace-01');
  expect(bad.status).toBe(201);
  const valid = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
  const good = await send(valid);
  expect(good.status).toBe(201);
  const [badLine, goodLine] = await waitForLogLines(
    'the request lines of both messages',
    (l) => l.message === 'request' && l.requestId === bad.headers.get('x-request-id'),
    (l) => l.message === 'request' && l.requestId === good.headers.get('x-request-id'),
  );
  expect(badLine?.traceparentIgnored).toBe(true);
  expect(badLine?.['logging.googleapis.com/trace']).toMatch(new RegExp(`^projects/${projectId()}/traces/[0-9a-f]{32}$`));
  expect(goodLine?.['logging.googleapis.com/trace']).toBe(traceField('0af7651916cd43dd8448eb211c80319c'));
  expect(goodLine?.parentSpanId).toBe('b7ad6b7169203331');

  // On a delivery operation: ignored too; the line names the delivery's own trace.
  const { deliveryId } = await replyDelivery(setup, 'Claimed with a bad traceparent');
  const res = await postJson('/v1/deliveries/claim', { deliveryId, requestId: randomUUID() }, { key: setup.integration.key, headers: { traceparent: 'ff-garbage' } });
  expect(res.status).toBe(200);
  const traceId = (await deliveryDocRef(setup.integration.workspaceId, deliveryId).get()).get('traceId') as string;
  const [claimLine] = await waitForLogLines('the claim line', (l) => l.message === 'request' && l.requestId === res.headers.get('x-request-id'));
  expect(claimLine?.traceparentIgnored).toBe(true);
  expect(claimLine?.['logging.googleapis.com/trace']).toBe(traceField(traceId));
});

test('conversation.blocked: one event per episode, nothing more until it recovers, then one for the next episode', async () => {
  const ops = await attributeTopic();
  file.track(ops);
  const setup = await file.ownConversation();
  await setOperationsTopic(setup.integration.workspaceId, ops.topicPath);
  const { deliveryId } = await replyDelivery(setup, 'Nobody claims me');
  const forThis = (e: Record<string, unknown>) => e.deliveryId === deliveryId;

  // Claimable for 16 minutes: blocked.
  const pendingAt = await rewindClaimable(setup.integration.workspaceId, deliveryId, 16 * MIN);
  await sweep(adminDb());
  const [event] = await eventually(async () => (eventsOf(ops, 'conversation.blocked', forThis).length > 0 ? eventsOf(ops, 'conversation.blocked', forThis) : undefined), 'conversation.blocked');
  expect(event?.data).toMatchObject({
    eventId: `conversation.blocked:${deliveryId}:${pendingAt}`,
    type: 'conversation.blocked',
    workspaceId: setup.integration.workspaceId,
    integrationId: setup.integration.integrationId,
    conversationId: setup.conversationId,
    deliveryId,
    detail: { claimableSince: new Date(pendingAt).toISOString() },
  });
  expect(event?.attributes).toMatchObject({ type: 'conversation.blocked', eventId: event?.data.eventId });

  // Still blocked, in later minutes (and re-notified meanwhile): no second event.
  await sweep(adminDb());
  await sweep(adminDb());
  // A negative check (no second event for the episode): bounded, a few outbox publish latencies.
  await sleep(3000);
  expect(eventsOf(ops, 'conversation.blocked', forThis)).toHaveLength(1);
  // The health roll-up sees the same: its oldest claimable is an open problem.
  await rollUpIntegration(adminDb(), setup.integration.workspaceId, setup.integration.integrationId, Date.now());
  expect((await integrationHealthRef(adminDb(), setup.integration.workspaceId, setup.integration.integrationId).get()).get('problems')).toEqual([
    expect.objectContaining({ code: 'claimable_too_old', deliveryId }),
  ]);

  // Recovers: a connector claims it, and its retry makes it claimable again (a new episode).
  const claim = await claimReady(setup.integration.key, deliveryId);
  expectOk(await op('fail', setup.integration.key, { deliveryId, leaseId: claim.leaseId, outcome: 'retry', code: 'provider_busy', retryAfterMs: 2000 }), { status: 'queued' });
  // Claimed too early: 503 retry_delayed (a line the 5xx metric counts by code).
  expect((await op('claim', setup.integration.key, { deliveryId, requestId: randomUUID() })).status).toBe(503);
  await sweep(adminDb());
  // A negative check (recovering publishes no event): bounded.
  await sleep(1500);
  expect(eventsOf(ops, 'conversation.blocked', forThis)).toHaveLength(1);
  await eventually(async () => ((await deliveryDocRef(setup.integration.workspaceId, deliveryId).get()).get('pendingAt') !== undefined ? true : undefined), 'claimable again');
  const nextPendingAt = await rewindClaimable(setup.integration.workspaceId, deliveryId, 16 * MIN);
  await sweep(adminDb());
  await eventually(async () => (eventsOf(ops, 'conversation.blocked', forThis).length === 2 ? true : undefined), 'the second episode`s event');
  expect(eventsOf(ops, 'conversation.blocked', forThis)[1]?.data.eventId).toBe(`conversation.blocked:${deliveryId}:${nextPendingAt}`);
});

test('delivery.exhausted when nobody claims a reply before the unclaimed expiry; a missing operations topic is recorded on the settings', async () => {
  const ops = await attributeTopic();
  file.track(ops);
  const setup = await file.ownConversation();
  await setOperationsTopic(setup.integration.workspaceId, ops.topicPath);
  const { deliveryId } = await replyDelivery(setup, 'Expires unclaimed');
  await rewindClaimable(setup.integration.workspaceId, deliveryId, 21 * MIN);
  for (let run = 0; run < 6 && (await deliveryDocRef(setup.integration.workspaceId, deliveryId).get()).get('status') !== 'failed'; run++) await sweep(adminDb());
  const [event] = await eventually(async () => {
    const found = eventsOf(ops, 'delivery.exhausted', (e) => e.deliveryId === deliveryId);
    return found.length > 0 ? found : undefined;
  }, 'delivery.exhausted');
  expect(event?.data).toMatchObject({ eventId: `delivery.exhausted:${deliveryId}`, detail: { code: 'not_claimed' } });

  // A topic that does not exist: recorded on the settings document, the event dropped (not retried forever).
  const missing = `projects/${projectId()}/topics/missing-${randomUUID()}`;
  await setOperationsTopic(setup.integration.workspaceId, missing);
  const second = await replyDelivery(setup, 'Expires too');
  await rewindClaimable(setup.integration.workspaceId, second.deliveryId, 21 * MIN);
  for (let run = 0; run < 6 && (await deliveryDocRef(setup.integration.workspaceId, second.deliveryId).get()).get('status') !== 'failed'; run++) await sweep(adminDb());
  const settings = await eventually(async () => {
    const data = (await adminDb().doc(`workspaces/${setup.integration.workspaceId}/settings/operations`).get()).data();
    return data?.topicStatus === undefined ? undefined : data;
  }, 'the recorded topic status');
  expect(settings).toMatchObject({ topic: missing, topicStatus: 'not_found' });
  await eventually(async () => ((await adminDb().collection('outbox').doc(`ops_delivery.exhausted_${second.deliveryId}`).get()).exists ? undefined : true), 'the dropped event');
});

test('integration.unhealthy when most recent outcomes fail, integration.recovered when they no longer do; the health document lists the problems', async () => {
  const ops = await attributeTopic();
  file.track(ops);
  const setup = await file.ownConversation();
  const { workspaceId, integrationId, key } = setup.integration;
  await setOperationsTopic(workspaceId, ops.topicPath);
  const previous = async () => {
    const since = (await integrationHealthRef(adminDb(), workspaceId, integrationId).get()).get('unhealthySince') as { toMillis(): number } | null | undefined;
    return { unhealthySince: since ? since.toMillis() : null };
  };
  const finish = async (outcome: 'failed' | 'sent') => {
    const { deliveryId } = await replyDelivery(setup, `outcome ${outcome}`);
    const claim = await claimReady(key, deliveryId);
    expectOk(await op('start', key, { deliveryId, leaseId: claim.leaseId }), { status: 'sending' });
    if (outcome === 'sent') expectSent(await op('complete', key, { deliveryId, leaseId: claim.leaseId, providerMessageIds: [`p-${randomUUID()}`] }), deliveryId);
    else expectSent(await op('fail', key, { deliveryId, leaseId: claim.leaseId, outcome: 'failed', code: 'recipient_blocked' }), deliveryId, 'failed');
  };

  await finish('sent');
  await rollUpIntegration(adminDb(), workspaceId, integrationId, Date.now(), await previous());
  expect((await integrationHealthRef(adminDb(), workspaceId, integrationId).get()).get('problems')).toEqual([]);

  for (let i = 0; i < 2; i++) await finish('failed');
  await rollUpIntegration(adminDb(), workspaceId, integrationId, Date.now(), await previous());
  const health = (await integrationHealthRef(adminDb(), workspaceId, integrationId).get()).data();
  expect(health?.problems).toEqual([{ code: 'outcomes_failing', failed: 2, of: 3 }]);
  const [unhealthy] = await eventually(async () => {
    const found = eventsOf(ops, 'integration.unhealthy', (e) => e.integrationId === integrationId);
    return found.length > 0 ? found : undefined;
  }, 'integration.unhealthy');
  expect(unhealthy?.data.detail).toMatchObject({ problems: [{ code: 'outcomes_failing', failed: 2, of: 3 }] });

  // Still unhealthy: the next roll-up sends nothing.
  await rollUpIntegration(adminDb(), workspaceId, integrationId, Date.now(), await previous());
  for (let i = 0; i < 2; i++) await finish('sent');
  await rollUpIntegration(adminDb(), workspaceId, integrationId, Date.now(), await previous());
  const [recovered] = await eventually(async () => {
    const found = eventsOf(ops, 'integration.recovered', (e) => e.integrationId === integrationId);
    return found.length > 0 ? found : undefined;
  }, 'integration.recovered');
  expect(recovered?.data.eventId).toBe(String(unhealthy?.data.eventId).replace('integration.unhealthy', 'integration.recovered'));
  expect(eventsOf(ops, 'integration.unhealthy', (e) => e.integrationId === integrationId)).toHaveLength(1);
  expect((await integrationHealthRef(adminDb(), workspaceId, integrationId).get()).get('unhealthySince')).toBeNull();
});
