/**
 * Email connector, outbound: operator replies written as the console writes them are delivered
 * by the connector (pull loop -> processDelivery -> SMTP) to a local relay playing the customer's
 * mail server, with the delivery outcomes the relay's answers call for; a bounce coming back to
 * the connector becomes a receipt.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { DocumentData } from 'firebase-admin/firestore';
import { attemptEvents, closePubSub, eventually, readReply, sleep, writeReply } from '../helpers/deliveries';
import { closeStack } from '../helpers/stack';
import { allowAttachments, newMember, seedUpload, writeReplyWithAttachments } from '../helpers/console-uploads';
import { buildDsn } from '../../../examples/email-connector/src/relay-sink';
import { DOMAIN, SUPPORT, startEmailStack, type EmailStack, type RelayAnswer } from './helpers';

jest.setTimeout(120_000);

const stacks: EmailStack[] = [];
afterEach(async () => {
  await Promise.all(stacks.splice(0).map((s) => s.close()));
});
afterAll(async () => {
  await closePubSub();
  await closeStack();
});

/** A connector whose relay answers the mails it receives with `answers`, and a customer's mail that opened a conversation. */
async function customerWrote(answers: RelayAnswer[] = []) {
  const stack = await startEmailStack({ relayAnswers: answers });
  stacks.push(stack);
  const customer = `dana-${randomUUID().slice(0, 8)}@example.test`;
  const customerMessageId = `${randomUUID()}@mail.example.test`;
  const olderId = `${randomUUID()}@mail.example.test`;
  // A mail that is already a reply in the customer's thread: References carry the older id.
  await stack.mail({ from: customer, fromName: 'Dana', subject: 'Re: Order 1234', text: 'Where is my order?', messageId: customerMessageId, inReplyTo: olderId, references: [olderId] });
  const accepted = await eventually(async () => stack.acceptedEvents().find((e) => e.from === customer), 'the customer mail');
  const conversation = { integration: stack.integration, conversationId: accepted.conversationId };
  return { stack, customer, customerMessageId, olderId, conversation };
}

const FINAL = ['sent', 'failed', 'unknown'];
async function finalMirror(conversation: { integration: EmailStack['integration']; conversationId: string }, replyId: string): Promise<DocumentData> {
  return eventually(
    async () => {
      const mirror = (await readReply(conversation, replyId))?.delivery as DocumentData | undefined;
      return mirror !== undefined && FINAL.includes(mirror.status as string) ? mirror : undefined;
    },
    `the final delivery status of reply ${replyId}`,
    45_000,
  );
}

test('an operator reply arrives at the relay threaded on the customer\'s mail, with the Message-ID of its delivery; the customer\'s answer joins the conversation', async () => {
  const { stack, customer, customerMessageId, olderId, conversation } = await customerWrote();
  const replyId = await writeReply(conversation, 'Your order left our warehouse this morning.');
  const mirror = await finalMirror(conversation, replyId);
  const deliveryId = mirror.deliveryId as string;
  const messageId = `reply.${deliveryId}@${DOMAIN}`;
  expect(mirror).toMatchObject({ status: 'sent', providerMessageIds: [messageId] });
  expect(attemptEvents(mirror)).toEqual(['claimed', 'started', 'sent']);

  expect(stack.relay.accepted).toHaveLength(1);
  const [mail] = stack.relay.accepted;
  expect(mail?.envelopeFrom).toBe(`bounces+${deliveryId}@${DOMAIN}`);
  expect(mail?.recipients).toEqual([customer]);
  expect(mail?.parsed).toMatchObject({
    messageId: `<${messageId}>`,
    inReplyTo: `<${customerMessageId}>`,
    references: [`<${olderId}>`, `<${customerMessageId}>`],
    subject: 'Re: Order 1234',
    from: { value: [{ address: SUPPORT, name: 'Support desk' }] },
    to: { value: [{ address: customer, name: '' }] },
  });
  expect(mail?.parsed.text?.trim()).toBe('Your order left our warehouse this morning.');

  // The customer answers our reply; their client quotes only our Message-ID.
  await stack.mail({ from: customer, subject: 'Re: Order 1234', text: 'Great, thanks!', inReplyTo: messageId });
  const answer = await eventually(async () => stack.acceptedEvents().filter((e) => e.from === customer)[1], 'the answer');
  expect(answer.conversationId).toBe(conversation.conversationId);
});

test('the relay answering 451 then 250: one mail, and the attempt log shows the retry then the send', async () => {
  const { stack, conversation } = await customerWrote([{ code: 451, message: '4.7.1 Greylisted, please try again in 1 second' }]);
  const replyId = await writeReply(conversation, 'A reply that is greylisted once.');
  const mirror = await finalMirror(conversation, replyId);
  expect(mirror.status).toBe('sent');
  expect(attemptEvents(mirror)).toEqual(['claimed', 'started', 'retry:smtp_4_7_1', 'claimed', 'started', 'sent']);
  expect(stack.relay.dataCount()).toBe(2);
  expect(stack.relay.accepted).toHaveLength(1);
  expect(stack.relay.accepted[0]?.parsed.messageId).toBe(`<reply.${mirror.deliveryId as string}@${DOMAIN}>`);
});

