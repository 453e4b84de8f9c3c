/**
 * Edits and unsends (docs/contract.md#edits-and-unsends), the pure parts: the capability as the
 * service reads it, the service's re-check of a request (`lifecycleVerdict`), the claim's `target`,
 * the claim shapes of the three `ready` answers (a plain reply's exactly v1), the delivery a request
 * appends, its deterministic id, and the reply's history entries kept in step with the delivery.
 */
import { Timestamp } from 'firebase-admin/firestore';
import { LIFECYCLE_LIMITS, REPLY_MAX_CODE_POINTS, parseLifecycleCapability } from '../../../functions/src/contract';
import { parseReplies } from '../../../functions/src/integrations/model';
import { lifecycleDeliveryIdFor, conversationOfDeliveryId } from '../../../functions/src/platform/ids';
import { lifecycleRequestOf, targetOf } from '../../../functions/src/deliveries/lifecycle';
import { lifecycleVerdict, type LifecycleFacts } from '../../../functions/src/rules/lifecycle';
import {
  LIFECYCLE_HISTORY_LIMIT,
  bounded,
  hasRequest,
  latestTakenRequest,
  queuedEntry,
  refusedEntry,
  unsendTaken,
  withDeliveryEntry,
} from '../../../functions/src/deliveries/lifecycle-history';
import { newDelivery, type DeliveryRecord, type Recipient } from '../../../functions/src/rules/record';
import { storedMirrorOf } from '../../../functions/src/deliveries/reply';
import { decideAppend, decideClaim, decideComplete } from '../../../functions/src/rules/state-machine';

const T0 = 1_700_000_000_000;
const RECIPIENT: Recipient = { externalConversationId: 'chat-1', externalCustomerId: 'cust-1' };
const CONV = 'c_AbCdEfGhIjKlMnOpQrStUvWxYz012345';

function record(overrides: Partial<DeliveryRecord> = {}): DeliveryRecord {
  return { ...newDelivery({ deliveryId: 'd_e', workspaceId: 'ws', integrationId: 'int', conversationId: CONV, messageId: 'r-1', seq: 3, text: 'Fixed text', now: T0 }), head: true, ...overrides };
}

const claimInput = { now: T0 + 1000, requestId: 'req-1', newLeaseId: 'l_1', predecessorUnfinished: false, recipient: RECIPIENT };

describe('the capability replies.lifecycle', () => {
  test('each kind with a whole-second window within the limits; the rest is no capability', () => {
    expect(parseLifecycleCapability({ edit: { windowSeconds: 900 }, unsend: { windowSeconds: 172_800 } })).toEqual({ edit: { windowSeconds: 900 }, unsend: { windowSeconds: 172_800 } });
    expect(parseLifecycleCapability({ unsend: { windowSeconds: LIFECYCLE_LIMITS.windowSecondsMin } })).toEqual({ edit: null, unsend: { windowSeconds: 60 } });
    expect(parseLifecycleCapability({ edit: { windowSeconds: LIFECYCLE_LIMITS.windowSecondsMax } })).toEqual({ edit: { windowSeconds: 604_800 }, unsend: null });
    for (const broken of [
      undefined,
      null,
      true,
      [],
      { edit: { windowSeconds: 59 } },
      { edit: { windowSeconds: 604_801 } },
      { edit: { windowSeconds: 900.5 } },
      { edit: { windowSeconds: '900' } },
      { edit: { windowSeconds: 900, more: 1 } },
      { edit: {} },
    ]) {
      expect(parseLifecycleCapability(broken)).toEqual({ edit: null, unsend: null });
    }
    // An unknown kind: the whole value is not the contract's, nothing is taken.
    expect(parseLifecycleCapability({ edit: { windowSeconds: 900 }, react: { windowSeconds: 900 } })).toEqual({ edit: null, unsend: null });
    // Each kind on its own: a broken unsend leaves a valid edit.
    expect(parseLifecycleCapability({ edit: { windowSeconds: 900 }, unsend: { windowSeconds: 1 } })).toEqual({ edit: { windowSeconds: 900 }, unsend: null });
  });

  test('the integration model reads it with the replies (absent: none)', () => {
    expect(parseReplies({ enabled: true, topic: 't' }).lifecycle).toEqual({ edit: null, unsend: null });
    expect(parseReplies({ enabled: true, topic: 't', lifecycle: { edit: { windowSeconds: 900 } } }).lifecycle).toEqual({ edit: { windowSeconds: 900 }, unsend: null });
  });
});

