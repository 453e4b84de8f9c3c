/**
 * The compiled service (functions/lib) loaded in the bench process, against the emulators whose
 * addresses `firebase emulators:exec` put in the environment: the HTTP handlers called in-process
 * with plain request/response objects (functions/src/http/types.ts), and fixtures made with the
 * service's own code (admin CLI for integrations, the messages handler for conversations, the
 * reply trigger's `sequenceReplies` for deliveries).
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { FUNCTIONS_LIB } from './build.mjs';
import { mapLimit, sleep } from './stats.mjs';

const require = createRequire(import.meta.url);

if (!process.env.FIRESTORE_EMULATOR_HOST) throw new Error('run inside `firebase emulators:exec` (FIRESTORE_EMULATOR_HOST is not set)');
process.env.GCLOUD_PROJECT ??= 'demo-support-desk';
process.env.METADATA_SERVER_DETECTION ??= 'none';

const lib = (path) => require(join(FUNCTIONS_LIB, path));
export const { db } = lib('platform/firebase.js');
const messagesHttp = lib('messages/http.js');
export const { incomingMessages } = messagesHttp;
const { messageEvents } = messagesHttp;
/** `PUT /v1/channel` (operationId updateChannel). */
const { updateChannel } = messagesHttp.endpoints;
/** The delivery handlers, by operationId (functions/src/operations.ts). */
const { claimDelivery, startDelivery, extendDeliveryLease, completeDelivery, failDelivery, reportDeliveryReceipt, getDeliveryAttachment, listPendingDeliveries } = lib('deliveries/http.js').endpoints;
export { listPendingDeliveries };
const { createIntegration } = lib('integrations/admin.js');
const { sequenceAndPublish, sequenceReplies } = lib('deliveries/sequencing.js');
const { deliveryCheckOf, deliveryCheckRef, deliveryRef, deliveryQueueRef } = lib('deliveries/store.js');
const { deliveryMirror } = lib('deliveries/reply.js');
const { RELEASE_FIELD, storedReleaseFacts, storedUnfinished, UNFINISHED_FIELD } = lib('rules/ordering.js');
const { newDelivery, withLiveness, withPendingAt } = lib('rules/record.js');
const { conversationIdFor, deliveryIdFor } = lib('platform/ids.js');
/** A reply's delivery id (functions/src/platform/ids.ts). */
export { deliveryIdFor };
const { catchUpPage } = lib('deliveries/catch-up-list.js');
const { shardOf } = lib('platform/shards.js');
const { config } = lib('platform/config.js');
/** The start trigger's work (functions/src/deliveries/starts.ts) and the ids it derives (functions/src/rules/starts.ts). */
const { takeStart } = lib('deliveries/starts.js');
const { startedConversationId, startMessageId } = lib('rules/starts.js');
/** The reply trigger's work: sequencing, then the publish of what it committed. */
export { sequenceAndPublish };

/** The catch-up list's own Firestore reads (one query per list shard, merged), run directly: no handler, no auth. */
export function pendingQuery(integration, limit, now = Date.now()) {
  return catchUpPage(db(), integration, { limit, now });
}
const { FieldValue, Timestamp } = require(require.resolve('firebase-admin/firestore', { paths: [FUNCTIONS_LIB] }));

export const HANDLERS = {
  message: incomingMessages,
  event: messageEvents,
  channel: updateChannel,
  claim: claimDelivery,
  start: startDelivery,
  extend: extendDeliveryLease,
  complete: completeDelivery,
  fail: failDelivery,
  receipt: reportDeliveryReceipt,
  attachment: getDeliveryAttachment,
};

/** Calls a handler in-process with a plain request; resolves to `{ status, headers, body }`. */
export async function call(handler, { key, body, rawBody, contentType = 'application/json', method = 'POST' }) {
  const req = {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': contentType },
    rawBody: rawBody ?? Buffer.from(JSON.stringify(body)),
  };
  const res = {
    statusCode: 0,
    headers: {},
    payload: null,
    headersSent: false,
    status(code) {
      this.statusCode = code;
      return this;
    },
    setHeader(name, value) {
      this.headers[name.toLowerCase()] = value;
    },
    send(payload) {
      this.payload = payload;
      this.headersSent = true;
    },
  };
  await handler(req, res);
  const text = Buffer.isBuffer(res.payload) ? res.payload.toString('utf8') : String(res.payload);
  return { status: res.statusCode, headers: res.headers, body: JSON.parse(text) };
}

