/**
 * Ordering within a conversation (docs/contract.md#ordering): only the oldest unfinished delivery can
 * be leased, `waiting_for_previous` is woken by the predecessor's completion, concurrent claims
 * never yield two leases, and several connectors working one subscription deliver in reply order.
 */
import { randomUUID } from 'node:crypto';
import { claimReady, conversationDeliveries, deliveryDoc, deliveryTestFile, eventually, expectApiError, expectOk, expectSent, expectSkip, type Notification, notificationsFor, op, type ReadyClaim, replyAndNotify, sleep, waitForNotifications, writeReply } from '../helpers/deliveries';
import { warmWorkers } from '../helpers/stack';

// Each test has an integration and topic of its own: its subscription carries only its notifications.
const { ownConversation: conversation } = deliveryTestFile();

test('wake: B claimed before A is skipped waiting_for_previous; completing A re-publishes B, which is then ready', async () => {
  const setup = await conversation();
  const key = setup.integration.key;
  const a = await replyAndNotify(setup, 'A');
  const b = await replyAndNotify(setup, 'B');
  await expectSkip(key, b.deliveryId, 'waiting_for_previous');
  expect(await deliveryDoc(setup, b.deliveryId)).toMatchObject({ status: 'queued', waiting: true, attempts: 0 });
  // Asking again changes nothing (still waiting, no lease).
  await expectSkip(key, b.deliveryId, 'waiting_for_previous');
  expect(notificationsFor(setup.topic, b.deliveryId)).toHaveLength(1);

  const claimA = await claimReady(key, a.deliveryId);
  expectOk(await op('start', key, { deliveryId: a.deliveryId, leaseId: claimA.leaseId }), { status: 'sending' });
  // Still waiting while A is being sent.
  await expectSkip(key, b.deliveryId, 'waiting_for_previous');
  expectSent(await op('complete', key, { deliveryId: a.deliveryId, leaseId: claimA.leaseId, providerMessageIds: ['a'] }), a.deliveryId);

  const [, wake] = await waitForNotifications(setup.topic, b.deliveryId, 2);
  expect(wake).toEqual({
    deliveryId: b.deliveryId,
    workspaceId: setup.integration.workspaceId,
    integrationId: setup.integration.integrationId,
    conversationId: setup.conversationId,
    messageId: b.messageId,
  });
  expect(await deliveryDoc(setup, b.deliveryId)).toMatchObject({ status: 'queued', waiting: false });
  const claimB = await claimReady(key, b.deliveryId);
  expect(claimB.message.text).toBe('B');
});

test('20 concurrent claims of one delivery with different requestIds: exactly one ready, the others 503', async () => {
  const setup = await conversation();
  const key = setup.integration.key;
  const { deliveryId } = await replyAndNotify(setup, 'contended');
  const requestIds = Array.from({ length: 20 }, () => randomUUID());
  await warmWorkers('/v1/deliveries/claim', requestIds.length, key);
  const results = await Promise.all(requestIds.map((requestId) => op('claim', key, { deliveryId, requestId })));
  const ready = results.flatMap((res, i) => (res.status === 200 && (res.body as { status: string }).status === 'ready' ? [{ res, requestId: requestIds[i] }] : []));
  expect(ready).toHaveLength(1);
  const others = results.filter((res) => !(res.status === 200 && (res.body as { status: string }).status === 'ready'));
  for (const res of others) {
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toMatch(/^[1-9][0-9]*$/);
  }
  // At least most of them saw the lease taken (the rest may be transient contention 503s).
  expect(others.filter((r) => (r.body as { error: { code: string } }).error.code === 'lease_busy').length).toBeGreaterThan(0);
  const winner = ready[0]!;
  expect(await deliveryDoc(setup, deliveryId)).toMatchObject({
    status: 'leased',
    attempts: 1,
    leaseHistory: [(winner.res.body as ReadyClaim).leaseId],
    lease: { leaseId: (winner.res.body as ReadyClaim).leaseId, requestId: winner.requestId },
  });
  // Each loser retrying (new requestIds) is still busy; the winner's retried claim gets its lease.
  expectApiError(await op('claim', key, { deliveryId, requestId: randomUUID() }), 503, 'lease_busy');
  expectOk(await op('claim', key, { deliveryId, requestId: winner.requestId }), winner.res.body);
  // (20 requests in flight start up to 20 emulator worker processes, warmed above: allow for their cold starts.)
}, 150_000);

