/**
 * What an operator reply is to the service. The console writes it at
 * `workspaces/{ws}/conversations/{conversationId}/messages/{messageId}` (firestore.rules,
 * docs/data-model.md); the service turns it into a delivery (./sequencing.ts), makes a new one on
 * the operator's resend (./resend.ts), recalls it on request (./cancel.ts), and shows the console
 * what became of it in the reply's `delivery` field, the mirror. Here: how a reply document is
 * read, why a reply becomes no delivery (its rejection) and the mirror's shape. Pure (the mirror's
 * times are Firestore `Timestamp` values because the console reads them); the mirror has one
 * writer, ./store.ts `writeReplyMirror`.
 */
import { FieldValue, Timestamp } from 'firebase-admin/firestore';
import { ATTACHMENT_LIMITS, codePointLength, REPLY_MAX_CODE_POINTS, TEXT_PART, type AttachmentCapability } from '../contract';
import { shownFileName } from '../contract/file-names';
import { templateReplyVerdict, type ReplyTemplate, type TemplateDeclaration } from '../contract/templates';
import type { AttachmentRef, PartOutcome } from '../rules/record';
import type { AttemptEntry, AttemptEvent, DeliveryRecord, DeliveryStatus, PreviousDelivery, ReceiptStatus } from '../rules/record';

/** Replies are text only, up to this many characters (Unicode code points): the contract's limit. */
export const MAX_REPLY_CHARACTERS = REPLY_MAX_CODE_POINTS;

/**
 * Why a reply becomes no delivery: its integration takes no replies, its text is not a reply's, it
 * has files and its integration takes none, or a file is not one this conversation uploaded or
 * does not fit the capability (docs/contract.md#attachments), a free-form reply comes after the
 * channel's window closed, or a template reply names no declared template or not exactly its
 * params (docs/contract.md#windows).
 */
export type ReplyRejection = 'replies_disabled' | 'invalid_reply' | 'attachments_unsupported' | 'attachment_rejected' | 'window_closed' | 'template_invalid';

/** A console request on a reply (`resend`, `cancel`): its server time and who made it. */
interface ReplyRequest {
  /** Null when absent or not a Timestamp (firestore.rules require the request time). */
  requestedAt: Timestamp | null;
  uid: unknown;
}

/** The `delivery` mirror as stored on a reply, read back: the fields the service acts on, and the map itself. */
export interface StoredMirror {
  /** Absent on a reply refused without a delivery. */
  deliveryId: string | null;
  status: string | null;
  /** `error.code`, when the mirror has one. */
  errorCode: string | null;
  /** Epoch ms of `updatedAt` (0 when absent). */
  updatedAt: number;
  /** The stored map as it is. */
  fields: Record<string, unknown>;
}

/** An operator reply as read from its document. */
export interface OperatorReply {
  messageId: string;
  /** As the console wrote it; `replyVerdict` decides whether it is a reply's text. */
  text: unknown;
  /** A template reply's `template` as written (undefined: a free-form reply); `channelVerdict` checks it. */
  template: unknown;
  /** Null until the service has sequenced the reply (sequencing writes the mirror in the same transaction). */
  mirror: StoredMirror | null;
  resend: ReplyRequest | null;
  cancel: ReplyRequest | null;
}

const isMap = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function requestOf(value: unknown): ReplyRequest | null {
  if (value === undefined) return null;
  const request = isMap(value) ? value : {};
  return { requestedAt: request.requestedAt instanceof Timestamp ? request.requestedAt : null, uid: request.uid };
}

/** Reads a stored `delivery` mirror (any map the service wrote there). */
export function storedMirrorOf(value: unknown): StoredMirror {
  const fields = isMap(value) ? value : {};
  const error = isMap(fields.error) ? fields.error : {};
  return {
    deliveryId: typeof fields.deliveryId === 'string' ? fields.deliveryId : null,
    status: typeof fields.status === 'string' ? fields.status : null,
    errorCode: typeof error.code === 'string' ? error.code : null,
    updatedAt: fields.updatedAt instanceof Timestamp ? fields.updatedAt.toMillis() : 0,
    fields,
  };
}

/**
 * The operator reply a message document holds, or null when it is none: an inbound message, or an
 * outbound one not written by an operator.
 */
export function operatorReplyOf(messageId: string, data: Record<string, unknown> | undefined): OperatorReply | null {
  const author = data?.author as { type?: unknown } | undefined;
  if (data === undefined || data.direction !== 'outbound' || author?.type !== 'operator') return null;
  return {
    messageId,
    text: data.text,
    template: data.template,
    mirror: data.delivery === undefined ? null : storedMirrorOf(data.delivery),
    resend: requestOf(data.resend),
    cancel: requestOf(data.cancel),
  };
}

