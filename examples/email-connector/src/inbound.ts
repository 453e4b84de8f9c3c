/**
 * Inbound: an SMTP server (smtp-server) for the support address. Each mail is parsed
 * (mailparser) and posted to `POST /v1/messages` through the SDK, or, when it is a bounce of one
 * of our replies, reported as a receipt. The SMTP answer tells the sending MTA what to do:
 *
 * | What happened                                        | SMTP answer | The sending MTA   |
 * |------------------------------------------------------|-------------|-------------------|
 * | accepted (new, or a duplicate of the same Message-ID) | 250         | done              |
 * | the API was unreachable, 429 or 5xx after the SDK's retries, or the key was refused (401) | 451 4.3.0 | tries again later, with the same mail, so the same eventId |
 * | the API refused the message (other 4xx)               | 550/552/554 5.x.x | bounces it to the sender |
 *
 * A 401 is temporary on purpose: a wrong or rotated key is the connector's configuration, and
 * customers' mails must not bounce while an admin fixes it.
 */
import { simpleParser, type Attachment, type ParsedMail } from 'mailparser';
import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';
import { ConnectorApiError, type ConnectorClient, type ImageInput } from '@support-desk/connector-sdk';
import { parseBounce, type BounceCandidate, type BounceReport } from './dsn.js';
import { deliveryIdFromBounceAddress, eventIdForMail, normalizeAddress, normalizeMessageId, parseMessageIdList, threadIdFor } from './ids.js';
import { selectImages } from './images.js';
import type { ThreadStore } from './store.js';
import { composeMessageText, htmlToPlainText, type OmittedAttachment } from './text.js';

export interface InboundSettings {
  /** Listen address; port 0 picks a free port. */
  host: string;
  port: number;
  /** The support address mail is accepted for (case-insensitive). */
  supportAddress: string;
  domain: string;
  bounceLocalPart: string;
  /** Largest mail accepted (bytes); default 30 MB. */
  maxMessageBytes?: number;
}

/** An incoming mail as the API will see it. */
interface IncomingMail {
  eventId: string;
  externalConversationId: string;
  sender: { externalId: string; displayName?: string };
  text: string;
  images: ImageInput[];
  omitted: OmittedAttachment[];
  /** The mail's Message-ID (no brackets), when it has one. */
  messageId: string | undefined;
  /** `References` then `In-Reply-To`, oldest first. */
  references: string[];
  subject: string;
}

/** Content of `message/delivery-status` etc. as text. */
const asText = (a: Attachment | undefined): string | undefined => (a === undefined ? undefined : Buffer.from(a.content).toString('utf8'));

/**
 * Turns a parsed mail into the message to post (pure but for `known`, the thread lookup). The
 * text is the text part, else the HTML part converted to text; a mail that starts a thread gets
 * its subject as the first line; attachments that are not sent as images are named in the text.
 */
function mailToMessage(parsed: ParsedMail, raw: Uint8Array, known: (messageId: string) => string | undefined): IncomingMail {
  const fromEntry = parsed.from?.value[0];
  const senderAddress = normalizeAddress(fromEntry?.address ?? '');
  if (senderAddress === '') throw new MailRejection(550, '5.1.7 A From address is required');
  const messageId = normalizeMessageId(parsed.messageId);
  const referencesHeader = parseMessageIdList(parsed.references);
  const inReplyTo = parseMessageIdList(parsed.inReplyTo);
  const externalConversationId = threadIdFor({ references: referencesHeader, inReplyTo, senderAddress }, known);
  const startsThread = referencesHeader.length === 0 && inReplyTo.length === 0;
  const body = parsed.text !== undefined && parsed.text.trim() !== '' ? parsed.text : typeof parsed.html === 'string' ? htmlToPlainText(parsed.html) : '';
  const { images, omitted } = selectImages(parsed.attachments.map((a) => ({ filename: a.filename, contentType: a.contentType, content: a.content })));
  const subject = parsed.subject ?? '';
  const sender: IncomingMail['sender'] = { externalId: senderAddress };
  const name = fromEntry?.name?.trim();
  if (name) sender.displayName = [...name].slice(0, 200).join('');
  const references = [...referencesHeader, ...inReplyTo.filter((id) => !referencesHeader.includes(id))];
  return {
    eventId: eventIdForMail(messageId, raw),
    externalConversationId,
    sender,
    text: composeMessageText({ subject: startsThread ? subject : undefined, body, omitted }),
    images: images.map((i) => ({ data: i.data, contentType: i.contentType, filename: i.filename })),
    omitted,
    messageId,
    references,
    subject,
  };
}

