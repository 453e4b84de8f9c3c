/**
 * Sends one mail over SMTP with nodemailer: what a customer's mail server does when it hands a
 * mail to the connector (used by `npm run example:email:send`, the demo relay's bounces and the
 * tests).
 */
import { createTransport } from 'nodemailer';

export interface OutgoingMail {
  host: string;
  port: number;
  /** Sender address (From, and the envelope sender unless `envelope` says otherwise). */
  from?: string;
  fromName?: string;
  to?: string;
  subject?: string;
  text?: string;
  html?: string;
  attachments?: Array<{ filename: string; content?: Buffer; path?: string; contentType?: string }>;
  /** Without brackets. */
  messageId?: string;
  inReplyTo?: string;
  references?: string[];
  /** `from: ''` is the null sender `<>` of bounces. */
  envelope?: { from: string; to: string[] };
  /** A complete message (then the fields above but the envelope are not used). */
  raw?: string | Buffer;
}

export interface SentMail {
  /** The Message-ID, without brackets. */
  messageId: string;
  /** The server's final answer, e.g. `250 2.0.0 Accepted as message m_...`. */
  response: string;
}

export async function sendMail(mail: OutgoingMail): Promise<SentMail> {
  const transport = createTransport({ host: mail.host, port: mail.port, secure: false, ignoreTLS: true, connectionTimeout: 10_000, socketTimeout: 60_000 });
  try {
    const bracket = (id: string) => `<${id}>`;
    const info = await transport.sendMail(
      mail.raw !== undefined
        ? { raw: mail.raw, envelope: mail.envelope ?? { from: mail.from ?? '', to: mail.to === undefined ? [] : [mail.to] } }
        : {
            from: mail.fromName === undefined ? mail.from : { name: mail.fromName, address: mail.from ?? '' },
            to: mail.to,
            subject: mail.subject,
            text: mail.text,
            ...(mail.html === undefined ? {} : { html: mail.html }),
            ...(mail.attachments === undefined ? {} : { attachments: mail.attachments }),
            ...(mail.messageId === undefined ? {} : { messageId: bracket(mail.messageId) }),
            ...(mail.inReplyTo === undefined ? {} : { inReplyTo: bracket(mail.inReplyTo) }),
            ...(mail.references === undefined ? {} : { references: mail.references.map(bracket) }),
            ...(mail.envelope === undefined ? {} : { envelope: mail.envelope }),
          },
    );
    return { messageId: (info.messageId ?? '').replace(/^<|>$/g, ''), response: info.response };
  } finally {
    transport.close();
  }
}
