/**
 * Erasure of one customer (docs/privacy.md#erasure) through the real trigger, task queue and API:
 * the cascade and its audit, nothing left behind (documents and stored objects), an unknown
 * customer, a crash between steps, a second run, unfinished deliveries, and retries after it.
 */
import { randomUUID } from 'node:crypto';
import type { DocumentData } from 'firebase-admin/firestore';
import { runErasure } from '../../../functions/src/privacy/erasure';
import { conversationSearchKeys } from '../../../functions/src/contract/conversation-search';
import { adminDb, postJson } from '../helpers/stack';
import { claimReady, deliveryTestFile, eventually, expectApiError, op, replyAndNotify, replyAndSequence, deliverFully, type ConversationSetup } from '../helpers/deliveries';
import { localStore, requestErasure, send, waitForErasure, ws } from './helpers';

const file = deliveryTestFile();

interface Scene {
  setup: ConversationSetup;
  /** The customer to erase, alone in `soleConversation` (3 messages, one image, 2 replies) and sharing `shared` with another. */
  customer: string;
  other: string;
  soleConversationId: string;
  sharedConversationId: string;
  sharedExternal: string;
  imagePaths: string[];
  deliveryIds: string[];
  otherMessageId: string;
  firstEventId: string;
  firstBody: Record<string, unknown>;
}

/** The data of the cascade test: what the erasure must delete and what it must keep. */
async function scene(): Promise<Scene> {
  const setup = await file.ownConversation();
  const { integration } = setup;
  const customer = setup.customerId;
  const other = `other-${randomUUID().slice(0, 8)}`;
  await send(integration, setup.externalConversationId, customer, { withImage: true });
  const first = await send(integration, setup.externalConversationId, customer);
  const sent = await replyAndNotify(setup, 'first answer');
  await deliverFully(integration.key, sent.deliveryId);
  const queued = await replyAndSequence(setup, 'second answer, still queued');
  const sharedExternal = `shared-${randomUUID()}`;
  const mine = await send(integration, sharedExternal, customer);
  const theirs = await send(integration, sharedExternal, other);
  const messages = await ws(integration.workspaceId).collection('conversations').doc(setup.conversationId).collection('messages').get();
  const imagePaths = messages.docs.flatMap((d) => ((d.data().images ?? []) as Array<{ path: string }>).map((i) => i.path));
  return {
    setup,
    customer,
    other,
    soleConversationId: setup.conversationId,
    sharedConversationId: mine.conversationId,
    sharedExternal,
    imagePaths,
    deliveryIds: [sent.deliveryId, queued.deliveryId],
    otherMessageId: theirs.messageId,
    firstEventId: first.eventId,
    firstBody: first.body,
  };
}

async function expectNothingLeft(s: Scene): Promise<void> {
  const base = ws(s.setup.integration.workspaceId);
  expect((await base.collection('conversations').doc(s.soleConversationId).get()).exists).toBe(false);
  expect((await base.collection('conversations').doc(s.soleConversationId).collection('messages').get()).size).toBe(0);
  expect((await base.collection('deliveryQueues').doc(s.soleConversationId).get()).exists).toBe(false);
  expect((await base.collection('deliveries').where('conversationId', '==', s.soleConversationId).get()).size).toBe(0);
  for (const id of s.deliveryIds) {
    expect((await adminDb().collection('deliveryChecks').doc(id).get()).exists).toBe(false);
    expect((await adminDb().collection('outbox').where('deliveryId', '==', id).get()).size).toBe(0);
  }
  expect((await base.collection('customers').where('externalId', '==', s.customer).get()).size).toBe(0);
  for (const path of s.imagePaths) expect((await localStore().get(path)) !== null).toBe(false);
  // The shared conversation stays, with the other customer's message only.
  const shared = await base.collection('conversations').doc(s.sharedConversationId).collection('messages').get();
  expect(shared.docs.map((d) => d.id)).toEqual([s.otherMessageId]);
  expect((await base.collection('customers').where('externalId', '==', s.other).get()).size).toBe(1);
}

// The sole conversation: 3 customer messages (the first from setupConversation) + 2 replies; the shared one: 1.
const EXPECTED_COUNTS = { conversations: 1, messages: 3 + 2 + 1, images: 1, attachments: 0, deliveries: 2 };

