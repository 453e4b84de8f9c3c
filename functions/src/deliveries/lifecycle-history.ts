/**
 * The history of an operator reply's edits and unsends (docs/data-model.md#edits-and-unsends): the
 * reply's `edits` and `unsends`, one entry per request, latest last, each in step with the status
 * of the delivery that carries it (./lifecycle.ts creates them), and `unsent` once an unsend is
 * sent. The reply's own `delivery` mirror is never touched by these deliveries.
 *
 * Why a read: an entry is one element of an array, which Firestore cannot update in place, so a
 * transaction that changes what the console sees of an edit or unsend delivery reads the reply
 * first (./transition.ts; a plain reply's delivery never does) and writes the lists back whole,
 * once per transaction (`ReplyHistory.write`).
 */
import { Timestamp, type Firestore, type Transaction } from 'firebase-admin/firestore';
import { byLifecycleKind, type LifecycleKind, type LifecycleRefusal } from '../contract';
import { paths } from '../platform/paths';
import { isTerminal, type DeliveryRecord, type DeliveryStatus } from '../rules/record';

/** The reply's field of each kind's history: the kind's plural (`edits`, `unsends`). */
const historyField = <K extends LifecycleKind>(kind: K): `${K}s` => `${kind}s`;

/**
 * Entries kept per list: beyond it the oldest finished ones go. An edit's text is up to 40 KB of
 * UTF-8, and the reply document (1 MiB at most) holds them all: 20 keep it well inside.
 */
export const LIFECYCLE_HISTORY_LIMIT = 20;

/** One entry of `edits` / `unsends` as the console reads it. */
export interface LifecycleEntry {
  /** Edits only: the new text. */
  text?: string;
  /** The request's server time. */
  requestedAt: Timestamp;
  /** Who asked (with `requestedAt`, identifies the request: two members' requests may carry the same time). */
  uid: string;
  /** The delivery that carries it; null for a request the service refused. */
  deliveryId: string | null;
  status: DeliveryStatus;
  /** When it became sent, failed or unknown. */
  at?: Timestamp;
  error?: { outcome: string; code: string };
}

/** A stored entry: whatever map is there (the service wrote it), read for what the service acts on. */
type StoredEntry = Record<string, unknown>;

const isMap = (value: unknown): value is StoredEntry => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The stored list of a history field (anything else: empty). */
function storedEntries(value: unknown): StoredEntry[] {
  return Array.isArray(value) ? value.filter(isMap) : [];
}

/** Epoch ms of an entry's `requestedAt` (null when it has none). */
function requestedAtOf(entry: StoredEntry): number | null {
  return entry.requestedAt instanceof Timestamp ? entry.requestedAt.toMillis() : null;
}

/** Whether a request (by its server time and who asked) already has its entry. */
export function hasRequest(entries: readonly StoredEntry[], request: { requestedAt: Timestamp; uid: string }): boolean {
  return entries.some((entry) => entry.uid === request.uid && entry.requestedAt instanceof Timestamp && entry.requestedAt.isEqual(request.requestedAt));
}

/**
 * The latest request time among the entries that became a delivery (null: none), leaving out the
 * requests in `writtenBefore`: those known to have been written before the one being judged (the
 * trigger's `before` value), whatever their times say.
 */
export function latestTakenRequest(entries: readonly StoredEntry[], writtenBefore: readonly { requestedAt: Timestamp; uid: string }[] = []): number | null {
  let latest: number | null = null;
  for (const entry of entries) {
    const at = requestedAtOf(entry);
    if (typeof entry.deliveryId !== 'string' || at === null || writtenBefore.some((request) => hasRequest([entry], request))) continue;
    if (latest === null || at > latest) latest = at;
  }
  return latest;
}

/**
 * Whether an unsend of the reply is queued, on its way or sent. One that failed, or whose outcome is
 * unknown (it may not have reached the channel), does not stop another request.
 */
export function unsendTaken(unsends: readonly StoredEntry[]): boolean {
  return unsends.some((entry) => typeof entry.deliveryId === 'string' && (entry.status === 'queued' || entry.status === 'leased' || entry.status === 'sending' || entry.status === 'sent'));
}

/** The entry of a new edit or unsend delivery (queued). */
export function queuedEntry(kind: LifecycleKind, text: string, request: { requestedAt: Timestamp; uid: string }, deliveryId: string): LifecycleEntry {
  return { ...(kind === 'edit' ? { text } : {}), requestedAt: request.requestedAt, uid: request.uid, deliveryId, status: 'queued' };
}

/** The entry of a request the service refused (no delivery). `text` only for an edit, and only when it is a string. */
export function refusedEntry(kind: LifecycleKind, text: unknown, request: { requestedAt: Timestamp; uid: string }, code: LifecycleRefusal, now: number): LifecycleEntry {
  return {
    ...(kind === 'edit' && typeof text === 'string' ? { text } : {}),
    requestedAt: request.requestedAt,
    uid: request.uid,
    deliveryId: null,
    status: 'failed',
    at: Timestamp.fromMillis(now),
    error: { outcome: 'failed', code },
  };
}

