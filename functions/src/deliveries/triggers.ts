import * as logger from '../platform/log';
import { Timestamp } from 'firebase-admin/firestore';
import type { Change, FirestoreEvent, QueryDocumentSnapshot } from 'firebase-functions/v2/firestore';
import type { Request as TaskRequest } from 'firebase-functions/v2/tasks';
import { db } from '../platform/firebase';
import { errorCode, errorMessage, retryTransient } from '../platform/failures';
import { REGION } from '../platform/region';
import { cancelReply } from './cancel';
import { lifecycleRequestOf, requestLifecycle, type LifecycleRequest } from './lifecycle';
import { LIFECYCLE_KINDS, type LifecycleKind } from '../contract';
import { rollUpHealth } from './health-rollup';
import { outboxDueAt, processOutboxEntry, publishCommitted } from './outbox';
import { resendReply } from './resend';
import { sequenceAndPublish } from './sequencing';
import { takeStart } from './starts';
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
  const result = await sequenceAndPublish(db(), workspaceId, conversationId, messageId, data.createdAt);
  logger.info('reply.sequenced', { workspaceId, conversationId, messageId, created: result.created, rejected: result.rejected });
}

/**
 * A member asked to start a conversation (docs/contract.md#conversations-the-desk-starts): one
 * conversation and one delivery, or the start's `error` (./starts.ts). A start without an
 * integration id is refused by the rules; one the service cannot use is left as it is.
 */
export async function onStartCreated(event: DocEvent<{ workspaceId: string; startId: string }>): Promise<void> {
  const { workspaceId, startId } = event.params;
  const integrationId = event.data?.get('integrationId') as unknown;
  if (typeof integrationId !== 'string' || integrationId.length === 0 || integrationId.includes('/')) return;
  const outcome = await takeStart(db(), workspaceId, startId, integrationId, event.data?.get('to'));
  logger.info('start.taken', { workspaceId, startId, integrationId, ...outcome });
}

type ReplyChange = FirestoreEvent<Change<QueryDocumentSnapshot> | undefined, { workspaceId: string; conversationId: string; messageId: string }>;

/** The same resend or cancel request (the console writes `requestedAt` as the server time, so a new request differs). */
function sameRequest(a: unknown, b: unknown): boolean {
  const x = a as { requestedAt?: unknown; uid?: unknown } | undefined;
  const y = b as { requestedAt?: unknown; uid?: unknown } | undefined;
  if (x === undefined || y === undefined) return x === y;
  const sameTime = x.requestedAt instanceof Timestamp && y.requestedAt instanceof Timestamp ? x.requestedAt.isEqual(y.requestedAt) : x.requestedAt === y.requestedAt;
  return sameTime && x.uid === y.uid;
}

/**
 * The requests of `kind` a change hands over when it carries a new one: the new request and the one
 * it replaced (./lifecycle.ts takes whichever is not taken yet, so that two requests whose triggers
 * arrive in the wrong order are both taken, in order). Empty when the change has no new request.
 */
function lifecycleRequests(kind: LifecycleKind, before: Record<string, unknown> | undefined, after: Record<string, unknown> | undefined): LifecycleRequest[] {
  if (after?.[kind] === undefined || sameRequest(before?.[kind], after[kind])) return [];
  return [lifecycleRequestOf(before?.[kind]), lifecycleRequestOf(after[kind])].filter((r): r is LifecycleRequest => r !== null);
}

/**
 * A message changed. One trigger for every console request on a reply, dispatched by what changed:
 * a new `cancel` request (docs/decisions.md#recall-before-send-cancel: recall before send), a new `resend` request
 * (docs/decisions.md#operator-resend) and a new `edit` or `unsend` request (docs/contract.md#edits-and-unsends),
 * detected the same way (the request differs from the one before). Every other update (the
 * service's own mirror writes, most of them) returns at once. Should one write carry several (rules
 * allow one field per write, so only the Admin SDK could), the cancel is applied first. Cancel and
 * resend act on the reply's own delivery only, never on an edit's or unsend's.
 */
export async function onReplyUpdated(event: ReplyChange): Promise<void> {
  const before = event.data?.before.data();
  const after = event.data?.after.data();
  const newCancel = after?.cancel !== undefined && !sameRequest(before?.cancel, after.cancel);
  const newResend = after?.resend !== undefined && !sameRequest(before?.resend, after.resend);
  const lifecycle = LIFECYCLE_KINDS.map((kind) => [kind, lifecycleRequests(kind, before, after)] as const);
  if (!newCancel && !newResend && lifecycle.every(([, requests]) => requests.length === 0)) return;
  const { workspaceId, conversationId, messageId } = event.params;
  if (newCancel) {
    const outcome = await retryTransient(() => cancelReply(db(), workspaceId, messageId, after));
    logger.info('reply.cancel', { workspaceId, conversationId, messageId, ...outcome });
  }
  if (newResend) {
    const outcome = await retryTransient(() => resendReply(db(), workspaceId, conversationId, messageId));
    logger.info('reply.resend', { workspaceId, conversationId, messageId, ...outcome });
    if (outcome.kind === 'created' && outcome.outboxId !== null) await publishCommitted(db(), [{ outboxId: outcome.outboxId }]);
  }
  for (const [kind, requests] of lifecycle) {
    if (requests.length === 0) continue;
    const outcome = await retryTransient(() => requestLifecycle(db(), workspaceId, conversationId, messageId, kind, requests));
    logger.info(`reply.${kind}`, { workspaceId, conversationId, messageId, created: outcome.created, refused: outcome.refused });
    if (outcome.outboxIds.length > 0) await publishCommitted(db(), outcome.outboxIds.map((outboxId) => ({ outboxId })));
  }
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
  // Its writer publishes it right after the commit (`publishCommitted`); publishing here too would
  // race it and often send the notification twice. If the writer died first, the sweeper has it.
  if (entry.inline === true) return;
  const outcome = await retryTransient(() => processOutboxEntry(db(), outboxId));
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

/** Every minute: missed notifications and expired leases (docs/contract.md#leases). */
export async function onSweep(): Promise<void> {
  const result = await sweep(db());
  logger.info('sweep.done', result);
}

/** Every minute: integration health for the console (docs/decisions.md#integration-health), at most one write per integration. */
export async function onHealthRollUp(): Promise<void> {
  const result = await rollUpHealth(db(), Date.now(), (owner, err) => logger.warn('health.rollup_failed', { ...owner, detail: errorMessage(err) }));
  logger.info('health.rollup_done', result);
}
