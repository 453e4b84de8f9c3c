/**
 * Entry point: only declares functions (options + handler). Every HTTP endpoint is its own
 * function in europe-central2, served at the base host through Hosting rewrites.
 *
 * Handlers are required on each function's first invocation (`lazy`), not imported here: every
 * instance loads this file, so an instance of one function loads only its own handler module and
 * what that imports (claimDelivery never loads busboy or the image code; triggers never load the
 * HTTP pipeline; HTTP functions never load the triggers' code). The declarations themselves stay
 * synchronous, so the Firebase CLI discovers every function by loading this file. Publishing
 * (@google-cloud/pubsub) is loaded lazily inside the trigger code, never by the HTTP functions.
 *
 * What is required is the handler module's esbuild bundle (lib/bundles/, built after tsc by
 * scripts/bundle-functions.mjs): one file with our code, zod (tree-shaken), busboy and image-size,
 * with firebase-functions, firebase-admin and @google-cloud/* left to node_modules. Loading one
 * file instead of ~130 modules is most of what keeps the cold start near the platform's own. The
 * types are those of the source module each bundle is built from.
 */
import { onRequest, type HttpsOptions } from 'firebase-functions/v2/https';
import { onDocumentCreated, onDocumentUpdated, onDocumentWritten } from 'firebase-functions/v2/firestore';
import { onTaskDispatched } from 'firebase-functions/v2/tasks';
import { onSchedule } from 'firebase-functions/v2/scheduler';
import { lazy } from './platform/lazy';
import { installRuntimeHooks } from './platform/http/runtime';
import { REGION } from './platform/region';

type Messages = typeof import('./messages/http');
type Deliveries = typeof import('./deliveries/http');
type DeliveryTriggers = typeof import('./deliveries/triggers');
type IntegrationTriggers = typeof import('./integrations/triggers');
/* eslint-disable @typescript-eslint/no-require-imports -- required on first invocation, see platform/lazy.ts */
const messagesHandlers = (): Messages => require('./bundles/messages/http.js');
const deliveryHandlers = (): Deliveries => require('./bundles/deliveries/http.js');
const deliveryTriggers = (): DeliveryTriggers => require('./bundles/deliveries/triggers.js');
const integrationTriggers = (): IntegrationTriggers => require('./bundles/integrations/triggers.js');
/* eslint-enable @typescript-eslint/no-require-imports */

// Before the runtime builds its server (it loads this file first): body-parser failures get our
// envelope, and requests carry their arrival time (platform/http/runtime.ts).
installRuntimeHooks();

/** HTTP functions and triggers (in the Firestore database's location): Warsaw, platform/region.ts. */
const TRIGGER_REGION = REGION;

const httpOptions: HttpsOptions = {
  region: REGION,
  // Connectors call server-to-server with a bearer key: no browser CORS, and the function itself is
  // publicly invokable (authentication is the integration key, checked by the handler).
  cors: false,
  invoker: 'public',
  concurrency: 80,
  maxInstances: 20,
  timeoutSeconds: 60,
};

/**
 * POST /v1/messages: incoming customer messages and service alerts.
 *
 * Memory and concurrency from the bench's "Multipart memory on the functions framework"
 * (bench/results/latest.md): the runtime buffers each body (up to 21 MB) before our handler, and
 * each maximum-size upload in flight adds about 1.2x its size to the process (the buffered body
 * plus body-parser's transient chunks; our parser hands the images on as views of the body).
 * Measured: idle ~170 MiB, 32 concurrent maximum uploads peak at ~950 MiB = 0.46 of 2 GiB; the
 * margin up to 0.8 covers the Cloud Storage client's upload buffers, which the local image store
 * of the bench does not have (at most one more copy: 32 x 2.2 x 21 MB + 170 MiB ≈ 0.8).
 * Beyond 32 requests an instance gets no more: Cloud Run routes them to other instances, and
 * 32 x 50 instances keeps the 1,600 concurrent requests of the other functions' 80 x 20.
 * `cpu: 1` because concurrency above 1 needs a whole vCPU.
 */
