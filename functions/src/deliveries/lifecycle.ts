/**
 * Edits and unsends of sent replies (docs/contract.md#edits-and-unsends). A workspace member writes
 * `edit: { text, requestedAt, uid }` or `unsend: { requestedAt, uid }` on a sent operator reply
 * (firestore.rules check the capability, the window, the state and the text); the reply's update
 * trigger calls `requestLifecycle`, which in one creation transaction (./transition.ts
 * `runCreation`) re-checks all of it (`lifecycleVerdict`) and either appends a delivery of that
 * `kind` at the end of the conversation's queue (`appendDelivery`, the same rule as a reply's: it
 * never overtakes an earlier unfinished delivery and holds later ones back) or records the refusal.
 * Either way the request gets its entry in the reply's `edits` / `unsends` (./lifecycle-history.ts).
 *
 * Once only, and never lost:
 *  - the delivery's id is derived from the request (reply, kind, request time, uid), and a request
 *    that already has its entry (same time and uid) or its delivery is skipped, so a redelivered
 *    trigger does nothing; two requests of the same time (possible on the emulator's clock, or two
 *    members at once) are still two;
 *  - the trigger hands over the request before the write too (`before`), not only the new one: two
 *    requests written in quick succession whose triggers arrive in the wrong order are still both
 *    taken, in the order they were written (the later trigger takes both, the earlier finds them done);
 *  - the order is the write order the trigger gives (`before`, then `after`), not the request
 *    times: Firestore's server times follow the commits of one document, but the emulator stamps
 *    a write when it arrives, and of two writes racing for the document the second to commit may
 *    carry the earlier time (seen: the later edit refused `superseded` while the reply showed its
 *    text);
 *  - a request older than one already taken is refused `superseded` (it would undo the newer one
 *    on the channel), unless the taken one is known to be an earlier write (this trigger's
 *    `before`): only possible when three or more writes race their triggers.
 */
import { Timestamp, type Firestore } from 'firebase-admin/firestore';
import type { LifecycleKind, LifecycleRefusal } from '../contract';
import { lifecycleDeliveryIdFor } from '../platform/ids';
import { paths } from '../platform/paths';
import { repliesTopic } from '../integrations/model';
import { integrationOf, integrationRef } from '../integrations/store';
import { hasRequest, latestTakenRequest, queuedEntry, refusedEntry, unsendTaken } from './lifecycle-history';
import type { DeliveryRecord, DeliveryTarget } from '../rules/record';
import { lifecycleTarget, lifecycleVerdict, type LifecycleFacts } from '../rules/lifecycle';
import { operatorReplyOf, type StoredMirror } from './reply';
import { deliveryRef } from './store';
import { appendDelivery, openQueue, runCreation } from './transition';
import { readReplyHistory } from './reads';

/** An operator's request as written on the reply (firestore.rules: the server time and the writer's uid). */
export interface LifecycleRequest {
  requestedAt: Timestamp;
  uid: string;
  /** The edit's new text, as written (checked by `lifecycleVerdict`); undefined for an unsend. */
  text?: unknown;
}

const isMap = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The request a stored `edit` / `unsend` value holds, or null when it is none (no server time or no uid: never taken). */
export function lifecycleRequestOf(value: unknown): LifecycleRequest | null {
  if (!isMap(value) || !(value.requestedAt instanceof Timestamp) || typeof value.uid !== 'string') return null;
  return 'text' in value ? { requestedAt: value.requestedAt, uid: value.uid, text: value.text } : { requestedAt: value.requestedAt, uid: value.uid };
}

const strings = (value: unknown): string[] => (Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []);

/**
 * What an edit or unsend acts on (../rules/lifecycle.ts `lifecycleTarget`), from the record of the
 * reply's sent delivery when there is one, else from the mirror, which holds the same ids.
 */
export function targetOf(deliveryId: string, record: Pick<DeliveryRecord, 'providerMessageIds' | 'parts'> | null, mirror: StoredMirror): DeliveryTarget {
  if (record !== null) return lifecycleTarget(deliveryId, record.providerMessageIds, record.parts ?? []);
  return lifecycleTarget(deliveryId, strings(mirror.fields.providerMessageIds), Array.isArray(mirror.fields.parts) ? mirror.fields.parts.filter(isMap) : []);
}

/** When the reply's delivery was sent: the record's `sentAt`, else the mirror's. */
function sentAtOf(record: Pick<DeliveryRecord, 'sentAt'> | null, mirror: StoredMirror): number | null {
  if (record?.sentAt !== undefined) return record.sentAt;
  const stored = mirror.fields.sentAt;
  return stored instanceof Timestamp ? stored.toMillis() : null;
}

export interface LifecycleOutcome {
  /** The deliveries created, in request order. */
  created: string[];
  refused: Array<{ requestedAt: number; code: LifecycleRefusal }>;
  /** Their notifications' outbox entries, to publish right after the commit. */
  outboxIds: string[];
}

