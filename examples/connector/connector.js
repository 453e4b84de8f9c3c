/**
 * Example connector, the importable part (main.js only adds env, signals and exit codes).
 *
 *   loadConfig(env)              configuration from environment variables (defaults: the local stack)
 *   createFakeProvider()         a "channel adapter" that prints replies instead of sending them,
 *                                and edits / deletes them (`send.edit`, `send.unsend`) when the operator asks
 *   simulateCustomer(...)        the customer's side of the fake channel: an edit, a deletion, typing, reactions
 *   createReceiptStore()         providerMessageId -> deliveryId, what a channel's receipt webhook needs
 *   createMessageLog()           the connector's own log of what it sent and received, per customer
 *   purgeErasure(stores, e)      forgets one erased customer in both (idempotent)
 *   startErasures(...)           the SDK's processErasures at start-up and on a timer: purge, then ack
 *   startConnector(...)          the SDK's runPullLoop on a subscription, plus the receipts
 *   runConnector(config, deps)   everything main.js does: clients, startup message, loop
 *
 * The SDK does the delivery protocol (claim -> start -> provider ONCE -> complete / fail) and the
 * pull loop (ack / nack by outcome, periodic catch-up, bounded concurrency, clean stop); this
 * file only wires it to Pub/Sub and to a provider.
 */
import { randomUUID } from 'node:crypto';
import { PubSub } from '@google-cloud/pubsub';
import {
  ConnectorApiError,
  ConnectorClient,
  DEFAULT_CATCH_UP_INTERVAL_MS,
  DEFAULT_PULL_CONCURRENCY,
  DeliveryReportError,
  ProviderPermanentError,
  ProviderRetryableError,
  processErasures,
  runPullLoop,
} from '@support-desk/connector-sdk';
import { localStack } from './local-stack.js';

/** Defaults that are not about where the stack listens (that comes from `localStack()`). */
export const DEFAULTS = Object.freeze({
  subscription: 'connector-notifications-pull',
  externalConversationId: 'example-chat-1',
  customerId: 'example-customer-1',
  startupText: 'Hello from the example connector: my order #1234 has not arrived yet.',
});

export { DEFAULT_CATCH_UP_INTERVAL_MS };

/** How often the connector asks for erasures to purge (and once at start-up). */
export const DEFAULT_ERASURE_INTERVAL_MS = 300_000;

export class ConfigError extends Error {
  name = 'ConfigError';
}

const nonEmpty = (value) => (typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined);

/**
 * Reads the configuration. Only INTEGRATION_KEY is required in this repository: the API, the
 * project and the Pub/Sub emulator default to where the local stack listens (its firebase.json,
 * `stack`). A `demo-*` project (emulator-only by Firebase convention) uses the Pub/Sub emulator;
 * any other project uses real Pub/Sub (Application Default Credentials) unless
 * PUBSUB_EMULATOR_HOST is set. Without a stack to default to (`stack` null: a copy outside the
 * repository), API_BASE_URL and GCLOUD_PROJECT are required too.
 */
