/**
 * The operator's and admin's side of the test service, as calls: integrations and their
 * capabilities, replies (with files), edits and unsends of a sent reply (checked by the service's
 * lifecycle rule), recall before the send, resend, and a customer's erasure.
 */
import { randomBytes } from 'node:crypto';
import {
  ATTACHMENT_CONTENT_TYPES,
  ATTACHMENT_LIMITS,
  byLifecycleKind,
  codePointLength,
  isTargetOnlyLifecycleKind,
  LIFECYCLE_KINDS,
  parseLifecycleCapability,
  REPLY_MAX_CODE_POINTS,
  type AttachmentContentType,
  type LifecycleKind,
} from '../internal/contract.generated.js';
import { lifecycleTarget, lifecycleVerdict } from '../internal/rules/lifecycle.js';
import { templateReplyVerdict } from '../internal/rules/templates.js';
import { isWindowClosed } from '../internal/rules/window.js';
import type { AttachmentRef } from '../internal/rules/record.js';
import { decideCancel } from '../internal/rules/state-machine.js';
import { eraseCustomer } from './erasures.js';
import { followMerged, startConversation } from './starts.js';
import { digestId, randomId, sha256Hex } from './ids.js';
import { appendDelivery, sweep } from './outbox.js';
import { replyDeliveries, unsentAtOf } from './replies.js';
import { decideOn, deliveryOrThrow, extrasOf, notifyWaiters, type Conversation, type Integration, type ServiceState } from './state.js';
import type { CreatedIntegration, LifecycleRefusal, ReplyCreated, ReplyInput, TargetOnlyRequests, TestService } from './types.js';

/** What each refusal of a request means, for the test service's error message (KIND: the request's kind). */
const LIFECYCLE_REFUSALS: Readonly<Record<LifecycleRefusal, string>> = {
  lifecycle_disabled: 'the integration has no replies.lifecycle.KIND (setCapabilities({ lifecycle: { KIND: { windowSeconds } } }))',
  reply_not_sent: 'only a sent reply is edited or unsent',
  reply_unsent: 'the reply was unsent (or an unsend of it is on its way)',
  edit_window_passed: "the channel's window after the send has passed",
  invalid_edit: `the reply has no text to edit, or the new text is not 1 to ${REPLY_MAX_CODE_POINTS} characters`,
  superseded: 'a later request of the same kind was already taken',
};

type OperatorCalls = Pick<TestService, 'createIntegration' | 'setCapabilities' | 'reply' | 'startConversation' | 'edit' | keyof TargetOnlyRequests | 'cancel' | 'resend' | 'erase'>;

/** One call per kind without text (`unsend(messageId, options)`, ...): the same request as `edit`, without the text. */
function targetOnlyRequests(state: ServiceState): TargetOnlyRequests {
  const calls = LIFECYCLE_KINDS.filter(isTargetOnlyLifecycleKind).map((kind) => [kind, (messageId: string, options: { uid?: string } = {}) => requestLifecycle(state, kind, messageId, '', options.uid ?? 'operator')] as const);
  return Object.fromEntries(calls) as TargetOnlyRequests;
}

export function operatorCalls(state: ServiceState): OperatorCalls {
  return {
    createIntegration(options = {}) {
      const { workspaceId = randomId('w_'), active = true, ...capabilities } = options;
      const integrationId = randomId('i_');
      const key = `sdk_test_${randomBytes(32).toString('base64url')}`;
      const integration: Integration = { integrationId, workspaceId, keyHash: sha256Hex(Buffer.from(key)), capabilities, active, bucket: undefined };
      state.integrations.set(integrationId, integration);
      state.integrationsByKeyHash.set(integration.keyHash, integration);
      const created: CreatedIntegration = { integrationId, workspaceId, key };
      return Promise.resolve(created);
    },

    setCapabilities(integrationId, capabilities) {
      const integration = state.integrations.get(integrationId);
      if (integration === undefined) throw new Error(`test service: no integration ${integrationId}`);
      integration.capabilities = { ...integration.capabilities, ...capabilities };
    },

    reply: (input) => createReply(state, input),
    startConversation: (input) => startConversation(state, input, (conversationId, text) => createReply(state, { conversationId, text })),
    edit: (messageId, text, options = {}) => requestLifecycle(state, 'edit', messageId, text, options.uid ?? 'operator'),
    ...targetOnlyRequests(state),

    cancel(deliveryId) {
      const d = deliveryOrThrow(state, deliveryId);
      const at = state.now();
      // The console's request time identifies the request: the same request again answers as before (rules `decideCancel`).
      const answer = decideOn(state, d.deliveryId, at, (current) => decideCancel(current, { now: at, requestedAt: at })).status;
      if (answer === 'cancelled') extrasOf(state, deliveryId).cancelled = true;
      notifyWaiters(state);
      return answer;
    },

    resend: (deliveryId) => resend(state, deliveryId),
    erase: (integrationId, externalCustomerId) => eraseCustomer(state, integrationId, externalCustomerId),
  };
}

