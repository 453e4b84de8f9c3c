/**
 * Email connector, inbound: mails sent over real SMTP to the connector's server become messages
 * of the emulator stack (POST /v1/messages through the SDK). Its refusals: ./refusals.test.ts.
 */
import { randomUUID } from 'node:crypto';
import { closePubSub, eventually } from '../helpers/deliveries';
import { findCustomers, listMessageDocs } from '../helpers/messages';
import { closeStack } from '../helpers/stack';
import { png } from '../../unit/fixtures/image-bytes';
import { startEmailStack, waitForAccepted, type EmailStack } from './helpers';

jest.setTimeout(120_000);

let stack: EmailStack;
beforeAll(async () => {
  stack = await startEmailStack();
});
afterAll(async () => {
  await stack?.close();
  await closePubSub();
  await closeStack();
});

test('a mail with two PNGs and a PDF is one message with two images, the PDF named in the text; the same mail delivered again is the same message', async () => {
  const from = `alice-${randomUUID().slice(0, 8)}@example.test`;
  const messageId = `${randomUUID()}@mail.example.test`;
  const mail = {
    from,
    fromName: 'Alice Example',
    subject: 'Broken parcel',
    text: 'The parcel arrived broken, photos attached.',
    messageId,
    attachments: [
      { filename: 'front.png', content: png(40, 30), contentType: 'image/png' },
      { filename: 'invoice.pdf', content: Buffer.from('%PDF-1.7 not an image'), contentType: 'application/pdf' },
      { filename: 'back.png', content: png(30, 40), contentType: 'image/png' },
    ],
  };
  const first = await stack.mail(mail);
  expect(first.response).toMatch(/^250 2\.0\.0 Accepted as message m_/);
  const accepted = await waitForAccepted(stack, stack.acceptedEvents().length);
  expect(accepted).toMatchObject({ from, externalConversationId: from, duplicate: false, images: 2, omitted: 1 });

  const { workspaceId } = stack.integration;
  const [message, ...others] = await listMessageDocs(workspaceId, accepted.conversationId);
  expect(others).toEqual([]);
  expect(message?.text).toBe(
    'Subject: Broken parcel\n\nThe parcel arrived broken, photos attached.\n\n[Attachments not shown: invoice.pdf (application/pdf, 21 B; not a PNG, JPEG or WebP image)]',
  );
  expect((message?.images as Array<{ contentType: string; width: number; height: number }>).map((i) => [i.contentType, i.width, i.height])).toEqual([
    ['image/png', 40, 30],
    ['image/png', 30, 40],
  ]);
  const [customer] = await findCustomers(workspaceId, from);
  expect(customer).toMatchObject({ externalId: from, displayName: 'Alice Example' });

  // The sending MTA delivers the same mail again (it never saw our answer): the same Message-ID,
  // so the same eventId and content: a duplicate, still one message.
  const again = await stack.mail(mail);
  expect(again.response).toMatch(/\(duplicate\)$/);
  const second = await waitForAccepted(stack, stack.acceptedEvents().length);
  expect(second).toMatchObject({ eventId: accepted.eventId, conversationId: accepted.conversationId, messageId: accepted.messageId, duplicate: true });
  expect(await listMessageDocs(workspaceId, accepted.conversationId)).toHaveLength(1);
});

test('an HTML-only mail is converted to text; an answer to it joins its conversation (no subject line then)', async () => {
  const from = `bob-${randomUUID().slice(0, 8)}@example.test`;
  const firstId = `${randomUUID()}@mail.example.test`;
  await stack.mail({ from, subject: 'Invoice', html: '<p>Hello,</p><p>where is my <b>invoice</b>?<br>Thanks</p>', messageId: firstId });
  const first = await eventually(async () => stack.acceptedEvents().find((e) => e.from === from), 'the first mail');
  await stack.mail({ from, subject: 'Re: Invoice', text: 'Any news?', inReplyTo: firstId, references: [firstId] });
  const second = await eventually(async () => stack.acceptedEvents().filter((e) => e.from === from)[1], 'the answer');
  expect(second.conversationId).toBe(first.conversationId);
  const texts = (await listMessageDocs(stack.integration.workspaceId, first.conversationId)).map((m) => m.text as string).sort();
  expect(texts).toEqual(['Any news?', 'Subject: Invoice\n\nHello,\n\nwhere is my invoice?\nThanks']);
});
