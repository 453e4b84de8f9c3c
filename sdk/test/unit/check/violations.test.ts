/**
 * The delivery-rules checker over synthetic call logs: for every rule one log that breaks it
 * (named, with the calls as evidence) and one that comes close and does not, including what the
 * SDK itself does (retries after Retry-After with the same ids, a report after a refused extension).
 */
import { findViolations, VIOLATION_RULES } from '../../../src/testing/violations.js';
import type { OperationId, RecordedCall, Violation } from '../../../src/testing/types.js';

const I = 'int-1';

/** Builds a call log: each `call()` is one request, answered `ms` after it arrived (default 5), at the log's clock. */
function log() {
  const calls: RecordedCall[] = [];
  let clock = 1_000_000;
  const api = {
    calls,
    /** Moves the clock (between calls). */
    wait(ms: number) {
      clock += ms;
      return api;
    },
    call(operationId: OperationId, body: unknown, status: number, answer: unknown, extra: { headers?: Record<string, string>; ms?: number; integrationId?: string | null } = {}) {
      const receivedAt = clock;
      clock += extra.ms ?? 5;
      calls.push({
        seq: calls.length + 1,
        receivedAt,
        answeredAt: clock,
        operationId,
        method: 'POST',
        path: `/v1/${operationId}`,
        integrationId: extra.integrationId === undefined ? I : extra.integrationId,
        request: { headers: { 'content-type': 'application/json' }, body },
        response: { status, headers: extra.headers ?? {}, body: answer },
        injected: false,
      });
      return api;
    },
    claimReady(deliveryId: string, requestId: string, leaseId: string, attachments?: unknown[]) {
      const message = { text: 'hi', recipient: { externalConversationId: 'c', externalCustomerId: 'u' }, ...(attachments === undefined ? {} : { attachments }) };
      return api.call('claimDelivery', { deliveryId, requestId }, 200, { status: 'ready', leaseId, leaseExpiresAt: clock + 120_000, message });
    },
    start(deliveryId: string, leaseId: string, status = 'sending') {
      return api.call('startDelivery', { deliveryId, leaseId }, 200, { status });
    },
    complete(deliveryId: string, leaseId: string, extra: Record<string, unknown> = {}) {
      return api.call('completeDelivery', { deliveryId, leaseId, providerMessageIds: ['p1'], ...extra }, 200, { status: 'sent' });
    },
  };
  return api;
}

const unavailable = (seconds: number) => ({ headers: { 'Retry-After': String(seconds) } });
const err = (code: string) => ({ error: { code, message: code } });
const rules = (v: Violation[]) => v.map((x) => x.rule);
const check = (calls: RecordedCall[], final = false) => findViolations(calls, { final });

test('every rule of the Violation type has a one-line description', () => {
  expect(Object.keys(VIOLATION_RULES).sort()).toEqual(
    [
      'call_after_lease_lost',
      'claim_retry_new_request_id',
      'complete_without_fetching_files',
      'complete_without_sending_start',
      'edit_sent_as_new_message',
      'erasure_not_acknowledged',
      'message_retry_new_event_id',
      'provider_work_after_sent',
      'retry_before_retry_after',
      'start_after_skip',
    ].sort(),
  );
  for (const text of Object.values(VIOLATION_RULES)) expect(text.length).toBeGreaterThan(20);
});

test('the SDK path (claim, start, fetch files, complete; erasure listed and acknowledged) breaks nothing, final or not', () => {
  const l = log()
    .claimReady('d1', 'r1', 'L1', [{ attachmentId: 'a1', name: 'x.png', contentType: 'image/png', size: 3, sha256: 'ab' }])
    .start('d1', 'L1')
    .call('getDeliveryAttachment', { deliveryId: 'd1', leaseId: 'L1', attachmentId: 'a1' }, 200, { bytes: 3 })
    .complete('d1', 'L1')
    .call('listPendingErasures', {}, 200, { erasures: [{ erasureId: 'e1', externalCustomerId: 'u', externalConversationIds: ['c'], requestedAt: 1 }], nextCursor: null })
    .call('acknowledgeErasure', { erasureId: 'e1' }, 200, { acknowledged: true });
  expect(check(l.calls, true)).toEqual([]);
});

