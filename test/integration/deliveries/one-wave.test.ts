/**
 * One read wave per delivery operation (docs/decisions.md, "Delivery: one read wave"): a delivery
 * id names its conversation, so the transaction reads the delivery with its conversation's queue
 * (and, for a claim, the conversation) at once; and the queue document holds the release facts of
 * each delivery waiting behind another, so the head's terminal transition wakes it without reading
 * it. What these tests hold the new path to: it writes what the read path writes, a delivery whose
 * id predates the change is served as before, and a released record that is gone does not fail the
 * operation that releases it.
 */
import type { DocumentData } from 'firebase-admin/firestore';
import { conversationOfDeliveryId, deliveryIdFor } from '../../../functions/src/platform/ids';
import { appendDelivery, openQueue, runCreation } from '../../../functions/src/deliveries/transition';
import { adminDb } from '../helpers/stack';
import { claimReady, type ConversationSetup, deliveryDoc, deliveryDocRef, deliveryTestFile, eventually, expectOk, expectSent, expectSkip, op, readDeliveryDoc, readReply, replyAndNotify, waitForNotifications } from '../helpers/deliveries';

const { ownConversation: conversation } = deliveryTestFile();

const queueRef = (setup: ConversationSetup) => adminDb().doc(`workspaces/${setup.integration.workspaceId}/deliveryQueues/${setup.conversationId}`);
const queueDoc = async (setup: ConversationSetup): Promise<DocumentData> => (await queueRef(setup).get()).data() ?? {};
/** A lease id of the right shape that no claim granted. */
const UNKNOWN_LEASE = `l_${'x'.repeat(24)}`;
const checkDoc = async (deliveryId: string): Promise<DocumentData | undefined> => (await adminDb().doc(`deliveryChecks/${deliveryId}`).get()).data();

/** A before B in one conversation, B claimed while A is unfinished (so it waits), A claimed and started. */
async function aheadAndWaiting(setup: ConversationSetup) {
  const key = setup.integration.key;
  const a = await replyAndNotify(setup, 'A');
  const b = await replyAndNotify(setup, 'B');
  await expectSkip(key, b.deliveryId, 'waiting_for_previous');
  const claimA = await claimReady(key, a.deliveryId);
  expectOk(await op('start', key, { deliveryId: a.deliveryId, leaseId: claimA.leaseId }), { status: 'sending' });
  return { a, b, leaseA: claimA.leaseId };
}

test('a delivery id names its conversation; the queue keeps the release facts of the delivery waiting behind the head, in step with its record', async () => {
  const setup = await conversation();
  const key = setup.integration.key;
  const a = await replyAndNotify(setup, 'A');
  const b = await replyAndNotify(setup, 'B');
  for (const id of [a.deliveryId, b.deliveryId]) {
    expect(id.length).toBeLessThanOrEqual(128);
    expect(conversationOfDeliveryId(id)).toBe(setup.conversationId);
  }
  // Only B waits behind another delivery: the head needs no release.
  expect((await queueDoc(setup)).release).toEqual({ '2': { messageId: b.messageId, waiting: false } });

  await expectSkip(key, b.deliveryId, 'waiting_for_previous');
  expect(await deliveryDoc(setup, b.deliveryId)).toMatchObject({ waiting: true });
  expect((await queueDoc(setup)).release).toEqual({ '2': { messageId: b.messageId, waiting: true } });

  const claimA = await claimReady(key, a.deliveryId);
  expectSent(await op('complete', key, { deliveryId: a.deliveryId, leaseId: claimA.leaseId, providerMessageIds: ['a'] }), a.deliveryId);
  // Released: its facts are spent, it is the head now, and its wake was notified.
  const queue = await queueDoc(setup);
  expect(queue.release).toEqual({});
  expect(queue.pending).toEqual({ '2': b.deliveryId });
  await waitForNotifications(setup.topic, b.deliveryId, 2);
  expect(await deliveryDoc(setup, b.deliveryId)).toMatchObject({ status: 'queued', head: true, waiting: false });
  expect((await claimReady(key, b.deliveryId)).message.text).toBe('B');
});

