/**
 * Data access of the Privacy view (privacy.ts; admins only): the retention setting
 * (`settings/retention`), the workspace's integrations by name, the erasure and export requests
 * (`erasures/{id}`, `exports/{id}`) with the service's audit fields, live, what an erasure would
 * delete (counted before it is offered), and the export's file from the download function. No
 * DOM: what is read comes back as plain shapes with epoch milliseconds. Writes are exactly what firestore.rules accept (docs/data-model.md).
 */
import {
  collection,
  deleteDoc,
  doc,
  getCountFromServer,
  getDoc,
  getDocs,
  limit,
  onSnapshot,
  orderBy,
  query,
  serverTimestamp,
  setDoc,
  where,
  type DocumentData,
  type Unsubscribe,
} from 'firebase/firestore';
import { START_ADDRESS_KINDS } from '../../functions/src/contract';
import { customerDocId, timestampMillis } from './format';
import { exportDownloadUrl, type ErasureAudit, type ErasurePreview, type ExportState } from './privacy-format';
import type { Session } from './session';

/** Erasures and exports listed: the most recent ones. */
const LISTED = 50;

/** What an erasure or an export is about: exactly the request fields the rules accept with the request's time and author. */
export interface CustomerRequest {
  integrationId: string;
  externalCustomerId: string;
}

/** One integration of the workspace, for the request form. */
interface IntegrationName {
  id: string;
  /** Its name, or its id when it has none. */
  name: string;
}

/** What the service counts as it erases a customer. */
export const ERASED_KINDS = ['conversations', 'messages', 'images', 'attachments', 'deliveries'] as const;

/** One erasure request with the service's audit. */
export interface Erasure {
  id: string;
  /** `'?'` when the document has none. */
  externalCustomerId: string;
  /** `''` when the document has none. */
  integrationId: string;
  requestedAtMs: number | undefined;
  requestedBy: string | undefined;
  audit: ErasureAudit;
  counts: Partial<Record<(typeof ERASED_KINDS)[number], number>>;
}

/** One export request with what the service wrote of its file. */
export interface CustomerExport {
  id: string;
  /** `'?'` when the document has none. */
  externalCustomerId: string;
  /** `''` when the document has none. */
  integrationId: string;
  requestedAtMs: number | undefined;
  state: ExportState;
}

/** The service writes some of these times as epoch ms, others as Timestamps: either reads as ms. */
const millis = (t: unknown): number | undefined => (typeof t === 'number' ? t : timestampMillis(t));

function workspaceCol(session: Session, name: 'erasures' | 'exports' | 'integrations') {
  return collection(session.services.db, 'workspaces', session.workspaceId, name);
}

function retentionRef(session: Session) {
  return doc(session.services.db, 'workspaces', session.workspaceId, 'settings', 'retention');
}

/** The retention period in days, live; `undefined` when messages are kept forever. */
export function subscribeRetention(session: Session, onDays: (days: number | undefined) => void, onError: (err: unknown) => void): Unsubscribe {
  return onSnapshot(
    retentionRef(session),
    (snap) => {
      const value: unknown = snap.exists() ? snap.get('days') : undefined;
      onDays(typeof value === 'number' ? value : undefined);
    },
    onError,
  );
}

/** Sets the retention period; `undefined` keeps everything forever (the setting is removed). */
export async function setRetention(session: Session, days: number | undefined): Promise<void> {
  await (days === undefined ? deleteDoc(retentionRef(session)) : setDoc(retentionRef(session), { days }));
}

/** The workspace's integrations with their names, live, in Firestore's order. */
export function subscribeIntegrationNames(session: Session, onList: (integrations: IntegrationName[]) => void, onError: (err: unknown) => void): Unsubscribe {
  return onSnapshot(
    workspaceCol(session, 'integrations'),
    (snap) => onList(snap.docs.map((d) => ({ id: d.id, name: typeof d.get('name') === 'string' ? (d.get('name') as string) : d.id }))),
    onError,
  );
}

async function writeRequest(session: Session, name: 'erasures' | 'exports', request: CustomerRequest): Promise<string> {
  const ref = doc(workspaceCol(session, name));
  await setDoc(ref, { ...request, requestedAt: serverTimestamp(), requestedBy: session.user.uid });
  return ref.id;
}

/**
 * Conversations an erasure preview counts at most: one document read and one or two count queries
 * each, so a customer in very many conversations is counted in bounded time and cost (the preview
 * then says "at least").
 */
