/**
 * Where a conversation's chain waits in the throughput drain (bench/README.md, Throughput: the
 * trace). Each connector's `ConnectorClient` gets `tracingFetch(trace)` as its `fetch`, so every
 * delivery call the SDK makes is recorded as the connector saw it: path, delivery, when it was
 * sent and answered, and the answer (status, `skip` reason, error code). `analyzeTrace` then
 * splits each delivery's life into steps:
 *
 *   previous reply's complete answered -> the claim answered ready sent   (the chain's wait: `next`,
 *                                                                          a slot, a notification)
 *   ready claim, start, complete                                         (each call's round trip)
 *
 * and counts the claims of each delivery answered anything but ready (skip, 503) with their
 * round trips. A conversation's first reply has no previous: its wait is counted from the drain's
 * start.
 */
import { performance } from 'node:perf_hooks';
import { median, percentileOf } from './stats.mjs';

const STEP_OF_PATH = { '/v1/deliveries/claim': 'claim', '/v1/deliveries/start': 'start', '/v1/deliveries/complete': 'complete', '/v1/deliveries/fail': 'fail' };

/** A fetch that records each delivery call into `trace.calls`, then answers as `fetch` does. */
export function tracingFetch(trace) {
  return async (input, init) => {
    const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
    const step = STEP_OF_PATH[url.pathname];
    if (step === undefined) return fetch(input, init);
    let deliveryId = null;
    try {
      deliveryId = JSON.parse(String(init?.body ?? '{}')).deliveryId ?? null;
    } catch {
      /* not JSON: recorded without a delivery */
    }
    const sentAt = performance.now();
    const response = await fetch(input, init);
    const answeredAt = performance.now();
    let answer = '';
    try {
      const body = await response.clone().json();
      answer = response.status === 200 ? String(body.status ?? '') + (body.reason ? `:${body.reason}` : '') : String(body.error?.code ?? '');
    } catch {
      /* an answer without JSON */
    }
    trace.calls.push({ step, deliveryId, sentAt, answeredAt, status: response.status, answer });
    return response;
  };
}

const figures = (values) => (values.length === 0 ? { n: 0 } : { n: values.length, p50: Number(median(values).toFixed(1)), p95: Number(percentileOf(values, 0.95).toFixed(1)), totalS: Number((values.reduce((a, b) => a + b, 0) / 1000).toFixed(1)) });

/**
 * The steps of every sent delivery, medians and p95 in ms. `chains`: for each conversation, its
 * deliveries' ids in seq order; `startedAt`: the drain's start (performance.now()).
 */
export function analyzeTrace(trace, chains, startedAt) {
  const byDelivery = new Map();
  for (const call of trace.calls) {
    if (call.deliveryId === null) continue;
    byDelivery.set(call.deliveryId, [...(byDelivery.get(call.deliveryId) ?? []), call]);
  }
  const steps = { wait: [], waitAfterPrevious: [], claimReady: [], start: [], complete: [], claimNotReady: [] };
  const answers = {};
  for (const call of trace.calls) {
    const key = `${call.step} ${call.status}${call.answer ? ` ${call.answer}` : ''}`;
    answers[key] = (answers[key] ?? 0) + 1;
    if (call.step === 'claim' && !(call.status === 200 && call.answer === 'ready')) steps.claimNotReady.push(call.answeredAt - call.sentAt);
  }
  for (const ids of chains) {
    let previousDoneAt = startedAt;
    for (const id of ids) {
      const calls = (byDelivery.get(id) ?? []).sort((a, b) => a.sentAt - b.sentAt);
      const ready = calls.find((c) => c.step === 'claim' && c.status === 200 && c.answer === 'ready');
      const done = calls.find((c) => c.step === 'complete' && c.status === 200);
      if (ready === undefined || done === undefined) break;
      const start = calls.find((c) => c.step === 'start' && c.status === 200 && c.sentAt >= ready.answeredAt);
      (previousDoneAt === startedAt ? steps.wait : steps.waitAfterPrevious).push(ready.sentAt - previousDoneAt);
      steps.claimReady.push(ready.answeredAt - ready.sentAt);
      if (start !== undefined) steps.start.push(start.answeredAt - start.sentAt);
      steps.complete.push(done.answeredAt - done.sentAt);
      previousDoneAt = done.answeredAt;
    }
  }
  return {
    /** A conversation's first reply: the drain's start -> its claim answered ready sent. */
    firstReplyWaitMs: figures(steps.wait),
    /** The previous reply's complete answered -> this reply's claim answered ready sent. */
    waitAfterPreviousMs: figures(steps.waitAfterPrevious),
    claimReadyMs: figures(steps.claimReady),
    startMs: figures(steps.start),
    completeMs: figures(steps.complete),
    /** Claims answered anything but ready (skip, 503, 404): their round trips. */
    claimNotReadyMs: figures(steps.claimNotReady),
    /** Every call by step, HTTP status and answer (status and reason, or error code). */
    answers: Object.fromEntries(Object.entries(answers).sort(([a], [b]) => a.localeCompare(b))),
  };
}
