/**
 * `runPullLoop`: the delivery loop every pull connector needs, on any subscription with the
 * `@google-cloud/pubsub` interface (the SDK itself depends on nothing). Per message: parse the
 * notification, `processDelivery`, ack or nack by outcome (`ackActionFor`); at start-up and
 * periodically, the deliveries of the pending list, so that a lost notification is processed
 * anyway; bounded concurrency, one delivery at a time per conversation (the others wait for
 * their turn without a claim); a clean stop.
 */
import { InvalidNotificationError } from '../errors.js';
import type { DeliveryNotification } from '../types.js';
import { ackActionFor, type AckAction } from './ack.js';
import { clockOption, unrefTimer, type Clock } from './clock.js';
import type { DeliveriesApi } from './deliveries.js';
import { parsePulledNotification } from './notification.js';
import { providerHandlers, type ProcessDeliveryOptions, type Provider } from './process.js';
import type { DeliveryEvent, ProcessDeliveryResult } from './results.js';

/**
 * A pulled Pub/Sub message: what the loop uses of `@google-cloud/pubsub`'s `Message`
 * (`data` is a Buffer there; a base64 or JSON string is accepted too).
 */
export interface PulledMessage {
  data: unknown;
  attributes?: Readonly<Record<string, string>>;
  /** The Pub/Sub message id, reported in events. */
  id?: string;
  ack(): void;
  nack(): void;
}

/**
 * What the loop uses of `@google-cloud/pubsub`'s `Subscription` (an `EventEmitter` that emits
 * `message` and `error`, and `close()` that stops receiving and flushes the acks). Pass the
 * subscription itself; any object with this shape works (e.g. an `EventEmitter` in tests).
 */
export interface PullSubscription {
  // `unknown` listener arguments: the loop checks what it receives (a Message, an Error) itself.
  on(event: 'message' | 'error', listener: (value: unknown) => void): unknown;
  removeListener(event: 'message' | 'error', listener: (value: unknown) => void): unknown;
  close(): Promise<unknown>;
}

/** The client operations the loop needs (a `ConnectorClient`). */
export interface PullLoopClient {
  readonly deliveries: Pick<DeliveriesApi, 'pendingItems'>;
  processDelivery(notification: DeliveryNotification, provider: Provider, options?: ProcessDeliveryOptions): Promise<ProcessDeliveryResult>;
}

/**
 * Where a delivery came from: a pulled message, the pending list, or the answer that ended the
 * previous delivery of its conversation (`next`: processed at once, before its own notification).
 */
export type DeliverySource = 'notification' | 'catch_up' | 'next';

/** What `runPullLoop` reports to `onEvent`: its own events, and every `processDelivery` event (`DeliveryEvent`, with `via`). */
export type PullLoopEvent =
  | (DeliveryEvent & { via: DeliverySource })
  /**
   * One delivery is over. For a notification, `action` is what was done with the message
   * (`none` for the pending list). Exactly one of `result` / `error`.
   */
  | {
      type: 'handled';
      via: DeliverySource;
      action: AckAction | 'none';
      notification: DeliveryNotification;
      messageId?: string;
      result?: ProcessDeliveryResult;
      error?: unknown;
      elapsedMs: number;
    }
  /**
   * A second message about a delivery in progress (a Pub/Sub duplicate): it waited for it and got
   * the same `action`; or a message about a delivery this loop already finished (`finished`:
   * typically one it took as `next`), acknowledged without a claim.
   */
  | { type: 'duplicate_notification'; action: AckAction; notification: DeliveryNotification; messageId?: string; finished?: true }
  /** A message whose data is not a delivery notification: acknowledged (it would never parse). */
  | { type: 'invalid_notification'; action: 'ack'; messageId?: string; error: InvalidNotificationError }
  /** A pass over the pending list ended: `found` deliveries listed, `started` of them processed (the others were in progress already). */
  | { type: 'catch_up'; found: number; started: number }
  /** Listing the pending deliveries failed; the next pass tries again. */
  | { type: 'catch_up_failed'; error: unknown }
  /** The subscription emitted `error` (the client library reconnects by itself on most). */
  | { type: 'subscription_error'; error: unknown }
  /** `stop()` finished; `abandoned` deliveries were still running when `stopTimeoutMs` passed. */
  | { type: 'stopped'; abandoned: number };