/** What a reply becomes: a delivery of `text` to the integration's connector, or a rejection. */
export type ReplyVerdict = { accepted: true; text: string; integrationId: string; template?: ReplyTemplate } | { accepted: false; code: ReplyRejection };

/**
 * Whether a reply becomes a delivery. `replies_disabled` when its conversation's integration takes
 * no replies (disabled, no topic, or no integration at all); `invalid_reply` when the text is empty,
 * not text, or longer than MAX_REPLY_CHARACTERS (the console checks the same; this is the rule).
 */
export function replyVerdict(text: unknown, integrationId: unknown, repliesEnabled: boolean, hasAttachments = false): ReplyVerdict {
  if (!repliesEnabled || typeof integrationId !== 'string') return { accepted: false, code: 'replies_disabled' };
  const checked = replyTextVerdict(text, hasAttachments);
  if (checked === null) return { accepted: false, code: 'invalid_reply' };
  return { accepted: true, text: checked, integrationId };
}

/** What the channel says of a reply (docs/contract.md#windows): its declared templates, and whether its window is closed now. */
export interface ChannelFacts {
  templates: readonly TemplateDeclaration[];
  windowClosed: boolean;
}

/**
 * Whether a reply may go out on its channel, as `replyVerdict` plus the channel's word: a template
 * reply (no text, no files) must be one of the declared templates with exactly its params
 * (`template_invalid` otherwise) and goes out with its filled preview as the text; a free-form reply
 * (text, files) is `window_closed` once the window has closed.
 */
export function channelVerdict(reply: { text: unknown; template: unknown; hasAttachments: boolean }, integrationId: unknown, repliesEnabled: boolean, channel: ChannelFacts): ReplyVerdict {
  if (!repliesEnabled || typeof integrationId !== 'string') return { accepted: false, code: 'replies_disabled' };
  if (reply.template !== undefined) {
    const checked = reply.text === undefined && !reply.hasAttachments ? templateReplyVerdict(reply.template, channel.templates) : null;
    return checked?.accepted === true ? { accepted: true, text: checked.text, template: checked.template, integrationId } : { accepted: false, code: 'template_invalid' };
  }
  const verdict = replyVerdict(reply.text, integrationId, repliesEnabled, reply.hasAttachments);
  return verdict.accepted && channel.windowClosed ? { accepted: false, code: 'window_closed' } : verdict;
}

/** The upload record of a file (docs/data-model.md#attachment-uploads), as far as a reply's check needs it. */
export interface UploadRecord {
  workspaceId: string;
  conversationId: string;
  contentType: string;
  size: number;
  sha256: string;
  storagePath: string;
  /** The reply that carries the file (set by sequencing, ./sequencing.ts); null while unused. */
  usedBy: string | null;
}

/** Reads an upload record; null when there is none or it is not one. */
export function uploadRecordOf(data: Record<string, unknown> | undefined): UploadRecord | null {
  if (data === undefined) return null;
  const { workspaceId, conversationId, contentType, size, sha256, storagePath } = data;
  if (typeof workspaceId !== 'string' || typeof conversationId !== 'string' || typeof contentType !== 'string') return null;
  if (typeof size !== 'number' || typeof sha256 !== 'string' || typeof storagePath !== 'string') return null;
  return { workspaceId, conversationId, contentType, size, sha256, storagePath, usedBy: typeof data.usedBy === 'string' ? data.usedBy : null };
}

/**
 * The update that gives an upload to the reply `messageId` (in the sequencing transaction): it is
 * `usedBy` that reply, and its `cleanupAt` goes, so the unused-upload cleanup never sees it again
 * (console-api/cleanup.ts). Its object then lives as long as the reply (retention, erasure).
 */
export function markUploadUsed(messageId: string): { usedBy: string; cleanupAt: FieldValue } {
  return { usedBy: messageId, cleanupAt: FieldValue.delete() };
}

/** The `attachments` of a reply as written (any value): the list of ids it names, for reading their upload records. */
export function attachmentIdsOf(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  return value.map((a) => (isMap(a) && typeof a.attachmentId === 'string' ? a.attachmentId : '')).filter((id) => id !== '');
}

export type AttachmentsVerdict = { accepted: true; attachments: AttachmentRef[] } | { accepted: false; code: 'attachments_unsupported' | 'attachment_rejected' };

