/**
 * Example connector, the importable part (main.js only adds env, signals and exit codes).
 *
 *   loadConfig(env)              configuration from environment variables
 *   createFakeProvider()         a "channel adapter" that prints replies instead of sending them
 *   handleMessage(...)           one pulled Pub/Sub message -> processDelivery -> ack or nack
 *   startConnector(...)          the processing loop on a subscription
 *   runConnector(config, deps)   everything main.js does: clients, startup message, loop
 *
 * The SDK does the delivery protocol (claim -> start -> provider ONCE -> complete / fail); this
 * file only wires it to Pub/Sub and to a provider.
 */
import { randomUUID } from 'node:crypto';
import { clearInterval, setInterval } from 'node:timers';
import { PubSub } from '@google-cloud/pubsub';
import {
  ConnectorApiError,
  ConnectorClient,
  DeliveryReportError,
  InvalidNotificationError,
  parsePulledNotification,
  ProviderPermanentError,
  ProviderRetryableError,
} from '@support-desk/connector-sdk';

/** Defaults that match `npm start` (the local stack). */
export const DEFAULTS = Object.freeze({
  apiBaseUrl: 'http://127.0.0.1:5000',
  subscription: 'connector-notifications-pull',
  projectId: 'demo-support-desk',
  pubsubEmulatorHost: '127.0.0.1:8085',
  externalConversationId: 'example-chat-1',
  customerId: 'example-customer-1',
  startupText: 'Hello from the example connector: my order #1234 has not arrived yet.',
});

export class ConfigError extends Error {
  name = 'ConfigError';
}

const nonEmpty = (value) => (typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined);

/**
 * Reads the configuration. Only INTEGRATION_KEY is required; everything else defaults to the
 * local stack. A `demo-*` project (emulator-only by Firebase convention) defaults to the Pub/Sub
 * emulator; any other project uses real Pub/Sub (Application Default Credentials) unless
 * PUBSUB_EMULATOR_HOST is set.
 */
export function loadConfig(env = process.env) {
  const integrationKey = nonEmpty(env.INTEGRATION_KEY);
  if (integrationKey === undefined) throw new ConfigError('INTEGRATION_KEY is required (`npm start` prints the demo key)');
  const projectId = nonEmpty(env.GCLOUD_PROJECT) ?? DEFAULTS.projectId;
  const interval = nonEmpty(env.CATCH_UP_INTERVAL_MS);
  const catchUpIntervalMs = interval === undefined ? DEFAULT_CATCH_UP_INTERVAL_MS : Number(interval);
  if (!(Number.isInteger(catchUpIntervalMs) && catchUpIntervalMs >= 1000)) throw new ConfigError('CATCH_UP_INTERVAL_MS must be an integer of at least 1000');
  const timeout = nonEmpty(env.PROVIDER_TIMEOUT_MS);
  const providerTimeoutMs = timeout === undefined ? undefined : Number(timeout);
  if (providerTimeoutMs !== undefined && !(Number.isInteger(providerTimeoutMs) && providerTimeoutMs > 0)) {
    throw new ConfigError('PROVIDER_TIMEOUT_MS must be a positive integer');
  }
  return {
    apiBaseUrl: nonEmpty(env.API_BASE_URL) ?? DEFAULTS.apiBaseUrl,
    fallbackBaseUrl: nonEmpty(env.FALLBACK_BASE_URL),
    integrationKey,
    projectId,
    subscription: nonEmpty(env.SUBSCRIPTION) ?? DEFAULTS.subscription,
    pubsubEmulatorHost: nonEmpty(env.PUBSUB_EMULATOR_HOST) ?? (projectId.startsWith('demo-') ? DEFAULTS.pubsubEmulatorHost : undefined),
    externalConversationId: nonEmpty(env.EXTERNAL_CONVERSATION_ID) ?? DEFAULTS.externalConversationId,
    customerId: nonEmpty(env.CUSTOMER_ID) ?? DEFAULTS.customerId,
    // STARTUP_TEXT="" skips the startup message.
    startupText: env.STARTUP_TEXT ?? DEFAULTS.startupText,
    providerTimeoutMs,
    catchUpIntervalMs,
  };
}

/** How often the example asks for deliveries it was not notified of (besides once at start-up). */
export const DEFAULT_CATCH_UP_INTERVAL_MS = 5 * 60_000;

/**
 * A fake channel adapter: prints each reply and returns a made-up provider message id. To see
 * the failure paths, put `#temporary` (a definite temporary rejection: the service re-queues the
 * delivery) or `#blocked` (a permanent rejection) in the operator's reply.
 */
