/**
 * Firestore access of one conversation's thread (thread.ts): the conversation's header (with its
 * connector metadata), its latest
 * messages, live, the reply capability of its integration, and the member's writes (a reply, a
 * resend, a cancel). No DOM: what is read comes back as plain shapes with epoch milliseconds.
 * Writes are exactly what firestore.rules accept (docs/data-model.md).
 */
import { addDoc, collection, doc, limitToLast, onSnapshot, orderBy, query, serverTimestamp, updateDoc, type DocumentData, type Unsubscribe } from 'firebase/firestore';
import { readCapability, type AttachmentCapability, type UploadedAttachment } from './attachments';
import { conversationPerson, timestampMillis, type DeliveryStatus } from './format';
import { readChannel, type IntegrationChannel } from './integration-channel-format';
import { readLifecycle, type LifecycleCapability, type LifecycleEntry, type Reaction, type RequestStatus } from './lifecycle';
import type { Session } from './session';
import type { AddressKind } from './start-format';
import type { TemplateChoice } from './template-format';

/** A desk-started conversation's (or start message's) recipient: `to: { kind, value }`. */
interface StartAddress {
  kind: AddressKind;
  value: string;
}

/** The conversation as the thread's heading shows it. */
export interface ConversationHeader {
  /** The connector's id of the conversation (the conversation id when it has none). */
  externalConversationId: string;
  integrationId: string | undefined;
  /** The latest customer's external id (never an alert bot): see conversationPerson. */
  customerExternalId: string | undefined;
  lastMessageAtMs: number | undefined;
  /** The conversation's connector metadata (docs/contract.md#connector-metadata), sorted by key; empty when it has none. */
  metadata: ReadonlyArray<readonly [key: string, value: string]>;
  /** `window.closesAt` (epoch ms): free text may go out until then; absent when the service keeps no window for it. */
  windowClosesAtMs: number | undefined;
  /** The customer's latest `sentAt`: the window counts from it when the conversation stores none. */
  lastCustomerSentAtMs: number | undefined;
  /** A desk-started conversation whose first message the channel has not sent yet: no other reply may go out. */
  waitingForChannel: boolean;
  /** The conversation this one was merged into (a started one whose thread the channel already knew). */
  mergedInto: string | undefined;
  /** A desk-started conversation's recipient. */
  to: StartAddress | undefined;
}

function readAddress(value: unknown): StartAddress | undefined {
  const to = asObject(value);
  return to !== undefined && typeof to.kind === 'string' && typeof to.value === 'string' ? { kind: to.kind as AddressKind, value: to.value } : undefined;
}

/** The stored `metadata` map as sorted entries; anything that is not a map of strings shows nothing. */
function metadataEntries(value: unknown): Array<readonly [string, string]> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return [];
  return Object.entries(value as Record<string, unknown>)
    .filter((entry): entry is [string, string] => typeof entry[1] === 'string')
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** One entry of a delivery's attempt log. */
export interface Attempt {
  atMs: number | undefined;
  event: string | undefined;
  code: string | undefined;
}

/** Per-part outcome on the mirror (`delivery.parts`): the text, or one attachment by id. */
export interface PartStatus {
  part?: string;
  status?: 'sent' | 'failed';
  providerMessageIds?: string[];
  code?: string;
}

/** What a delivery mirror (or the one a resend replaced) shows in every case. */
export interface DeliveryFacts {
  status: DeliveryStatus | undefined;
  providerMessageIds: string[] | undefined;
  errorCode: string | undefined;
  /** The reply's trace id (docs/operations.md#tracing): search the service's logs by it. */
  traceId: string | undefined;
  attempts: Attempt[] | undefined;
}

/** A reply's live `delivery` mirror (docs/data-model.md), times in epoch ms. */
interface DeliveryMirror extends DeliveryFacts {
  deliveryId: string | undefined;
  updatedAtMs: number | undefined;
  receipt: { status: string | undefined; atMs: number | undefined; code: string | undefined } | undefined;
  /** How the delivery a resend replaced ended. */
  previous: DeliveryFacts | undefined;
  parts: PartStatus[] | undefined;
  /** The service's answer to the latest cancel request on this delivery (docs/decisions.md#recall-before-send-cancel). */
  cancel: 'cancelled' | 'too_late' | undefined;
  /** When the delivery became `sent`: the edit and unsend windows run from it. */
  sentAtMs: number | undefined;
}

