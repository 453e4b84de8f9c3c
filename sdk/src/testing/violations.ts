/**
 * The delivery-rules checker (decision 16): which connector rules of docs/contract.md#connector-rules
 * a recorded run broke, each named, with the calls that show it. A pure function of the calls
 * (requests and answers, in arrival order): the test service's `violations()` and the conformance
 * runner both call it, and a developer can run it over any call log of the same shape.
 *
 * Every rule is written so that the SDK's own behaviour never trips it: its transport retries the
 * same request (same `requestId`, `eventId`, lease) after `Retry-After` (capped at
 * `MAX_RETRY_AFTER_MS`); `processDelivery` starts before the provider call, fetches a reply's files
 * under the lease before it completes, and after a refused extension lets the provider call finish
 * and reports its outcome once (docs/contract.md#extend).
 */
import { DEFAULT_RETRY_LIMIT, MAX_RETRY_AFTER_MS, parseRetryAfterMs } from '../internal/retry.js';
import type { OperationId, RecordedCall, Violation } from './types.js';

export type ViolationRule = Violation['rule'];

/** Each rule, in one line: what it means (the conformance runner prints it; docs/conformance.md explains how to fix each). */
export const VIOLATION_RULES: Readonly<Record<ViolationRule, string>> = Object.freeze({
  complete_without_sending_start: 'complete was called under a lease whose start had not answered `sending`: never call the provider before start says `sending`',
  provider_work_after_sent: 'start answered `sent` (the reply went out before), yet the connector went on under that lease (start again, extend, fetch, complete or fail): do not send',
  call_after_lease_lost: 'a call answered 409 `lease_lost` / `delivery_finished`, yet the connector used that lease again: only a new claim may follow',
  retry_before_retry_after: 'a request answered 429/503 with `Retry-After` was sent again before that time had passed',
  claim_retry_new_request_id: 'a claim answered 429/503 was retried with a new `requestId`: a retried claim must reuse it (a lost answer would otherwise leave the lease busy)',
  message_retry_new_event_id: 'an incoming message answered 429/5xx was sent again with a new `eventId` (same content): reuse the eventId so the service can tell a retry from a new message',
  start_after_skip: 'start was called after the claim answered `skip`: acknowledge the notification and do nothing else',
  complete_without_fetching_files: 'complete of a reply with files under a lease that never fetched every file it reports whole (200, not cut short): fetch and check each file before sending',
  erasure_not_acknowledged: 'an erasure was listed to the connector and never acknowledged within the run: purge the customer, then acknowledge',
  edit_sent_as_new_message:
    'an edit or unsend delivery was completed with provider ids none of which is the reply\'s (the claim\'s `target`): change or delete the sent message itself, never send the new text as a new message (complete with the target\'s ids when the provider returns none)',
});

export interface FindViolationsOptions {
  /** The run is over: also report what needed the end of the run to be seen (an erasure listed and never acknowledged). */
  final: boolean;
  /**
   * How much earlier than `Retry-After` a retry may arrive and still count as waiting (timer and
   * clock granularity); default 100 ms.
   */
  retryToleranceMs?: number;
  /**
   * The longest `Retry-After` a client is expected to honour in full; a longer one counts as this
   * much (default the SDK's `MAX_RETRY_AFTER_MS`, 30 s).
   */
  maxRetryAfterMs?: number;
  /**
   * How many times a claim's `requestId` is tried before a connector may give that claim up and
   * make a new claim attempt with a new `requestId` (default the SDK's: 1 + `DEFAULT_RETRY_LIMIT`).
   */
  claimAttemptsBeforeNewRequest?: number;
  /** How close a same-content message with a new `eventId` must follow the refused one to count as its retry (default 60 s). */
  messageRetryWindowMs?: number;
}

/** Statuses after which a client retries the same request. */
const RETRYABLE = new Set([429, 502, 503, 504]);
/** Operations that act under a lease (`deliveryId` + `leaseId` in the body). */
const LEASED_OPERATIONS: ReadonlySet<OperationId> = new Set(['startDelivery', 'extendDeliveryLease', 'completeDelivery', 'failDelivery', 'getDeliveryAttachment']);
/** Lease operations that mean provider work (or its report) after `start` answered `sent`. */
const PROVIDER_WORK: ReadonlySet<OperationId> = LEASED_OPERATIONS;

