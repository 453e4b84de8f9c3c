/**
 * After the send, the pure part (no DOM, no Firebase): the integration's lifecycle capability
 * (`replies.lifecycle`, docs/data-model.md), its checks in words as the rules make them, when an
 * operator reply may still be edited or unsent (the capability, the channel's window from
 * `delivery.sentAt`, the sent state, not unsent, no request of that kind still pending), and the
 * labels of the service's answers (`edits[]`, `unsends[]`). Shared by the thread (thread.ts), the
 * admin's form (integrations.ts) and the desk CLI (console/cli). Time is a parameter (`now`).
 */
import { codePointLength, LIFECYCLE_LIMITS, parseLifecycleCapability, REPLY_MAX_CODE_POINTS, type LifecycleKind } from '../../functions/src/contract';

export type { LifecycleKind };

/**
 * The kinds the console offers and shows (its forms, cards, history and announcements). A kind
 * the contract adds later is taken by the service and the SDK at once; the console shows it once it
 * is listed here (and has its screens), and until then ignores it.
 */
const CONSOLE_KINDS = ['edit', 'unsend'] as const satisfies readonly LifecycleKind[];
type ConsoleKind = (typeof CONSOLE_KINDS)[number];
/** `windowSeconds` bounds of the contract (edits and unsends: one minute to seven days). */
export const LIFECYCLE_WINDOW_MIN_SECONDS = LIFECYCLE_LIMITS.windowSecondsMin;
export const LIFECYCLE_WINDOW_MAX_SECONDS = LIFECYCLE_LIMITS.windowSecondsMax;

/** `replies.lifecycle`: the kinds the integration's channel supports (of those the console shows), each with its window. */
export type LifecycleCapability = { [K in ConsoleKind]?: { windowSeconds: number } };

const isWindow = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value) && value >= LIFECYCLE_WINDOW_MIN_SECONDS && value <= LIFECYCLE_WINDOW_MAX_SECONDS;

/**
 * The capability of an integration document's `replies.lifecycle`, or undefined when it offers
 * neither kind. The contract's parser decides (the service's own): absent or malformed means no
 * edits or unsends, each kind judged on its own, so the console offers exactly what the service takes.
 */
export function readLifecycle(value: unknown): LifecycleCapability | undefined {
  const { edit, unsend } = parseLifecycleCapability(value);
  if (edit === null && unsend === null) return undefined;
  return { ...(edit === null ? {} : { edit }), ...(unsend === null ? {} : { unsend }) };
}

/** Why a capability would be refused (the rules' checks, in words), or undefined when it is valid. */
export function lifecycleProblem(c: { edit?: { windowSeconds: unknown }; unsend?: { windowSeconds: unknown } }): string | undefined {
  if (c.edit === undefined && c.unsend === undefined) return 'Choose edits, unsends or both (or turn them off).';
  for (const kind of ['edit', 'unsend'] as const) {
    const w = c[kind]?.windowSeconds;
    if (c[kind] !== undefined && !isWindow(w)) return `The ${kind === 'edit' ? 'edit' : 'unsend'} window is a whole number of seconds from ${LIFECYCLE_WINDOW_MIN_SECONDS} (1 minute) to ${LIFECYCLE_WINDOW_MAX_SECONDS} (7 days).`;
  }
  return undefined;
}

/** 900 -> "15 min", 172800 -> "2 days", 3700 -> "1 h 1 min 40 s". */
export function formatWindow(seconds: number): string {
  if (seconds % 86_400 === 0) return `${seconds / 86_400} day${seconds === 86_400 ? '' : 's'}`;
  const parts: string[] = [];
  const hours = Math.floor(seconds / 3600);
  const minutes = Math.floor((seconds % 3600) / 60);
  const rest = seconds % 60;
  if (hours > 0) parts.push(`${hours} h`);
  if (minutes > 0) parts.push(`${minutes} min`);
  if (rest > 0) parts.push(`${rest} s`);
  return parts.join(' ');
}