describe('complete_without_sending_start', () => {
  test('complete under a lease that was never started is named, with the complete as evidence', () => {
    const l = log().claimReady('d1', 'r1', 'L1').complete('d1', 'L1');
    expect(check(l.calls)).toEqual([expect.objectContaining({ rule: 'complete_without_sending_start', deliveryId: 'd1', evidence: [2] })]);
  });
  test('complete after a start that answered 503 and no successful start counts too; after start answered sending it does not', () => {
    const bad = log().claimReady('d1', 'r1', 'L1').call('startDelivery', { deliveryId: 'd1', leaseId: 'L1' }, 503, err('temporarily_unavailable')).complete('d1', 'L1');
    expect(rules(check(bad.calls))).toEqual(['complete_without_sending_start']);
    const good = log().claimReady('d1', 'r1', 'L1').call('startDelivery', { deliveryId: 'd1', leaseId: 'L1' }, 503, err('temporarily_unavailable'), unavailable(1)).wait(1000).start('d1', 'L1').complete('d1', 'L1');
    expect(check(good.calls)).toEqual([]);
  });
  test('a start under another lease does not cover the complete', () => {
    const l = log().claimReady('d1', 'r1', 'L1').start('d1', 'L1').claimReady('d1', 'r2', 'L2').complete('d1', 'L2');
    expect(rules(check(l.calls))).toEqual(['complete_without_sending_start']);
  });
});

describe('provider_work_after_sent', () => {
  test('a complete (or a second start) after start answered `sent` is named', () => {
    const l = log().claimReady('d1', 'r1', 'L1').start('d1', 'L1', 'sent').complete('d1', 'L1');
    const v = check(l.calls);
    expect(v).toEqual([expect.objectContaining({ rule: 'provider_work_after_sent', deliveryId: 'd1', evidence: [2, 3] })]);
    const again = log().claimReady('d1', 'r1', 'L1').start('d1', 'L1', 'sent').start('d1', 'L1', 'sent');
    expect(rules(check(again.calls))).toEqual(['provider_work_after_sent']);
  });
  test('stopping at `sent` (and a later receipt, which needs no lease) is fine', () => {
    const l = log().claimReady('d1', 'r1', 'L1').start('d1', 'L1', 'sent').call('reportDeliveryReceipt', { deliveryId: 'd1', status: 'delivered' }, 200, { status: 'sent' });
    expect(check(l.calls)).toEqual([]);
  });
});

describe('call_after_lease_lost', () => {
  test('a fail after complete answered 409 lease_lost, or a complete after start answered delivery_finished, is named', () => {
    const l = log()
      .claimReady('d1', 'r1', 'L1')
      .start('d1', 'L1')
      .call('completeDelivery', { deliveryId: 'd1', leaseId: 'L1', providerMessageIds: ['p'] }, 409, err('lease_lost'))
      .call('failDelivery', { deliveryId: 'd1', leaseId: 'L1', outcome: 'unknown', code: 'x' }, 409, err('lease_lost'));
    expect(check(l.calls)).toEqual([expect.objectContaining({ rule: 'call_after_lease_lost', deliveryId: 'd1', evidence: [3, 4] })]);
    const finished = log().claimReady('d1', 'r1', 'L1').call('startDelivery', { deliveryId: 'd1', leaseId: 'L1' }, 409, err('delivery_finished')).complete('d1', 'L1');
    expect(rules(check(finished.calls))).toEqual(['call_after_lease_lost']);
  });
  test('a new claim after lease_lost is fine, and so is the one report after a refused extension (what processDelivery does)', () => {
    const l = log()
      .claimReady('d1', 'r1', 'L1')
      .start('d1', 'L1')
      .call('completeDelivery', { deliveryId: 'd1', leaseId: 'L1', providerMessageIds: ['p'] }, 409, err('lease_lost'))
      .claimReady('d1', 'r2', 'L2');
    expect(check(l.calls)).toEqual([]);
    const extended = log()
      .claimReady('d1', 'r1', 'L1')
      .start('d1', 'L1')
      .call('extendDeliveryLease', { deliveryId: 'd1', leaseId: 'L1' }, 409, err('lease_lost'))
      .complete('d1', 'L1');
    expect(check(extended.calls)).toEqual([]);
    // ...but a second extension after the refusal is not.
    const twice = log()
      .claimReady('d1', 'r1', 'L1')
      .start('d1', 'L1')
      .call('extendDeliveryLease', { deliveryId: 'd1', leaseId: 'L1' }, 409, err('lease_lost'))
      .call('extendDeliveryLease', { deliveryId: 'd1', leaseId: 'L1' }, 409, err('lease_lost'));
    expect(rules(check(twice.calls))).toEqual(['call_after_lease_lost']);
  });
});

