/**
 * `erasure.done` (docs/operations.md#operational-events): an erasure in a workspace with an
 * operations topic publishes exactly one event, within seconds, through the outbox (written with
 * the transition to `done`), with the erasure id and the audit's counts and no customer
 * identifier; running the erasure again (a redelivered trigger or retried task after the last
 * step) publishes nothing more.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { runErasure } from '../../../functions/src/privacy/erasure';
import { adminDb } from '../helpers/stack';
import { createTestTopic, deliveryTestFile, eventually, sleep } from '../helpers/deliveries';
import { localStore, requestErasure, send, waitForErasure, ws } from './helpers';

const file = deliveryTestFile();

/** What the functions emulator printed so far (EMULATOR_LOG_FILE, written by scripts/test.mjs). */
function emulatorLog(): string {
  const path = process.env.EMULATOR_LOG_FILE;
  if (path === undefined) throw new Error('EMULATOR_LOG_FILE is not set (run through scripts/test.mjs)');
  return readFileSync(path, 'utf8');
}

test('an erasure publishes one erasure.done to the operations topic; a re-run of its last step publishes nothing more', async () => {
  const setup = await file.ownConversation();
  const { integration } = setup;
  const ops = file.track(await createTestTopic());
  await ws(integration.workspaceId).collection('settings').doc('operations').set({ topic: ops.topicPath });
  await send(integration, setup.externalConversationId, setup.customerId, { withImage: true });

  const erasureId = await requestErasure(integration, setup.customerId);
  const audit = await waitForErasure(integration.workspaceId, erasureId);
  const ofThisErasure = (): Array<Record<string, unknown>> =>
    (ops.received as unknown as Array<Record<string, unknown>>).filter((e) => e.type === 'erasure.done' && (e.detail as { erasureId?: unknown } | undefined)?.erasureId === erasureId);
  const [event] = await eventually(async () => (ofThisErasure().length > 0 ? ofThisErasure() : undefined), 'the erasure.done event', 15_000);
  expect(event).toEqual({
    eventId: `erasure.done:${integration.workspaceId}:${erasureId}`,
    type: 'erasure.done',
    workspaceId: integration.workspaceId,
    integrationId: integration.integrationId,
    at: new Date(audit.finishedAt as number).toISOString(),
    detail: { erasureId, counts: audit.counts, startedAt: new Date(audit.startedAt as number).toISOString(), finishedAt: new Date(audit.finishedAt as number).toISOString() },
  });
  // No customer identifier and no content travels to the operations topic.
  expect(JSON.stringify(event)).not.toContain(setup.customerId);
  expect(JSON.stringify(event)).not.toContain('hello from');

  // The last step again (a redelivered trigger, a retried task), twice at once: nothing new.
  const again = await Promise.all([1, 2].map(() => runErasure(adminDb(), localStore(), integration.workspaceId, erasureId, 10_000)));
  for (const run of again) expect(run).toMatchObject({ done: true, deleted: 0 });
  // A negative check (no second event): an outbox entry of the re-runs would be published within
  // a trigger and a pull's latency; nothing observable marks "none is coming". Bounded.
  await sleep(3_000);
  expect(ofThisErasure()).toHaveLength(1);
  expect((await adminDb().collection('outbox').where('event.detail.erasureId', '==', erasureId).get()).size).toBe(0);
  // The outbox trigger published it (the line the next test expects not to see for its erasure).
  expect(emulatorLog()).toContain(`"eventId":"${String(event?.eventId)}"`);
});

test('without an operations topic no event is written (not even one dropped for want of a topic)', async () => {
  const setup = await file.ownConversation();
  const erasureId = await requestErasure(setup.integration, `nobody-${randomUUID()}`);
  await waitForErasure(setup.integration.workspaceId, erasureId);
  // A negative check (no outbox entry, no publish log line): bounded, a trigger's latency and the log's flush.
  await sleep(2_000);
  expect((await adminDb().collection('outbox').where('event.detail.erasureId', '==', erasureId).get()).size).toBe(0);
  expect(emulatorLog()).not.toContain(`erasure.done:${setup.integration.workspaceId}:${erasureId}`);
});
