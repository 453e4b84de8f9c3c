/**
 * A fake `Clock` for the SDK tests: time moves only when the test says so, and only once the code
 * under test is idle (no HTTP exchange with the local test server in flight, nothing left to run
 * on the event loop), so each timer fires at exactly its clock time and every HTTP call it causes
 * completes before the clock moves again. HTTP itself stays real (a `node:http` server).
 */
import type { Clock, FetchLike } from '../../../src/index.js';

export interface FakeClock extends Clock {
  /** Resolves after `ms` of this clock (a provider that takes that long). */
  sleep(ms: number): Promise<void>;
  /** Timers armed and not yet fired or cleared. */
  pending(): number;
  /** Moves the clock `ms` forward, firing the timers due on the way, each at its own time. */
  advance(ms: number): Promise<void>;
  /** Runs until `check()` holds: whenever the code is idle and it does not, jumps to the next timer. */
  runUntil(what: string, check: () => boolean): Promise<void>;
  /** `runUntil` the promise settles; its outcome. */
  run<T>(promise: Promise<T>): Promise<T>;
}

/** A `fetch` that counts the exchanges in flight (until the answer's body is read), for `FakeClock`'s idleness. */
export function trackedFetch(base: FetchLike = (input, init) => fetch(input, init)): { fetch: FetchLike; inFlight: () => number } {
  let inFlight = 0;
  return {
    inFlight: () => inFlight,
    fetch: async (input, init) => {
      inFlight++;
      try {
        const res = await base(input, init);
        // The whole body now, so that nothing of this exchange is still on the wire when it counts as done.
        const body = res.body === null ? null : await res.arrayBuffer();
        return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
      } finally {
        inFlight--;
      }
    },
  };
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
const pause = () => new Promise<void>((resolve) => setTimeout(resolve, 1));

export function fakeClock(options: { start?: number; busy?: () => boolean } = {}): FakeClock {
  let now = options.start ?? 1_900_000_000_000;
  let seq = 0;
  const timers = new Map<number, { due: number; callback: () => void }>();
  const busy = options.busy ?? (() => false);

  /** Until nothing is in flight and a few event-loop turns passed with nothing new. */
  const settle = async (): Promise<void> => {
    for (let quiet = 0; quiet < 5; ) {
      if (busy()) {
        quiet = 0;
        await pause(); // real HTTP on the local server: a millisecond or so
      } else {
        quiet++;
        await turn();
      }
    }
  };
  const next = (): [number, { due: number; callback: () => void }] | undefined => {
    let found: [number, { due: number; callback: () => void }] | undefined;
    for (const entry of timers) if (found === undefined || entry[1].due < found[1].due) found = entry; // ties: armed first
    return found;
  };
  const fire = ([id, timer]: [number, { due: number; callback: () => void }]): void => {
    timers.delete(id);
    now = Math.max(now, timer.due);
    timer.callback();
  };

  const clock: FakeClock = {
    now: () => now,
    setTimeout(callback, ms) {
      const id = ++seq;
      timers.set(id, { due: now + Math.max(0, ms), callback });
      return id;
    },
    clearTimeout(handle) {
      if (typeof handle === 'number') timers.delete(handle);
    },
    sleep: (ms) => new Promise<void>((resolve) => clock.setTimeout(resolve, ms)),
    pending: () => timers.size,
    async advance(ms) {
      const target = now + ms;
      for (;;) {
        await settle();
        const due = next();
        if (due === undefined || due[1].due > target) break;
        fire(due);
      }
      now = target;
      await settle();
    },
    async runUntil(what, check) {
      for (let steps = 0; steps < 10_000; steps++) {
        await settle();
        if (check()) return;
        const due = next();
        if (due === undefined) throw new Error(`nothing left to wait for, and still not ${what}`);
        fire(due);
      }
      throw new Error(`too many timers, and still not ${what}`);
    },
    async run(promise) {
      let settled = false;
      const done = promise.finally(() => {
        settled = true;
      });
      done.catch(() => undefined);
      await clock.runUntil('settled', () => settled);
      return promise;
    },
  };
  return clock;
}