describe('retry_before_retry_after', () => {
  test('a claim sent again 300 ms after a 503 with Retry-After: 1 is named', () => {
    const l = log().call('claimDelivery', { deliveryId: 'd1', requestId: 'r1' }, 503, err('temporarily_unavailable'), unavailable(1)).wait(300).claimReady('d1', 'r1', 'L1');
    expect(check(l.calls)).toEqual([expect.objectContaining({ rule: 'retry_before_retry_after', deliveryId: 'd1', evidence: [1, 2] })]);
  });
  test('waiting the Retry-After (the SDK caps a longer one at 30 s) is fine; a 503 without Retry-After sets no time', () => {
    const l = log().call('claimDelivery', { deliveryId: 'd1', requestId: 'r1' }, 503, err('temporarily_unavailable'), unavailable(1)).wait(1000).claimReady('d1', 'r1', 'L1');
    expect(check(l.calls)).toEqual([]);
    const capped = log().call('sendMessage', { eventId: 'e1', externalConversationId: 'c', sender: { externalId: 'u' }, message: { text: 'x' } }, 429, err('rate_limited'), unavailable(120)).wait(30_000).call('sendMessage', { eventId: 'e1', externalConversationId: 'c', sender: { externalId: 'u' }, message: { text: 'x' } }, 201, {});
    expect(check(capped.calls)).toEqual([]);
    const bare = log().call('claimDelivery', { deliveryId: 'd1', requestId: 'r1' }, 502, {}).wait(10).claimReady('d1', 'r1', 'L1');
    expect(check(bare.calls)).toEqual([]);
  });
});

describe('claim_retry_new_request_id', () => {
  test('a claim retried with another requestId after a 503 is named', () => {
    const l = log().call('claimDelivery', { deliveryId: 'd1', requestId: 'r1' }, 503, err('temporarily_unavailable'), unavailable(1)).wait(1000).claimReady('d1', 'r2', 'L1');
    expect(check(l.calls)).toEqual([expect.objectContaining({ rule: 'claim_retry_new_request_id', deliveryId: 'd1', evidence: [1, 2] })]);
  });
  test('the same requestId is fine; so is a new claim attempt after lease_busy, or after the SDK gave one requestId its 4 tries', () => {
    const same = log().call('claimDelivery', { deliveryId: 'd1', requestId: 'r1' }, 503, err('temporarily_unavailable'), unavailable(1)).wait(1000).claimReady('d1', 'r1', 'L1');
    expect(check(same.calls)).toEqual([]);
    const busy = log().call('claimDelivery', { deliveryId: 'd1', requestId: 'r1' }, 503, err('lease_busy'), unavailable(1)).wait(1000).claimReady('d1', 'r2', 'L1');
    expect(check(busy.calls)).toEqual([]);
    const l = log();
    for (let i = 0; i < 4; i += 1) l.call('claimDelivery', { deliveryId: 'd1', requestId: 'r1' }, 503, err('temporarily_unavailable'), unavailable(1)).wait(1000);
    l.claimReady('d1', 'r2', 'L1');
    expect(check(l.calls)).toEqual([]);
  });
});

