/**
 * Bench-only baselines (never deployed: only bench/lib/stack-config.mjs, the emulator config of
 * `npm run bench`, declares this codebase). The same Hosting -> Functions emulator path as the
 * service's endpoints, with the same HTTP options, and no work:
 *
 * - benchNoop: answers a fixed JSON. The overhead figures divide by it.
 * - benchNoopLogged: the same plus one structured log line shaped like the service's request
 *   log, to show how much of the overhead is the emulator's handling of a log line.
 * - benchNoopFile: streams the file the request names (`{ "path": <absolute path> }`, a stored
 *   attachment in the local object store) and answers its bytes, with the HTTP options of
 *   getDeliveryAttachment (functions/src/operations.ts): the floor of any function that serves a
 *   stored file through Hosting, for the attachment fetch figure.
 * - benchFloorPublish: a Firestore trigger that publishes one message and does nothing else, the
 *   floor of "operator reply written -> notification pulled" (a document written -> one trigger ->
 *   one publish -> pulled): the service's reply trigger does its sequencing transaction on top.
 */
const { randomBytes } = require('node:crypto');
const { open } = require('node:fs/promises');
const { pipeline } = require('node:stream/promises');
const { performance } = require('node:perf_hooks');
const logger = require('firebase-functions/logger');
const { onRequest } = require('firebase-functions/v2/https');
const { onDocumentCreated } = require('firebase-functions/v2/firestore');
// The service's region (functions/src/platform/region.ts): the emulator runs this codebase from
// its directory in the repository, so the scripts' reader is at hand.
const { REGION } = require('../../scripts/lib/region.cjs');

let pubsub;
/** Created on first use, like the service's own client (functions/src/platform/pubsub.ts). */
function pubsubClient() {
  const { PubSub } = require('@google-cloud/pubsub');
  pubsub ??= new PubSub();
  return pubsub;
}

const OPTIONS = { region: REGION, cors: false, invoker: 'public', concurrency: 80, maxInstances: 20, timeoutSeconds: 60, memory: '256MiB' };
const ANSWER = JSON.stringify({ status: 'ok' });

function answer(res) {
  res.status(200).setHeader('content-type', 'application/json; charset=utf-8');
  res.send(ANSWER);
}

module.exports.benchNoop = onRequest(OPTIONS, (req, res) => answer(res));

module.exports.benchNoopLogged = onRequest(OPTIONS, (req, res) => {
  const startedAt = performance.now();
  answer(res);
  logger.info('request', {
    requestId: `req_${randomBytes(12).toString('base64url')}`,
    endpoint: 'POST /bench/noop-logged',
    status: 200,
    integrationId: 'bench',
    workspaceId: 'bench',
    keyPrefix: 'sdk_test_AAAA',
    durationMs: Math.round(performance.now() - startedAt),
  });
});

module.exports.benchNoopFile = onRequest({ ...OPTIONS, memory: '1GiB', cpu: 1, concurrency: 16 }, async (req, res) => {
  // Streamed like the service's answer (functions/src/platform/http/streamed-body.ts), without its checks.
  const handle = await open(String(req.body?.path), 'r');
  const { size } = await handle.stat();
  res.status(200).setHeader('content-type', 'application/pdf');
  res.setHeader('content-length', String(size));
  await pipeline(handle.createReadStream(), res);
});

module.exports.benchFloorPublish = onDocumentCreated({ region: REGION, document: 'benchFloor/{id}' }, async (event) => {
  const data = event.data?.data();
  if (typeof data?.topic !== 'string') return;
  // The same batching settings as the service's publisher (functions/src/deliveries/publisher.ts).
  await pubsubClient().topic(data.topic, { batching: { maxMessages: 1, maxMilliseconds: 0 } }).publishMessage({ json: { floorId: event.params.id } });
});
