/**
 * One conversation: incoming messages and alerts, image metadata (no client access to the image
 * store is granted, docs/data-model.md), the operator replies with their live `delivery` mirror,
 * a compose box, Resend on failed/unknown replies and Cancel send (recall before send) on replies the
 * connector has not started yet.
 */
import {
  addDoc,
  collection,
  doc,
  limitToLast,
  onSnapshot,
  orderBy,
  query,
  serverTimestamp,
  updateDoc,
  type DocumentData,
  type QueryDocumentSnapshot,
  type Timestamp,
} from 'firebase/firestore';
import { announce, append, h, notice, replace, type Child } from './dom';
import { describeError } from './errors';
import { codePointLength, REPLY_MAX_CODE_POINTS } from '../../functions/src/contract';
import { canCancel, cancelOutcomeLabel, canResend, conversationPerson, formatBytes, formatTime, NO_CUSTOMER_YET, replyProblem, statusLabel, type DeliveryStatus } from './format';
import type { View } from './main';
import type { Session } from './session';
import { readCapability, type UploadedAttachment } from './attachments';
import { composeAttachments } from './compose-attachments';
import { MediaCache, mediaElement } from './media';
import { CustomerNames, personLabel } from './customers';

/** Messages shown at first: the latest of the conversation; "Load older" adds as many again. */
const THREAD_LIMIT = 200;

/** Per-part outcome on the mirror (`delivery.parts`): the text, or one attachment by id. */
interface PartStatus {
  part?: string;
  status?: 'sent' | 'failed';
  providerMessageIds?: string[];
  code?: string;
}

const millis = (t: unknown): number | undefined => (t && typeof (t as Timestamp).toMillis === 'function' ? (t as Timestamp).toMillis() : undefined);

interface Attempt {
  at?: Timestamp;
  event?: string;
  code?: string;
}
interface DeliveryMirror {
  deliveryId?: string;
  status?: DeliveryStatus;
  updatedAt?: Timestamp;
  providerMessageIds?: string[];
  error?: { outcome?: string; code?: string };
  receipt?: { status?: string; at?: Timestamp; code?: string };
  attempts?: Attempt[];
  previous?: Omit<DeliveryMirror, 'previous' | 'receipt' | 'cancel'>;
  parts?: PartStatus[];
  /** The service's answer to the latest cancel request on this delivery (docs/decisions.md#recall-before-send-cancel). */
  cancel?: { status?: 'cancelled' | 'too_late'; at?: Timestamp };
  /** The reply's trace id (docs/operations.md#tracing): search the service's logs by it. */
  traceId?: string;
}

function attemptList(attempts: Attempt[] | undefined): Child {
  if (!attempts || attempts.length === 0) return null;
  return h(
    'details',
    { class: 'attempts' },
    h('summary', {}, `Attempt log (${attempts.length})`),
    h('ol', {}, ...attempts.map((a) => h('li', {}, h('time', {}, formatTime(millis(a.at))), ` ${a.event ?? '?'}`, a.code ? h('code', {}, ` ${a.code}`) : null))),
  );
}

function deliveryDetails(delivery: DeliveryMirror): Child[] {
  return [
    delivery.error?.code ? h('span', { class: 'error-code' }, 'code ', h('code', {}, delivery.error.code)) : null,
    delivery.providerMessageIds && delivery.providerMessageIds.length > 0
      ? h('span', { class: 'provider-ids' }, 'provider ids ', h('code', {}, delivery.providerMessageIds.join(', ')))
      : null,
    delivery.traceId ? h('span', { class: 'trace-id', 'data-trace-id': delivery.traceId }, 'trace ', h('code', {}, delivery.traceId)) : null,
  ];
}

