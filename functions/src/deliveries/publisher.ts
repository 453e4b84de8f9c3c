import { errorCode, errorMessage, GRPC } from '../platform/failures';
import { pubsub } from '../platform/pubsub';
import { formatTraceparent, spanIdOf } from '../platform/trace';
import { traceIdOfDelivery, type DeliveryNotification } from '../rules/record';
import { isValidTopicName, TOPIC_NAME_FORMAT, type PermanentPublishFailure } from '../integrations/model';
import type { NotificationKind } from '../rules/record';

// Defined with the integration (its topic), which must not import deliveries.
export type { PermanentPublishFailure };
export type PublishResult =
  | { ok: true; messageId: string }
  | { ok: false; permanent: true; code: PermanentPublishFailure; detail: string }
  | { ok: false; permanent: false; detail: string };

/** Pub/Sub answers that will not change by retrying: recorded on the delivery instead. */
const PERMANENT: ReadonlyMap<unknown, PermanentPublishFailure> = new Map<unknown, PermanentPublishFailure>([
  [GRPC.NOT_FOUND, 'topic_not_found'],
  [GRPC.PERMISSION_DENIED, 'topic_permission_denied'],
  [GRPC.INVALID_ARGUMENT, 'topic_invalid'],
]);

/**
 * Publishes one notification to the integration owner's topic and classifies failure: a missing
 * topic or permission is permanent (recorded, not retried forever); anything else is transient.
 * Its `traceparent` attribute names the delivery's trace (docs/contract.md#notifications) and one
 * span per notification (`occurrence`: its outbox id), which the connector sends back. An edit or
 * unsend delivery's notification carries its `kind` as an attribute too (docs/contract.md#edits-and-unsends), and
 * so does a start's (`start`, docs/contract.md#conversations-the-desk-starts);
 * a reply's has none, exactly as before, and the JSON body is the same five identifiers for all.
 */
export async function publishNotification(topicName: string, notification: DeliveryNotification, occurrence: string, kind?: NotificationKind): Promise<PublishResult> {
  if (!isValidTopicName(topicName)) return { ok: false, permanent: true, code: 'topic_invalid', detail: `topic must be ${TOPIC_NAME_FORMAT}` };
  try {
    const topic = (await pubsub()).topic(topicName, { batching: { maxMessages: 1, maxMilliseconds: 0 } });
    const messageId = await topic.publishMessage({
      json: notification,
      attributes: {
        deliveryId: notification.deliveryId,
        integrationId: notification.integrationId,
        traceparent: formatTraceparent(traceIdOfDelivery(notification.deliveryId), spanIdOf(occurrence)),
        ...(kind !== undefined ? { kind } : {}),
      },
    });
    return { ok: true, messageId };
  } catch (err) {
    const code = PERMANENT.get(errorCode(err));
    const detail = errorMessage(err);
    return code === undefined ? { ok: false, permanent: false, detail } : { ok: false, permanent: true, code, detail };
  }
}