export function createFakeProvider({ write = (line) => process.stdout.write(`${line}\n`) } = {}) {
  let sent = 0;
  return async function send({ text, recipient, signal }) {
    signal.throwIfAborted();
    const to = `${recipient.externalConversationId} (customer ${recipient.externalCustomerId})`;
    if (text.includes('#temporary')) {
      write(`[fake-provider] to ${to}: rejected for now (rate limited)`);
      throw new ProviderRetryableError('fake provider: rate limited', { code: 'rate_limited', retryAfterMs: 30_000 });
    }
    if (text.includes('#blocked')) {
      write(`[fake-provider] to ${to}: rejected (the customer blocked the bot)`);
      throw new ProviderPermanentError('fake provider: recipient blocked the bot', { code: 'recipient_blocked' });
    }
    sent += 1;
    const id = `fake-${sent}-${randomUUID().slice(0, 8)}`;
    write(`[fake-provider] to ${to}: ${JSON.stringify(text)} -> ${id}`);
    return { providerMessageIds: [id] };
  };
}

/** Transient trouble (no answer, 429, 5xx after the SDK's own retries): let Pub/Sub redeliver. */
export function isTransient(err) {
  return err instanceof ConnectorApiError && (err.status === undefined || err.status === 429 || err.status >= 500);
}

/**
 * Handles one pulled Pub/Sub message and says what to do with it; never throws.
 *   { action: 'ack',  notification, result }   processDelivery finished (skipped / already_sent / sent / failed);
 *                                               after `sent`, also `receipt` ('delivered') or `receiptError`
 *   { action: 'ack',  error }                   the data is not a notification (it will never parse)
 *   { action: 'nack', notification, error }     transient error: redeliver (safe: every call is idempotent)
 *   { action: 'ack',  notification, error }     401/403/404/409 or a DeliveryReportError: redelivery would not help
 */
export async function handleMessage(client, message, send, { providerTimeoutMs } = {}) {
  let notification;
  try {
    notification = parsePulledNotification(message);
  } catch (error) {
    if (error instanceof InvalidNotificationError) return { action: 'ack', error };
    return { action: 'nack', error };
  }
  return handleNotification(client, notification, send, { providerTimeoutMs });
}

/** One delivery (from a notification or the catch-up list) -> processDelivery; never throws. */
export async function handleNotification(client, notification, send, { providerTimeoutMs } = {}) {
  try {
    const options = providerTimeoutMs === undefined ? {} : { providerTimeoutMs };
    const result = await client.processDelivery(notification, send, options);
    if (result.kind !== 'sent') return { action: 'ack', notification, result };
    // The fake channel delivers at once, so its "delivered" receipt is reported right away. A real
    // connector reports receipts from its channel's delivery/read webhooks, whenever they come
    // (any order, retries welcome: receipts only move forward). A failed receipt never undoes
    // the delivery, so it is logged and the notification acked all the same.
    try {
      await client.deliveries.receipt({ deliveryId: result.deliveryId, status: 'delivered', providerMessageId: result.providerMessageIds[0] });
      return { action: 'ack', notification, result, receipt: 'delivered' };
    } catch (receiptError) {
      return { action: 'ack', notification, result, receiptError };
    }
  } catch (error) {
    return { action: isTransient(error) ? 'nack' : 'ack', notification, error };
  }
}

/**
 * The processing loop: every message of `subscription` (a @google-cloud/pubsub Subscription) goes
 * through `handleMessage`, then is acked or nacked. `onEvent` receives
 * `{ type: 'delivery', action, notification?, result?, error? }` and
 * `{ type: 'subscription_error', error }`; the catch-up (`deliveries.pending()` at start-up and
 * every `catchUpIntervalMs`) reports its deliveries as `delivery` events with `via: 'catch_up'`,
 * then `{ type: 'catch_up', count }` when it found any. `stop()` waits for the deliveries in progress, then
 * closes the subscription (flushing the acks).
 */
