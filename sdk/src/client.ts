import type { OPERATIONS } from './internal/api.generated.js';
import { DeliveriesApi, type FILE_OPERATIONS } from './internal/deliveries.js';
import { ChannelApi } from './internal/channel.js';
import { ErasuresApi } from './internal/erasures.js';
import { defaultSleep, type FetchLike, normalizeBaseUrl, type SleepFn, Transport } from './internal/transport.js';
import { MessagesApi } from './internal/messages.js';
import { processDelivery, type ProcessDeliveryOptions, type ProcessDeliveryResult, type Provider } from './internal/process.js';
import { DEFAULT_TIMEOUT_MS, resolveRetryPolicy, type RetryOptions, type RetryPolicy } from './internal/retry.js';
import type { DeliveryNotification } from './types.js';
import { SDK_VERSION } from './version.js';

export interface ConnectorClientOptions {
  /** The integration key (`Authorization: Bearer <key>`). Server-side only; never logged by the SDK. */
  integrationKey: string;
  /** `{base_url}` of the service, e.g. `https://api.example.com` (paths `/v1/...` are appended). */
  baseUrl: string;
  /**
   * Equivalent host for networks that cannot reach `baseUrl`. Used for an attempt only when the
   * default host could not be reached at all (connection refused, DNS failure: nothing was sent);
   * never after a timeout or any failure after which the request may have arrived.
   */
  fallbackBaseUrl?: string;
  /** Limit of one HTTP attempt in ms (connect + send + read). Default `DEFAULT_TIMEOUT_MS`. */
  timeoutMs?: number;
  /** Retry settings, or just the retry limit. Defaults: the `RETRY_*`/`BACKOFF_*` constants. */
  retry?: RetryOptions | number;
  /** `fetch` implementation; default the global `fetch` of Node.js. */
  fetch?: FetchLike;
  /** Waits between retries; inject a fake in tests. Default: a `setTimeout` promise. */
  sleep?: SleepFn;
  /** Clock in epoch ms (used for HTTP-date `Retry-After`). Default `Date.now`. */
  now?: () => number;
  /** Random source in [0, 1) for backoff jitter. Default `Math.random`. */
  random?: () => number;
}

const INSPECT = Symbol.for('nodejs.util.inspect.custom');

/**
 * Client of the support desk's connector API. Create one per integration key and reuse it.
 *
 * ```ts
 * const client = new ConnectorClient({ integrationKey: process.env.SUPPORT_DESK_KEY!, baseUrl });
 * await client.messages.send({ externalConversationId: 'chat-1', sender: { externalId: 'u-1' }, text: 'Hi' });
 * ```
 */
export class ConnectorClient {
  /** Incoming messages (`send`) and the events about them: `edit`, `delete`, `react`, `typing`. */
  readonly messages: MessagesApi;
  /** Delivery operations: `claim`, `start`, `extend`, `complete`, `fail`, `receipt`, and the catch-up list (`pending`, `pendingItems`). */
  readonly deliveries: DeliveriesApi;
  /** Erasures of customers to purge from the connector's own storage: `pending`, `pendingItems`, `ack` (and `processErasures`). */
  readonly erasures: ErasuresApi;
  /** The channel as the connector declares it: `update` (its reply window and message templates). */
  readonly channel: ChannelApi;
  readonly #transport: Transport;

  constructor(options: ConnectorClientOptions) {
    if (typeof options !== 'object' || options === null) throw new TypeError('ConnectorClient needs an options object');
    const key = options.integrationKey;
    // Never echo the key (not even in part) in these messages.
    if (typeof key !== 'string' || key.trim() === '') throw new TypeError('integrationKey is required');
    // eslint-disable-next-line no-control-regex -- rejecting control characters is the point
    if (/[\s\u0000-\u001f\u007f]/.test(key)) throw new TypeError('integrationKey must not contain whitespace or control characters');
    const baseUrl = normalizeBaseUrl('baseUrl', options.baseUrl);
    const fallbackBaseUrl = options.fallbackBaseUrl === undefined ? undefined : normalizeBaseUrl('fallbackBaseUrl', options.fallbackBaseUrl);
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) throw new RangeError('timeoutMs must be a positive number');
    const fetchImpl: FetchLike = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    if (typeof fetchImpl !== 'function') throw new TypeError('fetch must be a function');