/** A new reply of the operator (the console's write), with its files stored for the download. */
function createReply(state: ServiceState, input: ReplyInput): ReplyCreated {
  // A started conversation that joined its thread: the reply goes to the thread's conversation (`mergedInto`).
  const conversation = followMerged(state, input.conversationId);
  if (conversation === undefined) throw new Error(`test service: no conversation ${input.conversationId} (start one with POST /v1/messages)`);
  if (input.template !== undefined) return createTemplateReply(state, conversation, input);
  const channel = state.integrations.get(conversation.integrationId)?.channel;
  if (isWindowClosed(channel?.window?.seconds ?? null, { closesAt: conversation.windowClosesAt, lastCustomerSentAt: conversation.lastCustomerSentAt }, state.now())) {
    throw Object.assign(new Error("test service: the conversation's reply window has closed: reply with a template ({ template: { name, language, params } })"), { code: 'window_closed' });
  }
  const text = input.text ?? '';
  const replyFiles = input.files ?? [];
  if (text === '' && replyFiles.length === 0) throw new Error('test service: a reply needs text or files');
  if (codePointLength(text) > REPLY_MAX_CODE_POINTS) throw new Error(`test service: a reply's text is at most ${REPLY_MAX_CODE_POINTS} characters`);
  const integration = state.integrations.get(conversation.integrationId);
  if (replyFiles.length > 0 && integration?.capabilities.attachments !== true) {
    throw new Error('test service: this integration takes text-only replies (createIntegration({ attachments: true }) or setCapabilities)');
  }
  if (replyFiles.length > ATTACHMENT_LIMITS.maxCount) throw new Error(`test service: at most ${ATTACHMENT_LIMITS.maxCount} files per reply`);
  const attachments = replyFiles.map((file): AttachmentRef => {
    if (!(ATTACHMENT_CONTENT_TYPES as readonly string[]).includes(file.contentType)) throw new Error(`test service: ${file.contentType} is not an attachment content type (${ATTACHMENT_CONTENT_TYPES.join(', ')})`);
    if (file.data.length === 0 || file.data.length > ATTACHMENT_LIMITS.maxBytesPerFile) throw new Error(`test service: a file has 1 to ${ATTACHMENT_LIMITS.maxBytesPerFile} bytes`);
    const attachmentId = randomId('a_');
    state.files.set(attachmentId, Buffer.from(file.data));
    return { attachmentId, name: file.fileName, contentType: file.contentType as AttachmentContentType, size: file.data.length, sha256: sha256Hex(file.data) };
  });
  const messageId = randomId('m_');
  const deliveryId = digestId('d_', [conversation.conversationId, messageId]);
  state.replies.set(messageId, { messageId, integrationId: conversation.integrationId, conversationId: conversation.conversationId, text, requests: byLifecycleKind(() => []), reactions: [] });
  appendDelivery(state, { conversation, messageId, deliveryId, text, ...(attachments.length > 0 ? { attachments } : {}), reason: 'created' });
  return { messageId, deliveryId };
}

/**
 * A template reply (the console's write, checked as the rules and the service check it: the
 * shared ../internal/rules/templates.ts): a delivery whose text is the filled preview and whose
 * claim carries the template. Allowed whether the window is open or not.
 */
function createTemplateReply(state: ServiceState, conversation: Conversation, input: ReplyInput): ReplyCreated {
  if (input.text !== undefined || (input.files ?? []).length > 0) throw Object.assign(new Error('test service: a template reply has no text and no files'), { code: 'template_invalid' });
  const templates = state.integrations.get(conversation.integrationId)?.channel?.templates ?? [];
  const verdict = templateReplyVerdict(input.template, templates);
  if (!verdict.accepted) throw Object.assign(new Error(`test service: template reply refused (template_invalid): ${verdict.problem}`), { code: 'template_invalid' });
  const messageId = randomId('m_');
  const deliveryId = digestId('d_', [conversation.conversationId, messageId]);
  state.replies.set(messageId, { messageId, integrationId: conversation.integrationId, conversationId: conversation.conversationId, text: verdict.text, requests: byLifecycleKind(() => []), reactions: [] });
  appendDelivery(state, { conversation, messageId, deliveryId, text: verdict.text, template: verdict.template, reason: 'created' });
  return { messageId, deliveryId };
}

/**
 * The operator's edit / unsend request (the console's write and the service's trigger): checked
 * as the rules check it, then a delivery of the kind at the end of the conversation's queue, with
 * the reply's sent delivery and its provider ids as the target.
 */