/** What the capability allows, for people ("Edits within 15 min of sending; unsends within 1 h."). */
export function lifecycleText(c: LifecycleCapability | undefined): string {
  if (c === undefined) return 'No edits or unsends after sending.';
  const parts = [c.edit ? `edits within ${formatWindow(c.edit.windowSeconds)} of sending` : 'no edits', c.unsend ? `unsends within ${formatWindow(c.unsend.windowSeconds)}` : 'no unsends'];
  const text = parts.join('; ');
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;
}

/** The status of an edit or unsend delivery (the service's `edits[].status`, `unsends[].status`). */
export type RequestStatus = 'queued' | 'leased' | 'sending' | 'sent' | 'failed' | 'unknown';

/** One entry of `edits[]` or `unsends[]` (latest last), times in epoch ms. */
export interface LifecycleEntry {
  /** The new text (edits only). */
  text?: string;
  requestedAtMs: number | undefined;
  /** Who asked (the request's `uid`): with the time, what identifies the request. */
  uid: string | undefined;
  deliveryId: string | null | undefined;
  status: RequestStatus | undefined;
  atMs: number | undefined;
  errorCode: string | undefined;
}

/** Statuses of a request the connector has not finished yet. */
const UNFINISHED = new Set<string | undefined>(['queued', 'leased', 'sending']);

/** The reply as these rules need it. */
export interface LifecycleReply {
  text: string;
  status: string | undefined;
  sentAtMs: number | undefined;
  unsentAtMs: number | undefined;
  edits: readonly LifecycleEntry[];
  unsends: readonly LifecycleEntry[];
  /** The member's latest request on the reply (`edit`, `unsend`: its time and who asked). */
  editRequest: { requestedAtMs: number | undefined; uid: string | undefined } | undefined;
  unsendRequest: { requestedAtMs: number | undefined; uid: string | undefined } | undefined;
}

/** The entry that answers `request` (the same time and the same member), if the service wrote one. */
export function entryFor(entries: readonly LifecycleEntry[], request: { requestedAtMs: number | undefined; uid: string | undefined } | undefined): LifecycleEntry | undefined {
  if (request?.requestedAtMs === undefined) return undefined;
  return entries.find((e) => e.requestedAtMs === request.requestedAtMs && e.uid === request.uid);
}

/**
 * Whether a request of `kind` on the reply is pending: the service has not answered the latest
 * request yet (no entry carries its `requestedAt`), or its delivery is not finished.
 */
export function requestPending(reply: LifecycleReply, kind: ConsoleKind): boolean {
  const entries = kind === 'edit' ? reply.edits : reply.unsends;
  const request = kind === 'edit' ? reply.editRequest : reply.unsendRequest;
  if (entries.some((e) => UNFINISHED.has(e.status))) return true;
  return request?.requestedAtMs !== undefined && entryFor(entries, request) === undefined;
}

/** When the window of `kind` closes for the reply (epoch ms), or undefined when there is none (no capability, not sent). */
export function windowEndsAt(reply: Pick<LifecycleReply, 'sentAtMs'>, capability: LifecycleCapability | undefined, kind: ConsoleKind): number | undefined {
  const windowSeconds = capability?.[kind]?.windowSeconds;
  return windowSeconds === undefined || reply.sentAtMs === undefined ? undefined : reply.sentAtMs + windowSeconds * 1000;
}

/**
 * Whether the console offers **Edit** (resp. **Unsend**) on the reply at `now`: the capability has
 * the kind, the reply's delivery is `sent` with its `sentAt` and the window has not passed, the
 * reply is not unsent, and no request of that kind (nor an unsend, for an edit) is pending. An edit
 * also needs text to replace. The rules check the same (the service re-checks in its trigger); a
 * failed or unknown request lets the member ask again.
 */
export function canRequest(reply: LifecycleReply, capability: LifecycleCapability | undefined, kind: ConsoleKind, now: number): boolean {
  const endsAt = windowEndsAt(reply, capability, kind);
  if (endsAt === undefined || reply.status !== 'sent' || reply.unsentAtMs !== undefined || now > endsAt) return false;
  if (requestPending(reply, 'unsend')) return false;
  if (kind === 'edit') return reply.text !== '' && !requestPending(reply, 'edit');
  return true;
}

