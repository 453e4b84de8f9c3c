/**
 * Helpers of the privacy suites: a customer's messages through the real API, an erasure requested
 * as the console writes it, and waiting for the service's audit.
 */
import { randomUUID } from 'node:crypto';
import { FieldValue, Timestamp, type DocumentData, type DocumentReference } from 'firebase-admin/firestore';
import { adminDb, postJson, postMultipart, messageParts, testImageDir, type TestIntegration } from '../helpers/stack';
import { eventually } from '../helpers/deliveries';
import { createImageStore, type ImageStore } from '../../../functions/src/messages/image-store';
import { png } from '../../unit/fixtures/image-bytes';

export const ws = (workspaceId: string) => adminDb().collection('workspaces').doc(workspaceId);

/** The store the functions use under the emulators (a local directory), for direct runs and checks. */
export const localStore = (): ImageStore => createImageStore({ kind: 'local', dir: testImageDir() });

export interface Sent {
  eventId: string;
  conversationId: string;
  messageId: string;
  body: Record<string, unknown>;
}

/** A customer message through POST /v1/messages (with one small PNG when `withImage`, or the image `image`). */
export async function send(integration: TestIntegration, externalConversationId: string, externalId: string, options: { withImage?: boolean; image?: Buffer; eventId?: string; text?: string; metadata?: Record<string, string | null> } = {}): Promise<Sent> {
  const eventId = options.eventId ?? `evt-${randomUUID()}`;
  const body = { eventId, externalConversationId, sender: { externalId }, message: { text: options.text ?? `hello from ${externalId}` }, ...(options.metadata === undefined ? {} : { metadata: options.metadata }) };
  const image = options.image ?? (options.withImage ? png(3 + Math.floor(Math.random() * 50), 3) : undefined);
  const res = image !== undefined
    ? await postMultipart('/v1/messages', messageParts(body, [image]), { key: integration.key })
    : await postJson('/v1/messages', body, { key: integration.key });
  if (res.status !== 201 && res.status !== 200) throw new Error(`message refused: ${res.status} ${res.text}`);
  const { conversationId, messageId } = res.body as { conversationId: string; messageId: string };
  return { eventId, conversationId, messageId, body };
}

/** What the console writes (firestore.rules: admins, exactly these fields). */
export async function requestErasure(integration: TestIntegration, externalCustomerId: string, erasureId = `er-${randomUUID()}`): Promise<string> {
  await ws(integration.workspaceId).collection('erasures').doc(erasureId).create({ integrationId: integration.integrationId, externalCustomerId, requestedAt: FieldValue.serverTimestamp(), requestedBy: 'admin-1' });
  return erasureId;
}

export function waitForErasure(workspaceId: string, erasureId: string, timeoutMs = 30_000): Promise<DocumentData> {
  return eventually(async () => {
    const d = (await ws(workspaceId).collection('erasures').doc(erasureId).get()).data();
    return d?.status === 'done' ? d : undefined;
  }, `erasure ${erasureId} done`, timeoutMs);
}

/** Moves a document's time back by `ms` (as if it had been written then). */
export async function age(ref: DocumentReference, field: string, ms: number): Promise<void> {
  const value: unknown = (await ref.get()).get(field);
  if (value instanceof Timestamp) await ref.update({ [field]: Timestamp.fromMillis(value.toMillis() - ms) });
  else if (typeof value === 'number') await ref.update({ [field]: value - ms });
}
