#!/usr/bin/env node
/**
 * Example connector: sends one incoming message, then delivers operator replies pulled from
 * Pub/Sub through a fake provider that prints them. Runs until Ctrl-C (SIGINT) or SIGTERM.
 *
 *   INTEGRATION_KEY=<key printed by `npm start`> npm run example:connector
 *
 * Environment: INTEGRATION_KEY (required), API_BASE_URL, FALLBACK_BASE_URL, SUBSCRIPTION,
 * GCLOUD_PROJECT, PUBSUB_EMULATOR_HOST, EXTERNAL_CONVERSATION_ID, CUSTOMER_ID, STARTUP_TEXT,
 * PROVIDER_TIMEOUT_MS, CATCH_UP_INTERVAL_MS. The API, project and emulator default to the local
 * stack of this repository (its firebase.json). See README.md.
 */
import { ConfigError, createFakeProvider, describeError, loadConfig, runConnector } from './connector.js';

let config;
try {
  config = loadConfig(process.env);
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  console.error(`[connector] ${err.message}`);
  process.exit(2);
}

// No GCP metadata server next to the emulators: skip the auth library's lookup (and its warning).
if (config.pubsubEmulatorHost !== undefined) process.env.METADATA_SERVER_DETECTION ??= 'none';

let connector;
try {
  connector = await runConnector(config, { send: createFakeProvider() });
} catch (err) {
  console.error(`[connector] could not start: ${describeError(err)}`);
  process.exit(err instanceof ConfigError ? 2 : 1);
}

let stopping = false;
async function shutdown(signal) {
  if (stopping) return;
  stopping = true;
  console.log(`[connector] ${signal}: finishing deliveries in progress...`);
  // Deliveries in progress are finished (the provider is never abandoned mid-send), then the
  // acks are flushed. If that hangs, give up after a while: unacked messages are redelivered.
  setTimeout(() => {
    console.error('[connector] did not stop within 130 s; exiting');
    process.exit(1);
  }, 130_000).unref();
  try {
    await connector.stop();
  } catch (err) {
    console.error(`[connector] error while stopping: ${describeError(err)}`);
    process.exitCode = 1;
  }
}
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));