/** The text the customer sees now: the latest edit the connector delivered, else the reply's own. */
export function shownText(reply: Pick<LifecycleReply, 'text' | 'edits'>): { text: string; edited: boolean } {
  const latest = reply.edits.filter((e) => e.status === 'sent' && e.text !== undefined).at(-1);
  return latest?.text === undefined ? { text: reply.text, edited: false } : { text: latest.text, edited: true };
}

/** Why an edit's text would be refused, or undefined (1..10000 code points, as the rules count, and a change). */
export function editProblem(text: string, current: string): string | undefined {
  const n = codePointLength(text);
  if (text.trim() === '') return 'Write the new text first.';
  if (n > REPLY_MAX_CODE_POINTS) return `Too long by ${n - REPLY_MAX_CODE_POINTS} characters (at most ${REPLY_MAX_CODE_POINTS}).`;
  if (text === current) return 'The text is unchanged.';
  return undefined;
}

/** An edit's or unsend's status for people ("sending", "failed (edit_window_passed)"). */
export function requestStatusLabel(entry: Pick<LifecycleEntry, 'status' | 'errorCode'>): string {
  const status = entry.status ?? 'requested';
  const label = status === 'unknown' ? 'unknown (may or may not have reached the customer)' : status === 'leased' ? 'claimed by the connector' : status;
  return `${label}${entry.errorCode === undefined ? '' : ` (${entry.errorCode})`}`;
}

/** The latest edit and unsend answers of a reply, as compared from one snapshot to the next. */
export type LifecycleMarks = Record<ConsoleKind, string>;

/**
 * What a screen reader should hear about a reply's edits and unsends: the kinds whose latest
 * answer (a new request, or a new status or error of the same one) differs from `before`. Nothing
 * on first sight (`before` undefined: the thread just opened, or the reply is new). Returns the
 * marks to compare the next snapshot with.
 */
export function lifecycleChanges(
  before: LifecycleMarks | undefined,
  reply: { edits: readonly LifecycleEntry[]; unsends: readonly LifecycleEntry[] },
): { marks: LifecycleMarks; changed: Array<{ kind: ConsoleKind; entry: LifecycleEntry }> } {
  const latest = { edit: reply.edits[reply.edits.length - 1], unsend: reply.unsends[reply.unsends.length - 1] };
  const mark = (e: LifecycleEntry | undefined): string => (e === undefined ? '' : [e.requestedAtMs, e.uid, e.status, e.errorCode].join('|'));
  const marks: LifecycleMarks = { edit: mark(latest.edit), unsend: mark(latest.unsend) };
  const changed: Array<{ kind: ConsoleKind; entry: LifecycleEntry }> = [];
  if (before !== undefined) {
    for (const kind of CONSOLE_KINDS) {
      const entry = latest[kind];
      if (entry !== undefined && marks[kind] !== before[kind]) changed.push({ kind, entry });
    }
  }
  return { marks, changed };
}

/** One reaction (`reactions[]` on a customer message or an operator reply). */
export interface Reaction {
  emoji: string;
  senderExternalId: string | undefined;
  atMs: number | undefined;
}

/** Reactions grouped by emoji, in the order each emoji first appeared, with who reacted. */
export function groupReactions(reactions: readonly Reaction[]): Array<{ emoji: string; count: number; senders: string[] }> {
  const groups = new Map<string, { emoji: string; count: number; senders: string[] }>();
  for (const r of reactions) {
    const group = groups.get(r.emoji) ?? { emoji: r.emoji, count: 0, senders: [] };
    group.count += 1;
    if (r.senderExternalId !== undefined) group.senders.push(r.senderExternalId);
    groups.set(r.emoji, group);
  }
  return [...groups.values()];
}

/** How long "typing…" shows after the customer's last typing event. */
const TYPING_SHOWN_MS = 8000;

/** Whether the typing indicator shows at `now` for a typing event at `atMs`. */
export function typingShown(atMs: number | undefined, now: number): boolean {
  return atMs !== undefined && now - atMs < TYPING_SHOWN_MS;
}
