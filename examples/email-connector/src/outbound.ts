/**
 * Outbound: the provider call of a delivery. `createEmailSender` returns the `send` that the
 * SDK's `processDelivery` invokes after claim and start (so `start` always happens before the
 * relay sees DATA): one SMTP transaction to the relay through nodemailer, with a Message-ID
 * derived from the deliveryId (the providerMessageId, known before sending), and its outcome
 * mapped by smtp-status.ts. A reply is threaded on the customer's last mail; the first mail of a
 * conversation the desk starts (`input.start`) is a new mail to the address, and `send` returns
 * the thread the customer's answer will be filed under (ids.ts `startedThread`).
 */
import { connect, type Socket } from 'node:net';
import { createTransport } from 'nodemailer';
import type { SendMailOptions } from 'nodemailer/lib/mailer';
import type SMTPTransport from 'nodemailer/lib/smtp-transport';
import {
  ProviderPermanentError,
  ProviderRetryableError,
  ProviderUnknownOutcomeError,
  type AttachmentFile,
  type ProviderSend,
  type ProviderSendInput,
  type ProviderSendResult,
} from '@support-desk/connector-sdk';
import { bounceAddress, replyMessageId, startedThread, type StartedThread } from './ids.js';
import { classifySendFailure } from './smtp-status.js';
import { trimReferences, type ThreadState, type ThreadStore } from './store.js';

interface RelaySettings {
  host: string;
  port: number;
  /** Connecting and the greeting (ms). */
  connectTimeoutMs?: number;
  /** Silence on an open connection, e.g. waiting for the answer to the message (ms). */
  socketTimeoutMs?: number;
}

export interface OutboundSettings {
  relay: RelaySettings;
  /** The From address of replies, e.g. `support@example.com`. */
  supportAddress: string;
  /** The From display name. */
  supportName: string;
  /** The domain of our Message-IDs and bounce addresses (the support address's domain). */
  domain: string;
  /** Local part of the envelope sender: `<it>+<deliveryId>@<domain>`. */
  bounceLocalPart: string;
}

/** A reply mail, ready for nodemailer. */
export interface ReplyMail {
  messageId: string;
  envelope: { from: string; to: string[] };
  from: { name: string; address: string };
  to: string;
  subject: string;
  text: string;
  inReplyTo?: string;
  references?: string[];
  headers: Record<string, string>;
  /** The reply's files (downloaded and hash-checked by the SDK), as MIME parts of the same mail. */
  attachments?: MailAttachment[];
}

/** One file of a reply mail. */
interface MailAttachment {
  filename: string;
  contentType: string;
  content: Uint8Array;
}

/** `Re: <subject>` (not `Re: Re:`); a neutral subject when the thread is unknown. */
export function replySubject(subject: string | undefined): string {
  const s = (subject ?? '').trim();
  if (s === '') return 'Your support request';
  return /^(re|aw|sv|antw?)\s*:/i.test(s) ? s : `Re: ${s}`;
}