/**
 * `entries` with the entry of delivery `d` in step with it: its status, `at` (when it became sent:
 * its `sentAt`; failed or unknown: kept while the status stays, else `now`) and `error`. The
 * request's own fields (text, requestedAt, uid) stay as written. An entry that is missing (dropped
 * beyond the limit while still unfinished cannot happen: only finished ones are dropped) is added.
 */
export function withDeliveryEntry(entries: readonly StoredEntry[], d: DeliveryRecord, now: number): StoredEntry[] {
  const index = entries.findIndex((entry) => entry.deliveryId === d.deliveryId);
  const old: StoredEntry =
    index >= 0 ? (entries[index] as StoredEntry) : { ...(d.kind === 'edit' ? { text: d.text } : {}), requestedAt: Timestamp.fromMillis(d.requestedAt ?? d.createdAt), deliveryId: d.deliveryId };
  const { at: oldAt, error: _error, status: oldStatus, ...request } = old;
  const entry: StoredEntry = { ...request, status: d.status };
  if (d.status === 'sent') entry.at = Timestamp.fromMillis(d.sentAt ?? now);
  else if (isTerminal(d.status)) entry.at = oldStatus === d.status && oldAt instanceof Timestamp ? oldAt : Timestamp.fromMillis(now);
  if (d.error !== null && d.status !== 'sent') entry.error = { outcome: d.error.outcome, code: d.error.code };
  return index >= 0 ? entries.map((e, i) => (i === index ? entry : e)) : [...entries, entry];
}

/** At most LIFECYCLE_HISTORY_LIMIT entries: the oldest finished ones go first (an unfinished one stays until it finishes). */
export function bounded(entries: readonly StoredEntry[]): StoredEntry[] {
  const out = [...entries];
  while (out.length > LIFECYCLE_HISTORY_LIMIT) {
    const oldestFinished = out.findIndex((entry) => entry.status === 'sent' || entry.status === 'failed' || entry.status === 'unknown');
    if (oldestFinished < 0) break;
    out.splice(oldestFinished, 1);
  }
  return out;
}

/**
 * One reply's history during one transaction: read with the reply, changed in memory by every
 * write of an edit or unsend delivery (and every refusal), written once at the end.
 */
export class ReplyHistory {
  private readonly lists: Record<LifecycleKind, StoredEntry[]>;
  private readonly changed = new Set<LifecycleKind>();
  private unsentAt: number | null = null;

  /**
   * `data`: the reply document as read in the transaction (undefined when it is gone: e.g. erased,
   * and then nothing is written back, so that a history write never recreates a deleted reply).
   */
  constructor(
    readonly reply: { workspaceId: string; conversationId: string; messageId: string },
    private readonly data: Record<string, unknown> | undefined,
  ) {
    this.lists = byLifecycleKind((kind) => storedEntries(data?.[historyField(kind)]));
  }

  /** The kind's entries as they stand in this transaction. */
  entries(kind: LifecycleKind): readonly StoredEntry[] {
    return this.lists[kind];
  }

  /** The reply was unsent (stored before this transaction, or an unsend became sent in it). */
  get unsent(): boolean {
    return this.data?.unsent !== undefined || this.unsentAt !== null;
  }

  /** Appends a request's entry (a new delivery's or a refusal's). */
  add(kind: LifecycleKind, entry: LifecycleEntry): void {
    this.lists[kind] = [...this.lists[kind], { ...entry }];
    this.changed.add(kind);
  }

  /** Brings the entry of an edit or unsend delivery in step with the record about to be written; an unsend that is sent marks the reply `unsent`. */
  record(d: DeliveryRecord, now: number): void {
    if (d.kind === undefined) throw new Error(`ReplyHistory.record: delivery ${d.deliveryId} is the reply's own (its mirror is \`delivery\`)`);
    this.lists[d.kind] = withDeliveryEntry(this.lists[d.kind], d, now);
    this.changed.add(d.kind);
    if (d.kind === 'unsend' && d.status === 'sent' && !this.unsent) this.unsentAt = d.sentAt ?? now;
  }

  /** Writes what changed (nothing when the reply is gone). */
  write(tx: Transaction, db: Firestore): void {
    if (this.data === undefined || (this.changed.size === 0 && this.unsentAt === null)) return;
    const update: Record<string, unknown> = {};
    for (const kind of this.changed) update[historyField(kind)] = bounded(this.lists[kind]);
    if (this.unsentAt !== null) update.unsent = { at: Timestamp.fromMillis(this.unsentAt) };
    const { workspaceId, conversationId, messageId } = this.reply;
    tx.update(db.doc(paths.message(workspaceId, conversationId, messageId)), update);
  }
}
