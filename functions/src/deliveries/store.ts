/**
 * Firestore access for deliveries, the writing half: the documents' references and shapes, and the
 * one writer of a plan (`applyPlan`, `writeRecord`: the record, its check document, the reply's
 * mirror or history entry, the operational event, the outbox entry, the queue). Plain functions
 * that take a Transaction. No decisions here: ../rules/ decides and plans, ./reads.ts reads the
 * facts, ./transition.ts runs read -> decide -> plan -> write.
 */
import { FieldValue, Timestamp, type DocumentReference, type Firestore, type Transaction } from 'firebase-admin/firestore';
import { paths } from '../platform/paths';
import {
  RELEASE_FIELD,
  storedReleaseFacts,
  storedUnfinished,
  UNFINISHED_FIELD,
  unfinishedKey,
  type ReleaseFactsBySeq,
  type UnfinishedDeliveries,
} from '../rules/ordering';
import { config } from '../platform/config';
import { shardOf } from '../platform/shards';
import { dueWorkOf, type DueWork, type QueueChange, type RecordWrite, type TransitionPlan } from '../rules/plan';
import { notificationKindOf, type DeliveryRecord, type NotificationKind, type NotificationReason } from '../rules/record';
import { writeOperationalEvent } from '../platform/operational-events';
import { exhaustedEvent } from './operational-events';
import { deliveryMirror, type ReplyMirror } from './reply';
import type { ReplyHistory } from './lifecycle-history';
import { attentionDelta, type MirrorState } from './attention';

/** @public the bench reads deliveries through it (bench/lib/service.mjs) */
export const deliveryRef = (db: Firestore, workspaceId: string, deliveryId: string): DocumentReference => db.doc(paths.delivery(workspaceId, deliveryId));
export const deliveryQueueRef = (db: Firestore, workspaceId: string, conversationId: string): DocumentReference =>
  db.doc(paths.deliveryQueue(workspaceId, conversationId));
/** An operator reply, by the ids that place it (a delivery record carries them). */
export type ReplyAddress = Pick<DeliveryRecord, 'workspaceId' | 'conversationId' | 'messageId'>;
const replyRef = (db: Firestore, reply: ReplyAddress): DocumentReference => db.doc(paths.message(reply.workspaceId, reply.conversationId, reply.messageId));
export const outboxRef = (db: Firestore, outboxId: string): DocumentReference => db.doc(paths.outboxEntry(outboxId));
/** The top-level outbox collection's id (the sweeper's query and tests). */
export const OUTBOX = paths.outbox();

export interface OutboxEntry {
  deliveryId: string;
  workspaceId: string;
  integrationId: string;
  conversationId: string;
  messageId: string;
  reason: NotificationReason;
  /** Epoch ms: not published before this time. */
  dueAt: number;
  attempts: number;
  createdAt: number;
  /** 0 .. QUEUE_SHARDS-1 from the delivery id: the sweeper's index leads with it (docs/capacity.md). */
  shard: number;
  /** Its writer publishes it right after the commit (./outbox.ts `publishCommitted`); the trigger leaves it. */
  inline?: true;
  /** An edit or unsend's kind: published as the notification's attribute `kind` (docs/contract.md#notifications). */
  kind?: NotificationKind;
}

/**
 * The time-based duty of one unfinished delivery (`deliveryChecks/{deliveryId}`), due at `dueAt`:
 *  - while it is claimable (has `pendingAt` and `liveness`): its next liveness check
 *    (./liveness.ts), and its entry in the catch-up list (./catch-up-list.ts, by integration, list shard
 *    and `pendingAt`; only these documents carry `pendingAt`);
 *  - while it holds a lease (leased, sending): the lease's expiry, which the sweeper applies.
 * Absent otherwise (waiting behind another delivery, or finished). So the collection holds only
 * deliveries with something due, and neither query ever passes over a finished one, on production
 * indexes or on the emulator's scans alike. The sweeper's index leads with `shard`, the list's
 * with the integration and `listShard` (docs/capacity.md).
 */