test('5 replies, 4 concurrent connectors sharing the subscription: sent in reply order, never two live leases, each started once, all terminal', async () => {
  const setup = await conversation();
  const key = setup.integration.key;
  interface Lease {
    deliveryId: string;
    connector: string;
    /** When the ready claim came back. */
    from: number;
    /** When complete was sent (the lease is given up then). */
    to: number;
  }
  const leases: Lease[] = [];
  const providerCalls: string[] = [];
  const sendingStarts = new Map<string, number>();
  const anomalies: string[] = [];
  const skips: Record<string, number> = {};
  let busy = 0;
  let stop = false;

  const withTransientRetry = async (call: () => ReturnType<typeof op>): ReturnType<typeof op> => {
    for (let i = 0; ; i++) {
      const res = await call();
      const code = (res.body as { error?: { code?: string } }).error?.code;
      if (res.status !== 503 || code === 'lease_busy' || code === 'retry_delayed' || i >= 10) return res;
      await sleep(100 + Math.random() * 200);
    }
  };

  async function handle(connector: string, n: Notification): Promise<void> {
    const claim = await withTransientRetry(() => op('claim', key, { deliveryId: n.deliveryId, requestId: `${connector}-${randomUUID()}` }));
    if (claim.status === 503) {
      // lease_busy: another connector holds it (its expiry would re-notify); acknowledge.
      const code = (claim.body as { error: { code: string } }).error.code;
      if (code === 'lease_busy') busy++;
      else anomalies.push(`claim ${n.deliveryId}: 503 ${code}`);
      return;
    }
    if (claim.status !== 200) return void anomalies.push(`claim ${n.deliveryId}: ${claim.status} ${claim.text}`);
    const body = claim.body as ReadyClaim | { status: 'skip'; reason: string };
    if (body.status === 'skip') {
      skips[body.reason] = (skips[body.reason] ?? 0) + 1;
      return; // acknowledged; waiting_for_previous is woken by the predecessor's completion
    }
    const lease: Lease = { deliveryId: n.deliveryId, connector, from: Date.now(), to: Number.POSITIVE_INFINITY };
    leases.push(lease);
    const start = await withTransientRetry(() => op('start', key, { deliveryId: n.deliveryId, leaseId: body.leaseId }));
    if (start.status !== 200 || (start.body as { status: string }).status !== 'sending') {
      return void anomalies.push(`start ${n.deliveryId}: ${start.status} ${start.text}`);
    }
    sendingStarts.set(n.deliveryId, (sendingStarts.get(n.deliveryId) ?? 0) + 1);
    const first = providerCalls.length === 0;
    providerCalls.push(n.messageId);
    // The provider call. The first one is slow, so that the race this test is about happens on
    // any machine: the other connectors' claims of the same delivery meet its live lease, and
    // their claims of the later replies (notified meanwhile) are told to wait. With short calls
    // only, a loaded emulator could serialise the claims until each delivery was already sent.
    await sleep(first ? 1_500 : 100 + Math.random() * 150);
    lease.to = Date.now();
    const complete = await withTransientRetry(() => op('complete', key, { deliveryId: n.deliveryId, leaseId: body.leaseId, providerMessageIds: [`${connector}-${n.messageId}`] }));
    if (complete.status !== 200 || (complete.body as { status: string }).status !== 'sent') {
      anomalies.push(`complete ${n.deliveryId}: ${complete.status} ${complete.text}`);
    }
  }

  async function connector(name: string): Promise<void> {
    let cursor = 0;
    while (!stop) {
      const n = setup.topic.received[cursor];
      if (n === undefined) {
        await sleep(20);
        continue;
      }
      cursor++;
      if (n.conversationId !== setup.conversationId) continue;
      try {
        await handle(name, n);
      } catch (err) {
        anomalies.push(`${name}: ${String(err)}`);
      }
    }
  }

  // The Functions emulator runs one request per worker process: warm four of each operation so
  // that the connectors really run side by side (a cold worker would serialise them).
  await Promise.all((['claim', 'start', 'complete'] as const).flatMap((name) => [1, 2, 3, 4].map(() => op(name, key, {}))));

  // The connectors listen first; then the operator writes five replies in quick succession.
  const connectors = ['c1', 'c2', 'c3', 'c4'].map((name) => connector(name));
  const replies: string[] = [];
  let deliveries: Array<Record<string, unknown>> = [];
  try {
    for (let i = 1; i <= 5; i++) replies.push(await writeReply(setup, `reply ${i}`));
    deliveries = await eventually(async () => {
      const all = await conversationDeliveries(setup);
      return all.length === 5 ? all : undefined;
      // Five reply triggers of one conversation run at once against the four connectors' claims:
      // the emulator resolves such lock conflicts by waiting seconds (then the trigger runs its
      // transaction again), where Firestore aborts one in milliseconds. Slow here, not lost.
    }, 'five deliveries', 45_000);
    await eventually(
      async () => {
        const all = await conversationDeliveries(setup);
        return all.every((d) => d.status === 'sent') ? true : undefined;
      },
      'all five replies sent',
      90_000,
    );
  } finally {
    stop = true;
    await Promise.all(connectors);
  }

  expect(anomalies).toEqual([]);
  // seq order is the reply order.
  expect(deliveries.map((d) => d.messageId)).toEqual(replies);
  // Sent (provider called) in reply order, each exactly once.
  expect(providerCalls).toEqual(replies);
  const ids = deliveries.map((d) => d.deliveryId as string);
  expect(ids.map((id) => sendingStarts.get(id))).toEqual([1, 1, 1, 1, 1]);
  // One lease per delivery, and never two at once in the conversation.
  expect(leases.map((l) => l.deliveryId)).toEqual(ids);
  for (let i = 1; i < leases.length; i++) {
    expect({ i, overlap: leases[i - 1]!.to >= leases[i]!.from }).toEqual({ i, overlap: false });
  }
  const final = await conversationDeliveries(setup);
  expect(final.map((d) => [d.seq, d.status, d.attempts])).toEqual([1, 2, 3, 4, 5].map((seq) => [seq, 'sent', 1]));
  // The connectors really raced: some claims found the lease busy or were told to wait (and woken).
  // (The counts are in the expectation, so that a failure shows what the claims saw.)
  expect({ busy, skips, raced: busy + (skips.waiting_for_previous ?? 0) > 0 }).toMatchObject({ raced: true });
}, 120_000);