export function loadConfig(env = process.env, stack = localStack()) {
  const integrationKey = nonEmpty(env.INTEGRATION_KEY);
  if (integrationKey === undefined) throw new ConfigError('INTEGRATION_KEY is required (`npm start` prints the demo key)');
  const apiBaseUrl = nonEmpty(env.API_BASE_URL) ?? stack?.apiBaseUrl;
  if (apiBaseUrl === undefined) throw new ConfigError('API_BASE_URL is required outside the repository (no local stack to default to)');
  const projectId = nonEmpty(env.GCLOUD_PROJECT) ?? stack?.projectId;
  if (projectId === undefined) throw new ConfigError('GCLOUD_PROJECT is required outside the repository (no local stack to default to)');
  const interval = nonEmpty(env.CATCH_UP_INTERVAL_MS);
  const catchUpIntervalMs = interval === undefined ? DEFAULT_CATCH_UP_INTERVAL_MS : Number(interval);
  if (!(Number.isInteger(catchUpIntervalMs) && catchUpIntervalMs >= 1000)) throw new ConfigError('CATCH_UP_INTERVAL_MS must be an integer of at least 1000');
  const erasureInterval = nonEmpty(env.ERASURE_INTERVAL_MS);
  const erasureIntervalMs = erasureInterval === undefined ? DEFAULT_ERASURE_INTERVAL_MS : Number(erasureInterval);
  if (!(Number.isInteger(erasureIntervalMs) && erasureIntervalMs >= 1000)) throw new ConfigError('ERASURE_INTERVAL_MS must be an integer of at least 1000');
  const timeout = nonEmpty(env.PROVIDER_TIMEOUT_MS);
  const providerTimeoutMs = timeout === undefined ? undefined : Number(timeout);
  if (providerTimeoutMs !== undefined && !(Number.isInteger(providerTimeoutMs) && providerTimeoutMs > 0)) {
    throw new ConfigError('PROVIDER_TIMEOUT_MS must be a positive integer');
  }
  const emulatorDefault = projectId.startsWith('demo-') ? stack?.pubsubEmulatorHost : undefined;
  const pubsubEmulatorHost = nonEmpty(env.PUBSUB_EMULATOR_HOST) ?? emulatorDefault;
  if (pubsubEmulatorHost === undefined && projectId.startsWith('demo-')) {
    throw new ConfigError(`PUBSUB_EMULATOR_HOST is required: project ${projectId} exists on the emulator only`);
  }
  return {
    apiBaseUrl,
    fallbackBaseUrl: nonEmpty(env.FALLBACK_BASE_URL),
    integrationKey,
    projectId,
    subscription: nonEmpty(env.SUBSCRIPTION) ?? DEFAULTS.subscription,
    pubsubEmulatorHost,
    externalConversationId: nonEmpty(env.EXTERNAL_CONVERSATION_ID) ?? DEFAULTS.externalConversationId,
    customerId: nonEmpty(env.CUSTOMER_ID) ?? DEFAULTS.customerId,
    // STARTUP_TEXT="" skips the startup message.
    startupText: env.STARTUP_TEXT ?? DEFAULTS.startupText,
    providerTimeoutMs,
    catchUpIntervalMs,
    erasureIntervalMs,
    // CUSTOMER_EVENTS=on: the simulated customer edits, deletes, types and reacts (simulateCustomer).
    customerEvents: nonEmpty(env.CUSTOMER_EVENTS) === 'on',
  };
}

/**
 * The fake channel as the connector declares it (`client.channel.update`, docs/contract.md#channel):
 * a 24-hour reply window, as WhatsApp's, and two message templates the operator may send outside it.
 */
export const CHANNEL = Object.freeze({
  window: { seconds: 86_400 },
  templates: [
    { name: 'order_update', language: 'en-US', params: [{ name: 'name' }, { name: 'order', maxLength: 32 }], preview: 'Hi {{name}}, your order {{order}} has shipped.' },
    { name: 'follow_up', language: 'en-US', params: [], preview: 'Hello again! Do you still need help with your request?' },
  ],
});

/**
 * The thread the fake channel opens when the desk starts a conversation with a user by handle (a
 * direct chat with that user): its id derived from the handle, so a second start to the same
 * handle, and the user's answers, are in the same chat.
 */
export const startedThreadOf = (handle) => ({ externalConversationId: `dm-${handle}`, externalCustomerId: handle });

/**
 * A fake channel adapter: prints each reply (its text, then each file's name, type, size and
 * SHA-256, downloaded through the SDK's hash-checked `fetch()`) and returns a made-up provider
 * message id per part. A template reply is printed with its template and params (`template`), its
 * `text` being the preview filled in. To see the failure paths, put `#temporary` (a definite
 * temporary rejection: the service re-queues the delivery) or `#blocked` (a permanent rejection)
 * in the operator's reply, or start it with `#window`: the channel refuses it as outside its reply
 * window (WhatsApp's 131047), and the connector fails it `window_closed`, which closes the
 * conversation's window on the desk (the operator is offered the templates).
 */
