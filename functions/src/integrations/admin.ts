/**
 * Integration administration for operators without the console (the CLI in cli/, the local stack's
 * seed and the tests): creates, rotates and switches integrations exactly as the console does.
 */
import { FieldValue, type Firestore } from 'firebase-admin/firestore';
import { paths } from '../platform/paths';
import { displayPrefix, generateKey, hashKey, type KeyPrefix } from './keys';
import { isValidTopicName, TOPIC_NAME_FORMAT } from './model';

/** Default overlap during which a rotated-out key keeps working (issue: rotation with overlap). */
const DEFAULT_ROTATION_OVERLAP_MS = 24 * 3600 * 1000;

export interface CreateIntegrationInput {
  workspaceId: string;
  integrationId?: string;
  name: string;
  topic?: string;
  createdBy: string;
  keyPrefix: KeyPrefix;
  messagesPerMinute?: number;
}

export interface IssuedKey {
  workspaceId: string;
  integrationId: string;
  /** The plaintext key: shown once, never stored. */
  key: string;
  keyPrefix: string;
}

function integrationDoc(db: Firestore, workspaceId: string, integrationId?: string) {
  const col = db.collection(paths.integrations(workspaceId));
  return integrationId ? col.doc(integrationId) : col.doc();
}

/** Creates an integration exactly as the console does (docs/data-model.md) and returns its key once. */
export async function createIntegration(db: Firestore, input: CreateIntegrationInput): Promise<IssuedKey> {
  if (input.topic !== undefined && !isValidTopicName(input.topic)) {
    throw new Error(`Invalid topic '${input.topic}': expected ${TOPIC_NAME_FORMAT}.`);
  }
  const key = generateKey(input.keyPrefix);
  const ref = integrationDoc(db, input.workspaceId, input.integrationId);
  const doc: Record<string, unknown> = {
    name: input.name,
    active: true,
    sourceEnabled: true,
    keyHash: hashKey(key),
    keyPrefix: displayPrefix(key),
    replies: input.topic ? { enabled: true, topic: input.topic } : { enabled: false, topic: null },
    createdAt: FieldValue.serverTimestamp(),
    createdBy: input.createdBy,
  };
  if (input.messagesPerMinute !== undefined) doc.limits = { messagesPerMinute: input.messagesPerMinute };
  await ref.create(doc);
  return { workspaceId: input.workspaceId, integrationId: ref.id, key, keyPrefix: displayPrefix(key) };
}

/**
 * Issues a new key. The old one keeps working for `overlapMs` (0 revokes it at once), so a
 * connector can be redeployed with the new key without downtime.
 */
export async function rotateKey(
  db: Firestore,
  workspaceId: string,
  integrationId: string,
  keyPrefix: KeyPrefix,
  overlapMs = DEFAULT_ROTATION_OVERLAP_MS,
  now = Date.now(),
): Promise<IssuedKey & { previousKeyExpiresAt: number | null }> {
  const ref = integrationDoc(db, workspaceId, integrationId);
  const key = generateKey(keyPrefix);
  const previousKeyExpiresAt = overlapMs > 0 ? now + overlapMs : null;
  await db.runTransaction(async (tx) => {
    const snap = await tx.get(ref);
    const data = snap.data();
    if (!data) throw new Error(`Integration ${workspaceId}/${integrationId} does not exist.`);
    tx.update(ref, {
      keyHash: hashKey(key),
      keyPrefix: displayPrefix(key),
      previousKey:
        previousKeyExpiresAt === null
          ? FieldValue.delete()
          : { hash: data.keyHash, prefix: data.keyPrefix ?? null, expiresAt: previousKeyExpiresAt },
      keyRotatedAt: FieldValue.serverTimestamp(),
    });
  });
  return { workspaceId, integrationId, key, keyPrefix: displayPrefix(key), previousKeyExpiresAt };
}

/** Switches the integration on or off (403 `integration_inactive` while off). */
export async function setActive(db: Firestore, workspaceId: string, integrationId: string, active: boolean): Promise<void> {
  await integrationDoc(db, workspaceId, integrationId).update({ active, updatedAt: FieldValue.serverTimestamp() });
}
