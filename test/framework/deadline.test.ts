/**
 * The request deadline on the production runtime (docs/contract.md#time-budget): whatever a request waits on, it
 * is answered with our 503 `deadline_exceeded` envelope and `Retry-After` before Hosting's 60 s
 * timeout, and work that goes on after that answer commits nothing.
 *
 * Hangs are injected where the service really waits, without test-only code in the functions:
 * a TCP black hole as the Firestore host (every call hangs), a black hole as the Cloud Storage
 * endpoint (an upload hangs), and a proxy to the real Firestore emulator that slows every round
 * trip (the transaction is still running when the budget ends).
 *
 * These run against short budgets; the production default (50 s) has a suite of its own that needs
 * no emulator and runs from the start of `npm test` (deadline-default.test.ts).
 */
import { randomUUID } from 'node:crypto';
import { guardNoWrites } from '../integration/helpers/assertions';
import { deliveryDoc, deliveryTestFile, eventually, replyAndSequence, sleep } from '../integration/helpers/deliveries';
import { newMessage } from '../integration/helpers/messages';
import { createTestIntegration, firestoreEmulatorHost, messageParts, postJson, postMultipart } from '../integration/helpers/stack';
import { blackHole, expectDeadlineExceeded, slowProxy, startFunction, stopsAfterAll, timed, type FrameworkFunction } from './support';
import { png } from '../unit/fixtures/image-bytes';

jest.setTimeout(120_000);
const file = deliveryTestFile();

const track = stopsAfterAll();

/**
 * Against a 2.5 s budget: well past it, since a loaded CI machine delays the answer's delivery (the
 * function shares two cores with the whole stack), and far below both the hang (forever) and
 * Hosting's 60 s, so a budget that did not work still fails it.
 */
const SHORT_BUDGET_ANSWER_BOUND_MS = 20_000;

/** The `request.finished_after_deadline` line the function logs once the abandoned work ends. */
function lateOutcome(fn: FrameworkFunction): Promise<string> {
  return eventually(async () => /"message":"request.finished_after_deadline"[^\n]*|[^\n]*"request.finished_after_deadline"[^\n]*/.exec(fn.output())?.[0], 'the abandoned work to end', 90_000);
}

describe('a short budget (REQUEST_DEADLINE_MS=2500)', () => {
  test('an image upload that hangs: 503 in time, and the message is never recorded', async () => {
    const storage = track(await blackHole());
    const fn = track(
      await startFunction('messages', {
        REQUEST_DEADLINE_MS: '2500',
        IMAGE_STORE: 'gcs',
        IMAGE_BUCKET: 'deadline-test-bucket',
        STORAGE_EMULATOR_HOST: `http://${storage.host}`,
      }),
    );
    const integ = await createTestIntegration();
    const check = await guardNoWrites(integ);
    // The first request of the fresh process also loads the storage client inside its budget, and
    // on a loaded machine that alone used up the 2.5 s before the upload began (a right 503, but
    // not the hang this test is about): then it asks again, with the modules loaded.
    for (let attempt = 1; attempt <= 2 && storage.connections() === 0; attempt++) {
      const { res, ms } = await timed(() =>
        postMultipart('/', messageParts(newMessage(), [{ data: png(64, 64), contentType: 'image/png', filename: 'a.png' }]), { key: integ.key, baseUrl: fn.url, skipContractCheck: true }),
      );
      expectDeadlineExceeded(res);
      expect(ms).toBeLessThan(SHORT_BUDGET_ANSWER_BOUND_MS);
    }
    expect(storage.connections()).toBeGreaterThan(0);
    // The upload still hangs; nothing may be recorded meanwhile.
    await sleep(3_000);
    await check();
  });

  test('a transaction still running when the budget ends is not committed', async () => {
    const slow = track(await slowProxy(firestoreEmulatorHost(), 1_200));
    const fn = track(await startFunction('messages', { REQUEST_DEADLINE_MS: '2500', FIRESTORE_EMULATOR_HOST: slow.host }));
    const integ = await createTestIntegration();
    const check = await guardNoWrites(integ);
    const { res, ms } = await timed(() => postJson('/', newMessage(), { key: integ.key, baseUrl: fn.url, skipContractCheck: true }));
    expectDeadlineExceeded(res);
    expect(ms).toBeLessThan(SHORT_BUDGET_ANSWER_BOUND_MS);
    // The abandoned work reaches its commit point after the budget and gives up there.
    expect(await lateOutcome(fn)).toContain('"outcome":"deadline_exceeded"');
    await check();
  });

  test('a claim whose transaction outlives the budget leaves the delivery as it was', async () => {
    const setup = await file.ownConversation();
    const { deliveryId } = await replyAndSequence(setup, 'Reply under a slow backend');
    const before = await deliveryDoc(setup, deliveryId);
    const slow = track(await slowProxy(firestoreEmulatorHost(), 1_200));
    const fn = track(await startFunction('claimDelivery', { REQUEST_DEADLINE_MS: '2500', FIRESTORE_EMULATOR_HOST: slow.host }));
    const { res, ms } = await timed(() => postJson('/', { deliveryId, requestId: randomUUID() }, { key: setup.integration.key, baseUrl: fn.url, skipContractCheck: true }));
    expectDeadlineExceeded(res);
    expect(ms).toBeLessThan(SHORT_BUDGET_ANSWER_BOUND_MS);
    expect(await lateOutcome(fn)).toContain('"outcome":"deadline_exceeded"');
    expect(await deliveryDoc(setup, deliveryId)).toEqual(before);
  });
});