export function createFakeProvider({ write = (line) => process.stdout.write(`${line}\n`) } = {}) {
  let sent = 0;
  // What the fake chat shows, by provider message id (what a real channel keeps on its side).
  const chat = new Map();
  const send = async function send({ text, recipient, attachments, template, start, signal }) {
    signal.throwIfAborted();
    // A conversation the desk starts (`start: true`): there is no chat yet, only the address. The
    // fake channel reaches a new customer by handle; it opens the direct chat and names it in the
    // result (`conversation`), which the SDK passes to `complete` so the start joins that thread.
    let thread;
    if (start === true) {
      const address = recipient.address;
      if (address?.kind !== 'handle') {
        write(`[fake-provider] start to ${address?.kind} ${address?.value}: rejected (this channel reaches new customers by handle only)`);
        throw new ProviderPermanentError('fake provider: new customers are reached by handle only', { code: 'recipient_unreachable' });
      }
      thread = startedThreadOf(address.value);
    }
    const to = thread === undefined ? `${recipient.externalConversationId} (customer ${recipient.externalCustomerId})` : `${thread.externalConversationId} (new customer ${thread.externalCustomerId})`;
    if (template === undefined && text.startsWith('#window')) {
      write(`[fake-provider] to ${to}: rejected (outside the channel's 24-hour reply window)`);
      throw new ProviderPermanentError('fake provider: outside the reply window', { code: 'window_closed' });
    }
    if (template !== undefined) write(`[fake-provider] to ${to}: template ${template.name} (${template.language}) ${JSON.stringify(template.params)}`);
    if (text.includes('#temporary')) {
      write(`[fake-provider] to ${to}: rejected for now (rate limited)`);
      throw new ProviderRetryableError('fake provider: rate limited', { code: 'rate_limited', retryAfterMs: 30_000 });
    }
    if (text.includes('#blocked')) {
      write(`[fake-provider] to ${to}: rejected (the customer blocked the bot)`);
      throw new ProviderPermanentError('fake provider: recipient blocked the bot', { code: 'recipient_blocked' });
    }
    // Files first, all of them, before anything is sent: a download that fails (or whose SHA-256
    // does not match) then leaves nothing half sent, and the SDK reports it as a retry or failure.
    const files = [];
    for (const attachment of attachments ?? []) files.push(await attachment.fetch({ signal }));
    const ids = [];
    const parts = [];
    const nextId = () => {
      sent += 1;
      return `fake-${sent}-${randomUUID().slice(0, 8)}`;
    };
    if (text !== '') {
      const id = nextId();
      write(`[fake-provider] to ${to}: ${JSON.stringify(text)} -> ${id}`);
      ids.push(id);
      parts.push({ part: 'text', status: 'sent', providerMessageIds: [id] });
    }
    for (const file of files) {
      const id = nextId();
      write(`[fake-provider] to ${to}: file ${JSON.stringify(file.name ?? file.attachmentId)} ${file.contentType}, ${file.size} bytes, sha256 ${file.sha256} -> ${id}`);
      ids.push(id);
      parts.push({ part: file.attachmentId, status: 'sent', providerMessageIds: [id] });
    }
    for (const id of ids) chat.set(id, { text });
    // Per-part results only when there were files: a text reply reports exactly what it always did.
    return { providerMessageIds: ids, ...(files.length === 0 ? {} : { parts }), ...(thread === undefined ? {} : { conversation: thread }) };
  };
  /**
   * The operator edited a sent reply (`replies.lifecycle.edit`): change the text of the messages
   * the reply was sent as (`target.providerMessageIds`, the ids `send` returned). Returns nothing:
   * an edit keeps the message's id, so the SDK completes with the target's ids. `#noedit` in the
   * new text plays a channel whose own edit window has passed (a permanent rejection).
   */
  send.edit = async ({ text, recipient, target, signal }) => {
    signal.throwIfAborted();
    if (text.includes('#noedit')) {
      write(`[fake-provider] edit of ${target.providerMessageIds.join(', ')}: rejected (the channel's edit window has passed)`);
      throw new ProviderPermanentError('fake provider: edit window passed', { code: 'edit_window_passed' });
    }
    // Only the text part is edited; a reply's files stay as they are.
    const textIds = target.parts?.find((p) => p.part === 'text')?.providerMessageIds ?? target.providerMessageIds;
    for (const id of textIds) chat.set(id, { text });
    write(`[fake-provider] to ${recipient.externalConversationId}: edited ${textIds.join(', ')} -> ${JSON.stringify(text)}`);
    return undefined;
  };
  /** The operator unsent a sent reply (`replies.lifecycle.unsend`): delete every message it was sent as. */
  send.unsend = async ({ recipient, target, signal }) => {
    signal.throwIfAborted();
    for (const id of target.providerMessageIds) chat.set(id, { deleted: true });
    write(`[fake-provider] to ${recipient.externalConversationId}: deleted ${target.providerMessageIds.join(', ')}`);
    return undefined;
  };
  /** What the fake chat shows of a provider message id: `{ text }`, `{ deleted: true }`, or undefined. */
  send.message = (providerMessageId) => {
    const shown = chat.get(providerMessageId);
    return shown === undefined ? undefined : { ...shown };
  };
  return send;
}

