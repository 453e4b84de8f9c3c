/**
 * Nothing blocks a conversation (docs/contract.md#liveness), through real HTTP, the real triggers, outbox and
 * Pub/Sub: re-notification of a claimable delivery nobody claims, the unclaimed expiry, the claim
 * that ends a schedule, and the attempt log on the reply.
 *
 * Time is simulated as in expiry.test.ts: a test fixture moves one delivery's claimable period into
 * the past (`pendingAt`, its schedule and its check document, in one transaction), then the
 * every-minute sweeper runs in-process. The test stack sets UNCLAIMED_EXPIRY=20m
 * (scripts/test.mjs), so a schedule is: re-notified at 5 and 15 minutes, `not_claimed` at 20.
 *
 * @serial runs the global sweeper and asserts its global counts (`renotified` 0 when nothing of its own is due); rewound deliveries would be taken by another suite's sweep
 */
import { randomUUID } from 'node:crypto';
import { sweep } from '../../../functions/src/deliveries/sweep';
import { adminDb, createTestIntegration, projectId } from '../helpers/stack';
import {
  attemptEvents as events,
  claimReady,
  deliverFully,
  deliveryDoc,
  deliveryDocRef,
  deliveryTestFile,
  eventually,
  expectOk,
  expectSkip,
  op,
  pubsubClient,
  replyAndNotify,
  replyAndSequence,
  setLeaseExpiry,
  setupConversation,
  waitForMirror,
  waitForNotifications,
  type ConversationSetup,
  type TestTopic,
  listenTo,
} from '../helpers/deliveries';

const MIN = 60_000;
const CONFIGURED_EXPIRY_MS = 20 * MIN;
const file = deliveryTestFile();

const checkRef = (deliveryId: string) => adminDb().collection('deliveryChecks').doc(deliveryId);

/** While leased, the check document is due at the lease's expiry and is not in the catch-up list (no `pendingAt`). */
async function expectLeaseCheck(deliveryId: string, leaseExpiresAt: number): Promise<void> {
  const check = (await checkRef(deliveryId).get()).data();
  expect(check).toMatchObject({ deliveryId, dueAt: leaseExpiresAt });
  expect(check).not.toHaveProperty('pendingAt');
}

/** Moves a claimable delivery's claimable period `byMs` into the past, as if that time had passed. */
async function rewindClaimable(setup: Pick<ConversationSetup, 'integration'>, deliveryId: string, byMs: number): Promise<void> {
  await adminDb().runTransaction(async (tx) => {
    const ref = deliveryDocRef(setup.integration.workspaceId, deliveryId);
    const d = (await tx.get(ref)).data();
    const liveness = d?.liveness as { checkAt: number; intervalMs: number; expiresAt: number } | undefined;
    if (d?.pendingAt === undefined || liveness === undefined) throw new Error(`${deliveryId} is not claimable`);
    const shifted = { ...liveness, checkAt: liveness.checkAt - byMs, expiresAt: liveness.expiresAt - byMs };
    tx.update(ref, { pendingAt: (d.pendingAt as number) - byMs, liveness: shifted });
    tx.update(checkRef(deliveryId), { dueAt: shifted.checkAt });
  });
}

/** Sweeps until `done` holds (each run applies the checks due then; the next check falls due in the next run). */
async function sweepUntil(done: () => Promise<boolean>, maxRuns = 6): Promise<number> {
  for (let run = 1; run <= maxRuns; run++) {
    await sweep(adminDb());
    if (await done()) return run;
  }
  throw new Error(`not done after ${maxRuns} sweeps`);
}

/** A topic that exists with no subscription yet: what is published to it now reaches nobody. */
async function topicWithoutSubscription(): Promise<{ topicPath: string; subscribe(): Promise<TestTopic> }> {
  const name = `t-late-${randomUUID()}`;
  const [topic] = await pubsubClient().createTopic(name);
  const topicPath = `projects/${projectId()}/topics/${name}`;
  return {
    topicPath,
    async subscribe() {
      const [subscription] = await topic.createSubscription(`${name}-sub`, { ackDeadlineSeconds: 10 });
      const received: TestTopic['received'] = [];
      const listening = listenTo(subscription, (m) => {
        received.push(JSON.parse(m.data.toString('utf8')) as TestTopic['received'][number]);
        m.ack();
      });
      return file.track({
        topicPath,
        subscription,
        received,
        pull: () => Promise.resolve([]),
        close: () => listening.close(),
      });
    },
  };
}


