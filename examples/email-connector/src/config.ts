/**
 * Configuration from the environment and command-line flags (a flag wins). Everything but the
 * integration key defaults to the local stack of `npm start`.
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** The local stack's defaults (`npm start`). */
export const DEFAULTS = Object.freeze({
  apiBaseUrl: 'http://127.0.0.1:5000',
  subscription: 'connector-notifications-pull',
  projectId: 'demo-support-desk',
  pubsubEmulatorHost: '127.0.0.1:8085',
  smtpHost: '127.0.0.1',
  smtpPort: 2525,
  sinkPort: 2526,
  supportAddress: 'support@support-desk.test',
  supportName: 'Support desk',
  bounceLocalPart: 'bounces',
  dataDir: '.local/email-connector',
});

export interface EmailConnectorConfig {
  integrationKey: string;
  apiBaseUrl: string;
  subscription: string;
  projectId: string;
  /** Undefined: real Pub/Sub (Application Default Credentials). */
  pubsubEmulatorHost: string | undefined;
  /** The inbound SMTP server. */
  smtpHost: string;
  smtpPort: number;
  supportAddress: string;
  supportName: string;
  bounceLocalPart: string;
  /** The relay replies go to; undefined: the demo's local mailbox sink on `sinkPort`. */
  relay: { host: string; port: number } | undefined;
  sinkPort: number;
  /** threads.json lives here; the demo mailbox is `<dataDir>/mailbox`. */
  dataDir: string;
}

/** The flags `main` accepts; each has an environment variable too. */
const FLAGS = {
  key: { type: 'string', env: 'INTEGRATION_KEY', help: 'integration key (required; `npm start` prints it)' },
  'base-url': { type: 'string', env: 'API_BASE_URL', help: `API base URL (default ${DEFAULTS.apiBaseUrl})` },
  subscription: { type: 'string', env: 'SUBSCRIPTION', help: `Pub/Sub subscription (default ${DEFAULTS.subscription})` },
  project: { type: 'string', env: 'GCLOUD_PROJECT', help: `project of the subscription (default ${DEFAULTS.projectId})` },
  'pubsub-host': { type: 'string', env: 'PUBSUB_EMULATOR_HOST', help: `Pub/Sub emulator (default ${DEFAULTS.pubsubEmulatorHost} for a demo-* project)` },
  'smtp-host': { type: 'string', env: 'EMAIL_SMTP_HOST', help: `inbound SMTP listen address (default ${DEFAULTS.smtpHost})` },
  'smtp-port': { type: 'string', env: 'EMAIL_SMTP_PORT', help: `inbound SMTP port (default ${DEFAULTS.smtpPort})` },
  'support-address': { type: 'string', env: 'EMAIL_SUPPORT_ADDRESS', help: `the support address (default ${DEFAULTS.supportAddress})` },
  'support-name': { type: 'string', env: 'EMAIL_SUPPORT_NAME', help: `From name of replies (default ${DEFAULTS.supportName})` },
  relay: { type: 'string', env: 'EMAIL_RELAY', help: 'host:port of the SMTP relay for replies (default: a local mailbox sink)' },
  'sink-port': { type: 'string', env: 'EMAIL_SINK_PORT', help: `port of the local mailbox sink (default ${DEFAULTS.sinkPort})` },
  'data-dir': { type: 'string', env: 'EMAIL_DATA_DIR', help: `data directory (default ${DEFAULTS.dataDir})` },
  help: { type: 'boolean', env: '', help: 'this help' },
} as const;

export function usage(): string {
  const lines = Object.entries(FLAGS).map(([name, f]) => `  --${name.padEnd(16)} ${f.env ? `${f.env.padEnd(22)}` : ''.padEnd(22)} ${f.help}`);
  return ['usage: npm run example:email -- [flags]   (each flag also reads the environment variable shown)', ...lines].join('\n');
}

function port(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new ConfigError(`${name} must be a port number (0-65535), not ${JSON.stringify(value)}`);
  return n;
}

/** Reads flags then environment; throws ConfigError. Returns undefined for `--help`. */
export function loadConfig(argv: readonly string[], env: Record<string, string | undefined>): EmailConnectorConfig | undefined {
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({ args: [...argv], options: Object.fromEntries(Object.entries(FLAGS).map(([k, f]) => [k, { type: f.type }])), strict: true, allowPositionals: false }).values;
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
  if (values.help === true) return undefined;
  const get = (name: keyof typeof FLAGS): string | undefined => {
    const flag = values[name];
    const value = typeof flag === 'string' ? flag : FLAGS[name].env ? env[FLAGS[name].env] : undefined;
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  };
  const integrationKey = get('key');
  if (integrationKey === undefined) throw new ConfigError('the integration key is required: INTEGRATION_KEY=... or --key (`npm start` prints it)');
  const projectId = get('project') ?? DEFAULTS.projectId;
  const supportAddress = (get('support-address') ?? DEFAULTS.supportAddress).toLowerCase();
  if (!/^[^\s@]+@[^\s@]+$/.test(supportAddress)) throw new ConfigError(`the support address ${JSON.stringify(supportAddress)} is not an address`);
  let relay: EmailConnectorConfig['relay'];
  const relayValue = get('relay');
  if (relayValue !== undefined) {
    const match = /^(.+):(\d+)$/.exec(relayValue);
    if (match === null) throw new ConfigError(`the relay must be host:port, not ${JSON.stringify(relayValue)}`);
    relay = { host: match[1] as string, port: port('the relay port', match[2], 25) };
  }
  return {
    integrationKey,
    apiBaseUrl: get('base-url') ?? DEFAULTS.apiBaseUrl,
    subscription: get('subscription') ?? DEFAULTS.subscription,
    projectId,
    pubsubEmulatorHost: get('pubsub-host') ?? (projectId.startsWith('demo-') ? DEFAULTS.pubsubEmulatorHost : undefined),
    smtpHost: get('smtp-host') ?? DEFAULTS.smtpHost,
    smtpPort: port('the SMTP port', get('smtp-port'), DEFAULTS.smtpPort),
    supportAddress,
    supportName: get('support-name') ?? DEFAULTS.supportName,
    bounceLocalPart: DEFAULTS.bounceLocalPart,
    relay,
    sinkPort: port('the sink port', get('sink-port'), DEFAULTS.sinkPort),
    dataDir: resolve(get('data-dir') ?? DEFAULTS.dataDir),
  };
}
