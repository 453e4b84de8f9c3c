/**
 * The email connector as a conformance module (docs/conformance.md): what
 * `npx support-desk-connector-check examples/email-connector/dist/conformance.js` starts for each
 * scenario. The real connector (`startEmailConnector`: inbound SMTP server, the SDK's pull loop,
 * SMTP sender, erasure walk) on the checker's service, with its own data directory, replies going
 * to a local SMTP relay (smtp-server on loopback) that accepts every mail after `providerDelayMs`,
 * and customer mails sent to its inbound server over SMTP (`sendIncoming`).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SMTPServer } from 'smtp-server';
import { ConnectorClient, type PullSubscription } from '@support-desk/connector-sdk';
import { DEFAULTS } from './config.js';
import { startEmailConnector, type RunningConnector } from './connector.js';
import { sendMail } from './mail-client.js';

/** What the checker gives `start()` (its `ConformanceStartContext`). */
export interface ConformanceContext {
  baseUrl: string;
  key: string;
  subscription: PullSubscription;
  /** Each provider call (here: the relay's answer to the mail) takes this long. */
  providerDelayMs?: number;
}

interface Running {
  connector: RunningConnector;
  relay: SMTPServer;
  dataDir: string;
}

let running: Running | undefined;

/** A relay that takes every mail, answering 250 after `delayMs`. */
async function startRelay(delayMs: number): Promise<{ server: SMTPServer; port: number }> {
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    logger: false,
    onData(stream, _session, callback) {
      stream.resume();
      stream.on('end', () => setTimeout(() => callback(null, 'queued by the conformance relay'), delayMs));
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.server.address();
  return { server, port: typeof address === 'object' && address !== null ? address.port : 0 };
}

export async function start(context: ConformanceContext): Promise<void> {
  if (running !== undefined) throw new Error('the email connector is already running');
  const dataDir = await mkdtemp(join(tmpdir(), 'email-conformance-'));
  const relay = await startRelay(context.providerDelayMs ?? 0);
  try {
    const connector = await startEmailConnector(
      {
        ...DEFAULTS,
        integrationKey: context.key,
        apiBaseUrl: context.baseUrl,
        pubsubEmulatorHost: undefined,
        smtpPort: 0,
        relay: { host: '127.0.0.1', port: relay.port },
        dataDir,
      },
      { client: new ConnectorClient({ integrationKey: context.key, baseUrl: context.baseUrl }), subscription: context.subscription },
    );
    running = { connector, relay: relay.server, dataDir };
  } catch (err) {
    await new Promise<void>((resolve) => relay.server.close(() => resolve()));
    await rm(dataDir, { recursive: true, force: true });
    throw err;
  }
}

export async function stop(): Promise<void> {
  const current = running;
  running = undefined;
  if (current === undefined) return;
  await current.connector.stop();
  await new Promise<void>((resolve) => current.relay.close(() => resolve()));
  await rm(current.dataDir, { recursive: true, force: true });
}

/** A customer mails the support address: over SMTP to the connector's inbound server, which posts it. */
export async function sendIncoming(input: { text: string; externalConversationId: string; externalCustomerId: string }): Promise<void> {
  if (running === undefined) throw new Error('the email connector is not running');
  const { inbound } = running.connector;
  await sendMail({ host: inbound.host, port: inbound.port, from: input.externalCustomerId, to: DEFAULTS.supportAddress, subject: 'Conformance check', text: input.text });
}
