/**
 * Phase "stack", run inside `firebase emulators:exec` with the whole stack (functions, firestore,
 * pubsub, hosting, tasks) and the bench's no-op function (bench/lib/stack-config.mjs).
 *
 * - overhead: median latency of each operation through Hosting -> function, divided by
 *   (the no-op function through the same path) + (the same reads and writes as one direct Admin
 *   SDK transaction, replayed from what the handler did in-process). Target <= 1.3. The claim of
 *   a start delivery (`claim (start)`) is one of the operations: its deliveries are start requests
 *   taken by the start trigger's own `takeStart` (bench/lib/service.mjs `newStartDeliveries`).
 * - replyLatency: an operator reply written -> its notification pulled from a real subscription,
 *   against a floor in the same run: a document written -> a no-op Firestore trigger that publishes
 *   one message (bench-noop `benchFloorPublish`) -> pulled. Target p50 ratio <= 1.3; p95 reported.
 * - throughput: replies written as the console writes them, drained by 4 connectors, each the
 *   SDK's `runPullLoop` (defaults) on a real Pub/Sub subscription; against raw
 *   direct transactions per second (4 concurrent) in the same session. Also, per delivery, the
 *   time from the notification that led to `sent` to `sent` (claim, start, a zero-latency
 *   provider, complete), against three sequential round trips to the no-op function measured
 *   during the same drain.
 * - attachmentFetch: a 10 MiB reply attachment fetched with POST /v1/deliveries/attachment through
 *   Hosting -> function, against reading the same object from the store directly (over HTTP from
 *   a server of the store's directory, as a storage service serves an object to a client); also
 *   against the bench's no-op function serving the same file through Hosting (the platform's
 *   floor for a function that answers a stored file) and the store's own in-process read.
 */