/**
 * Whether a reply's files may go out (docs/contract.md#attachments), after the rules checked their
 * shape: none at all -> accepted with none; files on an integration without the capability ->
 * `attachments_unsupported`; otherwise each must have been uploaded to this workspace and
 * conversation with exactly the type, size and hash the reply names, not be used by another reply
 * (an upload belongs to one reply: docs/data-model.md#attachment-uploads), and fit the capability
 * (type, per-file size, count), and together at most the contract's total -> else `attachment_rejected`.
 */
export function attachmentsVerdict(
  value: unknown,
  capability: AttachmentCapability | null,
  uploads: ReadonlyMap<string, UploadRecord | null>,
  where: { workspaceId: string; conversationId: string; messageId?: string },
): AttachmentsVerdict {
  if (value === undefined) return { accepted: true, attachments: [] };
  if (capability === null) return { accepted: false, code: 'attachments_unsupported' };
  const rejected = { accepted: false, code: 'attachment_rejected' } as const;
  if (!Array.isArray(value) || value.length === 0 || value.length > capability.maxCount) return rejected;
  const attachments: AttachmentRef[] = [];
  const seen = new Set<string>();
  let total = 0;
  for (const item of value) {
    if (!isMap(item)) return rejected;
    const { attachmentId, name, contentType, size, sha256 } = item;
    if (typeof attachmentId !== 'string' || typeof name !== 'string' || seen.has(attachmentId)) return rejected;
    seen.add(attachmentId);
    const upload = uploads.get(attachmentId) ?? null;
    if (upload === null || upload.workspaceId !== where.workspaceId || upload.conversationId !== where.conversationId) return rejected;
    if (upload.usedBy !== null && upload.usedBy !== where.messageId) return rejected;
    if (contentType !== upload.contentType || size !== upload.size || sha256 !== upload.sha256) return rejected;
    const type = capability.contentTypes.find((t) => t === upload.contentType);
    if (type === undefined || upload.size > capability.maxBytes) return rejected;
    if (name.length === 0 || codePointLength(name) > ATTACHMENT_LIMITS.name) return rejected;
    total += upload.size;
    // The name comes from the reply the console wrote: shown without bidi controls or invisible
    // characters, whoever wrote it (docs/console.md#console-endpoints).
    attachments.push({ attachmentId, name: shownFileName(name), contentType: type, size: upload.size, sha256: upload.sha256 });
  }
  return total > ATTACHMENT_LIMITS.maxTotalBytes ? rejected : { accepted: true, attachments };
}

/**
 * Whether the text of a reply with files may be empty: with files it may, alone it must be a
 * reply's text (`replyVerdict`).
 */
function replyTextVerdict(text: unknown, hasAttachments: boolean): string | null {
  if (hasAttachments && text === '') return '';
  return typeof text === 'string' && text.length > 0 && codePointLength(text) <= MAX_REPLY_CHARACTERS ? text : null;
}

/** What a resend delivers (docs/contract.md#per-part-outcomes): the text, unless sent, and the files not sent. */
export interface ResendParts {
  text: string;
  textSent: boolean;
  attachments: AttachmentRef[];
}

/**
 * The parts of `previous` not known to be sent: a part reported `sent` is left out (the text as an
 * empty text with `textSent`). When every part was reported sent (the delivery still ended failed
 * or unknown), the operator's request is taken literally and everything is sent again.
 */
export function resendParts(previous: Pick<DeliveryRecord, 'text' | 'textSent' | 'attachments' | 'parts'>): ResendParts {
  const sent = new Set((previous.parts ?? []).filter((p) => p.status === 'sent').map((p) => p.part));
  const textSent = previous.textSent === true || sent.has(TEXT_PART);
  const files = previous.attachments ?? [];
  const attachments = files.filter((a) => !sent.has(a.attachmentId));
  if (attachments.length === 0 && (textSent || previous.text === '')) return { text: previous.text, textSent: false, attachments: [...files] };
  return { text: textSent ? '' : previous.text, textSent, attachments };
}

/** An attempt log entry as the console sees it. */
interface AttemptMirror {
  at: Timestamp;
  event: AttemptEvent;
  code?: string;
}

/** How the delivery a resend replaced ended, as the console sees it (`delivery.previous`). */
interface PreviousMirror {
  deliveryId?: string;
  status: PreviousDelivery['status'];
  error?: { outcome: string; code: string };
  providerMessageIds?: string[];
  attempts?: AttemptMirror[];
  updatedAt: Timestamp;
}

