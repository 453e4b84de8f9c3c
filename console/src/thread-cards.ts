/**
 * What a thread's messages show, read-only: a customer's message or alert (its edits, its
 * tombstone, its images), and the parts of an operator reply's card that carry no control: its
 * text as the customer sees it now (edited, unsent, the requests' states, the history), its files
 * with each part's outcome, reactions, the delivery's facts, the attempt log and what a resend
 * replaced. The controls are thread-reply-card.ts and thread-lifecycle-forms.ts.
 */
import type { UploadedAttachment } from './attachments';
import { h, type Child } from './dom';
import { formatBytes, formatTime } from './format';
import { entryFor, groupReactions, requestPending, requestStatusLabel, shownText, type LifecycleEntry, type LifecycleKind, type Reaction } from './lifecycle';
import { mediaElement } from './media';
import type { ThreadContext } from './thread-context';
import type { Attempt, DeliveryFacts, InboundMessage, OutboundMessage, PartStatus } from './thread-data';
import { lifecycleReply } from './thread-rules';

/** The id of a reply's text: its controls name it (`aria-describedby`) to tell them apart. */
export const replyTextId = (messageId: string): string => `text-${messageId}`;

export function attemptList(attempts: Attempt[] | undefined): Child {
  if (!attempts || attempts.length === 0) return null;
  return h(
    'details',
    { class: 'attempts' },
    h('summary', {}, `Attempt log (${attempts.length})`),
    h('ol', {}, ...attempts.map((a) => h('li', {}, h('time', {}, formatTime(a.atMs)), ` ${a.event ?? '?'}`, a.code ? h('code', {}, ` ${a.code}`) : null))),
  );
}

/**
 * A delivery's facts: its error code in sight (an operator acts on it), the provider ids and the
 * trace id behind "Details" (what a developer or support engineer looks up, not the operator's
 * daily reading).
 */
export function deliveryDetails(delivery: DeliveryFacts | undefined): Child[] {
  const providerIds = delivery?.providerMessageIds && delivery.providerMessageIds.length > 0 ? h('span', { class: 'provider-ids' }, 'provider ids ', h('code', {}, delivery.providerMessageIds.join(', '))) : null;
  const trace = delivery?.traceId ? h('span', { class: 'trace-id', 'data-trace-id': delivery.traceId }, 'trace ', h('code', {}, delivery.traceId)) : null;
  return [
    delivery?.errorCode ? h('span', { class: 'error-code' }, 'code ', h('code', {}, delivery.errorCode)) : null,
    providerIds !== null || trace !== null ? h('details', { class: 'delivery-ids' }, h('summary', {}, 'Details'), providerIds, trace) : null,
  ];
}

/** The channel's receipt of a sent reply. */
export function receiptLine(delivery: OutboundMessage['delivery']): Child {
  return delivery?.receipt?.status ? h('span', { class: 'receipt' }, `receipt: ${delivery.receipt.status}`, delivery.receipt.code ? ` (${delivery.receipt.code})` : '', ` ${formatTime(delivery.receipt.atMs)}`) : null;
}

/** After a resend: how the replaced delivery ended, with its facts and attempt log. */
export function previousDelivery(delivery: OutboundMessage['delivery']): Child {
  return delivery?.previous
    ? h(
        'details',
        { class: 'previous' },
        h('summary', {}, `Before the resend: ${delivery.previous.status ?? '?'}`),
        h('div', {}, ...deliveryDetails(delivery.previous)),
        attemptList(delivery.previous.attempts),
      )
    : null;
}

/** Reaction chips, grouped by emoji with their counts (who reacted in the title). */
export function reactionChips(reactions: readonly Reaction[]): Child {
  if (reactions.length === 0) return null;
  return h(
    'ul',
    { class: 'reactions', 'aria-label': 'Reactions' },
    ...groupReactions(reactions).map((g) =>
      h('li', { class: 'reaction', 'data-emoji': g.emoji, 'data-count': g.count, title: g.senders.join(', ') }, h('span', { class: 'emoji' }, g.emoji), ' ', h('span', { class: 'count' }, String(g.count))),
    ),
  );
}

