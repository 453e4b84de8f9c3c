/**
 * Failures of the platform's clients: what a thrown value says about itself (its `code`: a gRPC
 * status number from the Google Cloud clients, an HTTP status from Cloud Storage, a string from the
 * Admin SDK; and its message), which failures are transient, and the short in-process retry that
 * cures those (`retryTransient`).
 */
export const GRPC = {
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  ABORTED: 10,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
} as const;

/** The `code` property of a thrown value (a gRPC status number, an HTTP status, a string code), if any. */
export function errorCode(err: unknown): unknown {
  return typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
}

/** The message of a thrown value, for logs (never a request body or a key: callers pass client errors only). */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** gRPC status codes that mean "try again". */
const TRANSIENT_GRPC_CODES: ReadonlySet<unknown> = new Set([GRPC.ABORTED, GRPC.UNAVAILABLE, GRPC.DEADLINE_EXCEEDED, GRPC.RESOURCE_EXHAUSTED, GRPC.CANCELLED, GRPC.INTERNAL, GRPC.UNKNOWN]);

/**
 * INVALID_ARGUMENT is normally a bug, except when the backend dropped the transaction itself: the
 * emulator under lock contention ("Transaction is invalid or closed") and Firestore after a
 * transaction's time limit ("The referenced transaction has expired or is no longer valid"). The
 * transaction wrote nothing, so running it again is safe.
 */
const DROPPED_TRANSACTION = /transaction is invalid or closed|transaction has expired or is no longer valid/i;

/** A failure that running the same (idempotent) work again can cure: contention, a dropped transaction, an outage. */
export function isTransientFailure(err: unknown): boolean {
  const code = errorCode(err);
  if (TRANSIENT_GRPC_CODES.has(code)) return true;
  return code === GRPC.INVALID_ARGUMENT && err instanceof Error && DROPPED_TRANSACTION.test(err.message);
}

/** Attempts of `retryTransient`, and its first pause (doubled, with jitter, between attempts). */
export const TRIGGER_ATTEMPTS = 4;
const TRIGGER_FIRST_PAUSE_MS = 100;

/**
 * Runs idempotent background work again on a transient failure, a few times within one
 * invocation. Event triggers are redelivered on failure in production (`retry: true`), but only
 * after a backoff of seconds and with a cold log line each time; the emulator does not redeliver
 * at all. Contention clears in milliseconds, so a short local retry is the common cure; the last
 * failure is rethrown for the platform's own retry.
 */
export async function retryTransient<T>(work: () => Promise<T>, attempts = TRIGGER_ATTEMPTS, firstPauseMs = TRIGGER_FIRST_PAUSE_MS): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await work();
    } catch (err) {
      if (attempt >= attempts || !isTransientFailure(err)) throw err;
      const pause = firstPauseMs * 2 ** (attempt - 1);
      await new Promise((resolve) => setTimeout(resolve, pause / 2 + Math.random() * pause));
    }
  }
}
