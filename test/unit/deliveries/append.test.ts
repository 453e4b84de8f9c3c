/**
 * Creation (functions/src/rules/ordering.ts `appendToQueue`, state-machine.ts `decideAppend`):
 * the one rule by which a delivery joins its conversation's queue, for a new reply and for a
 * resend alike. The head rule is checked against a model that keeps every delivery's status.
 */
import fc from 'fast-check';
import { appendToQueue, head, type QueueTail } from '../../../functions/src/rules/ordering';
import { withPendingAt, type PreviousDelivery } from '../../../functions/src/rules/record';
import { decideAppend, decideWake, type AppendInput } from '../../../functions/src/rules/state-machine';

const T0 = 1_700_000_000_000;

const queueOf = (nextSeq: number, entries: Array<[number, string]> = []): QueueTail => ({ nextSeq, unfinished: new Map(entries) });

const input = (over: Partial<AppendInput> = {}): AppendInput => ({
  deliveryId: 'd_new',
  workspaceId: 'ws',
  integrationId: 'int',
  conversationId: 'c_1',
  messageId: 'm_reply',
  text: 'Your parcel left the warehouse.',
  now: T0,
  reason: 'created',
  ...over,
});

const PREVIOUS: PreviousDelivery = {
  deliveryId: 'd_old',
  status: 'failed',
  error: { outcome: 'failed', code: 'provider_rejected' },
  providerMessageIds: [],
  attemptLog: [{ at: T0 - 5_000, event: 'failed', code: 'provider_rejected' }],
  updatedAt: T0 - 5_000,
};

describe('appendToQueue: the next seq and the head rule', () => {
  test('into an empty queue: the next seq, and the head (nothing before it can release it)', () => {
    expect(appendToQueue(queueOf(1), 'd_a')).toEqual({ seq: 1, head: true, queue: queueOf(2, [[1, 'd_a']]) });
  });

  test('behind an unfinished delivery: the next seq, not the head', () => {
    expect(appendToQueue(queueOf(4, [[3, 'd3']]), 'd4')).toEqual({ seq: 4, head: false, queue: queueOf(5, [[3, 'd3'], [4, 'd4']]) });
  });

  test('every earlier delivery finished (the map is empty, seq far on): the head, with the next seq', () => {
    expect(appendToQueue(queueOf(17), 'd17')).toEqual({ seq: 17, head: true, queue: queueOf(18, [[17, 'd17']]) });
  });

  test('one unfinished entry, whichever, is enough to wait', () => {
    expect(appendToQueue(queueOf(9, [[8, 'd8']]), 'd9').head).toBe(false);
    expect(appendToQueue(queueOf(9, [[2, 'd2']]), 'd9').head).toBe(false);
  });

  test('the queue read is not changed (the caller keeps the one returned)', () => {
    const queue = queueOf(2, [[1, 'd1']]);
    appendToQueue(queue, 'd2');
    expect(queue).toEqual(queueOf(2, [[1, 'd1']]));
  });

  test('several appends in one transaction (a burst of replies): only the first can be the head', () => {
    const first = appendToQueue(queueOf(1), 'd1');
    const second = appendToQueue(first.queue, 'd2');
    const third = appendToQueue(second.queue, 'd3');
    expect([first, second, third].map(({ seq, head }) => ({ seq, head }))).toEqual([
      { seq: 1, head: true },
      { seq: 2, head: false },
      { seq: 3, head: false },
    ]);
    expect(head(third.queue.unfinished)).toEqual({ seq: 1, deliveryId: 'd1' });
  });
});