describe('lifecycleVerdict (the service re-checks a request)', () => {
  const sentAt = T0;
  const facts = (overrides: Partial<LifecycleFacts> = {}): LifecycleFacts => ({
    kind: 'edit',
    window: { windowSeconds: 900 },
    replyStatus: 'sent',
    sentAt,
    replyText: 'We are on it!',
    unsent: false,
    unsendTaken: false,
    latestTaken: null,
    ...overrides,
  });

  test('an edit in the window with a reply text is taken; the window is measured to the request time, inclusive', () => {
    expect(lifecycleVerdict(facts(), { requestedAt: sentAt + 1000, text: 'Fixed' })).toEqual({ accepted: true, text: 'Fixed' });
    expect(lifecycleVerdict(facts(), { requestedAt: sentAt + 900_000, text: 'Fixed' })).toEqual({ accepted: true, text: 'Fixed' });
    expect(lifecycleVerdict(facts(), { requestedAt: sentAt + 900_001, text: 'Fixed' })).toEqual({ accepted: false, code: 'edit_window_passed' });
    expect(lifecycleVerdict(facts({ kind: 'unsend', window: { windowSeconds: 3600 } }), { requestedAt: sentAt + 3_600_000 })).toEqual({ accepted: true, text: '' });
    expect(lifecycleVerdict(facts({ kind: 'unsend', window: { windowSeconds: 3600 } }), { requestedAt: sentAt + 3_600_001 })).toEqual({ accepted: false, code: 'edit_window_passed' });
  });

  test.each([
    ['no capability (or replies off)', { window: null }, 'lifecycle_disabled'],
    ['a reply still queued', { replyStatus: 'queued' }, 'reply_not_sent'],
    ['a reply that failed', { replyStatus: 'failed' }, 'reply_not_sent'],
    ['a reply never sequenced', { replyStatus: null }, 'reply_not_sent'],
    ['an unsent reply', { unsent: true }, 'reply_unsent'],
    ['a reply whose unsend is on its way', { unsendTaken: true }, 'reply_unsent'],
    ['no known send time', { sentAt: null }, 'edit_window_passed'],
    ['a reply with files and no text', { replyText: '' }, 'invalid_edit'],
    ['a later edit already taken', { latestTaken: sentAt + 2000 }, 'superseded'],
  ] as const)('refused: %s -> %s', (_what, overrides, code) => {
    expect(lifecycleVerdict(facts(overrides), { requestedAt: sentAt + 1000, text: 'Fixed' })).toEqual({ accepted: false, code });
  });

  test("an edit's text is a reply's text: 1 to REPLY_MAX_CODE_POINTS code points", () => {
    const at = sentAt + 1000;
    expect(lifecycleVerdict(facts(), { requestedAt: at, text: '\u{1F600}'.repeat(REPLY_MAX_CODE_POINTS) })).toMatchObject({ accepted: true });
    expect(lifecycleVerdict(facts(), { requestedAt: at, text: 'x'.repeat(REPLY_MAX_CODE_POINTS + 1) })).toEqual({ accepted: false, code: 'invalid_edit' });
    expect(lifecycleVerdict(facts(), { requestedAt: at, text: '' })).toEqual({ accepted: false, code: 'invalid_edit' });
    expect(lifecycleVerdict(facts(), { requestedAt: at, text: 42 })).toEqual({ accepted: false, code: 'invalid_edit' });
    expect(lifecycleVerdict(facts(), { requestedAt: at })).toEqual({ accepted: false, code: 'invalid_edit' });
  });

  test('an earlier request of the same time as the latest taken is not superseded (only strictly older ones)', () => {
    expect(lifecycleVerdict(facts({ latestTaken: sentAt + 1000 }), { requestedAt: sentAt + 1000, text: 'Fixed' })).toMatchObject({ accepted: true });
  });
});