/** A pending request's state: its delivery's status once the service answered it, else "requested". */
function pendingLabel(entries: readonly LifecycleEntry[], request: { requestedAtMs: number | undefined; uid: string | undefined } | undefined): string {
  const unfinished = entries.find((e) => e.status === 'queued' || e.status === 'leased' || e.status === 'sending') ?? entryFor(entries, request);
  return unfinished === undefined ? 'requested' : requestStatusLabel(unfinished);
}

function entryItem(kind: LifecycleKind, e: LifecycleEntry): HTMLElement {
  return h(
    'li',
    { 'data-entry-status': e.status ?? 'requested' },
    kind === 'edit' ? h('q', { class: 'edit-text' }, e.text ?? '') : 'unsend',
    ' · requested ',
    h('time', {}, formatTime(e.requestedAtMs)),
    ' · ',
    h('span', { class: `badge status status-${e.status ?? 'pending'}` }, requestStatusLabel(e)),
    e.atMs === undefined ? null : h('span', { class: 'muted' }, ' ', h('time', {}, formatTime(e.atMs))),
  );
}

/** The reply's text as the customer sees it now, with "edited", "unsent" and the request states. */
export function replyBody(m: OutboundMessage): Child[] {
  const rule = lifecycleReply(m);
  const { text, edited } = shownText(rule);
  const textId = replyTextId(m.id);
  const unsent = m.unsentAtMs !== undefined;
  const latestEdit = m.edits.at(-1);
  const latestUnsend = m.unsends.at(-1);
  const editPending = requestPending(rule, 'edit');
  const unsendPending = requestPending(rule, 'unsend');
  const textNode = unsent ? h('p', { class: 'text unsent-text', id: textId }, h('del', {}, text)) : h('p', { class: 'text', id: textId }, text);
  const marks = h(
    'div',
    { class: 'lifecycle-state' },
    edited ? h('span', { class: 'badge badge-edited', 'data-edited': 'true' }, 'edited') : null,
    unsent ? h('span', { class: 'badge badge-unsent' }, 'unsent ', h('time', {}, formatTime(m.unsentAtMs))) : null,
    editPending ? h('span', { class: 'muted edit-pending' }, `edit ${pendingLabel(m.edits, m.editRequest)}…`) : null,
    !editPending && latestEdit !== undefined && (latestEdit.status === 'failed' || latestEdit.status === 'unknown')
      ? h('span', { class: `edit-outcome status-${latestEdit.status}` }, `latest edit ${requestStatusLabel(latestEdit)}`)
      : null,
    !unsent && unsendPending ? h('span', { class: 'muted unsend-pending' }, `unsend ${pendingLabel(m.unsends, m.unsendRequest)}…`) : null,
    !unsent && !unsendPending && latestUnsend !== undefined && (latestUnsend.status === 'failed' || latestUnsend.status === 'unknown')
      ? h('span', { class: `unsend-outcome status-${latestUnsend.status}` }, `unsend ${requestStatusLabel(latestUnsend)}`)
      : null,
  );
  const history =
    m.edits.length > 0 || m.unsends.length > 0
      ? h(
          'details',
          { class: 'edit-history' },
          h('summary', {}, `History (${m.edits.length} edit${m.edits.length === 1 ? '' : 's'}${m.unsends.length > 0 ? `, ${m.unsends.length} unsend${m.unsends.length === 1 ? '' : 's'}` : ''})`),
          h('ol', {}, h('li', { 'data-entry-status': 'original' }, h('q', { class: 'edit-text' }, m.text), ' · original'), ...m.edits.map((e) => entryItem('edit', e)), ...m.unsends.map((e) => entryItem('unsend', e))),
        )
      : null;
  return [textNode, marks.childNodes.length > 0 ? marks : null, history];
}

