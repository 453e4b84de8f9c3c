/**
 * The desk CLI's commands (docs/cli.md), each through the console's own data modules: the same
 * reads, the same writes (exactly what firestore.rules accept), the same checks before a write
 * and the same sentences when the rules refuse one. Uploads go through the console's endpoint
 * with the signed-in user's ID token, as the console's composer does.
 */
import { readFile } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import type { Unsubscribe } from 'firebase/firestore';
import { doc, getDoc } from 'firebase/firestore';
import { allShards, CONVERSATION_LIST_SHARDS, REPLY_MAX_CODE_POINTS } from '../../functions/src/contract';
import { ATTACHMENT_CONTENT_TYPES, ATTACHMENT_MAX_BYTES, ATTACHMENT_MAX_COUNT, capabilityProblem, fileProblem, uploadErrorText, type AttachmentCapability, type UploadedAttachment } from '../src/attachments';
import { requestStart, subscribeStartAnswer, type StartAnswer, type StartRequest } from '../src/conversation-start-data';
import { CustomerNames } from '../src/customers';
import { describeError, errorCode } from '../src/errors';
import { replyProblem } from '../src/format';
import { setReplyAttachments, setReplyLifecycle, subscribeIntegrations, type Integration } from '../src/integrations-data';
import { editProblem, entryFor, lifecycleProblem, shownText, typingShown, type LifecycleCapability, type LifecycleEntry } from '../src/lifecycle';
import { requestErasure, subscribeErasures, subscribeIntegrationNames, type Erasure } from '../src/privacy-data';
import type { Session } from '../src/session';
import { addressKindLabel, startErrorText } from '../src/start-format';
import { findTemplate, templateChoice, templateLabel, templateProblem } from '../src/template-format';
import { requestCancel, requestEdit, requestResend, requestUnsend, sendReply, subscribeConversation, subscribeMessages, subscribeReplyCapability, subscribeTyping, type InboundMessage, type OutboundMessage, type ThreadMessage, type Typing } from '../src/thread-data';
import type { Command } from './args';
import { listConversations } from './conversations';
import { renderCapabilities, renderConversations, renderCustomerMessage, renderErasure, renderErasures, renderReply, renderTyping, type CapabilitiesView, type TypingView } from './render';

/** Where the CLI writes: stdout and stderr, a line (or block) at a time. */
export interface Io {
  out(text: string): void;
  err(text: string): void;
}

interface Context {
  /** The Hosting emulator's base URL (the console endpoints are under it, as for the console). */
  baseUrl: string;
  json: boolean;
}

/** A failure the CLI explains itself: its sentence, a code for `--json`, and the exit status. */
export class DeskError extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly exitStatus: 1 | 2 = 1,
  ) {
    super(message);
  }
}

// The console's sentences for what the rules require (console/src/thread.ts, integrations.ts, privacy.ts).
const REPLY_RULE = `replies must be 1 to ${REPLY_MAX_CODE_POINTS} characters (or empty with files), written by a member of the workspace in an existing conversation, with at most the integration's number of uploaded files`;
const CANCEL_RULE = 'a member may cancel only an operator reply the service has already queued, and write nothing else';
const RESEND_RULE = 'a resend may be requested only once per failed or unknown delivery';
const EDIT_RULE = `a member may edit only a sent operator reply of an integration that allows edits, within its window, with 1 to ${REPLY_MAX_CODE_POINTS} characters, and not once it was unsent`;
const UNSEND_RULE = 'a member may unsend only a sent operator reply of an integration that allows unsends, within its window, once';
const INTEGRATIONS_ADMINS_ONLY = 'only workspace admins may create or change integrations, and only the fields the contract lists';
const START_RULE = `a start names an integration that allows it, an address of an allowed kind, and a text of 1 to ${REPLY_MAX_CODE_POINTS} characters or a template the channel declared (a template when the channel has a reply window)`;
const PRIVACY_ADMINS_ONLY = 'only workspace admins may change retention or request erasures and exports, with exactly the fields the contract lists';

/** A write (or read), with the rules' reason when they refuse it. */
async function write<T>(promise: Promise<T>, deniedBecause: string): Promise<T> {
  try {
    return await promise;
  } catch (err) {
    if (err instanceof DeskError) throw err;
    throw new DeskError(describeError(err, deniedBecause), errorCode(err) ?? 'failed');
  }
}

