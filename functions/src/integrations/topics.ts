import * as logger from '../platform/log';
import { FieldValue, type Firestore } from 'firebase-admin/firestore';
import { errorCode, errorMessage, GRPC } from '../platform/failures';
import { pubsub } from '../platform/pubsub';
import { isValidTopicName, parseReplies, TOPIC_NAME_FORMAT, type PermanentPublishFailure, type TopicStatus } from './model';
import { integrationRef } from './store';

/**
 * The replies topic check (docs/data-model.md, "Replies topic check"). When an integration's `replies.topic` is new or changes, the
 * integrations trigger checks that the topic exists and that the service may publish to it, and
 * records the outcome on the integration for the console:
 * `replies.topicStatus` (`ok` | `not_found` | `permission_denied` | `invalid`), `replies.topicMessage`
 * (human text) and `replies.topicCheckedAt`. The outbox does not publish to a topic known to be
 * broken: the delivery is recorded with the matching code (`topic_not_found`, ...) instead. A
 * broken status older than TOPIC_RECHECK_AFTER_MS is checked again first, so a permission granted
 * after the integration was created takes effect on the next delivery without anyone acting.
 */

export interface TopicCheck {
  status: TopicStatus;
  message: string;
}

export const PUBLISH_PERMISSION = 'pubsub.topics.publish';
export const TOPIC_RECHECK_AFTER_MS = 60_000;

/** The part of a @google-cloud/pubsub `Topic` the check uses (a fake in unit tests). */
export interface CheckableTopic {
  iam: { testPermissions(permissions: string[]): Promise<unknown> };
  exists(): Promise<unknown>;
}

/** `testPermissions` answers `[{ perm: boolean }, response]`; a raw API answer lists granted permissions. */
function granted(result: unknown): boolean {
  const first = Array.isArray(result) ? (result[0] as unknown) : result;
  if (Array.isArray(first)) return first.includes(PUBLISH_PERMISSION);
  if (typeof first === 'object' && first !== null) {
    const value = (first as Record<string, unknown>)[PUBLISH_PERMISSION] ?? (first as { permissions?: unknown }).permissions;
    return value === true || (Array.isArray(value) && value.includes(PUBLISH_PERMISSION));
  }
  return false;
}

/** true / false, or null when the service may not even look (no `pubsub.topics.get`: normal for a publisher-only grant). */
async function topicExists(topic: CheckableTopic): Promise<boolean | null> {
  try {
    const result = await topic.exists();
    return Array.isArray(result) ? result[0] === true : result === true;
  } catch (err) {
    const code = errorCode(err);
    if (code === GRPC.NOT_FOUND) return false;
    if (code === GRPC.PERMISSION_DENIED) return null;
    throw err;
  }
}

const messages = {
  ok: (name: string) => `The service can publish to ${name}.`,
  okUnverified: (name: string) =>
    `${name} exists. Publish permission was not verified: the Pub/Sub emulator does not implement testIamPermissions.`,
  notFound: (name: string) => `Topic ${name} does not exist. Create it, or correct the topic name.`,
  denied: (name: string) =>
    `The service may not publish to ${name}. Grant roles/pubsub.publisher on the topic to the service's runtime service account.`,
  invalid: (name: string) => `'${name}' is not a topic name: expected ${TOPIC_NAME_FORMAT}.`,
};

/**
 * Classifies a topic. Permanent answers become a status; anything else (unavailable, deadline,
 * quota, unexpected) is thrown so the caller retries. `emulator`: the Pub/Sub emulator answers
 * testIamPermissions with UNIMPLEMENTED; only there that means "cannot verify, assume allowed"
 * (existence is still checked). Outside the emulator UNIMPLEMENTED is an error like any other.
 */
export async function classifyTopic(name: string, topic: CheckableTopic, options: { emulator: boolean }): Promise<TopicCheck> {
  if (!isValidTopicName(name)) return { status: 'invalid', message: messages.invalid(name) };
  let canPublish: boolean | 'unverifiable';
  try {
    canPublish = granted(await topic.iam.testPermissions([PUBLISH_PERMISSION]));
  } catch (err) {
    const code = errorCode(err);
    if (code === GRPC.NOT_FOUND) return { status: 'not_found', message: messages.notFound(name) };
    if (code === GRPC.PERMISSION_DENIED) return { status: 'permission_denied', message: messages.denied(name) };
    if (code === GRPC.INVALID_ARGUMENT) return { status: 'invalid', message: messages.invalid(name) };
    if (code === GRPC.UNIMPLEMENTED && options.emulator) canPublish = 'unverifiable';
    else throw err;
  }
  if (canPublish === true) return { status: 'ok', message: messages.ok(name) };
  // Not granted (or not verifiable): tell a missing topic from a missing grant where we can see it.
  const exists = await topicExists(topic);
  if (exists === false) return { status: 'not_found', message: messages.notFound(name) };
  if (canPublish === 'unverifiable') return { status: 'ok', message: messages.okUnverified(name) };
  return { status: 'permission_denied', message: messages.denied(name) };
}