export function threadView(session: Session, conversationId: string): View {
  const { services, user } = session;
  const db = services.db;
  const conversationRef = doc(db, 'workspaces', session.workspaceId, 'conversations', conversationId);
  const messagesCol = collection(conversationRef, 'messages');

  const title = h('h2', { id: 'thread-title' }, conversationId);
  const subtitle = h('p', { class: 'muted' });
  const messages = h('ol', { class: 'messages', id: 'messages', 'aria-labelledby': 'thread-title' });
  const state = h('div', {}, notice('loading', 'Loading messages…'));

  // Compose: 1..REPLY_MAX_CODE_POINTS code points, counted as the rules count them.
  const text = h('textarea', { id: 'reply-text', name: 'text', rows: 3, 'aria-describedby': 'reply-counter reply-hint' });
  const counter = h('span', { id: 'reply-counter', class: 'muted' }, `0 / ${REPLY_MAX_CODE_POINTS}`);
  const send = h('button', { type: 'submit', id: 'send-reply', disabled: true }, 'Send reply');
  const composeError = h('div', { id: 'compose-error' });
  const media = new MediaCache(session);
  const customers = new CustomerNames(db, session.workspaceId);
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
    // `attachments` only when there are files: a text reply is exactly the document it always was.
    const replyDoc: Record<string, unknown> = { direction: 'outbound', author: { type: 'operator', uid: user.uid }, text: value, createdAt: serverTimestamp() };
    if (attachments !== undefined && attachments.length > 0) replyDoc.attachments = attachments;
    addDoc(messagesCol, replyDoc).then(
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
  let firstSnapshot = true;
  const resendErrors = new Map<string, string>();
  const cancelErrors = new Map<string, string>();
  /** Deliveries this page asked to cancel (until the service answers on the mirror). */
  const cancelRequested = new Set<string>();
  /** The reply whose Cancel send was just used: keyboard focus stays on it across re-renders. */
  let focusAfterRender: { message: string; control?: string } | undefined;

  function reply(id: string, d: DocumentData): HTMLElement {
    const delivery = d.delivery as DeliveryMirror | undefined;
    const status: DeliveryStatus | 'pending' = delivery?.status ?? 'pending';
    const resend = d.resend as { requestedAt?: Timestamp } | undefined;
    const resendPending = resend !== undefined && canResend(delivery?.status) && millis(resend.requestedAt) !== undefined && (millis(resend.requestedAt) ?? 0) > (millis(delivery?.updatedAt) ?? 0);
    const errorBox = h('div', {});
    const resendError = resendErrors.get(id);
    if (resendError) replace(errorBox, notice('error', resendError));
    const mine = (d.author as { uid?: string } | undefined)?.uid === user.uid;
    // Recall before send. Pending: asked (here, or a request newer than the mirror, e.g. by a
    // colleague) and not answered yet on this delivery. A request older than the current delivery
    // (one made before a resend) does not count.
    const cancelRequest = d.cancel as { requestedAt?: Timestamp } | undefined;
    const deliveryId = delivery?.deliveryId;
    const cancelAnswer = delivery?.cancel?.status;
    const cancelPending =
      deliveryId !== undefined &&
      cancelAnswer === undefined &&
      (cancelRequested.has(deliveryId) || (millis(cancelRequest?.requestedAt) ?? 0) > (millis(delivery?.updatedAt) ?? Number.MAX_SAFE_INTEGER));
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
              announce(`Cancel requested for the reply “${String(d.text ?? '').slice(0, 40)}”.`);
              updateDoc(doc(messagesCol, id), { cancel: { requestedAt: serverTimestamp(), uid: user.uid } }).catch((err: unknown) => {
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
              updateDoc(doc(messagesCol, id), { resend: { requestedAt: serverTimestamp(), uid: user.uid } }).catch((err: unknown) => {
                resendErrors.set(id, describeError(err, 'a resend may be requested only once per failed or unknown delivery'));
                focusAfterRender = { message: id, control: 'resend' };
                render();
              });
            },
          }, 'Resend')
        : null;
    return h(
      'li',
      { class: 'message outbound', 'data-message': id, 'data-status': status, 'data-cancel': cancelAnswer ?? (cancelPending ? 'requested' : undefined), tabindex: -1 },
      h('div', { class: 'who' }, mine ? 'You' : 'Operator', ' · ', h('time', {}, formatTime(millis(d.createdAt)))),
      h('p', { class: 'text', id: textId }, String(d.text ?? '')),
      replyFiles(d.attachments, delivery?.parts),
      h(
        'div',
        { class: 'delivery' },
        h('span', { class: `badge status status-${status}` }, statusLabel(status)),
        resendPending ? h('span', { class: 'muted' }, ' resend requested…') : null,
        cancelPending ? h('span', { class: 'muted cancel-pending' }, 'cancel requested…') : null,
        cancelAnswer ? h('span', { class: `cancel-outcome cancel-${cancelAnswer}` }, cancelOutcomeLabel(cancelAnswer)) : null,
        ...deliveryDetails(delivery ?? {}),
        delivery?.receipt?.status ? h('span', { class: 'receipt' }, `receipt: ${delivery.receipt.status}`, delivery.receipt.code ? ` (${delivery.receipt.code})` : '', ` ${formatTime(millis(delivery.receipt.at))}`) : null,
        cancelButton,
        resendButton,
      ),
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
  function replyFiles(value: unknown, parts: PartStatus[] | undefined): Child {
    const files = Array.isArray(value) ? (value as Partial<UploadedAttachment>[]) : [];
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

  function inbound(id: string, d: DocumentData): HTMLElement {
    const sender = (d.sender ?? {}) as { externalId?: string; displayName?: string | null };
    const alert = d.kind === 'alert';
    const images = Array.isArray(d.images) ? (d.images as Array<{ path?: string; contentType?: string; width?: number; height?: number; bytes?: number; sha256?: string }>) : [];
    return h(
      'li',
      { class: `message inbound${alert ? ' alert' : ''}`, 'data-message': id },
      h('div', { class: 'who' }, alert ? h('span', { class: 'badge badge-alert' }, 'Alert') : null, alert ? ' ' : null, sender.displayName ?? sender.externalId ?? 'customer', ' · ', h('time', {}, formatTime(millis(d.createdAt)))),
      typeof d.text === 'string' ? h('p', { class: 'text' }, d.text) : null,
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
  function watchCapability(integrationId: unknown): void {
    if (typeof integrationId !== 'string' || integrationId === '' || integrationId === watchedIntegration) return;
    watchedIntegration = integrationId;
    unsubscribeIntegration?.();
    unsubscribeIntegration = onSnapshot(
      doc(db, 'workspaces', session.workspaceId, 'integrations', integrationId),
      (snap) => {
        files.setCapability(readCapability((snap.get('replies') as { attachments?: unknown } | undefined)?.attachments));
        updateCounter();
      },
      () => files.setCapability(undefined),
    );
  }

  const unsubscribeConversation = onSnapshot(
    conversationRef,
    (snap) => {
      if (!snap.exists()) {
        replace(subtitle, 'This conversation does not exist.');
        return;
      }
      title.textContent = String(snap.get('externalConversationId') ?? conversationId);
      watchCapability(snap.get('integrationId') as unknown);
      const externalId = conversationPerson({ lastCustomerExternalId: snap.get('lastCustomerExternalId') as unknown });
      const integrationId = String(snap.get('integrationId') ?? '?');
      const line = (person: string) => `Customer ${person} · integration ${integrationId} · last message ${formatTime(millis(snap.get('lastMessageAt', { serverTimestamps: 'estimate' })))}`;
      replace(subtitle, line(externalId ?? NO_CUSTOMER_YET));
      if (externalId !== undefined) {
        void customers.displayName(integrationId, externalId).then((name) => {
          if (name !== undefined) replace(subtitle, line(personLabel(externalId, name)));
        });
      }
    },
    (err) => replace(subtitle, notice('error', describeError(err, 'only members of the workspace may read its conversations'))),
  );

  /** The latest snapshot's documents: a refused request re-renders them with its error. */
  let lastDocs: QueryDocumentSnapshot[] = [];
  function render(): void {
    const items = lastDocs.map((m) => {
      const d = m.data({ serverTimestamps: 'estimate' });
      if (d.direction === 'outbound') {
        const mirror = d.delivery as DeliveryMirror | undefined;
        const status = mirror?.status ?? 'pending';
        const cancel = mirror?.cancel?.status ?? '';
        const quoted = `Reply “${String(d.text ?? '').slice(0, 40)}”`;
        // The outcome of a cancel says more than the status it brings (or keeps): announce that.
        if (!firstSnapshot && cancel !== '' && lastCancel.get(m.id) !== cancel) announce(`${quoted}: ${cancelOutcomeLabel(cancel as 'cancelled' | 'too_late')}`);
        else if (!firstSnapshot && lastStatus.get(m.id) !== status) announce(`${quoted}: ${statusLabel(status)}`);
        lastStatus.set(m.id, status);
        lastCancel.set(m.id, cancel);
        return reply(m.id, d);
      }
      return inbound(m.id, d);
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
  function subscribeMessages(): void {
    unsubscribeMessages();
    unsubscribeMessages = onSnapshot(
      query(messagesCol, orderBy('createdAt', 'asc'), limitToLast(shown)),
      (snap) => {
        lastDocs = snap.docs;
        older.hidden = snap.size < shown;
        older.disabled = false;
        render();
      },
      (err) => replace(state, notice('error', describeError(err, 'only members of the workspace may read its messages'))),
    );
  }
  older.addEventListener('click', () => {
    older.disabled = true;
    shown += THREAD_LIMIT;
    const first = lastDocs[0]?.id;
    subscribeMessages();
    // Keep the reader where they were: on the message that was the oldest shown.
    requestAnimationFrame(() => messages.querySelector<HTMLElement>(`li[data-message="${CSS.escape(first ?? '')}"]`)?.scrollIntoView({ block: 'start' }));
  });
  subscribeMessages();

  const el = h(
    'div',
    { class: 'thread' },
    h('a', { href: '#/conversations', class: 'back' }, '← All conversations'),
    title,
    subtitle,
    state,
    older,
    messages,
    form,
  );
  return {
    el,
    destroy() {
      unsubscribeConversation();
      unsubscribeMessages();
      unsubscribeIntegration?.();
      files.clear();
      media.revokeAll();
    },
  };
}
