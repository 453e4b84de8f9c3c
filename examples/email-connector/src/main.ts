#!/usr/bin/env node
/**
 * `npm run example:email` (at the repository root): the email connector against the local stack.
 * Prints what it uses, then one line per mail and delivery; Ctrl-C stops it cleanly.
 */
import { ConnectorApiError, DeliveryReportError } from '@support-desk/connector-sdk';
import { ConfigError, loadConfig, usage } from './config.js';
import { startEmailConnector, type ConnectorEvent, type RunningConnector } from './connector.js';
import { MailRejection } from './inbound.js';

function describeError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  if (err instanceof ConnectorApiError) return `${err.name} ${err.status ?? ''} ${err.code}: ${err.message}`.replace('  ', ' ');
  return `${err.name}: ${err.message}`;
}

function print(event: ConnectorEvent): void {
  const out = (line: string) => console.log(`[email] ${line}`);
  switch (event.type) {
    case 'mail_accepted':
      return out(
        `mail from ${event.from} -> conversation ${event.conversationId} (thread ${event.externalConversationId}), message ${event.messageId}` +
          `${event.duplicate ? ' (duplicate: already posted)' : ''}, ${event.images} image(s)${event.omitted > 0 ? `, ${event.omitted} attachment(s) named in the text` : ''}`,
      );
    case 'mail_rejected':
      return out(`mail from ${event.from || '<>'} answered ${event.responseCode} ${event.reason}${event.error instanceof MailRejection || event.error === undefined ? '' : ` (${describeError(event.error)})`}`);
    case 'bounce':
      return out(`bounce for delivery ${event.report.deliveryId ?? '(unknown)'}: ${event.report.status} ${event.report.code}; receipt ${event.receipt}${event.error === undefined ? '' : ` (${describeError(event.error)})`}`);
    case 'reply_sent':
      return out(`${event.kind} ${event.deliveryId} to ${event.to}: relay answered ${event.response} (Message-ID <${event.messageId}>)`);
    case 'reply_failed':
      return out(`${event.kind} ${event.deliveryId} to ${event.to || '(no address)'}: ${event.outcome} ${event.code}${event.response ? ` (relay: ${event.response})` : ''}`);
    case 'sink_mail':
      return out(`mailbox sink stored ${event.file}`);
    case 'handled': {
      const id = event.notification.deliveryId;
      if (event.result !== undefined) {
        const r = event.result;
        const what =
          r.kind === 'sent'
            ? `sent as ${r.providerMessageIds.join(', ')}`
            : r.kind === 'retry_scheduled' || r.kind === 'failed' || r.kind === 'unknown'
              ? `reported ${r.kind} (${r.code})`
              : r.kind === 'skipped'
                ? `skipped (${r.reason})`
                : r.kind === 'already_finished'
                  ? `already finished (${r.status}; provider not called)`
                  : JSON.stringify(r);
        return out(`delivery ${id} (${event.via}): ${what}`);
      }
      if (event.error instanceof DeliveryReportError && event.error.step === 'complete') {
        return out(`delivery ${id}: SENT as ${event.error.providerMessageIds.join(', ')} but complete could not be reported: ${describeError(event.error.cause)}`);
      }
      return out(`delivery ${id}: ${event.action === 'nack' ? 'will be redelivered' : 'dropped'}: ${describeError(event.error)}`);
    }
    case 'erasure_purged':
      return out(`erasure ${event.erasureId}: ${event.threads} thread(s) and ${event.messageIds} Message-ID(s) forgotten, acknowledged`);
    case 'erasure_failed':
      return out(`erasure ${event.erasureId}: ${event.step === 'purge' ? 'purge failed' : 'purged, but the acknowledgement failed'} (tried again later): ${describeError(event.error)}`);
    case 'erasures_error':
      return out(`could not list erasures (tried again later): ${describeError(event.error)}`);
    case 'invalid_notification':
      return out(`a message that is not a delivery notification was acknowledged: ${describeError(event.error)}`);
    case 'catch_up_failed':
      return out(`catch-up failed (tried again later): ${describeError(event.error)}`);
    case 'subscription_error':
      return out(`subscription error: ${describeError(event.error)}`);
    default:
      // The processDelivery steps (claimed, started, ...) and the loop's catch-up passes: not printed.
      return;
  }
}

let config;
try {
  config = loadConfig(process.argv.slice(2), process.env);
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  console.error(`[email] ${err.message}\n\n${usage()}`);
  process.exit(2);
}
if (config === undefined) {
  console.log(usage());
  process.exit(0);
}

let connector: RunningConnector;
try {
  connector = await startEmailConnector(config, { onEvent: print });
} catch (err) {
  console.error(`[email] could not start: ${describeError(err)}`);
  process.exit(1);
}
const mailbox = connector.sink === undefined ? `relay ${connector.relay.host}:${connector.relay.port}` : `local mailbox sink on 127.0.0.1:${connector.sink.port}, mails in ${connector.sink.dir}`;
console.log(
  [
    `[email] API           ${connector.client.baseUrl}`,
    `[email] Pub/Sub       ${connector.subscriptionName}${config.pubsubEmulatorHost === undefined ? '' : ` (emulator ${config.pubsubEmulatorHost})`}`,
    `[email] inbound SMTP  ${connector.inbound.host}:${connector.inbound.port} for <${config.supportAddress}>`,
    `[email] replies to    ${mailbox}`,
    `[email] threads       ${connector.store.path}`,
    `[email] send a mail:  npm run example:email:send -- --from alice@example.test --text "Hello, my order is late"`,
  ].join('\n'),
);

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  console.log(`[email] ${signal}: finishing deliveries in progress...`);
  setTimeout(() => {
    console.error('[email] did not stop within 100 s; exiting');
    process.exit(1);
  }, 100_000).unref();
  try {
    await connector.stop();
    console.log('[email] stopped');
  } catch (err) {
    console.error(`[email] error while stopping: ${describeError(err)}`);
    process.exitCode = 1;
  }
}
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));
