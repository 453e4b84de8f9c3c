/**
 * The desk CLI's human-readable output (`--json` prints the data itself): the console's labels
 * (console/src/format.ts, attachments.ts) laid out for a terminal. Pure: no Firebase, no I/O.
 */
import { contentTypeLabel, limitsText, type AttachmentCapability } from '../src/attachments';
import { cancelOutcomeLabel, formatBytes, statusLabel } from '../src/format';
import { connectorConfirmation, erasureStatusLabel } from '../src/privacy-format';
import { ERASED_KINDS, type Erasure } from '../src/privacy-data';
import { groupReactions, lifecycleText, requestStatusLabel, shownText, type LifecycleCapability, type LifecycleEntry, type Reaction } from '../src/lifecycle';
import type { DeliveryFacts, InboundMessage, OutboundMessage } from '../src/thread-data';
import type { ConversationRow } from './conversations';

/** A time as UTC `YYYY-MM-DD HH:MM:SSZ`, or only `HH:MM:SSZ` on the day of `now`; a dash when unknown. */
function clock(ms: number | undefined | null, now: number): string {
  if (ms === undefined || ms === null) return '—';
  const iso = new Date(ms).toISOString();
  const sameDay = iso.slice(0, 10) === new Date(now).toISOString().slice(0, 10);
  return `${sameDay ? iso.slice(11, 19) : `${iso.slice(0, 10)} ${iso.slice(11, 19)}`}Z`;
}

/** One line of text at most `max` characters, for lists. */
function oneLine(text: string, max = 60): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

const row = (label: string, value: string): string => `  ${label.padEnd(10)} ${value}`;

function facts(f: DeliveryFacts): string {
  return `${f.status === undefined ? 'submitted' : statusLabel(f.status)}${f.errorCode === undefined ? '' : ` (${f.errorCode})`}`;
}

/** Reactions grouped by emoji with their counts ("👍 2 · ❤️ 1"). */
function reactionsText(reactions: readonly Reaction[]): string {
  return groupReactions(reactions)
    .map((g) => `${g.emoji} ${g.count}`)
    .join(' · ');
}

/** Each edit or unsend request with the service's answer, oldest first. */
function entriesText(entries: readonly LifecycleEntry[], now: number): string {
  return entries.map((e, i) => `${i + 1}. ${e.text === undefined ? '' : `“${oneLine(e.text, 40)}” `}${requestStatusLabel(e)}${e.atMs === undefined ? '' : ` at ${clock(e.atMs, now)}`}`).join(' · ');
}

/** One operator reply with its delivery mirror, as the console's thread shows it; `selfUid` is the signed-in user ("by you"). */
export function renderReply(reply: OutboundMessage, now: number, selfUid: string): string {
  const d = reply.delivery;
  const author = reply.authorUid === undefined ? '' : ` · by ${reply.authorUid === selfUid ? 'you' : reply.authorUid}`;
  const lines = [`reply ${reply.id} · ${clock(reply.createdAtMs, now)}${author}`];
  // The text the customer sees now: the latest edit the connector delivered (the original under it).
  const shown = shownText(reply);
  if (shown.text !== '') lines.push(row('text', `${oneLine(shown.text, 100)}${shown.edited ? ' (edited)' : ''}`));
  if (shown.edited) lines.push(row('original', oneLine(reply.text, 100)));
  if (reply.unsentAtMs !== undefined) lines.push(row('unsent', `at ${clock(reply.unsentAtMs, now)} (taken back from the channel)`));
  if (reply.edits.length > 0) lines.push(row('edits', entriesText(reply.edits, now)));
  if (reply.unsends.length > 0) lines.push(row('unsends', entriesText(reply.unsends, now)));
  if (reply.reactions.length > 0) lines.push(row('reactions', reactionsText(reply.reactions)));
  const fileNames = new Map<string, string>();
  for (const a of reply.attachments) {
    if (a.attachmentId !== undefined && a.name !== undefined) fileNames.set(a.attachmentId, a.name);
  }
  if (reply.attachments.length > 0) {
    lines.push(row('files', reply.attachments.map((a) => `${a.name ?? '?'} (${a.contentType === undefined ? '?' : contentTypeLabel(a.contentType)}${a.size === undefined ? '' : `, ${formatBytes(a.size)}`})`).join(', ')));
  }
  if (d === undefined) {
    lines.push(row('status', 'submitted (the service has not sequenced it yet)'));
    return lines.join('\n');
  }
  lines.push(row('status', `${facts(d)}${d.deliveryId === undefined ? '' : ` · delivery ${d.deliveryId}`}`));
  if (d.traceId !== undefined) lines.push(row('trace', d.traceId));
  if (d.providerMessageIds !== undefined && d.providerMessageIds.length > 0) lines.push(row('provider', d.providerMessageIds.join(', ')));
  if (d.parts !== undefined && d.parts.length > 0) {
    const partName = (part: string | undefined) => (part === 'text' ? 'text' : (fileNames.get(part ?? '') ?? part ?? '?'));
    lines.push(row('parts', d.parts.map((p) => `${partName(p.part)}: ${p.status ?? '?'}${p.code === undefined ? '' : ` (${p.code})`}${p.providerMessageIds === undefined || p.providerMessageIds.length === 0 ? '' : ` [${p.providerMessageIds.join(', ')}]`}`).join(' · ')));
  }
  if (d.sentAtMs !== undefined) lines.push(row('sent at', clock(d.sentAtMs, now)));
  if (d.receipt !== undefined) lines.push(row('receipt', `${d.receipt.status ?? '?'}${d.receipt.code === undefined ? '' : ` (${d.receipt.code})`} at ${clock(d.receipt.atMs, now)}`));
  if (d.cancel !== undefined) lines.push(row('cancel', cancelOutcomeLabel(d.cancel)));
  if (d.attempts !== undefined && d.attempts.length > 0) {
    lines.push(row('attempts', d.attempts.map((a) => `${clock(a.atMs, now)} ${a.event ?? '?'}${a.code === undefined ? '' : `:${a.code}`}`).join(' → ')));
  }
  if (d.previous !== undefined) lines.push(row('previous', `${facts(d.previous)}${d.previous.attempts === undefined ? '' : `, ${d.previous.attempts.length} attempt${d.previous.attempts.length === 1 ? '' : 's'}`}`));
  return lines.join('\n');
}

