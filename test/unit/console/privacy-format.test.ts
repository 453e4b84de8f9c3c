/** The console's privacy helpers (console/src/privacy-format.ts): retention input, the erasure's preview and address, the connector's confirmation, the export's download. */
import {
  connectorConfirmation,
  erasureHash,
  erasurePreviewText,
  erasureStatusLabel,
  matchesNothing,
  parseErasureRoute,
  EXPORT_DOWNLOAD_MS,
  exportDownload,
  exportDownloadUrl,
  parseRetentionDays,
  retentionLabel,
  type ErasurePreview,
} from '../../../console/src/privacy-format';

test('retention days: whole numbers 1..3650 as the rules accept; anything else says why', () => {
  expect(parseRetentionDays('30')).toBe(30);
  expect(parseRetentionDays(' 1 ')).toBe(1);
  expect(parseRetentionDays('3650')).toBe(3650);
  for (const bad of ['0', '3651', '1.5', '-3', '', 'abc', '1e3']) expect(typeof parseRetentionDays(bad)).toBe('string');
});

test('retention in words: absent is kept forever', () => {
  expect(retentionLabel(undefined)).toBe('Kept forever (no retention period).');
  expect(retentionLabel(1)).toBe('Deleted after 1 day.');
  expect(retentionLabel(90)).toBe('Deleted after 90 days.');
});

test('the erasure status and the connector: not told while erasing, waiting since done, confirmed once acknowledged', () => {
  expect(erasureStatusLabel(undefined)).toBe('requested');
  expect(erasureStatusLabel('running')).toBe('erasing…');
  expect(erasureStatusLabel('done')).toBe('done');
  const running = { status: 'running' as const, startedAt: 1000, finishedAt: undefined, acknowledgedAt: undefined };
  expect(connectorConfirmation(running, 5000)).toEqual({ kind: 'not_told_yet' });
  const done = { ...running, status: 'done' as const, finishedAt: 2000 };
  expect(connectorConfirmation(done, 2000 + 3 * 3600_000 + 5 * 60_000)).toEqual({ kind: 'waiting', since: 2000, age: '3 h 5 min' });
  expect(connectorConfirmation({ ...done, acknowledgedAt: 9000 }, 10_000)).toEqual({ kind: 'confirmed', at: 9000 });
});

test('an export is downloadable once done, until its fileExpiresAt (else 7 days after it was written); a failure says why', () => {
  const done = { status: 'done', finishedAt: 1_000, expiresAt: undefined, errorCode: undefined };
  expect(exportDownload({ ...done, status: 'running' }, 2_000)).toEqual({ kind: 'preparing' });
  expect(exportDownload({ ...done, status: undefined, finishedAt: undefined }, 2_000)).toEqual({ kind: 'preparing' });
  expect(exportDownload(done, 2_000)).toEqual({ kind: 'ready', until: 1_000 + EXPORT_DOWNLOAD_MS });
  expect(exportDownload(done, 1_000 + EXPORT_DOWNLOAD_MS)).toEqual({ kind: 'expired' });
  expect(exportDownload({ ...done, expiresAt: 5_000 }, 4_999)).toEqual({ kind: 'ready', until: 5_000 });
  expect(exportDownload({ ...done, expiresAt: 5_000 }, 5_000)).toEqual({ kind: 'expired' });
  expect(exportDownload({ ...done, status: 'failed', errorCode: 'too_large' }, 2_000)).toEqual({ kind: 'failed', code: 'too_large' });
});

test('the download address names the workspace and the export, encoded', () => {
  expect(exportDownloadUrl('http://127.0.0.1:5001/demo-p/europe-central2/downloadExport', 'ws 1', 'ex/2')).toBe(
    'http://127.0.0.1:5001/demo-p/europe-central2/downloadExport?workspaceId=ws+1&exportId=ex%2F2',
  );
});

const nothing: ErasurePreview = { customerExists: false, displayName: undefined, soleConversations: 0, sharedConversations: 0, messages: 0, addressStarts: 0, more: false };

test('an id that matches nothing (no customer record, no conversation, no message) is said so, and no erasure is offered', () => {
  expect(matchesNothing(nothing)).toBe(true);
  expect(erasurePreviewText(nothing, 'grace-2', 'Example chat')).toEqual({ kind: 'nothing', text: 'No customer grace-2 on Example chat: nothing would be erased. Check the id.' });
  // Anything found is something to erase: the record alone, or messages without a record (it expired under retention).
  expect(matchesNothing({ ...nothing, customerExists: true })).toBe(false);
  expect(matchesNothing({ ...nothing, messages: 1 })).toBe(false);
  expect(matchesNothing({ ...nothing, sharedConversations: 1 })).toBe(false);
  expect(matchesNothing({ ...nothing, soleConversations: 1 })).toBe(false);
  // A start to the id as an address (one that never reached anybody) is something to erase too.
  expect(matchesNothing({ ...nothing, addressStarts: 1 })).toBe(false);
});

