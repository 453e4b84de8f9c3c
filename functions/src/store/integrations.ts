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
 */
export async function findIntegrationByKeyHash(db: Firestore, keyHash: string): Promise<IntegrationAuth | null> {
  const current = await groupQuery(db, QUERIES.integrationByKeyHash, keyHash).limit(1).get();
  const hit = current.docs[0];
  if (hit) return integrationFromSnapshot(hit, false);
  const previous = await groupQuery(db, QUERIES.integrationByPreviousKeyHash, keyHash).limit(1).get();
  const old = previous.docs[0];
  return old ? integrationFromSnapshot(old, true) : null;
}
