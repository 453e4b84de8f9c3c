/**
 * The catch-up list (docs/contract.md#catch-up): `POST /v1/deliveries/pending` lists the caller's deliveries
 * that are claimable now, oldest first, a page at a time behind an opaque cursor. A connector
 * that lost notifications (subscription created late, deleted, expired) finds its work here.
 *
 * It reads `deliveryChecks/` (./store.ts `DeliveryCheck`): one document per claimable delivery,
 * carrying its notification's ids and `pendingAt` (../rules/record.ts `withPendingAt`), so the query reads
 * one index range of the caller's integration and never a finished delivery. New deliveries get a
 * later `pendingAt` and appear after the current position: paging while they arrive has no
 * duplicates and no gaps. A delivery that is claimed leaves the list; one that becomes claimable
 * again (lease expired, retry due) comes back with its new time.
 */
import type { Firestore } from 'firebase-admin/firestore';
import { decodeOwnedCursor, encodeOwnedCursor, type CursorOwner } from '../platform/cursor';
import { paths } from '../platform/paths';
import { config } from '../platform/config';
import { collectionQuery, QUERIES } from '../platform/queries';
import { allShards } from '../platform/shards';
import { notificationOf, type DeliveryNotification } from '../rules/record';
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

export function encodeCursor(owner: CursorOwner, position: Position): string {
  return encodeOwnedCursor('', owner, { t: position.pendingAt, d: position.deliveryId });
}

/** The position a cursor stands for; 400 `invalid_cursor` when it is malformed or another integration's. */
export function decodeCursor(owner: CursorOwner, cursor: string): Position {
  return decodeOwnedCursor('', owner, cursor, (c) =>
    typeof c.t === 'number' &&
    Number.isSafeInteger(c.t) &&
    c.t >= 0 &&
    typeof c.d === 'string' &&
    c.d.length > 0 &&
    c.d.length <= 128 &&
    Object.keys(c).length === 2
      ? { pendingAt: c.t, deliveryId: c.d }
      : null,
  );
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
    deliveries: page.map(notificationOf),
    nextCursor: merged.length > options.limit && last !== undefined ? encodeCursor(owner, { pendingAt: last.pendingAt, deliveryId: last.deliveryId }) : null,
  };
}