/** A record, check document or mirror with its own ids and times replaced, to compare two deliveries' documents. */
function shape(data: DocumentData | undefined, ids: Record<string, string>, at: number): unknown {
  const walk = (value: unknown): unknown => {
    if (typeof value === 'string') return ids[value] ?? value;
    // Times relative to the wake (`at`): the two wakes ran at different moments.
    if (typeof value === 'number' && value > 1e12) return value - at;
    if (Array.isArray(value)) return value.map(walk);
    // A mirror's Timestamp says when the mirror was last written, which the wake must not do either way.
    if (value !== null && typeof value === 'object' && 'toMillis' in value) return '<timestamp>';
    if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v)]));
    return value;
  };
  if (data === undefined) return undefined;
  // Derived from the id (so different for two deliveries), or from when it was created.
  const { traceId: _trace, listShard: _list, shard: _shard, createdAt: _created, ...rest } = data;
  return walk(rest);
}

test('the wake from the release facts writes what the wake of the read record writes: record, check document, mirror, notification', async () => {
  const [viaFacts, viaRead] = [await conversation(), await conversation()];
  const runs = [];
  for (const setup of [viaFacts, viaRead]) {
    const { a, b, leaseA } = await aheadAndWaiting(setup);
    // Without the facts the transition reads the waiting delivery first (the path of older deliveries).
    if (setup === viaRead) await queueRef(setup).update({ release: {} });
    expectSent(await op('complete', setup.integration.key, { deliveryId: a.deliveryId, leaseId: leaseA, providerMessageIds: ['a'] }), a.deliveryId);
    const [, wake] = await waitForNotifications(setup.topic, b.deliveryId, 2);
    const record = await deliveryDoc(setup, b.deliveryId);
    const ids = {
      [b.deliveryId]: '<delivery>',
      [b.messageId]: '<message>',
      [setup.conversationId]: '<conversation>',
      [setup.integration.workspaceId]: '<workspace>',
      [setup.integration.integrationId]: '<integration>',
    };
    const at = record.updatedAt as number;
    runs.push({
      record: shape(record, ids, at),
      check: shape(await checkDoc(b.deliveryId), ids, at),
      mirror: shape((await readReply(setup, b.messageId))?.delivery as DocumentData, ids, at),
      wake: shape(wake, ids, at),
      pending: (await queueDoc(setup)).pending,
    });
  }
  expect(runs[0]).toMatchObject({ record: expect.objectContaining({ status: 'queued', head: true, waiting: false, pendingAt: 0 }) });
  expect(runs[0]).toEqual({ ...runs[1], pending: { '2': expect.any(String) } });
  // Two conversations taken through six operations each, one after the other.
}, 180_000);