const PREVIEW_CONVERSATIONS = 100;

/**
 * What erasing `request` would delete, counted with the admin's own reads (firestore.rules: members
 * read conversations, messages and customers; count queries need no more). The erasure job's
 * definitions (functions/src/privacy/erasure.ts): it finds the customer's messages
 * (`sender.customerId`) and classifies each conversation they are in as the customer's alone when
 * its `customerIds` lists only them. Here the conversations listing the customer are read
 * (`customerIds` array-contains; at most PREVIEW_CONVERSATIONS), and in each one a count query
 * counts the customer's messages (a conversation without any is not one the job meets, and is left
 * out) and, in a sole one, a second counts all its messages (the job deletes the replies and alerts
 * too). The console cannot run the job's collection-group query (the rules grant reads per
 * workspace path only), hence one count per conversation.
 *
 * Reads: 1 (the customer record) + the conversations listed (1 when none) + per conversation
 * listed 1 count, and per sole one a second (a count query costs 1 read per up to 1,000 index
 * entries it matches, at least 1). Conversations stored before `customerIds` existed are not
 * listed, so not counted (the job still finds them through the messages).
 *
 * The id is also an address (docs/privacy.md, a start that never completed): the start requests of
 * the integration to that value, of every address kind (one query per kind, the job's own query
 * shape; members read start requests), and the conversations they started that never completed (no
 * customer, not merged into a thread: each read, and its messages counted) are the request's too.
 * Reads: + one query per address kind (1 when it finds nothing) + per such conversation 1 read
 * and 1 count.
 */
export async function previewErasure(session: Session, request: CustomerRequest): Promise<ErasurePreview> {
  const { db } = session.services;
  const customerId = await customerDocId(request.integrationId, request.externalCustomerId);
  const conversationsCol = collection(db, 'workspaces', session.workspaceId, 'conversations');
  const [customer, listed, starts] = await Promise.all([
    getDoc(doc(db, 'workspaces', session.workspaceId, 'customers', customerId)),
    getDocs(query(conversationsCol, where('customerIds', 'array-contains', customerId), limit(PREVIEW_CONVERSATIONS + 1))),
    previewStartsToAddress(session, request),
  ]);
  const conversations = listed.docs.slice(0, PREVIEW_CONVERSATIONS);
  const counted = await Promise.all(
    conversations.map(async (conversation) => {
      const ids: unknown = conversation.get('customerIds');
      const sole = Array.isArray(ids) && ids.every((id) => id === customerId);
      const messages = collection(conversation.ref, 'messages');
      const [own, all] = await Promise.all([
        getCountFromServer(query(messages, where('sender.customerId', '==', customerId))),
        sole ? getCountFromServer(messages) : undefined,
      ]);
      const ownCount = own.data().count;
      return { sole, met: ownCount > 0, deleted: all === undefined ? ownCount : all.data().count };
    }),
  );
  const met = counted.filter((c) => c.met);
  const name: unknown = customer.get('displayName');
  return {
    customerExists: customer.exists(),
    displayName: typeof name === 'string' && name !== '' ? name : undefined,
    soleConversations: met.filter((c) => c.sole).length + starts.conversations,
    sharedConversations: met.filter((c) => !c.sole).length,
    messages: met.reduce((sum, c) => sum + c.deleted, 0) + starts.messages,
    addressStarts: starts.requests,
    more: listed.docs.length > PREVIEW_CONVERSATIONS || starts.more,
  };
}

/**
 * The start requests to `request.externalCustomerId` as an address (any kind) in the integration,
 * and the conversations they started that never completed, with their messages: what an erasure
 * naming that address takes besides the customer's own data.
 */
