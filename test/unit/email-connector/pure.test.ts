/**
 * The email connector's pure parts (examples/email-connector/src): identifiers, threads, SMTP
 * replies -> delivery outcomes, bounces -> receipts, HTML -> text, images, the message text.
 */
import {
  bounceAddress,
  deliveryIdFromBounceAddress,
  deliveryIdFromMessageId,
  eventIdForMail,
  normalizeMessageId,
  parseMessageIdList,
  replyMessageId,
  threadIdFor,
} from '../../../examples/email-connector/src/ids';
import { classifySendFailure, parseSmtpReply, statedRetryDelayMs } from '../../../examples/email-connector/src/smtp-status';
import { composeMessageText, htmlToPlainText, MAX_TEXT_LENGTH } from '../../../examples/email-connector/src/text';
import { selectImages, sniffImageType } from '../../../examples/email-connector/src/images';
import { parseBounce, type BounceCandidate } from '../../../examples/email-connector/src/dsn';
import { buildReplyMail, replySubject } from '../../../examples/email-connector/src/outbound';
import { buildDsn } from '../../../examples/email-connector/src/relay-sink';
import { trimReferences } from '../../../examples/email-connector/src/store';
import { ConfigError, loadConfig } from '../../../examples/email-connector/src/config';
import { jpeg, png, VP8X_FLAGS, webpAnimated, webpExtended, webpLossy } from '../fixtures/image-bytes';

const DOMAIN = 'support-desk.test';
const SETTINGS = { domain: DOMAIN, bounceLocalPart: 'bounces' };

describe('eventId', () => {
  test('derived from the Message-ID only: brackets and spaces do not matter, another id is another event', () => {
    const a = eventIdForMail('<abc@mail.example>', Buffer.from('one'));
    expect(a).toMatch(/^mail-[A-Za-z0-9_-]{43}$/);
    expect(eventIdForMail(' abc@mail.example ', Buffer.from('other bytes'))).toBe(a);
    expect(eventIdForMail('<abd@mail.example>', Buffer.from('one'))).not.toBe(a);
  });
  test('a mail without a Message-ID: a hash of its bytes (the same bytes again are the same event)', () => {
    const raw = Buffer.from('Subject: hi\r\n\r\nhello');
    expect(eventIdForMail(undefined, raw)).toBe(eventIdForMail(undefined, Buffer.from(raw)));
    expect(eventIdForMail(undefined, raw)).toMatch(/^mail-raw-/);
    expect(eventIdForMail(undefined, Buffer.from('Subject: hi\r\n\r\nhello!'))).not.toBe(eventIdForMail(undefined, raw));
    expect(eventIdForMail('<>', raw)).toBe(eventIdForMail(undefined, raw));
  });
  test('Message-ID lists: References with several ids, folded, deduplicated', () => {
    expect(parseMessageIdList('<a@x> <b@x>\r\n <c@x> <a@x>')).toEqual(['a@x', 'b@x', 'c@x']);
    expect(parseMessageIdList(['<a@x>', '<b@x>'])).toEqual(['a@x', 'b@x']);
    expect(parseMessageIdList(undefined)).toEqual([]);
    expect(normalizeMessageId('<a b@x>')).toBeUndefined();
  });
});

describe('thread (externalConversationId)', () => {
  const none = () => undefined;
  test('a new mail: the sender address (lower case)', () => {
    expect(threadIdFor({ references: [], inReplyTo: [], senderAddress: 'Alice@Example.TEST' }, none)).toBe('alice@example.test');
  });
  test('a reply: the root of References, else In-Reply-To', () => {
    expect(threadIdFor({ references: ['root@x', 'mid@x'], inReplyTo: ['mid@x'], senderAddress: 'a@x' }, none)).toBe('root@x');
    expect(threadIdFor({ references: [], inReplyTo: ['parent@x'], senderAddress: 'a@x' }, none)).toBe('parent@x');
  });
  test('a Message-ID the connector knows wins: an answer to our reply joins its conversation', () => {
    const known = (id: string) => (id === `reply.d_1@${DOMAIN}` ? 'alice@example.test' : undefined);
    expect(threadIdFor({ references: [], inReplyTo: [`reply.d_1@${DOMAIN}`], senderAddress: 'alice@example.test' }, known)).toBe('alice@example.test');
    expect(threadIdFor({ references: ['unknown@x', `reply.d_1@${DOMAIN}`], inReplyTo: [], senderAddress: 'b@x' }, known)).toBe('alice@example.test');
  });
  test('an id over the API limit (256) becomes a stable hash', () => {
    const long = `${'x'.repeat(300)}@x`;
    const id = threadIdFor({ references: [long], inReplyTo: [], senderAddress: 'a@x' });
    expect(id).toMatch(/^thread-/);
    expect(id).toBe(threadIdFor({ references: [long], inReplyTo: [], senderAddress: 'b@x' }));
  });
});

