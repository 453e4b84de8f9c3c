/**
 * A local SMTP relay for the demo: it plays the customers' mail servers. Every mail it accepts is
 * written as an `.eml` file into the mailbox folder (with `Return-Path` and `Delivered-To`, as a
 * real mailbox would), so the replies can be read with any mail client or `cat`. A recipient
 * whose local part starts with `unknown` does not exist: the sink accepts the mail, then bounces
 * it later with a DSN to the envelope sender, as real MTAs do, through the connector's inbound
 * SMTP server, so the bounce path can be seen too.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { SMTPServer } from 'smtp-server';
import { sendMail } from './mail-client.js';

export interface MailboxSinkSettings {
  host: string;
  port: number;
  /** Folder the `.eml` files go to (created). */
  dir: string;
  /** Where bounces go: the connector's inbound SMTP server. */
  bounceTo?: { host: string; port: number };
}

export interface MailboxSink {
  readonly port: number;
  readonly dir: string;
  close(): Promise<void>;
}

/** A DSN (RFC 3464) for a mail that could not be delivered to `recipient`. */
export function buildDsn(options: { reportingHost: string; to: string; recipient: string; originalHeaders: string; status?: string; diagnostic?: string }): string {
  const status = options.status ?? '5.1.1';
  const diagnostic = options.diagnostic ?? `550 ${status} <${options.recipient}>: Recipient address rejected: User unknown`;
  const boundary = `dsn-${Date.now().toString(36)}`;
  return [
    `From: Mail Delivery System <MAILER-DAEMON@${options.reportingHost}>`,
    `To: <${options.to}>`,
    'Subject: Undelivered Mail Returned to Sender',
    `Date: ${new Date().toUTCString()}`,
    `Message-ID: <dsn.${boundary}@${options.reportingHost}>`,
    'Auto-Submitted: auto-replied',
    'MIME-Version: 1.0',
    `Content-Type: multipart/report; report-type=delivery-status; boundary="${boundary}"`,
    '',
    `--${boundary}`,
    'Content-Type: text/plain; charset=utf-8',
    '',
    `Your message could not be delivered to <${options.recipient}>: ${diagnostic}`,
    '',
    `--${boundary}`,
    'Content-Type: message/delivery-status',
    '',
    `Reporting-MTA: dns; ${options.reportingHost}`,
    '',
    `Final-Recipient: rfc822; ${options.recipient}`,
    'Action: failed',
    `Status: ${status}`,
    `Diagnostic-Code: smtp; ${diagnostic}`,
    '',
    `--${boundary}`,
    'Content-Type: text/rfc822-headers',
    '',
    options.originalHeaders.trim(),
    '',
    `--${boundary}--`,
    '',
  ].join('\r\n');
}

let counter = 0;

export async function startMailboxSink(settings: MailboxSinkSettings, onMail: (file: string) => void = () => undefined): Promise<MailboxSink> {
  await mkdir(settings.dir, { recursive: true });
  const server = new SMTPServer({
    secure: false,
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    logger: false,
    banner: 'local relay sink (demo)',
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks);
        const from = session.envelope.mailFrom === false ? '' : session.envelope.mailFrom.address;
        const recipients = session.envelope.rcptTo.map((r) => r.address);
        const file = join(settings.dir, `${new Date().toISOString().replace(/[:.]/g, '-')}-${++counter}.eml`);
        const trace = `Return-Path: <${from}>\r\nDelivered-To: ${recipients.join(', ')}\r\n`;
        writeFile(file, Buffer.concat([Buffer.from(trace), raw])).then(
          () => {
            callback(null, `2.0.0 Stored in ${file}`);
            onMail(file);
            const unknown = recipients.find((r) => /^unknown/i.test(r));
            if (unknown !== undefined && from !== '' && settings.bounceTo !== undefined) {
              const headerEnd = raw.indexOf('\r\n\r\n');
              const originalHeaders = raw.subarray(0, headerEnd < 0 ? raw.length : headerEnd).toString('utf8');
              const dsn = buildDsn({ reportingHost: 'relay-sink.test', to: from, recipient: unknown, originalHeaders });
              // Later, as a real MTA would; failures are only printed (it is a demo).
              setTimeout(() => {
                sendMail({ host: settings.bounceTo!.host, port: settings.bounceTo!.port, envelope: { from: '', to: [from] }, raw: dsn }).catch((err: unknown) =>
                  console.error(`[relay-sink] could not send the bounce: ${String(err)}`),
                );
              }, 500);
            }
          },
          (err: Error) => callback(Object.assign(new Error(`4.3.0 Mailbox unavailable: ${err.message}`), { responseCode: 451 })),
        );
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(settings.port, settings.host, () => resolve());
  });
  const address = server.server.address();
  return {
    port: typeof address === 'object' && address !== null ? address.port : settings.port,
    dir: settings.dir,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
