/**
 * Reply attachments in the console, in a real browser against the real local stack (helpers:
 * ./browser-helpers.ts; docs/console.md#attachments-and-media). One workspace with an
 * integration, its topic and a conversation (created through the API), an admin on the Auth
 * emulator; steps in order:
 *
 *   the admin allows PNG and PDF files on the integration (the document holds exactly the capability)
 *   -> a customer (with a display name) sends an image: the list names them, the thread shows the
 *      image inline, fetched through the members-only media endpoint (a blob URL, no store URL)
 *   -> the composer shows the limits, refuses a GIF before uploading, shows the service's refusal of a
 *      file whose bytes are not what it claims, uploads a PNG and a PDF and sends the reply with them
 *   -> the example connector's fake provider downloads both (hash-checked) and sends each part: the
 *      console shows every part `sent`
 *   -> without a member's token the media endpoint answers 401.
 */
import { createHash, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { readFile } from 'node:fs/promises';
import type { Browser, Page } from 'playwright-core';
import { ConnectorClient } from '../../../sdk/src/index.js';
import { adminDb, apiBaseUrl, closeStack } from '../helpers/stack';
import { closePubSub, eventually, readReply, setupConversation, type ConversationSetup } from '../helpers/deliveries';
import { realPng } from '../helpers/console-uploads';
import { consoleUrl, createUser, expectUnderCsp, launchChromium, newPage, scrollTo, shot, signIn, type TestUser } from './browser-helpers';

jest.setTimeout(180_000);

/** The example connector's provider (examples/connector/connector.js is plain JS). */
interface ExampleModule {
  createFakeProvider(options: { write: (line: string) => void }): Parameters<ConnectorClient['processDelivery']>[1];
}

const admin: TestUser = { email: `admin-${randomUUID().slice(0, 8)}@attach.test`, password: `pw-${randomUUID()}`, uid: '' };
const browserLog: string[] = [];
let browser: Browser;
let page: Page;
let setup: ConversationSetup;
let workspaceId = '';

const PNG = realPng(160, 100, [46, 125, 50]);
const PDF = Buffer.from('%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n2 0 obj << /Type /Pages /Kids [] /Count 0 >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n');
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

const replyItem = (text: string, attrs = '') => page.locator(`li.message.outbound${attrs}`, { hasText: text });

describe('reply attachments in the console', () => {
  beforeAll(async () => {
    setup = await setupConversation();
    workspaceId = setup.integration.workspaceId;
    admin.uid = await createUser(admin.email, admin.password);
    const ws = adminDb().collection('workspaces').doc(workspaceId);
    await ws.set({ name: 'Attachments' }, { merge: true });
    await ws.collection('members').doc(admin.uid).set({ role: 'admin' });
    browser = await launchChromium();
    page = await newPage(browser, browserLog);
  });

  afterAll(async () => {
    await browser?.close();
    await setup?.topic.close();
    await closePubSub();
    await closeStack();
  });

  test('an admin allows PNG and PDF files on the integration', async () => {
    await signIn(page, workspaceId, admin);
    await page.locator('#whoami', { hasText: '(admin)' }).waitFor();
    await page.goto(consoleUrl(workspaceId, '#/integrations'));
    const card = page.locator(`article.integration[data-integration="${setup.integration.integrationId}"]`);
    await card.locator('.attachments-capability', { hasText: 'Replies are text only.' }).waitFor();
    await card.getByText('Allow files in replies').click();
    await card.getByLabel('PNG').check();
    await card.getByLabel('PDF').check();
    await card.getByLabel('Max MB per file').fill('5');
    await card.getByLabel('Files per reply').fill('2');
    await card.getByRole('button', { name: 'Allow attachments' }).click();
    await card.locator('.attachments-capability', { hasText: 'PNG, PDF; up to 5 MB each, 2 files per reply (10 MB in all).' }).waitFor();
    // The card shows the console's own write at once (the client SDK's latency compensation): wait for the server's copy.
    const stored = await eventually(async () => {
      const replies = (await adminDb().doc(`workspaces/${workspaceId}/integrations/${setup.integration.integrationId}`).get()).get('replies') as Record<string, unknown>;
      return replies.attachments === undefined ? undefined : replies;
    }, 'the capability stored');
    expect(stored.attachments).toEqual({ contentTypes: ['image/png', 'application/pdf'], maxBytes: 5 * 1024 * 1024, maxCount: 2 });
  });

  test('a customer\'s image is shown inline (through the media endpoint) and the list names the customer', async () => {
    const client = new ConnectorClient({ integrationKey: setup.integration.key, baseUrl: apiBaseUrl(), timeoutMs: 20_000 });
    const sent = await client.messages.send({
      externalConversationId: setup.externalConversationId,
      sender: { externalId: setup.customerId, displayName: 'Dana Example' },
      text: 'Here is a screenshot of the error',
      images: [{ data: realPng(320, 200, [200, 60, 40]), contentType: 'image/png', filename: 'error.png' }],
    });
    await page.goto(consoleUrl(workspaceId, `#/conversations/${setup.conversationId}`));
    await page.locator(`a[data-conversation="${setup.conversationId}"] .title`, { hasText: `Dana Example (${setup.customerId})` }).waitFor();
    const figure = page.locator(`figure.media[data-media="${sent.messageId}/0"][data-loaded="true"]`);
    await figure.waitFor();
    const img = figure.locator('img.thumbnail');
    expect(await img.getAttribute('src')).toMatch(/^blob:/);
    const selector = `figure.media[data-media="${sent.messageId}/0"] img.thumbnail`;
    await expect(page.evaluate<number>(`(async () => { const i = document.querySelector('${selector}'); await i.decode(); return i.naturalWidth; })()`)).resolves.toBe(320);
    await page.locator('#thread-title + p', { hasText: 'Customer Dana Example' }).waitFor();
  });

  test('the operator attaches a PNG and a PDF (a GIF and a lying file are refused with the reason); the example connector delivers both; each part shows sent', async () => {
    const limits = page.locator('#reply-files-limits');
    await expect(limits.textContent()).resolves.toBe('Files: PNG, PDF; up to 5 MB each, 2 files per reply (10 MB in all).');

    // Refused in the browser: the type is not one the integration accepts.
    await page.setInputFiles('#reply-files', { name: 'funny.gif', mimeType: 'image/gif', buffer: Buffer.from('GIF89a') });
    await page.locator('#reply-files-problem', { hasText: 'funny.gif is GIF; this integration accepts PNG, PDF.' }).waitFor();
    // Refused by the service: the bytes are not a PNG, whatever the name and type say.
    await page.setInputFiles('#reply-files', { name: 'fake.png', mimeType: 'image/png', buffer: Buffer.from('this is not an image') });
    const fake = page.locator('li.draft-file[data-file="fake.png"][data-state="error"]');
    await fake.waitFor();
    expect(await fake.locator('.error-code').textContent()).toMatch(/\(unsupported_attachment_type\)$/);
    await expect(page.locator('#send-reply').isDisabled()).resolves.toBe(true); // a failed file blocks sending until removed
    await fake.getByRole('button', { name: 'Remove fake.png' }).click();

    await page.setInputFiles('#reply-files', [
      { name: 'screenshot.png', mimeType: 'image/png', buffer: PNG },
      { name: 'invoice.pdf', mimeType: 'application/pdf', buffer: PDF },
    ]);
    await page.locator('li.draft-file[data-file="screenshot.png"][data-state="uploaded"]').waitFor();
    await page.locator('li.draft-file[data-file="invoice.pdf"][data-state="uploaded"]').waitFor();
    const text = 'Here are the screenshot and the invoice.';
    await page.getByLabel('Reply', { exact: true }).fill(text);
    await page.getByRole('button', { name: 'Send reply' }).click();
    await replyItem(text, '[data-status="queued"]').waitFor();
    const replyId = (await replyItem(text).getAttribute('data-message')) ?? '';
    await expect(page.locator('li.draft-file').count()).resolves.toBe(0);

    // Written under the rules: the uploads' answers, exactly.
    const stored = await readReply(setup, replyId);
    expect(stored?.attachments).toEqual([
      { attachmentId: expect.any(String), name: 'screenshot.png', contentType: 'image/png', size: PNG.length, sha256: sha256(PNG) },
      { attachmentId: expect.any(String), name: 'invoice.pdf', contentType: 'application/pdf', size: PDF.length, sha256: sha256(PDF) },
    ]);
    const [pngRef, pdfRef] = stored?.attachments as Array<{ attachmentId: string }>;

    // The example connector's fake provider: downloads each file (hash-checked) and sends each part.
    // A non-literal specifier: the example is plain ESM JavaScript without type declarations.
    const examplePath = join(__dirname, '..', '..', '..', 'examples', 'connector', 'connector.js');
    const example = (await import(examplePath)) as ExampleModule;
    const printed: string[] = [];
    const client = new ConnectorClient({ integrationKey: setup.integration.key, baseUrl: apiBaseUrl(), timeoutMs: 20_000 });
    const send = example.createFakeProvider({ write: (line) => printed.push(line) });
    const result = await eventually(async () => {
      for (const n of await setup.topic.pull(1, 2_000)) {
        const r = await client.processDelivery(n.deliveryId, send);
        if (r.kind === 'sent') return r;
      }
      return undefined;
    }, 'the reply delivered by the example connector');
    expect(result.providerMessageIds).toHaveLength(3);
    expect(printed.some((l) => l.includes(`file "screenshot.png" image/png, ${PNG.length} bytes, sha256 ${sha256(PNG)}`))).toBe(true);
    expect(printed.some((l) => l.includes(`file "invoice.pdf" application/pdf, ${PDF.length} bytes, sha256 ${sha256(PDF)}`))).toBe(true);

    const item = replyItem(text, '[data-status="sent"]');
    await item.waitFor();
    await item.locator('[data-part="text"] [data-part-status="sent"]').waitFor();
    await item.locator(`figure[data-part="${pngRef?.attachmentId ?? ''}"] [data-part-status="sent"]`).waitFor();
    await item.locator(`figure[data-part="${pdfRef?.attachmentId ?? ''}"] [data-part-status="sent"]`).waitFor();
    // Inline: the PNG as a thumbnail, the PDF as a link, both blob URLs of the members-only endpoint.
    await item.locator(`figure[data-part="${pngRef?.attachmentId ?? ''}"][data-loaded="true"] img.thumbnail`).waitFor();
    const pdfLink = item.locator(`figure[data-part="${pdfRef?.attachmentId ?? ''}"] a.media-link`);
    expect(await pdfLink.getAttribute('href')).toMatch(/^blob:/);
    // The PDF is downloaded under its name, never opened as a page of the console's origin.
    expect({ download: await pdfLink.getAttribute('download'), target: await pdfLink.getAttribute('target'), text: await pdfLink.textContent() }).toEqual({ download: 'invoice.pdf', target: null, text: 'Download invoice.pdf' });
    const threadUrl = page.url();
    const [saved] = await Promise.all([page.waitForEvent('download'), pdfLink.click()]);
    expect(saved.suggestedFilename()).toBe('invoice.pdf');
    expect(sha256(await readFile(await saved.path()))).toBe(sha256(PDF));
    expect({ url: page.url(), pages: page.context().pages().length }).toEqual({ url: threadUrl, pages: 1 });
    const mirror = (await readReply(setup, replyId))?.delivery as { parts?: unknown[] } | undefined;
    expect(mirror?.parts).toEqual([
      { part: 'text', status: 'sent', providerMessageIds: [result.providerMessageIds[0]] },
      { part: pngRef?.attachmentId, status: 'sent', providerMessageIds: [result.providerMessageIds[1]] },
      { part: pdfRef?.attachmentId, status: 'sent', providerMessageIds: [result.providerMessageIds[2]] },
    ]);
    await scrollTo(item);
    await shot(page, 'attachments-thread');
    // Nothing of the store (a bucket URL, a local path) reached the page.
    expect(await page.content()).not.toMatch(/storage\.googleapis|\.local\//);
  });

  test('a file name with a right-to-left override is shown without it while it uploads and once uploaded', async () => {
    await page.setInputFiles('#reply-files', { name: 'invoice\u202Egnp.exe.pdf', mimeType: 'application/pdf', buffer: PDF });
    const draft = page.locator('li.draft-file[data-state="uploaded"]');
    await draft.waitFor();
    await expect(draft.locator('.name').textContent()).resolves.toBe('invoicegnp.exe.pdf');
    await expect(draft.getByRole('button', { name: 'Remove invoicegnp.exe.pdf' }).count()).resolves.toBe(1);
    await draft.getByRole('button', { name: 'Remove invoicegnp.exe.pdf' }).click();
    await expect(page.locator('li.draft-file').count()).resolves.toBe(0);
  });

  test('the media endpoint answers only a member\'s token', async () => {
    const res = await fetch(`${apiBaseUrl()}/console/v1/media?workspaceId=${encodeURIComponent(workspaceId)}`);
    expect(res.status).toBe(401);
    const body = (await res.json()) as { error?: { code?: string } };
    expect(body.error?.code).toBe('invalid_token');
    expect(browserLog.filter((l) => l.startsWith('pageerror'))).toEqual([]);
    expectUnderCsp(browserLog);
  });
});
