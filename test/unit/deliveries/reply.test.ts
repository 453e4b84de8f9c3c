/**
 * What an operator reply is (functions/src/deliveries/reply.ts): reading the reply document, its
 * rejection, and the shape of its `delivery` mirror, the console's view of the delivery
 * (docs/data-model.md).
 */
import { Timestamp } from 'firebase-admin/firestore';
import { newDelivery, type DeliveryRecord } from '../../../functions/src/rules/record';
import {
  deliveryMirror,
  MAX_REPLY_CHARACTERS,
  operatorReplyOf,
  previousFromMirror,
  rejectionMirror,
  replyVerdict,
  storedMirrorOf,
} from '../../../functions/src/deliveries/reply';

const T0 = 1_700_000_000_000;
const at = (ms: number): Timestamp => Timestamp.fromMillis(ms);

const replyDoc = (over: Record<string, unknown> = {}): Record<string, unknown> => ({
  direction: 'outbound',
  author: { type: 'operator', uid: 'u_1' },
  text: 'On its way.',
  createdAt: at(T0),
  ...over,
});

const record = (over: Partial<DeliveryRecord> = {}): DeliveryRecord => ({
  ...newDelivery({ deliveryId: 'd_1', workspaceId: 'ws', integrationId: 'int', conversationId: 'c_1', messageId: 'm_1', seq: 1, text: 'hi', now: T0 }),
  ...over,
});

describe('operatorReplyOf', () => {
  test('an inbound message, or an outbound one not written by an operator, is no operator reply', () => {
    expect(operatorReplyOf('m_1', undefined)).toBeNull();
    expect(operatorReplyOf('m_1', { direction: 'inbound', text: 'hi' })).toBeNull();
    expect(operatorReplyOf('m_1', replyDoc({ author: { type: 'bot' } }))).toBeNull();
    expect(operatorReplyOf('m_1', replyDoc({ author: undefined }))).toBeNull();
  });

  test('a reply the service has not sequenced has no mirror and no requests', () => {
    expect(operatorReplyOf('m_1', replyDoc())).toEqual({ messageId: 'm_1', text: 'On its way.', mirror: null, resend: null, cancel: null });
  });

  test('the mirror and the console requests are read back', () => {
    const delivery = { deliveryId: 'd_1', status: 'failed', error: { outcome: 'failed', code: 'provider_rejected' }, updatedAt: at(T0 + 10) };
    const reply = operatorReplyOf('m_1', replyDoc({ delivery, resend: { requestedAt: at(T0 + 20), uid: 'u_2' }, cancel: { requestedAt: 'soon', uid: 'u_3' } }));
    expect(reply?.mirror).toEqual({ deliveryId: 'd_1', status: 'failed', errorCode: 'provider_rejected', updatedAt: T0 + 10, fields: delivery });
    expect(reply?.resend).toEqual({ requestedAt: at(T0 + 20), uid: 'u_2' });
    // A request time that is not a Timestamp is no request time.
    expect(reply?.cancel).toEqual({ requestedAt: null, uid: 'u_3' });
  });

  test('a mirror of any other shape counts as sequenced, with nothing to act on', () => {
    expect(operatorReplyOf('m_1', replyDoc({ delivery: null }))?.mirror).toEqual({ deliveryId: null, status: null, errorCode: null, updatedAt: 0, fields: {} });
    expect(storedMirrorOf({ status: 'failed' })).toEqual({ deliveryId: null, status: 'failed', errorCode: null, updatedAt: 0, fields: { status: 'failed' } });
  });
});

describe('replyVerdict: the rejection', () => {
  test('a reply to an integration that takes replies becomes a delivery', () => {
    expect(replyVerdict('On its way.', 'int', true)).toEqual({ accepted: true, text: 'On its way.', integrationId: 'int' });
  });

  test('replies_disabled: replies off, or no integration, whatever the text', () => {
    expect(replyVerdict('On its way.', 'int', false)).toEqual({ accepted: false, code: 'replies_disabled' });
    expect(replyVerdict('On its way.', undefined, true)).toEqual({ accepted: false, code: 'replies_disabled' });
    expect(replyVerdict('', 'int', false)).toEqual({ accepted: false, code: 'replies_disabled' });
  });

  test('invalid_reply: empty, not text, or longer than the limit in code points', () => {
    for (const text of ['', undefined, 42, { text: 'x' }, 'x'.repeat(MAX_REPLY_CHARACTERS + 1)]) {
      expect(replyVerdict(text, 'int', true)).toEqual({ accepted: false, code: 'invalid_reply' });
    }
  });

  test('the limit counts code points, not UTF-16 units', () => {
    const emoji = '\u{1F4E6}'.repeat(MAX_REPLY_CHARACTERS);
    expect(emoji.length).toBe(2 * MAX_REPLY_CHARACTERS);
    expect(replyVerdict(emoji, 'int', true).accepted).toBe(true);
    expect(replyVerdict(`${emoji}x`, 'int', true)).toEqual({ accepted: false, code: 'invalid_reply' });
  });
});

