// A connector for a pretend chat channel: customer messages in, operator replies out, receipts back.
// The shape the conformance check runs: start({ baseUrl, key, subscription }), stop(), sendIncoming().
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { ConnectorClient, createReceiptTracker, processErasures, runPullLoop } from '@support-desk/connector-sdk';

let client;
let loop;
let erasureTimer;

export async function start({ baseUrl, key, subscription, providerDelayMs = 0 }) {
  client = new ConnectorClient({ baseUrl, integrationKey: key });
  const receipts = createReceiptTracker(client);

  // Called once per reply, after the service said "sending". Replace the body with your channel's API.
  async function send({ text, recipient, attachments, signal }) {
    const files = await Promise.all(attachments.map((file) => file.fetch())); // hash-checked bytes
    if (providerDelayMs > 0) await sleep(providerDelayMs, undefined, { signal }); // a slow channel (conformance check)
    const providerMessageId = `chat-${randomUUID()}`;
    console.log(`-> ${recipient.externalConversationId}: ${text}${files.length ? ` (+${files.length} file)` : ''}`);
    return { providerMessageIds: [providerMessageId] };
  }

  // An erased customer: forget what you stored of them; the SDK then acknowledges. At start-up and hourly.
  const purge = (erasure) => console.log(`forget ${erasure.externalCustomerId}`);
  await processErasures(client, purge);
  erasureTimer = setInterval(() => processErasures(client, purge).catch(() => {}), 3_600_000);

  // Remember providerMessageId -> deliveryId; your channel's webhook later calls receipts.report().
  // This pretend channel reports the delivery one second after the send.
  async function pretendChannelReceipt({ result, notification }) {
    await receipts.remember(result, notification);
    await sleep(1000);
    await receipts.report(result.providerMessageIds[0], 'delivered');
  }

  loop = runPullLoop(client, subscription, send, {
    onEvent: (event) => {
      if (event.type === 'handled' && event.result?.kind === 'sent') pretendChannelReceipt(event).catch(() => {});
    },
  });
}

export async function stop() {
  clearInterval(erasureTimer);
  await loop?.stop();
}

// A customer writes in your channel: your webhook would call this.
export async function sendIncoming({ text, externalConversationId, externalCustomerId }) {
  return client.messages.send({ externalConversationId, sender: { externalId: externalCustomerId }, text });
}