const ADDRESS = /^[^\s@<>()[\]\\,;:"]+@[A-Za-z0-9.-]+\.[A-Za-z0-9-]+$/;

/** Longest subject a start takes from its text (characters; RFC 5322 recommends lines of at most 78). */
const MAX_START_SUBJECT = 78;

/**
 * The subject of the first mail of a conversation the desk starts: the text's first non-empty
 * line (a member's opening line, or a template's filled first line), cut to 78 characters with
 * `…`; `Message from <supportName>` when the text has none. The desk's start carries no subject
 * of its own, and a mail without one is easily taken for spam.
 */
export function startSubject(text: string, supportName: string): string {
  const line = text
    .split(/\r?\n/)
    .map((l) => l.replace(/\s+/g, ' ').trim())
    .find((l) => l !== '');
  if (line === undefined) return `Message from ${supportName}`;
  const chars = [...line];
  return chars.length <= MAX_START_SUBJECT ? line : `${chars.slice(0, MAX_START_SUBJECT - 1).join('').trimEnd()}…`;
}

/** A syntactically usable address for SMTP (one `@`, a dotted domain, no spaces or specials). */
function isMailAddress(value: string): boolean {
  return ADDRESS.test(value);
}

/**
 * The first mail of a conversation the desk starts (pure): a new mail to the address (no
 * In-Reply-To, no References: it opens the thread), whose Message-ID is the root of the thread
 * `startedThread` names, with the same envelope sender (VERP) and delivery header as a reply.
 */
export function buildStartMail(input: { deliveryId: string; text: string; address: string }, settings: Omit<OutboundSettings, 'relay'>): ReplyMail & { thread: StartedThread } {
  const thread = startedThread(input.deliveryId, input.address, settings.domain);
  const to = thread.externalCustomerId;
  return {
    thread,
    messageId: thread.messageId,
    envelope: { from: bounceAddress(input.deliveryId, settings.bounceLocalPart, settings.domain), to: [to] },
    from: { name: settings.supportName, address: settings.supportAddress },
    to,
    subject: startSubject(input.text, settings.supportName),
    text: input.text,
    headers: { 'X-Support-Desk-Delivery': input.deliveryId },
  };
}

/**
 * The reply mail of one delivery (pure). Threaded when the conversation is known: In-Reply-To the
 * customer's last Message-ID, References the thread (then mail clients show it in the thread).
 */
export function buildReplyMail(
  input: Pick<ProviderSendInput, 'deliveryId' | 'text' | 'recipient'>,
  thread: ThreadState | undefined,
  settings: Omit<OutboundSettings, 'relay'>,
  files: readonly AttachmentFile[] = [],
): ReplyMail {
  const to = input.recipient.externalCustomerId;
  const messageId = replyMessageId(input.deliveryId, settings.domain);
  const mail: ReplyMail = {
    messageId,
    envelope: { from: bounceAddress(input.deliveryId, settings.bounceLocalPart, settings.domain), to: [to] },
    from: { name: settings.supportName, address: settings.supportAddress },
    to,
    subject: replySubject(thread?.subject),
    text: input.text,
    headers: { 'X-Support-Desk-Delivery': input.deliveryId },
  };
  if (thread !== undefined) {
    mail.inReplyTo = thread.lastMessageId;
    mail.references = trimReferences(thread.references);
  }
  // Reply attachments (integrations that opted in): one mail carries the text and every file, so
  // the customer gets them together and the relay accepts or refuses them together.
  if (files.length > 0) mail.attachments = files.map((f) => ({ filename: f.name ?? f.attachmentId, contentType: f.contentType, content: f.bytes }));
  return mail;
}

/** What one SMTP attempt saw on the wire (the socket is ours, see `observedSocket`). */
interface WireState {
  dataSent: boolean;
}

/**
 * A TCP connection to the relay whose writes are observed: once the DATA command has been
 * written, a lost connection may hide an accepted message (outcome `unknown`); before, nothing
 * can have been accepted (outcome `retry`). nodemailer's errors do not say which, so the
 * connector watches its own socket (nodemailer's documented `getSocket` hook).
 */
function observedSocket(relay: RelaySettings, state: WireState, signal: AbortSignal): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: relay.host, port: relay.port });
    const write = socket.write.bind(socket) as (...args: unknown[]) => boolean;
    socket.write = ((chunk: unknown, ...rest: unknown[]) => {
      if (!state.dataSent) {
        const text = typeof chunk === 'string' ? chunk : Buffer.isBuffer(chunk) ? chunk.toString('latin1') : '';
        if (/^DATA\r\n/i.test(text) || /\r\nDATA\r\n/i.test(text)) state.dataSent = true;
      }
      return write(chunk, ...rest);
    }) as typeof socket.write;
    const onAbort = () => socket.destroy(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
    signal.addEventListener('abort', onAbort, { once: true });
    socket.once('close', () => signal.removeEventListener('abort', onAbort));
    const timer = setTimeout(() => socket.destroy(Object.assign(new Error('connection to the relay timed out'), { code: 'ETIMEDOUT' })), relay.connectTimeoutMs ?? 10_000);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.removeListener('error', reject);
      resolve(socket);
    });
    socket.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

