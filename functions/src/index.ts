/**
 * Entry point: only declares functions (options + imported handler). Every HTTP endpoint is its
 * own function in europe-central2, served at the base host through Hosting rewrites.
 */
import { onRequest, type HttpsOptions } from 'firebase-functions/v2/https';
import { incomingMessages } from './handlers/messages';

const REGION = 'europe-central2';

const httpOptions: HttpsOptions = {
  region: REGION,
  // Connectors call server-to-server: no browser CORS, no public invoker restrictions beyond the key.
  cors: false,
  invoker: 'public',
  concurrency: 80,
  maxInstances: 20,
  timeoutSeconds: 60,
};

/** POST /v1/messages: incoming customer messages and service alerts. */
export const messages = onRequest({ ...httpOptions, memory: '1GiB' }, incomingMessages);
