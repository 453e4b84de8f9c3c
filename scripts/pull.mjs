#!/usr/bin/env node
/**
 * Pulls delivery notifications from a subscription on the local Pub/Sub emulator, prints each as
 * one JSON line and acknowledges it. Exits after 3 s without a message unless --wait is given.
 *   npm run pull -- [--subscription NAME] [--wait]
 */
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import { PROJECT_ID } from './lib/emulators.mjs';
import { DEMO, useEmulators } from './lib/seed.mjs';

const require = createRequire(import.meta.url);
const { values } = parseArgs({
  options: { subscription: { type: 'string', default: DEMO.subscriptionName }, wait: { type: 'boolean', default: false } },
});
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