/** Defaults of `runPullLoop`. */
export const DEFAULT_PULL_CONCURRENCY = 10;
/**
 * Deliveries the loop remembers having finished (the newest): a later notification of one is
 * acknowledged without a claim. A finished delivery never becomes claimable again (a resend is a
 * new delivery), and following `next` makes such notifications the rule rather than the exception.
 */
export const REMEMBERED_FINISHED_DELIVERIES = 1_000;
export const DEFAULT_CATCH_UP_INTERVAL_MS = 5 * 60_000;
export const DEFAULT_STOP_TIMEOUT_MS = 120_000;

export interface PullLoopOptions {
  /**
   * Deliveries processed at once (default `DEFAULT_PULL_CONCURRENCY`); more messages wait in
   * memory. Within a conversation one at a time: a notification whose conversation has a delivery
   * in progress waits for its turn (without a slot), and is then acknowledged without a claim when
   * that delivery's end already took it as `next`.
   */
  concurrency?: number;
  /**
   * How often the pending list is walked (default `DEFAULT_CATCH_UP_INTERVAL_MS`, 5 minutes; `0`:
   * never periodically). It is also walked once at start-up unless `catchUpOnStart` is false.
   */
  catchUpIntervalMs?: number;
  /** Walk the pending list at start-up (default true). */
  catchUpOnStart?: boolean;
  /** How long `stop()` waits for deliveries in progress (default `DEFAULT_STOP_TIMEOUT_MS`). */
  stopTimeoutMs?: number;
  /** Options of every `processDelivery` call (`providerTimeoutMs`, `extendLease`). */
  delivery?: Pick<ProcessDeliveryOptions, 'providerTimeoutMs' | 'extendLease'>;
  /** Observes the loop (`PullLoopEvent`). Called synchronously; what it throws is ignored. */
  onEvent?: (event: PullLoopEvent) => void;
  /**
   * For tests: the clock of the loop (the pending-list interval, `stopTimeoutMs`, `elapsedMs`) and
   * of every `processDelivery` call (its `clock` option). Default: the real one.
   */
  clock?: Clock;
}

export interface PullLoop {
  /**
   * Stops: no new message is taken (messages waiting for a slot or their conversation's turn are nacked, so Pub/Sub
   * redelivers them), the pending-list walk ends, deliveries in progress are awaited up to
   * `stopTimeoutMs` (a provider call is never abandoned by the loop itself), then the
   * subscription is closed (which flushes the acks). Safe to call twice.
   */
  stop(): Promise<void>;
  /** Walks the pending list now (unless a walk is already running); resolves when it ends. */
  catchUp(): Promise<void>;
  /** Deliveries in progress. */
  readonly active: number;
}

function isPulledMessage(value: unknown): value is PulledMessage {
  return typeof value === 'object' && value !== null && typeof (value as PulledMessage).ack === 'function' && typeof (value as PulledMessage).nack === 'function';
}

function positiveInteger(name: string, value: number | undefined, fallback: number, min: number): number {
  const v = value ?? fallback;
  if (!Number.isInteger(v) || v < min) throw new RangeError(`${name} must be an integer of at least ${min}`);
  return v;
}

/**
 * Runs the delivery loop on `subscription` until `stop()`. See `ackActionFor` for the ack / nack
 * table; a junk message is acked with an `invalid_notification` event, never an unhandled
 * rejection.
 *
 * ```ts
 * const loop = runPullLoop(client, pubsub.subscription('replies'), sendThroughMyChannel, { onEvent: log });
 * process.on('SIGTERM', () => void loop.stop());
 * ```
 */
