/**
 * Reply attachments on the connector side (docs/contract.md#attachments), through real HTTP
 * (Hosting -> Functions): the capability, the reply trigger's re-check, the claim's
 * `message.attachments` (absent for a text-only reply, key for key the old shape), POST
 * /v1/deliveries/attachment (bytes, headers, and every refusal writing nothing), per-part outcomes
 * on complete/fail and the resend of a partly sent reply. Uploads are seeded as the upload
 * function stores them (an upload record + the object in the local store the functions use).
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FieldValue } from 'firebase-admin/firestore';
import { attachmentPath } from '../../../functions/src/platform/object-store';
import { adminDb, apiBaseUrl, createTestIntegration, integrationRef, testImageDir } from '../helpers/stack';
import { seedUpload as seedUploadAs, type Uploaded } from '../helpers/console-uploads';
import { claimReady, type ConversationSetup, deliveryDoc, eventually, expectApiError, expectHttp, expectOk, expectSent, op, readReply, replyAndNotify, setupConversation, sharedConversationFixture, waitForMirror } from '../helpers/deliveries';

const CAPABILITY = { contentTypes: ['image/png', 'application/pdf', 'text/plain'], maxBytes: 10 * 1024 * 1024, maxCount: 5 };

let key: string;
const { conversation } = sharedConversationFixture((first) => {
  key = first.integration.key;
});

const PNG_HEADER = Buffer.from('89504e470d0a1a0a', 'hex');

/** Stores `bytes` as the upload function does (helpers/console-uploads.ts): the upload record and its object. */
const seedUpload = (setup: Pick<ConversationSetup, 'integration' | 'conversationId'>, name: string, contentType: string, bytes: Buffer): Promise<Uploaded> =>
  seedUploadAs(setup.integration.workspaceId, setup.conversationId, 'operator-1', { bytes, name, type: contentType });

/** An operator reply with files, exactly as the console writes it. */
async function writeReplyWithFiles(setup: Pick<ConversationSetup, 'integration' | 'conversationId'>, text: string, attachments: Uploaded[]): Promise<string> {
  const ref = adminDb().collection(`workspaces/${setup.integration.workspaceId}/conversations/${setup.conversationId}/messages`).doc();
  await ref.create({ direction: 'outbound', author: { type: 'operator', uid: 'operator-1' }, text, attachments, createdAt: FieldValue.serverTimestamp() });
  return ref.id;
}

async function notified(setup: ConversationSetup, messageId: string): Promise<string> {
  const n = await eventually(async () => setup.topic.received.find((x) => x.messageId === messageId), `the notification of ${messageId}`, 20_000);
  return n.deliveryId;
}

/** POST /v1/deliveries/attachment read as bytes (the 200 is not JSON). */
async function fetchAttachment(apiKey: string, body: unknown): Promise<{ status: number; headers: Headers; bytes: Buffer }> {
  const res = await fetch(`${apiBaseUrl()}/v1/deliveries/attachment`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
}

/**
 * A fetch read to its end, until the connection is cut, or until no byte came for `idleMs`: whether
 * the body was complete, and how much came. Deployed, a cut-off answer is a reset connection; the
 * Hosting emulator's proxy does not pass the reset on and leaves the body open, hence the idle limit.
 */
async function fetchIncomplete(apiKey: string, body: unknown, idleMs = 4000): Promise<{ status: number; headers: Headers; complete: boolean; received: number }> {
  const controller = new AbortController();
  const res = await fetch(`${apiBaseUrl()}/v1/deliveries/attachment`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: controller.signal,
  });
  let received = 0;
  let idle = setTimeout(() => controller.abort(), idleMs);
  try {
    for await (const chunk of res.body ?? []) {
      received += (chunk as Uint8Array).length;
      clearTimeout(idle);
      idle = setTimeout(() => controller.abort(), idleMs);
    }
  } catch {
    // Cut or stalled before Content-Length bytes came: what a cut-off answer looks like.
    return { status: res.status, headers: res.headers, complete: false, received };
  } finally {
    clearTimeout(idle);
  }
  return { status: res.status, headers: res.headers, complete: received === Number(res.headers.get('content-length')), received };
}

const withCapability = async (setup: ConversationSetup) => integrationRef(setup.integration.workspaceId, setup.integration.integrationId).update({ 'replies.attachments': CAPABILITY });

