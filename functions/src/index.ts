/**
 * Entry point: only declares functions (options + imported handler). Every HTTP endpoint is its
 * own function in europe-central2, served at the base host through Hosting rewrites. Publishing
 * (@google-cloud/pubsub) is loaded lazily inside the trigger code, never by the HTTP functions.
 */
import { onRequest, type HttpsOptions } from 'firebase-functions/v2/https';
import { onDocumentCreated } from 'firebase-functions/v2/firestore';
import { onTaskDispatched } from 'firebase-functions/v2/tasks';
import { onSchedule } from 'firebase-functions/v2/scheduler';
import { incomingMessages } from './handlers/messages';
import { claimDelivery as claim, completeDelivery as complete, failDelivery as fail, startDelivery as start } from './handlers/deliveries';
import { onOutboxCreated, onPublishDue, onReplyCreated, onSweep, REGION } from './triggers/deliveries';
import { onDocumentWritten } from 'firebase-functions/v2/firestore';
import { onIntegrationChanged } from './triggers/integrations';

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

/** POST /v1/messages: incoming customer messages and service alerts. */
export const messages = onRequest({ ...httpOptions, memory: '1GiB' }, incomingMessages);
/** POST /v1/deliveries/claim */
export const claimDelivery = onRequest({ ...httpOptions, memory: '256MiB' }, claim);
/** POST /v1/deliveries/start */
export const startDelivery = onRequest({ ...httpOptions, memory: '256MiB' }, start);
/** POST /v1/deliveries/complete */
export const completeDelivery = onRequest({ ...httpOptions, memory: '256MiB' }, complete);
/** POST /v1/deliveries/fail */
export const failDelivery = onRequest({ ...httpOptions, memory: '256MiB' }, fail);

/** Operator reply written by the console -> delivery + notification (exactly one per reply). */
export const onReplyWritten = onDocumentCreated(
  { region: REGION, document: 'workspaces/{workspaceId}/conversations/{conversationId}/messages/{messageId}', retry: true },
  onReplyCreated,
);
/** Transactional outbox -> the owner's Pub/Sub topic (at least once). */
export const publishNotifications = onDocumentCreated({ region: REGION, document: 'outbox/{outboxId}', retry: true }, onOutboxCreated);
/** Delayed notifications (retry at `notBefore`). */
export const publishDueNotification = onTaskDispatched(
  { region: REGION, retryConfig: { maxAttempts: 10, minBackoffSeconds: 5 }, rateLimits: { maxConcurrentDispatches: 50 } },
  onPublishDue,
);
/** Safety net: missed notifications and expired leases, every minute. */
export const sweepDeliveries = onSchedule({ region: REGION, schedule: 'every 1 minutes', timeoutSeconds: 120 }, onSweep);
/** Integration created or changed (console/CLI): replies topic check (`replies.topicStatus`), key-hash uniqueness. */
export const onIntegrationWritten = onDocumentWritten(
  { region: REGION, document: 'workspaces/{workspaceId}/integrations/{integrationId}', retry: true },
  onIntegrationChanged,
);