/**
 * Takes the `kind` requests of one reply that are not taken yet (`requests`: the trigger's before
 * and after values), oldest first: each becomes a delivery at the end of the conversation's queue,
 * or a refusal; both get their history entry. Nothing for a message that is not an operator reply.
 */
export async function requestLifecycle(
  db: Firestore,
  workspaceId: string,
  conversationId: string,
  messageId: string,
  kind: LifecycleKind,
  requests: readonly LifecycleRequest[],
): Promise<LifecycleOutcome> {
  if (requests.length === 0) return { created: [], refused: [], outboxIds: [] };
  return runCreation(db, { workspaceId, conversationId }, async (tx, queue, now) => {
    // Per attempt: Firestore runs the function again on contention, and only the committed attempt counts.
    const outcome: LifecycleOutcome = { created: [], refused: [], outboxIds: [] };
    const [replySnap, queueSnap, conversationSnap] = await tx.getAll(
      db.doc(paths.message(workspaceId, conversationId, messageId)),
      queue.ref,
      db.doc(paths.conversation(workspaceId, conversationId)),
    );
    const reply = operatorReplyOf(messageId, replySnap?.data());
    if (replySnap === undefined || reply === null) return outcome;
    const integrationId = conversationSnap?.get('integrationId') as unknown;
    const sentDeliveryId = reply.mirror?.status === 'sent' ? reply.mirror.deliveryId : null;
    const ids = requests.map((r) => lifecycleDeliveryIdFor(conversationId, messageId, kind, r.requestedAt.toMillis(), r.uid));

    // Second wave: the integration (the capability), the reply's sent delivery (the target) and
    // the deliveries these requests would create (already there: taken before).
    const integrationDoc = typeof integrationId === 'string' ? integrationRef(db, workspaceId, integrationId) : null;
    const sentDoc = sentDeliveryId !== null ? deliveryRef(db, workspaceId, sentDeliveryId) : null;
    const refs = [...(integrationDoc !== null ? [integrationDoc] : []), ...(sentDoc !== null ? [sentDoc] : []), ...ids.map((id) => deliveryRef(db, workspaceId, id))];
    const byPath = new Map((await tx.getAll(...refs)).map((snap) => [snap.ref.path, snap]));
    const integrationSnap = integrationDoc !== null ? byPath.get(integrationDoc.path) : undefined;
    const sentSnap = sentDoc !== null ? byPath.get(sentDoc.path) : undefined;
    const existing = ids.map((id) => byPath.get(deliveryRef(db, workspaceId, id).path));
    const history = await readReplyHistory(tx, db, { workspaceId, conversationId, messageId }, replySnap);
    // In write order (the trigger's: before, then after), each with the requests written before it.
    const fresh = requests
      .map((request, i) => ({ request, deliveryId: ids[i] as string, taken: existing[i]?.exists === true, writtenBefore: requests.slice(0, i) }))
      .filter(({ request, taken }) => !taken && !hasRequest(history.entries(kind), request));
    if (fresh.length === 0) return outcome;

    const integration = integrationSnap?.exists === true ? integrationOf(integrationSnap) : null;
    const window = integration !== null && repliesTopic(integration) !== null ? integration.replies.lifecycle[kind] : null;
    const sentRecord = sentSnap?.exists === true ? (sentSnap.data() as DeliveryRecord) : null;
    const mirror = reply.mirror;
    await openQueue(tx, db, queue, queueSnap);

    for (const { request, deliveryId, writtenBefore } of fresh) {
      const requestedAt = request.requestedAt.toMillis();
      const facts: LifecycleFacts = {
        kind,
        window,
        replyStatus: mirror?.status ?? null,
        sentAt: mirror === null ? null : sentAtOf(sentRecord, mirror),
        replyText: reply.text,
        unsent: history.unsent,
        unsendTaken: unsendTaken(history.entries('unsend')),
        latestTaken: latestTakenRequest(history.entries(kind), writtenBefore),
      };
      const verdict = lifecycleVerdict(facts, { requestedAt, text: request.text });
      if (!verdict.accepted || mirror === null || sentDeliveryId === null || typeof integrationId !== 'string') {
        const code = verdict.accepted ? 'reply_not_sent' : verdict.code;
        history.add(kind, refusedEntry(kind, request.text, request, code, now));
        outcome.refused.push({ requestedAt, code });
        continue;
      }
      history.add(kind, queuedEntry(kind, verdict.text, request, deliveryId));
      const { outboxId } = appendDelivery(
        tx,
        db,
        queue,
        {
          deliveryId,
          workspaceId,
          integrationId,
          conversationId,
          messageId,
          text: verdict.text,
          now,
          reason: 'created',
          lifecycle: { kind, target: targetOf(sentDeliveryId, sentRecord, mirror), requestedAt },
        },
        history,
      );
      outcome.created.push(deliveryId);
      if (outboxId !== null) outcome.outboxIds.push(outboxId);
    }
    history.write(tx, db);
    return outcome;
  });
}