describe('reply Message-ID and bounce address: derived from the deliveryId, and back', () => {
  test.each(['d_AbC-123_x', 'with.dot/and space', 'é'])('%s', (deliveryId) => {
    const messageId = replyMessageId(deliveryId, DOMAIN);
    expect(messageId).toMatch(new RegExp(`^reply\\.[A-Za-z0-9_.-]+@${DOMAIN}$`));
    expect(deliveryIdFromMessageId(`<${messageId}>`, DOMAIN)).toBe(deliveryId);
    const address = bounceAddress(deliveryId, 'bounces', DOMAIN);
    expect(deliveryIdFromBounceAddress(address, 'bounces', DOMAIN)).toBe(deliveryId);
  });
  test('ids of other domains or forms are not ours', () => {
    expect(deliveryIdFromMessageId('reply.d_1@other.test', DOMAIN)).toBeUndefined();
    expect(deliveryIdFromMessageId(`abc@${DOMAIN}`, DOMAIN)).toBeUndefined();
    expect(deliveryIdFromBounceAddress(`support@${DOMAIN}`, 'bounces', DOMAIN)).toBeUndefined();
    expect(deliveryIdFromBounceAddress('bounces+d_1@other.test', 'bounces', DOMAIN)).toBeUndefined();
  });
});

describe('SMTP status -> outcome and code', () => {
  test('replies parse with and without an enhanced status code', () => {
    expect(parseSmtpReply('550 5.1.1 <bob@x>: User unknown')).toEqual({ basic: 550, enhanced: '5.1.1', text: '<bob@x>: User unknown' });
    expect(parseSmtpReply('451 Try later')).toEqual({ basic: 451, text: 'Try later' });
    expect(parseSmtpReply('451 5.1.1 mismatched classes')).toEqual({ basic: 451, text: '5.1.1 mismatched classes' });
    expect(parseSmtpReply('Connection closed')).toBeUndefined();
  });
  test('4xx: retry, with the delay the relay states (else none: the service backs off)', () => {
    expect(classifySendFailure({ response: '451 4.7.1 Greylisted, try again in 30 seconds', dataSent: true })).toEqual({ outcome: 'retry', code: 'smtp_4_7_1', retryAfterMs: 30_000 });
    expect(classifySendFailure({ response: '421 Service not available', dataSent: false })).toEqual({ outcome: 'retry', code: 'smtp_421' });
    expect(statedRetryDelayMs('please retry after 5 minutes')).toBe(300_000);
    expect(statedRetryDelayMs('wait 2 hours')).toBe(3_600_000);
    expect(statedRetryDelayMs('mailbox busy')).toBeUndefined();
  });
  test('5xx: failed, code from the enhanced status, else the basic code', () => {
    expect(classifySendFailure({ response: '550 5.1.1 No such user', dataSent: true })).toEqual({ outcome: 'failed', code: 'smtp_5_1_1' });
    expect(classifySendFailure({ response: '554 Transaction failed', dataSent: true })).toEqual({ outcome: 'failed', code: 'smtp_554' });
  });
  test('no reply: retry before DATA (nothing can have been accepted), unknown after', () => {
    expect(classifySendFailure({ dataSent: false })).toEqual({ outcome: 'retry', code: 'smtp_connection_failed' });
    expect(classifySendFailure({ dataSent: false, timedOut: true })).toEqual({ outcome: 'retry', code: 'smtp_timeout' });
    expect(classifySendFailure({ dataSent: true })).toEqual({ outcome: 'unknown', code: 'smtp_connection_lost_after_data' });
    expect(classifySendFailure({ dataSent: true, timedOut: true, response: '250 ok' })).toEqual({ outcome: 'unknown', code: 'smtp_timeout_after_data' });
  });
});

