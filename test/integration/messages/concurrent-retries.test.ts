/**
 * POST /v1/messages: identical retries sent at the same time (docs/contract.md#incoming-messages):
 * exactly one 201, the others 200 duplicates with the same ids, one message, an image stored once.
 * @serial its requests contend for one event document's transaction: beside other suites' load the Firestore emulator's lock waits can outlast the request deadline (a correct 503, but not the answer this suite pins)
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { expectAccepted } from '../helpers/assertions';
import { MESSAGES_PATH, listMessageDocs, newMessage } from '../helpers/messages';
import { closeStack, createTestIntegration, imageFilePath, listImageFiles, messageParts, postJson, postMultipart, warmWorkers, workspaceDocPaths } from '../helpers/stack';
import { png } from '../../unit/fixtures/image-bytes';

// The warm-up below may wait for ten cold starts of the emulator's workers on a loaded machine.
jest.setTimeout(150_000);
afterAll(closeStack);

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe('POST /v1/messages: concurrent identical retries', () => {
  test('10 parallel identical requests: exactly one 201, nine 200 duplicates, one message', async () => {
    const integ = await createTestIntegration();
    const msg = newMessage();
    await warmWorkers(MESSAGES_PATH, 10, integ.key);
    const responses = await Promise.all(Array.from({ length: 10 }, () => postJson(MESSAGES_PATH, msg, { key: integ.key })));
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 200, 201]);
    const bodies = responses.map((r) => expectAccepted(r, r.status as 200 | 201));
    const ids = new Set(bodies.map((b) => `${b.conversationId}/${b.messageId}`));
    expect(ids.size).toBe(1);
    const [only] = bodies;
    expect(await listMessageDocs(integ.workspaceId, only?.conversationId ?? '')).toHaveLength(1);
    expect(await workspaceDocPaths(integ.workspaceId)).toHaveLength(5);
    expect(new Set(responses.map((r) => r.headers.get('x-request-id'))).size).toBe(10);
  });

  test('parallel identical requests with an image store the image once', async () => {
    const integ = await createTestIntegration();
    const msg = newMessage();
    const image = png(300, 200, { totalBytes: 200_000 });
    const responses = await Promise.all(
      Array.from({ length: 4 }, () => postMultipart(MESSAGES_PATH, messageParts(msg, [image]), { key: integ.key })),
    );
    expect(responses.map((r) => r.status).sort()).toEqual([200, 200, 200, 201]);
    const { conversationId, messageId } = responses[0]?.body as { conversationId: string; messageId: string };
    const files = await listImageFiles(`workspaces/${integ.workspaceId}`);
    expect(files).toEqual([`workspaces/${integ.workspaceId}/conversations/${conversationId}/messages/${messageId}/images/${sha256(image)}.png`]);
    expect(sha256(await readFile(imageFilePath(files[0] ?? '')))).toBe(sha256(image));
  });
});
