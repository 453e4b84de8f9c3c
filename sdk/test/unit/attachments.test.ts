/**
 * Attachments in the SDK: `deliveries.attachment()` (bytes, digests, errors), `processDelivery`'s
 * lazy hash-checked `fetch()` per file, and per-part results passed to complete / fail
 * (docs/decisions.md#attachments-in-the-sdk). A real HTTP server plays the service.
 */
import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import {
  AttachmentIntegrityError,
  ConflictError,
  ConnectorClient,
  NotFoundError,
  ProviderUnknownOutcomeError,
  UnexpectedResponseError,
  type ProviderSendInput,
} from '../../src/index.js';
import { dispositionName, etagSha256, reprDigestSha256 } from '../../src/internal/deliveries.js';
import { usableParts } from '../../src/internal/process.js';
import { errorReply, fakeSleep, KEY, type RecordedRequest, reply, startServer, type TestServer } from './helpers/server.js';

const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');
const PDF = Buffer.from('%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n');
const hex = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const b64 = (b: Buffer) => createHash('sha256').update(b).digest('base64');

const FILES = {
  a_png: { attachmentId: 'a_png', name: 'screen.png', contentType: 'image/png', size: PNG.length, sha256: hex(PNG), bytes: PNG },
  a_pdf: { attachmentId: 'a_pdf', name: 'invoice.pdf', contentType: 'application/pdf', size: PDF.length, sha256: hex(PDF), bytes: PDF },
};
const metaOf = ({ bytes: _bytes, ...meta }: (typeof FILES)['a_png']) => meta;
const READY = {
  status: 'ready',
  leaseId: 'lease-1',
  leaseExpiresAt: 1_900_000_120_000,
  message: { text: 'See attached', recipient: { externalConversationId: 'chat-1', externalCustomerId: 'cust-1' }, attachments: [metaOf(FILES.a_png), metaOf(FILES.a_pdf)] },
};

function sendFile(res: ServerResponse, bytes: Buffer, headers: Record<string, string> = {}): void {
  res.writeHead(200, {
    'content-type': 'application/pdf',
    'content-length': String(bytes.length),
    'content-disposition': 'attachment; filename="invoice.pdf"; filename*=UTF-8\'\'invoice%20%C3%A9.pdf',
    etag: `"${hex(bytes)}"`,
    'repr-digest': `sha-256=:${b64(bytes)}:`,
    ...headers,
  });
  res.end(bytes);
}

let server: TestServer;
let client: ConnectorClient;
beforeEach(async () => {
  server = await startServer();
  client = new ConnectorClient({ integrationKey: KEY, baseUrl: server.url, sleep: fakeSleep().sleep });
});
afterEach(async () => {
  await server.close();
});

describe('deliveries.attachment', () => {
  const input = { deliveryId: 'd_1', leaseId: 'lease-1', attachmentId: 'a_pdf' };

  test('answers the bytes with their metadata, after checking ETag, Repr-Digest and the expected hash', async () => {
    server.setHandler((_req, res) => sendFile(res, PDF));
    const file = await client.deliveries.attachment({ ...input, expectedSha256: FILES.a_pdf.sha256.toUpperCase() });
    expect(Buffer.from(file.bytes).equals(PDF)).toBe(true);
    expect(file).toMatchObject({ attachmentId: 'a_pdf', contentType: 'application/pdf', size: PDF.length, sha256: FILES.a_pdf.sha256, name: 'invoice é.pdf' });
    const req = server.requests[0]!;
    expect(req.path).toBe('/v1/deliveries/attachment');
    expect(req.json).toEqual(input); // exactly the three fields
    expect(req.headers.accept).toBe('*/*');
  });

  test('bytes damaged in transit (differ from the answer\'s digest): AttachmentIntegrityError, inTransit', async () => {
    server.setHandler((_req, res) => sendFile(res, Buffer.concat([PDF, Buffer.from('x')]), { etag: `"${hex(PDF)}"`, 'repr-digest': `sha-256=:${b64(PDF)}:` }));
    const err = await client.deliveries.attachment(input).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AttachmentIntegrityError);
    expect(err).toMatchObject({ inTransit: true, code: 'attachment_integrity', expectedSha256: hex(PDF) });
  });

  test('a file that differs from the claim (the answer consistent with itself): not in transit', async () => {
    server.setHandler((_req, res) => sendFile(res, PNG));
    const err = await client.deliveries.attachment({ ...input, expectedSha256: FILES.a_pdf.sha256 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AttachmentIntegrityError);
    expect(err).toMatchObject({ inTransit: false, actualSha256: hex(PNG) });
  });

  test('only Repr-Digest (an ETag rewritten by a proxy is ignored when not a SHA-256)', async () => {
    server.setHandler((_req, res) => sendFile(res, PDF, { etag: 'W/"abc"' }));
    await expect(client.deliveries.attachment(input)).resolves.toMatchObject({ sha256: hex(PDF) });
  });

  test('no digest at all and no expected hash: UnexpectedResponseError missing_digest', async () => {
    server.setHandler((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/pdf' });
      res.end(PDF);
    });
    await expect(client.deliveries.attachment(input)).rejects.toMatchObject({ name: 'UnexpectedResponseError', code: 'missing_digest' });
    await expect(client.deliveries.attachment(input)).rejects.toBeInstanceOf(UnexpectedResponseError);
  });

  test('error envelopes map to the usual errors; 503 is retried', async () => {
    server.setHandler((_req, res, i) => (i === 0 ? errorReply(res, 503, 'temporarily_unavailable', 'x', { 'retry-after': '1' }) : errorReply(res, 409, 'lease_lost', 'the lease expired')));
    await expect(client.deliveries.attachment(input)).rejects.toMatchObject({ name: 'ConflictError', code: 'lease_lost', attempts: 2 });
    server.setHandler((_req, res) => errorReply(res, 404, 'not_found', 'no such attachment on this delivery'));
    await expect(client.deliveries.attachment(input)).rejects.toBeInstanceOf(NotFoundError);
  });

  test('header readers', () => {
    expect(etagSha256(`"${'A'.repeat(64)}"`)).toBe('a'.repeat(64));
    expect(etagSha256('"short"')).toBeUndefined();
    expect(reprDigestSha256(`sha-512=:AAAA:, sha-256=:${b64(PDF)}:`)).toBe(hex(PDF));
    expect(reprDigestSha256('sha-256=:AAAA:')).toBeUndefined();
    expect(dispositionName('attachment; filename="a \\"b\\".txt"')).toBe('a "b".txt');
    expect(dispositionName('inline')).toBeUndefined();
  });
});