export interface DeliveryCheck {
  workspaceId: string;
  integrationId: string;
  deliveryId: string;
  conversationId: string;
  messageId: string;
  /** The record's `pendingAt` (claimable since, the catch-up list's order); only while claimable. */
  pendingAt?: number;
  /** Epoch ms: the record's `liveness.checkAt`, or its lease's `expiresAt`. */
  dueAt: number;
  /** 0 .. QUEUE_SHARDS-1 from the delivery id. */
  shard: number;
  /** 0 .. LIST_SHARDS-1 from the delivery id. */
  listShard: number;
}

/** The check document of `d` for its due work (../rules/plan.ts `dueWorkOf`). */
function deliveryCheck(d: DeliveryRecord, due: DueWork): DeliveryCheck {
  const { workspaceId, integrationId, deliveryId, conversationId, messageId } = d;
  const { queueShards, listShards } = config();
  return { workspaceId, integrationId, deliveryId, conversationId, messageId, shard: shardOf(deliveryId, queueShards), listShard: shardOf(deliveryId, listShards), ...due };
}

/** The check document of a stored record, or null when nothing about it is due. */
export function deliveryCheckOf(d: DeliveryRecord): DeliveryCheck | null {
  const due = dueWorkOf(d);
  return due === null ? null : deliveryCheck(d, due);
}

export const deliveryCheckRef = (db: Firestore, deliveryId: string): DocumentReference => db.doc(paths.deliveryCheck(deliveryId));

/** The deterministic outbox id of one notification: a retried transaction writes the same entry. */
const outboxIdFor = (entry: Pick<OutboxEntry, 'deliveryId' | 'dueAt'>): string => `${entry.deliveryId}@${entry.dueAt}`;

/**
 * The ordering state of one conversation (../rules/ordering.ts): its unfinished deliveries by seq, read
 * from the queue document by id, never by a query.
 */
export interface DeliveryQueueState {
  ref: DocumentReference;
  unfinished: UnfinishedDeliveries;
  /**
   * The stored document had no map of unfinished deliveries (written before the map existed, or
   * missing): it was rebuilt from the deliveries themselves and must be written back in this
   * transaction.
   */
  rebuilt: boolean;
  /** What the release of each waiting delivery needs (../rules/ordering.ts RELEASE_FIELD). */
  release: ReleaseFactsBySeq;
}

/**
 * Writes the queue after a transition (the plan's `QueueChange`, ../rules/plan.ts): drops `terminalSeq` from the unfinished deliveries (when a
 * delivery became terminal), keeps the release facts in step (../rules/ordering.ts RELEASE_FIELD) and
 * writes a rebuilt map back whole. Nothing when nothing changed.
 */
function writeQueue(tx: Transaction, queue: DeliveryQueueState, change: QueueChange, now: number): void {
  const updatedAt = Timestamp.fromMillis(now);
  const { terminalSeq } = change;
  // The release facts' changes, by field path under RELEASE_FIELD: spent entries go, `waiting` follows the record.
  const release: Record<string, unknown> = {};
  const releasePaths: string[] = [];
  for (const seq of [terminalSeq, change.releasedSeq]) {
    if (seq === null || !queue.release.has(seq)) continue;
    release[unfinishedKey(seq)] = FieldValue.delete();
    releasePaths.push(`${RELEASE_FIELD}.${unfinishedKey(seq)}`);
  }
  const waiting = change.waiting;
  if (waiting !== null && terminalSeq !== waiting.seq && queue.release.get(waiting.seq)?.waiting === !waiting.waiting) {
    release[unfinishedKey(waiting.seq)] = { waiting: waiting.waiting };
    releasePaths.push(`${RELEASE_FIELD}.${unfinishedKey(waiting.seq)}.waiting`);
  }
  const releaseWrite = releasePaths.length > 0 ? { [RELEASE_FIELD]: release } : {};
  if (queue.rebuilt) {
    // The whole rebuilt map (`mergeFields` replaces the field), and the release facts' changes
    // entry by entry (the facts outlive a lost map: see readDeliveryQueue).
    const unfinished = new Map(queue.unfinished);
    if (terminalSeq !== null) unfinished.delete(terminalSeq);
    tx.set(queue.ref, { [UNFINISHED_FIELD]: storedUnfinished(unfinished), ...releaseWrite, updatedAt }, { mergeFields: [UNFINISHED_FIELD, ...releasePaths, 'updatedAt'] });
  } else if (terminalSeq !== null) {
    tx.set(queue.ref, { [UNFINISHED_FIELD]: { [unfinishedKey(terminalSeq)]: FieldValue.delete() }, ...releaseWrite, updatedAt }, { merge: true });
  } else if (releasePaths.length > 0) {
    tx.set(queue.ref, { ...releaseWrite, updatedAt }, { merge: true });
  }
}