export function runPullLoop(client: PullLoopClient, subscription: PullSubscription, provider: Provider, options: PullLoopOptions = {}): PullLoop {
  if (typeof client?.processDelivery !== 'function' || typeof client.deliveries?.pendingItems !== 'function') throw new TypeError('runPullLoop needs a ConnectorClient');
  if (typeof subscription?.on !== 'function' || typeof subscription.removeListener !== 'function' || typeof subscription.close !== 'function') {
    throw new TypeError('runPullLoop needs a subscription with on(), removeListener() and close() (a @google-cloud/pubsub Subscription)');
  }
  // Checked now, not at the first delivery; passed on as given.
  providerHandlers(provider, 'runPullLoop');
  const concurrency = positiveInteger('concurrency', options.concurrency, DEFAULT_PULL_CONCURRENCY, 1);
  const catchUpIntervalMs = positiveInteger('catchUpIntervalMs', options.catchUpIntervalMs, DEFAULT_CATCH_UP_INTERVAL_MS, 0);
  const stopTimeoutMs = positiveInteger('stopTimeoutMs', options.stopTimeoutMs, DEFAULT_STOP_TIMEOUT_MS, 0);
  const clock = clockOption(options.clock);
  // The loop's clock is the deliveries' too: a test drives both with one.
  const deliveryOptions: ProcessDeliveryOptions = { ...options.delivery, ...(options.clock === undefined ? {} : { clock }) };

  const emit = (event: PullLoopEvent): void => {
    try {
      options.onEvent?.(event);
    } catch {
      // An observer must never change what happens to a delivery.
    }
  };

  // Deliveries in progress, by id: a second notification of one (a Pub/Sub duplicate, or the
  // pending list meeting a notified one) waits for it instead of claiming into its live lease.
  const active = new Map<string, Promise<{ action: AckAction }>>();
  // Deliveries this loop finished, oldest first (a Set keeps insertion order), at most REMEMBERED_FINISHED_DELIVERIES.
  const finished = new Set<string>();
  const rememberFinished = (deliveryId: string): void => {
    finished.add(deliveryId);
    if (finished.size > REMEMBERED_FINISHED_DELIVERIES) finished.delete(finished.values().next().value as string);
  };
  const running = new Set<Promise<unknown>>();
  const waiting: Array<() => void> = [];
  let slots = concurrency;
  let stopping = false;

  /** Resolves when a slot is free (FIFO); false when the loop stopped meanwhile. */
  const acquire = (): Promise<boolean> => {
    if (stopping) return Promise.resolve(false);
    if (slots > 0) {
      slots--;
      return Promise.resolve(true);
    }
    return new Promise<boolean>((resolve) => waiting.push(() => resolve(!stopping)));
  };
  const release = (): void => {
    const next = waiting.shift();
    if (next) next();
    else slots++;
  };
  const track = <T>(task: Promise<T>): Promise<T> => {
    running.add(task);
    void task.finally(() => running.delete(task)).catch(() => undefined);
    return task;
  };

  // Per conversation, one delivery at a time in this loop: a busy conversation's key is here, with
  // the deliveries waiting for their turn (holding no slot). A second delivery of the conversation
  // claimed meanwhile would only be answered `waiting_for_previous` (a wasted round trip, and a
  // lock on the conversation's queue contended by every claim), and its turn usually comes as the
  // `next` of the one in progress, which then needs no claim of its own notification at all.
  const conversations = new Map<string, Array<(granted: boolean) => void>>();
  /** Resolves true once `conversationId` is this caller's (FIFO); false when the loop stopped meanwhile. */
  const enterConversation = (conversationId: string): Promise<boolean> => {
    if (stopping) return Promise.resolve(false);
    const queue = conversations.get(conversationId);
    if (queue === undefined) {
      conversations.set(conversationId, []);
      return Promise.resolve(true);
    }
    return new Promise<boolean>((resolve) => queue.push(resolve));
  };
  const leaveConversation = (conversationId: string): void => {
    const next = conversations.get(conversationId)?.shift();
    if (next) next(true);
    else conversations.delete(conversationId);
  };

  /**
   * One delivery, under a slot and its conversation's turn, both held by the caller; never
   * rejects. At its end the slot is released, and the turn passes to the conversation's next
   * delivery when the end named it (`next`: processed at once, ahead of the notifications waiting
   * for the conversation), or else to the first of those.
   */
  const deliver = (notification: DeliveryNotification, via: DeliverySource, messageId: string | undefined): Promise<{ action: AckAction }> => {
    const begun = clock.now();
    let next: DeliveryNotification | undefined;
    const task = (async () => {
      let outcome: { result: ProcessDeliveryResult } | { error: unknown };
      try {
        const result = await client.processDelivery(notification, provider, { ...deliveryOptions, onEvent: (event) => emit({ ...event, via }) });
        outcome = { result };
      } catch (error) {
        outcome = { error };
      }
      const action = ackActionFor(outcome);
      emit({
        type: 'handled',
        via,
        action: via === 'notification' ? action : 'none',
        notification,
        ...(messageId === undefined ? {} : { messageId }),
        ...outcome,
        elapsedMs: clock.now() - begun,
      });
      if ('result' in outcome) {
        const { result } = outcome;
        // Skipped (waiting) and re-queued deliveries come back; every other result is final.
        if (result.kind !== 'skipped' && result.kind !== 'retry_scheduled') rememberFinished(notification.deliveryId);
        if ('next' in result && result.next !== undefined) next = result.next;
      }
      return { action };
    })();
    active.set(notification.deliveryId, task);
    void task.finally(() => {
      if (active.get(notification.deliveryId) === task) active.delete(notification.deliveryId);
      release();
      // The conversation's next delivery, claimable now: at once, not after its notification's
      // round trip through Pub/Sub (which then finds it finished).
      if (next !== undefined && next.conversationId === notification.conversationId) void track(deliverNext(next));
      else {
        leaveConversation(notification.conversationId);
        // (A `next` of another conversation is not something the service answers; taken in its turn all the same.)
        if (next !== undefined) void track(deliverNextInTurn(next));
      }
    });
    return task;
  };

  /** A delivery named by the answer that ended its predecessor, in the turn that predecessor passed on. */
  const deliverNext = async (next: DeliveryNotification): Promise<void> => {
    if (!active.has(next.deliveryId) && !finished.has(next.deliveryId) && (await acquire())) {
      await deliver(next, 'next', undefined);
      return;
    }
    leaveConversation(next.conversationId);
  };
  const deliverNextInTurn = async (next: DeliveryNotification): Promise<void> => {
    if (await enterConversation(next.conversationId)) await deliverNext(next);
  };

  let closed = false;
  const settle = (message: PulledMessage, action: AckAction): void => {
    // A delivery abandoned by stop() that ends later: the subscription is closed, Pub/Sub redelivers the message.
    if (closed) return;
    try {
      if (action === 'ack') message.ack();
      else message.nack();
    } catch (error) {
      emit({ type: 'subscription_error', error });
    }
  };

  const onMessage = (value: unknown): void => {
    if (!isPulledMessage(value)) {
      emit({ type: 'subscription_error', error: new TypeError('the subscription emitted a message without ack() and nack()') });
      return;
    }
    const message = value;
    const messageId = typeof message.id === 'string' ? message.id : undefined;
    let notification: DeliveryNotification;
    try {
      notification = parsePulledNotification(message);
    } catch (error) {
      settle(message, 'ack');
      emit({ type: 'invalid_notification', action: 'ack', ...(messageId === undefined ? {} : { messageId }), error: error instanceof InvalidNotificationError ? error : new InvalidNotificationError(String(error)) });
      return;
    }
    if (finished.has(notification.deliveryId)) {
      settle(message, 'ack');
      emit({ type: 'duplicate_notification', action: 'ack', notification, ...(messageId === undefined ? {} : { messageId }), finished: true });
      return;
    }
    const shareFate = async (inProgress: Promise<{ action: AckAction }>): Promise<void> => {
      // The same delivery is being processed: this message shares its fate.
      const { action } = await inProgress;
      settle(message, action);
      emit({ type: 'duplicate_notification', action, notification, ...(messageId === undefined ? {} : { messageId }) });
    };
    void track(
      (async () => {
        const inProgress = active.get(notification.deliveryId);
        if (inProgress !== undefined) return shareFate(inProgress);
        if (!(await enterConversation(notification.conversationId))) {
          settle(message, 'nack'); // stopped while waiting for its turn: let Pub/Sub redeliver it
          return;
        }
        // Its turn came: the delivery before it may have named it (`next`) and this loop processed it.
        if (finished.has(notification.deliveryId)) {
          leaveConversation(notification.conversationId);
          settle(message, 'ack');
          emit({ type: 'duplicate_notification', action: 'ack', notification, ...(messageId === undefined ? {} : { messageId }), finished: true });
          return;
        }
        const startedMeanwhile = active.get(notification.deliveryId);
        if (startedMeanwhile !== undefined) {
          // Only a notification naming another conversation for the same delivery gets here.
          leaveConversation(notification.conversationId);
          return shareFate(startedMeanwhile);
        }
        if (!(await acquire())) {
          leaveConversation(notification.conversationId);
          settle(message, 'nack'); // stopped while waiting for a slot: let Pub/Sub redeliver it
          return;
        }
        const { action } = await deliver(notification, 'notification', messageId);
        settle(message, action);
      })(),
    );
  };

  // After stop(), a closed subscription may still report an error (a stream retry the Pub/Sub client
  // scheduled before the close). The listener stays so that such an error never becomes an
  // unhandled 'error' event, which would end the connector's process; it is no longer reported.
  const onError = (error: unknown): void => {
    if (!closed) emit({ type: 'subscription_error', error });
  };

  // The pending list: deliveries this connector may claim now, notified or not.
  const catchUpAbort = new AbortController();
  let walking: Promise<void> | undefined;
  const catchUp = (): Promise<void> => {
    if (stopping) return Promise.resolve();
    walking ??= track(
      (async () => {
        let found = 0;
        let started = 0;
        try {
          for await (const notification of client.deliveries.pendingItems({ signal: catchUpAbort.signal })) {
            found++;
            // In progress, or its conversation is: the turn reaches it (as `next` or by its notification).
            if (active.has(notification.deliveryId) || conversations.has(notification.conversationId)) continue;
            if (!(await acquire())) break;
            if (active.has(notification.deliveryId) || finished.has(notification.deliveryId) || conversations.has(notification.conversationId)) {
              release();
              continue;
            }
            void enterConversation(notification.conversationId); // free: granted at once
            started++;
            void track(deliver(notification, 'catch_up', undefined));
          }
          emit({ type: 'catch_up', found, started });
        } catch (error) {
          if (!catchUpAbort.signal.aborted) emit({ type: 'catch_up_failed', error });
        }
      })().finally(() => {
        walking = undefined;
      }),
    );
    return walking;
  };

  subscription.on('message', onMessage);
  subscription.on('error', onError);
  if (options.catchUpOnStart !== false) void catchUp();
  // Every catchUpIntervalMs (a timer re-armed as it fires, like setInterval), never keeping the process alive.
  let timer: unknown;
  const every = (): void => {
    timer = clock.setTimeout(every, catchUpIntervalMs);
    unrefTimer(timer);
    void catchUp();
  };
  if (catchUpIntervalMs > 0) {
    timer = clock.setTimeout(every, catchUpIntervalMs);
    unrefTimer(timer);
  }

  let stopped: Promise<void> | undefined;
  return {
    catchUp,
    get active() {
      return active.size;
    },
    stop() {
      stopped ??= (async () => {
        stopping = true;
        clock.clearTimeout(timer);
        subscription.removeListener('message', onMessage);
        catchUpAbort.abort(new Error('the pull loop stopped'));
        // Messages waiting for a slot learn that the loop stopped (and are nacked).
        for (const next of waiting.splice(0)) next();
        // And so do those waiting for their conversation's turn.
        for (const queue of conversations.values()) for (const next of queue.splice(0)) next(false);
        let timeout: unknown;
        const timedOut = new Promise<'timeout'>((resolve) => {
          timeout = clock.setTimeout(() => resolve('timeout'), stopTimeoutMs);
        });
        // Until nothing runs: a delivery may start just after the first look (a walk that had its slot).
        let how: 'done' | 'timeout' = 'done';
        while (running.size > 0 && how === 'done') {
          how = await Promise.race([Promise.allSettled([...running]).then(() => 'done' as const), timedOut]);
        }
        clock.clearTimeout(timeout);
        const abandoned = how === 'timeout' ? active.size : 0;
        closed = true;
        try {
          await subscription.close();
        } finally {
          emit({ type: 'stopped', abandoned });
        }
      })();
      return stopped;
    },
  };
}