import { createHash, randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { BASE_URL, REGION } from '../../scripts/lib/emulators.mjs';
import { FUNCTIONS_LIB, SDK_ENTRY } from '../lib/build.mjs';
import { cpuBetween, cpuSnapshot } from '../lib/cpu.mjs';
import { analyzeTrace, tracingFetch } from '../lib/drain-trace.mjs';
import { describePattern, measure, replay } from '../lib/instrument.mjs';
import { attachmentDeliveries, bulkDeliveries, callOk, db, deliveryIdFor, enableStarts, HANDLERS, messageBody, reactionBody, newConversations, newDeliveries, newIntegration, newStartDeliveries, retrying, writeReplies } from '../lib/service.mjs';
import { FULL_DRAIN, log, pick, QUICK, runSections } from '../lib/session.mjs';
import { NOOP_FILE_PATH, NOOP_LOGGED_PATH, NOOP_PATH } from '../lib/stack-config.mjs';
import { startStoreServer } from '../lib/store-http.mjs';
import { mapLimit, median, percentileOf, sleep, summarize } from '../lib/stats.mjs';
import { performance } from 'node:perf_hooks';
import { clearInterval, setInterval } from 'node:timers';

const require = createRequire(import.meta.url);
const { Duration, PubSub } = require(require.resolve('@google-cloud/pubsub', { paths: [FUNCTIONS_LIB] }));
const { FieldValue } = require(require.resolve('firebase-admin/firestore', { paths: [FUNCTIONS_LIB] }));
const { ConnectorClient, DEFAULT_PULL_CONCURRENCY, runPullLoop } = await import(pathToFileURL(SDK_ENTRY).href);

const PROJECT = process.env.GCLOUD_PROJECT;
/** The Functions emulator's own address for the functions of the region (no Hosting in front). */
const FUNCTIONS_URL = `http://${process.env.FUNCTIONS_EMULATOR_HOST ?? '127.0.0.1:5001'}/${PROJECT}/${REGION}`;
const ACK_DEADLINE = Duration.from({ seconds: 600 });
const pubsub = new PubSub({ projectId: PROJECT });
const PATHS = { message: '/v1/messages', event: '/v1/messages/events', channel: '/v1/channel', claim: '/v1/deliveries/claim', start: '/v1/deliveries/start', complete: '/v1/deliveries/complete', fail: '/v1/deliveries/fail' };
/** The overhead's operations that are another kind of request to one of PATHS: the claim of a start delivery. */
const OP_PATHS = { ...PATHS, 'claim (start)': PATHS.claim };
/**
 * The body of a start in the overhead's integration: its channel declares a window (the overhead
 * measures `PUT /v1/channel`), so a start there needs one of its templates (docs/contract.md#windows).
 */
const START_BODY = { template: { name: 'order_update', language: 'en', params: { order: 'A-1001', status: 'shipped' } } };

async function newTopic(withSubscription) {
  const name = `bench-${randomUUID().slice(0, 8)}`;
  const [topic] = await pubsub.createTopic(name);
  // The longest ack deadline Pub/Sub allows, here and in the drain's subscriber clients. The client
  // library holds messages beyond its flow control (1 in flight) in a local buffer and is meant to
  // extend their leases; with the emulator we saw the buffered notifications redelivered again
  // and again once the deadline passed (the connectors then spent ~2,000 claims a minute on
  // deliveries already sent, and the wake-ups waited behind them). 600 s outlasts the backlog.
  const subscription = withSubscription ? (await topic.createSubscription(`${name}-sub`, { ackDeadlineSeconds: ACK_DEADLINE.totalOf('second') }))[0] : null;
  return { path: `projects/${PROJECT}/topics/${name}`, subscription };
}

/** The one operation that is not a POST: `PUT /v1/channel` replaces a resource. */
const METHODS = { [PATHS.channel]: 'PUT' };

async function post(path, key, body) {
  const res = await fetch(`${BASE_URL}${path}`, {
    method: METHODS[path] ?? 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text.startsWith('{') ? JSON.parse(text) : text };
}


async function timed(fn) {
  const t0 = performance.now();
  const value = await fn();
  return { ms: performance.now() - t0, value };
}

/** Waits until every outbox entry was published (the triggers caught up). */
async function quiesce(what, timeoutMs = 180_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const left = (await db().collection('outbox').count().get()).data().count;
    if (left === 0) return;
    if (Date.now() > deadline) throw new Error(`${what}: ${left} outbox entries still unpublished after ${timeoutMs / 1000} s`);
    await sleep(500);
  }
}

// ------------------------------------------------------------------------------------ overhead

let retried503 = 0;

/**
 * The direct-transaction baselines: each operation run once in-process on a fixture of its own,
 * recording its transaction (reads by wave, writes) for `replay`.
 */
async function recordPatterns(integration) {
  const key = integration.key;
  const patterns = {};
  const conversation = (await newConversations(integration, 1))[0];
  const first = messageBody(conversation.externalConversationId);
  const m = await measure(() => callOk(HANDLERS.message, { key, body: first }));
  patterns.message = m.pattern;
  // A reaction on that message, applied at once (201): sendMessageEvent's transaction.
  // A channel declaration that changes the stored channel (the measured requests alternate two, so
  // every one reads the integration and writes it): updateChannel's transaction.
  patterns.channel = (await measure(() => callOk(HANDLERS.channel, { key, body: channelBody(1), method: 'PUT' }))).pattern;
  patterns.event = (await measure(() => callOk(HANDLERS.event, { key, body: reactionBody(conversation.externalConversationId, first.eventId) }, [201]))).pattern;
  const [a, b] = await newDeliveries(integration, await newConversations(integration, 2), 2);
  const lease = async (deliveryId) => {
    const claim = await measure(() => callOk(HANDLERS.claim, { key, body: { deliveryId, requestId: randomUUID() } }));
    const start = await measure(() => callOk(HANDLERS.start, { key, body: { deliveryId, leaseId: claim.value.leaseId } }));
    return { claim, start, leaseId: claim.value.leaseId };
  };
  const la = await lease(a.deliveryIds[0]);
  patterns.claim = la.claim.pattern;
  patterns.start = la.start.pattern;
  patterns.complete = (await measure(() => callOk(HANDLERS.complete, { key, body: { deliveryId: a.deliveryIds[0], leaseId: la.leaseId, providerMessageIds: ['p-1'] } }))).pattern;
  const lb = await lease(b.deliveryIds[0]);
  patterns.fail = (await measure(() => callOk(HANDLERS.fail, { key, body: { deliveryId: b.deliveryIds[0], leaseId: lb.leaseId, outcome: 'failed', code: 'provider_rejected' } }))).pattern;
  return patterns;
}

/** A channel declaration (`PUT /v1/channel`): a 24 h window and two templates; `variant` changes one preview. */
function channelBody(variant) {
  return {
    window: { seconds: 86_400 },
    templates: [
      { name: 'order_update', language: 'en', params: [{ name: 'order' }, { name: 'status', maxLength: 64 }], preview: `Order {{order}} is now {{status}}.${variant ? ' Thank you.' : ''}` },
      { name: 'follow_up', language: 'en-GB', params: [{ name: 'name' }], preview: 'Hello {{name}}, may we help with anything else?' },
    ],
  };
}

async function overhead() {
  // 40 rounds a repetition (20 before: a repetition of 6 s, whose median moved by up to 0.3 from one
  // repetition to the next as the emulated triggers of earlier requests ran beside it).
  const perOp = pick(40, 8);
  const reps = pick(5, 3);
  const topic = await newTopic(false);
  const integration = await newIntegration(topic.path);
  const key = integration.key;
  const patterns = await recordPatterns(integration);
  // The claim of a start delivery (`kind: "start"`), made through the service's own start path
  // (written as a member writes it, taken by `takeStart`): its transaction, recorded like the others'.
  await enableStarts(integration);
  const [recordedStart] = await newStartDeliveries(integration, 1, START_BODY);
  patterns['claim (start)'] = (await measure(() => callOk(HANDLERS.claim, { key, body: { deliveryId: recordedStart.deliveryId, requestId: randomUUID() } }))).pattern;

  // Fixtures: `perOp` conversations with `reps` deliveries each (rep r works on seq r, so every
  // delivery is claimable when its turn comes), for claim/start/complete and again for fail.
  const setA = await bulkDeliveries(integration, perOp, reps);
  const setB = await bulkDeliveries(integration, perOp, reps);
  // perOp start deliveries per repetition, each the head of a new conversation (claimable at once).
  // One more for the warm-up (a start's claim answers with another shape: its code path warms too).
  const starts = await newStartDeliveries(integration, perOp * reps + 1, START_BODY);
  const messageConversation = `chat-overhead-${randomUUID().slice(0, 8)}`;
  // The bulk-written replies fire the reply trigger (it finds them sequenced and stops): let it finish.
  await quiesce('overhead fixtures');
  await sleep(pick(15_000, 8_000));

  // Warm-up: every function's worker, the key cache of each, the no-op, the replays.
  await post(NOOP_PATH, key, {});
  await post(NOOP_LOGGED_PATH, key, {});
  // The message the measured reactions target (each request adds or takes back one reaction).
  const reactionTarget = messageBody(messageConversation);
  await post(PATHS.message, key, reactionTarget);
  await post(PATHS.event, key, reactionBody(messageConversation, reactionTarget.eventId, true));
  await post(PATHS.channel, key, channelBody(0));
  for (const op of ['claim', 'start', 'complete', 'fail']) await post(PATHS[op], key, { deliveryId: 'd_warmup', leaseId: 'l_warmup', requestId: 'r', providerMessageIds: ['p'], outcome: 'failed', code: 'x' });
  await post(PATHS.claim, key, { deliveryId: starts[perOp * reps].deliveryId, requestId: randomUUID() });
  for (const op of Object.keys(patterns)) await replay(db(), patterns[op]);

  const ops = ['message', 'event', 'channel', 'claim', 'claim (start)', 'start', 'complete', 'fail'];
  const perRep = Object.fromEntries(ops.map((op) => [op, { op: [], noop: [], logged: [], tx: [], ratio: [], ratioLogged: [] }]));
  for (let rep = 0; rep < reps; rep++) {
    const leases = new Map();
    // fail needs a started lease of its own: set B is claimed and started first (not measured).
    await mapLimit(setB, 4, async (c) => {
      const deliveryId = c.deliveryIds[rep];
      const claim = await callOk(HANDLERS.claim, { key, body: { deliveryId, requestId: randomUUID() } });
      await callOk(HANDLERS.start, { key, body: { deliveryId, leaseId: claim.leaseId } });
      leases.set(deliveryId, claim.leaseId);
    });
    const requests = {
      message: () => messageBody(messageConversation),
      // Alternating add / take back, so the target keeps at most one reaction.
      event: (i) => reactionBody(messageConversation, reactionTarget.eventId, i % 2 === 1),
      // Alternating two declarations, so that each request changes the channel (the same body again writes nothing).
      channel: (i) => channelBody(i % 2),
      claim: (i) => ({ deliveryId: setA[i].deliveryIds[rep], requestId: randomUUID() }),
      'claim (start)': (i) => ({ deliveryId: starts[rep * perOp + i].deliveryId, requestId: randomUUID() }),
      start: (i) => ({ deliveryId: setA[i].deliveryIds[rep], leaseId: leases.get(setA[i].deliveryIds[rep]) }),
      complete: (i) => ({ deliveryId: setA[i].deliveryIds[rep], leaseId: leases.get(setA[i].deliveryIds[rep]), providerMessageIds: [`p-${rep}-${i}`] }),
      fail: (i) => ({ deliveryId: setB[i].deliveryIds[rep], leaseId: leases.get(setB[i].deliveryIds[rep]), outcome: 'failed', code: 'provider_rejected' }),
    };
    for (const op of ops) {
      const samples = { op: [], noop: [], logged: [], tx: [] };
      for (let i = 0; i < perOp; i++) {
        const body = requests[op](i);
        const steps = {
          op: async () => {
            let r = await timed(() => post(OP_PATHS[op], key, body));
            // A 503 (the emulator's lock timeout, e.g. against a trigger's transaction) is retried
            // as the SDK would; only the successful attempt is timed, the retries are counted.
            for (let attempt = 1; r.value.status === 503 && attempt < 5; attempt++) {
              retried503++;
              await sleep(1000);
              r = await timed(() => post(OP_PATHS[op], key, body));
            }
            if (r.value.status !== 200 && r.value.status !== 201) throw new Error(`${op}: HTTP ${r.value.status} ${JSON.stringify(r.value.body)}`);
            if (op === 'claim') {
              if (r.value.body.status !== 'ready') throw new Error(`claim: ${JSON.stringify(r.value.body)}`);
              leases.set(body.deliveryId, r.value.body.leaseId);
            }
            if (op === 'claim (start)' && (r.value.body.status !== 'ready' || r.value.body.kind !== 'start')) throw new Error(`claim (start): ${JSON.stringify(r.value.body)}`);
            samples.op.push(r.ms);
          },
          noop: async () => samples.noop.push((await timed(() => post(NOOP_PATH, key, body))).ms),
          logged: async () => samples.logged.push((await timed(() => post(NOOP_LOGGED_PATH, key, body))).ms),
          tx: async () => samples.tx.push((await timed(() => replay(db(), patterns[op]))).ms),
        };
        // Rotate the order inside each round so drift and background work hit all alike.
        const order = ['op', 'noop', 'tx', 'logged'];
        for (let k = 0; k < order.length; k++) await steps[order[(i + k) % order.length]]();
      }
      const r = perRep[op];
      const m = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, median(v)]));
      r.op.push(m.op);
      r.noop.push(m.noop);
      r.logged.push(m.logged);
      r.tx.push(m.tx);
      r.ratio.push(m.op / (m.noop + m.tx));
      r.ratioLogged.push(m.op / (m.logged + m.tx));
    }
    log(`overhead rep ${rep + 1}/${reps}, against the logged no-op: ${ops.map((op) => `${op} ${perRep[op].ratioLogged[rep].toFixed(2)}`).join(', ')}`);
  }
  return {
    requestsPerOpPerRep: perOp,
    reps,
    retried503,
    ops: Object.fromEntries(
      ops.map((op) => [
        op,
        {
          ratio: summarize(perRep[op].ratio),
          // Diagnostic: against a no-op that also writes one request log line.
          ratioToLoggedNoop: summarize(perRep[op].ratioLogged),
          opMs: summarize(perRep[op].op, 2),
          noopMs: summarize(perRep[op].noop, 2),
          loggedNoopMs: summarize(perRep[op].logged, 2),
          directTxMs: summarize(perRep[op].tx, 2),
          directTx: describePattern(patterns[op]),
        },
      ]),
    ),
  };
}


