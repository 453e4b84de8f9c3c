/**
 * The connector's side of an erasure (docs/contract.md#erasures): `POST /v1/erasures/pending` lists
 * the integration's finished erasures it has not acknowledged, in id order, behind an opaque
 * cursor; `POST /v1/erasures/ack` records that it purged its own copies. A finished erasure
 * carries `pendingAck: true` until acknowledged, so the list reads one index range of the
 * integration's unacknowledged erasures and never the acknowledged ones.
 */
import type { Firestore } from 'firebase-admin/firestore';
import { decodeOwnedCursor, encodeOwnedCursor } from '../platform/cursor';
import { NotFoundError } from '../rules/errors';
import { isStorableDocumentId } from '../platform/ids';
import { paths } from '../platform/paths';
import { collectionQuery, QUERIES } from '../platform/queries';
import type { ErasuresPendingResponse } from './schemas';

interface Owner {
  workspaceId: string;
  integrationId: string;
}

interface Position {
  erasureId: string;
}

/** The erasures list's cursors carry their own owner tag (docs/contract.md#erasures). */
const SCOPE = 'erasures\u0000';

export function encodeErasureCursor(owner: Owner, position: Position): string {
  return encodeOwnedCursor(SCOPE, owner, { e: position.erasureId });
}

/** The position a cursor stands for; 400 `invalid_cursor` when it is malformed or another integration's. */
export function decodeErasureCursor(owner: Owner, cursor: string): Position {
  return decodeOwnedCursor(SCOPE, owner, cursor, (c) => (typeof c.e === 'string' && isStorableDocumentId(c.e) && Object.keys(c).length === 1 ? { erasureId: c.e } : null));
}

const millisOf = (value: unknown): number => (typeof value === 'number' ? value : typeof (value as { toMillis?: unknown } | null)?.toMillis === 'function' ? (value as { toMillis(): number }).toMillis() : 0);

/** One page of the integration's unacknowledged finished erasures. */
export async function pendingErasures(db: Firestore, owner: Owner, options: { limit: number; cursor?: string | undefined }): Promise<ErasuresPendingResponse> {
  const after = options.cursor === undefined ? null : decodeErasureCursor(owner, options.cursor);
  let query = collectionQuery(db.collection(paths.erasures(owner.workspaceId)), QUERIES.unacknowledgedErasures, owner.integrationId, true);
  if (after !== null) query = query.startAfter(after.erasureId);
  const docs = (await query.limit(options.limit + 1).get()).docs;
  const page = docs.slice(0, options.limit);
  const last = page.at(-1);
  return {
    erasures: page.map((doc) => {
      const d = doc.data();
      return {
        erasureId: doc.id,
        externalCustomerId: String(d.externalCustomerId),
        externalConversationIds: Array.isArray(d.externalConversationIds) ? d.externalConversationIds.map(String) : [],
        requestedAt: millisOf(d.requestedAt),
      };
    }),
    nextCursor: docs.length > options.limit && last !== undefined ? encodeErasureCursor(owner, { erasureId: last.id }) : null,
  };
}

/**
 * Records the connector's acknowledgement (`acknowledgedAt`, kept from the first one; repeatable).
 * Unknown, another integration's, or not yet finished: 404 `erasure_not_found` (an erasure is
 * shown to the connector once it is done).
 */
export async function acknowledgeErasure(db: Firestore, owner: Owner, erasureId: string, now: number): Promise<{ acknowledged: true }> {
  const notFound = () => new NotFoundError('erasure_not_found', 'erasureId: no finished erasure of this integration has this id.');
  if (!isStorableDocumentId(erasureId)) throw notFound();
  const ref = db.doc(paths.erasure(owner.workspaceId, erasureId));
  await db.runTransaction(async (tx) => {
    const d = (await tx.get(ref)).data();
    if (d === undefined || d.integrationId !== owner.integrationId || d.status !== 'done') throw notFound();
    if (d.acknowledgedAt === undefined) tx.update(ref, { acknowledgedAt: now, pendingAck: false });
  });
  return { acknowledged: true };
}