async function previewStartsToAddress(session: Session, request: CustomerRequest): Promise<{ requests: number; conversations: number; messages: number; more: boolean }> {
  const { db } = session.services;
  const startsCol = collection(db, 'workspaces', session.workspaceId, 'conversationStarts');
  const byKind = await Promise.all(
    START_ADDRESS_KINDS.map((kind) =>
      getDocs(query(startsCol, where('integrationId', '==', request.integrationId), where('to.kind', '==', kind), where('to.value', '==', request.externalCustomerId), limit(PREVIEW_CONVERSATIONS + 1))),
    ),
  );
  const requests = byKind.flatMap((snap) => snap.docs);
  const startedIds = [...new Set(requests.map((start) => (start.get('result') as { conversationId?: unknown } | undefined)?.conversationId).filter((id): id is string => typeof id === 'string' && id !== ''))];
  const started = await Promise.all(
    startedIds.slice(0, PREVIEW_CONVERSATIONS).map(async (conversationId) => {
      const conversation = await getDoc(doc(db, 'workspaces', session.workspaceId, 'conversations', conversationId));
      const customers: unknown = conversation.get('customerIds');
      // A start that completed names its customer (and its conversation was merged into the thread): that customer's erasure takes it.
      const neverCompleted = conversation.exists() && conversation.get('mergedInto') === undefined && (!Array.isArray(customers) || customers.length === 0);
      return neverCompleted ? (await getCountFromServer(collection(conversation.ref, 'messages'))).data().count : null;
    }),
  );
  const counted = started.filter((messages): messages is number => messages !== null);
  return {
    requests: requests.length,
    conversations: counted.length,
    messages: counted.reduce((sum, n) => sum + n, 0),
    more: byKind.some((snap) => snap.docs.length > PREVIEW_CONVERSATIONS) || startedIds.length > PREVIEW_CONVERSATIONS,
  };
}

/** Requests the erasure of one customer; resolves to the erasure's id. */
export function requestErasure(session: Session, request: CustomerRequest): Promise<string> {
  return writeRequest(session, 'erasures', request);
}

/** Requests the export of one customer; resolves to the export's id. */
export function requestExport(session: Session, request: CustomerRequest): Promise<string> {
  return writeRequest(session, 'exports', request);
}

function toErasure(id: string, d: DocumentData): Erasure {
  return {
    id,
    externalCustomerId: String(d.externalCustomerId ?? '?'),
    integrationId: String(d.integrationId ?? ''),
    requestedAtMs: millis(d.requestedAt),
    requestedBy: typeof d.requestedBy === 'string' ? d.requestedBy : undefined,
    audit: {
      status: d.status === 'running' || d.status === 'done' ? d.status : undefined,
      startedAt: millis(d.startedAt),
      finishedAt: millis(d.finishedAt),
      acknowledgedAt: millis(d.acknowledgedAt),
    },
    counts: (d.counts ?? {}) as Erasure['counts'],
  };
}

/** The latest erasures, most recent first, live. */
export function subscribeErasures(session: Session, onList: (erasures: Erasure[]) => void, onError: (err: unknown) => void): Unsubscribe {
  return onSnapshot(
    query(workspaceCol(session, 'erasures'), orderBy('requestedAt', 'desc'), limit(LISTED)),
    (snap) => onList(snap.docs.map((d) => toErasure(d.id, d.data({ serverTimestamps: 'estimate' })))),
    onError,
  );
}

function toExport(id: string, d: DocumentData): CustomerExport {
  const error = d.error as { code?: unknown } | undefined;
  return {
    id,
    externalCustomerId: String(d.externalCustomerId ?? '?'),
    integrationId: String(d.integrationId ?? ''),
    requestedAtMs: millis(d.requestedAt),
    state: {
      status: typeof d.status === 'string' ? d.status : undefined,
      finishedAt: millis(d.finishedAt),
      expiresAt: millis(d.fileExpiresAt),
      errorCode: typeof error?.code === 'string' ? error.code : undefined,
    },
  };
}

/** The latest exports, most recent first, live. */
export function subscribeExports(session: Session, onList: (exports: CustomerExport[]) => void, onError: (err: unknown) => void): Unsubscribe {
  return onSnapshot(
    query(workspaceCol(session, 'exports'), orderBy('requestedAt', 'desc'), limit(LISTED)),
    (snap) => onList(snap.docs.map((d) => toExport(d.id, d.data({ serverTimestamps: 'estimate' })))),
    onError,
  );
}

/**
 * Fetches an export's file with the admin's ID token (the download function checks it and the
 * admin role; a link could not carry the header). Rejects with the function's error message and code.
 */
export async function fetchExport(session: Session, exportId: string): Promise<Blob> {
  const token = await session.user.getIdToken();
  const res = await fetch(exportDownloadUrl(session.services.functionUrl('downloadExport'), session.workspaceId, exportId), { headers: { Authorization: `Bearer ${token}` } });
  if (!res.ok) {
    const body = (await res.json().catch(() => undefined)) as { error?: { code?: string; message?: string } } | undefined;
    throw new Error(`${body?.error?.message ?? `HTTP ${res.status}`} (${body?.error?.code ?? res.status})`);
  }
  return res.blob();
}