type Subscribe<T> = (onValue: (value: T) => void, onError: (err: unknown) => void) => Unsubscribe;

/**
 * How often a wait opens its listener afresh while what it waits for has not come. A listener
 * that has gone quiet is not an error the SDK reports: on the emulator under the test suites' load,
 * a `resend`'s new delivery, written two seconds after the command's write, never reached its
 * listener in 60 s (twice in a day's fresh-clone runs, 2026-12-05). A listener opened again
 * reads the documents as they are now.
 */
const RELISTEN_MS = 10_000;

/**
 * Listens with one of the console's subscriptions until `done(value)` holds or `waitMs` passed;
 * resolves to the last value and whether it was done. With `waitMs` 0 it takes the first value:
 * in a fresh process the SDK's first answer to a listener is the server's (its cache is empty).
 * A longer wait opens its listener again every RELISTEN_MS until done.
 */
function listen<T>(subscribe: Subscribe<T>, done: (value: T) => boolean, waitMs: number, readDenied: string): Promise<{ value: T; done: boolean }> {
  return new Promise((resolve, reject) => {
    let last: { value: T } | undefined;
    let settled = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let relisten: ReturnType<typeof setInterval> | undefined;
    const finish = (outcome: () => void): void => {
      if (settled) return;
      settled = true;
      if (timer !== undefined) clearTimeout(timer);
      if (relisten !== undefined) clearInterval(relisten);
      // Callbacks come asynchronously, after `subscribe` returned; a microtask keeps the SDK's
      // own callback from unsubscribing itself while it runs.
      const current = unsubscribe;
      queueMicrotask(() => current());
      outcome();
    };
    const open = (): Unsubscribe =>
      subscribe(
        (value) => {
          last = { value };
          const isDone = done(value);
          if (isDone || waitMs === 0) finish(() => resolve({ value, done: isDone }));
        },
        (err) => finish(() => reject(new DeskError(describeError(err, readDenied), errorCode(err) ?? 'failed'))),
      );
    let unsubscribe = open();
    if (waitMs > RELISTEN_MS) {
      relisten = setInterval(() => {
        if (settled) return;
        // The old listener first: a second listener on the same query would share its target (the
        // SDK keeps one per query) and see the same quiet view; alone, the new one asks the server.
        unsubscribe();
        unsubscribe = open();
      }, RELISTEN_MS);
    }
    if (waitMs > 0) {
      timer = setTimeout(() => {
        const seen = last;
        if (seen !== undefined) finish(() => resolve({ value: seen.value, done: false }));
        else finish(() => reject(new DeskError(`no answer from Firestore within ${Math.round(waitMs / 1000)} s`, 'unavailable')));
      }, waitMs);
    }
  });
}

/** The first value of a console subscription. */
async function once<T>(subscribe: Subscribe<T>, readDenied: string): Promise<T> {
  return (await listen(subscribe, () => true, 0, readDenied)).value;
}

const MESSAGES_READ = 'only members of the workspace may read its messages';
const CONVERSATIONS_READ = 'only members of the workspace may read its conversations';
/** The thread's window, as the console opens it. */
const THREAD_MESSAGES = 200;

async function conversationHeader(session: Session, conversationId: string) {
  const header = await once<Parameters<Parameters<typeof subscribeConversation>[2]>[0]>((on, onError) => subscribeConversation(session, conversationId, on, onError), CONVERSATIONS_READ);
  if (header === undefined) throw new DeskError(`no conversation ${conversationId} in workspace ${session.workspaceId} (\`npm run desk -- conversations\` lists them)`, 'conversation_not_found');
  return header;
}

const threadOf = (session: Session, conversationId: string): Subscribe<ThreadMessage[]> => (on, onError) => subscribeMessages(session, conversationId, THREAD_MESSAGES, on, onError);
const replies = (messages: ThreadMessage[]): OutboundMessage[] => messages.filter((m): m is OutboundMessage => m.direction === 'outbound');

async function findReply(session: Session, conversationId: string, replyId: string): Promise<OutboundMessage> {
  await conversationHeader(session, conversationId);
  const reply = replies(await once(threadOf(session, conversationId), MESSAGES_READ)).find((m) => m.id === replyId);
  if (reply === undefined) throw new DeskError(`no operator reply ${replyId} in conversation ${conversationId} (\`npm run desk -- status ${conversationId}\` lists them)`, 'reply_not_found');
  return reply;
}

