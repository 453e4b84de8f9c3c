import { ServiceUnavailableError } from '../../rules/errors';

/** Seconds a client waits after a request ran out of time (the backend was slow; give it a moment). */
export const DEADLINE_RETRY_AFTER_SECONDS = 5;

function deadlineExceeded(): ServiceUnavailableError {
  return new ServiceUnavailableError(
    'deadline_exceeded',
    'The request could not be completed in time; retry after the indicated delay with the same eventId, requestId or lease (retries are idempotent).',
    DEADLINE_RETRY_AFTER_SECONDS,
  );
}

/**
 * The time budget of one HTTP request, counted from its arrival (docs/contract.md#time-budget: answer with our own
 * 503 before the front end's 60 s timeout answers with an HTML page).
 *
 * Two halves: `race` answers the client when the budget is spent, whatever the work is waiting
 * on (a hung Firestore call, upload or publish); `assertTimeLeft`, called by the work itself
 * right before it commits, makes abandoned work give up instead of writing after the client was
 * told 503. Pure apart from the timer; `now` is injectable for unit tests.
 */
export class Deadline {
  constructor(
    /** Epoch ms at which the budget ends. */
    readonly expiresAt: number,
    private readonly now: () => number = Date.now,
  ) {}

  remainingMs(): number {
    return this.expiresAt - this.now();
  }

  /** Throws the 503 `deadline_exceeded` once the budget is spent. Call before committing a write. */
  assertTimeLeft(): void {
    if (this.remainingMs() <= 0) throw deadlineExceeded();
  }

  /**
   * Settles like `work`, or rejects with the 503 when the budget ends first. Abandoned work goes
   * on in the background (a hung call cannot be cancelled), so how it ends is passed to `onLate`
   * instead of becoming an unhandled rejection.
   */
  async race<T>(work: Promise<T>, onLate: (outcome: PromiseSettledResult<T>) => void): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    let timedOut = false;
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => {
        timedOut = true;
        reject(deadlineExceeded());
      }, Math.max(0, this.remainingMs()));
    });
    work.then(
      (value) => timedOut && onLate({ status: 'fulfilled', value }),
      (reason: unknown) => timedOut && onLate({ status: 'rejected', reason }),
    );
    try {
      return await Promise.race([work, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}