describe('without the capability (a connector built before attachments)', () => {
  test('a text-only claim has exactly the keys it always had', async () => {
    const setup = await conversation();
    const { deliveryId } = await replyAndNotify(setup, 'plain text');
    const res = await op('claim', key, { deliveryId, requestId: randomUUID() });
    expectHttp(res, 200);
    const body = res.body as { message: Record<string, unknown> };
    expect(Object.keys(body).sort()).toEqual(['leaseExpiresAt', 'leaseId', 'message', 'status']);
    expect(Object.keys(body.message).sort()).toEqual(['recipient', 'text']);
    expect(Object.keys(body.message.recipient as object).sort()).toEqual(['externalConversationId', 'externalCustomerId']);
    expect((await deliveryDoc(setup, deliveryId)).attachments).toBeUndefined();
  });

  test('a reply with files is failed attachments_unsupported and never published', async () => {
    const setup = await conversation();
    const file = await seedUpload(setup, 'a.png', 'image/png', Buffer.concat([PNG_HEADER, randomBytes(64)]));
    const messageId = await writeReplyWithFiles(setup, 'see file', [file]);
    const mirror = await waitForMirror(setup, messageId);
    expect(mirror).toMatchObject({ status: 'failed', error: { outcome: 'failed', code: 'attachments_unsupported' } });
    expect(mirror.deliveryId).toBeUndefined();
    expect(setup.topic.received.some((n) => n.messageId === messageId)).toBe(false);
  });
});

