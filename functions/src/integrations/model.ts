/**
 * The integration document (docs/data-model.md), parsed in this one place. The console and the
 * CLI write it, so every field is read defensively: an absent or malformed field gets the safe
 * default, and only an explicit `true` enables anything (a broken document never opens access
 * nor publishes). Pure: no Firebase.
 */
import { parseAttachmentCapability, parseLifecycleCapability, type AttachmentCapability, type LifecycleCapability } from '../contract';
import type { Channel, ChannelTemplate } from '../rules/channel';

/** Outcome of the replies topic check (integrations/topics.ts), shown on the integration. */
export type TopicStatus = 'ok' | 'not_found' | 'permission_denied' | 'invalid';
const TOPIC_STATUSES: readonly TopicStatus[] = ['ok', 'not_found', 'permission_denied', 'invalid'];

/**
 * Why a notification cannot be published to the integration's topic, for good (recorded on the
 * delivery instead of retried): replies are off (`replies_disabled`, decided before publishing), or
 * what Pub/Sub or the topic check said about the topic.
 */
export type PermanentPublishFailure = 'topic_not_found' | 'topic_permission_denied' | 'topic_invalid' | 'replies_disabled';

export interface RepliesSettings {
  /** Replies are delivered only when enabled AND a topic is set. */
  enabled: boolean;
  topic: string | null;
  /** Null until the topic was checked (or after the console cleared it to ask for a new check). */
  topicStatus: TopicStatus | null;
  topicMessage: string | null;
  /** Epoch ms of the last check, or null. */
  topicCheckedAt: number | null;
  /**
   * The reply-attachments capability (docs/contract.md#attachments); null: text only, exactly as
   * for a connector built before attachments existed. A malformed value is null too.
   */
  attachments: AttachmentCapability | null;
  /**
   * The edit/unsend capability (docs/contract.md#edits-and-unsends): each kind's window, or null
   * for a kind the connector does not take (absent or malformed: exactly as before edits existed).
   */
  lifecycle: LifecycleCapability;
}

export interface Integration {
  workspaceId: string;
  integrationId: string;
  active: boolean;
  sourceEnabled: boolean;
  /** SHA-256 (hex) of the current key; null when revoked. */
  keyHash: string | null;
  /** Non-secret display prefix of the current key, for logs. */
  keyPrefix: string;
  /** During a rotation overlap: the previous key's hash and when it stops working (epoch ms). */
  previousKey: { hash: string; expiresAt: number | null } | null;
  replies: RepliesSettings;
  /** Incoming rate limit override, or null for the service default. */
  messagesPerMinute: number | null;
  /**
   * The channel the connector declared (`PUT /v1/channel`), or null. Carried with the key's
   * resolution, so a customer message keeps the conversation's window without reading the
   * integration again (docs/capacity.md).
   */
  channel: Channel | null;
}

const record = (v: unknown): Record<string, unknown> => (typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : {});
const stringOrNull = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** A Firestore Timestamp (anything with `toMillis`) or epoch ms, as epoch ms; null otherwise. */
function millis(v: unknown): number | null {
  if (typeof v === 'number') return v;
  const toMillis = record(v).toMillis;
  return typeof toMillis === 'function' ? (toMillis.call(v) as number) : null;
}

/** The replies part of an integration document. */
export function parseReplies(value: unknown): RepliesSettings {
  const replies = record(value);
  return {
    enabled: replies.enabled === true,
    topic: stringOrNull(replies.topic),
    topicStatus: TOPIC_STATUSES.find((s) => s === replies.topicStatus) ?? null,
    topicMessage: stringOrNull(replies.topicMessage),
    topicCheckedAt: millis(replies.topicCheckedAt),
    attachments: parseAttachmentCapability(replies.attachments),
    lifecycle: parseLifecycleCapability(replies.lifecycle),
  };
}

/** Parses an integration document; null when there is none. */
export function parseIntegration(workspaceId: string, integrationId: string, data: Record<string, unknown> | undefined): Integration | null {
  if (data === undefined) return null;
  const previous = record(data.previousKey);
  const perMinute = record(data.limits).messagesPerMinute;
  return {
    workspaceId,
    integrationId,
    active: data.active === true,
    sourceEnabled: data.sourceEnabled === true,
    keyHash: stringOrNull(data.keyHash),
    keyPrefix: stringOrNull(data.keyPrefix) ?? '',
    previousKey: typeof previous.hash === 'string' ? { hash: previous.hash, expiresAt: typeof previous.expiresAt === 'number' ? previous.expiresAt : null } : null,
    replies: parseReplies(data.replies),
    messagesPerMinute: typeof perMinute === 'number' && Number.isInteger(perMinute) && perMinute > 0 ? perMinute : null,
    channel: parseChannel(data.channel),
  };
}

/** The topic replies are published to, or null when replies are off (disabled or no topic). */
export function repliesTopic(integration: Pick<Integration, 'replies'> | null): string | null {
  return integration?.replies.enabled === true ? integration.replies.topic : null;
}

// The topic-name rule is part of the contract (the console and the CLI apply it too).
export { isValidTopicName, TOPIC_NAME_FORMAT } from '../contract';

/**
 * The stored channel (`channel`, written only by `PUT /v1/channel`), or null when the connector
 * never declared one or the field is not of that shape.
 */
export function parseChannel(value: unknown): Channel | null {
  const v = record(value);
  if (typeof v.updatedAt !== 'number' || !Array.isArray(v.templates)) return null;
  const window = record(v.window);
  return {
    window: typeof window.seconds === 'number' ? { seconds: window.seconds } : null,
    templates: v.templates as ChannelTemplate[],
    updatedAt: v.updatedAt,
  };
}
