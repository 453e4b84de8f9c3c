/**
 * The time the delivery loops run on: `now()` and one-shot timers. `processDelivery` and
 * `runPullLoop` take one (`clock` option) so that tests can drive lease keeping, provider
 * timeouts and the loop's waits without waiting for real time; by default, the real one.
 */

/** A clock: epoch milliseconds, and timers measured in that clock's milliseconds. */
export interface Clock {
  /** The current time in epoch ms (`Date.now()` for the real clock). */
  now(): number;
  /**
   * Calls `callback` once, `ms` milliseconds of this clock from now. The returned handle is only
   * ever passed to `clearTimeout` (a real clock may return Node's `Timeout`, whose `unref()` is used
   * when present for waits that must not keep the process alive).
   */
  setTimeout(callback: () => void, ms: number): unknown;
  /** Cancels a timer of `setTimeout` (`undefined`, or a timer that already fired, is ignored). */
  clearTimeout(handle: unknown): void;
}

/** The real clock: `Date.now` and the global timers. */
const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout> | undefined),
};

/** Lets a timer not keep the process alive, when the clock's handle supports it (Node's `Timeout`). */
export function unrefTimer(handle: unknown): void {
  if (typeof handle === 'object' && handle !== null && typeof (handle as { unref?: unknown }).unref === 'function') (handle as { unref(): void }).unref();
}

/** Checks a `clock` option (a missing one is the real clock). */
export function clockOption(clock: Clock | undefined): Clock {
  if (clock === undefined) return systemClock;
  if (typeof clock?.now !== 'function' || typeof clock.setTimeout !== 'function' || typeof clock.clearTimeout !== 'function') {
    throw new TypeError('clock must have now(), setTimeout() and clearTimeout()');
  }
  return clock;
}