describe('with the capability', () => {
  let setup: ConversationSetup;
  beforeAll(async () => {
    // Its own integration (same topic): the capability must not change the other describe's claims.
    const shared = await conversation();
    const integration = await createTestIntegration({ topic: shared.topic.topicPath });
    setup = await setupConversation({ topic: shared.topic, integration });
    await withCapability(setup);
  });
  const fresh = () => setupConversation({ topic: setup.topic, integration: setup.integration });

  test('upload -> reply -> claim with attachments -> bytes hash-checked -> complete with parts -> mirror parts', async () => {
    const conv = await fresh();
    const png = await seedUpload(conv, 'screen shot "1".png', 'image/png', Buffer.concat([PNG_HEADER, randomBytes(4096)]));
    const pdf = await seedUpload(conv, 'Rechnung-ü.pdf', 'application/pdf', Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(2048)]));
    const messageId = await writeReplyWithFiles(conv, '', [png, pdf]);
    const deliveryId = await notified(conv, messageId);
    const claim = await claimReady(conv.integration.key, deliveryId);
    expect(claim.message).toEqual({
      text: '',
      recipient: { externalConversationId: conv.externalConversationId, externalCustomerId: conv.customerId },
      attachments: [png, pdf],
    });

    for (const file of [png, pdf]) {
      const res = await fetchAttachment(conv.integration.key, { deliveryId, leaseId: claim.leaseId, attachmentId: file.attachmentId });
      expect(res.status).toBe(200);
      expect(createHash('sha256').update(res.bytes).digest('hex')).toBe(file.sha256);
      expect(res.headers.get('content-type')).toBe(file.contentType);
      expect(res.headers.get('content-length')).toBe(String(file.size));
      expect(res.headers.get('etag')).toBe(`"${file.sha256}"`);
      expect(res.headers.get('repr-digest')).toBe(`sha-256=:${Buffer.from(file.sha256, 'hex').toString('base64')}:`);
      expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename="[^"]+"; filename\*=UTF-8''/);
    }
    const png200 = await fetchAttachment(conv.integration.key, { deliveryId, leaseId: claim.leaseId, attachmentId: png.attachmentId });
    expect(png200.headers.get('content-disposition')).toBe(`attachment; filename="screen shot _1_.png"; filename*=UTF-8''screen%20shot%20_1_.png`);

    expectOk(await op('start', conv.integration.key, { deliveryId, leaseId: claim.leaseId }), { status: 'sending' });
    // An unknown part is a 400 naming it, and nothing is written.
    const before = await deliveryDoc(conv, deliveryId);
    const bad = await op('complete', conv.integration.key, { deliveryId, leaseId: claim.leaseId, providerMessageIds: ['p1'], parts: [{ part: 'a_nope', status: 'sent' }] });
    expect(expectApiError(bad, 400, 'unknown_part')).toContain('a_nope');
    expect(await deliveryDoc(conv, deliveryId)).toEqual(before);

    const parts = [
      { part: png.attachmentId, status: 'sent', providerMessageIds: ['p-png'] },
      { part: pdf.attachmentId, status: 'sent', providerMessageIds: ['p-pdf'] },
    ];
    expectSent(await op('complete', conv.integration.key, { deliveryId, leaseId: claim.leaseId, providerMessageIds: ['p-png', 'p-pdf'], parts }), deliveryId);
    const mirror = await waitForMirror(conv, messageId, (m) => m.status === 'sent');
    expect(mirror.parts).toEqual(parts);

    // Finished: a fetch is 409 delivery_finished.
    expectApiError(await op('attachment', conv.integration.key, { deliveryId, leaseId: claim.leaseId, attachmentId: png.attachmentId }), 409, 'delivery_finished');
  });

  test('a fetch with a wrong or expired lease, an id not on the delivery, or a foreign delivery is refused', async () => {
    const conv = await fresh();
    const file = await seedUpload(conv, 'notes.txt', 'text/plain', Buffer.from('hello, world\n'));
    const messageId = await writeReplyWithFiles(conv, 'with notes', [file]);
    const deliveryId = await notified(conv, messageId);
    const claim = await claimReady(conv.integration.key, deliveryId);
    const k = conv.integration.key;
    expectApiError(await op('attachment', k, { deliveryId, leaseId: 'l_wrong', attachmentId: file.attachmentId }), 409, 'lease_lost');
    expectApiError(await op('attachment', k, { deliveryId, leaseId: claim.leaseId, attachmentId: 'a_other' }), 404, 'attachment_not_found');
    expectApiError(await op('attachment', key, { deliveryId, leaseId: claim.leaseId, attachmentId: file.attachmentId }), 404, 'delivery_not_found');
    expectApiError(await op('attachment', k, { deliveryId, leaseId: claim.leaseId, attachmentId: file.attachmentId, extra: 1 }), 400, 'invalid_request');
    await adminDb().doc(`workspaces/${conv.integration.workspaceId}/deliveries/${deliveryId}`).update({ 'lease.expiresAt': Date.now() - 1000 });
    expectApiError(await op('attachment', k, { deliveryId, leaseId: claim.leaseId, attachmentId: file.attachmentId }), 409, 'lease_lost');
  });

  test('a stored object that no longer matches its record: other bytes of the same size never reach the client complete; a missing or resized object is 503', async () => {
    const conv = await fresh();
    // Several chunks of the store's reads, so that the answer is under way when the mismatch shows.
    const bytes = Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(512 * 1024)]);
    const file = await seedUpload(conv, 'report.pdf', 'application/pdf', bytes);
    const messageId = await writeReplyWithFiles(conv, 'the report', [file]);
    const deliveryId = await notified(conv, messageId);
    const claim = await claimReady(conv.integration.key, deliveryId);
    const body = { deliveryId, leaseId: claim.leaseId, attachmentId: file.attachmentId };
    const stored = join(testImageDir(), attachmentPath(conv.integration.workspaceId, conv.conversationId, file.attachmentId));

    // Altered in its last byte only (the mismatch is known at the very end), then in its first.
    for (const at of [bytes.length - 1, 0]) {
      const altered = Buffer.from(bytes);
      altered[at] = (altered[at] ?? 0) ^ 0xff;
      await writeFile(stored, altered);
      const res = await fetchIncomplete(conv.integration.key, body);
      // The headers were sent (the mismatch shows only while the bytes pass), the body is cut off.
      expect(res.status).toBe(200);
      expect(res.headers.get('content-length')).toBe(String(file.size));
      expect(res.complete).toBe(false);
      expect(res.received).toBeLessThan(file.size);
    }

    // Restored, the same request gets the file.
    await writeFile(stored, bytes);
    const ok = await fetchAttachment(conv.integration.key, body);
    expect(ok.status).toBe(200);
    expect(ok.bytes.equals(bytes)).toBe(true);

    // Another size than recorded, or no object at all: 503 with Retry-After before anything is sent.
    await writeFile(stored, bytes.subarray(0, bytes.length - 1));
    const resized = await op('attachment', conv.integration.key, body);
    expectApiError(resized, 503, 'temporarily_unavailable');
    expect(resized.headers.get('retry-after')).toBe('5');
    await rm(stored);
    expectApiError(await op('attachment', conv.integration.key, body), 503, 'temporarily_unavailable');
    // A read: the delivery is still leased, the lease still live.
    expect(await deliveryDoc(conv, deliveryId)).toMatchObject({ status: 'leased', lease: { leaseId: claim.leaseId } });
  });

  test('a file of another conversation or workspace, or a reply naming a file other than the upload, is failed attachment_rejected', async () => {
    const conv = await fresh();
    const other = await fresh();
    const foreignWs = await createTestIntegration();
    const ofOther = await seedUpload(other, 'x.png', 'image/png', Buffer.concat([PNG_HEADER, randomBytes(32)]));
    const ofOtherWs = await seedUpload({ integration: foreignWs, conversationId: conv.conversationId }, 'y.png', 'image/png', Buffer.concat([PNG_HEADER, randomBytes(32)]));
    const mine = await seedUpload(conv, 'z.png', 'image/png', Buffer.concat([PNG_HEADER, randomBytes(32)]));
    const lying = { ...mine, size: mine.size + 1 };
    const gif = await seedUpload(conv, 'g.gif', 'image/gif', Buffer.from('GIF89a-----'));
    for (const files of [[ofOther], [ofOtherWs], [lying], [gif]]) {
      const messageId = await writeReplyWithFiles(conv, 'x', files);
      const mirror = await waitForMirror(conv, messageId);
      expect(mirror).toMatchObject({ status: 'failed', error: { code: 'attachment_rejected' } });
      expect(conv.topic.received.some((n) => n.messageId === messageId)).toBe(false);
    }
  });

  test('an upload belongs to the reply that carries it: it is marked used (out of the cleanup), and a second reply naming it is failed attachment_rejected', async () => {
    const conv = await fresh();
    const file = await seedUpload(conv, 'once.png', 'image/png', Buffer.concat([PNG_HEADER, randomBytes(64)]));
    const first = await writeReplyWithFiles(conv, 'first', [file]);
    await notified(conv, first);
    const record = (await adminDb().doc(`workspaces/${conv.integration.workspaceId}/attachmentUploads/${file.attachmentId}`).get()).data();
    expect(record?.usedBy).toBe(first);
    expect(record?.cleanupAt).toBeUndefined();
    const second = await writeReplyWithFiles(conv, 'second', [file]);
    expect(await waitForMirror(conv, second)).toMatchObject({ status: 'failed', error: { code: 'attachment_rejected' } });
    expect(conv.topic.received.some((n) => n.messageId === second)).toBe(false);
    expect((await adminDb().doc(`workspaces/${conv.integration.workspaceId}/attachmentUploads/${file.attachmentId}`).get()).get('usedBy')).toBe(first);
  });

  test('a resend of a partly sent reply sends only the parts not known to be sent', async () => {
    const conv = await fresh();
    const a = await seedUpload(conv, 'a.png', 'image/png', Buffer.concat([PNG_HEADER, randomBytes(100)]));
    const b = await seedUpload(conv, 'b.pdf', 'application/pdf', Buffer.concat([Buffer.from('%PDF-1.4\n'), randomBytes(100)]));
    const messageId = await writeReplyWithFiles(conv, 'two files', [a, b]);
    const deliveryId = await notified(conv, messageId);
    const claim = await claimReady(conv.integration.key, deliveryId);
    expectOk(await op('start', conv.integration.key, { deliveryId, leaseId: claim.leaseId }), { status: 'sending' });
    const parts = [
      { part: 'text', status: 'sent', providerMessageIds: ['p-t'] },
      { part: a.attachmentId, status: 'sent', providerMessageIds: ['p-a'] },
      { part: b.attachmentId, status: 'failed', code: 'too_big_for_channel' },
    ];
    expectSent(await op('fail', conv.integration.key, { deliveryId, leaseId: claim.leaseId, outcome: 'unknown', code: 'partial_send', parts }), deliveryId, 'unknown');
    await waitForMirror(conv, messageId, (m) => m.status === 'unknown' && Array.isArray(m.parts));

    const reply = adminDb().doc(`workspaces/${conv.integration.workspaceId}/conversations/${conv.conversationId}/messages/${messageId}`);
    await reply.update({ resend: { requestedAt: FieldValue.serverTimestamp(), uid: 'operator-1' } });
    const resent = await waitForMirror(conv, messageId, (m) => m.deliveryId !== deliveryId && m.status === 'queued');
    const second = await claimReady(conv.integration.key, resent.deliveryId as string);
    expect(second.message).toEqual({
      text: '',
      recipient: { externalConversationId: conv.externalConversationId, externalCustomerId: conv.customerId },
      attachments: [b],
    });
    // The text is no part of the resent delivery.
    expectApiError(
      await op('complete', conv.integration.key, { deliveryId: resent.deliveryId, leaseId: second.leaseId, providerMessageIds: ['p'], parts: [{ part: 'text', status: 'sent' }] }),
      400,
      'unknown_part',
    );
    expect((await readReply(conv, messageId))?.delivery.previous.deliveryId).toBe(deliveryId);
  });
});
