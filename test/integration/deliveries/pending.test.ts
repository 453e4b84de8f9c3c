/**
 * The catch-up list (docs/contract.md#catch-up) through real HTTP: POST /v1/deliveries/pending lists the
 * caller's claimable deliveries, oldest first, by cursor; a connector that never got a
 * notification finds its work there.
 */
import { randomUUID } from 'node:crypto';
import { createTestIntegration } from '../helpers/stack';
import {
  claimReady,
  createTestTopic,
  deliverFully,
  deliveryDoc,
  deliveryTestFile,
  expectApiError,
  expectHttp,
  mapLimit,
  op,
  replyAndSequence,
  setupConversation,
  type ConversationSetup,
  type Reply,
} from '../helpers/deliveries';

interface Page {
  deliveries: Array<{ deliveryId: string; workspaceId: string; integrationId: string; conversationId: string; messageId: string }>;
  nextCursor: string | null;
}

const file = deliveryTestFile();

async function page(key: string, body: Record<string, unknown>): Promise<Page> {
  const res = await op('pending', key, body);
  expectHttp(res, 200);
  return res.body as Page;
}

/** Every page, following the cursors; `between` runs after each page (to add deliveries meanwhile). */
async function allPages(key: string, limit: number, between: () => Promise<void> = async () => undefined): Promise<string[]> {
  const seen: string[] = [];
  let cursor: string | null = null;
  do {
    const p: Page = await page(key, cursor === null ? { limit } : { limit, cursor });
    expect(p.deliveries.length).toBeLessThanOrEqual(limit);
    seen.push(...p.deliveries.map((d) => d.deliveryId));
    cursor = p.nextCursor;
    await between();
  } while (cursor !== null);
  return seen;
}

/** `n` conversations of one integration, each with one operator reply sequenced into a delivery. */
async function conversationsWithReplies(base: ConversationSetup, n: number): Promise<Reply[]> {
  const setups = await mapLimit(Array.from({ length: n }), 8, () => setupConversation({ integration: base.integration, topic: base.topic }));
  return mapLimit(setups, 8, (setup, i) => replyAndSequence(setup, `catch-up ${i}`));
}

test('lists exactly the claimable deliveries, each as its notification; a claimed one leaves; the next reply of a conversation joins when the first is sent', async () => {
  const base = await setupConversation({ topic: file.track(await createTestTopic()) });
  const key = base.integration.key;
  const first = await replyAndSequence(base, 'first');
  const second = await replyAndSequence(base, 'second (waits behind the first)');
  const p = await page(key, {});
  expect(p).toEqual({
    deliveries: [{ deliveryId: first.deliveryId, workspaceId: base.integration.workspaceId, integrationId: base.integration.integrationId, conversationId: base.conversationId, messageId: first.messageId }],
    nextCursor: null,
  });
  const claim = await claimReady(key, first.deliveryId);
  expect((await page(key, {})).deliveries).toEqual([]);
  await op('start', key, { deliveryId: first.deliveryId, leaseId: claim.leaseId });
  await op('complete', key, { deliveryId: first.deliveryId, leaseId: claim.leaseId, providerMessageIds: ['p-1'] });
  expect((await page(key, {})).deliveries.map((d) => d.deliveryId)).toEqual([second.deliveryId]);
  await deliverFully(key, second.deliveryId);
  expect((await page(key, {})).deliveries).toEqual([]);
});

// Pages, not volume, are what this exercises: 100 deliveries at 15 a page are 7 pages, each merged
// from every shard of the list's index, with new deliveries arriving between the first pages.
test('pages through 100 claimable deliveries in order, with no duplicates and no gaps while new ones arrive', async () => {
  const base = await setupConversation({ topic: file.track(await createTestTopic()) });
  const key = base.integration.key;
  const initial = await conversationsWithReplies(base, 100);
  const arrivals: Reply[] = [];
  const seen = await allPages(key, 15, async () => {
    if (arrivals.length < 15) arrivals.push(...(await conversationsWithReplies(base, 5)));
  });
  const expected = [...initial, ...arrivals].map((r) => r.deliveryId);
  expect(new Set(seen).size).toBe(seen.length);
  // Everything that existed before the first page is listed; arrivals come after the current position.
  for (const id of initial.map((r) => r.deliveryId)) expect(seen).toContain(id);
  expect(seen.every((id) => expected.includes(id))).toBe(true);
  // Oldest first across pages: the stored `pendingAt` never decreases along the listing.
  const times = await mapLimit(seen, 16, async (id) => (await deliveryDoc(base, id)).pendingAt as number);
  expect(times.every((t, i) => i === 0 || t >= (times[i - 1] as number))).toBe(true);
}, 240_000);

test("a cursor of another integration, or a made-up one, is 400 invalid_cursor; the schema is strict", async () => {
  const base = await setupConversation({ topic: file.track(await createTestTopic()) });
  await mapLimit([0, 1, 2], 3, (i) => replyAndSequence(base, `r${i}`).then(() => setupConversation({ integration: base.integration, topic: base.topic })).then((s) => replyAndSequence(s, `x${i}`)));
  const withNext = await page(base.integration.key, { limit: 1 });
  expect(withNext.nextCursor).not.toBeNull();
  const other = await createTestIntegration();
  expectApiError(await op('pending', other.key, { cursor: withNext.nextCursor }), 400, 'invalid_cursor');
  expectApiError(await op('pending', base.integration.key, { cursor: `x${randomUUID()}` }), 400, 'invalid_cursor');
  expectApiError(await op('pending', base.integration.key, { limit: 0 }), 400, 'invalid_request');
  expectApiError(await op('pending', base.integration.key, { limit: 101 }), 400, 'invalid_request');
  expectApiError(await op('pending', base.integration.key, { status: 'queued' }), 400, 'invalid_request');
  expect((await page(other.key, {})).deliveries).toEqual([]);
});
