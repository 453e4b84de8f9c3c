/**
 * The catch-up list (decisions 7): `POST /v1/deliveries/pending` lists the caller's deliveries
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
import { collectionQuery, QUERIES } from '../platform/queries';
import type { DeliveryNotification } from './publisher';
import type { DeliveryCheck } from './store';

export interface PendingPage {
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

/** One page of the list at `now` (read outside any transaction: it is a snapshot for the connector). */
export async function pendingPage(
  db: Firestore,
  owner: { workspaceId: string; integrationId: string },
  options: { limit: number; cursor?: string | undefined; now: number },
): Promise<PendingPage> {
  const after = options.cursor === undefined ? null : decodeCursor(owner, options.cursor);
  let query = collectionQuery(db.collection(paths.deliveryChecks()), QUERIES.pendingOfIntegration, owner.workspaceId, owner.integrationId, options.now);
  if (after !== null) query = query.startAfter(after.pendingAt, after.deliveryId);
  // One more than asked tells whether there is a next page.
  const docs = (await query.limit(options.limit + 1).get()).docs;
  const page = docs.slice(0, options.limit).map((doc) => doc.data() as DeliveryCheck);
  const last = page.at(-1);
  return {
    deliveries: page.map((d) => ({ deliveryId: d.deliveryId, workspaceId: d.workspaceId, integrationId: d.integrationId, conversationId: d.conversationId, messageId: d.messageId })),
    nextCursor: docs.length > options.limit && last !== undefined ? encodeCursor(owner, { pendingAt: last.pendingAt, deliveryId: last.deliveryId }) : null,
  };
}
