import type { AckErasureInput, AckErasureResult, ErasureNotice, PendingErasuresInput, PendingErasuresPage } from '../types.js';
import { acknowledgeErasure, listPendingErasures, type AcknowledgeErasureRequest, type ListPendingErasuresRequest } from './api.generated.js';
import { readOperation } from './response.js';
import type { CallOptions, Transport } from './transport.js';

/** A page as documented, and what the document cannot say: a cursor is never empty. */
function validPage(page: PendingErasuresPage): PendingErasuresPage | undefined {
  return page.nextCursor === '' ? undefined : page;
}

/** Options of `erasures.pendingItems()`. */
export interface PendingErasureItemsOptions {
  /** Page size, 1 to 100 (default 50). */
  limit?: number;
  /** Aborts the listing (also a call in progress). */
  signal?: AbortSignal;
}

/**
 * `client.erasures`: the erasures of customers the connector must purge from its own storage
 * (docs/decisions.md#erasure-on-the-connector-side). The service lists an erasure once it has erased that customer
 * itself, until the connector acknowledges it.
 */
export class ErasuresApi {
  readonly #transport: Transport;

  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /**
   * One page of the erasures this integration has not acknowledged yet, oldest first:
   * `{ erasures: [{ erasureId, externalCustomerId, externalConversationIds, requestedAt }], nextCursor }`.
   * Pass `nextCursor` back as `cursor` for the next page; it is `null` on the last one.
   * `pendingItems()` pages for you.
   */
  async pending(input: PendingErasuresInput = {}, options: CallOptions = {}): Promise<PendingErasuresPage> {
    const json: ListPendingErasuresRequest = {};
    if (input.limit !== undefined) json.limit = input.limit;
    if (input.cursor !== undefined && input.cursor !== null) json.cursor = input.cursor;
    const answer = await this.#transport.post(listPendingErasures.path, { json }, options);
    return readOperation(answer, listPendingErasures, { refine: validPage });
  }

  /**
   * Records that you purged your own copies of the erasure's customer. Safe to repeat
   * (`{ acknowledged: true }` every time); an acknowledged erasure leaves the pending list. An id
   * that is not an erasure of this integration is a `NotFoundError`.
   */
  async ack(input: AckErasureInput, options: CallOptions = {}): Promise<AckErasureResult> {
    const json: AcknowledgeErasureRequest = { erasureId: input.erasureId };
    const answer = await this.#transport.post(acknowledgeErasure.path, { json }, options);
    return readOperation(answer, acknowledgeErasure);
  }

  /**
   * The pending erasures one at a time: it follows the cursors, fetching the next page only when
   * the current one is used up; `break` stops the listing. Acknowledging an item while you page is
   * fine (the cursor is a position, not an offset).
   *
   * ```ts
   * for await (const erasure of client.erasures.pendingItems()) {
   *   await purgeCustomer(erasure.externalCustomerId, erasure.externalConversationIds);
   *   await client.erasures.ack({ erasureId: erasure.erasureId });
   * }
   * ```
   */
  async *pendingItems(options: PendingErasureItemsOptions = {}): AsyncGenerator<ErasureNotice, void, undefined> {
    const call = options.signal === undefined ? {} : { signal: options.signal };
    let cursor: string | null = null;
    do {
      const page: PendingErasuresPage = await this.pending({ ...(options.limit === undefined ? {} : { limit: options.limit }), ...(cursor === null ? {} : { cursor }) }, call);
      yield* page.erasures;
      cursor = page.nextCursor;
    } while (cursor !== null);
  }
}

/** Purges the connector's own copies of one erased customer. Must be idempotent: see `processErasures`. */
export type PurgeErasure = (erasure: ErasureNotice) => unknown;

/** The part of the client `processErasures` uses. */
export interface ErasuresClient {
  erasures: Pick<ErasuresApi, 'pendingItems' | 'ack'>;
}

/** What one `processErasures` run did. */
export interface ProcessErasuresResult {
  /** Purged and acknowledged, in list order. */
  acknowledged: string[];
  /** Not acknowledged: the purge threw (`step: 'purge'`) or the ack failed (`step: 'ack'`). They stay pending and come again on the next run. */
  failed: Array<{ erasureId: string; step: 'purge' | 'ack'; error: unknown }>;
}

export interface ProcessErasuresOptions extends PendingErasureItemsOptions {
  /** Called after each erasure, acknowledged or not (for logs). */
  onErasure?: (erasure: ErasureNotice, outcome: { acknowledged: true } | { acknowledged: false; step: 'purge' | 'ack'; error: unknown }) => void;
}

/**
 * Works through the pending erasures once: for each, `await purge(erasure)`, then
 * `erasures.ack({ erasureId })`. Run it at start-up and on a timer (every few minutes).
 *
 * **At least once.** An erasure is acknowledged only after its purge resolved, so a crash, a
 * stop or a lost ack answer between the two lists the same erasure again and `purge` runs again
 * for it. `purge` must therefore be idempotent: deleting what is already gone is a success. A purge
 * that throws leaves its erasure pending (the run goes on with the next one); an erasure is never
 * acknowledged without a purge that resolved.
 *
 * A failure to list (after the client's retries) rejects; failures of single erasures are in the
 * result's `failed`.
 */
export async function processErasures(client: ErasuresClient, purge: PurgeErasure, options: ProcessErasuresOptions = {}): Promise<ProcessErasuresResult> {
  const result: ProcessErasuresResult = { acknowledged: [], failed: [] };
  const listing: PendingErasureItemsOptions = {};
  if (options.limit !== undefined) listing.limit = options.limit;
  if (options.signal !== undefined) listing.signal = options.signal;
  const call = options.signal === undefined ? {} : { signal: options.signal };
  for await (const erasure of client.erasures.pendingItems(listing)) {
    let step: 'purge' | 'ack' = 'purge';
    try {
      await purge(erasure);
      step = 'ack';
      await client.erasures.ack({ erasureId: erasure.erasureId }, call);
    } catch (error) {
      options.signal?.throwIfAborted();
      result.failed.push({ erasureId: erasure.erasureId, step, error });
      options.onErasure?.(erasure, { acknowledged: false, step, error });
      continue;
    }
    result.acknowledged.push(erasure.erasureId);
    options.onErasure?.(erasure, { acknowledged: true });
  }
  return result;
}
