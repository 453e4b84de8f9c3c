/**
 * SMTP replies -> the delivery outcomes of the connector API (pure).
 *
 * | What happened while sending a reply                         | outcome   | code                                   |
 * |-------------------------------------------------------------|-----------|----------------------------------------|
 * | the relay answered 4xx (at any step)                        | `retry`   | `smtp_4_7_1` (enhanced status) or `smtp_451`, with the delay the relay stated, else the service's backoff |
 * | the relay answered 5xx (at any step)                        | `failed`  | `smtp_5_1_1` or `smtp_550`             |
 * | no connection, or it broke before the DATA command was sent | `retry`   | `smtp_connection_failed` / `smtp_timeout` |
 * | the connection broke or timed out after DATA was sent       | `unknown` | `smtp_connection_lost_after_data` / `smtp_timeout_after_data` |
 *
 * After DATA the relay may have accepted the message even though its answer never arrived, so
 * that case is never retried automatically (the operator decides; the Message-ID stays the same,
 * so a repeated mail is recognisable). Before DATA nothing can have been accepted.
 */

type SmtpOutcome = 'retry' | 'failed' | 'unknown';

export interface SmtpFailure {
  outcome: SmtpOutcome;
  /** A fail code of the API (`^[a-z][a-z0-9_]*$`). */
  code: string;
  /** Only for `retry`, when the relay stated how long to wait. */
  retryAfterMs?: number;
}

/** The parts of an SMTP reply line that matter: `451 4.7.1 Try again later`. */
export interface SmtpReply {
  /** The basic three-digit code. */
  basic: number;
  /** The enhanced status code (RFC 3463), e.g. `4.7.1`, when the reply has one. */
  enhanced?: string;
  text: string;
}

/** Parses the first line of an SMTP reply; undefined when it does not start with a 2xx-5xx code. */
export function parseSmtpReply(response: string | undefined): SmtpReply | undefined {
  if (typeof response !== 'string') return undefined;
  const match = /^([2-5]\d\d)(?:[ -]+(([245])\.\d{1,3}\.\d{1,3})\b)?[ -]?(.*)$/s.exec(response.trim());
  if (match === null) return undefined;
  const basic = Number(match[1]);
  const rest = (match[4] ?? '').trim();
  // An enhanced code whose class disagrees with the basic code is not trusted (RFC 3463 section 2): it stays text.
  if (match[2] !== undefined && match[3] === String(basic)[0]) return { basic, enhanced: match[2], text: rest };
  return { basic, text: match[2] === undefined ? rest : `${match[2]} ${rest}`.trim() };
}

/** `smtp_5_1_1` from an enhanced status, else `smtp_550` from the basic code. */
export function smtpFailCode(reply: { basic: number; enhanced?: string | undefined }): string {
  return reply.enhanced === undefined ? `smtp_${reply.basic}` : `smtp_${reply.enhanced.replace(/\./g, '_')}`;
}

/** Most the connector asks the service to wait (the API's limit on `retryAfterMs`: one hour). */
const MAX_RETRY_AFTER_MS = 3_600_000;

/**
 * The delay a relay states in a temporary rejection, e.g. "try again in 30 seconds",
 * "greylisted, retry after 5 minutes", "please wait 120s". Undefined when it states none.
 */
export function statedRetryDelayMs(text: string): number | undefined {
  const match = /(?:try again|retry|wait|greylist\w*|deferred|come back)\D{0,30}?(\d{1,6})\s*(seconds?|secs?|s|minutes?|mins?|m|hours?|h)\b/i.exec(text);
  if (match === null) return undefined;
  const amount = Number(match[1]);
  const unit = (match[2] ?? 's').toLowerCase();
  const factor = unit.startsWith('h') ? 3_600_000 : unit.startsWith('m') ? 60_000 : 1_000;
  return Math.min(MAX_RETRY_AFTER_MS, amount * factor);
}

/** What the transport knows about a failed send. */
export interface SendFailureFacts {
  /** The relay's reply that ended the attempt, if one arrived (e.g. `550 5.1.1 No such user`). */
  response?: string | undefined;
  /** Whether the DATA command had been written to the relay when the attempt ended. */
  dataSent: boolean;
  /** Whether the attempt ended by a timeout rather than a closed connection or a reply. */
  timedOut?: boolean;
}

/** The outcome and code of a failed send (see the table at the top of this file). */
export function classifySendFailure(facts: SendFailureFacts): SmtpFailure {
  const reply = parseSmtpReply(facts.response);
  if (reply !== undefined && reply.basic >= 400) {
    if (reply.basic >= 500) return { outcome: 'failed', code: smtpFailCode(reply) };
    const failure: SmtpFailure = { outcome: 'retry', code: smtpFailCode(reply) };
    const delay = statedRetryDelayMs(reply.text);
    if (delay !== undefined) failure.retryAfterMs = delay;
    return failure;
  }
  if (facts.dataSent) return { outcome: 'unknown', code: facts.timedOut === true ? 'smtp_timeout_after_data' : 'smtp_connection_lost_after_data' };
  return { outcome: 'retry', code: facts.timedOut === true ? 'smtp_timeout' : 'smtp_connection_failed' };
}