/**
 * The customer's side of the fake channel, posted through the SDK as a real connector relays its
 * channel's webhooks: the customer corrects their first message (`messages.edit`), writes a
 * message by mistake and deletes it (`messages.send` then `messages.delete`), types, and reacts
 * to each reply the provider sent (`messages.react` on its provider id; `reactToReply`). Each
 * event gets a stable eventId of the channel (derived here), so a retry is answered `duplicate`.
 * Returns `{ afterStartup, reactToReply }`; events `customer_event { event, outcome }` and
 * `customer_event_failed { event, error }` go to `onEvent`.
 */
export function simulateCustomer({ client, externalConversationId, customerId, onEvent = printEvent }) {
  const sender = { externalId: customerId, displayName: 'Example customer', kind: 'customer' };
  const base = { externalConversationId, sender };
  const post = async (event, call) => {
    try {
      const result = await call();
      onEvent({ type: 'customer_event', event, outcome: result.outcome ?? (result.duplicate ? 'duplicate' : 'applied') });
    } catch (error) {
      onEvent({ type: 'customer_event_failed', event, error });
    }
  };
  return {
    /** After the startup message (its eventId): a correction, a message sent by mistake and deleted, typing. */
    async afterStartup(startupEventId, startupText) {
      await post('edited', () => client.messages.edit({ ...base, eventId: `${startupEventId}:edit`, target: { eventId: startupEventId }, text: `${startupText} (order #1234, placed on Monday)` }));
      const mistake = `${startupEventId}:mistake`;
      // Sent with the channel's id of the message, the deletion names it by that id (as a channel's webhook would).
      const channelId = `chan-${mistake}`;
      await post('sent', () => client.messages.send({ ...base, eventId: mistake, providerMessageId: channelId, text: 'oops, wrong chat' }));
      await post('deleted', () => client.messages.delete({ ...base, eventId: `${mistake}:delete`, target: { providerMessageId: channelId } }));
      await post('typing', () => client.messages.typing({ ...base, eventId: `${startupEventId}:typing:${Date.now()}` }));
    },
    /** The customer reacts to a reply the fake provider sent (its first provider id). */
    reactToReply(providerMessageId) {
      return post('reaction', () => client.messages.react({ ...base, eventId: `reaction:${providerMessageId}`, target: { providerMessageId }, emoji: '👍' }));
    },
  };
}

/**
 * Receipts arrive from the channel keyed by ITS message id, but `deliveries.receipt` wants the
 * deliveryId: keep `providerMessageId -> deliveryId` when a delivery completes. In memory here; a
 * real connector uses its database (receipts may come days later, after a restart) or, when the
 * channel lets it choose the message id, derives the id from the deliveryId and needs no store.
 */
export function createReceiptStore() {
  // providerMessageId -> { deliveryId, recipient }: the recipient only so that an erasure can find its entries.
  const byProviderId = new Map();
  return {
    remember(deliveryId, providerMessageIds, recipient) {
      for (const id of providerMessageIds) byProviderId.set(id, { deliveryId, recipient });
    },
    deliveryOf(providerMessageId) {
      return byProviderId.get(providerMessageId)?.deliveryId;
    },
    /** Forgets every entry whose recipient matches `erased(recipient)`; returns how many. */
    purge(erased) {
      let removed = 0;
      for (const [id, entry] of byProviderId) {
        if (entry.recipient !== undefined && erased(entry.recipient)) {
          byProviderId.delete(id);
          removed += 1;
        }
      }
      return removed;
    },
    get size() {
      return byProviderId.size;
    },
  };
}