/** The conversation list, most recent first. */
export function renderConversations(rows: readonly ConversationRow[], workspaceId: string, now: number): string {
  if (rows.length === 0) return `No conversations in workspace ${workspaceId} yet: they appear when a connector posts the first message.`;
  return rows
    .map((r) => {
      const customer = r.customer === null ? 'no customer yet' : r.customer.displayName === null ? r.customer.externalId : `${r.customer.displayName} (${r.customer.externalId})`;
      const last = r.lastMessage;
      const lines = [`${r.conversationId}  ${r.integrationId} / ${r.externalConversationId}`, row('customer', customer)];
      if (last !== null) {
        const content = last.deleted
          ? 'deleted by the customer'
          : [last.text === '' ? '' : `“${oneLine(last.text)}”`, last.files === 0 ? '' : `${last.files} file${last.files === 1 ? '' : 's'}`].filter((s) => s !== '').join(' + ');
        const marks = [last.edited ? 'edited' : '', last.unsent ? 'unsent' : '', last.reactions === undefined ? '' : last.reactions].filter((s) => s !== '');
        lines.push(row('last', `${clock(last.atMs, now)} ${last.from}: ${content === '' ? '(empty)' : content}${marks.length === 0 ? '' : ` (${marks.join(', ')})`}`));
      }
      lines.push(row('reply', r.latestReply === null ? 'none yet' : `${r.latestReply.status === 'submitted' ? 'submitted' : statusLabel(r.latestReply.status as Parameters<typeof statusLabel>[0])}${r.latestReply.errorCode === null ? '' : ` (${r.latestReply.errorCode})`} · ${r.latestReply.replyId}`));
      return lines.join('\n');
    })
    .join('\n\n');
}

/** What `capabilities` prints (`--json`: exactly this). */
export interface CapabilitiesView {
  integrationId: string;
  name: string;
  active: boolean;
  /** `replies.attachments`, or null: replies are text only. */
  attachments: AttachmentCapability | null;
  /** `replies.lifecycle`, or null: no edits or unsends after sending. */
  lifecycle: LifecycleCapability | null;
  /** Whether this run wrote the integration. */
  changed: boolean;
}

export function renderCapabilities(view: CapabilitiesView): string {
  const lifecycle = view.lifecycle;
  const windows = lifecycle === null ? '' : [lifecycle.edit ? `edit=${lifecycle.edit.windowSeconds}` : '', lifecycle.unsend ? `unsend=${lifecycle.unsend.windowSeconds}` : ''].filter((s) => s !== '').join(',');
  return [
    `Integration ${view.integrationId} (${view.name}, ${view.active ? 'active' : 'inactive'})${view.changed ? ': saved' : ''}`,
    row('files', view.attachments === null ? 'off: replies are text only' : `on: ${limitsText(view.attachments)}`),
    row('lifecycle', lifecycle === null ? 'off: no edits or unsends after sending' : `on (${windows}): ${lifecycleText(lifecycle)}`),
  ].join('\n');
}

