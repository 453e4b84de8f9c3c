/**
 * What a caught value says about itself: its `code` (a gRPC status number from the Google Cloud
 * clients, an HTTP status from Cloud Storage, a string from the Admin SDK) and its message.
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
