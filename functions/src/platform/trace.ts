/**
 * W3C trace context (docs/operations.md#tracing): propagation and log fields only, no tracing SDK
 * (it would cost every cold start). A reply's trace id is minted from its delivery id, so that
 * every writer, every notification and every log line about the delivery names the same trace
 * without reading anything, and a delivery written before traces existed has one too.
 */
import { createHash, randomBytes } from 'node:crypto';

/** A parsed `traceparent`: version 00, 32 and 16 lowercase hex digits, neither all zeros. */
export interface TraceContext {
  traceId: string;
  /** The caller's span (the parent of ours). */
  spanId: string;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);

/**
 * The trace context of a `traceparent` header, or null when it is absent or malformed (the caller
 * then starts a new trace: a malformed header is never a 400). Version `ff` is invalid; a future
 * version may carry more fields after ours (W3C Trace Context, "versioning").
 */
export function parseTraceparent(value: string | undefined): TraceContext | null {
  if (value === undefined || value.length > 512) return null;
  const match = TRACEPARENT.exec(value.trim());
  if (match === null) return null;
  const [, version, traceId, spanId, , rest] = match;
  if (version === undefined || traceId === undefined || spanId === undefined) return null;
  if (version === 'ff' || (version === '00' && rest !== undefined)) return null;
  if (traceId === ZERO_TRACE || spanId === ZERO_SPAN) return null;
  return { traceId, spanId };
}

/** The `traceparent` value of a span of `traceId` (sampled). */
export const formatTraceparent = (traceId: string, spanId: string): string => `00-${traceId}-${spanId}-01`;

/** A new random trace id (32 hex digits). */
export const newTraceId = (): string => randomBytes(16).toString('hex');
/** A new random span id (16 hex digits). */
export const newSpanId = (): string => randomBytes(8).toString('hex');

const digest = (text: string): string => createHash('sha256').update(text).digest('hex');


/** A stable span id for one occurrence (e.g. one notification: its outbox id), so a re-publish names the same span. */
export const spanIdOf = (occurrence: string): string => digest(`span:${occurrence}`).slice(0, 16);

let projectId: string | undefined;
/** The project the trace ids belong to (Cloud Logging's `projects/<p>/traces/<id>`). */
function project(): string {
  projectId ??= process.env.GCLOUD_PROJECT ?? process.env.GOOGLE_CLOUD_PROJECT ?? process.env.GCP_PROJECT ?? projectOfFirebaseConfig() ?? 'unknown';
  return projectId;
}

function projectOfFirebaseConfig(): string | undefined {
  try {
    const parsed = JSON.parse(process.env.FIREBASE_CONFIG ?? '{}') as { projectId?: unknown };
    return typeof parsed.projectId === 'string' ? parsed.projectId : undefined;
  } catch {
    return undefined;
  }
}

/** Cloud Logging's special fields: a structured line with them is shown in its trace. */
const TRACE_FIELD = 'logging.googleapis.com/trace';
const SPAN_FIELD = 'logging.googleapis.com/spanId';

/** The log fields naming `traceId` (and `spanId` when known). */
export function traceLogFields(traceId: string, spanId?: string): Record<string, string> {
  const fields: Record<string, string> = { [TRACE_FIELD]: `projects/${project()}/traces/${traceId}` };
  if (spanId !== undefined) fields[SPAN_FIELD] = spanId;
  return fields;
}