// ------------------------------------------------------------------------------------ throughput

/**
 * Raw direct transactions per second: `workers` loops replaying recorded transactions (`ops`) on
 * documents of their own, in `windows` windows of `seconds` each.
 */
async function rawTransactions(patterns, workers, ops, windows, seconds) {
  const rates = [];
  for (let w = 0; w < windows; w++) {
    let count = 0;
    const t0 = performance.now();
    const until = t0 + seconds * 1000;
    await Promise.all(
      patterns.slice(0, workers).map(async (p) => {
        while (performance.now() < until) {
          for (const op of ops) {
            await retrying(() => replay(db(), p[op]));
            count++;
          }
        }
      }),
    );
    rates.push(count / ((performance.now() - t0) / 1000));
  }
  return rates;
}

async function throughput() {
  const conversations = pick(100, 10);
  const perConversation = pick(10, 4);
  const total = conversations * perConversation;
  const connectors = 4;
  // Each connector: runPullLoop's default concurrency (DEFAULT_PULL_CONCURRENCY deliveries at
  // once), fed by a subscriber that holds up to this many messages.
  const pulledPerConnector = 100;
  const sequencingBoxMs = pick(120_000, 60_000);
  // A bound, not an expectation: the drain stops at this limit unless --full-drain, and the rate is
  // what it measured until then.
  const drainBoxMs = FULL_DRAIN ? 1_800_000 : pick(240_000, 45_000);

  // Raw baselines first, on fixtures of another integration (no subscription: their
  // notifications must not reach the connectors). Concurrency 1 and 4, and 4 of start only (its one read).
  const rawIntegration = await newIntegration((await newTopic(false)).path);
  const patterns = [];
  for (let w = 0; w < connectors; w++) patterns.push(await recordPatterns(rawIntegration));
  await quiesce('raw transaction fixtures');
  const [windows, seconds] = [pick(3, 2), pick(3, 2)];
  const raw = {
    mix1: await rawTransactions(patterns, 1, ['claim', 'start', 'complete'], windows, seconds),
    mix4: await rawTransactions(patterns, connectors, ['claim', 'start', 'complete'], windows, seconds),
    start4: await rawTransactions(patterns, connectors, ['start'], windows, seconds),
  };
  log(`throughput: raw direct transactions/s: ${median(raw.mix1).toFixed(0)} (1 loop), ${median(raw.mix4).toFixed(0)} (4 loops), ${median(raw.start4).toFixed(0)} (4 loops, start only)`);

  const topic = await newTopic(true);
  const integration = await newIntegration(topic.path);
  const convs = await bulkDeliveries(integration, conversations, 0);
  const deliveriesOf = () => db().collection('workspaces').doc(integration.workspaceId).collection('deliveries');

  // Stage 1: the replies, written as the console writes them; the emulated triggers sequence
  // them into deliveries and publish one notification each.
  const t0 = performance.now();
  await mapLimit(convs, 10, (c) => writeReplies(integration, c.conversationId, perConversation));
  const writtenMs = performance.now() - t0;
  let sequenced = 0;
  for (;;) {
    sequenced = (await deliveriesOf().count().get()).data().count;
    const unpublished = (await db().collection('outbox').count().get()).data().count;
    if ((sequenced === total && unpublished === 0) || performance.now() - t0 > sequencingBoxMs) break;
    await sleep(500);
  }
  const sequencingMs = performance.now() - t0;
  log(`throughput: ${sequenced}/${total} replies sequenced and notified in ${(sequencingMs / 1000).toFixed(1)} s`);

  // Stage 2: 4 connectors drain the subscription, each a runPullLoop with its defaults (concurrency
  // DEFAULT_PULL_CONCURRENCY, one delivery per conversation at a time, the `next` a complete names
  // taken at once: docs/contract.md#complete), as a connector built on the SDK runs.
  // Production runs each function with `concurrency: 80` (functions/src/index.ts): the drain's 40
  // calls in flight fit in one warm instance. The Functions emulator serves one request per worker
  // process and starts a new process whenever none is idle (firebase-tools, functionsRuntimeWorker.js
  // RuntimeWorkerPool), so the drain's first 40 concurrent calls of claim, start and complete were
  // ~120 cold starts of ~0.4 s CPU each (the cold start figures): about 45 s on two cores in which
  // nothing was sent. The pool is grown first, outside the timed drain.
  const warmUpMs = await warmWorkers([PATHS.claim, PATHS.start, PATHS.complete], connectors * DEFAULT_PULL_CONCURRENCY, integration.key);
  log(`throughput: ${connectors * DEFAULT_PULL_CONCURRENCY} workers of each delivery function started in ${(warmUpMs / 1000).toFixed(1)} s`);
  const sentAt = new Map();
  const notificationToSent = [];
  const outcomes = { sent: 0, skipped: 0, already_finished: 0, retry_scheduled: 0, failed: 0, unknown: 0, errors: 0, followedNext: 0, ackedWithoutClaim: 0 };
  let done;
  const allSent = new Promise((resolve) => (done = resolve));
  const loops = [];
  // Every delivery call the connectors make, as they saw it (bench/lib/drain-trace.mjs).
  const trace = { calls: [] };
  const cpuAtStart = cpuSnapshot();
  const t1 = performance.now();
  const onEvent = (event) => {
    if (event.type === 'duplicate_notification' && event.finished) outcomes.ackedWithoutClaim++;
    if (event.type !== 'handled') return;
    if (event.via === 'next') outcomes.followedNext++;
    if (event.error !== undefined) {
      outcomes.errors++;
      return;
    }
    const result = event.result;
    outcomes[result.kind]++;
    if (result.kind === 'sent' && !sentAt.has(result.deliveryId)) {
      sentAt.set(result.deliveryId, performance.now());
      // processDelivery's own time: claim, start, a zero-latency provider, complete.
      notificationToSent.push(event.elapsedMs);
      if (sentAt.size === total) done();
    }
  };
  for (let c = 0; c < connectors; c++) {
    const client = new ConnectorClient({ integrationKey: integration.key, baseUrl: BASE_URL, fetch: tracingFetch(trace) });
    const subscription = new PubSub({ projectId: PROJECT }).subscription(topic.subscription.name, {
      // Messages beyond the loop's slots wait in the loop (for a slot or their conversation's
      // turn), not in the client library's buffer.
      flowControl: { maxMessages: pulledPerConnector, allowExcessMessages: false },
      // The client library's own deadline (10 s at first, whatever the subscription says) for the
      // messages it holds; see newTopic for what the emulator does when it passes.
      minAckDeadline: ACK_DEADLINE,
      maxAckDeadline: ACK_DEADLINE,
    });
    subscription.on('error', (err) => log(`subscriber error: ${err.message}`));
    const send = ({ deliveryId }) => [`p-${deliveryId}`];
    loops.push(runPullLoop(client, subscription, send, { catchUpOnStart: false, catchUpIntervalMs: 0, onEvent }));
  }
  const progress = setInterval(() => log(`throughput: ${sentAt.size}/${total} sent`), 15_000);
  // The baseline of notification -> sent: three sequential round trips to the no-op function, in a
  // loop beside the connectors, so that both see the same load.
  const noopTriples = [];
  let draining = true;
  const noopLoop = (async () => {
    while (draining) {
      const t = performance.now();
      for (let i = 0; i < 3; i++) await post(NOOP_PATH, integration.key, {});
      noopTriples.push(performance.now() - t);
      await sleep(200);
    }
  })();
  const finished = await Promise.race([allSent.then(() => true), sleep(drainBoxMs).then(() => false)]);
  draining = false;
  await noopLoop;
  clearInterval(progress);
  const drainMs = performance.now() - t1;
  // CPU seconds by process during the drain (bench/lib/cpu.mjs): what the emulators, the functions
  // and the connectors each spent.
  const drainCpu = cpuBetween(cpuAtStart, cpuSnapshot());
  log(`throughput: CPU seconds during the drain: ${JSON.stringify(drainCpu)}`);
  // What the rate counts: deliveries sent within the limit. Calls still in flight then are let
  // finish (up to 60 s) before Firestore is read, so the check below sees them too.
  const sentInTime = sentAt.size;
  // stop() lets the deliveries in progress finish (up to its stopTimeoutMs) and closes the subscriptions.
  await Promise.all(loops.map((loop) => loop.stop()));

  // Check the outcome in Firestore: what was sent, and in seq order within each conversation.
  const records = (await deliveriesOf().get()).docs.map((d) => d.data());
  const byConversation = new Map();
  for (const d of records) byConversation.set(d.conversationId, [...(byConversation.get(d.conversationId) ?? []), d]);
  let orderViolations = 0;
  // Where a conversation's chain waits: from one reply sent to the next one of the same
  // conversation sent (issue target: within 3x one notification -> sent of the same run, p50).
  const chainGaps = [];
  for (const list of byConversation.values()) {
    list.sort((a, b) => a.seq - b.seq);
    for (let i = 1; i < list.length; i++) {
      const [prev, next] = [sentAt.get(list[i - 1].deliveryId), sentAt.get(list[i].deliveryId)];
      if (next !== undefined && (prev === undefined || next < prev)) orderViolations++;
      if (prev !== undefined && next !== undefined && next >= prev) chainGaps.push(next - prev);
    }
  }

  const steps = analyzeTrace(trace, [...byConversation.values()].map((list) => list.map((d) => d.deliveryId)), t1);
  // The emulator's own part: the same notifications through Pub/Sub to 4 subscribers that call
  // the no-op function 3 times for each (the round trips of claim, start, complete) and nothing else.
  const floorDrain = await noopDrain(records, connectors, pulledPerConnector, DEFAULT_PULL_CONCURRENCY, integration.key, drainBoxMs);
  log(`throughput: the same ${records.length} notifications drained with a no-op handler: ${floorDrain.perSecond.toFixed(1)}/s`);

  // Spread: the rate in each successive tenth of what was delivered.
  const times = [...sentAt.values()].filter((t) => t <= t1 + drainMs).sort((a, b) => a - b);
  const tenth = Math.floor(times.length / 10);
  const windowRates = [];
  for (let w = 0; tenth > 0 && w < 10; w++) {
    const from = w === 0 ? t1 : times[tenth * w - 1];
    windowRates.push(tenth / ((times[tenth * (w + 1) - 1] - from) / 1000));
  }
  const deliveriesPerSecond = sentInTime / (drainMs / 1000);
  const combinedFloor = 1 / (1 / floorDrain.perSecond + 3 / median(raw.mix4));
  const perSecond = (rates) => summarize(rates, 1);
  return {
    replies: total,
    conversations,
    connectors,
    concurrencyPerConnector: DEFAULT_PULL_CONCURRENCY,
    pulledPerConnector,
    scaledDown: QUICK,
    writeRepliesMs: Math.round(writtenMs),
    sequenced,
    sequencingSeconds: Number((sequencingMs / 1000).toFixed(1)),
    sequencingFinished: sequenced === total,
    repliesSequencedPerSecond: Number((sequenced / (sequencingMs / 1000)).toFixed(2)),
    delivered: sentInTime,
    deliveredIncludingInFlightAtLimit: sentAt.size,
    drainFinished: finished,
    drainSeconds: Number((drainMs / 1000).toFixed(1)),
    deliveriesPerSecond: Number(deliveriesPerSecond.toFixed(2)),
    deliveriesPerSecondByTenth: windowRates.length > 0 ? summarize(windowRates, 2) : null,
    rawTxPerSecond: { oneLoop: perSecond(raw.mix1), fourLoops: perSecond(raw.mix4), fourLoopsStartOnly: perSecond(raw.start4) },
    ratioToRawTx: summarize(raw.mix4.map((r) => deliveriesPerSecond / r)),
    // A delivery needs at least 3 operations (claim, start, complete): the floor is raw / 3.
    ratioToRawDeliveries: summarize(raw.mix4.map((r) => deliveriesPerSecond / (r / 3))),
    workerWarmUpSeconds: Number((warmUpMs / 1000).toFixed(1)),
    drainCpuSeconds: drainCpu,
    processDeliveryOutcomes: outcomes,
    steps,
    noopDrain: floorDrain,
    ratioToNoopDrain: Number((deliveriesPerSecond / floorDrain.perSecond).toFixed(3)),
    // Both floors on the same two cores: a delivery costs at least the no-op drain's time per
    // notification (Pub/Sub, Hosting, the Functions emulator) plus its 3 raw transactions' time.
    combinedFloorPerSecond: Number(combinedFloor.toFixed(2)),
    ratioToCombinedFloor: Number((deliveriesPerSecond / combinedFloor).toFixed(3)),
    notificationToSentMs: summarize(notificationToSent, 1),
    notificationToSentP95Ms: Number(percentileOf(notificationToSent, 0.95).toFixed(1)),
    noopTripleMs: summarize(noopTriples, 1),
    noopTripleP95Ms: Number(percentileOf(noopTriples, 0.95).toFixed(1)),
    notificationToSentRatioP50: Number((median(notificationToSent) / median(noopTriples)).toFixed(2)),
    chainGapMs: chainGaps.length > 0 ? summarize(chainGaps, 1) : null,
    chainGapP95Ms: chainGaps.length > 0 ? Number(percentileOf(chainGaps, 0.95).toFixed(1)) : null,
    chainGapRatioP50: chainGaps.length > 0 ? Number((median(chainGaps) / median(notificationToSent)).toFixed(2)) : null,
    statusSentInFirestore: records.filter((d) => d.status === 'sent').length,
    orderViolations,
  };
}