type Route = (req: RecordedRequest, res: ServerResponse, n: number) => void;

/** A fake delivery service with attachments: claim -> READY, start -> sending, attachment -> the file. */
function serve(routes: Partial<Record<string, Route>> = {}): void {
  const counts: Record<string, number> = {};
  server.setHandler((req, res) => {
    const op = req.path.replace('/v1/deliveries/', '');
    counts[op] = (counts[op] ?? 0) + 1;
    const custom = routes[op];
    if (custom) return custom(req, res, counts[op] - 1);
    if (op === 'claim') return reply(res, 200, READY);
    if (op === 'start') return reply(res, 200, { status: 'sending' });
    if (op === 'attachment') {
      const file = FILES[(req.json as { attachmentId: string }).attachmentId as keyof typeof FILES];
      return file ? sendFile(res, file.bytes, { 'content-type': file.contentType }) : errorReply(res, 404, 'not_found');
    }
    if (op === 'complete') return reply(res, 200, { status: 'sent' });
    if (op === 'fail') {
      const outcome = (req.json as { outcome: string }).outcome;
      return reply(res, 200, { status: outcome === 'retry' ? 'queued' : outcome });
    }
    return errorReply(res, 404, 'not_found');
  });
}
const body = (op: string) => server.requests.find((r) => r.path === `/v1/deliveries/${op}`)?.json;
const calls = () => server.requests.map((r) => r.path.replace('/v1/deliveries/', ''));

