/**
 * The privacy jobs' entry points (docs/privacy.md): an erasure starts from its document's creation
 * and continues itself through a task queue in bounded runs until done.
 */
import * as logger from 'firebase-functions/logger';
import type { FirestoreEvent, QueryDocumentSnapshot } from 'firebase-functions/v2/firestore';
import type { Request as TaskRequest } from 'firebase-functions/v2/tasks';
import { config } from '../platform/config';
import { db } from '../platform/firebase';
import { errorCode, errorMessage } from '../platform/failures';
import { REGION } from '../platform/region';
import { createImageStore } from '../messages/image-store';
import { runErasure } from './erasure';
import { runRetention } from './retention';
import { deleteExpiredExports, runExport } from './export';
export { downloadExport } from './download';

export const ERASURE_TASK_FUNCTION = 'continueErasure';
/**
 * Time one invocation spends on steps before it hands over to the next task: far below the
 * functions' timeout, so a run is never cut off mid-step by the platform (a crash still is
 * harmless: the task is retried and each step is idempotent).
 */
const RUN_BUDGET_MS = 20_000;

/** One bounded run, then the next task if it is not done. Throwing makes Cloud Tasks retry the run. */
async function runAndContinue(workspaceId: string, erasureId: string, run: number): Promise<void> {
  const result = await runErasure(db(), createImageStore(config().imageStore), workspaceId, erasureId, RUN_BUDGET_MS);
  logger.info('erasure.run', { workspaceId, erasureId, run, done: result.done, steps: result.steps, deleted: result.deleted, reads: result.reads });
  if (result.done) return;
  const { getFunctions } = await import('firebase-admin/functions');
  try {
    await getFunctions()
      .taskQueue(`locations/${REGION}/functions/${ERASURE_TASK_FUNCTION}`)
      .enqueue({ workspaceId, erasureId, run: run + 1 }, { id: `erasure-${erasureId.replace(/[^A-Za-z0-9_-]/g, '_')}-${run + 1}` });
  } catch (err) {
    // The same continuation enqueued twice (a redelivered event): one is enough.
    if (errorCode(err) === 'functions/task-already-exists') return;
    logger.warn('erasure.continue_failed', { workspaceId, erasureId, detail: errorMessage(err) });
    throw err;
  }
}

/** An admin requested an erasure: start it at once (a small one is done within this run). */
export async function onErasureCreated(event: FirestoreEvent<QueryDocumentSnapshot | undefined, { workspaceId: string; erasureId: string }>): Promise<void> {
  await runAndContinue(event.params.workspaceId, event.params.erasureId, 1);
}

/** The next bounded run of an erasure. */
export async function onErasureTask(request: TaskRequest<{ workspaceId?: unknown; erasureId?: unknown; run?: unknown }>): Promise<void> {
  const { workspaceId, erasureId, run } = request.data;
  if (typeof workspaceId !== 'string' || typeof erasureId !== 'string') return;
  await runAndContinue(workspaceId, erasureId, typeof run === 'number' ? run : 1);
}

/** The retention job (docs/privacy.md#retention): each workspace's pass, bounded per run. */
export async function onRetention(): Promise<void> {
  const store = createImageStore(config().imageStore);
  const stats = await runRetention(db(), store, { deleteDue: config().retentionDeletesExpired });
  const exportsDeleted = await deleteExpiredExports(db(), store, Date.now());
  logger.info('retention.run', { ...stats, exportsDeleted });
}

/** An admin requested an export: write its file (docs/privacy.md#export). */
export async function onExportCreated(event: FirestoreEvent<QueryDocumentSnapshot | undefined, { workspaceId: string; exportId: string }>): Promise<void> {
  const outcome = await runExport(db(), createImageStore(config().imageStore), event.params.workspaceId, event.params.exportId);
  logger.info('export.run', { workspaceId: event.params.workspaceId, exportId: event.params.exportId, outcome });
}
