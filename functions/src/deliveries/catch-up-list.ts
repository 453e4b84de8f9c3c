/**
 * The catch-up list (docs/contract.md#catch-up): `POST /v1/deliveries/pending` lists the caller's deliveries
 * that are claimable now, oldest first, a page at a time behind an opaque cursor. A connector
 * that lost notifications (subscription created late, deleted, expired) finds its work here.
 *
 * It reads `deliveryChecks/` (./store.ts `DeliveryCheck`): one document per claimable delivery,
 * carrying its notification's ids and `pendingAt` (./record.ts `withPendingAt`), so the query reads
 * one index range of the caller's integration and never a finished delivery. New deliveries get a
 * later `pendingAt` and appear after the current position: paging while they arrive has no
 * duplicates and no gaps. A delivery that is claimed leaves the list; one that becomes claimable
 * again (lease expired, retry due) comes back with its new time.
 */
import { createHash } from 'node:crypto';
import type { Firestore } from 'firebase-admin/firestore';
import { BadRequestError } from '../platform/errors';
import { paths } from '../platform/paths';
import { config } from '../platform/config';
import { collectionQuery, QUERIES } from '../platform/queries';
import { allShards } from '../platform/shards';
import type { DeliveryNotification } from './publisher';
import type { DeliveryCheck } from './store';

/** One page of the catch-up list (the response of `POST /v1/deliveries/pending`). */
export interface CatchUpPage {
  deliveries: DeliveryNotification[];
  nextCursor: string | null;
}

/** Where a page ends: the last item's `pendingAt` and id, and whose list it is. */
interface Position {
  pendingAt: number;
  deliveryId: string;
}

/** Ties a cursor to one integration without naming it (a cursor may end up in logs). */
const ownerTag = (workspaceId: string, integrationId: string): string =>
  createHash('sha256').update(`${workspaceId}\u0000${integrationId}`).digest('base64url').slice(0, 16);

export function encodeCursor(owner: { workspaceId: string; integrationId: string }, position: Position): string {
  return Buffer.from(JSON.stringify({ v: 1, o: ownerTag(owner.workspaceId, owner.integrationId), t: position.pendingAt, d: position.deliveryId })).toString('base64url');
}

const invalidCursor = (): BadRequestError => new BadRequestError('invalid_cursor', 'cursor: not a cursor of this list; start again without one.');

/** The position a cursor stands for; 400 `invalid_cursor` when it is malformed or another integration's. */
export function decodeCursor(owner: { workspaceId: string; integrationId: string }, cursor: string): Position {
  let value: unknown;
  try {
    value = /^[A-Za-z0-9_-]+$/.test(cursor) ? JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) : undefined;
  } catch {
    value = undefined;
  }
  const c = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>;
  const valid =
    c.v === 1 &&
    c.o === ownerTag(owner.workspaceId, owner.integrationId) &&
    typeof c.t === 'number' &&
    Number.isSafeInteger(c.t) &&
    c.t >= 0 &&
    typeof c.d === 'string' &&
    c.d.length > 0 &&
    c.d.length <= 128 &&
    Object.keys(c).length === 4;
  if (!valid) throw invalidCursor();
  return { pendingAt: c.t as number, deliveryId: c.d as string };
}

/** Catch-up list order: `pendingAt`, then the delivery id (Firestore's `__name__` order for these ids). */
function byPosition(a: Position, b: Position): number {
  return a.pendingAt - b.pendingAt || (a.deliveryId < b.deliveryId ? -1 : a.deliveryId > b.deliveryId ? 1 : 0);
}

/**
 * The first `count` entries of several lists that are each already in list order (one per list
 * shard): what one query over an unsharded index would have returned.
 */
export function mergeShardPages<T extends Position>(pages: ReadonlyArray<readonly T[]>, count: number): T[] {
  return pages.flat().sort(byPosition).slice(0, count);
}

/**
 * One page of the list at `now` (read outside any transaction: it is a snapshot for the
 * connector). The list's index is sharded (LIST_SHARDS, docs/capacity.md): each shard is read from
 * the cursor on, one more than asked (which tells whether there is a next page), and merged.
 */
export async function catchUpPage(
  db: Firestore,
  owner: { workspaceId: string; integrationId: string },
  options: { limit: number; cursor?: string | undefined; now: number },
): Promise<CatchUpPage> {
  const after = options.cursor === undefined ? null : decodeCursor(owner, options.cursor);
  const checks = db.collection(paths.deliveryChecks());
  const pages = await Promise.all(
    allShards(config().listShards).map(async (listShard) => {
      let query = collectionQuery(checks, QUERIES.claimableOfIntegration, owner.workspaceId, owner.integrationId, listShard, options.now);
      if (after !== null) query = query.startAfter(after.pendingAt, after.deliveryId);
      const docs = (await query.limit(options.limit + 1).get()).docs;
      return docs.map((doc) => doc.data() as DeliveryCheck & Position);
    }),
  );
  const merged = mergeShardPages(pages, options.limit + 1);
  const page = merged.slice(0, options.limit);
  const last = page.at(-1);
  return {
    deliveries: page.map((d) => ({ deliveryId: d.deliveryId, workspaceId: d.workspaceId, integrationId: d.integrationId, conversationId: d.conversationId, messageId: d.messageId })),
    nextCursor: merged.length > options.limit && last !== undefined ? encodeCursor(owner, { pendingAt: last.pendingAt, deliveryId: last.deliveryId }) : null,
  };
}