describe('the delivery mirror', () => {
  test('a new delivery: its id, status and time only', () => {
    expect(deliveryMirror(record(), T0 + 5)).toEqual({ deliveryId: 'd_1', status: 'queued', updatedAt: at(T0 + 5) });
  });

  test('every field the console shows, times as Timestamps', () => {
    const d = record({
      status: 'sent',
      providerMessageIds: ['p_1'],
      receipt: { status: 'read', at: T0 + 3, code: null, providerMessageId: 'p_1' },
      attemptLog: [
        { at: T0 + 1, event: 'claimed' },
        { at: T0 + 2, event: 'sent' },
      ],
      cancel: { status: 'too_late', requestedAt: T0 + 2, at: T0 + 2 },
      previous: { deliveryId: 'd_0', status: 'unknown', error: { outcome: 'unknown', code: 'timeout' }, providerMessageIds: [], attemptLog: [{ at: T0 - 2, event: 'unknown', code: 'timeout' }], updatedAt: T0 - 1 },
    });
    expect(deliveryMirror(d, T0 + 4)).toEqual({
      deliveryId: 'd_1',
      status: 'sent',
      updatedAt: at(T0 + 4),
      providerMessageIds: ['p_1'],
      receipt: { status: 'read', at: at(T0 + 3) },
      attempts: [
        { at: at(T0 + 1), event: 'claimed' },
        { at: at(T0 + 2), event: 'sent' },
      ],
      cancel: { status: 'too_late', at: at(T0 + 2) },
      previous: { deliveryId: 'd_0', status: 'unknown', error: { outcome: 'unknown', code: 'timeout' }, attempts: [{ at: at(T0 - 2), event: 'unknown', code: 'timeout' }], updatedAt: at(T0 - 1) },
    });
  });

  test('a failed delivery shows its error; a previous refused without a delivery has no id', () => {
    const d = record({
      status: 'failed',
      error: { outcome: 'failed', code: 'cancelled' },
      previous: { deliveryId: null, status: 'failed', error: null, providerMessageIds: [], attemptLog: [], updatedAt: T0 },
    });
    expect(deliveryMirror(d, T0)).toEqual({
      deliveryId: 'd_1',
      status: 'failed',
      updatedAt: at(T0),
      error: { outcome: 'failed', code: 'cancelled' },
      previous: { status: 'failed', updatedAt: at(T0) },
    });
  });

  test('the mirror of a rejection: failed with its code, no delivery id', () => {
    expect(rejectionMirror('replies_disabled', T0)).toEqual({ status: 'failed', error: { outcome: 'failed', code: 'replies_disabled' }, updatedAt: at(T0) });
  });

  test('a refused resend keeps the mirror it replaces as `previous`, without that one`s own (one level of history)', () => {
    const replaced = storedMirrorOf({ deliveryId: 'd_1', status: 'failed', error: { outcome: 'failed', code: 'x' }, updatedAt: at(T0), previous: { status: 'failed' } });
    expect(rejectionMirror('invalid_reply', T0 + 1, replaced)).toEqual({
      status: 'failed',
      error: { outcome: 'failed', code: 'invalid_reply' },
      updatedAt: at(T0 + 1),
      previous: { deliveryId: 'd_1', status: 'failed', error: { outcome: 'failed', code: 'x' }, updatedAt: at(T0) },
    });
  });

  test('previousFromMirror: a reply refused without a delivery, as the delivery its resend replaces', () => {
    expect(previousFromMirror(storedMirrorOf(rejectionMirror('replies_disabled', T0)))).toEqual({
      deliveryId: null,
      status: 'failed',
      error: { outcome: 'failed', code: 'replies_disabled' },
      providerMessageIds: [],
      attemptLog: [],
      updatedAt: T0,
    });
  });
});