test("a shared conversation the customer wrote in last is no longer found by the customer's name or id (search keys)", async () => {
  const setup = await file.ownConversation();
  const { integration } = setup;
  const other = `other-${randomUUID().slice(0, 8)}`;
  const sharedExternal = `shared-${randomUUID().slice(0, 8)}`;
  await send(integration, sharedExternal, other);
  const mine = await send(integration, sharedExternal, setup.customerId);
  const conversation = ws(integration.workspaceId).collection('conversations').doc(mine.conversationId);
  expect((await conversation.get()).get('searchKeys')).toContain(setup.customerId.toLowerCase());

  await waitForErasure(integration.workspaceId, await requestErasure(integration, setup.customerId));
  const keys = (await conversation.get()).get('searchKeys') as string[];
  expect(keys).toEqual(conversationSearchKeys({ externalConversationId: sharedExternal }));
  expect(keys).not.toContain(setup.customerId.toLowerCase());
});

test('a shared conversation loses its connector metadata (it cannot tell whose message set a key); the other customer\'s later metadata is kept again', async () => {
  const setup = await file.ownConversation();
  const { integration } = setup;
  const other = `other-${randomUUID().slice(0, 8)}`;
  const sharedExternal = `shared-${randomUUID().slice(0, 8)}`;
  await send(integration, sharedExternal, other, { metadata: { plan: 'gold' } });
  const mine = await send(integration, sharedExternal, setup.customerId, { metadata: { orderId: 'A-1' } });
  const conversation = ws(integration.workspaceId).collection('conversations').doc(mine.conversationId);
  expect((await conversation.get()).get('metadata')).toEqual({ plan: 'gold', orderId: 'A-1' });

  await waitForErasure(integration.workspaceId, await requestErasure(integration, setup.customerId));
  const after = await conversation.get();
  expect(after.exists).toBe(true);
  expect(after.get('metadata')).toBeUndefined();
  await send(integration, sharedExternal, other, { metadata: { plan: 'silver' } });
  expect((await conversation.get()).get('metadata')).toEqual({ plan: 'silver' });
});

test('the cascade: the customer, their messages and image, their sole conversation with replies and deliveries; the shared one keeps the other customer', async () => {
  const s = await scene();
  expect(s.imagePaths).toHaveLength(1);
  expect((await localStore().get(s.imagePaths[0] ?? '')) !== null).toBe(true);
  const erasureId = await requestErasure(s.setup.integration, s.customer);
  const audit = await waitForErasure(s.setup.integration.workspaceId, erasureId);
  expect(audit).toMatchObject({ status: 'done', counts: EXPECTED_COUNTS, externalConversationIds: [s.setup.externalConversationId, s.sharedExternal].sort() });
  expect(typeof audit.startedAt).toBe('number');
  expect(audit.finishedAt).toBeGreaterThanOrEqual(audit.startedAt as number);
  // No content in the audit.
  expect(JSON.stringify(audit)).not.toContain('hello from');
  await expectNothingLeft(s);

  // Nothing can be sent any more: the queued reply's delivery is gone (404 like any unknown delivery).
  expectApiError(await op('claim', s.setup.integration.key, { deliveryId: s.deliveryIds[1], requestId: randomUUID() }), 404, 'delivery_not_found');

  // Retries do not resurrect: the old eventId is a duplicate and nothing is re-created.
  const retry = await postJson('/v1/messages', s.firstBody, { key: s.setup.integration.key });
  expect(retry.status).toBe(200);
  expect(retry.body).toMatchObject({ duplicate: true, conversationId: s.soleConversationId });
  const base = ws(s.setup.integration.workspaceId);
  expect((await base.collection('conversations').doc(s.soleConversationId).get()).exists).toBe(false);
  expect((await base.collection('customers').where('externalId', '==', s.customer).get()).size).toBe(0);
  // A new eventId from the same sender is a new message of a new customer record, as usual.
  const fresh = await send(s.setup.integration, s.setup.externalConversationId, s.customer);
  expect(fresh.conversationId).toBe(s.soleConversationId);
  expect((await base.collection('customers').where('externalId', '==', s.customer).get()).size).toBe(1);
});