/** A reply's files inline (thumbnails, links) and, once the connector reported them, each part's outcome. */
export function replyFiles(ctx: ThreadContext, files: Partial<UploadedAttachment>[], parts: PartStatus[] | undefined): Child {
  const partOf = (name: string) => parts?.find((p) => p.part === name);
  const partBadge = (p: PartStatus | undefined) =>
    p?.status ? h('span', { class: `badge part-status status-${p.status}`, 'data-part-status': p.status }, p.status, p.code ? ` (${p.code})` : '') : null;
  const textPart = partOf('text');
  if (files.length === 0 && textPart === undefined) return null;
  return h(
    'div',
    { class: 'reply-files' },
    textPart ? h('p', { class: 'part part-text', 'data-part': 'text' }, 'Text: ', partBadge(textPart)) : null,
    ...files.map((f) => {
      const attachmentId = String(f.attachmentId ?? '');
      const figure = mediaElement(ctx.media, { kind: 'attachment', conversationId: ctx.conversationId, attachmentId }, { name: String(f.name ?? attachmentId), ...(f.contentType === undefined ? {} : { contentType: f.contentType }), ...(f.size === undefined ? {} : { size: f.size }) });
      const badge = partBadge(partOf(attachmentId));
      if (badge) figure.append(badge);
      figure.dataset.part = attachmentId;
      return figure;
    }),
  );
}

/** A customer's message or alert: its latest text and edit history, or its tombstone; reactions; images. */
export function inboundCard(ctx: ThreadContext, m: InboundMessage): HTMLElement {
  const { id, sender, alert, images } = m;
  const who = h('div', { class: 'who' }, alert ? h('span', { class: 'badge badge-alert' }, 'Alert') : null, alert ? ' ' : null, sender.displayName ?? sender.externalId ?? 'customer', ' · ', h('time', {}, formatTime(m.createdAtMs)));
  if (m.deleted !== undefined) {
    // A tombstone: the service removed the content; nothing of it is shown (not even a reaction).
    return h('li', { class: 'message inbound deleted', 'data-message': id, 'data-deleted': 'true' }, who, h('p', { class: 'tombstone muted' }, 'deleted by the customer ', h('time', {}, formatTime(m.deleted.atMs))));
  }
  const latestEdit = m.edits.at(-1);
  return h(
    'li',
    { class: `message inbound${alert ? ' alert' : ''}`, 'data-message': id, 'data-edited': latestEdit === undefined ? undefined : 'true' },
    who,
    latestEdit !== undefined ? h('p', { class: 'text' }, latestEdit.text) : m.text !== undefined ? h('p', { class: 'text' }, m.text) : null,
    latestEdit !== undefined
      ? h(
          'details',
          { class: 'edit-history' },
          h('summary', {}, h('span', { class: 'badge badge-edited' }, 'edited'), ` ${formatTime(latestEdit.atMs)} · history (${m.edits.length})`),
          h('ol', {}, h('li', { 'data-entry-status': 'original' }, h('q', { class: 'edit-text' }, m.text ?? ''), ' · original'), ...m.edits.map((e) => h('li', {}, h('q', { class: 'edit-text' }, e.text), ' · ', h('time', {}, formatTime(e.atMs))))),
        )
      : null,
    reactionChips(m.reactions),
    images.length > 0
      ? h(
          'ul',
          { class: 'images', 'aria-label': 'Images' },
          ...images.map((img, index) =>
            h(
              'li',
              { class: 'image-meta' },
              mediaElement(ctx.media, { kind: 'image', conversationId: ctx.conversationId, messageId: id, index }, { name: `Image: ${img.contentType ?? 'image'} ${img.width ?? '?'}×${img.height ?? '?'}, ${formatBytes(img.bytes ?? 0)}`, ...(img.contentType === undefined ? {} : { contentType: img.contentType }), ...(img.width === undefined ? {} : { width: img.width }), ...(img.height === undefined ? {} : { height: img.height }) }),
              h('code', { class: 'wrap', title: img.path ?? '' }, ` ${(img.sha256 ?? '').slice(0, 12)}`),
            ),
          ),
        )
      : null,
  );
}
