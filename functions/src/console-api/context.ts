/**
 * What a console endpoint (./upload.ts, ./media.ts) is given by the console function (./http.ts).
 * Its own module so that the endpoints do not import the function that imports them (an import
 * cycle, docs/architecture.md#dependency-direction).
 */
import type { Deadline } from '../platform/http/deadline';

/** What a console endpoint is given: the verified caller, the request's budget and its log fields. */
export interface ConsoleContext {
  uid: string;
  deadline: Deadline;
  /** Fields added to the request's log line (ids, sizes; never a token, a name or the bytes). */
  logFields: Record<string, string | number | boolean>;
}