describe('processDelivery with attachments', () => {
  test('hands the provider each file with a lazy fetch (downloaded only when asked, once), and passes parts to complete', async () => {
    serve();
    let seen: ProviderSendInput | undefined;
    const result = await client.processDelivery('d_1', async (input) => {
      seen = input;
      expect(calls()).toEqual(['claim', 'start']); // nothing downloaded before it is asked for
      const png = await input.attachments[0]!.fetch();
      await input.attachments[0]!.fetch(); // shared
      const pdf = await input.attachments[1]!.fetch();
      expect(Buffer.from(png.bytes).equals(PNG)).toBe(true);
      expect(pdf).toMatchObject({ contentType: 'application/pdf', size: PDF.length });
      return {
        providerMessageIds: ['p-1', 'p-2', 'p-3'],
        parts: [
          { part: 'text', status: 'sent', providerMessageIds: ['p-1'] },
          { part: 'a_png', status: 'sent', providerMessageIds: ['p-2'] },
          { part: 'a_pdf', status: 'sent', providerMessageIds: ['p-3'] },
          { part: 'a_other', status: 'sent' }, // not a part of this reply: dropped
        ],
      };
    });
    expect(result.kind).toBe('sent');
    expect(seen?.attachments.map(({ attachmentId, name, contentType, size, sha256 }) => ({ attachmentId, name, contentType, size, sha256 }))).toEqual(READY.message.attachments);
    expect(calls()).toEqual(['claim', 'start', 'attachment', 'attachment', 'complete']);
    expect(server.requests.filter((r) => r.path.endsWith('/attachment')).map((r) => r.json)).toEqual([
      { deliveryId: 'd_1', leaseId: 'lease-1', attachmentId: 'a_png' },
      { deliveryId: 'd_1', leaseId: 'lease-1', attachmentId: 'a_pdf' },
    ]);
    expect(body('complete')).toEqual({
      deliveryId: 'd_1',
      leaseId: 'lease-1',
      providerMessageIds: ['p-1', 'p-2', 'p-3'],
      parts: [
        { part: 'text', status: 'sent', providerMessageIds: ['p-1'] },
        { part: 'a_png', status: 'sent', providerMessageIds: ['p-2'] },
        { part: 'a_pdf', status: 'sent', providerMessageIds: ['p-3'] },
      ],
    });
  });

  test('a reply without files: attachments is empty and complete carries no parts (the v1 request)', async () => {
    serve({ claim: (_q, res) => reply(res, 200, { ...READY, message: { text: 'Hi', recipient: READY.message.recipient } }) });
    let seen: ProviderSendInput | undefined;
    await client.processDelivery('d_1', (input) => {
      seen = input;
      return ['p-1'];
    });
    expect(seen?.attachments).toEqual([]);
    expect(body('complete')).toEqual({ deliveryId: 'd_1', leaseId: 'lease-1', providerMessageIds: ['p-1'] });
  });

  test('a file damaged in transit, thrown out of send: fail retry attachment_integrity', async () => {
    serve({ attachment: (_q, res) => sendFile(res, Buffer.from('garbage'), { etag: `"${hex(PNG)}"` }) });
    const result = await client.processDelivery('d_1', async (input) => {
      await input.attachments[0]!.fetch();
      return ['never'];
    });
    expect(result).toMatchObject({ kind: 'retry_scheduled', outcome: 'retry', code: 'attachment_integrity' });
    expect((result as { error: unknown }).error).toBeInstanceOf(AttachmentIntegrityError);
  });

  test('a file that differs from the claim: fail failed attachment_integrity (no retry can fix it)', async () => {
    serve({ attachment: (_q, res) => sendFile(res, PDF) }); // the PNG's id answers the PDF, consistently
    const result = await client.processDelivery('d_1', async (input) => {
      await input.attachments[0]!.fetch();
      return ['never'];
    });
    expect(result).toMatchObject({ kind: 'failed', outcome: 'failed', code: 'attachment_integrity' });
  });

  test('an attachment the delivery does not have (404): failed attachment_not_found; unavailable (503 after retries): retry attachment_unavailable', async () => {
    serve({ attachment: (_q, res) => errorReply(res, 404, 'not_found') });
    await expect(client.processDelivery('d_1', async (i) => [String((await i.attachments[1]!.fetch()).size)])).resolves.toMatchObject({ kind: 'failed', code: 'attachment_not_found' });
    serve({ attachment: (_q, res) => errorReply(res, 503, 'temporarily_unavailable', 'busy', { 'retry-after': '1' }) });
    const result = await client.processDelivery('d_1', async (i) => [String((await i.attachments[1]!.fetch()).size)]);
    expect(result).toMatchObject({ kind: 'retry_scheduled', code: 'attachment_unavailable' });
    expect((result as { error: { cause: unknown } }).error.cause).toMatchObject({ status: 503 });
  });

  test('lease lost while fetching: the fail report is refused too and surfaces as DeliveryReportError', async () => {
    serve({ attachment: (_q, res) => errorReply(res, 409, 'lease_lost'), fail: (_q, res) => errorReply(res, 409, 'lease_lost') });
    const err = await client.processDelivery('d_1', async (i) => [String((await i.attachments[0]!.fetch()).size)]).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'DeliveryReportError', step: 'fail' });
    expect((err as { cause: unknown }).cause).toBeInstanceOf(ConflictError);
  });

  test('a partial send: parts of the provider error go with fail', async () => {
    serve();
    const result = await client.processDelivery('d_1', () => {
      throw new ProviderUnknownOutcomeError('the PDF timed out', {
        code: 'upload_timeout',
        providerMessageIds: ['p-1'],
        parts: [
          { part: 'text', status: 'sent', providerMessageIds: ['p-1'] },
          { part: 'a_pdf', status: 'failed', code: 'Upload-Timeout' },
        ],
      });
    });
    expect(result).toMatchObject({ kind: 'unknown', code: 'upload_timeout' });
    expect(body('fail')).toEqual({
      deliveryId: 'd_1',
      leaseId: 'lease-1',
      outcome: 'unknown',
      code: 'upload_timeout',
      providerMessageIds: ['p-1'],
      parts: [
        { part: 'text', status: 'sent', providerMessageIds: ['p-1'] },
        { part: 'a_pdf', status: 'failed', code: 'upload_timeout' },
      ],
    });
  });
});

describe('usableParts', () => {
  test('keeps parts of this reply once, with valid ids and codes; a failed part always has a code', () => {
    expect(usableParts('x', [])).toBeUndefined();
    expect(usableParts([{ part: 'x', status: 'sent' }], ['a'])).toBeUndefined();
    expect(
      usableParts(
        [
          { part: 'a', status: 'failed' },
          { part: 'a', status: 'sent' },
          { part: 'text', status: 'sending' },
          { part: 'text', status: 'sent', providerMessageIds: ['', 'ok'] },
        ],
        ['a'],
      ),
    ).toEqual([
      { part: 'a', status: 'failed', code: 'part_failed' },
      { part: 'text', status: 'sent', providerMessageIds: ['ok'] },
    ]);
  });
});
