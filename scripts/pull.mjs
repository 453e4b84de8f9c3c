#!/usr/bin/env node
/**
 * Pulls delivery notifications from a subscription on the local Pub/Sub emulator, prints each as
 * one JSON line and acknowledges it. Exits after 3 s without a message unless --wait is given.
 *   npm run pull -- [--subscription NAME] [--wait] [--help]
 */
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import { HOSTS, PROJECT_ID } from './lib/emulators.mjs';
import { DEMO, useEmulators } from './lib/seed.mjs';

const require = createRequire(import.meta.url);
const USAGE = `Usage: npm run pull -- [--subscription NAME] [--wait]

Pulls delivery notifications from a subscription of the local stack's Pub/Sub emulator
(PUBSUB_EMULATOR_HOST, default ${HOSTS.pubsub}; project ${PROJECT_ID}), prints each as one JSON
line and acknowledges it.

  --subscription NAME  the subscription (default ${DEMO.subscriptionName}, the one \`npm start\` seeds)
  --wait               keep waiting for notifications (default: exit after 3 s without one)
  --help               this text`;

let values;
try {
  ({ values } = parseArgs({
    options: {
      subscription: { type: 'string', default: DEMO.subscriptionName },
      wait: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  }));
} catch (err) {
  // An unknown option or a missing value: say which, and how to call it (no stack trace).
  console.error(`pull: ${err instanceof Error ? err.message : String(err)}\n\n${USAGE}`);
  process.exit(2);
}
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
useEmulators();
const { PubSub } = require('@google-cloud/pubsub');
const pubsub = new PubSub({ projectId: PROJECT_ID });
const subscription = pubsub.subscription(values.subscription);
const IDLE_MS = 3000;
let idle;
const finish = async () => {
  await subscription.close();
  await pubsub.close();
};
const armIdle = () => {
  if (values.wait) return;
  clearTimeout(idle);
  idle = setTimeout(() => void finish(), IDLE_MS);
};
subscription.on('message', (message) => {
  console.log(message.data.toString('utf8'));
  message.ack();
  armIdle();
});
subscription.on('error', (err) => {
  console.error(`pull: ${err.message}`);
  process.exitCode = 1;
  void finish();
});
armIdle();