    this.#transport = new Transport({
      integrationKey: key,
      baseUrl,
      fallbackBaseUrl,
      timeoutMs,
      retry: resolveRetryPolicy(options.retry),
      fetch: fetchImpl,
      sleep: options.sleep ?? defaultSleep,
      now: options.now ?? Date.now,
      random: options.random ?? Math.random,
      userAgent: `support-desk-connector-sdk/${SDK_VERSION} node/${process.versions.node}`,
    });
    this.messages = new MessagesApi(this.#transport);
    this.deliveries = new DeliveriesApi(this.#transport);
    this.erasures = new ErasuresApi(this.#transport);
    this.channel = new ChannelApi(this.#transport);
  }

  get baseUrl(): string {
    return this.#transport.settings.baseUrl;
  }
  get fallbackBaseUrl(): string | undefined {
    return this.#transport.settings.fallbackBaseUrl;
  }
  get timeoutMs(): number {
    return this.#transport.settings.timeoutMs;
  }
  /** The effective retry policy (frozen). */
  get retry(): RetryPolicy {
    return this.#transport.settings.retry;
  }

  /**
   * Runs one delivery by the rules of docs/contract.md#connector-rules: claim; on `ready`, start; only if start answers
   * `sending`, call the provider once; complete with its ids, or fail with `retry` / `failed` / `unknown`
   * from what it threw. Accepts a parsed notification (see `parsePushNotification`) or a deliveryId.
   *
   * `provider` is your `send` function, or `{ send, edit?, unsend? }` (one optional callback per
   * delivery kind): `edit` / `unsend` run the deliveries of those kinds (the claim's `kind`) with the reply's provider ids (`target`); a kind
   * without its callback is failed `failed` with code `unsupported_kind`, without being started.
   */
  processDelivery(
    notificationOrDeliveryId: DeliveryNotification | Pick<DeliveryNotification, 'deliveryId'> | string,
    provider: Provider,
    options?: ProcessDeliveryOptions,
  ): Promise<ProcessDeliveryResult> {
    return processDelivery(this.deliveries, notificationOrDeliveryId, provider, options);
  }

  /** Safe description: no key. */
  toJSON(): { baseUrl: string; fallbackBaseUrl?: string; timeoutMs: number; retry: RetryPolicy } {
    const out: { baseUrl: string; fallbackBaseUrl?: string; timeoutMs: number; retry: RetryPolicy } = { baseUrl: this.baseUrl, timeoutMs: this.timeoutMs, retry: this.retry };
    if (this.fallbackBaseUrl !== undefined) out.fallbackBaseUrl = this.fallbackBaseUrl;
    return out;
  }

  toString(): string {
    return `ConnectorClient(${this.baseUrl})`;
  }

  [INSPECT](): string {
    return `ConnectorClient ${JSON.stringify(this.toJSON())}`;
  }
}

/** The method names of one API object of the client (`claim`, `start`, ... of `client.deliveries`). */
type MethodsOf<T> = { [K in keyof T]: T[K] extends (...args: never[]) => unknown ? K : never }[keyof T] & string;
/** `deliveries.claim`, `messages.send`, ...: a method of the client, by its path from the client. */
type ClientApi = 'messages' | 'deliveries' | 'erasures' | 'channel';
type ClientMethod = { [Api in ClientApi]: `${Api}.${MethodsOf<ConnectorClient[Api]>}` }[ClientApi];

/**
 * Which method of the client calls each operation of the API, by operationId. Internal (index.ts
 * does not export it). Typed against the operations of the generated API module and the file
 * operations, so the SDK does not compile when the document gains an operation without a method
 * here, or when a method named here does not exist. test/unit/completeness.test.ts maps every
 * operation of the service's catalogue through it and fails when one has no method or its method
 * does not call it. The methods are written by hand: each adds behaviour a generated one would not
 * (ids generated once and reused on retries, cursors followed, digests checked).
 */
export const OPERATION_METHODS = {
  sendMessage: 'messages.send',
  // One operation, four methods (each names it): edit, delete, react and typing are its `type`s.
  sendMessageEvent: 'messages.edit',
  updateChannel: 'channel.update',
  claimDelivery: 'deliveries.claim',
  startDelivery: 'deliveries.start',
  extendDeliveryLease: 'deliveries.extend',
  completeDelivery: 'deliveries.complete',
  failDelivery: 'deliveries.fail',
  listPendingDeliveries: 'deliveries.pending',
  reportDeliveryReceipt: 'deliveries.receipt',
  getDeliveryAttachment: 'deliveries.attachment',
  listPendingErasures: 'erasures.pending',
  acknowledgeErasure: 'erasures.ack',
} as const satisfies Record<keyof typeof OPERATIONS | keyof typeof FILE_OPERATIONS, ClientMethod>;
