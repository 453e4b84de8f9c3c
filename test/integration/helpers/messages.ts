/**
 * Builders and readers for POST /v1/messages tests: a valid wire body with fresh ids, and the
 * Firestore documents the service writes for it.
 */
import { randomUUID } from 'node:crypto';
import type { DocumentData } from 'firebase-admin/firestore';
import { adminDb } from './stack';

export const MESSAGES_PATH = '/v1/messages';

export interface WireMessage {
  eventId?: unknown;
  externalConversationId?: unknown;
  sender?: { externalId?: unknown; displayName?: unknown; kind?: unknown; [extra: string]: unknown };
  message?: { text?: unknown; [extra: string]: unknown };
  [extra: string]: unknown;
}

/** A valid customer message with fresh ids; `overrides` replace top-level fields. */
export function newMessage(overrides: Partial<WireMessage> = {}): WireMessage {
  return {
    eventId: `evt_${randomUUID()}`,
    externalConversationId: `conv_${randomUUID()}`,
    sender: { externalId: `cust_${randomUUID()}`, displayName: 'Ada Lovelace', kind: 'customer' },
    message: { text: 'Hello, my order has not arrived.' },
    ...overrides,
  };
}

const ws = (workspaceId: string) => adminDb().collection('workspaces').doc(workspaceId);

export async function readMessageDoc(workspaceId: string, conversationId: string, messageId: string): Promise<DocumentData | undefined> {
  const snap = await ws(workspaceId).collection('conversations').doc(conversationId).collection('messages').doc(messageId).get();
  return snap.data();
}

export async function readConversationDoc(workspaceId: string, conversationId: string): Promise<DocumentData | undefined> {
  return (await ws(workspaceId).collection('conversations').doc(conversationId).get()).data();
}

/** All message documents of a conversation. */
export async function listMessageDocs(workspaceId: string, conversationId: string): Promise<DocumentData[]> {
  const snap = await ws(workspaceId).collection('conversations').doc(conversationId).collection('messages').get();
  return snap.docs.map((d) => ({ id: d.id, ...d.data() }));
}

/** Customer documents of a workspace whose `externalId` is `externalId`. */
export async function findCustomers(workspaceId: string, externalId: string): Promise<DocumentData[]> {
  const snap = await ws(workspaceId).collection('customers').where('externalId', '==', externalId).get();
  return snap.docs.map((d) => ({ id: d.id, ...d.data() }));
}

/** `n` copies of a code point (astral characters count as one character, two UTF-16 units). */
export const repeatChar = (char: string, n: number): string => char.repeat(n);
