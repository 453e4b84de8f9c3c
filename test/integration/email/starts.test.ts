/**
 * Email connector, conversations the desk starts (docs/contract.md#conversations-the-desk-starts),
 * through the real start trigger, Pub/Sub, the connector's pull loop and SMTP on loopback: an admin
 * turns starts on by email, a member's start document becomes a new mail to the address at the test
 * relay (a new thread whose root is the start's Message-ID), the start delivery ends `sent` with
 * that thread, and the customer's answer to the mail (In-Reply-To its Message-ID, sent over SMTP to
 * the connector's inbound server) lands in the conversation the start joined. A start the relay
 * refuses for good fails with the relay's code; a temporary refusal is retried.
 */
import { randomUUID } from 'node:crypto';
import { FieldValue, type DocumentData } from 'firebase-admin/firestore';
import { attemptEvents, closePubSub, eventually } from '../helpers/deliveries';
import { adminDb, closeStack, integrationRef, type TestIntegration } from '../helpers/stack';
import { startedConversationId, startMessageId } from '../../../functions/src/rules/starts';
import { DOMAIN, SUPPORT, startEmailStack, type EmailStack, type RelayAnswer } from './helpers';

// The first start of a run meets a cold trigger in the emulator; a start end to end is several triggers and calls.
jest.setTimeout(150_000);

const stacks: EmailStack[] = [];
afterEach(async () => {
  await Promise.all(stacks.splice(0).map((s) => s.close()));
});
afterAll(async () => {
  await closePubSub();
  await closeStack();
});

const ws = (integration: TestIntegration) => adminDb().collection('workspaces').doc(integration.workspaceId);
const conversationDoc = async (integration: TestIntegration, conversationId: string): Promise<DocumentData | undefined> => (await ws(integration).collection('conversations').doc(conversationId).get()).data();
const messagesOf = async (integration: TestIntegration, conversationId: string) => (await ws(integration).collection('conversations').doc(conversationId).collection('messages').get()).docs;

/** The email connector on a fresh integration whose admin turned starts on by email. */
async function startsByEmail(relayAnswers: RelayAnswer[] = []): Promise<EmailStack> {
  const stack = await startEmailStack({ relayAnswers });
  stacks.push(stack);
  await integrationRef(stack.integration.workspaceId, stack.integration.integrationId).update({ conversations: { start: { addressKinds: ['email'] } } });
  return stack;
}

/** A member starts a conversation (the start document as the console writes it); returns the started conversation's id once the service answered. */
async function memberStarts(integration: TestIntegration, address: string, text: string): Promise<{ startId: string; started: string }> {
  const startId = `st_${randomUUID()}`;
  const ref = ws(integration).collection('conversationStarts').doc(startId);
  await ref.set({ integrationId: integration.integrationId, to: { kind: 'email', value: address }, text, uid: 'operator-1', requestedAt: FieldValue.serverTimestamp() });
  const answer = await eventually(
    async () => {
      const data = (await ref.get()).data();
      return data?.result !== undefined || data?.error !== undefined ? data : undefined;
    },
    `the answer of start ${startId}`,
    60_000,
  );
  expect(answer.error).toBeUndefined();
  expect(answer.result).toEqual({ conversationId: startedConversationId(integration.integrationId, startId), reused: false });
  return { startId, started: (answer.result as { conversationId: string }).conversationId };
}

/** The start delivery of the started conversation, once it reached one of `statuses`. */
async function startDeliveryIn(integration: TestIntegration, startId: string, statuses: string[]): Promise<DocumentData> {
  return eventually(
    async () => {
      const deliveries = (await ws(integration).collection('deliveries').get()).docs.map((d) => d.data());
      // The start's message id is derived from the start (its conversation changes when it joins the thread).
      const found = deliveries.find((d) => d.messageId === startMessageId(integration.integrationId, startId) && d.start !== undefined);
      return found !== undefined && statuses.includes(found.status as string) ? found : undefined;
    },
    `the start delivery of ${startId} in ${statuses.join('/')}`,
    60_000,
  );
}