/** An operator reply. */
export interface OutboundMessage {
  direction: 'outbound';
  id: string;
  text: string;
  authorUid: string | undefined;
  createdAtMs: number | undefined;
  attachments: Partial<UploadedAttachment>[];
  delivery: DeliveryMirror | undefined;
  resendRequestedAtMs: number | undefined;
  cancelRequestedAtMs: number | undefined;
  /** The member's latest edit request (`edit`), and the service's answers to every one (`edits`, latest last). */
  editRequest: { text: string; requestedAtMs: number | undefined; uid: string | undefined } | undefined;
  edits: LifecycleEntry[];
  /** The member's latest unsend request (`unsend`), the answers (`unsends`) and, once one was sent, `unsent`. */
  unsendRequest: { requestedAtMs: number | undefined; uid: string | undefined } | undefined;
  unsends: LifecycleEntry[];
  unsentAtMs: number | undefined;
  /** The customer's reactions to the reply (`reactions`). */
  reactions: Reaction[];
  /** A template reply's template (it then has no text). */
  template: TemplateChoice | undefined;
  /** Set on the message that started the conversation (or a start that became a reply): to whom. */
  start: { startId: string | undefined; to: StartAddress | undefined } | undefined;
}

function readTemplate(value: unknown): TemplateChoice | undefined {
  const t = asObject(value);
  if (t === undefined || typeof t.name !== 'string' || typeof t.language !== 'string') return undefined;
  const params = Object.entries(asObject(t.params) ?? {}).filter((e): e is [string, string] => typeof e[1] === 'string');
  return { name: t.name, language: t.language, params: Object.fromEntries(params) };
}

/** The metadata of one image of a customer message (the image itself goes through the media endpoint). */
interface ImageMeta {
  path?: string;
  contentType?: string;
  width?: number;
  height?: number;
  bytes?: number;
  sha256?: string;
}

/** A customer message or a service alert. */
export interface InboundMessage {
  direction: 'inbound';
  id: string;
  alert: boolean;
  sender: { externalId?: string; displayName?: string | null };
  text: string | undefined;
  createdAtMs: number | undefined;
  images: ImageMeta[];
  /** The customer's edits of the message (`edits`, latest last); `text` stays the original. */
  edits: Array<{ text: string; atMs: number | undefined }>;
  /** Set once the customer deleted the message: its text and images are gone, only this tombstone stays. */
  deleted: { atMs: number | undefined } | undefined;
  reactions: Reaction[];
}

export type ThreadMessage = OutboundMessage | InboundMessage;

function conversationRef(session: Session, conversationId: string) {
  return doc(session.services.db, 'workspaces', session.workspaceId, 'conversations', conversationId);
}

function messagesCol(session: Session, conversationId: string) {
  return collection(conversationRef(session, conversationId), 'messages');
}

/** The conversation's header, live; `undefined` when the conversation does not exist. */
export function subscribeConversation(session: Session, conversationId: string, onHeader: (header: ConversationHeader | undefined) => void, onError: (err: unknown) => void): Unsubscribe {
  return onSnapshot(
    conversationRef(session, conversationId),
    (snap) => {
      if (!snap.exists()) {
        onHeader(undefined);
        return;
      }
      const integrationId: unknown = snap.get('integrationId');
      onHeader({
        externalConversationId: String(snap.get('externalConversationId') ?? conversationId),
        integrationId: typeof integrationId === 'string' ? integrationId : undefined,
        customerExternalId: conversationPerson({ lastCustomerExternalId: snap.get('lastCustomerExternalId') as unknown }),
        lastMessageAtMs: timestampMillis(snap.get('lastMessageAt', { serverTimestamps: 'estimate' })),
        metadata: metadataEntries(snap.get('metadata')),
        windowClosesAtMs: timestampMillis(asObject(snap.get('window'))?.closesAt),
        lastCustomerSentAtMs: timestampMillis(snap.get('lastCustomerSentAt')),
        waitingForChannel: snap.get('waitingForChannel') === true,
        mergedInto: asString(snap.get('mergedInto')) || undefined,
        to: readAddress(snap.get('to')),
      });
    },
    onError,
  );
}

/** What the conversation's integration lets its replies do (thread-capability.ts). */
export interface ReplyCapability {
  /** `replies.attachments`: the files a reply may carry. */
  attachments: AttachmentCapability | undefined;
  /** `replies.lifecycle`: edits and unsends after the send. */
  lifecycle: LifecycleCapability | undefined;
  /** `channel`: the reply window and the templates its connector declared. */
  channel: IntegrationChannel | undefined;
}

/**
 * What the integration's replies may carry (`replies.attachments`), what may follow their
 * sending (`replies.lifecycle`: edits, unsends) and the channel's window and templates, live.
 */
