/**
 * The wiring between Pub/Sub and the provider `send`: every pulled notification goes through the
 * SDK's `processDelivery(notification, send)`, then is acked or nacked; at start-up and every
 * `catchUpIntervalMs` the deliveries claimable now (`deliveries.pending()`) go the same way, so a
 * lost notification never blocks a conversation. The email specifics all live in `send`
 * (outbound.ts): this file is the generic loop, replaceable by the SDK's own pull loop.
 */
import {
  ConnectorApiError,
  InvalidNotificationError,
  parsePulledNotification,
  type ConnectorClient,
  type DeliveryNotification,
  type ProcessDeliveryResult,
  type ProviderSend,
} from '@support-desk/connector-sdk';

/** The part of a @google-cloud/pubsub `Message` the loop uses. */
export interface PulledMessage {
  data: Buffer | Uint8Array | string;
  ack(): void;
  nack(): void;
}

/** The part of a @google-cloud/pubsub `Subscription` the loop uses. */
export interface PullSubscription {
  on(event: 'message', listener: (message: PulledMessage) => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  removeListener(event: 'message', listener: (message: PulledMessage) => void): unknown;
  removeListener(event: 'error', listener: (error: Error) => void): unknown;
  close(): Promise<void>;
}

export type PullLoopEvent =
  | { type: 'delivery'; via: 'notification' | 'catch_up'; action: 'ack' | 'nack'; notification?: DeliveryNotification; result?: ProcessDeliveryResult; error?: unknown }
  | { type: 'catch_up_error'; error: unknown }
  | { type: 'subscription_error'; error: unknown };

/** No answer, 429 or 5xx after the SDK's own retries: Pub/Sub redelivers (every call is idempotent). */
const isTransient = (err: unknown): boolean => err instanceof ConnectorApiError && (err.status === undefined || err.status === 429 || err.status >= 500);

export interface PullLoopOptions {
  client: ConnectorClient;
  subscription: PullSubscription;
  send: ProviderSend;
  onEvent?: (event: PullLoopEvent) => void;
  /** Default 5 minutes. */
  catchUpIntervalMs?: number;
}

/** Starts the loop; `stop()` waits for the deliveries in progress, then closes the subscription. */
export function startPullLoop({ client, subscription, send, onEvent = () => undefined, catchUpIntervalMs = 300_000 }: PullLoopOptions): { stop(): Promise<void> } {
  const inFlight = new Set<Promise<unknown>>();
  const track = (task: Promise<unknown>) => {
    inFlight.add(task);
    void task.finally(() => inFlight.delete(task));
  };
  const deliver = async (notification: DeliveryNotification, via: 'notification' | 'catch_up'): Promise<'ack' | 'nack'> => {
    try {
      const result = await client.processDelivery(notification, send);
      onEvent({ type: 'delivery', via, action: 'ack', notification, result });
      return 'ack';
    } catch (error) {
      // A DeliveryReportError or a 4xx: redelivery would not help. Transient trouble: redeliver.
      const action = isTransient(error) ? 'nack' : 'ack';
      onEvent({ type: 'delivery', via, action, notification, error });
      return action;
    }
  };
  const onMessage = (message: PulledMessage) => {
    let notification: DeliveryNotification;
    try {
      notification = parsePulledNotification(message);
    } catch (error) {
      if (error instanceof InvalidNotificationError) message.ack(); // it will never parse
      else message.nack();
      onEvent({ type: 'delivery', via: 'notification', action: error instanceof InvalidNotificationError ? 'ack' : 'nack', error });
      return;
    }
    track(deliver(notification, 'notification').then((action) => (action === 'ack' ? message.ack() : message.nack())));
  };
  let catchingUp = false;
  const catchUp = () => {
    if (catchingUp) return;
    catchingUp = true;
    track(
      (async () => {
        for await (const page of client.deliveries.pending()) {
          for (const notification of page.deliveries) await deliver(notification, 'catch_up');
        }
      })()
        .catch((error: unknown) => onEvent({ type: 'catch_up_error', error }))
        .finally(() => {
          catchingUp = false;
        }),
    );
  };
  const onError = (error: Error) => onEvent({ type: 'subscription_error', error });
  subscription.on('message', onMessage);
  subscription.on('error', onError);
  catchUp();
  const timer = setInterval(catchUp, catchUpIntervalMs);
  timer.unref();
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