describe('message_retry_new_event_id', () => {
  const msg = (eventId: string, text = 'hello') => ({ eventId, externalConversationId: 'c', sender: { externalId: 'u' }, message: { text } });
  test('the same content with a new eventId after a 503 is named', () => {
    const l = log().call('sendMessage', msg('e1'), 503, err('temporarily_unavailable'), unavailable(1)).wait(1000).call('sendMessage', msg('e2'), 201, {});
    expect(check(l.calls)).toEqual([expect.objectContaining({ rule: 'message_retry_new_event_id', evidence: [1, 2] })]);
  });
  test('the same eventId, other content, a new message after a success, or a resend after 60 s are fine', () => {
    const same = log().call('sendMessage', msg('e1'), 503, err('temporarily_unavailable'), unavailable(1)).wait(1000).call('sendMessage', msg('e1'), 201, {});
    expect(check(same.calls)).toEqual([]);
    const other = log().call('sendMessage', msg('e1'), 503, err('temporarily_unavailable'), unavailable(1)).wait(1000).call('sendMessage', msg('e2', 'something else'), 201, {});
    expect(check(other.calls)).toEqual([]);
    const afterSuccess = log().call('sendMessage', msg('e1'), 201, {}).call('sendMessage', msg('e2'), 201, {});
    expect(check(afterSuccess.calls)).toEqual([]);
    const late = log().call('sendMessage', msg('e1'), 503, err('temporarily_unavailable'), unavailable(1)).wait(61_000).call('sendMessage', msg('e2'), 201, {});
    expect(check(late.calls)).toEqual([]);
  });
});

describe('start_after_skip', () => {
  test('a start after the claim answered skip is named', () => {
    const l = log().call('claimDelivery', { deliveryId: 'd2', requestId: 'r1' }, 200, { status: 'skip', reason: 'waiting_for_previous' }).start('d2', 'L0');
    expect(check(l.calls)).toEqual([expect.objectContaining({ rule: 'start_after_skip', deliveryId: 'd2', evidence: [1, 2] })]);
  });
  test('a start after a later claim answered ready (the re-notification) is fine', () => {
    const l = log().call('claimDelivery', { deliveryId: 'd2', requestId: 'r1' }, 200, { status: 'skip', reason: 'waiting_for_previous' }).claimReady('d2', 'r2', 'L2').start('d2', 'L2').complete('d2', 'L2');
    expect(check(l.calls)).toEqual([]);
  });
});

describe('complete_without_fetching_files', () => {
  const files = [
    { attachmentId: 'a1', name: 'a.png', contentType: 'image/png', size: 3, sha256: 'aa' },
    { attachmentId: 'a2', name: 'b.pdf', contentType: 'application/pdf', size: 4, sha256: 'bb' },
  ];
  test('complete of a reply whose second file was never fetched is named', () => {
    const l = log()
      .claimReady('d1', 'r1', 'L1', files)
      .start('d1', 'L1')
      .call('getDeliveryAttachment', { deliveryId: 'd1', leaseId: 'L1', attachmentId: 'a1' }, 200, { bytes: 3 })
      .complete('d1', 'L1');
    const v = check(l.calls);
    expect(v).toEqual([expect.objectContaining({ rule: 'complete_without_fetching_files', deliveryId: 'd1', evidence: [1, 4] })]);
    expect(v[0]!.message).toContain('a2');
  });
  test('a fetch cut short (the stored bytes did not match their SHA-256) does not count', () => {
    const l = log()
      .claimReady('d1', 'r1', 'L1', files.slice(0, 1))
      .start('d1', 'L1')
      .call('getDeliveryAttachment', { deliveryId: 'd1', leaseId: 'L1', attachmentId: 'a1' }, 200, { bytes: 2, cutOff: true })
      .complete('d1', 'L1');
    expect(rules(check(l.calls))).toEqual(['complete_without_fetching_files']);
  });
  test('a fetch under an earlier lease, or one answered 503, does not count', () => {
    const l = log()
      .claimReady('d1', 'r1', 'L1', files.slice(0, 1))
      .start('d1', 'L1')
      .call('getDeliveryAttachment', { deliveryId: 'd1', leaseId: 'L1', attachmentId: 'a1' }, 200, { bytes: 3 })
      .call('failDelivery', { deliveryId: 'd1', leaseId: 'L1', outcome: 'retry', code: 'x' }, 200, { status: 'queued' })
      .claimReady('d1', 'r2', 'L2', files.slice(0, 1))
      .start('d1', 'L2')
      .call('getDeliveryAttachment', { deliveryId: 'd1', leaseId: 'L2', attachmentId: 'a1' }, 503, err('temporarily_unavailable'))
      .complete('d1', 'L2');
    expect(rules(check(l.calls))).toEqual(['complete_without_fetching_files']);
  });
  test('every file fetched, or a file reported as a failed part, is fine', () => {
    const l = log()
      .claimReady('d1', 'r1', 'L1', files)
      .start('d1', 'L1')
      .call('getDeliveryAttachment', { deliveryId: 'd1', leaseId: 'L1', attachmentId: 'a1' }, 200, { bytes: 3 })
      .complete('d1', 'L1', { parts: [{ part: 'text', status: 'sent' }, { part: 'a1', status: 'sent' }, { part: 'a2', status: 'failed', code: 'unsupported' }] });
    expect(check(l.calls)).toEqual([]);
  });
});