/** Waits until the reply matches `done` (or the wait ends); the reply as last seen. */
async function watchReply(session: Session, conversationId: string, replyId: string, done: (reply: OutboundMessage) => boolean, waitSeconds: number): Promise<{ reply: OutboundMessage | undefined; done: boolean }> {
  const found = (messages: ThreadMessage[]) => replies(messages).find((m) => m.id === replyId);
  const { value, done: isDone } = await listen(
    threadOf(session, conversationId),
    (messages) => {
      const reply = found(messages);
      return reply !== undefined && done(reply);
    },
    waitSeconds * 1000,
    MESSAGES_READ,
  );
  return { reply: found(value), done: isDone };
}

const FINAL = new Set(['sent', 'failed', 'unknown']);

/** The declared type of a file (a browser declares one from the name; the service sniffs the bytes and compares). */
function declaredType(path: string): string {
  const types: Record<string, string> = { '.png': 'image/png', '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg', '.webp': 'image/webp', '.gif': 'image/gif', '.pdf': 'application/pdf', '.txt': 'text/plain' };
  return types[extname(path).toLowerCase()] ?? '';
}

/** `POST /console/v1/attachments` with the member's ID token (console/src/media.ts `uploadAttachment`, without the browser's progress events). */
async function upload(session: Session, baseUrl: string, conversationId: string, file: { name: string; type: string; bytes: Uint8Array<ArrayBuffer> }): Promise<UploadedAttachment> {
  const token = await session.user.getIdToken();
  const form = new FormData();
  form.append('workspaceId', session.workspaceId);
  form.append('conversationId', conversationId);
  form.append('file', new Blob([file.bytes], file.type === '' ? {} : { type: file.type }), file.name);
  let res: Response;
  try {
    res = await fetch(`${baseUrl}/console/v1/attachments`, { method: 'POST', headers: { Authorization: `Bearer ${token}` }, body: form });
  } catch {
    throw new DeskError(`cannot upload ${file.name}: nothing answers at ${baseUrl} (the Hosting emulator); is the local stack running?`, 'unavailable');
  }
  const body = await res.text();
  if (res.status !== 201) {
    const code = (() => {
      try {
        return (JSON.parse(body) as { error?: { code?: string } }).error?.code;
      } catch {
        return undefined;
      }
    })();
    throw new DeskError(`upload of ${file.name} refused: ${uploadErrorText(res.status, body)}`, code ?? `http_${res.status}`);
  }
  return JSON.parse(body) as UploadedAttachment;
}

async function reply(command: Extract<Command, { name: 'reply' }>, session: Session, context: Context, io: Io): Promise<void> {
  const problem = replyProblem(command.text, command.files.length);
  if (problem !== undefined) throw new DeskError(problem, 'invalid_reply');
  const header = await conversationHeader(session, command.conversationId);

  const uploaded: UploadedAttachment[] = [];
  if (command.files.length > 0) {
    const integrationId = header.integrationId ?? '';
    const capability = await once<AttachmentCapability | undefined>((on, onError) => subscribeReplyCapability(session, integrationId, (c) => on(c.attachments), onError), 'only members of the workspace may read its integrations');
    if (capability === undefined) {
      throw new DeskError(`integration ${integrationId} takes no files (its replies are text only): an admin allows them with \`npm run desk -- capabilities ${integrationId} --attachments on\``, 'attachments_unsupported');
    }
    // The composer's checks before any upload (count, size, the 20 MB total, the type as a hint).
    const files: { name: string; type: string; bytes: Uint8Array<ArrayBuffer> }[] = [];
    for (const path of command.files) {
      let bytes: Uint8Array<ArrayBuffer>;
      try {
        bytes = new Uint8Array(await readFile(path));
      } catch (err) {
        throw new DeskError(`cannot read ${path}: ${err instanceof Error ? err.message : String(err)}`, 'file_unreadable');
      }
      const file = { name: basename(path), type: declaredType(path), bytes };
      const tooMuch = fileProblem({ name: file.name, size: bytes.byteLength, type: file.type }, capability, files.map((f) => f.bytes.byteLength));
      if (tooMuch !== undefined) throw new DeskError(tooMuch, 'attachment_refused');
      files.push(file);
    }
    for (const file of files) uploaded.push(await upload(session, context.baseUrl, command.conversationId, file));
  }

  const replyId = await write(sendReply(session, command.conversationId, command.text, uploaded), REPLY_RULE);
  if (!context.json) io.out(`Reply ${replyId} written in ${command.conversationId}${uploaded.length > 0 ? ` with ${uploaded.map((u) => u.name).join(', ')}` : ''}.`);
  let seen: OutboundMessage | undefined;
  let final = false;
  if (command.waitSeconds > 0) {
    const watched = await watchReply(session, command.conversationId, replyId, (r) => FINAL.has(r.delivery?.status ?? ''), command.waitSeconds);
    seen = watched.reply;
    final = watched.done;
  }
  if (context.json) {
    io.out(JSON.stringify({ conversationId: command.conversationId, replyId, attachments: uploaded, reply: seen ?? null, final }, null, 2));
    return;
  }
  if (seen !== undefined) {
    io.out(renderReply(seen, Date.now(), session.user.uid));
    if (!final) io.out(`(not final after ${command.waitSeconds} s: a connector delivers it once it claims it; \`npm run desk -- status ${command.conversationId} ${replyId}\` shows it later)`);
  }
}

