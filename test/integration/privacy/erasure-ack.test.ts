/**
 * The connector's side of an erasure (docs/contract.md#erasures): POST /v1/erasures/pending lists
 * the integration's finished, unacknowledged erasures (paged), POST /v1/erasures/ack records the
 * purge (repeatable); another integration's erasure is 404, a foreign cursor 400.
 */
import { randomUUID } from 'node:crypto';
import { createTestIntegration, postJson, type ApiResponse } from '../helpers/stack';
import { deliveryTestFile, expectApiError } from '../helpers/deliveries';
import { requestErasure, send, waitForErasure, ws } from './helpers';

deliveryTestFile();

const pending = (key: string, body: unknown): Promise<ApiResponse> => postJson('/v1/erasures/pending', body, { key });
const ack = (key: string, body: unknown): Promise<ApiResponse> => postJson('/v1/erasures/ack', body, { key });

test('listed once done, paged by cursor; acknowledged ones leave the list; foreign ids 404, foreign cursors 400', async () => {
  const integration = await createTestIntegration();
  const other = await createTestIntegration({ workspaceId: integration.workspaceId });
  const customers = [0, 1, 2].map((i) => `cust-${i}-${randomUUID().slice(0, 6)}`);
  const conversations: string[] = [];
  for (const customer of customers) {
    const external = `chat-${randomUUID()}`;
    conversations.push(external);
    await send(integration, external, customer);
  }
  const customerOf = new Map<string, { customer: string; conversation: string }>();
  for (const [i, customer] of customers.entries()) {
    const id = await requestErasure(integration, customer);
    customerOf.set(id, { customer, conversation: conversations[i] ?? '' });
    await waitForErasure(integration.workspaceId, id);
  }
  // Listed in erasureId order.
  const erasureIds = [...customerOf.keys()].sort();
  const firstId = erasureIds[0] ?? '';
  // Another integration's erasure of the same workspace is not listed for this one.
  const foreign = await requestErasure(other, 'someone');
  await waitForErasure(other.workspaceId, foreign);

  const first = await pending(integration.key, { limit: 2 });
  expect(first.status).toBe(200);
  const page1 = first.body as { erasures: Array<{ erasureId: string; externalCustomerId: string; externalConversationIds: string[]; requestedAt: number }>; nextCursor: string | null };
  expect(page1.erasures.map((e) => e.erasureId)).toEqual(erasureIds.slice(0, 2));
  expect(page1.erasures[0]).toEqual({ erasureId: firstId, externalCustomerId: customerOf.get(firstId)?.customer, externalConversationIds: [customerOf.get(firstId)?.conversation], requestedAt: expect.any(Number) as number });
  expect(page1.nextCursor).not.toBeNull();
  const second = await pending(integration.key, { cursor: page1.nextCursor });
  expect((second.body as { erasures: Array<{ erasureId: string }>; nextCursor: string | null })).toMatchObject({ erasures: [{ erasureId: erasureIds[2] }], nextCursor: null });

  expectApiError(await pending(other.key, { cursor: page1.nextCursor }), 400, 'invalid_cursor');
  expectApiError(await pending(integration.key, { cursor: 'not-a-cursor' }), 400, 'invalid_cursor');
  expectApiError(await pending(integration.key, { limit: 0 }), 400, 'invalid_request');
  expectApiError(await pending(integration.key, { limit: 10, extra: true }), 400, 'invalid_request');

  expectApiError(await ack(other.key, { erasureId: erasureIds[0] }), 404, 'erasure_not_found');
  expectApiError(await ack(integration.key, { erasureId: `nope-${randomUUID()}` }), 404, 'erasure_not_found');
  expectApiError(await ack(integration.key, { erasureId: erasureIds[0], extra: 1 }), 400, 'invalid_request');
  for (let i = 0; i < 2; i++) {
    const res = await ack(integration.key, { erasureId: erasureIds[0] });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ acknowledged: true });
  }
  const audit = (await ws(integration.workspaceId).collection('erasures').doc(firstId).get()).data();
  expect(typeof audit?.acknowledgedAt).toBe('number');
  const after = await pending(integration.key, {});
  expect((after.body as { erasures: Array<{ erasureId: string }> }).erasures.map((e) => e.erasureId)).toEqual(erasureIds.slice(1));
  const theirs = await pending(other.key, {});
  expect((theirs.body as { erasures: Array<{ erasureId: string }> }).erasures.map((e) => e.erasureId)).toEqual([foreign]);
});
