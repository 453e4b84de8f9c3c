/**
 * SDK end to end with reply attachments (docs/decisions.md#attachments-in-the-sdk): a reply with a
 * PNG and a PDF uploaded by a console member (stored as the upload function stores them; on the
 * test service, the operator's `reply` with files), delivered by `processDelivery` whose provider fetches
 * each file (hash-checked) and reports each part; the mirror shows the parts. `deliveries.attachment`
 * refuses a foreign lease, an id not on the delivery and a finished delivery.
 */
import { createHash } from 'node:crypto';
import { ConflictError, NotFoundError, parsePulledNotification, type AttachmentFile, type ConnectorClient } from '../../src/index.js';
import { realPng } from '../../../test/integration/helpers/console-uploads';
import { allowAttachments, sdkClient, sdkDeliveryFixture, startConversation, waitForMirror, writeReplyWithFiles, type RawTopic, type TestIntegration } from './helpers';

jest.setTimeout(120_000);

let topic: RawTopic;
let integration: TestIntegration;
let client: ConnectorClient;
sdkDeliveryFixture((stack) => {
  ({ topic, integration, client } = stack);
});

const PNG = realPng(16, 12, [10, 20, 30]);
const PDF = Buffer.from('%PDF-1.7\n1 0 obj << >> endobj\ntrailer << >>\n%%EOF\n');
const sha256 = (b: Buffer | Uint8Array) => createHash('sha256').update(b).digest('hex');

beforeAll(async () => {
  await allowAttachments(integration, { contentTypes: ['image/png', 'application/pdf'], maxBytes: 1024 * 1024, maxCount: 3 });
});

async function replyWithFiles(text: string) {
  const conversation = await startConversation(client, integration);
  const {
    replyId,
    attachments: [png, pdf],
  } = await writeReplyWithFiles(conversation, text, [
    { bytes: PNG, name: 'screen.png', type: 'image/png' },
    { bytes: PDF, name: 'invoice.pdf', type: 'application/pdf' },
  ]);
  if (png === undefined || pdf === undefined) throw new Error('expected two stored attachments');
  const notification = parsePulledNotification(await topic.waitFor(replyId));
  return { conversation, replyId, notification, png, pdf };
}

test('processDelivery hands the provider both files; fetch() downloads them hash-checked; the parts reach the mirror', async () => {
  const { conversation, replyId, notification, png, pdf } = await replyWithFiles('Screenshot and invoice attached.');
  const files: AttachmentFile[] = [];
  const result = await client.processDelivery(notification, async ({ text, attachments, signal }) => {
    expect(text).toBe('Screenshot and invoice attached.');
    expect(attachments.map(({ attachmentId, name, contentType, size, sha256: hash }) => ({ attachmentId, name, contentType, size, sha256: hash }))).toEqual([png, pdf]);
    for (const a of attachments) files.push(await a.fetch({ signal }));
    return {
      providerMessageIds: ['t-1', 'f-1', 'f-2'],
      parts: [
        { part: 'text', status: 'sent', providerMessageIds: ['t-1'] },
        { part: png.attachmentId, status: 'sent', providerMessageIds: ['f-1'] },
        { part: pdf.attachmentId, status: 'sent', providerMessageIds: ['f-2'] },
      ],
    };
  });
  expect(result.kind).toBe('sent');
  expect(files.map((f) => [f.contentType, f.size, f.sha256, f.name])).toEqual([
    ['image/png', PNG.length, sha256(PNG), 'screen.png'],
    ['application/pdf', PDF.length, sha256(PDF), 'invoice.pdf'],
  ]);
  expect(Buffer.from(files[1]!.bytes).equals(PDF)).toBe(true);
  const mirror = await waitForMirror(conversation, replyId, (m) => m.status === 'sent');
  expect(mirror.parts).toEqual([
    { part: 'text', status: 'sent', providerMessageIds: ['t-1'] },
    { part: png.attachmentId, status: 'sent', providerMessageIds: ['f-1'] },
    { part: pdf.attachmentId, status: 'sent', providerMessageIds: ['f-2'] },
  ]);
});

test('deliveries.attachment: a foreign lease is lease_lost, an id not on the delivery 404, a finished delivery delivery_finished', async () => {
  const { notification, png } = await replyWithFiles('');
  const claim = await client.deliveries.claim({ deliveryId: notification.deliveryId });
  if (claim.status !== 'ready') throw new Error(`expected ready, got ${JSON.stringify(claim)}`);
  const deliveryId = notification.deliveryId;
  await expect(client.deliveries.attachment({ deliveryId, leaseId: 'not-the-lease', attachmentId: png.attachmentId })).rejects.toMatchObject({ status: 409, code: 'lease_lost' });
  await expect(client.deliveries.attachment({ deliveryId, leaseId: claim.leaseId, attachmentId: 'att_not_on_this_delivery' })).rejects.toBeInstanceOf(NotFoundError);
  const file = await client.deliveries.attachment({ deliveryId, leaseId: claim.leaseId, attachmentId: png.attachmentId, expectedSha256: png.sha256 });
  expect(Buffer.from(file.bytes).equals(PNG)).toBe(true);
  await client.deliveries.start({ deliveryId, leaseId: claim.leaseId });
  await client.deliveries.complete({ deliveryId, leaseId: claim.leaseId, providerMessageIds: ['x-1'] });
  const finished = await client.deliveries.attachment({ deliveryId, leaseId: claim.leaseId, attachmentId: png.attachmentId }).catch((e: unknown) => e);
  expect(finished).toBeInstanceOf(ConflictError);
  expect(finished).toMatchObject({ code: 'delivery_finished' });
});

// The file-name and download rules are the service's own (functions/src/contract/file-names.ts,
// functions/src/rules/file-headers.ts) on both targets: the test service once handed a name with
// a right-to-left override on unchanged and served downloads without the sandbox CSP.
test('a file name with a bidi override reaches the connector cleaned, and its download carries the sandbox CSP and a safe name', async () => {
  const conversation = await startConversation(client, integration);
  const { replyId } = await writeReplyWithFiles(conversation, 'the invoice', [{ bytes: PDF, name: 'invoice\u202Efdp.exe', type: 'application/pdf' }]);
  const notification = parsePulledNotification(await topic.waitFor(replyId));
  const seen: Headers[] = [];
  const recording = sdkClient(integration.key, {
    fetch: async (input, init) => {
      const response = await fetch(input, init);
      seen.push(response.headers);
      return response;
    },
  });
  const claim = await recording.deliveries.claim({ deliveryId: notification.deliveryId });
  if (claim.status !== 'ready' || 'kind' in claim) throw new Error(`expected a ready reply, got ${JSON.stringify(claim)}`);
  const [file] = claim.message.attachments ?? [];
  expect(file?.name).toBe('invoicefdp.exe');
  await recording.deliveries.attachment({ deliveryId: notification.deliveryId, leaseId: claim.leaseId, attachmentId: file?.attachmentId ?? '' });
  const download = seen.at(-1);
  expect(download?.get('content-security-policy')).toBe("sandbox; default-src 'none'");
  expect(download?.get('content-disposition')).toBe(`attachment; filename="invoicefdp.exe"; filename*=UTF-8''invoicefdp.exe`);
  expect(download?.get('x-content-type-options')).toBe('nosniff');
  expect(download?.get('etag')).toBe(`"${sha256(PDF)}"`);
});
