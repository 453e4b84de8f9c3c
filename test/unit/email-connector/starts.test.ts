/**
 * The email connector starts conversations (examples/email-connector/src): the pure parts (the
 * thread a start makes, the first mail's headers, rendered by nodemailer as the relay receives
 * them) and that the customer's answer to that mail derives exactly the thread the start
 * returned; then `send` for a start against a real SMTP server on loopback (smtp-server): the mail
 * it sends, the ids it returns, and the outcomes of a permanent and a temporary refusal.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTransport } from 'nodemailer';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { ProviderPermanentError, ProviderRetryableError, type ProviderSendInput } from '@support-desk/connector-sdk';
import {
  deliveryIdFromMessageId,
  normalizeAddress,
  parseMessageIdList,
  replyMessageId,
  startedThread,
  startMessageId,
  threadIdFor,
} from '../../../examples/email-connector/src/ids';
import { buildReplyMail, buildStartMail, createEmailSender, mailOptions, startSubject, type OutboundEvent } from '../../../examples/email-connector/src/outbound';
import { ThreadStore } from '../../../examples/email-connector/src/store';
import { parseBounce } from '../../../examples/email-connector/src/dsn';

const DOMAIN = 'support-desk.test';
const SETTINGS = { supportAddress: `support@${DOMAIN}`, supportName: 'Support desk', domain: DOMAIN, bounceLocalPart: 'bounces' };

/** Renders a mail with the options the sender gives nodemailer, as the relay would receive it. */
async function rendered(options: ReturnType<typeof mailOptions>): Promise<{ raw: string; parsed: ParsedMail }> {
  const info = await createTransport({ streamTransport: true, buffer: true, newline: 'windows' }).sendMail(options);
  const raw = (info.message as Buffer).toString('utf8');
  return { raw, parsed: await simpleParser(raw) };
}

/** The thread inbound.ts derives for a mail with these headers (its own rule: ids.ts `threadIdFor`), without and with the store's memory. */
function answerThread(headers: { references?: string; inReplyTo?: string; from: string }, known: (id: string) => string | undefined = () => undefined): string {
  return threadIdFor({ references: parseMessageIdList(headers.references), inReplyTo: parseMessageIdList(headers.inReplyTo), senderAddress: normalizeAddress(headers.from) }, known);
}

describe('the thread a start makes', () => {
  test('the first mail\'s Message-ID is derived from the deliveryId and leads back to it (safe and unsafe ids)', () => {
    expect(startMessageId('d_7', DOMAIN)).toBe(`start.d_7@${DOMAIN}`);
    expect(deliveryIdFromMessageId(`<start.d_7@${DOMAIN}>`, DOMAIN)).toBe('d_7');
    expect(deliveryIdFromMessageId(startMessageId('d/7 x', DOMAIN), DOMAIN)).toBe('d/7 x');
    expect(deliveryIdFromMessageId('start.d_7@other.test', DOMAIN)).toBeUndefined();
    // A start's Message-ID is not a reply's: two deliveries never share one.
    expect(startMessageId('d_7', DOMAIN)).not.toBe(replyMessageId('d_7', DOMAIN));
  });

  test('the customer\'s answer derives the returned thread, whatever threading headers the client sets, with or without the store', () => {
    const thread = startedThread('d_7', 'Ana@Example.com', DOMAIN);
    expect(thread).toEqual({ messageId: `start.d_7@${DOMAIN}`, externalConversationId: `start.d_7@${DOMAIN}`, externalCustomerId: 'ana@example.com' });
    const ours = `<${thread.messageId}>`;
    // In-Reply-To only; References only; both; a later answer whose References start at our mail.
    for (const headers of [{ inReplyTo: ours }, { references: ours }, { inReplyTo: ours, references: ours }, { inReplyTo: '<c2@mail.example.com>', references: `${ours} <c1@mail.example.com> <r1@${DOMAIN}>` }]) {
      expect(answerThread({ ...headers, from: 'ANA@example.com' })).toBe(thread.externalConversationId);
      // With the connector's memory of the first mail (store.recordStart), the same thread.
      expect(answerThread({ ...headers, from: 'ana@example.com' }, (id) => (id === thread.messageId ? thread.externalConversationId : undefined))).toBe(thread.externalConversationId);
    }
    // The customer id is the sender id inbound mail from the address gets.
    expect(thread.externalCustomerId).toBe(normalizeAddress(' ANA@example.COM '));
  });

  test('each start delivery makes its own thread; a retried send of the same delivery makes the same one', () => {
    expect(startedThread('d_8', 'ana@example.com', DOMAIN).externalConversationId).not.toBe(startedThread('d_7', 'ana@example.com', DOMAIN).externalConversationId);
    expect(startedThread('d_7', 'ana@example.com', DOMAIN)).toEqual(startedThread('d_7', 'ana@example.com', DOMAIN));
  });
});