test('the preview of an address the desk started conversations with: the start requests, with the conversations that never completed', () => {
  // A start queued or failed: its conversation (the start message in it) and the request.
  expect(erasurePreviewText({ ...nothing, soleConversations: 1, messages: 1, addressStarts: 1 }, 'dee@example.com', 'Example chat')).toEqual({
    kind: 'erase',
    text: 'This deletes 1 conversation and 1 message of dee@example.com on Example chat, and 1 request to start a conversation with that address.',
  });
  // Refused starts only (they never made a conversation).
  expect(erasurePreviewText({ ...nothing, addressStarts: 2 }, 'dee@example.com', 'Example chat').text).toBe('This deletes 2 requests to start a conversation with dee@example.com on Example chat.');
  // A customer with that id and nothing else of theirs stored, plus a refused start to it.
  expect(erasurePreviewText({ ...nothing, customerExists: true, addressStarts: 1 }, 'dee@example.com', 'Example chat').text).toBe(
    'This deletes only the customer record of dee@example.com on Example chat and 1 request to start a conversation with that address: no conversation or message of theirs is stored.',
  );
  expect(erasurePreviewText({ ...nothing, addressStarts: 2, more: true }, 'dee@example.com', 'Example chat').text).toBe('This deletes at least 2 requests to start a conversation with dee@example.com on Example chat.');
});

test('the preview in words: the sole conversations and the messages deleted, by name, and the shared ones that stay', () => {
  const grace: ErasurePreview = { customerExists: true, displayName: 'Grace Hopper', soleConversations: 2, sharedConversations: 1, messages: 14, addressStarts: 0, more: false };
  expect(erasurePreviewText(grace, 'grace-1', 'Example chat')).toEqual({
    kind: 'erase',
    text: 'This deletes 2 conversations and 14 messages of Grace Hopper (grace-1) on Example chat; 1 shared conversation keeps the other customers’ messages.',
  });
  // Singulars, no name, no shared conversation.
  expect(erasurePreviewText({ ...grace, displayName: undefined, soleConversations: 1, sharedConversations: 0, messages: 1 }, 'grace-1', 'Example chat').text).toBe(
    'This deletes 1 conversation and 1 message of grace-1 on Example chat.',
  );
  // Only shared conversations: no conversation is deleted, only the customer's messages.
  expect(erasurePreviewText({ ...grace, soleConversations: 0, sharedConversations: 2, messages: 3 }, 'grace-1', 'Example chat').text).toBe(
    'This deletes 3 messages of Grace Hopper (grace-1) on Example chat; 2 shared conversations keep the other customers’ messages.',
  );
  // The record alone.
  expect(erasurePreviewText({ ...nothing, customerExists: true, displayName: 'Grace Hopper' }, 'grace-1', 'Example chat').text).toBe(
    'This deletes only the customer record of Grace Hopper (grace-1) on Example chat: no conversation or message of theirs is stored.',
  );
  // Messages found without a record (it expired under retention): still offered.
  expect(erasurePreviewText({ ...nothing, sharedConversations: 1, messages: 2 }, 'grace-1', 'Example chat')).toEqual({
    kind: 'erase',
    text: 'This deletes 2 messages of grace-1 on Example chat; 1 shared conversation keeps the other customers’ messages.',
  });
  // More conversations than the preview counts: lower bounds.
  expect(erasurePreviewText({ ...grace, more: true }, 'grace-1', 'Example chat').text).toBe(
    'This deletes at least 2 conversations and 14 messages of Grace Hopper (grace-1) on Example chat; at least 1 shared conversation keeps the other customers’ messages.',
  );
});

test('the erasure address encodes both ids, and reads back as main.ts splits and decodes it', () => {
  const cases: Array<[string, string]> = [
    ['int-1', 'grace-1'],
    ['int-1', 'a/b?c#d e%f&g=h'],
    ['int 2/x', 'grace@example.test'],
  ];
  for (const [integrationId, externalCustomerId] of cases) {
    const hash = erasureHash(integrationId, externalCustomerId);
    expect(hash.startsWith('#/privacy/erase/')).toBe(true);
    expect(hash.slice(1)).not.toMatch(/[?#\s]/);
    // main.ts: the hash after "#/", split at "/", empty parts dropped, each decoded; the view gets the parts after "privacy".
    const parts = hash.replace(/^#\/?/, '').split('/').filter((p) => p !== '').map(decodeURIComponent);
    expect(parts[0]).toBe('privacy');
    expect(parseErasureRoute(parts.slice(1))).toEqual({ integrationId, externalCustomerId });
  }
  for (const parts of [[], ['erase'], ['erase', 'int-1'], ['erase', 'int-1', ' '], ['export', 'int-1', 'grace-1'], ['erase', 'int-1', 'grace-1', 'more']]) {
    expect(parseErasureRoute(parts)).toBeUndefined();
  }
});