/** Like `call`, but throws unless the status is `expected`. */
export async function callOk(handler, request, expected = [200, 201]) {
  const res = await call(handler, request);
  if (!expected.includes(res.status)) throw new Error(`${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

const ABORTED = 10;
const ALREADY_EXISTS = 6;

const INVALID_ARGUMENT = 3;

/**
 * The emulator's ways of giving up on a transaction under concurrency: a lock timeout (ABORTED),
 * and a transaction it expired while the client still used it (INVALID_ARGUMENT "Transaction is
 * invalid or closed"; the client library does not retry that one).
 */
const emulatorGaveUp = (err) => err?.code === ABORTED || (err?.code === INVALID_ARGUMENT && /transaction is invalid or closed/i.test(String(err?.message)));

/**
 * Fixture steps and raw baseline transactions are retried when the emulator gives up on them (see
 * `emulatorGaveUp`): it does under concurrent transactions; the time lost stays in what is measured.
 */
export async function retrying(fn, attempts = 8) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (!emulatorGaveUp(err) || attempt >= attempts) throw err;
      await sleep(100 * attempt);
    }
  }
}

/** A fresh workspace with one integration (replies to `topic` when given), made by the admin CLI's code. */
export async function newIntegration(topic) {
  const workspaceId = `bench_${randomUUID().slice(0, 8)}`;
  const issued = await createIntegration(db(), {
    workspaceId,
    name: 'bench',
    createdBy: 'bench',
    keyPrefix: 'sdk_test_',
    messagesPerMinute: 1_000_000,
    ...(topic ? { topic } : {}),
  });
  return { workspaceId, integrationId: issued.integrationId, key: issued.key };
}

/** A valid incoming JSON message body with a fresh eventId. */
export function messageBody(externalConversationId, customer = `cust-${externalConversationId}`) {
  return {
    eventId: `evt-${randomUUID()}`,
    externalConversationId,
    sender: { externalId: customer, displayName: 'Bench Customer', kind: 'customer' },
    message: { text: 'Hello, my order has not arrived yet.' },
  };
}

/**
 * A reaction event (`POST /v1/messages/events`) on the customer message `targetEventId` of
 * `externalConversationId`, with a fresh eventId; `removed` takes it back, so alternating requests
 * keep the target's `reactions` at one entry or none (every request is applied: 201).
 */
export function reactionBody(externalConversationId, targetEventId, removed = false) {
  return {
    eventId: `evt-${randomUUID()}`,
    externalConversationId,
    sender: { externalId: `cust-${externalConversationId}`, displayName: 'Bench Customer', kind: 'customer' },
    type: 'reaction',
    target: { eventId: targetEventId },
    emoji: '\u{1F44D}',
    ...(removed ? { removed: true } : {}),
  };
}

/** A typing event (`POST /v1/messages/events`) in `externalConversationId`, with a fresh eventId. */
export function typingBody(externalConversationId) {
  return {
    eventId: `evt-${randomUUID()}`,
    externalConversationId,
    sender: { externalId: `cust-${externalConversationId}`, kind: 'customer' },
    type: 'typing',
  };
}

/** `count` conversations started by a customer message (through the messages handler, in-process). */
export async function newConversations(integration, count, concurrency = 4) {
  return mapLimit(Array.from({ length: count }, (_, i) => i), concurrency, async (i) => {
    const externalConversationId = `chat-${i}-${randomUUID().slice(0, 8)}`;
    const request = { key: integration.key, body: messageBody(externalConversationId) };
    // A 503 (the emulator's lock timeout) is retried with the same eventId, as a connector would.
    const body = await retrying(async () => {
      const res = await call(incomingMessages, request);
      if (res.status === 503) throw Object.assign(new Error('503'), { code: ABORTED });
      if (res.status !== 200 && res.status !== 201) throw new Error(`${res.status} ${JSON.stringify(res.body)}`);
      return res.body;
    });
    return { externalConversationId, conversationId: body.conversationId };
  });
}

const messagesOf = (integration, conversationId) =>
  db().collection('workspaces').doc(integration.workspaceId).collection('conversations').doc(conversationId).collection('messages');

/** Writes `count` operator replies to a conversation exactly as the console does (in order). */
export async function writeReplies(integration, conversationId, count, text = (i) => `Reply ${i + 1}: your parcel is on its way.`, fields = () => ({})) {
  const ids = [];
  for (let i = 0; i < count; i++) {
    const ref = messagesOf(integration, conversationId).doc();
    const reply = { direction: 'outbound', author: { type: 'operator', uid: 'bench-operator' }, text: text(i), ...fields(i), createdAt: FieldValue.serverTimestamp() };
    await retrying(() =>
      ref.create(reply).catch((err) => {
        if (err?.code !== ALREADY_EXISTS) throw err; // an earlier attempt did write it
      }),
    );
    ids.push(ref.id);
  }
  return ids;
}

/**
 * `perConversation` replies in each conversation (`reply(c)`: `{ text, fields }` of each reply in
 * conversation c, else the default text), sequenced into deliveries by the reply
 * trigger's own transaction (`sequenceReplies`, idempotent: the emulated trigger may run it too).
 * Returns the delivery ids per conversation, in delivery order.
 */
export async function newDeliveries(integration, conversations, perConversation, concurrency = 4, reply = undefined) {
  return mapLimit(conversations, concurrency, async (c) => {
    // `reply(c)`: more fields of each reply of conversation c (e.g. its attachments), with its text.
    const extra = reply?.(c);
    const replyIds = extra ? await writeReplies(integration, c.conversationId, perConversation, () => extra.text, () => extra.fields) : await writeReplies(integration, c.conversationId, perConversation);
    // With Pub/Sub (stack session) as the reply trigger does: sequence, then publish what it
    // committed (the outbox trigger leaves those entries to their writer). Without (store session),
    // sequencing only: nothing there publishes.
    const sequence = process.env.PUBSUB_EMULATOR_HOST ? sequenceAndPublish : sequenceReplies;
    const { created } = await retrying(() => sequence(db(), integration.workspaceId, c.conversationId, replyIds[replyIds.length - 1]));
    if (created.length === perConversation) return { ...c, deliveryIds: created };
    // The emulated reply trigger got there first (stack session): read them back, in seq order.
    const deliveries = await retrying(() =>
      db().collection('workspaces').doc(integration.workspaceId).collection('deliveries').where('conversationId', '==', c.conversationId).get(),
    );
    const bySeq = deliveries.docs.map((d) => d.data()).sort((a, b) => a.seq - b.seq);
    if (bySeq.length !== perConversation) throw new Error(`expected ${perConversation} deliveries, found ${bySeq.length}`);
    return { ...c, deliveryIds: bySeq.map((d) => d.deliveryId) };
  });
}

/**
 * Many conversations with `perConversation` deliveries each, written in bulk (BulkWriter, no
 * transaction): the conversation as the messages handler leaves it, the operator replies with
 * their delivery mirror, the deliveries and the conversation's queue document as the reply trigger
 * creates them (the service's own `newDelivery`, `deliveryRef`, `deliveryMirror`,
 * `storedUnfinished`). For the fixtures that only need to exist: one sequencing transaction per
 * conversation is far too slow on the emulator for 1,000 of them.
 */
export async function bulkDeliveries(integration, count, perConversation) {
  const { workspaceId, integrationId } = integration;
  const writer = db().bulkWriter();
  writer.onWriteError((err) => err.failedAttempts < 10);
  const now = Date.now();
  const at = Timestamp.fromMillis(now);
  const result = [];
  for (let i = 0; i < count; i++) {
    const externalConversationId = `chat-bulk-${randomUUID().slice(0, 12)}`;
    const customer = `cust-${externalConversationId}`;
    const conversationId = conversationIdFor(integrationId, externalConversationId);
    const conversation = db().collection('workspaces').doc(workspaceId).collection('conversations').doc(conversationId);
    void writer.set(conversation, { integrationId, externalConversationId, lastSenderExternalId: customer, lastCustomerExternalId: customer, lastMessageAt: at, createdAt: at, updatedAt: at });
    const deliveryIds = [];
    const messageIds = [];
    for (let k = 0; k < perConversation; k++) {
      const reply = conversation.collection('messages').doc();
      messageIds.push(reply.id);
      const text = `Reply ${k + 1}: your parcel is on its way.`;
      const delivery = newDelivery({ deliveryId: deliveryIdFor(conversationId, reply.id), workspaceId, integrationId, conversationId, messageId: reply.id, seq: k + 1, text, now });
      void writer.set(reply, { direction: 'outbound', author: { type: 'operator', uid: 'bench-operator' }, text, createdAt: Timestamp.fromMillis(now + k), delivery: deliveryMirror(delivery, now) });
      void writer.set(deliveryRef(db(), workspaceId, delivery.deliveryId), delivery);
      deliveryIds.push(delivery.deliveryId);
    }
    // The queue document as sequencing leaves it: cursor and every delivery still unfinished.
    // The release facts of each delivery behind the first (deliveries/ordering.ts RELEASE_FIELD), as appending writes them.
    const unfinished = storedUnfinished(new Map(deliveryIds.map((id, k) => [k + 1, id])));
    const release = storedReleaseFacts(new Map(messageIds.slice(1).map((messageId, k) => [k + 2, { messageId, waiting: false }])));
    void writer.set(deliveryQueueRef(db(), workspaceId, conversationId), { nextSeq: perConversation + 1, lastReplyAt: Timestamp.fromMillis(now + perConversation - 1), lastReplyId: '', [UNFINISHED_FIELD]: unfinished, [RELEASE_FIELD]: release, updatedAt: at });
    result.push({ externalConversationId, conversationId, deliveryIds });
  }
  await writer.close();
  return result;
}

/**
 * `conversations` conversations of one integration, each with `finished` sent deliveries and one
 * claimable (queued, head) delivery after them, written in bulk as the service would leave them.
 * For the catch-up list: what it reads must not grow with the finished ones.
 */
export async function bulkFinishedThenPending(integration, conversations, finished) {
  const { workspaceId, integrationId } = integration;
  const writer = db().bulkWriter();
  writer.onWriteError((err) => err.failedAttempts < 10);
  const now = Date.now();
  for (let i = 0; i < conversations; i++) {
    const conversationId = conversationIdFor(integrationId, `chat-catch-up-${randomUUID().slice(0, 12)}`);
    for (let k = 0; k <= finished; k++) {
      // The claimable delivery of conversation i lies in list shard i mod LIST_SHARDS, so every
      // workspace size spreads its claimable deliveries over the list shards alike, and the docs a
      // page reads (one per delivery, one per empty shard) compare exactly between sizes.
      let messageId = `r-${k}-${randomUUID().slice(0, 8)}`;
      while (k === finished && shardOf(deliveryIdFor(conversationId, messageId), config().listShards) !== i % config().listShards) messageId = `r-${k}-${randomUUID().slice(0, 8)}`;
      const base = newDelivery({ deliveryId: deliveryIdFor(conversationId, messageId), workspaceId, integrationId, conversationId, messageId, seq: k + 1, text: 'hi', now: now - (finished - k) });
      // As writeDelivery stores them: a claimable one with its schedule and its check document.
      const record = k < finished ? { ...base, status: 'sent', head: true } : withLiveness(null, withPendingAt(null, { ...base, head: true }, now - conversations + i), 24 * 3_600_000);
      void writer.set(deliveryRef(db(), workspaceId, record.deliveryId), record);
      const check = deliveryCheckOf(record);
      if (check !== null) void writer.set(deliveryCheckRef(db(), record.deliveryId), check);
    }
  }
  await writer.close();
}

/** The conversation's queue document (deliveries/store.ts), which claim and complete read by id. */
export function queueDocument(integration, conversationId) {
  return deliveryQueueRef(db(), integration.workspaceId, conversationId);
}

const { attachmentPath, createImageStore } = lib('platform/object-store.js');
const { createUploadRecord, newAttachmentId } = lib('console-api/store.js');

/**
 * `count` deliveries of replies with one file of `size` bytes each (a PDF), made as the service
 * makes them: the integration gets the attachments capability, each upload is stored as the
 * console's upload handler stores it (console-api/store.ts `createUploadRecord`, then the object
 * at its per-upload path in the local object store at `storeDir`), the reply names it as the
 * console writes it, and the reply trigger's own sequencing turns it into a delivery that carries
 * the file. `distinct`: different bytes per upload (otherwise all uploads hold the same bytes).
 * Returns `{ deliveryId, conversationId, sha256, file, path }` each (`path`: the object's file).
 */
export async function attachmentDeliveries(integration, count, { size, storeDir, distinct = false }) {
  const { workspaceId, integrationId } = integration;
  await db().doc(`workspaces/${workspaceId}/integrations/${integrationId}`).update({ 'replies.attachments': { contentTypes: ['application/pdf'], maxBytes: size, maxCount: 5 } });
  const store = createImageStore({ kind: 'local', dir: storeDir });
  const conversations = await newConversations(integration, count);
  const files = new Map();
  let bytes = null;
  for (const c of conversations) {
    if (distinct || bytes === null) bytes = Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(size - 9)]);
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    const attachmentId = newAttachmentId();
    await createUploadRecord(db(), { workspaceId, conversationId: c.conversationId, attachmentId, uploadedBy: 'bench-operator', name: 'invoice.pdf', contentType: 'application/pdf', size, sha256, now: Date.now(), shardCount: config().queueShards });
    const objectPath = attachmentPath(workspaceId, c.conversationId, attachmentId);
    await store.put(objectPath, bytes, 'application/pdf');
    files.set(c.conversationId, { sha256, file: { attachmentId, name: 'invoice.pdf', contentType: 'application/pdf', size, sha256 }, path: join(storeDir, objectPath) });
  }
  const deliveries = await newDeliveries(integration, conversations, 1, 4, (c) => ({ text: 'Your invoice is attached.', fields: { attachments: [files.get(c.conversationId).file] } }));
  return deliveries.map((d) => ({ deliveryId: d.deliveryIds[0], conversationId: d.conversationId, ...files.get(d.conversationId) }));
}

// ------------------------------------------------------------------------------------ starts

/**
 * Lets the integration start conversations by phone, as an admin does (`conversations.start.addressKinds`
 * on the integration document: docs/contract.md#conversations-the-desk-starts).
 */
export async function enableStarts(integration) {
  await db().doc(`workspaces/${integration.workspaceId}/integrations/${integration.integrationId}`).update({ 'conversations.start.addressKinds': ['phone'] });
}

/** A fresh E.164 phone number (+49 151 and 8 random digits): every start goes to a new address. */
const newPhone = () => `+49151${String(randomBytes(4).readUInt32BE(0) % 100_000_000).padStart(8, '0')}`;

/**
 * A start request written as a member writes it (`conversationStarts/{startId}`, `body`: `{ text }`
 * or `{ template }`) to a new phone number. Returns its ids and the ids the service derives from
 * them (functions/src/rules/starts.ts): the started conversation and its start delivery.
 */
export async function writeStart(integration, body) {
  const { workspaceId, integrationId } = integration;
  const ref = db().collection('workspaces').doc(workspaceId).collection('conversationStarts').doc();
  const to = { kind: 'phone', value: newPhone() };
  await retrying(() =>
    ref.create({ integrationId, to, ...body, uid: 'bench-operator', requestedAt: FieldValue.serverTimestamp() }).catch((err) => {
      if (err?.code !== ALREADY_EXISTS) throw err; // an earlier attempt did write it
    }),
  );
  const conversationId = startedConversationId(integrationId, ref.id);
  return { startId: ref.id, to, conversationId, deliveryId: deliveryIdFor(conversationId, startMessageId(integrationId, ref.id)) };
}

/**
 * Takes a written start as its trigger does (`takeStart`, with the address its event carries). With the Functions emulator running,
 * the emulated trigger takes it too: whichever commits second finds it answered (`ignored`).
 */
export function takeWrittenStart(integration, start) {
  return takeStart(db(), integration.workspaceId, start.startId, integration.integrationId, start.to);
}

/**
 * `count` start deliveries, each the head of a new conversation of its own (so each is claimable
 * at once): written as a member writes them and taken by `takeStart`. Returns `writeStart`'s ids.
 */
export async function newStartDeliveries(integration, count, body, concurrency = 4) {
  return mapLimit(Array.from({ length: count }, (_, i) => i), concurrency, async () => {
    const start = await writeStart(integration, body);
    const outcome = await retrying(() => takeWrittenStart(integration, start));
    // `ignored`: the emulated trigger took it first (same ids); anything else is a fixture error.
    if (outcome.kind !== 'created' && outcome.kind !== 'ignored') throw new Error(`start not taken: ${JSON.stringify(outcome)}`);
    const delivery = await deliveryRef(db(), integration.workspaceId, start.deliveryId).get();
    if (!delivery.exists) throw new Error(`start ${start.startId}: no delivery ${start.deliveryId} (${JSON.stringify((await db().doc(`workspaces/${integration.workspaceId}/conversationStarts/${start.startId}`).get()).data())})`);
    return start;
  });
}