describe('a bounce of the first mail', () => {
  const settings = { domain: DOMAIN, bounceLocalPart: 'bounces', supportAddress: `support@${DOMAIN}` };
  const ours = startMessageId('d_9', DOMAIN);
  const dsn = { envelopeFrom: '', recipients: [`support@${DOMAIN}`], contentType: 'multipart/report', reportType: 'delivery-status', deliveryStatus: 'Action: failed\r\nStatus: 5.1.1', relatedMessageIds: [] };
  test('a DSN to the support address finds the start delivery by the quoted Message-ID, or by the Message-ID anywhere in its text', () => {
    expect(parseBounce({ ...dsn, returnedMessage: `Message-ID: <${ours}>\r\n`, text: '' }, settings)).toEqual({ deliveryId: 'd_9', providerMessageId: ours, status: 'failed', code: 'smtp_5_1_1' });
    expect(parseBounce({ ...dsn, text: `Your message <${ours}> could not be delivered.` }, settings)).toEqual({ deliveryId: 'd_9', providerMessageId: ours, status: 'failed', code: 'smtp_5_1_1' });
  });
});

describe('the first mail', () => {
  test('a new mail to the address (no In-Reply-To, no References), Message-ID the thread\'s root, envelope sender VERP, as the relay receives it', async () => {
    const mail = buildStartMail({ deliveryId: 'd_7', text: 'Hello Ana,\nyour order 1234 is ready.', address: 'Ana@Example.com' }, SETTINGS);
    expect(mail).toMatchObject({
      messageId: `start.d_7@${DOMAIN}`,
      envelope: { from: `bounces+d_7@${DOMAIN}`, to: ['ana@example.com'] },
      from: { name: 'Support desk', address: `support@${DOMAIN}` },
      to: 'ana@example.com',
      subject: 'Hello Ana,',
      headers: { 'X-Support-Desk-Delivery': 'd_7' },
      thread: startedThread('d_7', 'ana@example.com', DOMAIN),
    });
    expect(mail.inReplyTo).toBeUndefined();
    expect(mail.references).toBeUndefined();

    const { raw, parsed } = await rendered(mailOptions(mail));
    expect(parsed.messageId).toBe(`<start.d_7@${DOMAIN}>`);
    expect(parsed.inReplyTo).toBeUndefined();
    expect(parsed.references).toBeUndefined();
    expect(parsed.subject).toBe('Hello Ana,');
    expect(parsed.to).toMatchObject({ value: [{ address: 'ana@example.com' }] });
    expect(parsed.headers.get('x-support-desk-delivery')).toBe('d_7');
    expect(parsed.text?.trim()).toBe('Hello Ana,\nyour order 1234 is ready.');
    expect(raw).not.toMatch(/^In-Reply-To:/im);

    // The customer's client answers it: In-Reply-To and References name the Message-ID it received.
    const received = parsed.messageId ?? '';
    expect(answerThread({ inReplyTo: received, references: received, from: 'ana@example.com' })).toBe(mail.thread.externalConversationId);
  });

  test('the subject: the text\'s first non-empty line, cut to 78 characters; a neutral one for a text without words', () => {
    expect(startSubject('\n\n  Your   refund  \nis on its way', 'Support desk')).toBe('Your refund');
    const long = startSubject('x'.repeat(200), 'Support desk');
    expect([...long]).toHaveLength(78);
    expect(long.endsWith('…')).toBe(true);
    expect(startSubject(' \n\t', 'Support desk')).toBe('Message from Support desk');
  });

  test('a later reply in the started thread answers the first mail (In-Reply-To, References, Re: subject)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'email-start-store-'));
    try {
      const store = await ThreadStore.open(dir);
      const first = buildStartMail({ deliveryId: 'd_7', text: 'Order 1234', address: 'ana@example.com' }, SETTINGS);
      await store.recordStart(first.thread.externalConversationId, { messageId: first.messageId, subject: first.subject, customer: first.thread.externalCustomerId });
      const reopened = await ThreadStore.open(dir);
      expect(reopened.conversationOf(first.messageId)).toBe(first.thread.externalConversationId);
      const reply = buildReplyMail(
        { deliveryId: 'd_9', text: 'One more thing', recipient: { externalConversationId: first.thread.externalConversationId, externalCustomerId: first.thread.externalCustomerId } },
        reopened.thread(first.thread.externalConversationId),
        SETTINGS,
      );
      expect(reply).toMatchObject({ inReplyTo: first.messageId, references: [first.messageId], subject: 'Re: Order 1234', to: 'ana@example.com' });
      // Recording the same start again (a retried send) keeps the thread as it is.
      await reopened.recordInbound(first.thread.externalConversationId, { messageId: 'c1@mail.example.com', references: [first.messageId], subject: 'Re: Order 1234', customer: 'ana@example.com' });
      await reopened.recordStart(first.thread.externalConversationId, { messageId: first.messageId, subject: first.subject, customer: 'ana@example.com' });
      expect(reopened.thread(first.thread.externalConversationId)).toMatchObject({ lastMessageId: 'c1@mail.example.com', references: [first.messageId, 'c1@mail.example.com'] });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('send for a start, on a real SMTP server', () => {
  let dir: string;
  let relay: SMTPServer;
  let port: number;
  /** How the relay answers the next mails (then 250). */
  let answers: Array<{ code: number; message: string }>;
  let received: Array<{ envelopeFrom: string; recipients: string[]; parsed: ParsedMail }>;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'email-start-send-'));
    answers = [];
    received = [];
    relay = new SMTPServer({
      authOptional: true,
      disabledCommands: ['AUTH', 'STARTTLS'],
      logger: false,
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          const answer = answers.shift();
          if (answer !== undefined) return callback(Object.assign(new Error(answer.message), { responseCode: answer.code }));
          simpleParser(Buffer.concat(chunks)).then(
            (parsed) => {
              received.push({ envelopeFrom: session.envelope.mailFrom === false ? '' : session.envelope.mailFrom.address, recipients: session.envelope.rcptTo.map((r) => r.address), parsed });
              callback(null, 'queued');
            },
            (err: Error) => callback(err),
          );
        });
      },
    });
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', () => resolve()));
    const address = relay.server.address();
    port = typeof address === 'object' && address !== null ? address.port : 0;
  });
  afterEach(async () => {
    await new Promise<void>((resolve) => relay.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  });

  const startInput = (address: { kind: 'email' | 'phone' | 'handle'; value: string }, text = 'Hello Ana, your order is ready.'): ProviderSendInput => ({
    deliveryId: 'd_start_1',
    leaseId: 'l_1',
    leaseExpiresAt: 0,
    text,
    recipient: { externalConversationId: '', externalCustomerId: '', address },
    start: true,
    attachments: [],
    signal: new AbortController().signal,
  });

  async function sender() {
    const store = await ThreadStore.open(dir);
    const events: OutboundEvent[] = [];
    const send = createEmailSender({ ...SETTINGS, relay: { host: '127.0.0.1', port, connectTimeoutMs: 5_000, socketTimeoutMs: 10_000 } }, store, (e) => events.push(e));
    return { send, store, events };
  }

  test('a new mail to the address; returns the Message-ID and the thread, which the store remembers', async () => {
    const { send, store, events } = await sender();
    const result = await send(startInput({ kind: 'email', value: 'Ana@Example.com' }));
    const messageId = `start.d_start_1@${DOMAIN}`;
    expect(result).toEqual({ providerMessageIds: [messageId], conversation: { externalConversationId: messageId, externalCustomerId: 'ana@example.com' } });
    expect(received).toHaveLength(1);
    expect(received[0]).toMatchObject({ envelopeFrom: `bounces+d_start_1@${DOMAIN}`, recipients: ['ana@example.com'] });
    expect(received[0]?.parsed.messageId).toBe(`<${messageId}>`);
    expect(received[0]?.parsed.inReplyTo).toBeUndefined();
    expect(received[0]?.parsed.text?.trim()).toBe('Hello Ana, your order is ready.');
    expect(store.conversationOf(messageId)).toBe(messageId);
    expect(store.thread(messageId)).toMatchObject({ lastMessageId: messageId, customer: 'ana@example.com', subject: 'Hello Ana, your order is ready.' });
    expect(events).toEqual([expect.objectContaining({ type: 'reply_sent', kind: 'start', deliveryId: 'd_start_1', to: 'ana@example.com' })]);
  });

  test('the relay refusing the address for good (550 5.1.1): failed smtp_5_1_1, nothing remembered', async () => {
    answers.push({ code: 550, message: '5.1.1 <nobody@example.com>: Recipient address rejected: User unknown' });
    const { send, store } = await sender();
    const error = await Promise.resolve(send(startInput({ kind: 'email', value: 'nobody@example.com' }))).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(ProviderPermanentError);
    expect(error).toMatchObject({ code: 'smtp_5_1_1' });
    expect(received).toHaveLength(0);
    expect(store.conversationOf(`start.d_start_1@${DOMAIN}`)).toBeUndefined();
  });

  test('a temporary refusal (451 4.7.1 with a stated delay): retry with that delay; the retried send makes the same mail and thread', async () => {
    answers.push({ code: 451, message: '4.7.1 Greylisted, please try again in 30 seconds' });
    const { send } = await sender();
    const error = await Promise.resolve(send(startInput({ kind: 'email', value: 'ana@example.com' }))).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(ProviderRetryableError);
    expect(error).toMatchObject({ code: 'smtp_4_7_1', retryAfterMs: 30_000 });
    const again = await send(startInput({ kind: 'email', value: 'ana@example.com' }));
    expect(again).toMatchObject({ providerMessageIds: [`start.d_start_1@${DOMAIN}`], conversation: { externalConversationId: `start.d_start_1@${DOMAIN}` } });
    expect(received).toHaveLength(1);
  });

  test('an address that is not an email address: failed invalid_recipient_address, the relay never contacted', async () => {
    const { send } = await sender();
    for (const address of [{ kind: 'phone' as const, value: '+4915112345678' }, { kind: 'email' as const, value: 'not an address' }]) {
      const error = await Promise.resolve(send(startInput(address))).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(error).toBeInstanceOf(ProviderPermanentError);
      expect(error).toMatchObject({ code: 'invalid_recipient_address' });
    }
    expect(received).toHaveLength(0);
  });
});
