/**
 * Phase "starts", run inside `firebase emulators:exec --only firestore,pubsub`: no Functions
 * emulator, so no emulated trigger takes the start documents and replies this phase writes (in the
 * stack session the start and reply triggers took most of them before the measured call, and
 * contended with it), and a real Pub/Sub emulator for the publish both triggers make after their
 * commit.
 *
 * - startSequencing: taking a start (the start trigger's work, functions/src/deliveries/starts.ts
 *   `takeStart`) against sequencing an operator reply (the reply trigger's, functions/src/deliveries/sequencing.ts
 *   via `sequenceAndPublish`), in-process, paired by round (target: start / reply <= 1); then the
 *   claim, start and complete of a few of each, counted (a start's complete joins the thread).
 */
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { FUNCTIONS_LIB } from '../lib/build.mjs';
import { describePattern, measure, replay } from '../lib/instrument.mjs';
import { callOk, db, enableStarts, HANDLERS, newConversations, newDeliveries, newIntegration, retrying, sequenceAndPublish, takeWrittenStart, writeReplies, writeStart } from '../lib/service.mjs';
import { log, pick, runSections } from '../lib/session.mjs';
import { median, summarize } from '../lib/stats.mjs';

const require = createRequire(import.meta.url);
const { PubSub } = require(require.resolve('@google-cloud/pubsub', { paths: [FUNCTIONS_LIB] }));
if (!process.env.PUBSUB_EMULATOR_HOST) throw new Error('run inside `firebase emulators:exec --only firestore,pubsub` (PUBSUB_EMULATOR_HOST is not set)');
const PROJECT = process.env.GCLOUD_PROJECT;
const pubsub = new PubSub({ projectId: PROJECT });

/** A topic of the Pub/Sub emulator for the integration's notifications (no subscription: nothing reads them here). */
async function newTopic() {
  const [topic] = await pubsub.createTopic(`bench-starts-${randomUUID().slice(0, 8)}`);
  return topic.name;
}

const COUNTED = ['transactions', 'attempts', 'roundTrips', 'rpcs', 'docsRead', 'docsWritten'];
const countsOf = (list) => Object.fromEntries(COUNTED.map((f) => [f, summarize(list.map((m) => m.counts[f]))]));