async function status(command: Extract<Command, { name: 'status' }>, session: Session, context: Context, io: Io): Promise<void> {
  const header = await conversationHeader(session, command.conversationId);
  const messages = await once(threadOf(session, command.conversationId), MESSAGES_READ);
  let list = replies(messages);
  if (command.replyId !== undefined) {
    list = list.filter((r) => r.id === command.replyId);
    if (list.length === 0) throw new DeskError(`no operator reply ${command.replyId} in conversation ${command.conversationId}`, 'reply_not_found');
  }
  // Customers' messages with something after their arrival (an edit, a deletion, a reaction).
  const changed = command.replyId === undefined ? messages.filter((m): m is InboundMessage => m.direction === 'inbound' && (m.edits.length > 0 || m.deleted !== undefined || m.reactions.length > 0)) : [];
  // Who is typing: the service's typing document of the conversation (a minute at most), shown as
  // the console shows it: "typing" for 8 s after the latest typing event, quiet after that.
  const typingDoc = await once<Typing | undefined>((on, onError) => subscribeTyping(session, command.conversationId, on, onError), CONVERSATIONS_READ);
  const now = Date.now();
  const typing: TypingView | null = typingDoc === undefined ? null : { ...typingDoc, typingNow: typingShown(typingDoc.atMs, now) };
  if (context.json) {
    io.out(JSON.stringify({ conversationId: command.conversationId, ...header, typing, replies: list, customerMessages: changed }, null, 2));
    return;
  }
  io.out(`Conversation ${command.conversationId} (${header.integrationId ?? '?'} / ${header.externalConversationId}${header.customerExternalId === undefined ? '' : `, customer ${header.customerExternalId}`}): ${list.length} ${list.length === 1 ? 'reply' : 'replies'}, oldest first`);
  io.out(renderTyping(typing, now));
  for (const r of list) io.out(`\n${renderReply(r, now, session.user.uid)}`);
  if (changed.length > 0) {
    io.out(`\nCustomer messages edited, deleted or reacted to (${changed.length}), oldest first:`);
    for (const m of changed) io.out(`\n${renderCustomerMessage(m, now)}`);
  }
}

async function cancel(command: Extract<Command, { name: 'cancel' }>, session: Session, context: Context, io: Io): Promise<void> {
  const before = await findReply(session, command.conversationId, command.replyId);
  await write(requestCancel(session, command.conversationId, command.replyId), CANCEL_RULE);
  if (!context.json) io.out(`Cancel requested for reply ${command.replyId}.`);
  const answered = (r: OutboundMessage): boolean =>
    r.delivery?.cancel !== undefined && r.delivery.deliveryId === before.delivery?.deliveryId && (before.delivery?.cancel === undefined || (r.delivery.updatedAtMs ?? 0) > (before.delivery.updatedAtMs ?? 0));
  const watched = command.waitSeconds > 0 ? await watchReply(session, command.conversationId, command.replyId, answered, command.waitSeconds) : { reply: undefined, done: false };
  if (context.json) {
    io.out(JSON.stringify({ conversationId: command.conversationId, replyId: command.replyId, outcome: watched.done ? (watched.reply?.delivery?.cancel ?? null) : null, reply: watched.reply ?? null }, null, 2));
    return;
  }
  if (watched.reply !== undefined) {
    io.out(renderReply(watched.reply, Date.now(), session.user.uid));
    if (!watched.done) io.out(`(the service has not answered within ${command.waitSeconds} s)`);
  }
}