/** An SMTP answer other than 250, with its reply code; smtp-server sends `<code> <message>`. */
export class MailRejection extends Error {
  readonly responseCode: number;
  constructor(responseCode: number, message: string) {
    super(message);
    this.name = 'MailRejection';
    this.responseCode = responseCode;
  }
}

/** The API errors that concern the images only: the mail is posted again without them. */
const IMAGE_ERROR_CODES = new Set(['unsupported_image', 'invalid_image', 'image_too_large_dimensions', 'image_too_large', 'too_many_images', 'images_too_large']);

/** The SMTP answer for an API error (see the table at the top of this file). */
function smtpAnswerForApiError(err: unknown): MailRejection {
  if (!(err instanceof ConnectorApiError)) return new MailRejection(451, '4.3.0 Temporary failure, please try again later');
  const status = err.status;
  if (status === undefined || status === 429 || status >= 500) return new MailRejection(451, `4.3.0 The support desk is busy (${err.code}), please try again later`);
  if (status === 401) return new MailRejection(451, '4.7.0 The support desk is not reachable right now, please try again later');
  if (status === 413) return new MailRejection(552, `5.3.4 Message too large for the support desk (${err.code})`);
  if (status === 403) return new MailRejection(550, `5.7.1 The support desk does not accept this mail (${err.code})`);
  return new MailRejection(554, `5.6.0 The support desk refused this message (${err.code})`);
}

/** What the inbound server did, for logs. */
export type InboundEvent =
  | { type: 'mail_accepted'; from: string; externalConversationId: string; eventId: string; conversationId: string; messageId: string; duplicate: boolean; images: number; omitted: number }
  | { type: 'mail_rejected'; from: string; responseCode: number; reason: string; error?: unknown }
  | { type: 'bounce'; report: BounceReport; receipt: 'reported' | 'ignored' | 'unmatched' | 'refused'; error?: unknown };

export interface InboundServer {
  /** The port it listens on (the real one when 0 was asked for). */
  readonly port: number;
  readonly host: string;
  close(): Promise<void>;
}

/** Handles one mail: a bounce -> receipt, anything else -> POST /v1/messages. Throws MailRejection. */
async function handleMail(raw: Buffer, session: SMTPServerSession, client: ConnectorClient, store: ThreadStore, settings: InboundSettings, onEvent: (e: InboundEvent) => void): Promise<string> {
  let parsed: ParsedMail;
  try {
    // skipHtmlToText: the connector converts HTML itself (text.ts); keepDeliveryStatus: a DSN's
    // machine-readable part stays an attachment to read.
    parsed = await simpleParser(raw, { skipHtmlToText: true, keepDeliveryStatus: true });
  } catch {
    throw new MailRejection(554, '5.6.0 The message could not be parsed');
  }

  const contentType = parsed.headers.get('content-type');
  const structured = typeof contentType === 'object' && contentType !== null && 'value' in contentType ? (contentType as { value: string; params?: Record<string, string> }) : undefined;
  const candidate: BounceCandidate = {
    envelopeFrom: session.envelope.mailFrom === false ? '' : session.envelope.mailFrom.address,
    recipients: session.envelope.rcptTo.map((r) => r.address),
    contentType: (structured?.value ?? '').toLowerCase(),
    reportType: structured?.params?.['report-type']?.toLowerCase(),
    deliveryStatus: asText(parsed.attachments.find((a) => a.contentType === 'message/delivery-status')),
    returnedMessage: asText(parsed.attachments.find((a) => a.contentType === 'text/rfc822-headers' || a.contentType === 'message/rfc822')),
    text: parsed.text ?? '',
    relatedMessageIds: [...parseMessageIdList(parsed.inReplyTo), ...parseMessageIdList(parsed.references)],
  };
  const report = parseBounce(candidate, settings);
  if (report !== undefined) return reportBounce(report, client, onEvent);

  const mail = mailToMessage(parsed, raw, (id) => store.conversationOf(id));
  const post = (images: ImageInput[], text: string) =>
    client.messages.send({ eventId: mail.eventId, externalConversationId: mail.externalConversationId, sender: { ...mail.sender, kind: 'customer' }, text, ...(images.length > 0 ? { images } : {}) });
  let result;
  try {
    try {
      result = await post(mail.images, mail.text);
    } catch (err) {
      // The service judges images by their bytes (dimensions, corrupt files): when it refuses
      // them, the mail still reaches the desk, with the images named in the text. The refused
      // attempt stored nothing, so the same eventId is free for this content.
      if (!(err instanceof ConnectorApiError && mail.images.length > 0 && IMAGE_ERROR_CODES.has(err.code))) throw err;
      const refused = mail.images.map((i) => ({ filename: i.filename ?? 'image', contentType: i.contentType ?? 'image', size: (i.data as Uint8Array).byteLength, reason: `refused by the desk: ${err.code}` }));
      const again = mailToMessage({ ...parsed, attachments: [] }, raw, (id) => store.conversationOf(id));
      const text = composeMessageText({ subject: undefined, body: again.text, omitted: [...refused, ...mail.omitted] });
      result = await post([], text);
    }
  } catch (err) {
    throw smtpAnswerForApiError(err);
  }
  if (mail.messageId !== undefined) {
    await store.recordInbound(mail.externalConversationId, { messageId: mail.messageId, references: mail.references, subject: mail.subject, customer: mail.sender.externalId });
  }
  onEvent({
    type: 'mail_accepted',
    from: mail.sender.externalId,
    externalConversationId: mail.externalConversationId,
    eventId: mail.eventId,
    conversationId: result.conversationId,
    messageId: result.messageId,
    duplicate: result.duplicate,
    images: mail.images.length,
    omitted: mail.omitted.length,
  });
  return `2.0.0 Accepted as message ${result.messageId}${result.duplicate ? ' (duplicate)' : ''}`;
}