type Json = Record<string, unknown>;

function obj(v: unknown): Json | undefined {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : undefined;
}
function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}
function field(call: RecordedCall, name: string): string | undefined {
  return str(obj(call.request.body)?.[name]);
}
function answerField(call: RecordedCall, name: string): string | undefined {
  return str(obj(call.response.body)?.[name]);
}
/** The error envelope's `error.code` of the answer. */
function errorCode(call: RecordedCall): string | undefined {
  return str(obj(obj(call.response.body)?.error)?.code);
}
function header(headers: Readonly<Record<string, string>>, name: string): string | undefined {
  const wanted = name.toLowerCase();
  for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() === wanted) return v;
  return undefined;
}
function leaseKey(deliveryId: string, leaseId: string): string {
  return JSON.stringify([deliveryId, leaseId]);
}
/** Deep equality of parsed JSON values (key order ignored). */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => sameJson(x, b[i]));
  }
  const oa = obj(a);
  const ob = obj(b);
  if (oa === undefined || ob === undefined) return false;
  const ka = Object.keys(oa).filter((k) => oa[k] !== undefined);
  const kb = Object.keys(ob).filter((k) => ob[k] !== undefined);
  return ka.length === kb.length && ka.every((k) => sameJson(oa[k], ob[k]));
}
/** A message request's content: everything but its `eventId` (multipart `parts` included). */
function messageContent(call: RecordedCall): unknown {
  const body = obj(call.request.body);
  if (body === undefined) return undefined;
  const { eventId: _eventId, ...rest } = body;
  return rest;
}

/** Every provider id of a claim's `target` (its own and its parts'). */
function targetIdsOf(target: unknown): Set<string> {
  const t = obj(target);
  const ids = new Set<string>();
  const add = (list: unknown): void => {
    if (Array.isArray(list)) for (const id of list) if (typeof id === 'string') ids.add(id);
  };
  add(t?.providerMessageIds);
  if (Array.isArray(t?.parts)) for (const part of t.parts) add(obj(part)?.providerMessageIds);
  return ids;
}

/**
 * What makes two calls "the same request" for the retry rules: the operation and the identity its
 * body carries. `undefined` for calls no rule follows (lists, which loops call on their own timers).
 */
function retryKey(call: RecordedCall): string | undefined {
  const op = call.operationId;
  if (op === null || call.integrationId === null) return undefined;
  const b = obj(call.request.body);
  const parts: unknown[] = [call.integrationId, op];
  switch (op) {
    case 'sendMessage':
    case 'sendMessageEvent':
      parts.push(b?.eventId);
      break;
    case 'claimDelivery':
      parts.push(b?.deliveryId, b?.requestId);
      break;
    case 'startDelivery':
    case 'extendDeliveryLease':
    case 'completeDelivery':
    case 'failDelivery':
      parts.push(b?.deliveryId, b?.leaseId);
      break;
    case 'getDeliveryAttachment':
      parts.push(b?.deliveryId, b?.leaseId, b?.attachmentId);
      break;
    case 'reportDeliveryReceipt':
      parts.push(b?.deliveryId, b?.status, b?.providerMessageId);
      break;
    case 'acknowledgeErasure':
      parts.push(b?.erasureId);
      break;
    case 'listPendingDeliveries':
    case 'listPendingErasures':
      return undefined;
  }
  return parts.some((p) => typeof p !== 'string') ? undefined : JSON.stringify(parts);
}

/**
 * The delivery rules the calls break (decision 16), oldest evidence first. Pure: the same calls
 * give the same violations. Calls without a known integration (a missing or unknown key) are
 * ignored: they reached nothing.
 */
