/**
 * The service's structured logger: firebase-functions' logger, plus the trace fields
 * (docs/operations.md#tracing) added here once instead of at every call site. A line with a
 * `traceId` field names that trace; otherwise a line with a `deliveryId` names the delivery's
 * trace (../rules/record.ts `traceIdOfDelivery`); a `spanId` field becomes the line's span.
 */
import * as base from 'firebase-functions/logger';
import { traceLogFields } from './trace';
import { traceIdOfDelivery } from '../rules/record';

/** A log line's structured fields (any object: ids, counts; never secrets). */
export type LogFields = object;

/** `fields` with the Cloud Logging trace fields its ids imply (unchanged when they imply none). */
export function withTraceFields(line: LogFields): LogFields {
  const fields = line as Record<string, unknown>;
  const traceId = typeof fields.traceId === 'string' ? fields.traceId : typeof fields.deliveryId === 'string' ? traceIdOfDelivery(fields.deliveryId) : undefined;
  if (traceId === undefined) return fields;
  const spanId = typeof fields.spanId === 'string' ? fields.spanId : undefined;
  return { ...fields, traceId, ...traceLogFields(traceId, spanId) };
}

export const info = (message: string, fields: LogFields = {}): void => base.info(message, withTraceFields(fields));
export const warn = (message: string, fields: LogFields = {}): void => base.warn(message, withTraceFields(fields));
export const error = (message: string, fields: LogFields = {}): void => base.error(message, withTraceFields(fields));
