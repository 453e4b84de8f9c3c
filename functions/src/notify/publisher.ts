import type { PubSub } from '@google-cloud/pubsub';

/** The identifiers-only notification of spec 2.4. */
export interface DeliveryNotification {
  deliveryId: string;
  workspaceId: string;
  integrationId: string;
  conversationId: string;
  messageId: string;
}

/** `replies_disabled` is decided before publishing (no enabled topic); the others come from Pub/Sub. */
export type PermanentPublishFailure = 'topic_not_found' | 'topic_permission_denied' | 'topic_invalid' | 'replies_disabled';
export type PublishResult =
  | { ok: true; messageId: string }
  | { ok: false; permanent: true; code: PermanentPublishFailure; detail: string }
  | { ok: false; permanent: false; detail: string };

const TOPIC_NAME = /^projects\/[^/]+\/topics\/[^/]+$/;
const GRPC_NOT_FOUND = 5;
const GRPC_PERMISSION_DENIED = 7;
const GRPC_INVALID_ARGUMENT = 3;

let client: PubSub | undefined;
/**
 * @google-cloud/pubsub is loaded on first publish, never at module load: the HTTP functions share
 * this codebase and must not pay for it in their cold start.
 */
export async function pubsub(): Promise<PubSub> {
  if (!client) {
    const { PubSub: PubSubClass } = await import('@google-cloud/pubsub');
    client = new PubSubClass();
  }
  return client;
}

/**
 * Publishes one notification to the integration owner's topic and classifies failure: a missing
 * topic or permission is permanent (recorded, not retried forever); anything else is transient.
 */
export async function publishNotification(topicName: string, notification: DeliveryNotification): Promise<PublishResult> {
  if (!TOPIC_NAME.test(topicName)) return { ok: false, permanent: true, code: 'topic_invalid', detail: 'topic must be projects/<project>/topics/<topic>' };
  try {
    const topic = (await pubsub()).topic(topicName, { batching: { maxMessages: 1, maxMilliseconds: 0 } });
    const messageId = await topic.publishMessage({
      json: notification,
      attributes: { deliveryId: notification.deliveryId, integrationId: notification.integrationId },
    });
    return { ok: true, messageId };
  } catch (err) {
    const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
    const detail = err instanceof Error ? err.message : String(err);
    if (code === GRPC_NOT_FOUND) return { ok: false, permanent: true, code: 'topic_not_found', detail };
    if (code === GRPC_PERMISSION_DENIED) return { ok: false, permanent: true, code: 'topic_permission_denied', detail };
    if (code === GRPC_INVALID_ARGUMENT) return { ok: false, permanent: true, code: 'topic_invalid', detail };
    return { ok: false, permanent: false, detail };
  }
}
