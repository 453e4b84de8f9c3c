import * as logger from 'firebase-functions/logger';
import type { FirestoreEvent, QueryDocumentSnapshot } from 'firebase-functions/v2/firestore';
import type { Request as TaskRequest } from 'firebase-functions/v2/tasks';
import { db } from '../platform/firebase';
import { errorCode, errorMessage } from '../platform/caught';
import { REGION } from '../platform/region';
import { outboxDueAt, processOutboxEntry } from './outbox';
import { sequenceReplies } from './sequencing';
import type { OutboxEntry } from './store';
import { sweep } from './sweep';

export { REGION };
export const PUBLISH_TASK_FUNCTION = 'publishDueNotification';
/** The longest a task waits in-process for its entry to fall due. */
const MAX_IN_TASK_WAIT_MS = 10_000;

type DocEvent<P> = FirestoreEvent<QueryDocumentSnapshot | undefined, P>;

/** New message in a conversation: operator replies become deliveries (others are ignored). */
export async function onReplyCreated(event: DocEvent<{ workspaceId: string; conversationId: string; messageId: string }>): Promise<void> {
  const { workspaceId, conversationId, messageId } = event.params;
  const data = event.data?.data();
  if (data?.direction !== 'outbound') return;
  const result = await sequenceReplies(db(), workspaceId, conversationId, messageId);
  logger.info('reply.sequenced', { workspaceId, conversationId, messageId, created: result.created, rejected: result.rejected });
}

/** Task ids allow [A-Za-z0-9_-] only; the outbox id contains '@'. */
const taskIdFor = (outboxId: string): string => outboxId.replace(/[^A-Za-z0-9_-]/g, '_');

/**
 * New outbox entry: publish now if due, otherwise schedule a Cloud Task for its due time (retries
 * are re-notified within seconds of `notBefore`). If scheduling fails the sweeper still finds it.
 */
export async function onOutboxCreated(event: DocEvent<{ outboxId: string }>): Promise<void> {
  const { outboxId } = event.params;
  const entry = event.data?.data() as OutboxEntry | undefined;
  if (!entry) return;
  const outcome = await processOutboxEntry(db(), outboxId);
  if (outcome !== 'not_due') return;
  const { getFunctions } = await import('firebase-admin/functions');
  try {
    await getFunctions()
      .taskQueue(`locations/${REGION}/functions/${PUBLISH_TASK_FUNCTION}`)
      .enqueue({ outboxId }, { scheduleTime: new Date(entry.dueAt), id: taskIdFor(outboxId) });
  } catch (err) {
    if (errorCode(err) === 'functions/task-already-exists') return;
    logger.warn('notification.schedule_failed', { outboxId, deliveryId: entry.deliveryId, detail: errorMessage(err) });
  }
}

/** Cloud Task at an entry's due time. Throwing makes Cloud Tasks retry it. */
export async function onPublishDue(request: TaskRequest<{ outboxId?: unknown }>): Promise<void> {
  const outboxId = request.data.outboxId;
  if (typeof outboxId !== 'string') return;
  let outcome = await processOutboxEntry(db(), outboxId);
  if (outcome !== 'not_due') return;
  // A task can arrive a little early (clock skew; the tasks emulator ignores scheduleTime): wait
  // out a short remainder here rather than in Cloud Tasks' retry backoff (>= 5 s).
  const dueAt = await outboxDueAt(db(), outboxId);
  const remaining = dueAt === null ? 0 : dueAt - Date.now();
  if (remaining > 0 && remaining <= MAX_IN_TASK_WAIT_MS) {
    await new Promise((resolve) => setTimeout(resolve, remaining + 20));
    outcome = await processOutboxEntry(db(), outboxId);
  }
  // Throwing makes Cloud Tasks retry the task later.
  if (outcome === 'not_due') throw new Error(`outbox entry ${outboxId} is not due yet`);
}

/** Every minute: missed notifications and expired leases (decisions 5). */
export async function onSweep(): Promise<void> {
  const result = await sweep(db());
  logger.info('sweep.done', result);
}