async function timed(fn) {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

/**
 * Taking a start (`takeStart`: one transaction, then the publish of its notification) against
 * sequencing an operator reply (`sequenceAndPublish`: one transaction, then the publish), both
 * called in-process from the built module, in rounds that alternate which goes first, after a
 * warm-up. Each round writes a start (a text: the integration declares no channel) to a new phone
 * number, and a reply in a conversation of its own: a customer message opened it, and one earlier
 * reply was sequenced in this process (so the reply takes the trigger's usual path, its
 * integration remembered: one read wave) and delivered (so the measured reply is claimable and
 * notified at once, like the start). Each measured call's recorded transaction is then replayed
 * directly (instrument.mjs): start / reply of those replays is what the Firestore work alone costs.
 * Then a few of each are claimed, started and completed in-process, counted.
 */
async function startSequencing() {
  const rounds = pick(30, 10);
  const integration = await newIntegration(await newTopic());
  const key = integration.key;
  await enableStarts(integration);
  const deliver = async (deliveryId) => {
    const claim = await callOk(HANDLERS.claim, { key, body: { deliveryId, requestId: randomUUID() } });
    if (claim.status !== 'ready') throw new Error(`claim: ${JSON.stringify(claim)}`);
    await callOk(HANDLERS.start, { key, body: { deliveryId, leaseId: claim.leaseId } });
    await callOk(HANDLERS.complete, { key, body: { deliveryId, leaseId: claim.leaseId, providerMessageIds: ['p-1'] } });
  };
  // A round's reply conversation, with one earlier reply sequenced here and delivered; three more for the warm-up.
  const warmUps = 3;
  const conversations = await newDeliveries(integration, await newConversations(integration, rounds + warmUps), 1);
  for (const c of conversations) await retrying(() => deliver(c.deliveryIds[0]));

  // Without triggers nothing else takes these documents: a call that finds nothing to do is an error.
  const steps = {
    start: async () => {
      const start = await writeStart(integration, { text: 'Hello, this is the support desk about your order.' });
      const m = await retrying(() => measure(() => takeWrittenStart(integration, start)));
      if (m.value.kind !== 'created') throw new Error(`takeStart: ${JSON.stringify(m.value)}`);
      return { ...m, id: start.deliveryId, start };
    },
    reply: async (c) => {
      const [replyId] = await writeReplies(integration, c.conversationId, 1);
      // The reply's `createdAt`, which the trigger has from its event: with it the recent replies are
      // read beside the transaction's first wave (one read wave); without it the exact query runs in
      // the transaction after that wave (two), which is not the trigger's usual path.
      const createdAt = (await db().doc(`workspaces/${integration.workspaceId}/conversations/${c.conversationId}/messages/${replyId}`).get()).get('createdAt');
      const m = await retrying(() => measure(() => sequenceAndPublish(db(), integration.workspaceId, c.conversationId, replyId, createdAt)));
      if (m.value.created.length !== 1) throw new Error(`sequenceAndPublish: ${JSON.stringify(m.value)}`);
      return { ...m, id: m.value.created[0] };
    },
  };
  const direct = (pattern) => timed(() => retrying(() => replay(db(), pattern)));
  // Warm-up: both code paths (JIT, channels) and the replays.
  for (const c of conversations.slice(rounds)) {
    await direct((await steps.start()).pattern);
    await direct((await steps.reply(c)).pattern);
  }
  const taken = { start: [], reply: [] };
  const ratio = [];
  const directRatio = [];
  for (let i = 0; i < rounds; i++) {
    const round = {};
    for (const kind of i % 2 === 0 ? ['start', 'reply'] : ['reply', 'start']) {
      const m = await steps[kind](conversations[i]);
      round[kind] = { ...m, directMs: await direct(m.pattern) };
      taken[kind].push(round[kind]);
    }
    ratio.push(round.start.ms / round.reply.ms);
    directRatio.push(round.start.directMs / round.reply.directMs);
  }
  log(`startSequencing: start / reply ${median(ratio).toFixed(2)} over ${rounds} rounds (their transactions replayed directly: ${median(directRatio).toFixed(2)})`);

  // Claim, start and complete of a few of each, counted: what a start costs per delivery beyond a reply.
  const counted = pick(5, 3);
  const opsOf = { start: { claim: [], start: [], complete: [] }, reply: { claim: [], start: [], complete: [] } };
  for (let i = 0; i < counted; i++) {
    for (const kind of ['start', 'reply']) {
      const t = taken[kind][i];
      const ops = opsOf[kind];
      const claim = await measure(() => callOk(HANDLERS.claim, { key, body: { deliveryId: t.id, requestId: randomUUID() } }));
      if (claim.value.status !== 'ready' || (kind === 'start') !== (claim.value.kind === 'start')) throw new Error(`claim of a ${kind}: ${JSON.stringify(claim.value)}`);
      ops.claim.push(claim);
      ops.start.push(await measure(() => callOk(HANDLERS.start, { key, body: { deliveryId: t.id, leaseId: claim.value.leaseId } })));
      // A start's complete names the thread the channel made (docs/contract.md#conversations-the-desk-starts).
      const thread = kind === 'start' ? { conversation: { externalConversationId: `thread-${randomUUID().slice(0, 8)}`, externalCustomerId: t.start.to.value } } : {};
      ops.complete.push(await measure(() => callOk(HANDLERS.complete, { key, body: { deliveryId: t.id, leaseId: claim.value.leaseId, providerMessageIds: ['p-2'], ...thread } })));
    }
  }
  const summary = (list) => ({ ms: summarize(list.map((m) => m.ms), 2), directTxMs: summarize(list.map((m) => m.directMs), 2), counts: countsOf(list), directTx: describePattern(list[list.length - 1].pattern) });
  return {
    rounds,
    ratio: summarize(ratio),
    directRatio: summarize(directRatio),
    start: summary(taken.start),
    reply: summary(taken.reply),
    deliveryOps: Object.fromEntries(
      Object.entries(opsOf).map(([kind, ops]) => [kind, Object.fromEntries(Object.entries(ops).map(([op, list]) => [op, { counts: countsOf(list), directTx: describePattern(list[list.length - 1].pattern) }]))]),
    ),
  };
}

await runSections('starts', { startSequencing }, { close: () => Promise.all([pubsub.close(), db().terminate()]) });
