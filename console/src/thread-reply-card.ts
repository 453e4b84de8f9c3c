/**
 * An operator reply's card: who wrote it and when, its text, files and reactions (thread-cards.ts),
 * the live `delivery` mirror with Cancel send (recall before the connector starts) and Resend (on
 * failed/unknown), each with its refusal's reason kept across re-renders, and the after-the-send
 * controls (thread-lifecycle-forms.ts).
 */
import { announce, append, h, notice, replace, type Child } from './dom';
import { describeError } from './errors';
import { cancelOutcomeLabel, cancelPending as isCancelPending, canCancel, canResend, formatTime, resendPending as isResendPending, statusLabel, type DeliveryStatus } from './format';
import { attemptList, deliveryDetails, previousDelivery, reactionChips, receiptLine, replyBody, replyFiles, replyTextId } from './thread-cards';
import type { ThreadContext } from './thread-context';
import { requestCancel, requestResend, type OutboundMessage } from './thread-data';
import { lifecycleForms } from './thread-lifecycle-forms';
import { addressKindLabel } from './start-format';
import { templateLabel } from './template-format';
import { failureText } from './window-format';

/** A reply's Cancel send and Resend, whether each is pending, and the latest refusals. */
interface DeliveryControls {
  cancel: Child;
  resend: Child;
  cancelPending: boolean;
  resendPending: boolean;
  errors: HTMLElement;
}

function deliveryControls(ctx: ThreadContext): (m: OutboundMessage) => DeliveryControls {
  const { session, conversationId } = ctx;
  const resendErrors = new Map<string, string>();
  const cancelErrors = new Map<string, string>();
  /** Deliveries this page asked to cancel (until the service answers on the mirror). */
  const cancelRequested = new Set<string>();
  return (m) => {
    const { id, delivery } = m;
    const resendPending = isResendPending(delivery?.status, m.resendRequestedAtMs, delivery?.updatedAtMs);
    const errors = h('div', {});
    const resendError = resendErrors.get(id);
    if (resendError) replace(errors, notice('error', resendError));
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
    const cancelError = cancelErrors.get(id);
    if (cancelError) append(errors, notice('error', cancelError));
    const cancel =
      // Not on the message that starts a conversation: the rules refuse its cancel (its conversation would be left empty).
      deliveryId !== undefined && m.start === undefined && canCancel(delivery?.status) && cancelAnswer === undefined && !cancelPending
        ? h('button', {
            type: 'button',
            class: 'secondary cancel',
            'data-focus': 'cancel',
            // The accessible name is the visible one; the reply's text tells the buttons apart.
            'aria-describedby': replyTextId(id),
            onclick: (event: Event) => {
              const button = event.currentTarget as HTMLButtonElement;
              button.disabled = true;
              cancelErrors.delete(id);
              cancelRequested.add(deliveryId);
              ctx.focusAfterRender({ message: id });
              announce(`Cancel requested for the reply “${m.text.slice(0, 40)}”.`);
              requestCancel(session, conversationId, id).catch((err: unknown) => {
                // The refused write was rolled back (and may have re-rendered already): render again
                // with the reason, the button back and focused.
                cancelRequested.delete(deliveryId);
                cancelErrors.set(id, describeError(err, 'a member may cancel only an operator reply the service has already queued, and write nothing else'));
                ctx.render({ message: id, control: 'cancel' });
              });
            },
          }, 'Cancel send')
        : null;
    const resend =
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
                ctx.render({ message: id, control: 'resend' });
              });
            },
          }, 'Resend')
        : null;
    return { cancel, resend, cancelPending, resendPending, errors };
  };
}

/** The cards of a thread's replies; the controls' state (open forms, refusals) lives as long as the thread. */
export function replyCards(ctx: ThreadContext): (m: OutboundMessage) => HTMLElement {
  const deliveryOf = deliveryControls(ctx);
  const lifecycleOf = lifecycleForms(ctx);
  return (m) => {
    const { id, delivery } = m;
    const status: DeliveryStatus | 'pending' = delivery?.status ?? 'pending';
    const mine = m.authorUid === ctx.session.user.uid;
    const cancelAnswer = delivery?.cancel;
    const controls = deliveryOf(m);
    const lifecycle = lifecycleOf(m, ctx.now());
    const failure = status === 'failed' ? failureText(delivery?.errorCode) : undefined;
    return h(
      'li',
      {
        class: 'message outbound',
        'data-message': id,
        'data-status': status,
        'data-cancel': cancelAnswer ?? (controls.cancelPending ? 'requested' : undefined),
        'data-edited': m.edits.some((e) => e.status === 'sent') ? 'true' : undefined,
        'data-unsent': m.unsentAtMs === undefined ? undefined : 'true',
        tabindex: -1,
      },
      h('div', { class: 'who' }, mine ? 'You' : 'Operator', ' · ', h('time', {}, formatTime(m.createdAtMs))),
      m.start === undefined ? null : h('p', { class: 'start-line muted' }, m.start.to === undefined ? 'Started the conversation' : `Started the conversation to ${addressKindLabel(m.start.to.kind)} ${m.start.to.value}`),
      m.template === undefined ? null : h('p', { class: 'template-line muted' }, 'Template ', h('code', {}, templateLabel(m.template))),
      ...replyBody(m),
      replyFiles(ctx, m.attachments, delivery?.parts),
      reactionChips(m.reactions),
      h(
        'div',
        { class: 'delivery' },
        h('span', { class: `badge status status-${status}` }, statusLabel(status)),
        controls.resendPending ? h('span', { class: 'muted' }, ' resend requested…') : null,
        controls.cancelPending ? h('span', { class: 'muted cancel-pending' }, 'cancel requested…') : null,
        cancelAnswer ? h('span', { class: `cancel-outcome cancel-${cancelAnswer}` }, cancelOutcomeLabel(cancelAnswer)) : null,
        ...deliveryDetails(delivery),
        receiptLine(delivery),
        controls.cancel,
        controls.resend,
        ...lifecycle.buttons,
      ),
      failure === undefined ? null : h('p', { class: 'failure-reason' }, failure),
      lifecycle.panel,
      attemptList(delivery?.attempts),
      previousDelivery(delivery),
      controls.errors,
    );
  };
}
