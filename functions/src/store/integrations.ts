import * as logger from 'firebase-functions/logger';
import type { DocumentSnapshot, Firestore } from 'firebase-admin/firestore';
import { groupQuery, QUERIES } from './queries';

/** What the service needs from an integration document (decisions 3). */
export interface IntegrationAuth {
  workspaceId: string;
  integrationId: string;
  keyPrefix: string;
  active: boolean;
  sourceEnabled: boolean;
  replies: { enabled: boolean; topic: string | null };
  messagesPerMinute: number | null;
  /** Set when the presented key is the previous key of a rotation: it stops working at this time. */
  previousKeyExpiresAt: number | null;
}

export const integrationPath = (workspaceId: string, integrationId: string): string =>
  `workspaces/${workspaceId}/integrations/${integrationId}`;

function asRecord(v: unknown): Record<string, unknown> {
  return typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : {};
}

/** Reads an integration snapshot defensively: the console writes it, so absent fields get safe defaults. */
export function integrationFromSnapshot(snap: DocumentSnapshot, viaPreviousKey: boolean): IntegrationAuth | null {
  const workspaceRef = snap.ref.parent.parent;
  const data = snap.data();
  if (!data || !workspaceRef) return null;
  const replies = asRecord(data.replies);
  const limits = asRecord(data.limits);
  const previous = asRecord(data.previousKey);
  const perMinute = limits.messagesPerMinute;
  return {
    workspaceId: workspaceRef.id,
    integrationId: snap.id,
    keyPrefix: typeof data.keyPrefix === 'string' ? data.keyPrefix : '',
    // Only an explicit `true` enables: a malformed document must not open access.
    active: data.active === true,
    sourceEnabled: data.sourceEnabled === true,
    replies: {
      enabled: replies.enabled === true,
      topic: typeof replies.topic === 'string' ? replies.topic : null,
    },
    messagesPerMinute: typeof perMinute === 'number' && Number.isInteger(perMinute) && perMinute > 0 ? perMinute : null,
    previousKeyExpiresAt: viaPreviousKey && typeof previous.expiresAt === 'number' ? previous.expiresAt : null,
  };
}

/**
 * Finds the integration whose current (or, during a rotation overlap, previous) key hashes to
 * `keyHash`. Collection-group queries on single fields need the overrides in firestore.indexes.json.
 *
 * Fails closed: when two integrations claim the same hash (a console admin can write any hash,
 * e.g. one copied from another workspace's integration), nobody is authenticated with it, so a
 * copied hash can never route another tenant's traffic into the copier's workspace. The
 * integrations trigger revokes the copy within seconds (docs/data-model.md).
 */
export async function findIntegrationByKeyHash(db: Firestore, keyHash: string): Promise<IntegrationAuth | null> {
  const matches = await integrationsWithKeyHash(db, keyHash, 2);
  if (matches.length > 1) {
    logger.error('integration.key_hash_ambiguous', { integrations: matches.map((m) => m.snap.ref.path) });
    return null;
  }
  const only = matches[0];
  return only ? integrationFromSnapshot(only.snap, only.viaPreviousKey) : null;
}

/** Integrations whose current or previous key hashes to `keyHash` (at most `limit` of each kind), current first. */
export async function integrationsWithKeyHash(db: Firestore, keyHash: string, limit: number): Promise<Array<{ snap: DocumentSnapshot; viaPreviousKey: boolean }>> {
  const [current, previous] = await Promise.all([
    groupQuery(db, QUERIES.integrationByKeyHash, keyHash).limit(limit).get(),
    groupQuery(db, QUERIES.integrationByPreviousKeyHash, keyHash).limit(limit).get(),
  ]);
  const byPath = new Map<string, { snap: DocumentSnapshot; viaPreviousKey: boolean }>();
  for (const snap of current.docs) byPath.set(snap.ref.path, { snap, viaPreviousKey: false });
  for (const snap of previous.docs) if (!byPath.has(snap.ref.path)) byPath.set(snap.ref.path, { snap, viaPreviousKey: true });
  return [...byPath.values()];
}
