/**
 * The email connector, importable: `startEmailConnector(config)` starts the inbound SMTP server,
 * the outbound sender (and the demo's mailbox sink when no relay is configured) and the pull
 * loop. main.ts adds the command line, the printing and the signals.
 *
 *   customer MTA --SMTP--> inbound.ts --POST /v1/messages--> support desk
 *   support desk --Pub/Sub--> the SDK's runPullLoop --processDelivery--> outbound.ts --SMTP--> relay
 *   relay --bounce/DSN--> inbound.ts --POST /v1/deliveries/receipt--> support desk
 */
import { join } from 'node:path';
import { PubSub } from '@google-cloud/pubsub';
import { ConnectorClient, processErasures, runPullLoop, type ProviderSend, type PullLoopEvent, type PullSubscription } from '@support-desk/connector-sdk';
import type { EmailConnectorConfig } from './config.js';
import { startInboundServer, type InboundEvent, type InboundServer } from './inbound.js';
import { createEmailSender, type OutboundEvent } from './outbound.js';
import { startMailboxSink, type MailboxSink } from './relay-sink.js';
import { ThreadStore } from './store.js';

/** What an erasure run reports: the erasure id and what was removed, never the customer's address. */
export type ErasureEvent =
  | { type: 'erasure_purged'; erasureId: string; threads: number; messageIds: number }
  | { type: 'erasure_failed'; erasureId: string; step: 'purge' | 'ack'; error: unknown }
  | { type: 'erasures_error'; error: unknown };

export type ConnectorEvent = InboundEvent | OutboundEvent | PullLoopEvent | ErasureEvent | { type: 'sink_mail'; file: string };

/** How often the connector asks for erasures to purge (and once at start-up). */
export const ERASURE_INTERVAL_MS = 300_000;

/**
 * The SDK's processErasures at start-up and every `intervalMs`: each erased customer's threads
 * leave threads.json (saved), then the erasure is acknowledged. `run()` runs now (or joins the run
 * in progress); `stop()` waits for it.
 */
export function startErasures(client: ConnectorClient, store: ThreadStore, onEvent: (event: ErasureEvent) => void, intervalMs = ERASURE_INTERVAL_MS): { run(): Promise<void>; stop(): Promise<void> } {
  let running: Promise<void> | undefined;
  const removed = new Map<string, { threads: number; messageIds: number }>();
  const run = (): Promise<void> => {
    running ??= processErasures(
      client,
      async (erasure) => {
        removed.set(erasure.erasureId, await store.purgeCustomer(erasure.externalCustomerId, erasure.externalConversationIds));
      },
      {
        onErasure: (erasure, outcome) => {
          const counts = removed.get(erasure.erasureId) ?? { threads: 0, messageIds: 0 };
          removed.delete(erasure.erasureId);
          onEvent(outcome.acknowledged ? { type: 'erasure_purged', erasureId: erasure.erasureId, ...counts } : { type: 'erasure_failed', erasureId: erasure.erasureId, step: outcome.step, error: outcome.error });
        },
      },
    )
      .then(
        () => undefined,
        (error: unknown) => onEvent({ type: 'erasures_error', error }),
      )
      .finally(() => {
        running = undefined;
      });
    return running;
  };
  void run();
  const timer = setInterval(() => void run(), intervalMs);
  timer.unref();
  return {
    run,
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}

export interface RunningConnector {
  client: ConnectorClient;
  store: ThreadStore;
  inbound: InboundServer;
  /** The demo's mailbox sink, when no relay was configured. */
  sink: MailboxSink | undefined;
  /** Where replies go. */
  relay: { host: string; port: number };
  send: ProviderSend;
  /** Purges the erasures the service lists now (also run at start-up and every few minutes). */
  processErasures(): Promise<void>;
  /** The subscription's full name. */
  subscriptionName: string;
  stop(): Promise<void>;
}

export interface ConnectorDeps {
  onEvent?: (event: ConnectorEvent) => void;
  /** An SDK client to use (tests: short timeouts). */
  client?: ConnectorClient;
  /** A subscription to pull from instead of `config.subscription` (then it is not checked). */
  subscription?: PullSubscription & { name?: string };
  catchUpIntervalMs?: number;
  erasureIntervalMs?: number;
}

export function domainOf(address: string): string {
  return address.slice(address.lastIndexOf('@') + 1);
}

export async function startEmailConnector(config: EmailConnectorConfig, deps: ConnectorDeps = {}): Promise<RunningConnector> {
  const onEvent = deps.onEvent ?? (() => undefined);
  const client = deps.client ?? new ConnectorClient({ integrationKey: config.integrationKey, baseUrl: config.apiBaseUrl });
  const domain = domainOf(config.supportAddress);
  const store = await ThreadStore.open(config.dataDir);
  const closers: Array<() => Promise<void>> = [];
  const closeAll = async () => {
    for (const close of closers.reverse()) await close().catch(() => undefined);
  };
  try {
    const inbound = await startInboundServer(client, store, { host: config.smtpHost, port: config.smtpPort, supportAddress: config.supportAddress, domain, bounceLocalPart: config.bounceLocalPart }, onEvent);
    closers.push(() => inbound.close());
    let sink: MailboxSink | undefined;
    let relay = config.relay;
    if (relay === undefined) {
      sink = await startMailboxSink({ host: '127.0.0.1', port: config.sinkPort, dir: join(config.dataDir, 'mailbox'), bounceTo: { host: inbound.host, port: inbound.port } }, (file) =>
        onEvent({ type: 'sink_mail', file }),
      );
      const started = sink;
      closers.push(() => started.close());
      relay = { host: '127.0.0.1', port: sink.port };
    }
    const send = createEmailSender({ relay, supportAddress: config.supportAddress, supportName: config.supportName, domain, bounceLocalPart: config.bounceLocalPart }, store, onEvent);

    let subscription: PullSubscription;
    let subscriptionName: string;
    if (deps.subscription !== undefined) {
      subscription = deps.subscription;
      subscriptionName = deps.subscription.name ?? '(given)';
    } else {
      // No GCP metadata server next to the emulators: skip the auth library's lookup.
      if (config.pubsubEmulatorHost !== undefined) process.env.METADATA_SERVER_DETECTION ??= 'none';
      const pubsub = new PubSub({ projectId: config.projectId, ...(config.pubsubEmulatorHost === undefined ? {} : { apiEndpoint: config.pubsubEmulatorHost, emulatorMode: true }) });
      closers.push(() => pubsub.close());
      const sub = pubsub.subscription(config.subscription, { flowControl: { maxMessages: 10 } });
      const [exists] = await sub.exists();
      if (!exists) throw new Error(`the subscription ${sub.name} does not exist (--subscription, --project)`);
      subscription = sub;
      subscriptionName = sub.name;
    }
    // The SDK's loop: ack/nack by outcome, the periodic catch-up through the pending list, clean stop.
    const loop = runPullLoop(client, subscription, send, { onEvent, ...(deps.catchUpIntervalMs === undefined ? {} : { catchUpIntervalMs: deps.catchUpIntervalMs }) });
    // The loop stops first (deliveries in progress finish), then the servers close.
    closers.push(() => loop.stop());
    const erasures = startErasures(client, store, onEvent, deps.erasureIntervalMs);
    closers.push(() => erasures.stop());
    return { client, store, inbound, sink, relay, send, processErasures: erasures.run, subscriptionName, stop: closeAll };
  } catch (err) {
    await closeAll();
    throw err;
  }
}
