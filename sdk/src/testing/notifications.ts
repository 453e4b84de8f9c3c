/**
 * The test service's Pub/Sub stand-in: every notification of an integration goes to its pull
 * subscriptions (`subscription()`, the interface `runPullLoop` takes) and its push endpoints
 * (`pushTo()`, the Pub/Sub push format, redelivered after a non-2xx as Pub/Sub does).
 */
import { randomBytes } from 'node:crypto';
import { notificationOf, traceIdOfDelivery, type DeliveryRecord } from '../internal/rules/record.js';
import type { PulledMessage } from '../internal/pull-loop.js';
import type { TestSubscription } from './types.js';

/** A notification published to the integration's subscriptions and push endpoints. */
interface Published {
  id: string;
  data: Buffer;
  attributes: Record<string, string>;
}

/** The Pub/Sub stand-in of one `subscription()`: messages wait here until a `message` listener takes them. */
class Subscription implements TestSubscription {
  private readonly listeners = { message: new Set<(value: unknown) => void>(), error: new Set<(value: unknown) => void>() };
  private readonly backlog: Published[] = [];
  private readonly inFlight = new Set<string>();
  private open = true;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly onSettled: () => void) {}

  get isOpen(): boolean {
    return this.open;
  }

  get outstanding(): number {
    return this.backlog.length + this.inFlight.size;
  }

  on(event: 'message' | 'error', listener: (value: unknown) => void): this {
    this.listeners[event].add(listener);
    // A listener (re)opens the subscription, as the Pub/Sub client's does.
    if (event === 'message') {
      this.open = true;
      this.schedule(0);
    }
    return this;
  }

  removeListener(event: 'message' | 'error', listener: (value: unknown) => void): this {
    this.listeners[event].delete(listener);
    return this;
  }

  close(): Promise<void> {
    this.open = false;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    return Promise.resolve();
  }

  publish(message: Published): void {
    this.backlog.push(message);
    this.schedule(0);
  }

  private schedule(ms: number): void {
    if (this.timer !== undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.dispatch();
    }, ms);
    this.timer.unref();
  }

  private dispatch(): void {
    if (!this.open || this.listeners.message.size === 0) return;
    for (const message of this.backlog.splice(0)) {
      this.inFlight.add(message.id);
      let settled = false;
      const settle = (redeliver: boolean): void => {
        if (settled || !this.inFlight.has(message.id)) return;
        settled = true;
        this.inFlight.delete(message.id);
        // A nack is redelivered shortly, as Pub/Sub does (never in a hot loop).
        if (redeliver) {
          this.backlog.push(message);
          this.schedule(50);
        }
        this.onSettled();
      };
      const pulled: PulledMessage & { ackId: string; publishTime: Date } = {
        id: message.id,
        ackId: message.id,
        data: Buffer.from(message.data),
        attributes: { ...message.attributes },
        publishTime: new Date(),
        ack: () => settle(false),
        nack: () => settle(true),
      };
      for (const listener of [...this.listeners.message]) listener(pulled);
    }
  }
}

/** The integrations' subscriptions and push endpoints, and what is published to them. */
export class Notifications {
  private readonly subscriptions = new Map<string, Set<Subscription>>();
  private readonly pushTargets = new Map<string, Set<(message: Published) => void>>();
  private readonly stoppers = new Set<() => void>();
  private publishCount = 0;

  /** `onSettled`: a message was acknowledged, nacked or answered by a push endpoint. */
  constructor(private readonly onSettled: () => void) {}

  /** Publishes the delivery's notification to every subscription and push endpoint of its integration. */
  publishDelivery(d: DeliveryRecord): void {
    const notification = notificationOf(d);
    // An edit / unsend notification carries the attribute `kind` (none for a reply).
    this.publish(d.integrationId, Buffer.from(JSON.stringify(notification)), {
      deliveryId: d.deliveryId,
      integrationId: d.integrationId,
      traceparent: `00-${traceIdOfDelivery(d.deliveryId)}-${randomBytes(8).toString('hex')}-01`,
      ...(d.kind === undefined ? {} : { kind: d.kind }),
    });
  }

  /** Publishes any bytes to the integration's subscriptions and push endpoints. */
  publish(integrationId: string, data: Uint8Array, attributes: Readonly<Record<string, string>> = {}): void {
    this.publishCount += 1;
    const message: Published = { id: String(this.publishCount), data: Buffer.from(data), attributes: { ...attributes } };
    for (const subscription of this.subscriptions.get(integrationId) ?? []) subscription.publish(message);
    for (const push of this.pushTargets.get(integrationId) ?? []) push(message);
  }

  subscribe(integrationId: string): TestSubscription {
    const subscription = new Subscription(this.onSettled);
    let set = this.subscriptions.get(integrationId);
    if (set === undefined) {
      set = new Set();
      this.subscriptions.set(integrationId, set);
    }
    set.add(subscription);
    return subscription;
  }

  /** Delivers the integration's notifications to `url`; the function returned stops it. */
  pushTo(integrationId: string, url: string): () => void {
    let stopped = false;
    const timers = new Set<ReturnType<typeof setTimeout>>();
    const deliver = (message: Published, attempt: number): void => {
      if (stopped) return;
      const envelope = {
        message: { data: message.data.toString('base64'), attributes: message.attributes, messageId: message.id, publishTime: new Date().toISOString() },
        subscription: `projects/test-service/subscriptions/push-${integrationId}`,
      };
      fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(envelope) })
        .then(async (response) => {
          await response.arrayBuffer();
          return response.ok;
        })
        .catch(() => false)
        .then((ok) => {
          this.onSettled();
          if (ok || stopped) return;
          // Redelivered after a non-2xx with backoff, as Pub/Sub push does (kept short for tests).
          const timer = setTimeout(() => {
            timers.delete(timer);
            deliver(message, attempt + 1);
          }, Math.min(2000, 50 * 2 ** attempt));
          timers.add(timer);
        })
        .catch(() => undefined);
    };
    const target = (message: Published): void => deliver(message, 0);
    let set = this.pushTargets.get(integrationId);
    if (set === undefined) {
      set = new Set();
      this.pushTargets.set(integrationId, set);
    }
    set.add(target);
    const stop = (): void => {
      stopped = true;
      for (const timer of timers) clearTimeout(timer);
      this.pushTargets.get(integrationId)?.delete(target);
      this.stoppers.delete(stop);
    };
    this.stoppers.add(stop);
    return stop;
  }

  /** Stops every push endpoint and closes every subscription. */
  async close(): Promise<void> {
    for (const stop of [...this.stoppers]) stop();
    for (const set of this.subscriptions.values()) for (const subscription of set) await subscription.close();
  }
}