test('deliveries whose ids predate the change (no conversation in the id, no release facts) are claimed, released and completed as before', async () => {
  const setup = await conversation();
  const key = setup.integration.key;
  const { workspaceId, integrationId } = setup.integration;
  const db = adminDb();
  // Two deliveries as the service created them before: the id is the digest alone, the queue has no release facts.
  const messages = ['A', 'B'].map((text) => ({ text, messageId: db.collection(`workspaces/${workspaceId}/conversations/${setup.conversationId}/messages`).doc().id }));
  const legacy = messages.map((m) => ({ ...m, deliveryId: deliveryIdFor(setup.conversationId, m.messageId).slice(0, 34) }));
  for (const d of legacy) expect(conversationOfDeliveryId(d.deliveryId)).toBeNull();
  await runCreation(db, { workspaceId, conversationId: setup.conversationId }, async (tx, queue, now) => {
    await openQueue(tx, db, queue, undefined);
    for (const d of legacy) appendDelivery(tx, db, queue, { deliveryId: d.deliveryId, workspaceId, integrationId, conversationId: setup.conversationId, messageId: d.messageId, text: d.text, now, reason: 'created' });
  });
  await queueRef(setup).update({ release: {} });
  const [a, b] = legacy as [(typeof legacy)[number], (typeof legacy)[number]];

  await expectSkip(key, b.deliveryId, 'waiting_for_previous');
  expect(await deliveryDoc(setup, b.deliveryId)).toMatchObject({ status: 'queued', waiting: true });
  const claimA = await claimReady(key, a.deliveryId);
  expect(claimA.message.text).toBe('A');
  expectOk(await op('start', key, { deliveryId: a.deliveryId, leaseId: claimA.leaseId }), { status: 'sending' });
  expectSent(await op('complete', key, { deliveryId: a.deliveryId, leaseId: claimA.leaseId, providerMessageIds: ['a'] }), a.deliveryId);
  // B was read and woken: claimable now, notified (`wake`), and then delivered.
  await waitForNotifications(setup.topic, b.deliveryId, 1);
  expect(await deliveryDoc(setup, b.deliveryId)).toMatchObject({ status: 'queued', head: true, waiting: false, pendingAt: expect.any(Number) });
  expect(await checkDoc(b.deliveryId)).toMatchObject({ deliveryId: b.deliveryId, messageId: b.messageId, conversationId: setup.conversationId });
  const claimB = await claimReady(key, b.deliveryId);
  expect(claimB.message.text).toBe('B');
  expect(claimB.message.recipient).toMatchObject({ externalConversationId: setup.externalConversationId });
  expectSent(await op('fail', key, { deliveryId: b.deliveryId, leaseId: claimB.leaseId, outcome: 'failed', code: 'provider_rejected' }), b.deliveryId, 'failed');
  expect((await queueDoc(setup)).pending).toEqual({});
  expect((await readReply(setup, b.messageId))?.delivery).toMatchObject({ deliveryId: b.deliveryId, status: 'failed' });
});

test('a released delivery whose record is gone: the head still completes (its transition runs again reading the record, as before)', async () => {
  const setup = await conversation();
  const { a, b, leaseA } = await aheadAndWaiting(setup);
  await deliveryDocRef(setup.integration.workspaceId, b.deliveryId).delete();
  expectSent(await op('complete', setup.integration.key, { deliveryId: a.deliveryId, leaseId: leaseA, providerMessageIds: ['a'] }), a.deliveryId);
  expect(await deliveryDoc(setup, a.deliveryId)).toMatchObject({ status: 'sent' });
  // Nothing was made of the missing record (no stub document, no check document).
  expect(await readDeliveryDoc(setup.integration.workspaceId, b.deliveryId)).toBeUndefined();
  expect(await checkDoc(b.deliveryId)).toBeUndefined();
  expect((await queueDoc(setup)).pending).toEqual({ '2': b.deliveryId });
});

test('a forged id that names a conversation (another one of the workspace, or none) is 404 like any unknown id', async () => {
  const [mine, other] = [await conversation(), await conversation()];
  const { deliveryId } = await replyAndNotify(other, 'not yours');
  const digest = deliveryId.slice(0, 34);
  for (const forged of [`${digest}_${mine.conversationId}`, `${digest}_c_nothing`, deliveryId]) {
    for (const [name, body] of [
      ['claim', { deliveryId: forged, requestId: 'r-1' }],
      ['complete', { deliveryId: forged, leaseId: UNKNOWN_LEASE, providerMessageIds: ['p-1'] }],
      ['fail', { deliveryId: forged, leaseId: UNKNOWN_LEASE, outcome: 'failed', code: 'provider_rejected' }],
    ] as const) {
      const res = await op(name, mine.integration.key, body);
      expect([name, res.status, (res.body as { error?: { code?: string } }).error?.code]).toEqual([name, 404, 'delivery_not_found']);
    }
  }
  // The other integration's delivery is untouched.
  await eventually(async () => ((await readDeliveryDoc(other.integration.workspaceId, deliveryId))?.status === 'queued' ? true : undefined), 'untouched');
});