/**
 * The connector's own log of the conversation: every message it posted and every reply it sent,
 * with the customer and the external chat, as a real connector keeps them in its database (for
 * support, for threading). In memory here. This is what an erasure must reach too: the service
 * forgets the customer, then lists the erasure until the connector acknowledges it purged its copies.
 */
export function createMessageLog() {
  const entries = [];
  return {
    /** `{ direction: 'in' | 'out', externalConversationId, externalCustomerId, text, at?, id? }` */
    add(entry) {
      entries.push({ at: Date.now(), ...entry });
    },
    entries() {
      return entries.map((e) => ({ ...e }));
    },
    /** Removes the entries `erased(entry)` matches; returns how many. */
    purge(erased) {
      let removed = 0;
      for (let i = entries.length - 1; i >= 0; i -= 1) {
        if (erased(entries[i])) {
          entries.splice(i, 1);
          removed += 1;
        }
      }
      return removed;
    },
  };
}

/**
 * Forgets one erased customer (an item of `client.erasures.pendingItems()`): their own entries
 * anywhere, and everything of the external chats that were erased with them. Idempotent, as
 * processErasures requires (docs/decisions.md#erasure-on-the-connector-side): a second run finds
 * nothing and succeeds. Returns the counts removed.
 */
export function purgeErasure({ log, receipts }, erasure) {
  const chats = new Set(erasure.externalConversationIds);
  const erased = ({ externalConversationId, externalCustomerId }) => externalCustomerId === erasure.externalCustomerId || chats.has(externalConversationId);
  return { logEntries: log.purge(erased), receipts: receipts.purge(erased) };
}

/**
 * Runs the SDK's `processErasures` at start-up and every `intervalMs`: each erasure the service
 * lists is purged with `purge` (which must be idempotent), then acknowledged. Events:
 * `erasure_purged { erasureId, removed }`, `erasure_failed { erasureId, step, error }`,
 * `erasures_failed { error }` (the list could not be read; tried again at the next tick).
 * `stop()` waits for a run in progress.
 */
