/**
 * The email connector's thread store forgets an erased customer (examples/email-connector/src/store.ts):
 * on a real file in a temporary directory, reopened to see what was saved.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ThreadStore } from '../../../examples/email-connector/src/store';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'email-store-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function seeded(): Promise<ThreadStore> {
  const store = await ThreadStore.open(dir);
  await store.recordInbound('thread-alice-1', { messageId: 'a1@mail.test', references: [], subject: 'Order', customer: 'alice@example.test' });
  await store.recordOutbound('thread-alice-1', 'reply-a1@desk.test');
  await store.recordInbound('thread-alice-2', { messageId: 'a2@mail.test', references: [], subject: 'Refund', customer: 'alice@example.test' });
  await store.recordInbound('thread-bob', { messageId: 'b1@mail.test', references: [], subject: 'Hi', customer: 'bob@example.test' });
  return store;
}

test("purgeCustomer forgets the customer's threads and their Message-IDs, saved to disk; others stay", async () => {
  const store = await seeded();
  await expect(store.purgeCustomer('alice@example.test', ['thread-alice-1'])).resolves.toEqual({ threads: 2, messageIds: 3 });
  const reopened = await ThreadStore.open(dir);
  expect(reopened.thread('thread-alice-1')).toBeUndefined();
  expect(reopened.thread('thread-alice-2')).toBeUndefined();
  expect(reopened.conversationOf('a1@mail.test')).toBeUndefined();
  expect(reopened.conversationOf('reply-a1@desk.test')).toBeUndefined();
  expect(reopened.thread('thread-bob')).toMatchObject({ customer: 'bob@example.test' });
  expect(reopened.conversationOf('b1@mail.test')).toBe('thread-bob');
});

test('an erased conversation goes even when its thread names no customer we know; a second purge removes nothing and succeeds', async () => {
  const store = await seeded();
  await expect(store.purgeCustomer('carol@example.test', ['thread-bob'])).resolves.toEqual({ threads: 1, messageIds: 1 });
  await expect(store.purgeCustomer('carol@example.test', ['thread-bob'])).resolves.toEqual({ threads: 0, messageIds: 0 });
  expect((await ThreadStore.open(dir)).thread('thread-alice-1')).toBeDefined();
});
