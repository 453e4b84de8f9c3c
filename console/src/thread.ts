/**
 * One conversation: incoming messages and alerts, image metadata (no client access to the image
 * store is granted, docs/data-model.md), the operator replies with their live `delivery` mirror,
 * a compose box, Resend on failed/unknown replies and Cancel send (recall before send) on replies the
 * connector has not started yet. This module renders and wires the view; its Firestore reads and
 * writes are thread-data.ts.
 */
import { announce, append, h, notice, replace, type Child } from './dom';
import { describeError } from './errors';
import { codePointLength, REPLY_MAX_CODE_POINTS } from '../../functions/src/contract';
import { cancelOutcomeLabel, cancelPending as isCancelPending, canCancel, canResend, formatBytes, formatTime, NO_CUSTOMER_YET, replyProblem, resendPending as isResendPending, statusLabel, type DeliveryStatus } from './format';
import type { View } from './view';
import type { Session } from './session';
import type { UploadedAttachment } from './attachments';
import { composeAttachments } from './compose-attachments';
import { MediaCache, mediaElement } from './media';
import { CustomerNames, personLabel } from './customers';
import { canRequest, editProblem, entryFor, groupReactions, lifecycleChanges, lifecycleText, requestPending, requestStatusLabel, shownText, typingShown, windowEndsAt, type LifecycleCapability, type LifecycleEntry, type LifecycleKind, type LifecycleMarks, type LifecycleReply, type Reaction } from './lifecycle';
import {
  requestCancel,
  requestEdit,
  requestResend,
  requestUnsend,
  sendReply,
  subscribeConversation,
  subscribeMessages,
  subscribeReplyCapability,
  subscribeTyping,
  type Attempt,
  type DeliveryFacts,
  type InboundMessage,
  type OutboundMessage,
  type PartStatus,
  type ThreadMessage,
  type Typing,
} from './thread-data';

/** Messages shown at first: the latest of the conversation; "Load older" adds as many again. */
const THREAD_LIMIT = 200;

function attemptList(attempts: Attempt[] | undefined): Child {
  if (!attempts || attempts.length === 0) return null;
  return h(
    'details',
    { class: 'attempts' },
    h('summary', {}, `Attempt log (${attempts.length})`),
    h('ol', {}, ...attempts.map((a) => h('li', {}, h('time', {}, formatTime(a.atMs)), ` ${a.event ?? '?'}`, a.code ? h('code', {}, ` ${a.code}`) : null))),
  );
}

function deliveryDetails(delivery: DeliveryFacts | undefined): Child[] {
  return [
    delivery?.errorCode ? h('span', { class: 'error-code' }, 'code ', h('code', {}, delivery.errorCode)) : null,
    delivery?.providerMessageIds && delivery.providerMessageIds.length > 0
      ? h('span', { class: 'provider-ids' }, 'provider ids ', h('code', {}, delivery.providerMessageIds.join(', ')))
      : null,
    delivery?.traceId ? h('span', { class: 'trace-id', 'data-trace-id': delivery.traceId }, 'trace ', h('code', {}, delivery.traceId)) : null,
  ];
}