describe('bounces and DSNs -> receipts', () => {
  const ours = replyMessageId('d_42', DOMAIN);
  const dsn = (status?: string, diagnostic?: string) =>
    buildDsn({ reportingHost: 'mx.example', to: 'x', recipient: 'bob@example.test', originalHeaders: `From: a\r\nMessage-ID: <${ours}>\r\nSubject: Re: hi`, ...(status ? { status } : {}), ...(diagnostic ? { diagnostic } : {}) });
  const part = (raw: string, type: string) => raw.split(`Content-Type: ${type}\r\n\r\n`)[1]?.split('\r\n--')[0];
  const candidate = (over: Partial<BounceCandidate>): BounceCandidate => ({ envelopeFrom: '', recipients: [`support@${DOMAIN}`], contentType: 'text/plain', text: '', relatedMessageIds: [], ...over });

  test('a DSN to the VERP address: failed with the Status code, our Message-ID as the provider id', () => {
    const raw = dsn();
    const report = parseBounce(
      candidate({ recipients: [bounceAddress('d_42', 'bounces', DOMAIN)], contentType: 'multipart/report', reportType: 'delivery-status', deliveryStatus: part(raw, 'message/delivery-status'), returnedMessage: part(raw, 'text/rfc822-headers') }),
      SETTINGS,
    );
    expect(report).toEqual({ deliveryId: 'd_42', providerMessageId: ours, status: 'failed', code: 'smtp_5_1_1' });
  });
  test('a DSN to the support address is matched by the quoted Message-ID; without Status the Diagnostic-Code decides', () => {
    const status = 'Final-Recipient: rfc822; bob@x\r\nAction: failed\r\nDiagnostic-Code: smtp; 552 mailbox full\r\n';
    const report = parseBounce(candidate({ contentType: 'multipart/report', reportType: 'delivery-status', deliveryStatus: `Reporting-MTA: dns; mx\r\n\r\n${status}`, returnedMessage: `Message-ID: <${ours}>\r\n` }), SETTINGS);
    expect(report).toEqual({ deliveryId: 'd_42', providerMessageId: ours, status: 'failed', code: 'smtp_552' });
  });
  test('delayed and success DSNs', () => {
    const base = { contentType: 'multipart/report', reportType: 'delivery-status', returnedMessage: `Message-ID: <${ours}>` };
    expect(parseBounce(candidate({ ...base, deliveryStatus: 'Action: delayed\r\nStatus: 4.4.1' }), SETTINGS)?.status).toBe('delayed');
    expect(parseBounce(candidate({ ...base, deliveryStatus: 'Action: delivered\r\nStatus: 2.0.0' }), SETTINGS)?.status).toBe('delivered');
  });
  test('a plain bounce from the null sender: the code from its text', () => {
    const report = parseBounce(candidate({ recipients: [bounceAddress('d_42', 'bounces', DOMAIN)], text: 'Delivery failed:\n550-5.7.1 blocked by policy' }), SETTINGS);
    expect(report).toMatchObject({ deliveryId: 'd_42', status: 'failed', code: 'smtp_5_7_1' });
  });
  test('an auto-reply to the bounce address reports nothing; a customer mail is not a bounce', () => {
    expect(parseBounce(candidate({ envelopeFrom: 'bob@x', recipients: [bounceAddress('d_42', 'bounces', DOMAIN)], text: 'I am on holiday' }), SETTINGS)?.status).toBe('unrelated');
    expect(parseBounce(candidate({ envelopeFrom: 'bob@x', text: 'Error 550 in my app, help' }), SETTINGS)).toBeUndefined();
  });
});

describe('message text', () => {
  test('HTML -> text: paragraphs, line breaks, lists and links kept; images, scripts and styles dropped', () => {
    const text = htmlToPlainText('<style>p{color:red}</style><p>Hello <b>team</b>,</p><p>my order<br>is late.</p><ul><li>one</li><li>two</li></ul><p><a href="https://x.test/o/1">order 1</a> <img src="cid:x" alt="logo"></p><script>alert(1)</script>');
    expect(text).toBe('Hello team,\n\nmy order\nis late.\n\n * one\n * two\n\norder 1 [https://x.test/o/1]');
  });
  test('subject line, body, then the attachments that were not sent as images', () => {
    expect(composeMessageText({ subject: 'Order 1234', body: 'Hi\r\nthere', omitted: [{ filename: 'invoice.pdf', contentType: 'application/pdf', size: 2048, reason: 'not a PNG, JPEG or WebP image' }] })).toBe(
      'Subject: Order 1234\n\nHi\nthere\n\n[Attachments not shown: invoice.pdf (application/pdf, 2 KB; not a PNG, JPEG or WebP image)]',
    );
  });
  test('never over the limit: the body is cut, the attachment list kept', () => {
    const text = composeMessageText({ body: '😀'.repeat(20_000), omitted: [{ filename: 'a.zip', contentType: 'application/zip', size: 10, reason: 'r' }] });
    expect([...text].length).toBe(MAX_TEXT_LENGTH);
    expect(text).toContain('[… message truncated]');
    expect(text.endsWith('a.zip (application/zip, 10 B; r)]')).toBe(true);
  });
});