describe('requests as written on the reply', () => {
  test('need the server time and a uid', () => {
    const at = Timestamp.fromMillis(T0);
    expect(lifecycleRequestOf({ text: 'Fixed', requestedAt: at, uid: 'oscar' })).toEqual({ text: 'Fixed', requestedAt: at, uid: 'oscar' });
    expect(lifecycleRequestOf({ requestedAt: at, uid: 'oscar' })).toEqual({ requestedAt: at, uid: 'oscar' });
    expect(lifecycleRequestOf({ requestedAt: T0, uid: 'oscar' })).toBeNull();
    expect(lifecycleRequestOf({ requestedAt: at })).toBeNull();
    expect(lifecycleRequestOf(undefined)).toBeNull();
  });

  test('one delivery id per request, naming its conversation', () => {
    const id = lifecycleDeliveryIdFor(CONV, 'r-1', 'edit', T0, 'oscar');
    expect(id).toBe(lifecycleDeliveryIdFor(CONV, 'r-1', 'edit', T0, 'oscar'));
    expect(conversationOfDeliveryId(id)).toBe(CONV);
    const others = [
      lifecycleDeliveryIdFor(CONV, 'r-1', 'unsend', T0, 'oscar'),
      lifecycleDeliveryIdFor(CONV, 'r-1', 'edit', T0 + 1, 'oscar'),
      lifecycleDeliveryIdFor(CONV, 'r-1', 'edit', T0, 'alice'),
      lifecycleDeliveryIdFor(CONV, 'r-2', 'edit', T0, 'oscar'),
    ];
    expect(new Set([id, ...others]).size).toBe(5);
  });
});

describe('the target: the reply sent delivery and the ids its connector reported', () => {
  test('from the record, with the parts it sent', () => {
    const sent = { providerMessageIds: ['p-text', 'p-pdf'], parts: [{ part: 'text', status: 'sent' as const, providerMessageIds: ['p-text'] }, { part: 'a_1', status: 'sent' as const, providerMessageIds: ['p-pdf'] }, { part: 'a_2', status: 'failed' as const, code: 'too_big' }] };
    expect(targetOf('d_1', sent, storedMirrorOf({}))).toEqual({
      deliveryId: 'd_1',
      providerMessageIds: ['p-text', 'p-pdf'],
      parts: [
        { part: 'text', providerMessageIds: ['p-text'] },
        { part: 'a_1', providerMessageIds: ['p-pdf'] },
      ],
    });
    expect(targetOf('d_1', { providerMessageIds: ['p-1'] }, storedMirrorOf({}))).toEqual({ deliveryId: 'd_1', providerMessageIds: ['p-1'] });
  });

  test('from the mirror when the record is gone', () => {
    const mirror = storedMirrorOf({ deliveryId: 'd_1', status: 'sent', providerMessageIds: ['p-1', 7], parts: [{ part: 'text', status: 'sent', providerMessageIds: ['p-1'] }] });
    expect(targetOf('d_1', null, mirror)).toEqual({ deliveryId: 'd_1', providerMessageIds: ['p-1'], parts: [{ part: 'text', providerMessageIds: ['p-1'] }] });
  });
});

describe('claims', () => {
  const target = { deliveryId: 'd_reply', providerMessageIds: ['p-1', 'p-2'], parts: [{ part: 'text', providerMessageIds: ['p-1', 'p-2'] }] };

  test('a plain reply keeps its exact v1 shape: no kind, no target', () => {
    const { response } = decideClaim(record({ text: 'Hello' }), claimInput);
    expect(response).toEqual({ status: 'ready', leaseId: 'l_1', leaseExpiresAt: claimInput.now + 120_000, message: { text: 'Hello', recipient: RECIPIENT } });
    expect(Object.keys(response)).toEqual(['status', 'leaseId', 'leaseExpiresAt', 'message']);
  });

  test('an edit: kind, the new text and the target', () => {
    const { response } = decideClaim(record({ kind: 'edit', target, requestedAt: T0 }), claimInput);
    expect(response).toEqual({ status: 'ready', kind: 'edit', leaseId: 'l_1', leaseExpiresAt: claimInput.now + 120_000, message: { text: 'Fixed text', recipient: RECIPIENT }, target });
  });

  test('an unsend: kind, the recipient only, and the target', () => {
    const { response } = decideClaim(record({ kind: 'unsend', text: '', target: { deliveryId: 'd_reply', providerMessageIds: ['p-1'] }, requestedAt: T0 }), claimInput);
    expect(response).toEqual({ status: 'ready', kind: 'unsend', leaseId: 'l_1', leaseExpiresAt: claimInput.now + 120_000, message: { recipient: RECIPIENT }, target: { deliveryId: 'd_reply', providerMessageIds: ['p-1'] } });
  });

  test('an edit behind an unfinished delivery waits like any delivery', () => {
    const { response, next } = decideClaim(record({ kind: 'edit', target, requestedAt: T0, head: false }), { ...claimInput, predecessorUnfinished: true });
    expect(response).toEqual({ status: 'skip', reason: 'waiting_for_previous' });
    expect(next?.waiting).toBe(true);
  });

  test('complete of an edit takes the ids like any delivery (the target ids when the provider gave none)', () => {
    const leased = decideClaim(record({ kind: 'edit', target, requestedAt: T0 }), claimInput).next as DeliveryRecord;
    const { response, next } = decideComplete(leased, { now: claimInput.now + 10, leaseId: 'l_1', providerMessageIds: ['p-1', 'p-2'] });
    expect(response).toEqual({ status: 'sent' });
    expect(next).toMatchObject({ status: 'sent', kind: 'edit', providerMessageIds: ['p-1', 'p-2'] });
  });
});