async function resend(command: Extract<Command, { name: 'resend' }>, session: Session, context: Context, io: Io): Promise<void> {
  const before = await findReply(session, command.conversationId, command.replyId);
  await write(requestResend(session, command.conversationId, command.replyId), RESEND_RULE);
  if (!context.json) io.out(`Resend requested for reply ${command.replyId}.`);
  // A resend that took effect replaced the mirror with the new delivery's.
  const replaced = (r: OutboundMessage): boolean => r.delivery?.deliveryId !== undefined && r.delivery.deliveryId !== before.delivery?.deliveryId;
  const watched = command.waitSeconds > 0 ? await watchReply(session, command.conversationId, command.replyId, replaced, command.waitSeconds) : { reply: undefined, done: false };
  if (context.json) {
    io.out(JSON.stringify({ conversationId: command.conversationId, replyId: command.replyId, previousDeliveryId: before.delivery?.deliveryId ?? null, deliveryId: watched.done ? (watched.reply?.delivery?.deliveryId ?? null) : null, reply: watched.reply ?? null }, null, 2));
    return;
  }
  if (watched.reply !== undefined) {
    io.out(renderReply(watched.reply, Date.now(), session.user.uid));
    if (!watched.done) io.out(`(no new delivery within ${command.waitSeconds} s)`);
  }
}

async function capabilities(command: Extract<Command, { name: 'capabilities' }>, session: Session, context: Context, io: Io): Promise<void> {
  const integrations = await once<Integration[]>((on, onError) => subscribeIntegrations(session, on, onError), 'only members of the workspace may read its integrations');
  const integration = integrations.find((i) => i.id === command.integrationId);
  if (integration === undefined) {
    throw new DeskError(`no integration ${command.integrationId} in workspace ${session.workspaceId} (it has ${integrations.length === 0 ? 'none' : integrations.map((i) => i.id).join(', ')})`, 'integration_not_found');
  }
  // Nothing is written when a part of the request cannot be: both are checked before either write.
  const lifecycleRequest = command.lifecycle;
  if (lifecycleRequest !== undefined && lifecycleRequest !== 'off') {
    const problem = lifecycleProblem(lifecycleRequest);
    if (problem !== undefined) throw new DeskError(`${problem} Nothing was written.`, 'invalid_capability');
  }
  let attachments = integration.attachments;
  let changed = false;
  if (command.attachments === 'on') {
    const capability: AttachmentCapability = {
      contentTypes: (command.contentTypes ?? [...ATTACHMENT_CONTENT_TYPES]) as AttachmentCapability['contentTypes'],
      maxBytes: command.maxBytes ?? ATTACHMENT_MAX_BYTES,
      maxCount: command.maxCount ?? ATTACHMENT_MAX_COUNT,
    };
    // The console's form check (the rules' conditions in words) before the write.
    const problem = capabilityProblem(capability);
    if (problem !== undefined) throw new DeskError(`${problem} Nothing was written.`, 'invalid_capability');
    await write(setReplyAttachments(session, integration.id, capability), INTEGRATIONS_ADMINS_ONLY);
    attachments = capability;
    changed = true;
  } else if (command.attachments === 'off') {
    await write(setReplyAttachments(session, integration.id, undefined), INTEGRATIONS_ADMINS_ONLY);
    attachments = undefined;
    changed = true;
  }
  let lifecycle: LifecycleCapability | undefined = integration.lifecycle;
  if (lifecycleRequest !== undefined) {
    lifecycle = lifecycleRequest === 'off' ? undefined : lifecycleRequest;
    await write(setReplyLifecycle(session, integration.id, lifecycle), INTEGRATIONS_ADMINS_ONLY);
    changed = true;
  }
  const view: CapabilitiesView = { integrationId: integration.id, name: integration.name, active: integration.active, attachments: attachments ?? null, lifecycle: lifecycle ?? null, changed };
  io.out(context.json ? JSON.stringify(view, null, 2) : renderCapabilities(view));
}

const FINAL_REQUEST = new Set<string | undefined>(['sent', 'failed', 'unknown']);