/**
 * Grows the Functions emulator's worker pool of each function behind `paths` to `count` processes
 * (one request per process there: see the drain): `count` requests at once to each, twice (the
 * second round finds the processes idle). Answers do not matter (an unknown delivery is a 404).
 * Returns the time taken.
 */
async function warmWorkers(paths, count, key) {
  const t = performance.now();
  for (let round = 0; round < 2; round++) {
    await Promise.all(paths.flatMap((path) => Array.from({ length: count }, (_, i) => post(path, key, { deliveryId: `d_warm-${i}`, requestId: 'warm', leaseId: 'l_warm', providerMessageIds: ['p'] }))));
  }
  return performance.now() - t;
}

/**
 * The drain's emulator floor: the notifications of `records` published again, to a new topic, and
 * pulled by `subscribers` subscriber clients (the drain's flow control), each handling up to
 * `concurrency` at once and one per conversation at a time, as runPullLoop does, with 3 sequential
 * round trips to the no-op function and an ack for each. Pub/Sub, Hosting and the Functions
 * emulator, without the service.
 */
async function noopDrain(records, subscribers, pulledPerSubscriber, concurrency, key, boxMs) {
  await warmWorkers([NOOP_PATH], subscribers * concurrency, key);
  const topic = await newTopic(true);
  const publisher = pubsub.topic(topic.path.split('/').pop(), { batching: { maxMessages: 100, maxMilliseconds: 10 } });
  await Promise.all(
    records.map((d) =>
      publisher.publishMessage({
        json: { deliveryId: d.deliveryId, workspaceId: d.workspaceId, integrationId: d.integrationId, conversationId: d.conversationId, messageId: d.messageId },
      }),
    ),
  );
  const handled = new Set();
  let done;
  const allHandled = new Promise((resolve) => (done = resolve));
  const clients = [];
  const cpuAtStart = cpuSnapshot();
  const t0 = performance.now();
  for (let s = 0; s < subscribers; s++) {
    const subscription = new PubSub({ projectId: PROJECT }).subscription(topic.subscription.name, {
      flowControl: { maxMessages: pulledPerSubscriber, allowExcessMessages: false },
      minAckDeadline: ACK_DEADLINE,
      maxAckDeadline: ACK_DEADLINE,
    });
    clients.push(subscription);
    // Waiting messages (each parsed once, on arrival), in arrival order; a message starts when a
    // slot is free and its conversation is not busy.
    const waiting = [];
    const busy = new Set();
    let inFlight = 0;
    const pump = () => {
      for (let i = 0; i < waiting.length && inFlight < concurrency; ) {
        const { message, conversationId, deliveryId } = waiting[i];
        if (busy.has(conversationId)) {
          i++;
          continue;
        }
        waiting.splice(i, 1);
        busy.add(conversationId);
        inFlight++;
        void (async () => {
          try {
            for (let k = 0; k < 3; k++) await post(NOOP_PATH, key, { deliveryId });
            message.ack();
            handled.add(deliveryId);
            if (handled.size === records.length) done();
          } catch {
            message.nack();
          } finally {
            busy.delete(conversationId);
            inFlight--;
            pump();
          }
        })();
      }
    };
    subscription.on('message', (message) => {
      const { conversationId, deliveryId } = JSON.parse(message.data.toString());
      waiting.push({ message, conversationId, deliveryId });
      pump();
    });
    subscription.on('error', (err) => log(`no-op drain subscriber error: ${err.message}`));
  }
  const finished = await Promise.race([allHandled.then(() => true), sleep(boxMs).then(() => false)]);
  const ms = performance.now() - t0;
  const cpuSeconds = cpuBetween(cpuAtStart, cpuSnapshot());
  await Promise.all(clients.map((c) => c.close()));
  return { notifications: records.length, handled: handled.size, finished, seconds: Number((ms / 1000).toFixed(1)), perSecond: handled.size / (ms / 1000), cpuSeconds };
}