describe('append: an edit or unsend joins the end of the queue like a reply', () => {
  const input = { deliveryId: 'd_e', workspaceId: 'ws', integrationId: 'int', conversationId: CONV, messageId: 'r-1', text: 'Fixed', now: T0, reason: 'created' as const };
  const lifecycle = { kind: 'edit' as const, target: { deliveryId: 'd_reply', providerMessageIds: ['p-1'] }, requestedAt: T0 - 5 };

  test('behind an unfinished delivery: the next seq, not the head', () => {
    const { decision, queue } = decideAppend({ nextSeq: 4, unfinished: new Map([[3, 'd_later_reply']]) }, { ...input, lifecycle });
    expect(decision.next).toMatchObject({ seq: 4, status: 'queued', kind: 'edit', target: lifecycle.target, requestedAt: T0 - 5, text: 'Fixed' });
    expect(decision.next.head).toBeUndefined();
    expect(queue.unfinished.get(4)).toBe('d_e');
    expect(decision.effects.notify).toEqual({ at: T0, reason: 'created', inline: true });
  });

  test('nothing unfinished: the head; a reply appended without lifecycle has no kind', () => {
    expect(decideAppend({ nextSeq: 4, unfinished: new Map() }, { ...input, lifecycle }).decision.next.head).toBe(true);
    const plain = decideAppend({ nextSeq: 4, unfinished: new Map() }, input).decision.next;
    expect('kind' in plain || 'target' in plain || 'requestedAt' in plain).toBe(false);
  });
});