describe('images', () => {
  test('judged by their bytes: PNG, JPEG, static WebP; animated WebP and others are not images', () => {
    expect(sniffImageType(png(2, 2))).toBe('image/png');
    expect(sniffImageType(jpeg(2, 2))).toBe('image/jpeg');
    expect(sniffImageType(webpLossy(2, 2))).toBe('image/webp');
    expect(sniffImageType(webpExtended(2, 2, { flags: VP8X_FLAGS.alpha }))).toBe('image/webp');
    expect(sniffImageType(webpAnimated(2, 2))).toBeUndefined();
    expect(sniffImageType(Buffer.from('%PDF-1.7'))).toBeUndefined();
  });
  test('at most 3 in mail order; the rest, non-images and oversized ones named with a reason', () => {
    const a = (filename: string, content: Buffer, contentType = 'application/octet-stream') => ({ filename, content, contentType });
    const big = Buffer.concat([png(1, 1), Buffer.alloc(10 * 1024 * 1024)]);
    const { images, omitted } = selectImages([a('1.png', png(1, 1)), a('doc.pdf', Buffer.from('%PDF')), a('big.png', big), a('2.jpg', jpeg(1, 1)), a('3.webp', webpLossy(1, 1)), a('4.png', png(1, 1))]);
    expect(images.map((i) => [i.filename, i.contentType])).toEqual([['1.png', 'image/png'], ['2.jpg', 'image/jpeg'], ['3.webp', 'image/webp']]);
    expect(omitted.map((o) => [o.filename, o.reason])).toEqual([['doc.pdf', 'not a PNG, JPEG or WebP image'], ['big.png', 'over 10 MB'], ['4.png', 'more than 3 images']]);
  });
});

describe('reply mail', () => {
  const input = { deliveryId: 'd_7', text: 'Your parcel left today.', recipient: { externalConversationId: 'alice@example.test', externalCustomerId: 'alice@example.test' } };
  const settings = { supportAddress: `support@${DOMAIN}`, supportName: 'Support', domain: DOMAIN, bounceLocalPart: 'bounces' };
  test('threaded on the customer\'s last mail, Message-ID and envelope sender from the deliveryId', () => {
    const mail = buildReplyMail(input, { lastMessageId: 'm2@x', references: ['m1@x', 'm2@x'], subject: 'Re: Order 1234', customer: 'alice@example.test' }, settings);
    expect(mail).toMatchObject({
      messageId: `reply.d_7@${DOMAIN}`,
      envelope: { from: `bounces+d_7@${DOMAIN}`, to: ['alice@example.test'] },
      to: 'alice@example.test',
      subject: 'Re: Order 1234',
      inReplyTo: 'm2@x',
      references: ['m1@x', 'm2@x'],
    });
  });
  test('an unknown thread: a neutral subject and no threading headers', () => {
    const mail = buildReplyMail(input, undefined, settings);
    expect(mail.subject).toBe('Your support request');
    expect(mail.inReplyTo).toBeUndefined();
    expect(replySubject('AW: Bestellung')).toBe('AW: Bestellung');
    expect(replySubject('Order')).toBe('Re: Order');
  });
  test('References are trimmed to the root and the newest ids', () => {
    const ids = Array.from({ length: 30 }, (_, i) => `m${i}@x`);
    const trimmed = trimReferences(ids);
    expect(trimmed).toHaveLength(20);
    expect(trimmed[0]).toBe('m0@x');
    expect(trimmed.at(-1)).toBe('m29@x');
  });
});

describe('configuration', () => {
  test('only the key is required; the rest defaults to the local stack; a flag wins over the environment', () => {
    expect(() => loadConfig([], {})).toThrow(ConfigError);
    const config = loadConfig([], { INTEGRATION_KEY: 'k' });
    expect(config).toMatchObject({
      integrationKey: 'k',
      apiBaseUrl: 'http://127.0.0.1:5000',
      subscription: 'connector-notifications-pull',
      projectId: 'demo-support-desk',
      pubsubEmulatorHost: '127.0.0.1:8085',
      smtpPort: 2525,
      supportAddress: 'support@support-desk.test',
      relay: undefined,
    });
    expect(loadConfig(['--relay', 'mx.example.com:587', '--smtp-port', '0'], { INTEGRATION_KEY: 'k', EMAIL_RELAY: 'ignored:1' })).toMatchObject({ relay: { host: 'mx.example.com', port: 587 }, smtpPort: 0 });
    expect(loadConfig([], { INTEGRATION_KEY: 'k', GCLOUD_PROJECT: 'prod' })?.pubsubEmulatorHost).toBeUndefined();
    expect(loadConfig(['--help'], {})).toBeUndefined();
    expect(() => loadConfig(['--relay', 'nohost'], { INTEGRATION_KEY: 'k' })).toThrow('host:port');
    expect(() => loadConfig(['--smtp-port', '70000'], { INTEGRATION_KEY: 'k' })).toThrow('port number');
    expect(() => loadConfig(['--bogus'], { INTEGRATION_KEY: 'k' })).toThrow(ConfigError);
  });
});