/**
 * Writes the queue after creation: the deliveries `appended` (or, when the map was rebuilt, the
 * whole map with them) with the `release` facts of those that wait behind another, the next seq,
 * and the creator's own `fields` (sequencing's position).
 * Only the new entries are merged: an empty map in a merge would replace the stored one, and with
 * it the unfinished deliveries it holds.
 */
export function writeQueueAfterAppend(
  tx: Transaction,
  queue: DeliveryQueueState,
  appended: UnfinishedDeliveries,
  release: ReleaseFactsBySeq,
  nextSeq: number,
  fields: Record<string, unknown>,
  now: number,
): void {
  const entries = queue.rebuilt ? new Map([...queue.unfinished, ...appended]) : appended;
  const unfinished = queue.rebuilt || entries.size > 0 ? { [UNFINISHED_FIELD]: storedUnfinished(entries) } : {};
  // Merged entry by entry like the map: the facts of the deliveries already waiting stay.
  const facts = release.size > 0 ? { [RELEASE_FIELD]: storedReleaseFacts(release) } : {};
  tx.set(queue.ref, { ...fields, nextSeq, ...unfinished, ...facts, updatedAt: Timestamp.fromMillis(now) }, { merge: true });
}

export const conversationRef = (db: Firestore, workspaceId: string, conversationId: string): DocumentReference => db.doc(paths.conversation(workspaceId, conversationId));

/**
 * The one writer of a reply's `delivery` mirror (./reply.ts says what goes in it). `mergeFields`
 * replaces the whole map (a plain merge would keep a stale `error` or `providerMessageIds` from
 * the previous mirror, e.g. `error` after unknown -> sent) and leaves the console's fields of the
 * reply untouched.
 */
export function writeReplyMirror(tx: Transaction, db: Firestore, reply: ReplyAddress, mirror: ReplyMirror): void {
  tx.set(replyRef(db, reply), { delivery: mirror }, { mergeFields: ['delivery'] });
}

const mirrorStateOf = (d: { status: string; error: { code: string } | null }): MirrorState => ({ status: d.status, code: d.error?.code ?? null });

/**
 * Keeps the conversation's `failedReplies` (./attention.ts) in step with a mirror write, without
 * reading it: an increment in the same transaction. A merge, so that a reply of a conversation an
 * erasure is deleting never fails its transition (the erasure's own failures, `erased`, count nothing).
 */
export function countAttention(tx: Transaction, db: Firestore, reply: ReplyAddress, delta: -1 | 0 | 1): void {
  if (delta !== 0) tx.set(conversationRef(db, reply.workspaceId, reply.conversationId), { failedReplies: FieldValue.increment(delta) }, { merge: true });
}

/**
 * The service's writer of a transition's plan (../rules/plan.ts `planTransition`): the decided
 * record and the released one woken (`writeRecord`), the reply's history (`history`, read by the
 * transition when the plan asks for it), and the conversation's queue (`queue`, when it was read).
 * `wokenFromFacts`: the woken record was not read but rebuilt from its release facts, so only the
 * fields a wake changes are written (`WAKE_FIELDS`).
 */
export function applyPlan(
  tx: Transaction,
  db: Firestore,
  plan: TransitionPlan<unknown>,
  written: { now: number; queue: DeliveryQueueState | null; history?: ReplyHistory | undefined; wokenFromFacts: boolean },
): void {
  const { now, queue, history } = written;
  if (plan.decided) writeRecord(tx, db, plan.decided, now, undefined, history);
  if (plan.woken) writeRecord(tx, db, plan.woken, now, written.wokenFromFacts ? WAKE_FIELDS : undefined);
  if (queue) writeQueue(tx, queue, plan.queue, now);
  history?.write(tx, db);
}

