/**
 * The messages feature's triggers (docs/contract.md#message-events):
 *
 * - `onReplyProviderIds` (run by the message update trigger `onReplyUpdated` of index.ts, beside the
 *   deliveries' handler of the console's requests): when an operator reply's delivery becomes `sent` with provider message
 *   ids (its `delivery` mirror: `providerMessageIds`, and `parts[].providerMessageIds` for per-part
 *   outcomes), records one lookup document per id (`providerMessages/{pm_...}`: which reply the id
 *   names, for reactions by `target.providerMessageId`) and applies the reactions that were waiting
 *   for those ids, in one transaction. It reads only the reply's mirror fields, never the
 *   deliveries' code (docs/architecture.md: messages/ does not import deliveries/).
 * - `onPendingEventsDeleted`: a pending-events document deleted by its TTL (its target never came
 *   within 24 hours) logs each dropped event, so every event that is never applied leaves a line.
 */
import { Timestamp, type DocumentData, type DocumentReference } from 'firebase-admin/firestore';
import type { Change, FirestoreEvent, QueryDocumentSnapshot } from 'firebase-functions/v2/firestore';
import { customerIdFor } from '../platform/ids';
import { db } from '../platform/firebase';
import * as logger from '../platform/log';
import { paths } from '../platform/paths';
import { pendingEventsIdFor, providerMessageKeyFor } from './event-ids';
import { applyPending, logSkipped, storedChange, targetOf } from './event-store';

/** Every provider message id a reply's mirror reports: the delivery's, then each part's, without repeats. */
export function providerIdsOf(data: DocumentData | undefined): string[] {
  const delivery = data?.delivery as { status?: unknown; providerMessageIds?: unknown; parts?: unknown } | undefined;
  if (delivery?.status !== 'sent') return [];
  const ids: string[] = [];
  const add = (list: unknown): void => {
    if (Array.isArray(list)) for (const id of list) if (typeof id === 'string' && id !== '' && !ids.includes(id)) ids.push(id);
  };
  add(delivery.providerMessageIds);
  if (Array.isArray(delivery.parts)) for (const part of delivery.parts as Array<{ providerMessageIds?: unknown } | null>) add(part?.providerMessageIds);
  return ids;
}

type ReplyParams = { workspaceId: string; conversationId: string; messageId: string };

/**
 * Records the lookup documents of a reply's provider ids and applies the reactions waiting for
 * them. Idempotent: a redelivered trigger finds the lookups and no pending document.
 */
export async function recordReplyProviderIds(params: ReplyParams, ids: readonly string[], now: number): Promise<{ recorded: number; applied: number }> {
  const firestore = db();
  return firestore.runTransaction(async (tx) => {
    const conversation = (await tx.get(firestore.doc(paths.conversation(params.workspaceId, params.conversationId)))).data();
    const integrationId = typeof conversation?.integrationId === 'string' ? conversation.integrationId : null;
    if (integrationId === null) return { recorded: 0, applied: 0 };
    const replyRef = firestore.doc(paths.message(params.workspaceId, params.conversationId, params.messageId));
    const lookupRefs = ids.map((id) => firestore.doc(paths.providerMessage(params.workspaceId, providerMessageKeyFor(integrationId, id))));
    const pendingRefs = ids.map((id) => firestore.doc(paths.pendingEvent(params.workspaceId, pendingEventsIdFor(integrationId, { providerMessageId: id }))));
    const snaps = await tx.getAll(replyRef, ...lookupRefs, ...pendingRefs);
    const reply = snaps[0]?.data();
    if (reply === undefined) return { recorded: 0, applied: 0 };
    const lookups = snaps.slice(1, 1 + ids.length);
    const pendings = snaps.slice(1 + ids.length);

    let recorded = 0;
    lookups.forEach((snap, i) => {
      // An id already naming a reply keeps it (the first reply reported with it; a provider reuses none).
      if (snap.exists) return;
      tx.create(lookupRefs[i] as DocumentReference, {
        integrationId,
        conversationId: params.conversationId,
        messageId: params.messageId,
        createdAt: Timestamp.fromMillis(now),
      });
      recorded += 1;
    });

    // Waiting reactions, per id in the reply's order, each document's in the order received.
    let target = targetOf(reply);
    let reactions = undefined as ReturnType<typeof applyPending>['change']['reactions'];
    let applied = 0;
    pendings.forEach((snap, i) => {
      if (!snap.exists) return;
      const result = applyPending(snap.data(), target, params.conversationId, now);
      logSkipped(result.skipped, params);
      target = result.target;
      if (result.change.reactions !== undefined) reactions = result.change.reactions;
      applied += result.applied;
      tx.delete(pendingRefs[i] as DocumentReference);
    });
    if (reactions !== undefined) tx.update(replyRef, storedChange({ reactions }, (externalId) => customerIdFor(integrationId, externalId)));
    return { recorded, applied };
  });
}

/** Reply updated: when its mirror reports provider ids it did not report before, record them (and apply what waited). */
export async function onReplyProviderIds(event: FirestoreEvent<Change<QueryDocumentSnapshot> | undefined, ReplyParams>): Promise<void> {
  const before = event.data?.before.data();
  const after = event.data?.after.data();
  // Fires on every message update (the service's own writes too): only an operator reply's new ids matter.
  if (after?.direction !== 'outbound') return;
  const known = new Set(providerIdsOf(before));
  const fresh = providerIdsOf(after).filter((id) => !known.has(id));
  if (fresh.length === 0) return;
  const result = await recordReplyProviderIds(event.params, providerIdsOf(after), Date.now());
  logger.info('reply provider ids recorded', { ...event.params, ids: fresh.length, recorded: result.recorded, applied: result.applied });
}

/** A pending-events document deleted: when its TTL did it (not an application), each event it held was dropped. */
export async function onPendingEventsDeleted(event: FirestoreEvent<QueryDocumentSnapshot | undefined, { workspaceId: string; pendingId: string }>): Promise<void> {
  const data = event.data?.data();
  const expireAt = data?.expireAt;
  // Applied documents are deleted in their target's transaction, long before their `expireAt`.
  if (!(expireAt instanceof Timestamp) || expireAt.toMillis() > Date.now()) return;
  const events = Array.isArray(data?.events) ? (data.events as Array<{ eventDocId?: unknown; type?: unknown; conversationId?: unknown }>) : [];
  for (const entry of events) {
    logger.warn('message event dropped', { code: 'pending_expired', workspaceId: event.params.workspaceId, eventDocId: entry.eventDocId, type: entry.type, conversationId: entry.conversationId });
  }
}