export function subscribeReplyCapability(session: Session, integrationId: string, onCapability: (capability: ReplyCapability) => void, onError: (err: unknown) => void): Unsubscribe {
  return onSnapshot(
    doc(session.services.db, 'workspaces', session.workspaceId, 'integrations', integrationId),
    (snap) => {
      const replies = snap.get('replies') as { attachments?: unknown; lifecycle?: unknown } | undefined;
      onCapability({ attachments: readCapability(replies?.attachments), lifecycle: readLifecycle(replies?.lifecycle), channel: readChannel(snap.get('channel')) });
    },
    onError,
  );
}

/** Someone typing in the conversation (`typing/{conversationId}`, written by the service), times in epoch ms. */
export interface Typing {
  senderExternalId: string | undefined;
  displayName: string | undefined;
  atMs: number | undefined;
}

/** The conversation's typing document, live; `undefined` while there is none. */
export function subscribeTyping(session: Session, conversationId: string, onTyping: (typing: Typing | undefined) => void, onError: (err: unknown) => void): Unsubscribe {
  return onSnapshot(
    doc(session.services.db, 'workspaces', session.workspaceId, 'typing', conversationId),
    (snap) => {
      if (!snap.exists()) {
        onTyping(undefined);
        return;
      }
      onTyping({ senderExternalId: asString(snap.get('senderExternalId')), displayName: asString(snap.get('displayName')), atMs: timestampMillis(snap.get('at')) });
    },
    onError,
  );
}

function toAttempts(value: unknown): Attempt[] | undefined {
  if (!Array.isArray(value)) return undefined;
  return (value as Array<{ at?: unknown; event?: string; code?: string }>).map((a) => ({ atMs: timestampMillis(a.at), event: a.event, code: a.code }));
}

function toFacts(raw: DocumentData): DeliveryFacts {
  return {
    status: raw.status as DeliveryStatus | undefined,
    providerMessageIds: raw.providerMessageIds as string[] | undefined,
    errorCode: (raw.error as { code?: string } | undefined)?.code,
    traceId: raw.traceId as string | undefined,
    attempts: toAttempts(raw.attempts),
  };
}

function toMirror(raw: unknown): DeliveryMirror | undefined {
  if (!raw) return undefined;
  const d = raw as DocumentData;
  const receipt = d.receipt as { status?: string; at?: unknown; code?: string } | undefined;
  return {
    ...toFacts(d),
    deliveryId: d.deliveryId as string | undefined,
    updatedAtMs: timestampMillis(d.updatedAt),
    receipt: receipt ? { status: receipt.status, atMs: timestampMillis(receipt.at), code: receipt.code } : undefined,
    previous: d.previous ? toFacts(d.previous as DocumentData) : undefined,
    parts: d.parts as PartStatus[] | undefined,
    cancel: (d.cancel as { status?: 'cancelled' | 'too_late' } | undefined)?.status,
    sentAtMs: timestampMillis(d.sentAt),
  };
}