/**
 * The fields a wake changes on a waiting delivery (../rules/state-machine.ts `decideWake`, and what
 * `storedRecord` derives: it becomes claimable now). Written as an update when the delivery was
 * not read: everything else it stores is as its creation wrote it.
 */
const WAKE_FIELDS = ['head', 'waiting', 'updatedAt', 'pendingAt', 'liveness'] as const satisfies readonly (keyof DeliveryRecord)[];

/**
 * Writes one record of a plan and what the plan says follows from it (../rules/plan.ts
 * `RecordWrite`): the record with its stored-only field (`listShard`), its check document (set
 * when its due work moved, deleted when it has none any more: blind writes, no read), the reply
 * mirror or the request's history entry, the operational event, and the notification's outbox
 * entry. Returns the notification's outbox id (null without one), for a caller that publishes it
 * itself once the transaction commits.
 *
 * The mirror of an edit or unsend delivery is its entry in the reply's history, not the reply's
 * `delivery`: `history` (the reply read in this transaction, ./lifecycle-history.ts) takes it, and
 * its caller writes it once; a plan that asks for a history entry without one is a programming error.
 *
 * `onlyFields`: the record was not read (`before` is what is known of it, the release facts of a
 * waiting delivery: ./transition.ts): only these fields of the record are written (an update, which
 * fails the commit if the record is gone), the rest of what it stores being what `before` assumes.
 */
export function writeRecord(tx: Transaction, db: Firestore, write: RecordWrite, now: number, onlyFields?: readonly (keyof DeliveryRecord)[], history?: ReplyHistory): string | null {
  const { notify, due, mirror } = write;
  const next = write.record;
  const stored: DeliveryRecord = { ...next, listShard: shardOf(next.deliveryId, config().listShards) };
  const ref = deliveryRef(db, next.workspaceId, next.deliveryId);
  if (onlyFields === undefined) tx.set(ref, stored);
  else tx.update(ref, Object.fromEntries(onlyFields.map((field) => [field, stored[field] ?? FieldValue.delete()])));
  if (due === 'cleared') tx.delete(deliveryCheckRef(db, next.deliveryId));
  else if (due !== null) tx.set(deliveryCheckRef(db, next.deliveryId), deliveryCheck(next, due));
  if (mirror === 'reply') {
    writeReplyMirror(tx, db, next, deliveryMirror(next, now));
    // A created record's mirror replaces what the reply showed before: a resend's failure (`previous`), or nothing.
    const shownBefore = write.before ?? next.previous ?? null;
    countAttention(tx, db, next, attentionDelta(shownBefore && mirrorStateOf(shownBefore), mirrorStateOf(next)));
  } else if (mirror === 'history') {
    if (history === undefined) throw new Error(`writeRecord: the ${next.kind ?? ''} delivery ${next.deliveryId} changed without its reply's history`);
    history.record(next, now);
  }
  // docs/operations.md#operational-events: written with the transition like a notification.
  if (write.exhausted !== null) writeOperationalEvent(tx, db, exhaustedEvent(next, write.exhausted.code, now), now);
  if (notify === null) return null;
  const kind = notificationKindOf(next);
  const entry: OutboxEntry = {
    deliveryId: next.deliveryId,
    workspaceId: next.workspaceId,
    integrationId: next.integrationId,
    conversationId: next.conversationId,
    messageId: next.messageId,
    reason: notify.reason,
    dueAt: notify.at,
    attempts: 0,
    createdAt: now,
    shard: shardOf(next.deliveryId, config().queueShards),
    ...(notify.inline === true ? { inline: true as const } : {}),
    ...(kind !== undefined ? { kind } : {}),
  };
  const outboxId = outboxIdFor(entry);
  tx.set(outboxRef(db, outboxId), entry);
  return outboxId;
}