test('a reply notified while no subscription existed is delivered by re-notification once the subscription appears; the later reply follows in order', async () => {
  const late = await topicWithoutSubscription();
  const integration = await createTestIntegration({ topic: late.topicPath });
  const setup = await setupConversation({ integration, topic: { topicPath: late.topicPath } as TestTopic });
  const first = await replyAndSequence(setup, 'first, published to nobody');
  const second = await replyAndSequence(setup, 'second, behind it');
  // Both notifications were published (outbox emptied) before anyone listened.
  await eventually(async () => ((await adminDb().collection('outbox').where('deliveryId', 'in', [first.deliveryId, second.deliveryId]).get()).empty ? true : undefined), 'the outbox to publish both');
  const record = await deliveryDoc(setup, first.deliveryId);
  expect(record).toMatchObject({ status: 'queued', head: true, liveness: { checkAt: record.pendingAt + 5 * MIN, intervalMs: 5 * MIN, expiresAt: record.pendingAt + CONFIGURED_EXPIRY_MS } });
  expect((await checkRef(first.deliveryId).get()).data()).toMatchObject({ workspaceId: integration.workspaceId, deliveryId: first.deliveryId, dueAt: record.pendingAt + 5 * MIN });
  // Only the head is claimable, so only it has a schedule.
  expect((await deliveryDoc(setup, second.deliveryId)).liveness).toBeUndefined();
  expect((await checkRef(second.deliveryId).get()).exists).toBe(false);

  const topic = await late.subscribe();
  // Not yet due: a sweep changes nothing.
  expect((await sweep(adminDb())).renotified).toBe(0);
  await rewindClaimable(setup, first.deliveryId, 5 * MIN + 1_000);
  await sweep(adminDb());
  await waitForNotifications(topic, first.deliveryId, 1);
  const renotified = await deliveryDoc(setup, first.deliveryId);
  expect(renotified.liveness).toMatchObject({ intervalMs: 10 * MIN, checkAt: record.pendingAt - 5 * MIN - 1_000 + 15 * MIN });
  expect(events(await waitForMirror(setup, first.messageId, (m) => events(m).includes('renotified')))).toEqual(['renotified']);

  // The connector works it: the schedule ends with the claim. The check document now stands for
  // the lease's expiry, and without `pendingAt` it has left the catch-up list.
  const claim = await claimReady(integration.key, first.deliveryId);
  const leased = await deliveryDoc(setup, first.deliveryId);
  expect(leased.liveness).toBeUndefined();
  await expectLeaseCheck(first.deliveryId, leased.lease.expiresAt);
  expectOk(await op('start', integration.key, { deliveryId: first.deliveryId, leaseId: claim.leaseId }), { status: 'sending' });
  // The second became claimable when the first was sent, and the answer names it (`next`).
  expectOk(await op('complete', integration.key, { deliveryId: first.deliveryId, leaseId: claim.leaseId, providerMessageIds: ['p-first'] }), {
    status: 'sent',
    next: { deliveryId: second.deliveryId, workspaceId: integration.workspaceId, integrationId: integration.integrationId, conversationId: setup.conversationId, messageId: second.messageId },
  });

  // Its own schedule starts then.
  const next = await eventually(async () => {
    const d = await deliveryDoc(setup, second.deliveryId);
    return d.liveness === undefined ? undefined : d;
  }, 'the second reply to become claimable');
  expect(next.liveness.checkAt).toBe(next.pendingAt + 5 * MIN);
  await rewindClaimable(setup, second.deliveryId, 5 * MIN + 1_000);
  await sweep(adminDb());
  await waitForNotifications(topic, second.deliveryId, 1);
  await deliverFully(integration.key, second.deliveryId);
  const mirrors = await Promise.all([first, second].map((r) => waitForMirror(setup, r.messageId, (m) => m.status === 'sent')));
  expect(mirrors.map(events)).toEqual([
    ['renotified', 'claimed', 'started', 'sent'],
    ['renotified', 'claimed', 'started', 'sent'],
  ]);
});