// ------------------------------------------------------------------------------------ reply latency

/**
 * Reply written -> notification pulled, paired round by round with the floor (document written ->
 * one trigger -> one publish -> pulled), both on one topic with one streaming-pull subscriber.
 */
/**
 * Recovery: the connectors are down while replies arrive at a fixed rate, then start (4
 * `runPullLoop`s with their defaults, catch-up walk included) while replies keep arriving. Catch-up
 * time: from the start until every reply written while they were down is sent; compared with
 * backlog / floor rate (raw direct transactions of 4 loops / 3, measured in this section). Every
 * reply written is then checked sent exactly once (one provider call per delivery) and in order
 * within its conversation.
 */
async function recovery() {
  const conversations = pick(20, 5);
  const perSecond = pick(5, 4);
  const downSeconds = pick(30, 8);
  const connectors = 4;
  const catchUpBoxMs = pick(180_000, 60_000);

  const rawIntegration = await newIntegration((await newTopic(false)).path);
  const patterns = [];
  for (let w = 0; w < connectors; w++) patterns.push(await recordPatterns(rawIntegration));
  await quiesce('raw transaction fixtures');
  const raw4 = await rawTransactions(patterns, connectors, ['claim', 'start', 'complete'], pick(3, 2), pick(3, 2));
  const floorPerSecond = median(raw4) / 3;

  const topic = await newTopic(true);
  const integration = await newIntegration(topic.path);
  const convs = await bulkDeliveries(integration, conversations, 0);
  // The Functions emulator's worker processes, as for the drain (see throughput): started before
  // the outage, so that the catch-up is not 120 cold starts.
  await warmWorkers([PATHS.claim, PATHS.start, PATHS.complete], connectors * DEFAULT_PULL_CONCURRENCY, integration.key);
  /** Every reply written: its delivery, conversation and time. */
  const written = [];
  let writing = true;
  const writeStarted = performance.now();
  const writer = (async () => {
    for (let i = 0; writing; i++) {
      const wait = writeStarted + (i * 1000) / perSecond - performance.now();
      if (wait > 0) await sleep(wait);
      if (!writing) break;
      const { conversationId } = convs[i % convs.length];
      const [replyId] = await writeReplies(integration, conversationId, 1);
      written.push({ deliveryId: deliveryIdFor(conversationId, replyId), conversationId, at: performance.now() });
    }
  })();
  await sleep(downSeconds * 1000);

  const backlog = written.map((w) => w.deliveryId);
  const calls = new Map();
  const sentAt = new Map();
  const started = performance.now();
  const loops = [];
  for (let c = 0; c < connectors; c++) {
    const client = new ConnectorClient({ integrationKey: integration.key, baseUrl: BASE_URL });
    const subscription = new PubSub({ projectId: PROJECT }).subscription(topic.subscription.name, { minAckDeadline: ACK_DEADLINE, maxAckDeadline: ACK_DEADLINE });
    const send = ({ deliveryId }) => {
      calls.set(deliveryId, (calls.get(deliveryId) ?? 0) + 1);
      return [`p-${deliveryId}`];
    };
    const onEvent = (event) => {
      if (event.type === 'handled' && event.result?.kind === 'sent' && !sentAt.has(event.result.deliveryId)) sentAt.set(event.result.deliveryId, performance.now());
    };
    loops.push(runPullLoop(client, subscription, send, { onEvent }));
  }
  const caughtUp = () => backlog.every((id) => sentAt.has(id));
  while (!caughtUp() && performance.now() - started < catchUpBoxMs) await sleep(100);
  const catchUpMs = performance.now() - started;
  const finished = caughtUp();
  writing = false;
  await writer;
  // The replies written during the catch-up too, then the check.
  for (const until = performance.now() + 60_000; written.some((w) => !sentAt.has(w.deliveryId)) && performance.now() < until; ) await sleep(200);
  await Promise.all(loops.map((loop) => loop.stop()));

  let orderViolations = 0;
  const byConversation = new Map();
  for (const w of written) byConversation.set(w.conversationId, [...(byConversation.get(w.conversationId) ?? []), w.deliveryId]);
  for (const ids of byConversation.values()) {
    for (let i = 1; i < ids.length; i++) {
      const [prev, next] = [sentAt.get(ids[i - 1]), sentAt.get(ids[i])];
      if (next !== undefined && (prev === undefined || next < prev)) orderViolations++;
    }
  }
  const sentTwice = [...calls.values()].filter((n) => n > 1).length;
  const notSent = written.filter((w) => !sentAt.has(w.deliveryId)).length;
  const idealSeconds = backlog.length / floorPerSecond;
  log(`recovery: ${backlog.length} replies written in ${downSeconds} s down, caught up in ${(catchUpMs / 1000).toFixed(1)} s (backlog / floor: ${idealSeconds.toFixed(1)} s); ${written.length} written in all, ${notSent} not sent, ${sentTwice} sent twice, ${orderViolations} out of order`);
  return {
    conversations,
    connectors,
    repliesPerSecond: perSecond,
    downSeconds,
    backlog: backlog.length,
    written: written.length,
    caughtUp: finished,
    catchUpSeconds: Number((catchUpMs / 1000).toFixed(1)),
    floorDeliveriesPerSecond: Number(floorPerSecond.toFixed(1)),
    idealSeconds: Number(idealSeconds.toFixed(1)),
    catchUpRatio: Number((catchUpMs / 1000 / idealSeconds).toFixed(2)),
    notSent,
    sentTwice,
    orderViolations,
  };
}

