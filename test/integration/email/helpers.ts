/**
 * The email connector (examples/email-connector) on real SMTP over loopback against the emulator
 * stack: the connector itself (inbound SMTP server, pull loop on its own subscription, outbound
 * sender), and a second smtp-server playing the customer's mail server (the relay), scripted to
 * answer each mail with 250, a 4xx/5xx reply, or a dropped connection. Every port is free (0).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SMTPServer } from 'smtp-server';
import { ConnectorClient } from '@support-desk/connector-sdk';
import { simpleParser, type ParsedMail } from 'mailparser';
import type { EmailConnectorConfig } from '../../../examples/email-connector/src/config';
import { startEmailConnector, type ConnectorEvent, type RunningConnector } from '../../../examples/email-connector/src/connector';
import type { InboundEvent } from '../../../examples/email-connector/src/inbound';
import { sendMail, type OutgoingMail, type SentMail } from '../../../examples/email-connector/src/mail-client';
import { eventually } from '../helpers/deliveries';
import { apiBaseUrl, createTestIntegration, projectId, type TestIntegration, type TestIntegrationOptions } from '../helpers/stack';
import { createRawTopic, type RawTopic } from '../../../sdk/test/e2e/helpers';

export const SUPPORT = 'support@support-desk.test';
export const DOMAIN = 'support-desk.test';

/** How the test relay answers one mail (after reading all of it). */
export type RelayAnswer = 'accept' | 'drop' | { code: number; message: string };

export interface RelayMail {
  envelopeFrom: string;
  recipients: string[];
  raw: string;
  parsed: ParsedMail;
}

export interface TestRelay {
  port: number;
  /** Mails it accepted (answered 250). */
  accepted: RelayMail[];
  /** Every mail it received the whole of (DATA), whatever it answered. */
  dataCount(): number;
  close(): Promise<void>;
}

/** An smtp-server that answers the n-th mail with `answers[n]` (then 250). */
export async function startTestRelay(answers: RelayAnswer[] = []): Promise<TestRelay> {
  const accepted: RelayMail[] = [];
  let received = 0;
  const server: SMTPServer = new SMTPServer({
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const answer = answers[received] ?? 'accept';
        received += 1;
        if (answer === 'drop') {
          // The whole message arrived, then the relay vanishes without answering.
          for (const connection of server.connections) if (connection.session.id === session.id) connection._socket.destroy();
          return;
        }
        if (answer !== 'accept') return callback(Object.assign(new Error(answer.message), { responseCode: answer.code }));
        const raw = Buffer.concat(chunks).toString('utf8');
        simpleParser(raw).then(
          (parsed) => {
            accepted.push({ envelopeFrom: session.envelope.mailFrom === false ? '' : session.envelope.mailFrom.address, recipients: session.envelope.rcptTo.map((r) => r.address), raw, parsed });
            callback(null, 'queued as test');
          },
          (err: Error) => callback(err),
        );
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.server.address();
  return {
    port: typeof address === 'object' && address !== null ? address.port : 0,
    accepted,
    dataCount: () => received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export interface EmailStack {
  integration: TestIntegration;
  topic: RawTopic;
  relay: TestRelay;
  connector: RunningConnector;
  events: ConnectorEvent[];
  /** Sends a mail to the connector's inbound SMTP server (to the support address unless said). */
  mail(mail: Omit<OutgoingMail, 'host' | 'port'>): Promise<SentMail>;
  /** The `mail_accepted` event of the n-th (1-based) acceptance of a mail by eventId order of arrival. */
  acceptedEvents(): Extract<InboundEvent, { type: 'mail_accepted' }>[];
  close(): Promise<void>;
}

/** A fresh integration with its own topic, the connector on it, and a test relay. */
export async function startEmailStack(
  options: { relayAnswers?: RelayAnswer[]; integration?: TestIntegrationOptions; integrationKey?: string; clientRetry?: ConstructorParameters<typeof ConnectorClient>[0]['retry'] } = {},
): Promise<EmailStack> {
  const topic = await createRawTopic({ listen: false }); // the connector is the subscriber
  const integration = await createTestIntegration({ topic: topic.topicPath, ...options.integration });
  const relay = await startTestRelay(options.relayAnswers);
  const dataDir = await mkdtemp(join(tmpdir(), 'email-connector-'));
  const events: ConnectorEvent[] = [];
  const config: EmailConnectorConfig = {
    integrationKey: options.integrationKey ?? integration.key,
    apiBaseUrl: apiBaseUrl(),
    subscription: topic.subscriptionName,
    projectId: projectId(),
    pubsubEmulatorHost: process.env.PUBSUB_EMULATOR_HOST,
    smtpHost: '127.0.0.1',
    smtpPort: 0,
    supportAddress: SUPPORT,
    supportName: 'Support desk',
    bounceLocalPart: 'bounces',
    relay: { host: '127.0.0.1', port: relay.port },
    sinkPort: 0,
    dataDir,
  };
  const client = new ConnectorClient({ integrationKey: config.integrationKey, baseUrl: config.apiBaseUrl, timeoutMs: 20_000, ...(options.clientRetry === undefined ? {} : { retry: options.clientRetry }) });
  const connector = await startEmailConnector(config, { onEvent: (e) => events.push(e), client });
  return {
    integration,
    topic,
    relay,
    connector,
    events,
    mail: (mail) => sendMail({ host: '127.0.0.1', port: connector.inbound.port, to: SUPPORT, ...mail }),
    acceptedEvents: () => events.filter((e): e is Extract<InboundEvent, { type: 'mail_accepted' }> => e.type === 'mail_accepted'),
    async close() {
      await connector.stop();
      await relay.close();
      await topic.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** Waits for the connector's n-th `mail_accepted` event. */
export function waitForAccepted(stack: EmailStack, n: number): Promise<Extract<InboundEvent, { type: 'mail_accepted' }>> {
  return eventually(async () => stack.acceptedEvents()[n - 1], `accepted mail #${n}`, 20_000);
}

/** The nodemailer error of a mail the connector refused: its SMTP reply code and text. */
export async function refusal(sending: Promise<unknown>): Promise<{ responseCode: number | undefined; response: string | undefined }> {
  try {
    await sending;
  } catch (err) {
    const e = err as { responseCode?: number; response?: string };
    return { responseCode: e.responseCode, response: e.response };
  }
  throw new Error('the mail was accepted');
}