test('a delivery nobody claims is re-notified at 5 and 15 minutes and fails not_claimed at the configured 20; the next reply is released and delivered', async () => {
  const setup = await file.ownConversation();
  const key = setup.integration.key;
  const first = await replyAndNotify(setup, 'nobody will claim this');
  const second = await replyAndSequence(setup, 'this one will be sent');
  await rewindClaimable(setup, first.deliveryId, CONFIGURED_EXPIRY_MS + 1_000);

  const runs = await sweepUntil(async () => (await deliveryDoc(setup, first.deliveryId)).status === 'failed');
  // One check per run: re-notified (5 min), re-notified (15 min), expired (20 min).
  expect(runs).toBe(3);
  await waitForNotifications(setup.topic, first.deliveryId, 3); // created + 2 re-notifications
  const record = await deliveryDoc(setup, first.deliveryId);
  expect(record).toMatchObject({ status: 'failed', error: { outcome: 'failed', code: 'not_claimed' }, attempts: 0 });
  expect(record.liveness).toBeUndefined();
  expect(record.pendingAt).toBeUndefined();
  expect((await checkRef(first.deliveryId).get()).exists).toBe(false);
  const mirror = await waitForMirror(setup, first.messageId, (m) => m.status === 'failed');
  expect(mirror).toMatchObject({ status: 'failed', error: { outcome: 'failed', code: 'not_claimed' } });
  expect(events(mirror)).toEqual(['renotified', 'renotified', 'failed:not_claimed']);
  await expectSkip(key, first.deliveryId, 'already_failed');

  // Released: the second is claimable at once (not waiting_for_previous) and goes out.
  await deliverFully(key, second.deliveryId);
  await waitForMirror(setup, second.messageId, (m) => m.status === 'sent');
});

test('a claim ends the schedule; when the lease expires unused the delivery is claimable again with a fresh schedule from then', async () => {
  const setup = await file.ownConversation();
  const { deliveryId } = await replyAndNotify(setup, 'claimed, then abandoned');
  await claimReady(setup.integration.key, deliveryId);
  await expectLeaseCheck(deliveryId, (await deliveryDoc(setup, deliveryId)).lease.expiresAt);
  await setLeaseExpiry(setup, deliveryId);
  const before = Date.now();
  await sweep(adminDb());
  const requeued = await deliveryDoc(setup, deliveryId);
  expect(requeued.status).toBe('queued');
  expect(requeued.pendingAt).toBeGreaterThanOrEqual(before - 1_000);
  expect(requeued.liveness).toEqual({ checkAt: requeued.pendingAt + 5 * MIN, intervalMs: 5 * MIN, expiresAt: requeued.pendingAt + CONFIGURED_EXPIRY_MS });
  expect((await checkRef(deliveryId).get()).get('dueAt')).toBe(requeued.pendingAt + 5 * MIN);
  expect(requeued.attemptLog.map((a: { event: string }) => a.event)).toEqual(['claimed', 'lease_expired']);
});

test('the attempt log on the reply: a provider rejection, the retry, the send, with times and codes', async () => {
  const setup = await file.ownConversation();
  const key = setup.integration.key;
  const { deliveryId, messageId } = await replyAndNotify(setup, 'rejected once, then sent');
  const first = await claimReady(key, deliveryId);
  expectOk(await op('start', key, { deliveryId, leaseId: first.leaseId }), { status: 'sending' });
  expectOk(await op('fail', key, { deliveryId, leaseId: first.leaseId, outcome: 'retry', code: 'provider_busy', retryAfterMs: 0 }), { status: 'queued' });
  await deliverFully(key, deliveryId);
  const mirror = await waitForMirror(setup, messageId, (m) => m.status === 'sent');
  expect(events(mirror)).toEqual(['claimed', 'started', 'retry:provider_busy', 'claimed', 'started', 'sent']);
  const times = (mirror.attempts as Array<{ at: { toMillis(): number } }>).map((a) => a.at.toMillis());
  expect([...times].sort((a, b) => a - b)).toEqual(times);
  expect(times[0]).toBeGreaterThan(Date.now() - 5 * MIN);
});