test('the relay answering 550: failed with the code of its status', async () => {
  const { stack, conversation } = await customerWrote([{ code: 550, message: '5.1.1 <dana@example.test>: Recipient address rejected: User unknown' }]);
  const replyId = await writeReply(conversation, 'A reply to nobody.');
  const mirror = await finalMirror(conversation, replyId);
  expect(mirror).toMatchObject({ status: 'failed', error: { outcome: 'failed', code: 'smtp_5_1_1' } });
  expect(attemptEvents(mirror)).toEqual(['claimed', 'started', 'failed:smtp_5_1_1']);
  expect(stack.relay.accepted).toHaveLength(0);
});

test('the relay dropping the connection after DATA: unknown, and the mail is never sent again', async () => {
  const { stack, conversation } = await customerWrote(['drop']);
  const replyId = await writeReply(conversation, 'A reply whose fate is unknown.');
  const mirror = await finalMirror(conversation, replyId);
  expect(mirror).toMatchObject({ status: 'unknown', error: { outcome: 'unknown', code: 'smtp_connection_lost_after_data' } });
  expect(attemptEvents(mirror)).toEqual(['claimed', 'started', 'unknown:smtp_connection_lost_after_data']);
  // Nothing re-sends it: the relay saw the message once, and still once a while later (a negative
  // check: nothing observable marks that no re-send is coming, so it stays a bounded wait).
  await sleep(3_000);
  expect(stack.relay.dataCount()).toBe(1);
  expect(stack.relay.accepted).toHaveLength(0);
  expect((await readReply(conversation, replyId))?.delivery).toMatchObject({ status: 'unknown' });
});

test('a bounce (a DSN to the reply\'s envelope sender) becomes a failed receipt with its code', async () => {
  const { stack, conversation } = await customerWrote();
  const replyId = await writeReply(conversation, 'A reply that bounces later.');
  const mirror = await finalMirror(conversation, replyId);
  expect(mirror.status).toBe('sent');
  const [sent] = stack.relay.accepted;
  const headerEnd = sent?.raw.indexOf('\r\n\r\n') ?? -1;
  const dsn = buildDsn({ reportingHost: 'mx.example.test', to: sent?.envelopeFrom ?? '', recipient: sent?.recipients[0] ?? '', originalHeaders: sent?.raw.slice(0, headerEnd) ?? '', status: '5.2.2', diagnostic: '552 5.2.2 Mailbox full' });
  // Bounces come from the null sender, to the envelope sender of the reply.
  const answer = await stack.mail({ raw: dsn, envelope: { from: '', to: [sent?.envelopeFrom ?? ''] } });
  expect(answer.response).toMatch(/^250 2\.0\.0 Bounce reported for delivery /);
  const receipt = await eventually(async () => ((await readReply(conversation, replyId))?.delivery as DocumentData | undefined)?.receipt as DocumentData | undefined, 'the receipt');
  expect(receipt).toMatchObject({ status: 'failed', code: 'smtp_5_2_2' });
  expect((await readReply(conversation, replyId))?.delivery).toMatchObject({ status: 'sent' });
  // A bounce is not a customer message.
  expect(stack.acceptedEvents()).toHaveLength(1);
});

test('a reply with a PDF attachment arrives at the relay with the PDF attached, byte for byte; each part is sent', async () => {
  const { stack, customer, conversation } = await customerWrote();
  const { workspaceId, integrationId } = stack.integration;
  // The integration opts in to PDF files (as an admin does in the console); a member uploads one.
  await allowAttachments(workspaceId, integrationId, { contentTypes: ['application/pdf'], maxBytes: 1024 * 1024, maxCount: 2 });
  const member = await newMember(workspaceId);
  const pdf = Buffer.from(`%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\n% invoice ${randomUUID()}\ntrailer << /Root 1 0 R >>\n%%EOF\n`);
  // Stored as the upload function stores it (the console's upload is tested in test/integration/console/).
  const attachment = await seedUpload(workspaceId, conversation.conversationId, member.uid, { bytes: pdf, name: 'invoice 1234.pdf', type: 'application/pdf' });
  expect(attachment).toMatchObject({ name: 'invoice 1234.pdf', contentType: 'application/pdf', size: pdf.length, sha256: createHash('sha256').update(pdf).digest('hex') });
  const replyId = await writeReplyWithAttachments(workspaceId, conversation.conversationId, member, 'Your invoice is attached.', [attachment]);
  const mirror = await finalMirror(conversation, replyId);
  const messageId = `reply.${mirror.deliveryId as string}@${DOMAIN}`;
  expect(mirror).toMatchObject({ status: 'sent', providerMessageIds: [messageId] });
  expect(mirror.parts).toEqual([
    { part: 'text', status: 'sent', providerMessageIds: [messageId] },
    { part: attachment.attachmentId, status: 'sent', providerMessageIds: [messageId] },
  ]);

  expect(stack.relay.accepted).toHaveLength(1);
  const [mail] = stack.relay.accepted;
  expect(mail?.recipients).toEqual([customer]);
  expect(mail?.parsed.text?.trim()).toBe('Your invoice is attached.');
  expect(mail?.parsed.attachments).toHaveLength(1);
  const [attached] = mail?.parsed.attachments ?? [];
  expect(attached).toMatchObject({ filename: 'invoice 1234.pdf', contentType: 'application/pdf' });
  expect(Buffer.compare(attached?.content ?? Buffer.alloc(0), pdf)).toBe(0);
});