describe('decideAppend: a new delivery of a reply', () => {
  test('a new reply in an idle conversation: queued, the head, notified now by its creator', () => {
    const { decision, queue } = decideAppend(queueOf(1), input());
    expect(decision.next).toMatchObject({
      deliveryId: 'd_new',
      workspaceId: 'ws',
      integrationId: 'int',
      conversationId: 'c_1',
      messageId: 'm_reply',
      seq: 1,
      status: 'queued',
      text: 'Your parcel left the warehouse.',
      attempts: 0,
      createdAt: T0,
      updatedAt: T0,
      notBefore: null,
      lease: null,
      waiting: false,
      error: null,
      head: true,
    });
    expect(decision.next.previous).toBeUndefined();
    expect(decision.effects).toEqual({ releasesNext: false, notify: { at: T0, reason: 'created', inline: true } });
    expect(decision.response).toBeNull();
    expect(queue).toEqual(queueOf(2, [[1, 'd_new']]));
  });

  test('the head is claimable at once: it enters the catch-up list when written (withPendingAt)', () => {
    const { decision } = decideAppend(queueOf(1), input());
    expect(withPendingAt(null, decision.next, T0).pendingAt).toBe(T0);
  });

  test('a reply behind an unfinished one: no `head` field, not claimable until its predecessor wakes it', () => {
    const { decision } = decideAppend(queueOf(3, [[2, 'd2']]), input());
    expect(decision.next.seq).toBe(3);
    expect('head' in decision.next).toBe(false);
    expect(withPendingAt(null, decision.next, T0).pendingAt).toBeUndefined();
    // The predecessor's terminal transition releases it: then it is the head.
    expect(decideWake(decision.next, T0 + 1)?.next).toMatchObject({ head: true });
  });

  test('a resend at the end of a queue with unfinished deliveries: after them, not the head, the previous outcome kept', () => {
    const { decision, queue } = decideAppend(queueOf(6, [[4, 'd4'], [5, 'd5']]), input({ deliveryId: 'd_resent', reason: 'resend', previous: PREVIOUS }));
    expect(decision.next.seq).toBe(6);
    expect(decision.next.head).toBeUndefined();
    expect(decision.next.previous).toEqual(PREVIOUS);
    expect(decision.effects.notify).toEqual({ at: T0, reason: 'resend', inline: true });
    expect(queue.unfinished.get(6)).toBe('d_resent');
  });

  test('a resend at the end of a queue whose deliveries all finished: the head, never back to its old seq', () => {
    // The replaced delivery had seq 2 and failed; three more were sent since.
    const { decision } = decideAppend(queueOf(6), input({ deliveryId: 'd_resent', reason: 'resend', previous: PREVIOUS }));
    expect(decision.next).toMatchObject({ seq: 6, head: true, status: 'queued', previous: PREVIOUS });
  });

  test('a new reply and a resend follow the same rule', () => {
    for (const queue of [queueOf(1), queueOf(3, [[2, 'd2']]), queueOf(10)]) {
      const created = decideAppend(queue, input()).decision.next;
      const resent = decideAppend(queue, input({ reason: 'resend', previous: PREVIOUS })).decision.next;
      expect({ seq: resent.seq, head: resent.head }).toEqual({ seq: created.seq, head: created.head });
    }
  });
});

describe('the head rule agrees with scanning every delivery of the conversation', () => {
  test('random appends and terminal transitions', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.constant<'append'>('append'), fc.nat()), { maxLength: 80 }), (steps) => {
        // The model: every delivery ever created with its status.
        const statuses = new Map<number, 'unfinished' | 'finished'>();
        let queue = queueOf(1);
        let n = 0;
        for (const step of steps) {
          if (step === 'append') {
            const { decision, queue: after } = decideAppend(queue, input({ deliveryId: `d${++n}` }));
            const earlierUnfinished = [...statuses.values()].includes('unfinished');
            expect(decision.next.seq).toBe(statuses.size + 1);
            expect(decision.next.head === true).toBe(!earlierUnfinished);
            statuses.set(decision.next.seq, 'unfinished');
            queue = after;
          } else {
            const open = [...statuses].filter(([, s]) => s === 'unfinished').map(([seq]) => seq);
            const seq = open[step % Math.max(open.length, 1)];
            if (seq === undefined) continue;
            statuses.set(seq, 'finished');
            const unfinished = new Map(queue.unfinished);
            unfinished.delete(seq);
            queue = { ...queue, unfinished };
          }
        }
      }),
    );
  });
});