test("a member's start to ana@example.com is a new mail from the connector; the delivery ends sent with the mail's thread, and ana's answer lands in the started conversation", async () => {
  const stack = await startsByEmail();
  const { integration } = stack;
  const address = 'ana@example.com';
  const text = 'Hello Ana,\nyour order 1234 is ready for pick-up.';
  const { startId, started } = await memberStarts(integration, address, text);

  const delivery = await startDeliveryIn(integration, startId, ['sent', 'failed', 'unknown']);
  const deliveryId = delivery.deliveryId as string;
  const messageId = `start.${deliveryId}@${DOMAIN}`;
  expect(delivery).toMatchObject({ status: 'sent', providerMessageIds: [messageId], start: { thread: { externalConversationId: messageId, externalCustomerId: address } } });

  // The relay got one new mail to the address: no In-Reply-To, no References, the start's Message-ID.
  expect(stack.relay.accepted).toHaveLength(1);
  const [mail] = stack.relay.accepted;
  expect(mail?.envelopeFrom).toBe(`bounces+${deliveryId}@${DOMAIN}`);
  expect(mail?.recipients).toEqual([address]);
  expect(mail?.parsed).toMatchObject({ messageId: `<${messageId}>`, subject: 'Hello Ana,', from: { value: [{ address: SUPPORT, name: 'Support desk' }] }, to: { value: [{ address }] } });
  expect(mail?.parsed.inReplyTo).toBeUndefined();
  expect(mail?.parsed.references).toBeUndefined();
  expect(mail?.parsed.text?.trim()).toBe(text);

  // The started conversation joined the thread's conversation (or is it): follow mergedInto.
  const startedDoc = await conversationDoc(integration, started);
  const joined = (startedDoc?.mergedInto as string | undefined) ?? started;
  expect(delivery.conversationId).toBe(joined);
  const startMessage = (await messagesOf(integration, joined)).find((m) => m.id === delivery.messageId);
  expect(startMessage?.data()).toMatchObject({ direction: 'outbound', text, delivery: { status: 'sent', providerMessageIds: [messageId] } });
  expect(attemptEvents(startMessage?.data().delivery as DocumentData)).toEqual(['claimed', 'started', 'sent']);

  // Ana answers the mail from her client: In-Reply-To (and References) its Message-ID.
  await stack.mail({ from: 'Ana@Example.com', fromName: 'Ana', subject: 'Re: Hello Ana,', text: 'Great, I will come by tomorrow.', inReplyTo: messageId, references: [messageId] });
  const answer = await eventually(async () => stack.acceptedEvents().find((e) => e.from === address), "ana's answer", 30_000);
  expect(answer.externalConversationId).toBe(messageId);
  expect(answer.conversationId).toBe(joined);
  const texts = (await messagesOf(integration, joined)).map((m) => [m.data().direction, m.data().text] as [string, string]).sort();
  expect(texts).toEqual([
    ['inbound', 'Great, I will come by tomorrow.'],
    ['outbound', text],
  ]);
});

test('a start whose address the relay refuses for good (550 5.1.1) fails smtp_5_1_1; nothing joins a thread', async () => {
  const stack = await startsByEmail([{ code: 550, message: '5.1.1 <nobody@example.com>: Recipient address rejected: User unknown' }]);
  const { integration } = stack;
  const { startId, started } = await memberStarts(integration, 'nobody@example.com', 'Hello?');
  const delivery = await startDeliveryIn(integration, startId, ['sent', 'failed', 'unknown']);
  expect(delivery).toMatchObject({ status: 'failed', conversationId: started });
  const mirror = (await messagesOf(integration, started)).find((m) => m.id === delivery.messageId)?.data().delivery as DocumentData | undefined;
  expect(mirror).toMatchObject({ status: 'failed', error: { outcome: 'failed', code: 'smtp_5_1_1' } });
  expect(attemptEvents(mirror)).toEqual(['claimed', 'started', 'failed:smtp_5_1_1']);
  expect(stack.relay.accepted).toHaveLength(0);
  expect(await conversationDoc(integration, started)).not.toHaveProperty('mergedInto');
});

test('a start the relay refuses for now (451 4.7.1) is retried, then sent once, with the same Message-ID', async () => {
  const stack = await startsByEmail([{ code: 451, message: '4.7.1 Greylisted, please try again in 1 second' }]);
  const { integration } = stack;
  const { startId } = await memberStarts(integration, 'bo@example.com', 'Your refund is on its way.');
  const delivery = await startDeliveryIn(integration, startId, ['sent', 'failed', 'unknown']);
  const messageId = `start.${delivery.deliveryId as string}@${DOMAIN}`;
  expect(delivery).toMatchObject({ status: 'sent', providerMessageIds: [messageId] });
  expect(stack.relay.dataCount()).toBe(2);
  expect(stack.relay.accepted.map((m) => m.parsed.messageId)).toEqual([`<${messageId}>`]);
  const mirror = (await messagesOf(integration, delivery.conversationId as string)).find((m) => m.id === delivery.messageId)?.data().delivery as DocumentData | undefined;
  expect(attemptEvents(mirror)).toEqual(['claimed', 'started', 'retry:smtp_4_7_1', 'claimed', 'started', 'sent']);
});