export function findViolations(calls: readonly RecordedCall[], options: FindViolationsOptions): Violation[] {
  const tolerance = options.retryToleranceMs ?? 100;
  const maxRetryAfter = options.maxRetryAfterMs ?? MAX_RETRY_AFTER_MS;
  const claimAttempts = options.claimAttemptsBeforeNewRequest ?? DEFAULT_RETRY_LIMIT + 1;
  const messageWindow = options.messageRetryWindowMs ?? 60_000;
  const ordered = calls.filter((c) => c.integrationId !== null).slice().sort((a, b) => a.seq - b.seq);
  const out: Violation[] = [];
  const add = (v: Violation): void => {
    out.push(v);
  };

  // Per lease (integration + delivery + lease): what start answered, and whether the lease was refused.
  const sendingStartAt = new Map<string, RecordedCall>();
  const sentStart = new Map<string, RecordedCall>();
  // `report`: the one outcome report (complete or fail, and its retries) allowed after a refused extension.
  const refused = new Map<string, { call: RecordedCall; report?: string | undefined }>();
  // Per integration + delivery: the claims, in order (for skip and requestId rules), and the
  // claims that granted a lease (for the files rule).
  const claims = new Map<string, RecordedCall[]>();
  const grantedBy = new Map<string, RecordedCall>();
  // Files fetched (200) per lease: attachmentId -> the fetch.
  const fetched = new Map<string, Map<string, RecordedCall>>();
  // Retry rules: the last answer per request key that asked for a retry.
  const awaitingRetry = new Map<string, RecordedCall>();
  // Refused messages (429/5xx) per integration, for the eventId rule.
  const refusedMessages: RecordedCall[] = [];
  const reportedMessageRetry = new Set<number>();
  // Erasures listed (erasureId -> the list call) and acknowledged, per integration.
  const listedErasures = new Map<string, RecordedCall>();
  const acknowledged = new Set<string>();

  for (const call of ordered) {
    const integration = call.integrationId ?? '';
    const op = call.operationId;
    const deliveryId = field(call, 'deliveryId');
    const leaseId = field(call, 'leaseId');
    const status = call.response.status;
    const key = deliveryId !== undefined && leaseId !== undefined ? `${integration}\u0000${leaseKey(deliveryId, leaseId)}` : undefined;
    const deliveryKey = deliveryId === undefined ? undefined : `${integration}\u0000${deliveryId}`;

    // --- a retry sooner than Retry-After (any operation with an identity)
    const rkey = retryKey(call);
    if (rkey !== undefined) {
      const previous = awaitingRetry.get(rkey);
      if (previous !== undefined) {
        awaitingRetry.delete(rkey);
        const after = parseRetryAfterMs(header(previous.response.headers, 'retry-after'), previous.answeredAt);
        if (after !== undefined) {
          const due = previous.answeredAt + Math.min(after, maxRetryAfter);
          if (call.receivedAt < due - tolerance) {
            add({
              rule: 'retry_before_retry_after',
              message: `${op} was sent again ${call.receivedAt - previous.answeredAt} ms after a ${previous.response.status} that said Retry-After: ${header(previous.response.headers, 'retry-after')} s; wait that long before retrying`,
              ...(deliveryId === undefined ? {} : { deliveryId }),
              evidence: [previous.seq, call.seq],
            });
          }
        }
      }
      if (status === 429 || status === 503) awaitingRetry.set(rkey, call);
    }

    // --- lease rules (start, extend, complete, fail, attachment)
    if (op !== null && LEASED_OPERATIONS.has(op) && key !== undefined && deliveryId !== undefined) {
      const sent = sentStart.get(key);
      const lost = refused.get(key);
      // One call breaks one rule: a call after `sent` or after a refusal is named for that only.
      const before = out.length;
      if (sent !== undefined && PROVIDER_WORK.has(op)) {
        add({
          rule: 'provider_work_after_sent',
          message: `start answered \`sent\` for delivery ${deliveryId} (it went out before), yet ${op} followed under that lease; stop there and acknowledge`,
          deliveryId,
          evidence: [sent.seq, call.seq],
        });
      } else if (lost !== undefined) {
        // After a refused extension (or a file fetch refused mid-send) the provider call may
        // finish and its outcome be reported once (docs/contract.md#extend); anything else under
        // a refused lease is a violation.
        const refusedOp = lost.call.operationId;
        const isReport = op === 'completeDelivery' || op === 'failDelivery';
        const reportAllowed = (refusedOp === 'extendDeliveryLease' || refusedOp === 'getDeliveryAttachment') && isReport && (lost.report === undefined || lost.report === retryKey(call));
        if (reportAllowed) lost.report = retryKey(call);
        else {
          add({
            rule: 'call_after_lease_lost',
            message: `${lost.call.operationId} of delivery ${deliveryId} answered 409 \`${errorCode(lost.call) ?? 'lease_lost'}\`, yet ${op} followed under the same lease; drop that lease (only a new claim may follow)`,
            deliveryId,
            evidence: [lost.call.seq, call.seq],
          });
        }
      }

      if (op === 'startDelivery' && status === 200) {
        const answer = answerField(call, 'status');
        if (answer === 'sending' && !sendingStartAt.has(key)) sendingStartAt.set(key, call);
        if (answer === 'sent' && !sentStart.has(key)) sentStart.set(key, call);
      }

      if (op === 'startDelivery' && deliveryKey !== undefined) {
        // --- start after a skip: the latest claim answered before this start said `skip`.
        const answered = (claims.get(deliveryKey) ?? []).filter((c) => c.answeredAt <= call.receivedAt && c.response.status === 200);
        const latest = answered.at(-1);
        if (latest !== undefined && answerField(latest, 'status') === 'skip') {
          add({
            rule: 'start_after_skip',
            message: `the claim of delivery ${deliveryId} answered \`skip\` (${answerField(latest, 'reason') ?? 'no reason'}), yet start followed; acknowledge the notification and do nothing else`,
            deliveryId,
            evidence: [latest.seq, call.seq],
          });
        }
      }

      // A fetch counts when its bytes arrived whole: the service cuts the answer short when the
      // stored bytes do not match the file's SHA-256 (docs/contract.md#fetch-an-attachment).
      if (op === 'getDeliveryAttachment' && status === 200 && obj(call.response.body)?.cutOff !== true) {
        const attachmentId = field(call, 'attachmentId');
        if (attachmentId !== undefined) {
          const files = fetched.get(key) ?? new Map<string, RecordedCall>();
          files.set(attachmentId, call);
          fetched.set(key, files);
        }
      }

      if (op === 'completeDelivery' && out.length === before) {
        // --- complete without a `sending` start under that lease
        const start = sendingStartAt.get(key);
        if (start === undefined || start.answeredAt > call.receivedAt) {
          add({
            rule: 'complete_without_sending_start',
            message: `complete of delivery ${deliveryId} came under a lease whose start had not answered \`sending\`; call start first and call the provider only after \`sending\``,
            deliveryId,
            evidence: start === undefined ? [call.seq] : [start.seq, call.seq],
          });
        }
        // --- complete of a reply with files not fetched under that lease
        const claim = grantedBy.get(key);
        // --- an edit / unsend completed as a new message: none of the ids is the target's
        const granted = obj(claim?.response.body);
        const kind = str(granted?.kind);
        const targetIds = targetIdsOf(granted?.target);
        const reported = obj(call.request.body)?.providerMessageIds;
        if (claim !== undefined && kind !== undefined && targetIds.size > 0 && Array.isArray(reported) && !reported.some((id) => typeof id === 'string' && targetIds.has(id))) {
          add({
            rule: 'edit_sent_as_new_message',
            message: `complete of ${kind} delivery ${deliveryId} reports provider ids (${reported.join(', ')}) none of which is the reply's (${[...targetIds].join(', ')}): the ${kind} must change the sent message, not send a new one`,
            deliveryId,
            evidence: [claim.seq, call.seq],
          });
        }
        const listed = obj(obj(claim?.response.body)?.message)?.attachments;
        if (claim !== undefined && Array.isArray(listed)) {
          const failedParts = new Set<string>();
          const parts = obj(call.request.body)?.parts;
          if (Array.isArray(parts)) {
            for (const p of parts) {
              const part = obj(p);
              if (part?.status === 'failed' && typeof part.part === 'string') failedParts.add(part.part);
            }
          }
          const files = fetched.get(key) ?? new Map<string, RecordedCall>();
          const missing = listed
            .map((a) => str(obj(a)?.attachmentId))
            .filter((id): id is string => id !== undefined && !failedParts.has(id) && !files.has(id));
          if (missing.length > 0) {
            add({
              rule: 'complete_without_fetching_files',
              message: `complete of delivery ${deliveryId} reports files it never fetched under its lease (${missing.join(', ')}); fetch each file and check its SHA-256 before sending, or report the part failed`,
              deliveryId,
              evidence: [claim.seq, call.seq],
            });
          }
        }
      }

      if (status === 409) {
        const code = errorCode(call);
        if ((code === 'lease_lost' || code === 'delivery_finished') && !refused.has(key)) {
          // A refused report after a refused extension is itself the end of that lease.
          refused.set(key, { call });
        }
      }
    }

    // --- claims: skips, granted leases, and a retry with a new requestId
    if (op === 'claimDelivery' && deliveryKey !== undefined) {
      const list = claims.get(deliveryKey) ?? [];
      const requestId = field(call, 'requestId');
      const previous = list.at(-1);
      if (previous !== undefined && RETRYABLE.has(previous.response.status) && errorCode(previous) !== 'lease_busy') {
        const previousId = field(previous, 'requestId');
        const tries = list.filter((c) => field(c, 'requestId') === previousId).length;
        if (previousId !== undefined && requestId !== previousId && tries < claimAttempts) {
          add({
            rule: 'claim_retry_new_request_id',
            message: `the claim of delivery ${deliveryId} answered ${previous.response.status} and was retried with a new requestId; send the same request again (same requestId) after Retry-After`,
            ...(deliveryId === undefined ? {} : { deliveryId }),
            evidence: [previous.seq, call.seq],
          });
        }
      }
      list.push(call);
      claims.set(deliveryKey, list);
      const granted = answerField(call, 'leaseId');
      if (status === 200 && answerField(call, 'status') === 'ready' && granted !== undefined && deliveryId !== undefined) {
        grantedBy.set(`${integration}\u0000${leaseKey(deliveryId, granted)}`, call);
      }
    }

    // --- a message retried with a new eventId
    if (op === 'sendMessage') {
      const eventId = field(call, 'eventId');
      const content = messageContent(call);
      for (const earlier of refusedMessages) {
        if (reportedMessageRetry.has(earlier.seq) || earlier.integrationId !== call.integrationId) continue;
        if (call.receivedAt - earlier.answeredAt > messageWindow) continue;
        const earlierId = field(earlier, 'eventId');
        if (earlierId !== undefined && eventId !== undefined && earlierId !== eventId && sameJson(messageContent(earlier), content)) {
          reportedMessageRetry.add(earlier.seq);
          add({
            rule: 'message_retry_new_event_id',
            message: `an incoming message answered ${earlier.response.status} was sent again with a new eventId (${earlierId} -> ${eventId}); a retry must reuse the eventId`,
            evidence: [earlier.seq, call.seq],
          });
        }
      }
      if (status === 429 || status >= 500) refusedMessages.push(call);
    }

    // --- erasures listed and acknowledged
    if (op === 'listPendingErasures' && status === 200) {
      const listed = obj(call.response.body)?.erasures;
      if (Array.isArray(listed)) {
        for (const e of listed) {
          const id = str(obj(e)?.erasureId);
          if (id !== undefined && !listedErasures.has(`${integration}\u0000${id}`)) listedErasures.set(`${integration}\u0000${id}`, call);
        }
      }
    }
    if (op === 'acknowledgeErasure' && status === 200) {
      const id = field(call, 'erasureId');
      if (id !== undefined) acknowledged.add(`${integration}\u0000${id}`);
    }
  }

  if (options.final) {
    for (const [key, list] of listedErasures) {
      if (acknowledged.has(key)) continue;
      const erasureId = key.slice(key.indexOf('\u0000') + 1);
      add({
        rule: 'erasure_not_acknowledged',
        message: `erasure ${erasureId} was listed to the connector and never acknowledged; delete your copies of that customer, then acknowledge it`,
        evidence: [list.seq],
      });
    }
  }
  return out.sort((a, b) => (a.evidence.at(-1) ?? 0) - (b.evidence.at(-1) ?? 0));
}