test('an unknown customer: done with zero counts', async () => {
  const setup = await file.ownConversation();
  const erasureId = await requestErasure(setup.integration, `nobody-${randomUUID()}`);
  const audit = await waitForErasure(setup.integration.workspaceId, erasureId);
  expect(audit).toMatchObject({ status: 'done', counts: { conversations: 0, messages: 0, images: 0, attachments: 0, deliveries: 0 }, externalConversationIds: [] });
  // The other customer's conversation is untouched.
  expect((await ws(setup.integration.workspaceId).collection('conversations').doc(setup.conversationId).get()).exists).toBe(true);
});

test('a crash between steps, then a resume, while the trigger runs it too (a second run): nothing left, nothing counted twice', async () => {
  // The erasure's own trigger races this direct run; when the trigger has already deleted
  // everything, this run has nothing to crash after, so the scene is set up again (at most 5 times).
  let s = await scene();
  let erasureId = '';
  let crashed = false;
  for (let attempt = 0; attempt < 5 && !crashed; attempt += 1) {
    if (attempt > 0) s = await scene();
    erasureId = await requestErasure(s.setup.integration, s.customer);
    // A run that dies after its first step that deleted something (an instance crash), then a fresh run.
    await runErasure(adminDb(), localStore(), s.setup.integration.workspaceId, erasureId, 30_000, {
      afterCommit: (deleted) => {
        if (!crashed && deleted > 0) {
          crashed = true;
          throw new Error('injected crash');
        }
      },
    }).catch((err: unknown) => {
      // Only the injected crash is expected here; anything else fails the test.
      if (!(err instanceof Error && err.message === 'injected crash')) throw err;
    });
  }
  expect(crashed).toBe(true);
  await runErasure(adminDb(), localStore(), s.setup.integration.workspaceId, erasureId, 30_000);
  const audit = await waitForErasure(s.setup.integration.workspaceId, erasureId);
  // And once more, as a redelivered trigger would: nothing changes.
  const again = await runErasure(adminDb(), localStore(), s.setup.integration.workspaceId, erasureId, 30_000);
  expect(again).toMatchObject({ done: true, deleted: 0 });
  const after = (await ws(s.setup.integration.workspaceId).collection('erasures').doc(erasureId).get()).data() as DocumentData;
  expect(after.counts).toEqual(EXPECTED_COUNTS);
  expect(after.counts).toEqual(audit.counts);
  expect(after.finishedAt).toBe(audit.finishedAt);
  await expectNothingLeft(s);
});

test('a connector holding a lease when the erasure runs cannot send: the delivery failed `erased`, then is gone', async () => {
  const setup = await file.ownConversation();
  const reply = await replyAndNotify(setup, 'about to be sent');
  const claim = await claimReady(setup.integration.key, reply.deliveryId);
  const erasureId = await requestErasure(setup.integration, setup.customerId);
  await waitForErasure(setup.integration.workspaceId, erasureId);
  expectApiError(await op('start', setup.integration.key, { deliveryId: reply.deliveryId, leaseId: claim.leaseId }), 404, 'delivery_not_found');
});

test('the race rule: a message with a new eventId accepted after the erasure started is kept, with its conversation and a new customer record', async () => {
  const setup = await file.ownConversation();
  const base = ws(setup.integration.workspaceId);
  const before = await send(setup.integration, setup.externalConversationId, setup.customerId, { text: 'before the erasure' });
  const erasureId = await requestErasure(setup.integration, setup.customerId);
  await eventually(async () => ((await base.collection('erasures').doc(erasureId).get()).data()?.startedAt !== undefined ? true : undefined), 'the erasure started');
  const late = await send(setup.integration, setup.externalConversationId, setup.customerId, { text: 'written after the start' });
  const audit = await waitForErasure(setup.integration.workspaceId, erasureId);
  const messages = base.collection('conversations').doc(late.conversationId).collection('messages');
  expect((await messages.doc(late.messageId).get()).exists).toBe(true);
  expect((await messages.doc(before.messageId).get()).exists).toBe(false);
  // The conversation is there, whole: kept (the late message came before its step) or created again
  // by the late message (it came after: a conversation's first message writes all of it).
  const conversation = (await base.collection('conversations').doc(late.conversationId).get()).data();
  expect(conversation).toMatchObject({ externalConversationId: setup.externalConversationId, listShard: expect.any(Number) as number, customerIds: [expect.any(String) as string] });
  expect((await base.collection('customers').where('externalId', '==', setup.customerId).get()).size).toBe(1);
  // The two messages from before the start were erased.
  expect(audit.counts.messages).toBe(2);
});