/** nodemailer's error fields that matter (it adds them to a plain Error). */
interface SmtpError extends Error {
  code?: string;
  response?: string;
  responseCode?: number;
}

/** Receives what the sender did, for logs (`kind`: a reply, or the first mail of a conversation the desk starts). */
export type OutboundEvent =
  | { type: 'reply_sent'; kind: 'reply' | 'start'; deliveryId: string; messageId: string; to: string; response: string }
  | { type: 'reply_failed'; kind: 'reply' | 'start'; deliveryId: string; messageId: string; to: string; outcome: string; code: string; response?: string | undefined };

/** A mail as nodemailer's message options (pure): what `transmit` sends, and what a test renders with nodemailer's stream transport. */
export function mailOptions(mail: ReplyMail): SendMailOptions {
  return {
    messageId: `<${mail.messageId}>`,
    envelope: mail.envelope,
    from: mail.from,
    to: mail.to,
    subject: mail.subject,
    text: mail.text,
    headers: mail.headers,
    ...(mail.inReplyTo === undefined ? {} : { inReplyTo: `<${mail.inReplyTo}>` }),
    ...(mail.references === undefined ? {} : { references: mail.references.map((id) => `<${id}>`) }),
    ...(mail.attachments === undefined ? {} : { attachments: mail.attachments.map((a) => ({ filename: a.filename, contentType: a.contentType, content: Buffer.from(a.content.buffer, a.content.byteOffset, a.content.byteLength) })) }),
  };
}

/**
 * One SMTP transaction for `mail`: resolves with the relay's answer when it accepted the mail,
 * else throws the SDK's provider error for its outcome (smtp-status.ts), after reporting it.
 */
async function transmit(mail: ReplyMail, settings: OutboundSettings, signal: AbortSignal, failed: (failure: { outcome: string; code: string; response?: string | undefined }) => void): Promise<SMTPTransport.SentMessageInfo> {
  const wire: WireState = { dataSent: false };
  const options: SMTPTransport.Options = {
    host: settings.relay.host,
    port: settings.relay.port,
    secure: false,
    // A local relay without TLS; a real deployment sets `requireTLS` and credentials here.
    ignoreTLS: true,
    connectionTimeout: settings.relay.connectTimeoutMs ?? 10_000,
    greetingTimeout: settings.relay.connectTimeoutMs ?? 10_000,
    socketTimeout: settings.relay.socketTimeoutMs ?? 60_000,
    getSocket: (_options, callback) => {
      observedSocket(settings.relay, wire, signal).then(
        (connection) => callback(null, { connection }),
        (err: Error) => callback(err, undefined as never),
      );
    },
  };
  const transport = createTransport(options);
  try {
    return await transport.sendMail(mailOptions(mail));
  } catch (caught) {
    const err = caught as SmtpError;
    const failure = classifySendFailure({ response: err.response, dataSent: wire.dataSent, timedOut: err.code === 'ETIMEDOUT' });
    failed({ outcome: failure.outcome, code: failure.code, response: err.response });
    const message = `SMTP relay ${settings.relay.host}:${settings.relay.port}: ${err.response ?? err.message}`;
    if (failure.outcome === 'retry') {
      throw new ProviderRetryableError(message, { code: failure.code, cause: err, ...(failure.retryAfterMs === undefined ? {} : { retryAfterMs: failure.retryAfterMs }) });
    }
    if (failure.outcome === 'failed') throw new ProviderPermanentError(message, { code: failure.code, cause: err });
    throw new ProviderUnknownOutcomeError(message, { code: failure.code, cause: err });
  } finally {
    transport.close();
  }
}

/**
 * The first mail of a conversation the desk starts (`input.start`): a new mail to
 * `recipient.address`, which must be an email address (`invalid_recipient_address` otherwise,
 * nothing sent). Its text is the member's, or a template's preview filled in (`input.text`: mail
 * has no templates of its own). Returns the Message-ID and the thread (ids.ts `startedThread`),
 * after remembering the thread so later replies are threaded on the first mail.
 */