/** The service's answer to `request` (its entry in `edits` or `unsends`), once its delivery is final. */
function finalEntry(entries: readonly LifecycleEntry[], request: { requestedAtMs: number | undefined; uid: string | undefined } | undefined): LifecycleEntry | undefined {
  const entry = entryFor(entries, request);
  return entry !== undefined && FINAL_REQUEST.has(entry.status) ? entry : undefined;
}

async function edit(command: Extract<Command, { name: 'edit' }>, session: Session, context: Context, io: Io): Promise<void> {
  const before = await findReply(session, command.conversationId, command.replyId);
  // The text's bounds as the console's edit form checks them; the rest (capability, window, sent
  // state, not unsent) is the rules' to decide, and their refusal says why.
  const problem = editProblem(command.text, shownText(before).text);
  if (problem !== undefined) throw new DeskError(problem, 'invalid_edit');
  await write(requestEdit(session, command.conversationId, command.replyId, command.text), EDIT_RULE);
  await awaitRequestOutcome('edit', command, session, context, io, (r) => (r.editRequest?.uid === session.user.uid ? finalEntry(r.edits, r.editRequest) : undefined));
}

async function unsend(command: Extract<Command, { name: 'unsend' }>, session: Session, context: Context, io: Io): Promise<void> {
  await findReply(session, command.conversationId, command.replyId);
  await write(requestUnsend(session, command.conversationId, command.replyId), UNSEND_RULE);
  await awaitRequestOutcome('unsend', command, session, context, io, (r) => (r.unsendRequest?.uid === session.user.uid ? finalEntry(r.unsends, r.unsendRequest) : undefined));
}

/**
 * After an edit or unsend request was written: says so, waits (up to `waitSeconds`) until `mine`
 * finds this user's request final in the reply's history, and prints the reply (or, with `--json`,
 * `{ conversationId, replyId, outcome, reply }`).
 */
async function awaitRequestOutcome<E>(
  kind: 'edit' | 'unsend',
  command: { conversationId: string; replyId: string; waitSeconds: number },
  session: Session,
  context: Context,
  io: Io,
  mine: (reply: OutboundMessage) => E | undefined,
): Promise<void> {
  if (!context.json) io.out(`${kind === 'edit' ? 'Edit' : 'Unsend'} requested for reply ${command.replyId}.`);
  const watched = command.waitSeconds > 0 ? await watchReply(session, command.conversationId, command.replyId, (r) => mine(r) !== undefined, command.waitSeconds) : { reply: undefined, done: false };
  const outcome = watched.reply === undefined ? undefined : mine(watched.reply);
  if (context.json) {
    io.out(JSON.stringify({ conversationId: command.conversationId, replyId: command.replyId, outcome: outcome ?? null, reply: watched.reply ?? null }, null, 2));
    return;
  }
  if (watched.reply !== undefined) {
    io.out(renderReply(watched.reply, Date.now(), session.user.uid));
    if (!watched.done) io.out(`(the ${kind} is not final after ${command.waitSeconds} s: a connector delivers it once it claims it)`);
  }
}

const ERASURES_READ = 'only workspace admins may read erasures';

/** The service's customer id (`u_` + 32 base64url characters, console/src/format.ts `customerDocId`). */
const CUSTOMER_ID = /^u_[A-Za-z0-9_-]{32}$/;

