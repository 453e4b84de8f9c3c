/**
 * Where the SDK end-to-end scenarios run (decision 16, parity): the emulator stack (default), or
 * the SDK's own test service (`SDK_E2E_TARGET=test-service`, the jest project `kit`, run by `npm
 * test` beside the unit tests). The helpers (./helpers.ts) do each step on the chosen target, so one
 * suite file passes on both: an integration, a conversation, an operator reply, its notification,
 * and what the tests inspect of a delivery.
 */
import { createHash, randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { FieldValue, Timestamp, type DocumentData } from 'firebase-admin/firestore';
import { startTestService, type DeliveryView, type MessageView, type TestService } from '../../src/testing/index.js';
import { sweep } from '../../../functions/src/deliveries/sweep';
import { startMessageId } from '../../../functions/src/rules/starts';
import { eventually } from '../../../test/integration/helpers/deliveries';
import { listMessageDocs, readMessageDoc } from '../../../test/integration/helpers/messages';
import { allowAttachments as allowUploads, newMember, seedUpload, writeReplyWithAttachments, type Member } from '../../../test/integration/helpers/console-uploads';
import { adminDb, imageFilePath, integrationRef, type TestIntegration } from '../../../test/integration/helpers/stack';

/** True when the scenarios run against the test service instead of the emulator stack. */
export const onTestService = process.env.SDK_E2E_TARGET === 'test-service';

let service: TestService | undefined;

// One test service per suite file, started before the file's own hooks (registered first) and
// closed after them.
if (onTestService) {
  beforeAll(async () => {
    service = await startTestService();
  });
  afterAll(async () => {
    await service?.close();
  });
}

/** The running test service of this file. */
export function testService(): TestService {
  if (service === undefined) throw new Error('the test service is not started (SDK_E2E_TARGET=test-service, inside tests or hooks)');
  return service;
}

/** A delivery as the emulator tests read its record (`readDeliveryDoc`): the fields the test service shows too. */
export function deliveryDocOf(view: DeliveryView): DocumentData {
  return {
    deliveryId: view.deliveryId,
    status: view.status,
    attempts: view.attempts.filter((a) => a.event === 'claimed').length,
    providerMessageIds: [...view.providerMessageIds],
    error: view.failure === undefined ? null : { outcome: view.failure.outcome, code: view.failure.code },
    notBefore: view.notBefore,
    lastFail: view.lastFail,
    lease: view.lease,
    attemptLog: view.attempts.map(({ event, at, code }) => ({ event, at, ...(code === undefined ? {} : { code }) })),
  };
}

/** A delivery as the emulator tests read the reply's mirror (`waitForMirror`). */
export function mirrorOf(view: DeliveryView): DocumentData {
  const { deliveryId, status, providerMessageIds, error } = deliveryDocOf(view);
  return {
    deliveryId,
    status,
    providerMessageIds,
    error,
    ...(view.parts.length > 0 ? { parts: view.parts } : {}),
    ...(view.receipts.length > 0 ? { receipt: view.receipts.at(-1) } : {}),
  };
}

// ------------------------------------------------------------------ target-neutral steps: one implementation per target

/** A message as the emulator tests read its document (`readMessageDoc`): the fields the test service shows too. */
function messageDocOf(view: MessageView): DocumentData {
  return {
    id: view.messageId,
    // functions/src/messages/store.ts: everything POST /v1/messages stores is inbound; a service sender's is an alert.
    direction: 'inbound',
    kind: view.sender.kind === 'service' ? 'alert' : 'message',
    eventId: view.eventId,
    ...(view.providerMessageId === undefined ? {} : { providerMessageId: view.providerMessageId }),
    text: view.text ?? null,
    sender: { ...view.sender },
    images: view.images.map(({ contentType, width, height, bytes, sha256 }) => ({ contentType, width, height, bytes, sha256 })),
    // After the send (docs/data-model.md): the customer's edits, the tombstone, the reactions.
    ...(view.edits.length > 0 ? { edits: view.edits.map((e) => ({ text: e.text, at: Timestamp.fromMillis(e.at) })) } : {}),
    ...(view.deleted === undefined ? {} : { deleted: { at: Timestamp.fromMillis(view.deleted.at) } }),
    ...(view.reactions.length > 0 ? { reactions: view.reactions.map((r) => ({ emoji: r.emoji, senderExternalId: r.senderExternalId, at: Timestamp.fromMillis(r.at) })) } : {}),
  };
}

/** The messages stored in the conversation (on the emulators: its message documents). */
export async function messageDocs(integration: TestIntegration, conversationId: string): Promise<DocumentData[]> {
  if (!onTestService) return listMessageDocs(integration.workspaceId, conversationId);
  return Promise.resolve(testService().messages({ integrationId: integration.integrationId, conversationId }).map(messageDocOf));
}

/** One stored message (on the emulators: its document). */
export async function messageDoc(integration: TestIntegration, conversationId: string, messageId: string): Promise<DocumentData | undefined> {
  if (!onTestService) return readMessageDoc(integration.workspaceId, conversationId, messageId);
  const view = testService().messages({ integrationId: integration.integrationId, conversationId }).find((m) => m.messageId === messageId);
  return Promise.resolve(view === undefined ? undefined : messageDocOf(view));
}

/** The SHA-256 of the bytes stored for an image of `messageDoc` (on the emulators: its object in the functions' local store). */
export async function storedImageSha256(image: DocumentData): Promise<string> {
  if (!onTestService) return createHash('sha256').update(await readFile(imageFilePath(String(image.path)))).digest('hex');
  // The test service hashes the bytes it stores (MessageView's `images[].sha256`).
  return Promise.resolve(String(image.sha256));
}

/** Runs the service's sweeper as of `at` (on the emulators: the functions' `sweep`, on the emulated Firestore). */
export async function sweepAt(at: number): Promise<void> {
  if (!onTestService) {
    await sweep(adminDb(), at);
    return;
  }
  testService().sweep(at);
}

/**
 * Resolves once the delivery's notification has left the service: on the emulators, when the
 * transactional outbox holds no entry for it any more (an entry is deleted only after its publish,
 * which comes after the mirror says `queued`); the test service publishes within the reply call.
 */
export async function notificationPublished(deliveryId: string): Promise<void> {
  if (onTestService) return;
  await eventually(async () => ((await adminDb().collection('outbox').where('deliveryId', '==', deliveryId).limit(1).get()).empty ? true : undefined), `the notification of ${deliveryId} published`);
}

/** Lets the integration's replies carry files of these types and sizes (the test service takes every contract type and its limits). */
export async function allowAttachments(integration: TestIntegration, capability: { contentTypes: string[]; maxBytes: number; maxCount: number }): Promise<void> {
  if (!onTestService) return allowUploads(integration.workspaceId, integration.integrationId, capability);
  testService().setCapabilities(integration.integrationId, { attachments: true });
  return Promise.resolve();
}

/** A file of an operator reply, and what the service recorded of it. */
export interface ReplyFileInput {
  bytes: Buffer;
  name: string;
  type: string;
}
export interface StoredAttachment {
  attachmentId: string;
  name: string;
  contentType: string;
  size: number;
  sha256: string;
}

/** The console member who uploads files, one per workspace (emulators only). */
const members = new Map<string, Promise<Member>>();

/**
 * An operator reply with `text` and `files` (on the emulators: uploaded as the upload function
 * stores them by a console member, then written as the console writes a reply); its message id and
 * the attachments as stored, in order.
 */
export async function writeReplyWithFiles(setup: { integration: TestIntegration; conversationId: string }, text: string, files: readonly ReplyFileInput[]): Promise<{ replyId: string; attachments: StoredAttachment[] }> {
  const { integration, conversationId } = setup;
  if (!onTestService) {
    let member = members.get(integration.workspaceId);
    if (member === undefined) {
      member = newMember(integration.workspaceId);
      members.set(integration.workspaceId, member);
    }
    const uploader = await member;
    const attachments: StoredAttachment[] = [];
    for (const file of files) attachments.push(await seedUpload(integration.workspaceId, conversationId, uploader.uid, file));
    return { replyId: await writeReplyWithAttachments(integration.workspaceId, conversationId, uploader, text, attachments), attachments };
  }
  const service = testService();
  const created = service.reply({ conversationId, text, files: files.map((f) => ({ fileName: f.name, contentType: f.type, data: f.bytes })) });
  const view = service.deliveries({ conversationId }).find((d) => d.deliveryId === created.deliveryId);
  return { replyId: created.messageId, attachments: (view?.attachments ?? []).map((a) => ({ ...a })) };
}

/** What the emulator tests read of an erasure's audit. */
export interface ErasureAudit {
  counts: { conversations: number; messages: number };
  /** The connector's first acknowledgement (ms since epoch), undefined before. */
  acknowledgedAt: number | undefined;
}

const erasureDoc = (integration: TestIntegration, erasureId: string) => adminDb().collection('workspaces').doc(integration.workspaceId).collection('erasures').doc(erasureId);

/** An admin erases a customer of the integration (on the emulators: the erasure document as the console writes it); its id. */
export async function requestErasure(integration: TestIntegration, externalCustomerId: string): Promise<string> {
  if (onTestService) return Promise.resolve(testService().erase(integration.integrationId, externalCustomerId).erasureId);
  const erasureId = `er-${randomUUID()}`;
  // What the console writes (the rules accept exactly these fields from an admin).
  await erasureDoc(integration, erasureId).create({ integrationId: integration.integrationId, externalCustomerId, requestedAt: FieldValue.serverTimestamp(), requestedBy: 'admin-e2e' });
  return erasureId;
}

/** The erasure's audit, as it stands (undefined while it runs). */
export async function erasureAudit(integration: TestIntegration, erasureId: string): Promise<ErasureAudit | undefined> {
  if (onTestService) {
    const view = testService().erasures(integration.integrationId).find((e) => e.erasureId === erasureId);
    return Promise.resolve(view === undefined ? undefined : { counts: view.counts, acknowledgedAt: view.acknowledgedAt ?? undefined });
  }
  const d = (await erasureDoc(integration, erasureId).get()).data();
  return d?.status === 'done' ? { counts: d.counts as ErasureAudit['counts'], acknowledgedAt: d.acknowledgedAt as number | undefined } : undefined;
}

/** Waits until the erasure has run (the test service runs it at once); its audit. */
export function erasureDone(integration: TestIntegration, erasureId: string): Promise<ErasureAudit> {
  return eventually(() => erasureAudit(integration, erasureId), `erasure ${erasureId} done`, 60_000);
}

// ------------------------------------------------------------------------------- after the send

/** The integration's `replies.lifecycle` (on the emulators: written on its document, as the console's admin does). */
export async function allowLifecycle(integration: TestIntegration, lifecycle: { edit?: { windowSeconds: number }; unsend?: { windowSeconds: number } }): Promise<void> {
  if (!onTestService) {
    await integrationRef(integration.workspaceId, integration.integrationId).update({ 'replies.lifecycle': lifecycle });
    return;
  }
  testService().setCapabilities(integration.integrationId, { lifecycle });
}

const replyRef = (setup: { integration: TestIntegration; conversationId: string }, messageId: string) =>
  adminDb().collection('workspaces').doc(setup.integration.workspaceId).collection('conversations').doc(setup.conversationId).collection('messages').doc(messageId);

/** The operator edits (or unsends: `text` undefined) a sent reply (on the emulators: the request the console writes; the service's trigger takes it). */
export async function requestLifecycle(setup: { integration: TestIntegration; conversationId: string }, messageId: string, text?: string): Promise<void> {
  if (!onTestService) {
    const request = { requestedAt: FieldValue.serverTimestamp(), uid: 'operator-e2e' };
    await replyRef(setup, messageId).update(text === undefined ? { unsend: request } : { edit: { text, ...request } });
    return;
  }
  if (text === undefined) testService().unsend(messageId);
  else testService().edit(messageId, text);
}

/** One entry of a reply's `edits` / `unsends`, as both targets show it. */
export interface LifecycleEntry {
  deliveryId: string | null;
  status: string;
  text?: string;
  error?: { code: string };
}

/** A reply's edit / unsend history and whether it was unsent (on the emulators: its document). */
export async function replyHistory(setup: { integration: TestIntegration; conversationId: string }, messageId: string): Promise<{ edits: LifecycleEntry[]; unsends: LifecycleEntry[]; unsent: boolean; text: unknown }> {
  const entry = (e: DocumentData): LifecycleEntry => ({
    deliveryId: typeof e.deliveryId === 'string' ? e.deliveryId : null,
    status: String(e.status),
    ...(typeof e.text === 'string' ? { text: e.text } : {}),
    ...(e.error === undefined || e.error === null ? {} : { error: { code: String((e.error as { code: unknown }).code) } }),
  });
  if (!onTestService) {
    const doc = (await replyRef(setup, messageId).get()).data() ?? {};
    const list = (v: unknown): DocumentData[] => (Array.isArray(v) ? (v as DocumentData[]) : []);
    return { edits: list(doc.edits).map(entry), unsends: list(doc.unsends).map(entry), unsent: doc.unsent !== undefined && doc.unsent !== null, text: doc.text };
  }
  const view = testService().replies({ integrationId: setup.integration.integrationId, conversationId: setup.conversationId }).find((r) => r.messageId === messageId);
  return Promise.resolve({
    edits: (view?.edits ?? []).map((e) => entry(e)),
    unsends: (view?.unsends ?? []).map((e) => entry(e)),
    unsent: view?.unsent !== undefined,
    text: view?.text,
  });
}

/** The reactions stored on an operator reply (emoji and sender). */
export async function replyReactions(setup: { integration: TestIntegration; conversationId: string }, messageId: string): Promise<{ emoji: string; senderExternalId: string }[]> {
  if (!onTestService) {
    const doc = (await replyRef(setup, messageId).get()).data() ?? {};
    return (Array.isArray(doc.reactions) ? (doc.reactions as DocumentData[]) : []).map((r) => ({ emoji: String(r.emoji), senderExternalId: String(r.senderExternalId) }));
  }
  const view = testService().replies({ conversationId: setup.conversationId }).find((r) => r.messageId === messageId);
  return Promise.resolve((view?.reactions ?? []).map(({ emoji, senderExternalId }) => ({ emoji, senderExternalId })));
}

/**
 * What the service stored for a chat, by its conversation id: whether its conversation exists (on
 * the emulators its document; the test service keeps a conversation exactly when it holds a
 * message of it), whether someone is shown typing in it, and how many messages it has.
 */
export async function storedForChat(integration: TestIntegration, conversationId: string): Promise<{ conversation: boolean; typing: boolean; messages: number }> {
  const messages = (await messageDocs(integration, conversationId)).length;
  if (!onTestService) {
    const [conversation, typing] = await Promise.all([
      adminDb().doc(`workspaces/${integration.workspaceId}/conversations/${conversationId}`).get(),
      adminDb().doc(`workspaces/${integration.workspaceId}/typing/${conversationId}`).get(),
    ]);
    return { conversation: conversation.exists, typing: typing.exists, messages };
  }
  const typing = testService().typing({ integrationId: integration.integrationId }).some((t) => t.conversationId === conversationId);
  return { conversation: messages > 0, typing, messages };
}

/** A template reply of the operator (on the emulators: written as the console writes it); its message id. */
export async function writeTemplateReply(setup: { integration: TestIntegration; conversationId: string }, template: { name: string; language: string; params: Record<string, string> }): Promise<string> {
  if (onTestService) return testService().reply({ conversationId: setup.conversationId, template }).messageId;
  const ref = adminDb().collection('workspaces').doc(setup.integration.workspaceId).collection('conversations').doc(setup.conversationId).collection('messages').doc();
  await ref.create({ direction: 'outbound', author: { type: 'operator', uid: 'operator-e2e' }, template, createdAt: FieldValue.serverTimestamp() });
  return ref.id;
}

// ------------------------------------------------------------------ conversations the desk starts

/** The integration's `conversations.start.addressKinds` (on the emulators: written on its document, as the console's admin does). */
export async function allowStarts(integration: TestIntegration, addressKinds: Array<'phone' | 'email' | 'handle'>): Promise<void> {
  if (!onTestService) {
    await integrationRef(integration.workspaceId, integration.integrationId).update({ conversations: { start: { addressKinds } } });
    return;
  }
  testService().setCapabilities(integration.integrationId, { conversations: { start: { addressKinds } } });
}

/** A member's start request and the service's answer on it. */
export interface DeskStart {
  startId: string;
  /** The started conversation (`reused`: the known address's). */
  conversationId: string;
  reused: boolean;
  /** The start's message (the start delivery's `messageId`). */
  messageId: string;
}

/**
 * A member starts a conversation (on the emulators: the start document the console writes, then the
 * service's answer on it); throws with the refusal's code when the service refuses it.
 */
export async function deskStart(integration: TestIntegration, request: { to: { kind: 'phone' | 'email' | 'handle'; value: string }; text?: string; template?: { name: string; language: string; params: Record<string, string> } }): Promise<DeskStart> {
  const first = request.template === undefined ? { text: request.text ?? '' } : { template: request.template };
  if (onTestService) {
    const started = testService().startConversation({ integrationId: integration.integrationId, to: request.to, ...first });
    if (started.result === undefined) throw new Error(`the start was refused: ${started.error?.code ?? '?'} ${started.error?.message ?? ''}`);
    return { startId: started.startId, ...started.result, messageId: startMessageId(integration.integrationId, started.startId) };
  }
  const ref = adminDb().collection('workspaces').doc(integration.workspaceId).collection('conversationStarts').doc();
  await ref.create({ integrationId: integration.integrationId, to: request.to, ...first, uid: 'operator-e2e', requestedAt: FieldValue.serverTimestamp() });
  const answer = await eventually(async () => {
    const data = (await ref.get()).data();
    return data?.result !== undefined || data?.error !== undefined ? data : undefined;
  }, `the answer of start ${ref.id}`, 60_000);
  if (answer.result === undefined) throw new Error(`the start was refused: ${String(answer.error?.code)} ${String(answer.error?.message ?? '')}`);
  return { startId: ref.id, conversationId: String(answer.result.conversationId), reused: answer.result.reused === true, messageId: startMessageId(integration.integrationId, ref.id) };
}

/** The start's delivery record (the fields both targets show) once `predicate` holds. */
export function startDeliveryDoc(integration: TestIntegration, start: DeskStart, predicate: (doc: DocumentData) => boolean, timeoutMs: number): Promise<DocumentData> {
  return eventually(async () => {
    let doc: DocumentData | undefined;
    if (onTestService) {
      const view = testService().deliveries({ integrationId: integration.integrationId }).find((d) => d.messageId === start.messageId && d.start !== undefined);
      doc = view === undefined ? undefined : { ...deliveryDocOf(view), conversationId: view.conversationId, start: view.start };
    } else {
      const found = await adminDb().collection('workspaces').doc(integration.workspaceId).collection('deliveries').where('messageId', '==', start.messageId).get();
      doc = found.docs.map((d) => d.data()).find((d) => d.start !== undefined);
    }
    return doc !== undefined && predicate(doc) ? doc : undefined;
  }, `the delivery of start ${start.startId}`, timeoutMs);
}

/**
 * The conversation a member's next reply in a started conversation goes to: on the emulators the
 * started conversation's `mergedInto` once the start joined its thread (the console follows it);
 * the test service follows it itself, so there it is the started conversation.
 */
export async function followMergedInto(integration: TestIntegration, conversationId: string): Promise<string> {
  if (onTestService) return conversationId;
  const data = (await adminDb().collection('workspaces').doc(integration.workspaceId).collection('conversations').doc(conversationId).get()).data();
  return typeof data?.mergedInto === 'string' ? data.mergedInto : conversationId;
}
