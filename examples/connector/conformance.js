/**
 * The example connector as a conformance module: what `npx support-desk-connector-check
 * ./conformance.js` starts for each scenario (docs/conformance.md). The same pieces as main.js
 * (`startConnector`: the SDK's pull loop, receipts, erasures; the fake provider), wired to the
 * test service the checker gives: its address, the integration key and its subscription.
 *
 *   start({ baseUrl, key, subscription, providerDelayMs })  starts the connector
 *   stop()                                                   stops it (deliveries in progress finish)
 *   sendIncoming({ text, externalConversationId, externalCustomerId })
 *                                                            a customer message, posted as main.js posts its startup message
 *   lifecycle                                                the connector edits and unsends sent replies (its fake provider's send.edit / send.unsend)
 *   windows                                                  the connector fails a reply outside the window `window_closed` (`#window`)
 *   starts                                                   the connector starts conversations by handle (its fake provider opens a direct chat)
 *   channelMessage(providerMessageId)                        what the fake chat shows of a message: the checker sees the edit / deletion happened
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { ConnectorClient } from '@support-desk/connector-sdk';
import { createFakeProvider, startConnector } from './connector.js';

let running;
// The latest run's fake chat: the checker reads it after stop().
let chat;

/** The fake provider implements both: the edit-reply and unsend-reply scenarios run. */
export const lifecycle = { edit: true, unsend: true };

/** The fake provider fails a reply starting with `#window` `window_closed`: the window-closed scenario runs. */
export const windows = true;

/**
 * The fake provider reaches a new customer by handle (`input.start` with `recipient.address`): it
 * opens a direct chat and returns it as `conversation`, so the start-conversation scenario runs.
 */
export const starts = ['handle'];

/** Starts the connector on the checker's service. `providerDelayMs`: each provider call takes that long (the long-call scenario). */
export async function start({ baseUrl, key, subscription, providerDelayMs = 0 }) {
  if (running !== undefined) throw new Error('the example connector is already running');
  const client = new ConnectorClient({ integrationKey: key, baseUrl });
  const fake = createFakeProvider({ write: () => undefined });
  chat = fake;
  const send = async (input) => {
    if (providerDelayMs > 0) await sleep(providerDelayMs, undefined, { signal: input.signal });
    return fake(input);
  };
  running = { client, connector: startConnector({ client, subscription, send, edit: fake.edit, unsend: fake.unsend, onEvent: () => undefined }) };
}

export async function stop() {
  const current = running;
  running = undefined;
  await current?.connector.stop();
}

/** A customer writes: posted through the SDK (its eventId generated once and reused on every retry). */
export async function sendIncoming({ text, externalConversationId, externalCustomerId }) {
  if (running === undefined) throw new Error('the example connector is not running');
  await running.client.messages.send({ externalConversationId, sender: { externalId: externalCustomerId, kind: 'customer' }, text });
}

/** What the fake chat shows of a provider message id (undefined when it never sent it). */
export function channelMessage(providerMessageId) {
  return chat?.message(providerMessageId);
}