/** The reply's `delivery` field: what the console shows of the delivery (docs/data-model.md). */
export interface ReplyMirror {
  /** Absent when the reply was refused without a delivery. */
  deliveryId?: string;
  status: DeliveryStatus;
  updatedAt: Timestamp;
  /** When the delivery became `sent` (the window of edits and unsends counts from it: docs/contract.md#edits-and-unsends). */
  sentAt?: Timestamp;
  providerMessageIds?: string[];
  error?: { outcome: string; code: string };
  receipt?: { status: ReceiptStatus; at: Timestamp; code?: string };
  attempts?: AttemptMirror[];
  cancel?: { status: 'cancelled' | 'too_late'; at: Timestamp };
  /** Per-part outcomes the connector reported (docs/data-model.md#reply-attachments). */
  parts?: PartOutcome[];
  /**
   * After a resend: how the replaced delivery ended. A refused resend keeps the replaced mirror as
   * it was stored, without its own `previous` (one level of history).
   */
  previous?: PreviousMirror | Record<string, unknown>;
  /** The reply's trace id (docs/operations.md#tracing): the console shows it, an operator searches the logs by it. */
  traceId?: string;
}

const attemptsMirror = (log: readonly AttemptEntry[]): AttemptMirror[] =>
  log.map(({ at, event, code }) => (code === undefined ? { at: Timestamp.fromMillis(at), event } : { at: Timestamp.fromMillis(at), event, code }));

function previousMirror(p: PreviousDelivery): PreviousMirror {
  const previous: PreviousMirror = { status: p.status, updatedAt: Timestamp.fromMillis(p.updatedAt) };
  if (p.deliveryId !== null) previous.deliveryId = p.deliveryId;
  if (p.error !== null) previous.error = p.error;
  if (p.providerMessageIds.length > 0) previous.providerMessageIds = p.providerMessageIds;
  if (p.attemptLog.length > 0) previous.attempts = attemptsMirror(p.attemptLog);
  return previous;
}

/** The mirror of a delivery record (docs/data-model.md): written with every change the console can see. */
export function deliveryMirror(d: DeliveryRecord, now: number): ReplyMirror {
  const mirror: ReplyMirror = { deliveryId: d.deliveryId, status: d.status, updatedAt: Timestamp.fromMillis(now) };
  if (d.status === 'sent' && d.sentAt !== undefined) mirror.sentAt = Timestamp.fromMillis(d.sentAt);
  if (d.providerMessageIds.length > 0) mirror.providerMessageIds = d.providerMessageIds;
  if (d.error) mirror.error = d.error;
  if (d.receipt) {
    const { status, at, code } = d.receipt;
    mirror.receipt = code === null ? { status, at: Timestamp.fromMillis(at) } : { status, at: Timestamp.fromMillis(at), code };
  }
  if (d.attemptLog !== undefined && d.attemptLog.length > 0) mirror.attempts = attemptsMirror(d.attemptLog);
  if (d.cancel !== undefined) mirror.cancel = { status: d.cancel.status, at: Timestamp.fromMillis(d.cancel.at) };
  if (d.parts !== undefined && d.parts.length > 0) mirror.parts = d.parts.map((p) => ({ ...p }));
  if (d.previous !== undefined) mirror.previous = previousMirror(d.previous);
  if (d.traceId !== undefined) mirror.traceId = d.traceId;
  return mirror;
}

/**
 * The mirror of a reply refused without a delivery: failed with the rejection's code. `replaced`
 * is the mirror a refused resend replaces, kept as `previous` without its own (one level of
 * history, as for a delivery a resend created).
 */
export function rejectionMirror(code: ReplyRejection, now: number, replaced?: StoredMirror): ReplyMirror {
  const mirror: ReplyMirror = { status: 'failed', error: { outcome: 'failed', code }, updatedAt: Timestamp.fromMillis(now) };
  if (replaced !== undefined) {
    const { previous: _older, ...fields } = replaced.fields;
    mirror.previous = fields;
  }
  return mirror;
}

/**
 * How a reply refused without a delivery ended, for the delivery its resend creates (there is no
 * record to copy: the mirror is all there is).
 */
export function previousFromMirror(mirror: StoredMirror): PreviousDelivery {
  return {
    deliveryId: null,
    status: 'failed',
    error: mirror.errorCode === null ? null : { outcome: 'failed', code: mirror.errorCode },
    providerMessageIds: [],
    attemptLog: [],
    updatedAt: mirror.updatedAt,
  };
}