describe('the reply history entries', () => {
  const at = (ms: number) => Timestamp.fromMillis(ms);
  const requested = at(T0 - 5000);
  const request = { requestedAt: requested, uid: 'oscar' };

  test('a queued entry follows its delivery: leased, sent with its sentAt, failed with its error and time', () => {
    let entries = [queuedEntry('edit', 'Fixed', request, 'd_e') as unknown as Record<string, unknown>];
    expect(entries[0]).toEqual({ text: 'Fixed', requestedAt: requested, uid: 'oscar', deliveryId: 'd_e', status: 'queued' });
    entries = withDeliveryEntry(entries, record({ kind: 'edit', status: 'leased', requestedAt: T0 - 5000 }), T0 + 1);
    expect(entries).toEqual([{ text: 'Fixed', requestedAt: requested, uid: 'oscar', deliveryId: 'd_e', status: 'leased' }]);
    const sent = withDeliveryEntry(entries, record({ kind: 'edit', status: 'sent', sentAt: T0 + 7, requestedAt: T0 - 5000 }), T0 + 9);
    expect(sent).toEqual([{ text: 'Fixed', requestedAt: requested, uid: 'oscar', deliveryId: 'd_e', status: 'sent', at: at(T0 + 7) }]);
    const failed = withDeliveryEntry(entries, record({ kind: 'edit', status: 'failed', error: { outcome: 'failed', code: 'unsupported_kind' }, requestedAt: T0 - 5000 }), T0 + 9);
    expect(failed).toEqual([{ text: 'Fixed', requestedAt: requested, uid: 'oscar', deliveryId: 'd_e', status: 'failed', at: at(T0 + 9), error: { outcome: 'failed', code: 'unsupported_kind' } }]);
    // The same status again keeps its time (a later write of the record is not a new outcome).
    expect(withDeliveryEntry(failed, record({ kind: 'edit', status: 'failed', error: { outcome: 'failed', code: 'unsupported_kind' } }), T0 + 99)[0]?.at).toEqual(at(T0 + 9));
    // unknown -> sent by a late completion: the error goes.
    const unknown = withDeliveryEntry(entries, record({ kind: 'edit', status: 'unknown', error: { outcome: 'unknown', code: 'lease_expired_after_start' } }), T0 + 9);
    expect(withDeliveryEntry(unknown, record({ kind: 'edit', status: 'sent', sentAt: T0 + 20 }), T0 + 20)[0]).toEqual({ text: 'Fixed', requestedAt: requested, uid: 'oscar', deliveryId: 'd_e', status: 'sent', at: at(T0 + 20) });
  });

  test('other entries stay in place; a missing entry is added at the end', () => {
    const other = { requestedAt: at(T0 - 9000), deliveryId: 'd_other', status: 'sent', at: at(T0 - 8000) };
    const mine = queuedEntry('unsend', '', request, 'd_u') as unknown as Record<string, unknown>;
    const updated = withDeliveryEntry([mine, other], record({ deliveryId: 'd_u', kind: 'unsend', text: '', status: 'sending' }), T0);
    expect(updated).toEqual([{ requestedAt: requested, uid: 'oscar', deliveryId: 'd_u', status: 'sending' }, other]);
    const added = withDeliveryEntry([other], record({ deliveryId: 'd_u', kind: 'unsend', text: '', status: 'queued', requestedAt: T0 - 5000 }), T0);
    expect(added).toEqual([other, { requestedAt: requested, deliveryId: 'd_u', status: 'queued' }]);
  });

  test('refused requests: failed with the reason, no delivery', () => {
    expect(refusedEntry('edit', 'Fixed', request, 'edit_window_passed', T0)).toEqual({
      text: 'Fixed',
      requestedAt: requested,
      uid: 'oscar',
      deliveryId: null,
      status: 'failed',
      at: at(T0),
      error: { outcome: 'failed', code: 'edit_window_passed' },
    });
    expect(refusedEntry('unsend', undefined, request, 'lifecycle_disabled', T0)).not.toHaveProperty('text');
    expect(refusedEntry('edit', 42, request, 'invalid_edit', T0)).not.toHaveProperty('text');
  });

  test('what the creation reads from the lists: taken requests, the latest, a pending unsend', () => {
    const entries = [
      { requestedAt: at(T0 - 3000), uid: 'oscar', deliveryId: 'd_1', status: 'sent' },
      { requestedAt: at(T0 - 1000), uid: 'oscar', deliveryId: null, status: 'failed' },
      { requestedAt: at(T0 - 2000), uid: 'alice', deliveryId: 'd_2', status: 'queued' },
    ];
    expect(hasRequest(entries, { requestedAt: at(T0 - 1000), uid: 'oscar' })).toBe(true);
    expect(hasRequest(entries, { requestedAt: at(T0 - 1001), uid: 'oscar' })).toBe(false);
    // Another member's request of the same time is another request.
    expect(hasRequest(entries, { requestedAt: at(T0 - 1000), uid: 'alice' })).toBe(false);
    expect(latestTakenRequest(entries)).toBe(T0 - 2000);
    expect(latestTakenRequest([])).toBeNull();
    // A taken request known to be written before the one judged (the trigger's `before`) does not
    // count, whatever its time: on the emulator a later write may carry an earlier time.
    expect(latestTakenRequest(entries, [{ requestedAt: at(T0 - 2000), uid: 'alice' }])).toBe(T0 - 3000);
    // Same time, another member: another request, still counted.
    expect(latestTakenRequest(entries, [{ requestedAt: at(T0 - 2000), uid: 'oscar' }])).toBe(T0 - 2000);
    expect(unsendTaken(entries)).toBe(true);
    expect(unsendTaken([{ requestedAt: at(T0), deliveryId: 'd_3', status: 'failed' }, { requestedAt: at(T0), deliveryId: 'd_4', status: 'unknown' }, entries[1] as Record<string, unknown>])).toBe(false);
  });

  test(`at most ${LIFECYCLE_HISTORY_LIMIT} entries: the oldest finished go, unfinished ones stay`, () => {
    const finished = Array.from({ length: LIFECYCLE_HISTORY_LIMIT }, (_, i) => ({ requestedAt: at(T0 + i), deliveryId: `d_${i}`, status: 'sent' }));
    const pending = { requestedAt: at(T0 - 1), deliveryId: 'd_pending', status: 'queued' };
    const kept = bounded([pending, ...finished]);
    expect(kept).toHaveLength(LIFECYCLE_HISTORY_LIMIT);
    expect(kept[0]).toBe(pending);
    expect(kept.map((e) => e.deliveryId)).not.toContain('d_0');
    const allPending = Array.from({ length: LIFECYCLE_HISTORY_LIMIT + 2 }, (_, i) => ({ ...pending, deliveryId: `d_p${i}` }));
    expect(bounded(allPending)).toHaveLength(LIFECYCLE_HISTORY_LIMIT + 2);
  });
});