async function replyLatency() {
  const rounds = pick(30, 10);
  const warmup = 3;
  const topic = await newTopic(true);
  const integration = await newIntegration(topic.path);
  const [conversation] = await newConversations(integration, 1);
  const waiting = new Map();
  const subscriber = new PubSub({ projectId: PROJECT }).subscription(topic.subscription.name, { minAckDeadline: ACK_DEADLINE, maxAckDeadline: ACK_DEADLINE });
  subscriber.on('message', (message) => {
    const at = performance.now();
    message.ack();
    const body = JSON.parse(message.data.toString('utf8'));
    const key = body.floorId ?? body.messageId;
    waiting.get(key)?.(at);
  });
  const arrival = (key, timeoutMs = 60_000) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`replyLatency: nothing pulled for ${key} in ${timeoutMs / 1000} s`)), timeoutMs);
      waiting.set(key, (at) => {
        clearTimeout(timer);
        waiting.delete(key);
        resolve(at);
      });
    });
  const floorOnce = async () => {
    const ref = db().collection('benchFloor').doc();
    const pulled = arrival(ref.id);
    const t0 = performance.now();
    await ref.create({ topic: topic.path });
    return (await pulled) - t0;
  };
  const replyOnce = async () => {
    const ref = db().collection('workspaces').doc(integration.workspaceId).collection('conversations').doc(conversation.conversationId).collection('messages').doc();
    const pulled = arrival(ref.id);
    const t0 = performance.now();
    await ref.create({ direction: 'outbound', author: { type: 'operator', uid: 'bench-operator' }, text: 'Reply latency probe', createdAt: FieldValue.serverTimestamp() });
    return (await pulled) - t0;
  };
  const floor = [];
  const reply = [];
  for (let round = 0; round < warmup + rounds; round++) {
    // Alternate which goes first, and let the triggers settle in between.
    let floorMs;
    let replyMs;
    if (round % 2 === 0) {
      floorMs = await floorOnce();
      replyMs = await replyOnce();
    } else {
      replyMs = await replyOnce();
      floorMs = await floorOnce();
    }
    await sleep(300);
    if (round < warmup) continue;
    floor.push(floorMs);
    reply.push(replyMs);
  }
  await subscriber.close();
  log(`replyLatency: reply p50 ${median(reply).toFixed(0)} ms, floor p50 ${median(floor).toFixed(0)} ms`);
  return {
    rounds,
    replyMs: summarize(reply, 1),
    floorMs: summarize(floor, 1),
    replyP95Ms: Number(percentileOf(reply, 0.95).toFixed(1)),
    floorP95Ms: Number(percentileOf(floor, 0.95).toFixed(1)),
    ratioP50: Number((median(reply) / median(floor)).toFixed(2)),
    ratioP95: Number((percentileOf(reply, 0.95) / percentileOf(floor, 0.95)).toFixed(2)),
    pairedRatio: summarize(reply.map((r, i) => r / floor[i])),
  };
}