const asObject = (value: unknown): DocumentData | undefined => (value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as DocumentData) : undefined);
const asArray = (value: unknown): DocumentData[] => (Array.isArray(value) ? value.map((v) => asObject(v)).filter((v): v is DocumentData => v !== undefined) : []);
const asString = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** `edits[]` / `unsends[]` entries (the service's answers to edit and unsend requests). */
function toEntries(value: unknown): LifecycleEntry[] {
  return asArray(value).map((e) => ({
    ...(typeof e.text === 'string' ? { text: e.text } : {}),
    requestedAtMs: timestampMillis(e.requestedAt),
    uid: asString(e.uid),
    deliveryId: e.deliveryId === null ? null : asString(e.deliveryId),
    status: asString(e.status) as RequestStatus | undefined,
    atMs: timestampMillis(e.at),
    errorCode: asString(asObject(e.error)?.code),
  }));
}

function toReactions(value: unknown): Reaction[] {
  return asArray(value)
    .filter((r) => typeof r.emoji === 'string')
    .map((r) => ({ emoji: r.emoji as string, senderExternalId: asString(r.senderExternalId), atMs: timestampMillis(r.at) }));
}

function toMessage(id: string, d: DocumentData): ThreadMessage {
  if (d.direction === 'outbound') {
    return {
      direction: 'outbound',
      id,
      text: String(d.text ?? ''),
      authorUid: (d.author as { uid?: string } | undefined)?.uid,
      createdAtMs: timestampMillis(d.createdAt),
      attachments: Array.isArray(d.attachments) ? (d.attachments as Partial<UploadedAttachment>[]) : [],
      delivery: toMirror(d.delivery),
      resendRequestedAtMs: timestampMillis((d.resend as { requestedAt?: unknown } | undefined)?.requestedAt),
      cancelRequestedAtMs: timestampMillis((d.cancel as { requestedAt?: unknown } | undefined)?.requestedAt),
      editRequest: (() => {
        const edit = asObject(d.edit);
        return edit === undefined ? undefined : { text: String(edit.text ?? ''), requestedAtMs: timestampMillis(edit.requestedAt), uid: asString(edit.uid) };
      })(),
      edits: toEntries(d.edits),
      unsendRequest: (() => {
        const unsend = asObject(d.unsend);
        return unsend === undefined ? undefined : { requestedAtMs: timestampMillis(unsend.requestedAt), uid: asString(unsend.uid) };
      })(),
      unsends: toEntries(d.unsends),
      unsentAtMs: timestampMillis(asObject(d.unsent)?.at),
      reactions: toReactions(d.reactions),
      template: readTemplate(d.template),
      start: (() => {
        const start = asObject(d.start);
        return start === undefined ? undefined : { startId: asString(start.startId), to: readAddress(start.to) };
      })(),
    };
  }
  return {
    direction: 'inbound',
    id,
    alert: d.kind === 'alert',
    sender: (d.sender ?? {}) as InboundMessage['sender'],
    text: typeof d.text === 'string' ? d.text : undefined,
    createdAtMs: timestampMillis(d.createdAt),
    images: Array.isArray(d.images) ? (d.images as ImageMeta[]) : [],
    edits: asArray(d.edits)
      .filter((e) => typeof e.text === 'string')
      .map((e) => ({ text: e.text as string, atMs: timestampMillis(e.at) })),
    // A tombstone without a readable time still counts as deleted (its time shows as a dash).
    deleted: d.deleted ? { atMs: timestampMillis(asObject(d.deleted)?.at) } : undefined,
    reactions: toReactions(d.reactions),
  };
}

/** The latest `count` messages of the conversation, oldest first, live. */
export function subscribeMessages(session: Session, conversationId: string, count: number, onMessages: (messages: ThreadMessage[]) => void, onError: (err: unknown) => void): Unsubscribe {
  return onSnapshot(
    query(messagesCol(session, conversationId), orderBy('createdAt', 'asc'), limitToLast(count)),
    (snap) => onMessages(snap.docs.map((m) => toMessage(m.id, m.data({ serverTimestamps: 'estimate' })))),
    onError,
  );
}

/**
 * Writes an operator reply: its text and, only when there are files, their uploaded `attachments`.
 * Resolves to the reply's id once the server accepted it (the desk CLI prints it; console/cli).
 */
export async function sendReply(session: Session, conversationId: string, text: string, attachments: UploadedAttachment[] | undefined): Promise<string> {
  // `attachments` only when there are files: a text reply is exactly the document it always was.
  const replyDoc: Record<string, unknown> = { direction: 'outbound', author: { type: 'operator', uid: session.user.uid }, text, createdAt: serverTimestamp() };
  if (attachments !== undefined && attachments.length > 0) replyDoc.attachments = attachments;
  return (await addDoc(messagesCol(session, conversationId), replyDoc)).id;
}

/**
 * Writes a template reply (`template: { name, language, params }`, no text, no files), the shape
 * the rules accept outside the reply window too. Resolves to the reply's id.
 */
export async function sendTemplateReply(session: Session, conversationId: string, template: TemplateChoice): Promise<string> {
  return (await addDoc(messagesCol(session, conversationId), { direction: 'outbound', author: { type: 'operator', uid: session.user.uid }, template, createdAt: serverTimestamp() })).id;
}

/** Asks the service to cancel the reply's delivery before the connector starts it (recall before send). */
export async function requestCancel(session: Session, conversationId: string, messageId: string): Promise<void> {
  await updateDoc(doc(messagesCol(session, conversationId), messageId), { cancel: { requestedAt: serverTimestamp(), uid: session.user.uid } });
}

/** Asks the service to deliver a failed or unknown reply again. */
export async function requestResend(session: Session, conversationId: string, messageId: string): Promise<void> {
  await updateDoc(doc(messagesCol(session, conversationId), messageId), { resend: { requestedAt: serverTimestamp(), uid: session.user.uid } });
}

/** Asks the service to edit a sent reply on the channel (within the integration's edit window). */
export async function requestEdit(session: Session, conversationId: string, messageId: string, text: string): Promise<void> {
  await updateDoc(doc(messagesCol(session, conversationId), messageId), { edit: { text, requestedAt: serverTimestamp(), uid: session.user.uid } });
}

/** Asks the service to take a sent reply back on the channel (within the integration's unsend window). */
export async function requestUnsend(session: Session, conversationId: string, messageId: string): Promise<void> {
  await updateDoc(doc(messagesCol(session, conversationId), messageId), { unsend: { requestedAt: serverTimestamp(), uid: session.user.uid } });
}