export function startErasures({ client, purge, onEvent = printEvent, intervalMs = DEFAULT_ERASURE_INTERVAL_MS }) {
  let running;
  const removedBy = new Map();
  const run = () => {
    running ??= processErasures(
      client,
      (erasure) => {
        removedBy.set(erasure.erasureId, purge(erasure));
      },
      {
        onErasure: (erasure, outcome) => {
          if (outcome.acknowledged) onEvent({ type: 'erasure_purged', erasureId: erasure.erasureId, removed: removedBy.get(erasure.erasureId) });
          else onEvent({ type: 'erasure_failed', erasureId: erasure.erasureId, step: outcome.step, error: outcome.error });
          removedBy.delete(erasure.erasureId);
        },
      },
    )
      .catch((error) => onEvent({ type: 'erasures_failed', error }))
      .finally(() => {
        running = undefined;
      });
    return running;
  };
  void run();
  const timer = setInterval(run, intervalMs);
  timer.unref();
  return {
    /** Runs now (or waits for the run in progress). */
    run,
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}

/**
 * What the channel's receipt webhook does: look the delivery up, report the receipt (any order,
 * retries welcome: receipts only move forward). Returns an event for `onEvent`.
 */
export async function reportReceipt(client, store, providerMessageId, status) {
  const deliveryId = store.deliveryOf(providerMessageId);
  if (deliveryId === undefined) return { type: 'receipt_unmatched', providerMessageId, status };
  try {
    await client.deliveries.receipt({ deliveryId, status, providerMessageId });
    return { type: 'receipt', deliveryId, providerMessageId, status };
  } catch (error) {
    // A failed receipt never undoes the delivery: report it and move on.
    return { type: 'receipt_failed', deliveryId, providerMessageId, status, error };
  }
}

/**
 * The processing loop: the SDK's `runPullLoop` on `subscription` (a @google-cloud/pubsub
 * Subscription), which parses every message, runs processDelivery, acks or nacks by outcome, and
 * walks the pending list at start-up and every `catchUpIntervalMs`. `onEvent` receives the loop's
 * events (`handled`, `duplicate_notification`, `invalid_notification`, `catch_up`,
 * `catch_up_failed`, `subscription_error`, `stopped`, and processDelivery's own), plus the example's `receipt` / `receipt_failed`: the fake
 * channel delivers at once, so its "delivered" webhook is played right after each completion.
 * `stop()` waits for the deliveries and receipts in progress, then closes the subscription.
 */
export function startConnector({
  client,
  subscription,
  send,
  // The edit / unsend callbacks: the provider's own (`send.edit`, `send.unsend`) unless given.
  edit = send.edit,
  unsend = send.unsend,
  customer,
  onEvent = printEvent,
  providerTimeoutMs,
  catchUpIntervalMs = DEFAULT_CATCH_UP_INTERVAL_MS,
  erasureIntervalMs = DEFAULT_ERASURE_INTERVAL_MS,
  log = createMessageLog(),
}) {
  const store = createReceiptStore();
  const receipts = new Set();
  // Every reply the provider accepted goes into the connector's log, with its recipient.
  const sendAndLog = async (input) => {
    const result = await send(input);
    const ids = Array.isArray(result) ? result : result.providerMessageIds;
    // A start has no chat in its recipient yet: the one the provider opened (`conversation`) is where it went.
    const thread = Array.isArray(result) || result.conversation === undefined ? input.recipient : result.conversation;
    const { externalConversationId, externalCustomerId } = thread;
    log.add({ direction: 'out', externalConversationId, externalCustomerId, text: input.text, id: input.deliveryId });
    store.remember(input.deliveryId, ids, { externalConversationId, externalCustomerId });
    return result;
  };
  const erasures = startErasures({ client, purge: (erasure) => purgeErasure({ log, receipts: store }, erasure), onEvent, intervalMs: erasureIntervalMs });
  // A callback per delivery kind: a reply, an edit, an unsend (the SDK fails a kind without one `unsupported_kind`).
  const provider = { send: sendAndLog, ...(edit === undefined ? {} : { edit }), ...(unsend === undefined ? {} : { unsend }) };
  const loop = runPullLoop(client, subscription, provider, {
    catchUpIntervalMs,
    ...(providerTimeoutMs === undefined ? {} : { delivery: { providerTimeoutMs } }),
    onEvent: (event) => {
      onEvent(event);
      if (event.type === 'handled' && event.result?.kind === 'sent' && event.result.deliveryKind === undefined) {
        // The fake channel's "delivered" webhook, for the first part of the reply.
        const receipt = reportReceipt(client, store, event.result.providerMessageIds[0], 'delivered').then(onEvent);
        receipts.add(receipt);
        void receipt.finally(() => receipts.delete(receipt));
        // The simulated customer reacts to the reply (CUSTOMER_EVENTS=on).
        if (customer !== undefined) {
          const reaction = receipt.then(() => customer.reactToReply(event.result.providerMessageIds[0]));
          receipts.add(reaction);
          void reaction.finally(() => receipts.delete(reaction));
        }
      }
    },
  });
  return {
    log,
    /** Purges the erasures the service lists now (also run at start-up and every `erasureIntervalMs`). */
    processErasures: erasures.run,
    async stop() {
      await loop.stop();
      await erasures.stop();
      await Promise.allSettled([...receipts]);
    },
  };
}

/**
 * Everything the example does: an SDK client and a Pub/Sub client from `config` (see loadConfig),
 * a check that the subscription exists, one incoming message (unless `startupText` is empty),
 * then the loop. Returns `{ client, incoming, subscription, stop }`.
 *   deps.send      the provider (default: createFakeProvider())
 *   deps.onEvent   receives every event (default: printEvent)
 *   deps.pubsub    a PubSub client to use (then it is not closed by stop())
 */
export async function runConnector(config, deps = {}) {
  const onEvent = deps.onEvent ?? printEvent;
  const send = deps.send ?? createFakeProvider();
  const client = new ConnectorClient({
    integrationKey: config.integrationKey,
    baseUrl: config.apiBaseUrl,
    ...(config.fallbackBaseUrl === undefined ? {} : { fallbackBaseUrl: config.fallbackBaseUrl }),
  });
  const ownsPubSub = deps.pubsub === undefined;
  const pubsub =
    deps.pubsub ??
    new PubSub({
      projectId: config.projectId,
      ...(config.pubsubEmulatorHost === undefined ? {} : { apiEndpoint: config.pubsubEmulatorHost, emulatorMode: true }),
    });
  const log = createMessageLog();
  try {
    // The client library leases (and keeps extending) at most as many messages as the loop runs at once.
    const subscription = pubsub.subscription(config.subscription, { flowControl: { maxMessages: DEFAULT_PULL_CONCURRENCY } });
    onEvent({ type: 'config', apiBaseUrl: client.baseUrl, subscription: subscription.name, pubsubEmulatorHost: config.pubsubEmulatorHost });
    const [exists] = await subscription.exists();
    if (!exists) throw new ConfigError(`subscription ${subscription.name} does not exist (SUBSCRIPTION, GCLOUD_PROJECT)`);

    // What the connector knows of its channel: sent at every start-up (the same body again changes nothing).
    await client.channel.update(CHANNEL);
    let incoming;
    if (config.startupText !== '') {
      // A customer writes in the external chat. Pass a stable eventId of your source event in a
      // real connector; here the SDK generates one (and reuses it on its HTTP retries).
      incoming = await client.messages.send({
        externalConversationId: config.externalConversationId,
        sender: { externalId: config.customerId, displayName: 'Example customer', kind: 'customer' },
        text: config.startupText,
      });
      log.add({ direction: 'in', externalConversationId: config.externalConversationId, externalCustomerId: config.customerId, text: config.startupText, id: incoming.eventId });
      onEvent({ type: 'incoming', externalConversationId: config.externalConversationId, ...incoming });
    }

    const customer = config.customerEvents === true ? simulateCustomer({ client, externalConversationId: config.externalConversationId, customerId: config.customerId, onEvent }) : undefined;
    if (customer !== undefined && incoming !== undefined) await customer.afterStartup(incoming.eventId, config.startupText);
    const loop = startConnector({
      client,
      subscription,
      send,
      ...(customer === undefined ? {} : { customer }),
      onEvent,
      log,
      providerTimeoutMs: config.providerTimeoutMs,
      catchUpIntervalMs: config.catchUpIntervalMs,
      ...(config.erasureIntervalMs === undefined ? {} : { erasureIntervalMs: config.erasureIntervalMs }),
    });
    onEvent({ type: 'listening', subscription: subscription.name });
    return {
      client,
      incoming,
      subscription,
      log,
      processErasures: loop.processErasures,
      async stop() {
        await loop.stop();
        if (ownsPubSub) await pubsub.close();
        onEvent({ type: 'stopped' });
      },
    };
  } catch (err) {
    if (ownsPubSub) await pubsub.close();
    throw err;
  }
}

/** One line for an error: class, HTTP status and code when there are some, message. */
export function describeError(err) {
  if (!(err instanceof Error)) return String(err);
  const bits = [err.name];
  if (err instanceof ConnectorApiError) bits.push(err.status === undefined ? err.code : `${err.status} ${err.code}`);
  else if (typeof err.code === 'string') bits.push(err.code);
  return `${bits.join(' ')}: ${err.message}`;
}

function describeResult(result) {
  switch (result.kind) {
    case 'sent':
      if (result.deliveryKind === 'edit') return `edit delivered (provider ids: ${result.providerMessageIds.join(', ')})`;
      if (result.deliveryKind === 'unsend') return `unsend delivered (provider ids: ${result.providerMessageIds.join(', ')})`;
      return `sent (provider ids: ${result.providerMessageIds.join(', ')})`;
    case 'retry_scheduled':
      return `rejected for now (${result.code}); the service retries it${result.retryAfterMs === undefined ? '' : ` in ${Math.round(result.retryAfterMs / 1000)} s`}`;
    case 'failed':
    case 'unknown':
      return `reported ${result.outcome} (${result.code}); the delivery is now ${result.deliveryStatus}: ${describeError(result.error)}`;
    case 'skipped':
      return `skipped (${result.reason})`;
    case 'already_finished':
      return `already ${result.status} (provider not called)`;
    default:
      return JSON.stringify(result);
  }
}

/** Prints an event as one human-readable line on stdout (errors on stderr); processDelivery's step events are not printed. */
export function printEvent(event, { out = console.log, err = console.error } = {}) {
  switch (event.type) {
    case 'config':
      out(`[connector] API ${event.apiBaseUrl}, subscription ${event.subscription}${event.pubsubEmulatorHost ? ` (Pub/Sub emulator ${event.pubsubEmulatorHost})` : ''}`);
      return;
    case 'incoming':
      out(
        `[connector] incoming message accepted: conversationId=${event.conversationId} messageId=${event.messageId} duplicate=${event.duplicate} ` +
          `(external chat ${event.externalConversationId}, eventId ${event.eventId})`,
      );
      return;
    case 'listening':
      out('[connector] waiting for delivery notifications (Ctrl-C to stop)');
      return;
    case 'handled': {
      const id = event.notification.deliveryId;
      const via = event.via === 'catch_up' ? ' (found by the catch-up)' : '';
      if (event.result !== undefined) out(`[connector] delivery ${id}${via}: ${describeResult(event.result)}`);
      else if (event.error instanceof DeliveryReportError && event.error.step === 'complete') {
        // The message WAS sent: a real connector stores these ids and calls deliveries.complete
        // again later (a late completion under the same lease is accepted). Never send again.
        err(`[connector] delivery ${id}: sent (ids ${event.error.providerMessageIds.join(', ')}) but not reported: ${describeError(event.error.cause)}`);
      } else err(`[connector] delivery ${id}${via}: ${event.action === 'nack' ? 'will be redelivered' : 'dropped'}: ${describeError(event.error)}`);
      return;
    }
    case 'duplicate_notification':
      // Pub/Sub delivered the notification again, or the catch-up had the delivery already: one claim, one outcome.
      out(`[connector] delivery ${event.notification.deliveryId}: another notification of it arrived meanwhile (${event.action}ed with it)`);
      return;
    case 'receipt':
      out(`[connector] delivery ${event.deliveryId}: receipt ${event.status}`);
      return;
    case 'receipt_failed':
      err(`[connector] delivery ${event.deliveryId}: the ${event.status} receipt could not be reported: ${describeError(event.error)}`);
      return;
    case 'customer_event':
      out(`[connector] customer ${event.event}: ${event.outcome}`);
      return;
    case 'customer_event_failed':
      err(`[connector] customer ${event.event} not posted: ${describeError(event.error)}`);
      return;
    case 'receipt_unmatched':
      err(`[connector] receipt for unknown provider message ${event.providerMessageId}`);
      return;
    case 'invalid_notification':
      err(`[connector] dropped a message that is not a delivery notification: ${describeError(event.error)}`);
      return;
    case 'subscription_error':
      err(`[connector] subscription error: ${describeError(event.error)}`);
      return;
    case 'catch_up':
      if (event.started > 0) out(`[connector] catch-up: ${event.started} deliver${event.started === 1 ? 'y' : 'ies'} taken from the pending list`);
      return;
    case 'erasure_purged':
      // The erasure id only: the customer's id is what was just forgotten.
      out(`[connector] erasure ${event.erasureId}: purged ${event.removed?.logEntries ?? 0} log entries and ${event.removed?.receipts ?? 0} receipt ids, acknowledged`);
      return;
    case 'erasure_failed':
      err(`[connector] erasure ${event.erasureId}: ${event.step === 'purge' ? 'purge failed' : 'purged, but the acknowledgement failed'} (tried again later): ${describeError(event.error)}`);
      return;
    case 'erasures_failed':
      err(`[connector] could not list erasures (tried again later): ${describeError(event.error)}`);
      return;
    case 'catch_up_failed':
      err(`[connector] catch-up failed (tried again later): ${describeError(event.error)}`);
      return;
    case 'stopped':
      // The loop's (with `abandoned`), then the example's own, last.
      if (event.abandoned === undefined) out('[connector] stopped');
      else if (event.abandoned > 0) err(`[connector] ${event.abandoned} deliveries still running at the stop timeout: their notifications come again`);
      return;
    default:
      if (typeof event.via === 'string') return; // processDelivery's steps (claimed, started, extended, ...)
      out(`[connector] ${JSON.stringify(event)}`);
  }
}