async function sendStart(input: ProviderSendInput, settings: OutboundSettings, store: ThreadStore, onEvent: (event: OutboundEvent) => void): Promise<ProviderSendResult> {
  const { deliveryId, recipient, signal } = input;
  const address = recipient.address;
  if (address === undefined || address.kind !== 'email' || !isMailAddress(address.value.trim())) {
    const shown = address === undefined ? '(none)' : `${address.kind} ${JSON.stringify(address.value)}`;
    onEvent({ type: 'reply_failed', kind: 'start', deliveryId, messageId: '', to: address?.value ?? '', outcome: 'failed', code: 'invalid_recipient_address' });
    throw new ProviderPermanentError(`a conversation can only be started by email address, not ${shown}`, { code: 'invalid_recipient_address' });
  }
  const mail = buildStartMail({ deliveryId, text: input.text, address: address.value }, settings);
  const info = await transmit(mail, settings, signal, (failure) => onEvent({ type: 'reply_failed', kind: 'start', deliveryId, messageId: mail.messageId, to: mail.to, ...failure }));
  // The relay accepted the mail. A store that cannot be written costs only the threading headers
  // of later replies: the customer's answer still derives the same thread from its headers.
  await store.recordStart(mail.thread.externalConversationId, { messageId: mail.messageId, subject: mail.subject, customer: mail.thread.externalCustomerId }).catch(() => undefined);
  onEvent({ type: 'reply_sent', kind: 'start', deliveryId, messageId: mail.messageId, to: mail.to, response: info.response });
  return { providerMessageIds: [mail.messageId], conversation: { externalConversationId: mail.thread.externalConversationId, externalCustomerId: mail.thread.externalCustomerId } };
}

/**
 * The provider `send` for `processDelivery`: one SMTP transaction per call, never more. Success
 * returns the Message-ID as the providerMessageId (and, for a start, the thread it made); a
 * failure throws the SDK's provider error for its outcome (smtp-status.ts), so `processDelivery`
 * reports `retry`, `failed` or `unknown`.
 */
export function createEmailSender(settings: OutboundSettings, store: ThreadStore, onEvent: (event: OutboundEvent) => void = () => undefined): ProviderSend {
  return async (input) => {
    if (input.start === true) return sendStart(input, settings, store, onEvent);
    const { deliveryId, recipient, signal } = input;
    const to = recipient.externalCustomerId;
    const messageId = replyMessageId(deliveryId, settings.domain);
    if (!ADDRESS.test(to)) {
      onEvent({ type: 'reply_failed', kind: 'reply', deliveryId, messageId, to, outcome: 'failed', code: 'invalid_recipient_address' });
      throw new ProviderPermanentError(`the customer id ${JSON.stringify(to)} is not an email address`, { code: 'invalid_recipient_address' });
    }
    // Every file is downloaded (through the SDK, under the lease, hash-checked) before the relay
    // is contacted: a download that fails leaves nothing sent, and is reported as such.
    const files: AttachmentFile[] = [];
    for (const attachment of input.attachments) files.push(await attachment.fetch({ signal }));
    const mail = buildReplyMail(input, store.thread(recipient.externalConversationId), settings, files);
    const info = await transmit(mail, settings, signal, (failure) => onEvent({ type: 'reply_failed', kind: 'reply', deliveryId, messageId: mail.messageId, to, ...failure }));
    // The relay accepted the mail: it is sent, whatever happens next. A store that cannot be
    // written only costs the threading of the customer's answer to this reply.
    await store.recordOutbound(recipient.externalConversationId, mail.messageId).catch(() => undefined);
    onEvent({ type: 'reply_sent', kind: 'reply', deliveryId, messageId: mail.messageId, to, response: info.response });
    if (files.length === 0) return { providerMessageIds: [mail.messageId] };
    // One mail carried every part: each is sent under its Message-ID.
    const ids = [mail.messageId];
    return { providerMessageIds: ids, parts: [...(input.text === '' ? [] : ['text']), ...files.map((f) => f.attachmentId)].map((part) => ({ part, status: 'sent' as const, providerMessageIds: ids })) };
  };
}