/** Reaction chips, grouped by emoji with their counts (who reacted in the title). */
function reactionChips(reactions: readonly Reaction[]): Child {
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

/** The rules' view of a reply (lifecycle.ts) from the thread's shape. */
function lifecycleReply(m: OutboundMessage): LifecycleReply {
  return {
    text: m.text,
    status: m.delivery?.status,
    sentAtMs: m.delivery?.sentAtMs,
    unsentAtMs: m.unsentAtMs,
    edits: m.edits,
    unsends: m.unsends,
    editRequest: m.editRequest,
    unsendRequest: m.unsendRequest,
  };
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

export function threadView(session: Session, conversationId: string): View {
  const { services, user } = session;

  const title = h('h2', { id: 'thread-title' }, conversationId);
  const subtitle = h('p', { class: 'muted' });
  const lifecycleLine = h('p', { class: 'muted lifecycle-capability', id: 'lifecycle-capability' });
  const messages = h('ol', { class: 'messages', id: 'messages', 'aria-labelledby': 'thread-title' });
  const state = h('div', {}, notice('loading', 'Loading messages…'));

  // Compose: 1..REPLY_MAX_CODE_POINTS code points, counted as the rules count them.
  const text = h('textarea', { id: 'reply-text', name: 'text', rows: 3, 'aria-describedby': 'reply-counter reply-hint' });
  const counter = h('span', { id: 'reply-counter', class: 'muted' }, `0 / ${REPLY_MAX_CODE_POINTS}`);
  const send = h('button', { type: 'submit', id: 'send-reply', disabled: true }, 'Send reply');
  const composeError = h('div', { id: 'compose-error' });
  const media = new MediaCache(session);
  const customers = new CustomerNames(services.db, session.workspaceId);
  const files = composeAttachments(session, conversationId, () => updateCounter());
  const form = h(
    'form',
    { class: 'compose', 'aria-label': 'Compose a reply' },
    h('label', { for: 'reply-text' }, 'Reply'),
    text,
    files.el,
    h('div', { class: 'row' }, counter, h('span', { id: 'reply-hint', class: 'muted' }, 'Ctrl+Enter sends'), send),
    composeError,
  );
  function updateCounter(): void {
    const n = codePointLength(text.value);
    counter.textContent = `${n} / ${REPLY_MAX_CODE_POINTS}`;
    counter.classList.toggle('over', n > REPLY_MAX_CODE_POINTS);
    send.disabled = replyProblem(text.value, files.count()) !== undefined || files.ready() === undefined;
  }
  text.addEventListener('input', updateCounter);
  text.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      form.requestSubmit();
    }
  });
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const attachments = files.ready();
    const problem = attachments === undefined ? 'Wait for the files to upload, or remove the ones that failed.' : replyProblem(text.value, attachments.length);
    if (problem) {
      replace(composeError, notice('error', problem));
      return;
    }
    const value = text.value;
    send.disabled = true;
    text.readOnly = true;
    files.setDisabled(true);
    replace(composeError, notice('loading', 'Sending…'));
    sendReply(session, conversationId, value, attachments).then(
      () => {
        text.readOnly = false;
        files.setDisabled(false);
        files.clear();
        text.value = '';
        updateCounter();
        replace(composeError);
        text.focus();
      },
      (err: unknown) => {
        text.readOnly = false;
        files.setDisabled(false);
        updateCounter();
        replace(composeError, notice('error', describeError(err, `replies must be 1 to ${REPLY_MAX_CODE_POINTS} characters (or empty with files), written by a member of the workspace in an existing conversation, with at most the integration's number of uploaded files`)));
      },
    );
  });

  // Status changes are announced once they happen (not on first load).
  const lastStatus = new Map<string, string>();
  const lastCancel = new Map<string, string>();
  const lastLifecycle = new Map<string, LifecycleMarks>();
  let firstSnapshot = true;
  const resendErrors = new Map<string, string>();
  const cancelErrors = new Map<string, string>();
  /** Deliveries this page asked to cancel (until the service answers on the mirror). */
  const cancelRequested = new Set<string>();
  /** The reply whose Cancel send was just used: keyboard focus stays on it across re-renders. */
  let focusAfterRender: { message: string; control?: string } | undefined;
  /** The integration's `replies.lifecycle` (followed live with its attachments). */
  let lifecycle: LifecycleCapability | undefined;
  /** Open edit forms: the draft of each reply being edited (kept across re-renders). */
  const editing = new Map<string, string>();
  /** Replies whose Unsend waits for its in-page confirmation. */
  const confirmingUnsend = new Set<string>();
  const editErrors = new Map<string, string>();
  const unsendErrors = new Map<string, string>();
  /**
   * The clock of the view's time rules (the edit and unsend windows, the typing indicator): the
   * browser's, so a test moves it with the browser's clock.
   */
  const now = (): number => Date.now();

  /** Edit and Unsend on a sent reply, the edit form, the unsend confirmation; each refusal says why. */
  function lifecycleControls(m: OutboundMessage, at: number): { buttons: Child[]; panel: Child } {
    const { id } = m;
    const rule = lifecycleReply(m);
    const textId = `text-${id}`;
    const canEdit = canRequest(rule, lifecycle, 'edit', at);
    const canUnsend = canRequest(rule, lifecycle, 'unsend', at);
    if (!canEdit) editing.delete(id);
    if (!canUnsend) confirmingUnsend.delete(id);
    const editButton =
      canEdit && !editing.has(id)
        ? h('button', {
            type: 'button',
            class: 'secondary edit',
            'data-focus': 'edit',
            'aria-describedby': textId,
            onclick: () => {
              editing.set(id, shownText(rule).text);
              editErrors.delete(id);
              focusAfterRender = { message: id, control: 'edit-text' };
              render();
            },
          }, 'Edit')
        : null;
    const unsendButton =
      canUnsend && !confirmingUnsend.has(id)
        ? h('button', {
            type: 'button',
            class: 'secondary unsend',
            'data-focus': 'unsend',
            'aria-describedby': textId,
            onclick: () => {
              confirmingUnsend.add(id);
              unsendErrors.delete(id);
              focusAfterRender = { message: id, control: 'unsend-confirm' };
              render();
            },
          }, 'Unsend')
        : null;
    const panel: HTMLElement[] = [];
    const draft = editing.get(id);
    if (draft !== undefined) {
      const current = shownText(rule).text;
      const area = h('textarea', { rows: 3, class: 'edit-text', 'data-focus': 'edit-text', 'aria-label': 'New text of the reply', id: `edit-${id}` });
      area.value = draft;
      const problem = h('div', {});
      const saveEdit = h('button', { type: 'submit', 'data-focus': 'edit-save' }, 'Save edit');
      const form = h(
        'form',
        { class: 'edit-form', 'aria-label': 'Edit the reply' },
        area,
        h('div', { class: 'row' }, h('span', { class: 'muted' }, `until ${formatTime(windowEndsAt(rule, lifecycle, 'edit'))}`), saveEdit, h('button', { type: 'button', class: 'secondary', onclick: () => { editing.delete(id); focusAfterRender = { message: id, control: 'edit' }; render(); } }, 'Discard')),
        problem,
      );
      area.addEventListener('input', () => editing.set(id, area.value));
      area.addEventListener('keydown', (event) => {
        if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
          event.preventDefault();
          form.requestSubmit();
        } else if (event.key === 'Escape') {
          editing.delete(id);
          focusAfterRender = { message: id, control: 'edit' };
          render();
        }
      });
      form.addEventListener('submit', (event) => {
        event.preventDefault();
        const why = editProblem(area.value, current);
        if (why !== undefined) {
          replace(problem, notice('error', why));
          return;
        }
        const value = area.value;
        saveEdit.disabled = true;
        editing.delete(id);
        editErrors.delete(id);
        focusAfterRender = { message: id };
        announce(`Edit requested for the reply “${current.slice(0, 40)}”.`);
        requestEdit(session, conversationId, id, value).catch((err: unknown) => {
          editing.set(id, value);
          editErrors.set(id, describeError(err, `a member may edit only a sent operator reply of an integration that allows edits, within its window, with 1 to ${REPLY_MAX_CODE_POINTS} characters, and not once it was unsent`));
          focusAfterRender = { message: id, control: 'edit-text' };
          render();
        });
        render();
      });
      panel.push(form);
    }
    if (confirmingUnsend.has(id)) {
      panel.push(
        h(
          'div',
          { class: 'unsend-confirm', role: 'group', 'aria-label': 'Unsend the reply' },
          h('p', {}, 'Take this reply back from the customer’s channel? They may have read it already.'),
          h('button', {
            type: 'button',
            class: 'danger',
            'data-focus': 'unsend-confirm',
            onclick: (event: Event) => {
              (event.currentTarget as HTMLButtonElement).disabled = true;
              confirmingUnsend.delete(id);
              unsendErrors.delete(id);
              focusAfterRender = { message: id };
              announce(`Unsend requested for the reply “${m.text.slice(0, 40)}”.`);
              requestUnsend(session, conversationId, id).catch((err: unknown) => {
                unsendErrors.set(id, describeError(err, 'a member may unsend only a sent operator reply of an integration that allows unsends, within its window, once'));
                focusAfterRender = { message: id, control: 'unsend' };
                render();
              });
            },
          }, 'Unsend now'),
          ' ',
          h('button', { type: 'button', class: 'secondary', onclick: () => { confirmingUnsend.delete(id); focusAfterRender = { message: id, control: 'unsend' }; render(); } }, 'Keep it'),
        ),
      );
    }
    const editError = editErrors.get(id);
    if (editError) panel.push(notice('error', editError));
    const unsendError = unsendErrors.get(id);
    if (unsendError) panel.push(notice('error', unsendError));
    return { buttons: [editButton, unsendButton], panel: panel.length === 0 ? null : h('div', { class: 'lifecycle-panel' }, ...panel) };
  }

  /** The reply's text as the customer sees it now, with "edited", "unsent" and the request states. */
  function replyBody(m: OutboundMessage, textId: string): Child[] {
    const rule = lifecycleReply(m);
    const { text, edited } = shownText(rule);
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

  function reply(m: OutboundMessage): HTMLElement {
    const { id, delivery } = m;
    const status: DeliveryStatus | 'pending' = delivery?.status ?? 'pending';
    const resendPending = isResendPending(delivery?.status, m.resendRequestedAtMs, delivery?.updatedAtMs);
    const errorBox = h('div', {});
    const resendError = resendErrors.get(id);
    if (resendError) replace(errorBox, notice('error', resendError));
    const mine = m.authorUid === user.uid;
    // Recall before send: pending while asked here or by a newer request, and not answered yet.
    const deliveryId = delivery?.deliveryId;
    const cancelAnswer = delivery?.cancel;
    const cancelPending = isCancelPending({
      deliveryId,
      answered: cancelAnswer !== undefined,
      requestedHere: deliveryId !== undefined && cancelRequested.has(deliveryId),
      requestedAtMs: m.cancelRequestedAtMs,
      updatedAtMs: delivery?.updatedAtMs,
    });
    const textId = `text-${id}`;
    const cancelError = cancelErrors.get(id);
    if (cancelError) append(errorBox, notice('error', cancelError));
    const cancelButton =
      deliveryId !== undefined && canCancel(delivery?.status) && cancelAnswer === undefined && !cancelPending
        ? h('button', {
            type: 'button',
            class: 'secondary cancel',
            'data-focus': 'cancel',
            // The accessible name is the visible one; the reply's text tells the buttons apart.
            'aria-describedby': textId,
            onclick: (event: Event) => {
              const button = event.currentTarget as HTMLButtonElement;
              button.disabled = true;
              cancelErrors.delete(id);
              cancelRequested.add(deliveryId);
              focusAfterRender = { message: id };
              announce(`Cancel requested for the reply “${m.text.slice(0, 40)}”.`);
              requestCancel(session, conversationId, id).catch((err: unknown) => {
                // The refused write was rolled back (and may have re-rendered already): render again
                // with the reason, the button back and focused.
                cancelRequested.delete(deliveryId);
                cancelErrors.set(id, describeError(err, 'a member may cancel only an operator reply the service has already queued, and write nothing else'));
                focusAfterRender = { message: id, control: 'cancel' };
                render();
              });
            },
          }, 'Cancel send')
        : null;
    const resendButton =
      canResend(delivery?.status) && !resendPending
        ? h('button', {
            type: 'button',
            class: 'secondary resend',
            'data-focus': 'resend',
            onclick: (event: Event) => {
              const button = event.currentTarget as HTMLButtonElement;
              button.disabled = true;
              resendErrors.delete(id);
              requestResend(session, conversationId, id).catch((err: unknown) => {
                resendErrors.set(id, describeError(err, 'a resend may be requested only once per failed or unknown delivery'));
                focusAfterRender = { message: id, control: 'resend' };
                render();
              });
            },
          }, 'Resend')
        : null;
    const controls = lifecycleControls(m, now());
    return h(
      'li',
      {
        class: 'message outbound',
        'data-message': id,
        'data-status': status,
        'data-cancel': cancelAnswer ?? (cancelPending ? 'requested' : undefined),
        'data-edited': m.edits.some((e) => e.status === 'sent') ? 'true' : undefined,
        'data-unsent': m.unsentAtMs === undefined ? undefined : 'true',
        tabindex: -1,
      },
      h('div', { class: 'who' }, mine ? 'You' : 'Operator', ' · ', h('time', {}, formatTime(m.createdAtMs))),
      ...replyBody(m, textId),
      replyFiles(m.attachments, delivery?.parts),
      reactionChips(m.reactions),
      h(
        'div',
        { class: 'delivery' },
        h('span', { class: `badge status status-${status}` }, statusLabel(status)),
        resendPending ? h('span', { class: 'muted' }, ' resend requested…') : null,
        cancelPending ? h('span', { class: 'muted cancel-pending' }, 'cancel requested…') : null,
        cancelAnswer ? h('span', { class: `cancel-outcome cancel-${cancelAnswer}` }, cancelOutcomeLabel(cancelAnswer)) : null,
        ...deliveryDetails(delivery),
        delivery?.receipt?.status ? h('span', { class: 'receipt' }, `receipt: ${delivery.receipt.status}`, delivery.receipt.code ? ` (${delivery.receipt.code})` : '', ` ${formatTime(delivery.receipt.atMs)}`) : null,
        cancelButton,
        resendButton,
        ...controls.buttons,
      ),
      controls.panel,
      attemptList(delivery?.attempts),
      delivery?.previous
        ? h(
            'details',
            { class: 'previous' },
            h('summary', {}, `Before the resend: ${delivery.previous.status ?? '?'}`),
            h('div', {}, ...deliveryDetails(delivery.previous)),
            attemptList(delivery.previous.attempts),
          )
        : null,
      errorBox,
    );
  }

  /** A reply's files inline (thumbnails, links) and, once the connector reported them, each part's outcome. */
  function replyFiles(files: Partial<UploadedAttachment>[], parts: PartStatus[] | undefined): Child {
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
        const figure = mediaElement(media, { kind: 'attachment', conversationId, attachmentId }, { name: String(f.name ?? attachmentId), ...(f.contentType === undefined ? {} : { contentType: f.contentType }), ...(f.size === undefined ? {} : { size: f.size }) });
        const badge = partBadge(partOf(attachmentId));
        if (badge) figure.append(badge);
        figure.dataset.part = attachmentId;
        return figure;
      }),
    );
  }

  function inbound(m: InboundMessage): HTMLElement {
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
                mediaElement(media, { kind: 'image', conversationId, messageId: id, index }, { name: `Image: ${img.contentType ?? 'image'} ${img.width ?? '?'}×${img.height ?? '?'}, ${formatBytes(img.bytes ?? 0)}`, ...(img.contentType === undefined ? {} : { contentType: img.contentType }) }),
                h('code', { class: 'wrap', title: img.path ?? '' }, ` ${(img.sha256 ?? '').slice(0, 12)}`),
              ),
            ),
          )
        : null,
    );
  }

  // The conversation's integration says whether replies may carry files, and which (its
  // `replies.attachments`); followed live, so an admin's change shows without a reload.
  let watchedIntegration: string | undefined;
  let unsubscribeIntegration: (() => void) | undefined;
  function watchCapability(integrationId: string | undefined): void {
    if (integrationId === undefined || integrationId === '' || integrationId === watchedIntegration) return;
    watchedIntegration = integrationId;
    unsubscribeIntegration?.();
    unsubscribeIntegration = subscribeReplyCapability(
      session,
      integrationId,
      (capability, lifecycleCapability) => {
        files.setCapability(capability);
        updateCounter();
        lifecycle = lifecycleCapability;
        lifecycleLine.textContent = lifecycleCapability === undefined ? '' : lifecycleText(lifecycleCapability);
        // Before the first messages there is nothing to decide (and rendering would show "No messages yet.").
        if (!firstSnapshot) render();
      },
      () => {
        files.setCapability(undefined);
        lifecycle = undefined;
        if (!firstSnapshot) render();
      },
    );
  }

  // The customer typing (the service's `typing/{conversationId}`, written on their channel's typing
  // events): shown for 8 s after the latest one (lifecycle.ts typingShown), by the ticker below.
  let typing: Typing | undefined;
  const typingLine = h('p', { class: 'typing muted', id: 'typing', 'aria-live': 'off' });
  function renderTyping(): void {
    const shown = typing !== undefined && typingShown(typing.atMs, now());
    typingLine.hidden = !shown;
    typingLine.textContent = shown ? `${typing?.displayName ?? typing?.senderExternalId ?? 'The customer'} is typing…` : '';
  }
  renderTyping();
  const unsubscribeTyping = subscribeTyping(
    session,
    conversationId,
    (value) => {
      typing = value;
      renderTyping();
    },
    // Typing is a hint: a refused read leaves the indicator off rather than an error on the thread.
    () => {
      typing = undefined;
      renderTyping();
    },
  );

  /**
   * The time rules change without a snapshot (a window passes, typing goes quiet): once a second
   * the view compares what they decide now with what it shows, and re-renders when that changed.
   */
  let shownRules = '';
  const rulesNow = (): string => {
    const at = now();
    return lastMessages
      .map((m) => (m.direction === 'outbound' ? `${canRequest(lifecycleReply(m), lifecycle, 'edit', at) ? 'e' : '-'}${canRequest(lifecycleReply(m), lifecycle, 'unsend', at) ? 'u' : '-'}` : ''))
      .join('');
  };
  const ticker = setInterval(() => {
    renderTyping();
    if (!firstSnapshot && rulesNow() !== shownRules) render();
  }, 1000);

  const unsubscribeConversation = subscribeConversation(
    session,
    conversationId,
    (header) => {
      if (header === undefined) {
        replace(subtitle, 'This conversation does not exist.');
        return;
      }
      title.textContent = header.externalConversationId;
      watchCapability(header.integrationId);
      const externalId = header.customerExternalId;
      const integrationId = header.integrationId ?? '?';
      const line = (person: string) => `Customer ${person} · integration ${integrationId} · last message ${formatTime(header.lastMessageAtMs)}`;
      replace(subtitle, line(externalId ?? NO_CUSTOMER_YET));
      if (externalId !== undefined) {
        void customers.displayName(integrationId, externalId).then((name) => {
          if (name !== undefined) replace(subtitle, line(personLabel(externalId, name)));
        });
      }
    },
    (err) => replace(subtitle, notice('error', describeError(err, 'only members of the workspace may read its conversations'))),
  );

  /** The latest snapshot's messages: a refused request re-renders them with its error. */
  let lastMessages: ThreadMessage[] = [];
  function render(): void {
    shownRules = rulesNow();
    const items = lastMessages.map((m) => {
      if (m.direction === 'outbound') {
        const status = m.delivery?.status ?? 'pending';
        const cancel = m.delivery?.cancel ?? '';
        const quoted = `Reply “${m.text.slice(0, 40)}”`;
        // The outcome of a cancel says more than the status it brings (or keeps): announce that.
        if (!firstSnapshot && cancel !== '' && lastCancel.get(m.id) !== cancel) announce(`${quoted}: ${cancelOutcomeLabel(cancel)}`);
        else if (!firstSnapshot && lastStatus.get(m.id) !== status) announce(`${quoted}: ${statusLabel(status)}`);
        lastStatus.set(m.id, status);
        lastCancel.set(m.id, cancel);
        // An edit's or unsend's own progress, which the reply's status does not show.
        const lifecycle = lifecycleChanges(firstSnapshot ? undefined : lastLifecycle.get(m.id), m);
        if (lifecycle.changed.length > 0) announce(lifecycle.changed.map(({ kind, entry }) => `${quoted}, ${kind}: ${requestStatusLabel(entry)}`).join('; '));
        lastLifecycle.set(m.id, lifecycle.marks);
        return reply(m);
      }
      return inbound(m);
    });
    firstSnapshot = false;
    replace(state, items.length === 0 ? notice('empty', 'No messages yet.') : null);
    const active = document.activeElement;
    const focusedLi = active instanceof HTMLElement && messages.contains(active) ? active.closest<HTMLElement>('li[data-message]') : null;
    const focused = focusedLi?.dataset.message === undefined ? undefined : { message: focusedLi.dataset.message, control: active instanceof HTMLElement ? active.dataset.focus : undefined };
    const atBottom = messages.scrollHeight - messages.scrollTop - messages.clientHeight < 40;
    // Keep open <details> open across re-renders.
    const open = new Set([...messages.querySelectorAll('li[data-message] details[open]')].map((e) => `${e.closest('li')?.getAttribute('data-message')}:${e.className}`));
    replace(messages, ...items);
    for (const e of messages.querySelectorAll('li[data-message] details')) {
      if (open.has(`${e.closest('li')?.getAttribute('data-message')}:${e.className}`)) e.setAttribute('open', '');
    }
    if (atBottom) messages.scrollTop = messages.scrollHeight;
    // Re-rendering replaces the elements: keep keyboard focus where it was (the same control of
    // the same reply, else the reply itself).
    const target = focusAfterRender ?? focused;
    if (target !== undefined) {
      const li = [...messages.querySelectorAll<HTMLElement>('li[data-message]')].find((e) => e.dataset.message === target.message);
      const control = target.control === undefined ? null : li?.querySelector<HTMLElement>(`[data-focus="${target.control}"]`);
      (control ?? li)?.focus({ preventScroll: true });
      focusAfterRender = undefined;
    }
  }

  // Paging: the latest `shown` messages, live; "Load older" widens the window by THREAD_LIMIT and
  // is offered while the window is full (there may be more).
  let shown = THREAD_LIMIT;
  const older = h('button', { type: 'button', class: 'secondary load-older', id: 'load-older', hidden: true }, 'Load older messages');
  let unsubscribeMessages = (): void => undefined;
  function followMessages(): void {
    unsubscribeMessages();
    unsubscribeMessages = subscribeMessages(
      session,
      conversationId,
      shown,
      (messages) => {
        lastMessages = messages;
        older.hidden = messages.length < shown;
        older.disabled = false;
        render();
      },
      (err) => replace(state, notice('error', describeError(err, 'only members of the workspace may read its messages'))),
    );
  }
  older.addEventListener('click', () => {
    older.disabled = true;
    shown += THREAD_LIMIT;
    const first = lastMessages[0]?.id;
    followMessages();
    // Keep the reader where they were: on the message that was the oldest shown.
    requestAnimationFrame(() => messages.querySelector<HTMLElement>(`li[data-message="${CSS.escape(first ?? '')}"]`)?.scrollIntoView({ block: 'start' }));
  });
  followMessages();

  const el = h(
    'div',
    { class: 'thread' },
    h('a', { href: '#/conversations', class: 'back' }, '← All conversations'),
    title,
    subtitle,
    lifecycleLine,
    state,
    older,
    messages,
    typingLine,
    form,
  );
  return {
    el,
    destroy() {
      unsubscribeConversation();
      unsubscribeMessages();
      unsubscribeIntegration?.();
      unsubscribeTyping();
      clearInterval(ticker);
      files.clear();
      media.revokeAll();
    },
  };
}