/**
 * A bounce or DSN of one of our replies -> `POST /v1/deliveries/receipt` (`failed` with its code,
 * or `delivered`). A receipt the service refuses for good (the delivery is not `sent`: it failed
 * or is unknown; or it does not exist) is dropped: the bounce is accepted and logged.
 */
async function reportBounce(report: BounceReport, client: ConnectorClient, onEvent: (e: InboundEvent) => void): Promise<string> {
  if (report.deliveryId === undefined) {
    onEvent({ type: 'bounce', report, receipt: 'unmatched' });
    return '2.0.0 Bounce accepted (no matching reply)';
  }
  if (report.status === 'delayed' || report.status === 'unrelated') {
    onEvent({ type: 'bounce', report, receipt: 'ignored' });
    return '2.0.0 Accepted';
  }
  try {
    await client.deliveries.receipt({
      deliveryId: report.deliveryId,
      status: report.status,
      ...(report.status === 'failed' ? { code: report.code } : {}),
      ...(report.providerMessageId === undefined ? {} : { providerMessageId: report.providerMessageId }),
    });
  } catch (err) {
    const answer = smtpAnswerForApiError(err);
    if (answer.responseCode < 500) throw answer;
    onEvent({ type: 'bounce', report, receipt: 'refused', error: err });
    return '2.0.0 Bounce accepted (not reported)';
  }
  onEvent({ type: 'bounce', report, receipt: 'reported' });
  return `2.0.0 Bounce reported for delivery ${report.deliveryId}`;
}

function readAll(stream: SMTPServerDataStream): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
  });
}

/** Starts the inbound SMTP server. */
export async function startInboundServer(client: ConnectorClient, store: ThreadStore, settings: InboundSettings, onEvent: (e: InboundEvent) => void = () => undefined): Promise<InboundServer> {
  const support = normalizeAddress(settings.supportAddress);
  const server = new SMTPServer({
    secure: false,
    authOptional: true,
    // Plain SMTP on a local port; a deployment behind a real MX terminates TLS there.
    disabledCommands: ['AUTH', 'STARTTLS'],
    size: settings.maxMessageBytes ?? 30 * 1024 * 1024,
    banner: 'support desk email connector',
    logger: false,
    onRcptTo(address, _session, callback) {
      const to = address.address;
      if (normalizeAddress(to) === support || deliveryIdFromBounceAddress(to, settings.bounceLocalPart, settings.domain) !== undefined) return callback();
      callback(Object.assign(new Error(`5.1.1 <${to}>: no such mailbox here`), { responseCode: 550 }));
    },
    onData(stream, session, callback) {
      readAll(stream)
        .then(async (raw) => {
          if (stream.sizeExceeded) throw new MailRejection(552, '5.3.4 Message too large');
          return handleMail(raw, session, client, store, settings, onEvent);
        })
        .then(
          (message) => callback(null, message),
          (err: unknown) => {
            const rejection = err instanceof MailRejection ? err : new MailRejection(451, '4.3.0 Temporary failure, please try again later');
            const from = session.envelope.mailFrom === false ? '' : session.envelope.mailFrom.address;
            onEvent({ type: 'mail_rejected', from, responseCode: rejection.responseCode, reason: rejection.message, error: err });
            callback(Object.assign(new Error(rejection.message), { responseCode: rejection.responseCode }));
          },
        );
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(settings.port, settings.host, () => {
      server.server.removeListener('error', reject);
      resolve();
    });
  });
  const address = server.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : settings.port;
  return {
    port,
    host: settings.host,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
