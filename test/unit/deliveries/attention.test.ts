/** Which replies the console's "failed" badge counts, and what each mirror write changes in the count. */
import { attentionDelta, needsAttention } from '../../../functions/src/deliveries/attention';

describe('needsAttention', () => {
  test.each([
    [{ status: 'failed', code: 'provider_rejected' }, true],
    [{ status: 'failed', code: 'replies_disabled' }, true],
    [{ status: 'failed', code: null }, true],
    [{ status: 'unknown', code: 'lease_expired_while_sending' }, true],
    [{ status: 'failed', code: 'cancelled' }, false],
    [{ status: 'failed', code: 'erased' }, false],
    [{ status: 'sent', code: null }, false],
    [{ status: 'queued', code: null }, false],
    [{ status: 'sending', code: null }, false],
    [null, false],
  ])('%j -> %s', (state, expected) => {
    expect(needsAttention(state)).toBe(expected);
  });
});

describe('attentionDelta', () => {
  const failed = { status: 'failed', code: 'provider_rejected' };
  const unknown = { status: 'unknown', code: null };
  test('a reply that fails, or ends unknown, counts once', () => {
    expect(attentionDelta({ status: 'sending', code: null }, failed)).toBe(1);
    expect(attentionDelta({ status: 'sending', code: null }, unknown)).toBe(1);
    expect(attentionDelta(null, { status: 'failed', code: 'replies_disabled' })).toBe(1); // refused without a delivery
  });
  test('a resend (the new delivery replaces the failure), a late sent after unknown, and an unknown that becomes failed', () => {
    expect(attentionDelta(failed, { status: 'queued', code: null })).toBe(-1);
    expect(attentionDelta(unknown, { status: 'sent', code: null })).toBe(-1);
    expect(attentionDelta(unknown, failed)).toBe(0);
    expect(attentionDelta(failed, { status: 'failed', code: 'replies_disabled' })).toBe(0); // a refused resend
  });
  test('a cancel and an erasure count nothing; unchanged states count nothing', () => {
    expect(attentionDelta({ status: 'queued', code: null }, { status: 'failed', code: 'cancelled' })).toBe(0);
    expect(attentionDelta({ status: 'leased', code: null }, { status: 'failed', code: 'erased' })).toBe(0);
    expect(attentionDelta({ status: 'queued', code: null }, { status: 'leased', code: null })).toBe(0);
    expect(attentionDelta(failed, failed)).toBe(0);
  });
});