async function erase(command: Extract<Command, { name: 'erase' }>, session: Session, context: Context, io: Io): Promise<void> {
  let integrationId = command.integrationId;
  let externalCustomerId = command.customer;
  if (CUSTOMER_ID.test(command.customer)) {
    // A customer id: the customer document (members may read it) names the integration and the external id.
    const snap = await write(getDoc(doc(session.services.db, 'workspaces', session.workspaceId, 'customers', command.customer)), 'only members of the workspace may read its customers');
    if (!snap.exists()) throw new DeskError(`no customer ${command.customer} in workspace ${session.workspaceId}`, 'customer_not_found');
    const stored = { integrationId: snap.get('integrationId') as unknown, externalId: snap.get('externalId') as unknown };
    if (typeof stored.integrationId !== 'string' || typeof stored.externalId !== 'string') throw new DeskError(`customer ${command.customer} names no integration and external id`, 'customer_not_found');
    if (integrationId !== undefined && integrationId !== stored.integrationId) throw new DeskError(`customer ${command.customer} belongs to integration ${stored.integrationId}, not ${integrationId}`, 'customer_not_found');
    integrationId = stored.integrationId;
    externalCustomerId = stored.externalId;
  } else if (integrationId === undefined) {
    const names = await once<{ id: string }[]>((on, onError) => subscribeIntegrationNames(session, on, onError), 'only members of the workspace may read its integrations');
    if (names.length !== 1) {
      throw new DeskError(`an external customer id belongs to one integration, and workspace ${session.workspaceId} has ${names.length === 0 ? 'none' : `${names.length} (${names.map((n) => n.id).join(', ')})`}: name it with --integration <id>`, 'integration_required', 2);
    }
    integrationId = (names[0] as { id: string }).id;
  }
  const erasureId = await write(requestErasure(session, { integrationId, externalCustomerId }), PRIVACY_ADMINS_ONLY);
  if (!context.json) io.out(`Erasure ${erasureId} requested: customer ${externalCustomerId} of integration ${integrationId}.`);
  let erasure: Erasure | undefined;
  let done = false;
  if (command.waitSeconds > 0) {
    const watched = await listen<Erasure[]>(
      (on, onError) => subscribeErasures(session, on, onError),
      (list) => list.find((e) => e.id === erasureId)?.audit.status === 'done',
      command.waitSeconds * 1000,
      ERASURES_READ,
    );
    erasure = watched.value.find((e) => e.id === erasureId);
    done = watched.done;
  }
  if (context.json) {
    io.out(JSON.stringify({ erasureId, integrationId, externalCustomerId, erasure: erasure ?? null, done }, null, 2));
    return;
  }
  if (erasure !== undefined) io.out(renderErasure(erasure, Date.now(), session.user.uid));
  if (command.waitSeconds > 0 && !done) io.out(`(not done after ${command.waitSeconds} s: the service erases in the background)`);
}

/** The latest erasures (as the console's Privacy view lists them), each with the connector's acknowledgement; `--pending`: those not acknowledged. */
async function erasures(command: Extract<Command, { name: 'erasures' }>, session: Session, context: Context, io: Io): Promise<void> {
  const all = await once<Erasure[]>((on, onError) => subscribeErasures(session, on, onError), ERASURES_READ);
  const list = command.pending ? all.filter((e) => e.audit.acknowledgedAt === undefined) : all;
  io.out(context.json ? JSON.stringify(list, null, 2) : renderErasures(list, { workspaceId: session.workspaceId, pendingOnly: command.pending, selfUid: session.user.uid }, Date.now()));
}

const INTEGRATIONS_READ = 'only members of the workspace may read its integrations';

/**
 * The start request `command` describes on `integration`, or why it cannot be written: the New
 * conversation form's checks (console/src/conversation-start.ts: only an active integration with
 * address kinds is offered, only its kinds, a template on a windowed channel, the template's params
 * as its picker checks them), so that nothing is written the rules or the service would refuse for them.
 */
function startRequest(command: Extract<Command, { name: 'start' }>, integration: Integration): StartRequest {
  const kinds = integration.startKinds;
  if (!integration.active || kinds === undefined) {
    throw new DeskError(`integration ${integration.id} does not let members start conversations${integration.active ? '' : ' (it is inactive)'}: an admin allows it on the integration (Integrations, "Conversations the desk starts"). Nothing was written.`, 'starts_disabled');
  }
  const { kind, value } = command.to;
  if (!kinds.includes(kind)) throw new DeskError(`integration ${integration.id} starts conversations by ${kinds.map(addressKindLabel).join(' or ')}, not by ${addressKindLabel(kind)}. Nothing was written.`, 'address_kind_not_allowed');
  const templates = integration.channel?.templates ?? [];
  const declared = templates.length === 0 ? 'it declares none' : `it declares ${templates.map(templateLabel).join(', ')}`;
  if ('text' in command.first) {
    if (integration.channel?.windowSeconds != null) {
      throw new DeskError(`this channel has a reply window and the customer has not written yet: the first message is a template (--template name:language; ${declared}). Nothing was written.`, 'template_required');
    }
    return { integrationId: integration.id, to: { kind, value }, first: { text: command.first.text } };
  }
  const asked = command.first.template;
  const template = findTemplate(templates, asked);
  if (template === undefined) throw new DeskError(`the channel declares no template ${templateLabel(asked)} (${declared}). Nothing was written.`, 'template_invalid');
  const known = new Set(template.params.map((p) => p.name));
  const unknown = Object.keys(asked.params).filter((name) => !known.has(name));
  if (unknown.length > 0) {
    const takes = template.params.length === 0 ? 'no params' : `the params ${template.params.map((p) => p.name).join(', ')}`;
    throw new DeskError(`template ${templateLabel(template)} takes ${takes}, not ${unknown.join(', ')}. Nothing was written.`, 'template_invalid');
  }
  const problem = templateProblem(template, asked.params);
  if (problem !== undefined) throw new DeskError(`template ${templateLabel(template)}: ${problem} (--param name=value) Nothing was written.`, 'template_invalid');
  return { integrationId: integration.id, to: { kind, value }, first: { template: templateChoice(template, asked.params) } };
}

