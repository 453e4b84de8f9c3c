/**
 * Firestore access for integrations: the document by id and the key-hash lookups. Parsing is
 * ./model.ts's.
 */
import * as logger from '../platform/log';
import type { DocumentReference, DocumentSnapshot, Firestore } from 'firebase-admin/firestore';
import { paths } from '../platform/paths';
import { groupQuery, QUERIES } from '../platform/queries';
import { parseIntegration, type Integration } from './model';

export const integrationRef = (db: Firestore, workspaceId: string, integrationId: string): DocumentReference =>
  db.doc(paths.integration(workspaceId, integrationId));

/** An integration snapshot as the model (the workspace comes from the document's path). */
export function integrationOf(snap: DocumentSnapshot): Integration | null {
  const workspaceId = snap.ref.parent.parent?.id;
  return workspaceId === undefined ? null : parseIntegration(workspaceId, snap.id, snap.data());
}

export async function readIntegration(db: Firestore, workspaceId: string, integrationId: string): Promise<Integration | null> {
  return parseIntegration(workspaceId, integrationId, (await integrationRef(db, workspaceId, integrationId).get()).data());
}

export interface KeyHashMatch {
  snap: DocumentSnapshot;
  /** The hash is the integration's previous key (rotation overlap), not its current one. */
  viaPreviousKey: boolean;
}

/** Integrations whose current or previous key hashes to `keyHash` (at most `limit` of each kind), current first. */
export async function integrationsWithKeyHash(db: Firestore, keyHash: string, limit: number): Promise<KeyHashMatch[]> {
  const [current, previous] = await Promise.all([
    groupQuery(db, QUERIES.integrationByKeyHash, keyHash).limit(limit).get(),
    groupQuery(db, QUERIES.integrationByPreviousKeyHash, keyHash).limit(limit).get(),
  ]);
  const byPath = new Map<string, KeyHashMatch>();
  for (const snap of current.docs) byPath.set(snap.ref.path, { snap, viaPreviousKey: false });
  for (const snap of previous.docs) if (!byPath.has(snap.ref.path)) byPath.set(snap.ref.path, { snap, viaPreviousKey: true });
  return [...byPath.values()];
}

/**
 * The integration whose current (or, during a rotation overlap, previous) key hashes to `keyHash`.
 *
 * Fails closed: when two integrations claim the same hash (a console admin can write any hash,
 * e.g. one copied from another workspace's integration), nobody is authenticated with it, so a
 * copied hash can never route another tenant's traffic into the copier's workspace. The
 * integrations trigger revokes the copy within seconds (docs/data-model.md).
 */
export async function findIntegrationByKeyHash(db: Firestore, keyHash: string): Promise<KeyHashMatch | null> {
  const matches = await integrationsWithKeyHash(db, keyHash, 2);
  if (matches.length > 1) {
    logger.error('integration.key_hash_ambiguous', { integrations: matches.map((m) => m.snap.ref.path) });
    return null;
  }
  return matches[0] ?? null;
}
