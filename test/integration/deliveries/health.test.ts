/**
 * Integration health (docs/decisions.md#integration-health) against the real emulators: deliveries brought into known
 * states through the real API and triggers (and one record moved out of the 24 h window with the
 * Admin SDK, as setup), then the roll-up run in-process, as the other suites run the sweeper:
 * the per-integration roll-up for the numbers, and the scheduled handler's own code
 * (`rollUpHealth`) for the selection and the write budget.
 *
 * @serial runs the scheduled roll-up (`rollUpHealth`) for every integration at future minutes, writing other suites' health documents
 */
import { FieldValue, type DocumentSnapshot } from 'firebase-admin/firestore';
import { rollUpDue } from '../../../functions/src/deliveries/health';
import { rollUpHealth, rollUpIntegration } from '../../../functions/src/deliveries/health-rollup';
import { adminDb, integrationRef } from '../helpers/stack';
import { claimReady, type ConversationSetup, deliverFully, deliveryDoc, deliveryDocRef, deliveryTestFile, eventually, expectOk, expectSent, op, replyAndNotify, replyAndSequence, setupConversation, waitForMirror } from '../helpers/deliveries';

const file = deliveryTestFile();
const HOUR = 3_600_000;

const healthRef = (setup: ConversationSetup) => adminDb().doc(`workspaces/${setup.integration.workspaceId}/integrationHealth/${setup.integration.integrationId}`);
const another = (setup: ConversationSetup) => setupConversation({ topic: setup.topic, integration: setup.integration });
const sameWrite = (a: DocumentSnapshot, b: DocumentSnapshot): boolean => a.updateTime !== undefined && b.updateTime !== undefined && a.updateTime.isEqual(b.updateTime);

/** The integration document once its topic check has been recorded (the trigger's write, not ours). */
async function settledIntegration(setup: ConversationSetup): Promise<DocumentSnapshot> {
  return eventually(async () => {
    const snap = await integrationRef(setup.integration.workspaceId, setup.integration.integrationId).get();
    return snap.get('replies.topicStatus') === undefined ? undefined : snap;
  }, 'the topic check of the integration');
}

test('counts by status over 24 h, the oldest claimable, the last sent and the last error', async () => {
  const c1 = await file.ownConversation();
  const key = c1.integration.key;
  const { workspaceId, integrationId } = c1.integration;

  // sent
  const a = await replyAndNotify(c1, 'sent');
  await deliverFully(key, a.deliveryId);
  // failed with an error
  const c2 = await another(c1);
  const b = await replyAndNotify(c2, 'blocked');
  const claimB = await claimReady(key, b.deliveryId);
  expectOk(await op('start', key, { deliveryId: b.deliveryId, leaseId: claimB.leaseId }), { status: 'sending' });
  expectSent(await op('fail', key, { deliveryId: b.deliveryId, leaseId: claimB.leaseId, outcome: 'failed', code: 'recipient_blocked' }), b.deliveryId, 'failed');
  // sending
  const c3 = await another(c1);
  const c = await replyAndNotify(c3, 'sending');
  const claimC = await claimReady(key, c.deliveryId);
  expectOk(await op('start', key, { deliveryId: c.deliveryId, leaseId: claimC.leaseId }), { status: 'sending' });
  // queued: one claimable (the oldest claimable), one waiting behind it
  const c4 = await another(c1);
  const d = await replyAndSequence(c4, 'claimable');
  const e = await replyAndSequence(c4, 'waiting behind');
  // leased
  const c5 = await another(c1);
  const f = await replyAndNotify(c5, 'leased');
  await claimReady(key, f.deliveryId);
  // cancelled by the operator (failed, but not an error of the integration: later than B's error)
  const c6 = await another(c1);
  const g = await replyAndSequence(c6, 'recalled');
  await adminDb()
    .doc(`workspaces/${workspaceId}/conversations/${c6.conversationId}/messages/${g.messageId}`)
    .update({ cancel: { requestedAt: FieldValue.serverTimestamp(), uid: 'operator-1' } });
  await waitForMirror(c6, g.messageId, (m) => m.status === 'failed');
  // sent last of all, but created before the window (moved back as setup): not counted, yet the last sent
  const c7 = await another(c1);
  const h = await replyAndNotify(c7, 'old but sent last');
  await deliverFully(key, h.deliveryId);
  await deliveryDocRef(workspaceId, h.deliveryId).update({ createdAt: Date.now() - 25 * HOUR });

  const now = Date.now();
  const health = await rollUpIntegration(adminDb(), workspaceId, integrationId, now);
  const [recordD, recordH, recordB] = await Promise.all([deliveryDoc(c4, d.deliveryId), deliveryDoc(c7, h.deliveryId), deliveryDoc(c2, b.deliveryId)]);
  expect(health.counts).toEqual({ queued: 2, leased: 1, sending: 1, sent: 1, failed: 2, unknown: 0 });
  expect(health.total).toBe(7);
  expect(health.oldestClaimable).toEqual({ deliveryId: d.deliveryId, since: recordD.pendingAt, ageMs: now - (recordD.pendingAt as number) });
  expect(health.lastSent).toEqual({ deliveryId: h.deliveryId, at: recordH.sentAt });
  expect(health.lastError).toEqual({ deliveryId: b.deliveryId, at: recordB.errorAt, status: 'failed', code: 'recipient_blocked' });
  expect(health.active).toBe(true);
  expect(e.deliveryId).not.toBe(d.deliveryId);

  // The document the console reads.
  const stored = (await healthRef(c1).get()).data();
  expect(stored).toMatchObject({
    workspaceId,
    integrationId,
    counts: { queued: 2, leased: 1, sending: 1, sent: 1, failed: 2, unknown: 0 },
    total: 7,
    oldestClaimable: { deliveryId: d.deliveryId, ageSeconds: Math.floor((now - (recordD.pendingAt as number)) / 1000) },
    lastSent: { deliveryId: h.deliveryId },
    lastError: { deliveryId: b.deliveryId, status: 'failed', code: 'recipient_blocked' },
    active: true,
  });
  expect(stored?.computedAt.toMillis()).toBe(now);
  expect(stored?.windowStartAt.toMillis()).toBe(now - 24 * HOUR);
  expect(stored?.oldestClaimable.since.toMillis()).toBe(recordD.pendingAt);
  expect(stored?.lastSent.at.toMillis()).toBe(recordH.sentAt);
  expect(stored?.lastError.at.toMillis()).toBe(recordB.errorAt);

  // Once D is delivered, E is the oldest claimable, from its release.
  await deliverFully(key, d.deliveryId);
  const later = await rollUpIntegration(adminDb(), workspaceId, integrationId, Date.now());
  expect(later.oldestClaimable?.deliveryId).toBe(e.deliveryId);
  expect(later.counts).toMatchObject({ queued: 1, sent: 2 });
});