/**
 * Starts a conversation as New conversation does: the form's checks against the integration, the
 * console's write (conversation-start-data.ts `requestStart`), then the service's answer on the
 * start document (`subscribeStartAnswer`), waited for up to `waitSeconds`.
 */
async function start(command: Extract<Command, { name: 'start' }>, session: Session, context: Context, io: Io): Promise<void> {
  const rows = await once<Integration[]>((on, onError) => subscribeIntegrations(session, on, onError), INTEGRATIONS_READ);
  const integration = rows.find((r) => r.id === command.integrationId);
  if (integration === undefined) {
    const startable = rows.filter((r) => r.active && r.startKinds !== undefined).map((r) => r.id);
    throw new DeskError(`no integration ${command.integrationId} in workspace ${session.workspaceId} (${startable.length === 0 ? 'none of its integrations lets members start conversations' : `those that let members start conversations: ${startable.join(', ')}`})`, 'integration_not_found');
  }
  const request = startRequest(command, integration);
  const startId = await write(requestStart(session, request), START_RULE);
  if (!context.json) io.out(`Start ${startId} requested: ${addressKindLabel(request.to.kind)} ${request.to.value} on integration ${integration.id}.`);
  const { value: answer, done } = await listen<StartAnswer | undefined>(
    (on, onError) => subscribeStartAnswer(session, startId, on, onError),
    (a) => a !== undefined,
    command.waitSeconds * 1000,
    'only members of the workspace may read conversation starts',
  );
  if (!done || answer === undefined) {
    throw new DeskError(`no answer from the service within ${command.waitSeconds} s on start ${startId} (the request is written: the service answers on workspaces/${session.workspaceId}/conversationStarts/${startId}; is the local stack's start trigger running?)`, 'start_unanswered');
  }
  if (answer.kind === 'error') throw new DeskError(startErrorText(answer.code, answer.message), answer.code);
  if (context.json) {
    io.out(JSON.stringify({ startId, conversationId: answer.conversationId, reused: answer.reused }, null, 2));
    return;
  }
  io.out(
    answer.reused
      ? `Conversation ${answer.conversationId}: this customer already has it, and the message was added to it (reused).`
      : `Conversation ${answer.conversationId} started; its connector delivers the first message (\`npm run desk -- status ${answer.conversationId}\` follows it).`,
  );
}

async function conversations(command: Extract<Command, { name: 'conversations' }>, session: Session, context: Context, io: Io): Promise<void> {
  const rows = await write(
    listConversations(session, command.limit, allShards(CONVERSATION_LIST_SHARDS), new CustomerNames(session.services.db, session.workspaceId), (conversationId) => once(threadOf(session, conversationId), MESSAGES_READ)),
    CONVERSATIONS_READ,
  );
  io.out(context.json ? JSON.stringify(rows, null, 2) : renderConversations(rows, session.workspaceId, Date.now()));
}

/** Runs one parsed command (not `help`) as the signed-in member. */
export async function runCommand(command: Exclude<Command, { name: 'help' }>, session: Session, context: Context, io: Io): Promise<void> {
  switch (command.name) {
    case 'conversations':
      return conversations(command, session, context, io);
    case 'start':
      return start(command, session, context, io);
    case 'reply':
      return reply(command, session, context, io);
    case 'status':
      return status(command, session, context, io);
    case 'cancel':
      return cancel(command, session, context, io);
    case 'resend':
      return resend(command, session, context, io);
    case 'edit':
      return edit(command, session, context, io);
    case 'unsend':
      return unsend(command, session, context, io);
    case 'capabilities':
      return capabilities(command, session, context, io);
    case 'erase':
      return erase(command, session, context, io);
    case 'erasures':
      return erasures(command, session, context, io);
  }
}
