/**
 * The production request budget (docs/contract.md#time-budget) on the production runtime: a
 * Firestore that never answers (a TCP black hole as its host) gets our 503 `deadline_exceeded`
 * with `Retry-After` after the default 50 s, before Hosting's 60 s timeout. The short budgets, and
 * what the abandoned work may not commit, are in deadline.test.ts.
 * @standalone talks to no emulator (its Firestore is a black hole) and spends its 50 s on the clock: it runs beside the static checks from the start of the run
 */
import { generateKey } from '../../functions/src/integrations/keys';
import { newMessage } from '../integration/helpers/messages';
import { postJson, projectId } from '../integration/helpers/stack';
import { blackHole, expectDeadlineExceeded, startFunction, stopsAfterAll, timed } from './support';

jest.setTimeout(120_000);
const track = stopsAfterAll();

test('default budget: a Firestore that never answers gets our 503 before 55 s, not the front end timeout', async () => {
  const hole = track(await blackHole());
  const fn = track(await startFunction('messages', { FIRESTORE_EMULATOR_HOST: hole.host, GCLOUD_PROJECT: projectId() }));
  const { res, ms } = await timed(() => postJson('/', newMessage(), { key: generateKey('sdk_test_'), baseUrl: fn.url, skipContractCheck: true }));
  expectDeadlineExceeded(res);
  expect(ms).toBeGreaterThanOrEqual(49_000);
  expect(ms).toBeLessThan(55_000);
  expect(hole.connections()).toBeGreaterThan(0);
});