const underEmulator = (): boolean => Boolean(process.env.PUBSUB_EMULATOR_HOST) || process.env.FUNCTIONS_EMULATOR === 'true';

/** Checks a topic with the service's own credentials (@google-cloud/pubsub is loaded lazily). */
export async function checkTopic(name: string): Promise<TopicCheck> {
  if (!isValidTopicName(name)) return { status: 'invalid', message: messages.invalid(name) };
  return classifyTopic(name, (await pubsub()).topic(name), { emulator: underEmulator() });
}

/**
 * Records a check on the integration, unless its topic changed meanwhile (that change triggers
 * its own check). Returns false when the result was stale and not written.
 */
export async function recordTopicCheck(db: Firestore, workspaceId: string, integrationId: string, topic: string, check: TopicCheck): Promise<boolean> {
  const ref = integrationRef(db, workspaceId, integrationId);
  return db.runTransaction(async (tx) => {
    const snap = await tx.get(ref);
    if (!snap.exists || snap.get('replies.topic') !== topic) return false;
    tx.update(ref, {
      'replies.topicStatus': check.status,
      'replies.topicMessage': check.message,
      'replies.topicCheckedAt': FieldValue.serverTimestamp(),
    });
    return true;
  });
}

const FAILURE_OF: Record<Exclude<TopicStatus, 'ok'>, PermanentPublishFailure> = {
  not_found: 'topic_not_found',
  permission_denied: 'topic_permission_denied',
  invalid: 'topic_invalid',
};
const STATUS_OF: Partial<Record<PermanentPublishFailure, Exclude<TopicStatus, 'ok'>>> = {
  topic_not_found: 'not_found',
  topic_permission_denied: 'permission_denied',
  topic_invalid: 'invalid',
};

/**
 * For the outbox: the permanent failure to record instead of publishing, or null to publish. A
 * missing status (not checked yet) or `ok` publishes; a broken one is re-checked first when it is
 * older than TOPIC_RECHECK_AFTER_MS (a failing re-check keeps the recorded status). `replies` is
 * the integration's `replies` field (parsed here with the integration model).
 */
export async function knownTopicProblem(
  db: Firestore,
  workspaceId: string,
  integrationId: string,
  replies: { topic: string } & Record<string, unknown>,
  now = Date.now(),
): Promise<{ code: PermanentPublishFailure; detail: string } | null> {
  const { topicStatus: status, topicMessage, topicCheckedAt } = parseReplies(replies);
  if (status === null || status === 'ok') return null;
  let check: TopicCheck = { status, message: topicMessage ?? status };
  if (now - (topicCheckedAt ?? 0) >= TOPIC_RECHECK_AFTER_MS) {
    try {
      check = await checkTopic(replies.topic);
      await recordTopicCheck(db, workspaceId, integrationId, replies.topic, check);
    } catch (err) {
      logger.warn('integration.topic_recheck_failed', { workspaceId, integrationId, detail: errorMessage(err) });
    }
  }
  return check.status === 'ok' ? null : { code: FAILURE_OF[check.status], detail: check.message };
}

/** After a publish failed permanently: show it on the integration too (the console reads it there). */
export async function recordPublishFailure(db: Firestore, workspaceId: string, integrationId: string, topic: string, code: PermanentPublishFailure): Promise<void> {
  const status = STATUS_OF[code];
  if (!status) return;
  const message = status === 'invalid' ? messages.invalid(topic) : status === 'not_found' ? messages.notFound(topic) : messages.denied(topic);
  try {
    await recordTopicCheck(db, workspaceId, integrationId, topic, { status, message });
  } catch (err) {
    logger.warn('integration.topic_status_write_failed', { workspaceId, integrationId, detail: errorMessage(err) });
  }
}