test('no shared document is written per delivery: N deliveries leave the health and integration documents alone; one write per roll-up run and minute', async () => {
  const setup = await file.ownConversation();
  const key = setup.integration.key;
  const integration0 = await settledIntegration(setup);
  await rollUpIntegration(adminDb(), setup.integration.workspaceId, setup.integration.integrationId, Date.now());
  const health0 = await healthRef(setup).get();
  expect(health0.get('total')).toBe(0);

  const N = 5;
  for (let i = 0; i < N; i++) {
    const reply = await replyAndNotify(setup, `reply ${i}`);
    await deliverFully(key, reply.deliveryId);
  }
  const [health1, integration1] = await Promise.all([healthRef(setup).get(), integrationRef(setup.integration.workspaceId, setup.integration.integrationId).get()]);
  expect(sameWrite(health1, health0)).toBe(true);
  expect(sameWrite(integration1, integration0)).toBe(true);

  // The scheduled handler's code. The last roll-up found nothing (idle), so the schedule takes it
  // again in its own minute of every ten: run at the first minute it is due.
  const base = (health0.get('computedAt') as { toMillis(): number }).toMillis();
  let at = base + 60_000;
  while (!(await dueAt(setup, at))) at += 60_000;
  const run = await rollUpHealth(adminDb(), at);
  expect(run.integrations).toBeGreaterThanOrEqual(1);
  expect(run.rolledUp).toBeGreaterThanOrEqual(1);
  const health2 = await healthRef(setup).get();
  expect(sameWrite(health2, health1)).toBe(false);
  expect(health2.get('counts.sent')).toBe(N);
  expect(health2.get('active')).toBe(true);

  // A second run in the same minute (an overrun schedule) writes nothing; the next minute writes once more.
  await rollUpHealth(adminDb(), at + 30_000);
  expect(sameWrite(await healthRef(setup).get(), health2)).toBe(true);
  await rollUpHealth(adminDb(), at + 60_000);
  const health3 = await healthRef(setup).get();
  expect(sameWrite(health3, health2)).toBe(false);
  expect((health3.get('computedAt') as { toMillis(): number }).toMillis()).toBe(at + 60_000);
}, 180_000);

/** Whether the scheduled run at `at` rolls up this integration (the pure rule, on its stored health). */
async function dueAt(setup: ConversationSetup, at: number): Promise<boolean> {
  const snap = await healthRef(setup).get();
  const computedAt = (snap.get('computedAt') as { toMillis(): number }).toMillis();
  return rollUpDue(setup.integration, { computedAt, active: snap.get('active') === true }, at);
}