export const messages = onRequest({ ...httpOptions, memory: '2GiB', cpu: 1, concurrency: 32, maxInstances: 50 }, lazy(() => messagesHandlers().incomingMessages));
/** POST /v1/deliveries/claim */
export const claimDelivery = onRequest({ ...httpOptions, memory: '256MiB' }, lazy(() => deliveryHandlers().claimDelivery));
/** POST /v1/deliveries/start */
export const startDelivery = onRequest({ ...httpOptions, memory: '256MiB' }, lazy(() => deliveryHandlers().startDelivery));
/** POST /v1/deliveries/extend */
export const extendDeliveryLease = onRequest({ ...httpOptions, memory: '256MiB' }, lazy(() => deliveryHandlers().extendDeliveryLease));
/** POST /v1/deliveries/complete */
export const completeDelivery = onRequest({ ...httpOptions, memory: '256MiB' }, lazy(() => deliveryHandlers().completeDelivery));
/** POST /v1/deliveries/fail */
export const failDelivery = onRequest({ ...httpOptions, memory: '256MiB' }, lazy(() => deliveryHandlers().failDelivery));
/** POST /v1/deliveries/pending */
export const listPendingDeliveries = onRequest({ ...httpOptions, memory: '256MiB' }, lazy(() => deliveryHandlers().listPendingDeliveries));
/** POST /v1/deliveries/receipt */
export const reportDeliveryReceipt = onRequest({ ...httpOptions, memory: '256MiB' }, lazy(() => deliveryHandlers().reportDeliveryReceipt));

/** Operator reply written by the console -> delivery + notification (exactly one per reply). */
export const onReplyWritten = onDocumentCreated(
  { region: TRIGGER_REGION, document: 'workspaces/{workspaceId}/conversations/{conversationId}/messages/{messageId}', retry: true },
  lazy(() => deliveryTriggers().onReplyCreated),
);
/**
 * Console requests on a reply: cancel (recall before send, docs/decisions.md#recall-before-send-cancel) and resend of a
 * failed/unknown reply (docs/decisions.md#operator-resend). One trigger, dispatched by what changed (the name is the
 * deployed one from when it handled resend alone). Fires on every message update, the service's
 * own mirror writes included: those return at once.
 */
export const onReplyResend = onDocumentUpdated(
  { region: TRIGGER_REGION, document: 'workspaces/{workspaceId}/conversations/{conversationId}/messages/{messageId}', retry: true },
  lazy(() => deliveryTriggers().onReplyUpdated),
);
/** Transactional outbox -> the owner's Pub/Sub topic (at least once). */
export const publishNotifications = onDocumentCreated(
  { region: TRIGGER_REGION, document: 'outbox/{outboxId}', retry: true },
  lazy(() => deliveryTriggers().onOutboxCreated),
);
/** Delayed notifications (retry at `notBefore`). */
export const publishDueNotification = onTaskDispatched(
  { region: TRIGGER_REGION, retryConfig: { maxAttempts: 10, minBackoffSeconds: 5 }, rateLimits: { maxConcurrentDispatches: 50 } },
  lazy(() => deliveryTriggers().onPublishDue),
);
/** Safety net: missed notifications and expired leases, every minute. */
export const sweepDeliveries = onSchedule(
  { region: TRIGGER_REGION, schedule: 'every 1 minutes', timeoutSeconds: 120 },
  lazy(() => deliveryTriggers().onSweep),
);
/**
 * Integration health for the console (`integrationHealth/{integrationId}`), every minute: counts,
 * oldest claimable, last sent, last error; at most one write per integration per minute.
 */
export const rollUpIntegrationHealth = onSchedule(
  { region: TRIGGER_REGION, schedule: 'every 1 minutes', timeoutSeconds: 120 },
  lazy(() => deliveryTriggers().onHealthRollUp),
);
/** Integration created or changed (console/CLI): replies topic check (`replies.topicStatus`), key-hash uniqueness. */
export const onIntegrationWritten = onDocumentWritten(
  { region: TRIGGER_REGION, document: 'workspaces/{workspaceId}/integrations/{integrationId}', retry: true },
  lazy(() => integrationTriggers().onIntegrationChanged),
);