// ------------------------------------------------------------------------------ attachment fetch

/** POST/GET `url`, the whole answer read; resolves to `{ status, bytes }`. */
async function download(url, init) {
  const res = await fetch(url, init);
  return { status: res.status, bytes: Buffer.from(await res.arrayBuffer()) };
}

async function attachmentFetch() {
  const SIZE = 10 * 1024 * 1024;
  const reps = pick(5, 3);
  const perRep = pick(10, 4);
  const storeDir = process.env.LOCAL_IMAGE_DIR;
  if (!storeDir) throw new Error('LOCAL_IMAGE_DIR is not set (the functions must use the local object store)');
  const topic = await newTopic(false);
  const integration = await newIntegration(topic.path);
  const key = integration.key;
  // One delivery per repetition (a fresh lease each), each with its own stored object (same bytes).
  const deliveries = await attachmentDeliveries(integration, reps, { size: SIZE, storeDir });
  const expected = deliveries[0].sha256;
  const server = await startStoreServer(storeDir);
  try {
    await quiesce('attachment fixtures');
    const claimOf = async ({ deliveryId }) => {
      const r = await post(PATHS.claim, key, { deliveryId, requestId: randomUUID() });
      if (r.status !== 200 || r.body.status !== 'ready' || r.body.message?.attachments?.length !== 1) throw new Error(`attachment claim: ${r.status} ${JSON.stringify(r.body)}`);
      return { deliveryId, leaseId: r.body.leaseId, attachmentId: r.body.message.attachments[0].attachmentId };
    };
    const check = (what, r) => {
      if (r.status !== 200 || r.bytes.length !== SIZE || createHash('sha256').update(r.bytes).digest('hex') !== expected) throw new Error(`${what}: HTTP ${r.status}, ${r.bytes.length} bytes, not the stored file`);
    };
    const steps = (lease, objectPath) => ({
      fetch: () => download(`${BASE_URL}/v1/deliveries/attachment`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(lease) }),
      direct: () => download(server.urlOf(objectPath)),
      noop: () => download(`${BASE_URL}${NOOP_FILE_PATH}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ path: objectPath }) }),
      // The same no-op called at the Functions emulator's own address: Hosting's hop left out.
      noopNoHosting: () => download(`${FUNCTIONS_URL}/benchNoopFile`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ path: objectPath }) }),
      read: async () => ({ status: 200, bytes: await readFile(objectPath) }),
    });
    // Warm-up, checking every path answers the stored bytes: the function's worker, the key cache, the no-op's worker.
    const warm = steps(await claimOf(deliveries[0]), deliveries[0].path);
    for (const [name, step] of Object.entries(warm)) for (let i = 0; i < 2; i++) check(name, await step());
    const perRepMedians = { fetch: [], direct: [], noop: [], noopNoHosting: [], read: [] };
    for (let rep = 0; rep < reps; rep++) {
      const run = rep === 0 ? warm : steps(await claimOf(deliveries[rep]), deliveries[rep].path);
      const samples = { fetch: [], direct: [], noop: [], noopNoHosting: [], read: [] };
      const names = Object.keys(samples);
      for (let i = 0; i < perRep; i++) {
        // Rotate the order inside each round so drift and background work hit all alike.
        for (let k = 0; k < names.length; k++) {
          const name = names[(i + k) % names.length];
          const t0 = performance.now();
          const r = await run[name]();
          samples[name].push(performance.now() - t0);
          if (r.status !== 200 || r.bytes.length !== SIZE) throw new Error(`${name}: HTTP ${r.status}, ${r.bytes.length} bytes`);
        }
      }
      for (const name of names) perRepMedians[name].push(median(samples[name]));
      log(`attachmentFetch: rep ${rep + 1}/${reps}: fetch ${median(samples.fetch).toFixed(0)} ms, direct ${median(samples.direct).toFixed(0)} ms, no-op ${median(samples.noop).toFixed(0)} ms, in-process read ${median(samples.read).toFixed(1)} ms`);
    }
    const ratio = (a, b) => summarize(perRepMedians[a].map((x, i) => x / perRepMedians[b][i]));
    return {
      bytes: SIZE,
      reps,
      requestsPerRep: perRep,
      fetchMs: summarize(perRepMedians.fetch, 1),
      directMs: summarize(perRepMedians.direct, 1),
      noopFileMs: summarize(perRepMedians.noop, 1),
      noopFileNoHostingMs: summarize(perRepMedians.noopNoHosting, 1),
      noopNoHostingToDirect: ratio('noopNoHosting', 'direct'),
      inProcessReadMs: summarize(perRepMedians.read, 2),
      ratioToDirect: ratio('fetch', 'direct'),
      ratioToNoopFile: ratio('fetch', 'noop'),
      noopFileToDirect: ratio('noop', 'direct'),
      ratioToInProcessRead: ratio('fetch', 'read'),
    };
  } finally {
    server.stop();
  }
}

// ------------------------------------------------------------------------------------ main

await runSections('stack', { overhead, replyLatency, attachmentFetch, throughput, recovery }, { close: () => Promise.all([pubsub.close(), db().terminate()]) });
