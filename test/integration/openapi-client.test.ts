/**
 * The API as a connector developer's generated client sees it (README.md "OpenAPI"): a client made
 * with openapi-fetch, typed by what openapi-typescript generates from openapi/openapi.yaml
 * (test/openapi-client/api.generated.d.ts, kept fresh by test/unit/openapi/document.test.ts),
 * drives one reply with a file end to end against the emulators through Hosting: an incoming
 * message and its duplicate, the claim, the file download (binary), start, complete with parts,
 * and an error answer read through the client's typed `error`. Nothing here uses our SDK or
 * our test helpers' HTTP code: if the document and the service disagree, this fails to compile
 * or fails its assertions.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import createClient from 'openapi-fetch';
import type { paths } from '../openapi-client/api.generated';
import { allowAttachments, seedUpload, writeReplyWithAttachments } from './helpers/console-uploads';
import { closePubSub, eventually, setupConversation, waitForMirror, type ConversationSetup } from './helpers/deliveries';
import { apiBaseUrl, closeStack } from './helpers/stack';

const clientFor = (key: string) => createClient<paths>({ baseUrl: apiBaseUrl(), headers: { Authorization: `Bearer ${key}` } });

let setup: ConversationSetup;
beforeAll(async () => {
  setup = await setupConversation();
  await allowAttachments(setup.integration.workspaceId, setup.integration.integrationId, { contentTypes: ['application/pdf'], maxBytes: 1024 * 1024, maxCount: 1 });
});
afterAll(async () => {
  await setup.topic.close();
  await closePubSub();
  await closeStack();
});

test('an incoming message, then its retry, through the generated client', async () => {
  const api = clientFor(setup.integration.key);
  const body = { eventId: randomUUID(), externalConversationId: setup.externalConversationId, sender: { externalId: setup.customerId }, message: { text: 'Where is my order?' } };
  const first = await api.POST('/v1/messages', { body });
  expect(first.response.status).toBe(201);
  expect(first.data).toEqual({ conversationId: setup.conversationId, messageId: expect.any(String), duplicate: false });
  const retry = await api.POST('/v1/messages', { body });
  expect(retry.response.status).toBe(200);
  expect(retry.data).toEqual({ ...first.data, duplicate: true });
});

test('a reply with a PDF: claim, download the file, start, complete with parts', async () => {
  const api = clientFor(setup.integration.key);
  const pdfBytes = Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(3000)]);
  const pdf = await seedUpload(setup.integration.workspaceId, setup.conversationId, 'operator-1', { bytes: pdfBytes, name: 'invoice.pdf', type: 'application/pdf' });
  const messageId = await writeReplyWithAttachments(setup.integration.workspaceId, setup.conversationId, { uid: 'operator-1', idToken: '' }, 'Your invoice', [pdf]);
  const { deliveryId } = await eventually(async () => setup.topic.received.find((n) => n.messageId === messageId), `the notification of reply ${messageId}`, 20_000);

  const claim = await api.POST('/v1/deliveries/claim', { body: { deliveryId, requestId: randomUUID() } });
  // A plain reply's claim: `ready` without a `kind` (an edit or unsend claim has one).
  if (claim.data?.status !== 'ready' || 'kind' in claim.data) throw new Error(`expected a ready claim of a reply, got ${claim.response.status} ${JSON.stringify(claim.data ?? claim.error)}`);
  const { leaseId, message } = claim.data;
  expect(message.attachments).toEqual([pdf]);

  const file = await api.POST('/v1/deliveries/attachment', { body: { deliveryId, leaseId, attachmentId: pdf.attachmentId }, parseAs: 'arrayBuffer' });
  expect(file.response.status).toBe(200);
  expect(file.response.headers.get('content-type')).toBe('application/pdf');
  expect(file.response.headers.get('etag')).toBe(`"${pdf.sha256}"`);
  if (file.data === undefined) throw new Error('no bytes');
  expect(createHash('sha256').update(Buffer.from(file.data)).digest('hex')).toBe(pdf.sha256);

  const started = await api.POST('/v1/deliveries/start', { body: { deliveryId, leaseId } });
  expect(started.data?.status).toBe('sending');
  const parts = [
    { part: 'text', status: 'sent' as const, providerMessageIds: ['p-text'] },
    { part: pdf.attachmentId, status: 'sent' as const, providerMessageIds: ['p-pdf'] },
  ];
  const completed = await api.POST('/v1/deliveries/complete', { body: { deliveryId, leaseId, providerMessageIds: ['p-text', 'p-pdf'], parts } });
  expect(completed.response.status).toBe(200);
  expect(completed.data?.status).toBe('sent');
  expect((await waitForMirror(setup, messageId, (m) => m.status === 'sent')).parts).toEqual(parts);

  // A refusal arrives as the client's typed `error`: the envelope the document describes.
  const again = await api.POST('/v1/deliveries/attachment', { body: { deliveryId, leaseId, attachmentId: pdf.attachmentId }, parseAs: 'arrayBuffer' });
  expect(again.response.status).toBe(409);
  expect(again.error).toEqual({ error: { code: 'delivery_finished', message: expect.any(String) } });
});
