import * as logger from '../platform/log';
import { FieldValue, type DocumentData, type DocumentReference } from 'firebase-admin/firestore';
import type { Change, DocumentSnapshot, FirestoreEvent } from 'firebase-functions/v2/firestore';
import { db } from '../platform/firebase';
import { parseReplies } from './model';
import { integrationsWithKeyHash } from './store';
import { checkTopic, recordTopicCheck } from './topics';

type Params = { workspaceId: string; integrationId: string };
type IntegrationEvent = FirestoreEvent<Change<DocumentSnapshot> | undefined, Params>;

/** A new or changed topic, or one whose status was removed (the console's "check again"). */
export function topicToCheck(before: DocumentData | undefined, after: DocumentData): string | null {
  const replies = parseReplies(after.replies);
  if (replies.topic === null) return null;
  const changed = parseReplies(before?.replies).topic !== replies.topic;
  return changed || replies.topicStatus === null ? replies.topic : null;
}

async function checkRepliesTopic(params: Params, topic: string): Promise<void> {
  const check = await checkTopic(topic); // throws on a transient failure: the trigger is retried
  const written = await recordTopicCheck(db(), params.workspaceId, params.integrationId, topic, check);
  logger.info('integration.topic_checked', { ...params, topic, status: check.status, written });
}

/**
 * A key hash must belong to one integration only. The console writes hashes, so an admin could
 * copy another integration's hash (current or previous); the key lookup fails closed while two
 * integrations share one, and this revokes the newcomer's: the document whose hash just changed,
 * when another integration held the hash before that write.
 *
 * "Before" is read from the other document's last update: older than this write, it held the hash
 * first. Newer, it may be the copy itself, whose own trigger revokes it; triggers run late and in
 * any order, so the original's creation trigger can run after a copy was made, and must then not
 * revoke the original. (If the original was updated for another reason after the copy, neither
 * trigger revokes: the key keeps failing closed and `integration.key_hash_ambiguous` is logged
 * until an admin rotates one of the keys.)
 */
async function guardKeyHash(ref: DocumentReference, params: Params, before: DocumentData | undefined, after: DocumentSnapshot): Promise<void> {
  const keyHash = after.get('keyHash') as unknown;
  if (typeof keyHash !== 'string' || keyHash === before?.keyHash) return;
  const writtenAt = after.updateTime?.toMillis() ?? Number.POSITIVE_INFINITY;
  const holders = (await integrationsWithKeyHash(db(), keyHash, 3)).filter((m) => m.snap.ref.path !== ref.path);
  const heldBefore = holders.filter((m) => (m.snap.updateTime?.toMillis() ?? 0) <= writtenAt);
  const others = heldBefore.map((m) => m.snap.ref.path);
  if (holders.length > heldBefore.length) {
    logger.warn('integration.key_hash_shared', { ...params, newer: holders.filter((m) => !heldBefore.includes(m)).map((m) => m.snap.ref.path) });
  }
  await db().runTransaction(async (tx) => {
    const snap = await tx.get(ref);
    if (snap.get('keyHash') !== keyHash) return; // re-keyed meanwhile: that change is checked on its own
    if (others.length > 0) {
      tx.update(ref, {
        keyHash: FieldValue.delete(),
        keyPrefix: FieldValue.delete(),
        keyRevoked: { reason: 'duplicate_key_hash', at: FieldValue.serverTimestamp() },
      });
    } else if (snap.get('keyRevoked') !== undefined) {
      tx.update(ref, { keyRevoked: FieldValue.delete() });
    }
  });
  if (others.length > 0) logger.error('integration.key_revoked_duplicate_hash', { ...params, others });
}

/**
 * Integration created or changed (console or CLI): checks the replies topic when it is new or
 * changed (docs/data-model.md, `replies.topicStatus`) and guards the uniqueness of the key hash.
 * Both steps are idempotent; a transient failure is thrown so that the trigger is retried.
 */
export async function onIntegrationChanged(event: IntegrationEvent): Promise<void> {
  const after = event.data?.after;
  const data = after?.data();
  if (!after || !data) return; // deleted
  const before = event.data?.before.data();
  const topic = topicToCheck(before, data);
  const results = await Promise.allSettled([
    topic !== null ? checkRepliesTopic(event.params, topic) : Promise.resolve(),
    guardKeyHash(after.ref, event.params, before, after),
  ]);
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
}