/** One customer message: its text (the latest edit, "edited"), or the tombstone, and its reactions. */
export function renderCustomerMessage(message: InboundMessage, now: number): string {
  const who = message.alert ? 'alert' : `customer ${message.sender.displayName ?? message.sender.externalId ?? '?'}`;
  const lines = [`message ${message.id} · ${clock(message.createdAtMs, now)} · ${who}`];
  if (message.deleted !== undefined) {
    lines.push(row('deleted', `by the customer at ${clock(message.deleted.atMs, now)} (content removed)`));
    return lines.join('\n');
  }
  const latest = message.edits.at(-1);
  if (latest !== undefined) {
    lines.push(row('text', `${oneLine(latest.text, 100)} (edited at ${clock(latest.atMs, now)})`));
    lines.push(row('original', oneLine(message.text ?? '', 100)));
    if (message.edits.length > 1) lines.push(row('edits', message.edits.map((e, i) => `${i + 1}. “${oneLine(e.text, 40)}” at ${clock(e.atMs, now)}`).join(' · ')));
  } else if (message.text !== undefined && message.text !== '') {
    lines.push(row('text', oneLine(message.text, 100)));
  }
  if (message.images.length > 0) lines.push(row('images', String(message.images.length)));
  if (message.reactions.length > 0) lines.push(row('reactions', reactionsText(message.reactions)));
  return lines.join('\n');
}

/** The conversation's typing document as `status` reads it (`--json`: exactly this, or null when there is none). */
export interface TypingView {
  senderExternalId: string | undefined;
  displayName: string | undefined;
  /** The latest typing event (epoch ms). */
  atMs: number | undefined;
  /** Whether the console shows "typing…" now: within 8 s of `atMs` (console/src/lifecycle.ts `typingShown`). */
  typingNow: boolean;
}

/** Who is typing, one line under the conversation's header: the sender while the console shows it, else who typed last (the document lives a minute). */
export function renderTyping(typing: TypingView | null, now: number): string {
  if (typing === null) return row('typing', 'nobody');
  const who = typing.displayName === undefined ? (typing.senderExternalId ?? '?') : `${typing.displayName} (${typing.senderExternalId ?? '?'})`;
  return row('typing', typing.typingNow ? `${who} is typing (since ${clock(typing.atMs, now)})` : `nobody now (${who} typed at ${clock(typing.atMs, now)})`);
}

/** An erasure's requester: "you" for the signed-in user, else the uid. */
const requester = (uid: string | undefined, selfUid: string): string => (uid === undefined ? '?' : uid === selfUid ? 'you' : uid);

/** One erasure with the service's audit, as the console's Privacy view lists it, and the connector's acknowledgement. */
export function renderErasure(erasure: Erasure, now: number, selfUid: string): string {
  const counts = ERASED_KINDS.filter((kind) => erasure.counts[kind] !== undefined)
    .map((kind) => `${erasure.counts[kind]} ${kind}`)
    .join(', ');
  const confirmation = connectorConfirmation(erasure.audit, now);
  // The acknowledgement is the integration's: its connector calls POST /v1/erasures/ack with the integration's key.
  const connector =
    confirmation.kind === 'confirmed'
      ? `acknowledged at ${clock(confirmation.at, now)} by the connector of ${erasure.integrationId} (it purged its own copies)`
      : confirmation.kind === 'waiting'
        ? `pending: told at ${clock(confirmation.since, now)}, waiting ${confirmation.age} for its acknowledgement`
        : 'pending: told once the erasure is done';
  return [
    `erasure ${erasure.id} · ${erasureStatusLabel(erasure.audit.status)}`,
    row('customer', `${erasure.externalCustomerId} of integration ${erasure.integrationId}`),
    row('requested', `${clock(erasure.requestedAtMs, now)} by ${requester(erasure.requestedBy, selfUid)}`),
    ...(erasure.audit.finishedAt === undefined ? [] : [row('finished', clock(erasure.audit.finishedAt, now))]),
    row('erased', counts === '' ? '—' : counts),
    row('connector', connector),
  ].join('\n');
}

/** The `erasures` list: a header with the pending count, then each erasure, most recent first. */
export function renderErasures(erasures: readonly Erasure[], context: { workspaceId: string; pendingOnly: boolean; selfUid: string }, now: number): string {
  const pending = erasures.filter((e) => e.audit.acknowledgedAt === undefined).length;
  if (erasures.length === 0) return context.pendingOnly ? `No erasure of workspace ${context.workspaceId} is waiting for its connector.` : `No erasures in workspace ${context.workspaceId}.`;
  const header = context.pendingOnly
    ? `Erasures of workspace ${context.workspaceId} not acknowledged by their connector: ${erasures.length}, most recent first`
    : `Erasures of workspace ${context.workspaceId}: ${erasures.length} (${pending} not acknowledged by their connector), most recent first`;
  return [header, ...erasures.map((e) => renderErasure(e, now, context.selfUid))].join('\n\n');
}