export function startConnector({ client, subscription, send, onEvent = printEvent, providerTimeoutMs, catchUpIntervalMs = DEFAULT_CATCH_UP_INTERVAL_MS }) {
  const inFlight = new Set();
  const track = (task) => {
    inFlight.add(task);
    task.finally(() => inFlight.delete(task));
  };
  // Catch-up: the deliveries we can claim now, whether or not a notification reached us (a
  // subscription created late, or one that expired). A delivery also notified meanwhile is
  // harmless: the second processDelivery gets `skip` or is refused by the lease.
  let catchingUp = false;
  const catchUp = () => {
    if (catchingUp) return;
    catchingUp = true;
    track(
      (async () => {
        let count = 0;
        for await (const page of client.deliveries.pending()) {
          for (const notification of page.deliveries) {
            count++;
            onEvent({ type: 'delivery', via: 'catch_up', ...(await handleNotification(client, notification, send, { providerTimeoutMs })) });
          }
        }
        if (count > 0) onEvent({ type: 'catch_up', count });
      })()
        .catch((error) => onEvent({ type: 'catch_up_error', error }))
        .finally(() => {
          catchingUp = false;
        }),
    );
  };
  catchUp();
  const timer = setInterval(catchUp, catchUpIntervalMs);
  const onMessage = (message) => {
    const task = handleMessage(client, message, send, { providerTimeoutMs })
      .then((outcome) => {
        if (outcome.action === 'ack') message.ack();
        else message.nack();
        onEvent({ type: 'delivery', ...outcome });
      })
      .catch((error) => onEvent({ type: 'subscription_error', error }));
    track(task);
  };
  const onError = (error) => onEvent({ type: 'subscription_error', error });
  subscription.on('message', onMessage);
  subscription.on('error', onError);
  return {
    async stop() {
      clearInterval(timer);
      subscription.removeListener('message', onMessage);
      await Promise.allSettled([...inFlight]);
      await subscription.close();
      subscription.removeListener('error', onError);
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
  try {
    const subscription = pubsub.subscription(config.subscription, { flowControl: { maxMessages: 10 } });
    onEvent({ type: 'config', apiBaseUrl: client.baseUrl, subscription: subscription.name, pubsubEmulatorHost: config.pubsubEmulatorHost });
    const [exists] = await subscription.exists();
    if (!exists) throw new ConfigError(`subscription ${subscription.name} does not exist (SUBSCRIPTION, GCLOUD_PROJECT)`);

    let incoming;
    if (config.startupText !== '') {
      // A customer writes in the external chat. Pass a stable eventId of your source event in a
      // real connector; here the SDK generates one (and reuses it on its HTTP retries).
      incoming = await client.messages.send({
        externalConversationId: config.externalConversationId,
        sender: { externalId: config.customerId, displayName: 'Example customer', kind: 'customer' },
        text: config.startupText,
      });
      onEvent({ type: 'incoming', externalConversationId: config.externalConversationId, ...incoming });
    }

    const loop = startConnector({ client, subscription, send, onEvent, providerTimeoutMs: config.providerTimeoutMs, catchUpIntervalMs: config.catchUpIntervalMs });
    onEvent({ type: 'listening', subscription: subscription.name });
    return {
      client,
      incoming,
      subscription,
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
      return `sent (provider ids: ${result.providerMessageIds.join(', ')})`;
    case 'failed':
      return `reported ${result.outcome} (${result.code}); the delivery is now ${result.deliveryStatus}: ${describeError(result.error)}`;
    case 'skipped':
      return `skipped (${result.reason})`;
    case 'already_sent':
      return 'already sent under this lease (provider not called)';
    default:
      return JSON.stringify(result);
  }
}

/** Prints an event as one human-readable line on stdout (errors on stderr). */
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
    case 'delivery': {
      const id = event.notification?.deliveryId ?? '(unparsable message)';
      if (event.result !== undefined) {
        out(`[connector] delivery ${id}: ${describeResult(event.result)}${event.receipt ? `; receipt: ${event.receipt}` : ''}`);
        if (event.receiptError !== undefined) err(`[connector] delivery ${id}: the receipt could not be reported: ${describeError(event.receiptError)}`);
      }
      else if (event.error instanceof DeliveryReportError && event.error.step === 'complete') {
        // The message WAS sent: a real connector stores these ids and calls deliveries.complete
        // again later (a late completion under the same lease is accepted). Never send again.
        err(`[connector] delivery ${id}: sent (ids ${event.error.providerMessageIds.join(', ')}) but not reported: ${describeError(event.error.cause)}`);
      } else err(`[connector] delivery ${id}: ${event.action === 'nack' ? 'will be redelivered' : 'dropped'}: ${describeError(event.error)}`);
      return;
    }
    case 'subscription_error':
      err(`[connector] subscription error: ${describeError(event.error)}`);
      return;
    case 'catch_up':
      out(`[connector] caught up: ${event.count} deliver${event.count === 1 ? 'y' : 'ies'} found without a notification`);
      return;
    case 'catch_up_error':
      err(`[connector] catch-up failed (tried again later): ${describeError(event.error)}`);
      return;
    case 'stopped':
      out('[connector] stopped');
      return;
    default:
      out(`[connector] ${JSON.stringify(event)}`);
  }
}