describe('erasure_not_acknowledged', () => {
  const list = { erasures: [{ erasureId: 'e1', externalCustomerId: 'u', externalConversationIds: ['c'], requestedAt: 1 }], nextCursor: null };
  test('an erasure listed and never acknowledged is named at the end of the run only', () => {
    const l = log().call('listPendingErasures', {}, 200, list);
    expect(check(l.calls, false)).toEqual([]);
    expect(check(l.calls, true)).toEqual([expect.objectContaining({ rule: 'erasure_not_acknowledged', evidence: [1] })]);
  });
  test('an acknowledgement after a failed one is fine; another integration acknowledging it is not the same', () => {
    const l = log().call('listPendingErasures', {}, 200, list).call('acknowledgeErasure', { erasureId: 'e1' }, 503, err('temporarily_unavailable'), unavailable(1)).wait(1000).call('acknowledgeErasure', { erasureId: 'e1' }, 200, { acknowledged: true });
    expect(check(l.calls, true)).toEqual([]);
    const other = log().call('listPendingErasures', {}, 200, list).call('acknowledgeErasure', { erasureId: 'e1' }, 200, { acknowledged: true }, { integrationId: 'int-2' });
    expect(rules(check(other.calls, true))).toEqual(['erasure_not_acknowledged']);
  });
});

describe('edit_sent_as_new_message', () => {
  const target = { deliveryId: 'd0', providerMessageIds: ['wamid.1'], parts: [{ part: 'att_1', providerMessageIds: ['wamid.2'] }] };
  const claimKind = (kind: string, deliveryId: string, leaseId: string) =>
    log().call('claimDelivery', { deliveryId, requestId: 'r1' }, 200, {
      status: 'ready',
      kind,
      leaseId,
      leaseExpiresAt: 2_000_000,
      message: { ...(kind === 'edit' ? { text: 'new' } : {}), recipient: { externalConversationId: 'c', externalCustomerId: 'u' } },
      target,
    });
  test.each(['edit', 'unsend'])('an %s completed with new ids only is named, with the claim and the complete as evidence', (kind) => {
    const l = claimKind(kind, 'd1', 'L1').start('d1', 'L1').complete('d1', 'L1', { providerMessageIds: ['wamid.99'] });
    expect(check(l.calls)).toEqual([expect.objectContaining({ rule: 'edit_sent_as_new_message', deliveryId: 'd1', evidence: [1, 3] })]);
  });
  test("completed with the target's ids (the SDK's default), a part's id, or new ids next to them: fine; a plain reply with new ids: fine", () => {
    expect(check(claimKind('edit', 'd1', 'L1').start('d1', 'L1').complete('d1', 'L1', { providerMessageIds: ['wamid.1'] }).calls)).toEqual([]);
    expect(check(claimKind('unsend', 'd1', 'L1').start('d1', 'L1').complete('d1', 'L1', { providerMessageIds: ['wamid.2'] }).calls)).toEqual([]);
    expect(check(claimKind('edit', 'd1', 'L1').start('d1', 'L1').complete('d1', 'L1', { providerMessageIds: ['wamid.1.v2', 'wamid.1'] }).calls)).toEqual([]);
    expect(check(log().claimReady('d1', 'r1', 'L1').start('d1', 'L1').complete('d1', 'L1', { providerMessageIds: ['wamid.99'] }).calls)).toEqual([]);
  });
});

test('calls without a known integration (a missing or wrong key) are ignored', () => {
  const l = log().call('completeDelivery', { deliveryId: 'd1', leaseId: 'L1', providerMessageIds: ['p'] }, 401, err('invalid_key'), { integrationId: null });
  expect(check(l.calls)).toEqual([]);
});