function requestLifecycle(state: ServiceState, kind: LifecycleKind, messageId: string, text: string, uid: string): ReplyCreated {
  sweep(state);
  const reply = state.replies.get(messageId);
  if (reply === undefined) throw new Error(`test service: no operator reply ${messageId} (reply() returns its messageId)`);
  const conversation = state.conversations.get(reply.conversationId);
  if (conversation === undefined) throw new Error('test service: the conversation was erased');
  const at = state.now();
  const capability = parseLifecycleCapability(state.integrations.get(reply.integrationId)?.capabilities.lifecycle);
  // The reply's delivery as the console's mirror shows it: its latest (a resend's).
  const sent = replyDeliveries(state, messageId).at(-1);
  const history = reply.requests[kind];
  const taken = history.filter((entry) => entry.deliveryId !== null).map((entry) => entry.requestedAt);
  // The service's own check (rules/lifecycle.ts), on the facts as this store holds them.
  const verdict = lifecycleVerdict(
    {
      kind,
      window: capability[kind],
      replyStatus: sent?.status ?? null,
      sentAt: sent?.sentAt ?? null,
      replyText: reply.text,
      unsent: unsentAtOf(state, reply) !== undefined,
      // An unsend queued or on its way (one that failed or ended unknown stops nothing).
      unsendTaken: reply.requests.unsend.some((u) => {
        const status = u.deliveryId === null ? undefined : state.deliveries.get(u.deliveryId)?.status;
        return status === 'queued' || status === 'leased' || status === 'sending' || status === 'sent';
      }),
      latestTaken: taken.length === 0 ? null : Math.max(...taken),
    },
    { requestedAt: at, ...(kind === 'edit' ? { text } : {}) },
  );
  if (!verdict.accepted) {
    throw Object.assign(new Error(`test service: ${kind} refused (${verdict.code}): ${LIFECYCLE_REFUSALS[verdict.code].replace('KIND', kind)}`), { code: verdict.code });
  }
  if (sent === undefined) throw new Error('test service: the reply has no delivery');
  const target = lifecycleTarget(sent.deliveryId, sent.providerMessageIds, sent.parts ?? []);
  // Deterministic from the request, as the service's id (a redelivered trigger is a no-op); the
  // request's position tells two requests of one millisecond apart.
  const deliveryId = digestId('d_', [reply.conversationId, messageId, kind, String(at), uid, String(history.length)]);
  history.push({ ...(kind === 'edit' ? { text } : {}), requestedAt: at, uid, deliveryId });
  appendDelivery(state, { conversation, messageId, deliveryId, text: verdict.text, lifecycle: { kind, target }, reason: 'created' });
  return { messageId, deliveryId };
}

/** The console's resend of a failed / unknown reply: a new delivery of what is not known to be sent. */
function resend(state: ServiceState, deliveryId: string): ReplyCreated {
  sweep(state);
  const d = deliveryOrThrow(state, deliveryId);
  if (d.status !== 'failed' && d.status !== 'unknown') throw new Error(`test service: only a failed or unknown delivery is resent (this one is ${d.status})`);
  if (d.kind !== undefined) throw new Error(`test service: an ${d.kind} delivery is not resent (request the ${d.kind} again)`);
  const conversation = state.conversations.get(d.conversationId);
  if (conversation === undefined) throw new Error('test service: the conversation was erased');
  // A resend carries only the parts not known to be sent (docs/decisions.md#operator-resend).
  const sent = new Set((d.parts ?? []).filter((p) => p.status === 'sent').map((p) => p.part));
  const attachments = (d.attachments ?? []).filter((a) => !sent.has(a.attachmentId));
  const textSent = d.textSent === true || sent.has('text');
  // A free-form resend is checked against the window again, as the service's resend is; a template reply is not windowed.
  const channel = state.integrations.get(conversation.integrationId)?.channel;
  if (d.template === undefined && isWindowClosed(channel?.window?.seconds ?? null, { closesAt: conversation.windowClosesAt, lastCustomerSentAt: conversation.lastCustomerSentAt }, state.now())) {
    throw Object.assign(new Error("test service: the conversation's reply window has closed: the resend would fail window_closed"), { code: 'window_closed' });
  }
  const next = appendDelivery(state, {
    conversation,
    messageId: d.messageId,
    deliveryId: digestId('d_', [d.conversationId, d.messageId, 'resend', d.deliveryId]),
    text: textSent ? '' : d.text,
    ...(attachments.length > 0 ? { attachments } : {}),
    ...(d.template === undefined ? {} : { template: d.template }),
    ...(textSent ? { textSent } : {}),
    // A failed start is resent as a start (docs/contract.md#conversations-the-desk-starts): the claim names the address again.
    ...(d.start === undefined ? {} : { start: { to: d.start.to } }),
    reason: 'resend',
  });
  return { messageId: next.messageId, deliveryId: next.deliveryId };
}
