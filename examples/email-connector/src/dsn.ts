/**
 * Bounces and delivery status notifications (RFC 3464) -> receipts (pure).
 *
 * A reply is sent with the envelope sender `<bounce local part>+<deliveryId>@<domain>` and the
 * Message-ID `reply.<deliveryId>@<domain>`; a bounce comes back to that envelope sender, usually
 * as a `multipart/report; report-type=delivery-status` quoting the original headers. Either one
 * leads back to the delivery, without a store.
 */
import { deliveryIdFromBounceAddress, deliveryIdFromMessageId, normalizeMessageId } from './ids.js';
import { parseSmtpReply, smtpFailCode } from './smtp-status.js';

/** What the inbound server knows about a mail that may be a bounce. */
export interface BounceCandidate {
  /** The envelope sender; empty for the null sender `<>` that bounces use. */
  envelopeFrom: string;
  /** The envelope recipients. */
  recipients: readonly string[];
  /** Top-level content type, lower case (e.g. `multipart/report`). */
  contentType: string;
  /** Its `report-type` parameter, lower case. */
  reportType?: string | undefined;
  /** Text of the `message/delivery-status` part, when there is one. */
  deliveryStatus?: string | undefined;
  /** The returned original: a `text/rfc822-headers` or `message/rfc822` part's text. */
  returnedMessage?: string | undefined;
  /** The human-readable text of the mail. */
  text: string;
  /** Message-IDs of `In-Reply-To` and `References`. */
  relatedMessageIds: readonly string[];
}

export interface BounceSettings {
  domain: string;
  bounceLocalPart: string;
}

/** What a bounce says about one of our replies. */
export interface BounceReport {
  /** The delivery it is about; undefined when nothing in the bounce leads back to one. */
  deliveryId: string | undefined;
  /** Our Message-ID it quotes, when it quotes one. */
  providerMessageId: string | undefined;
  /**
   * `failed` (a permanent failure: a receipt), `delivered` (a success DSN), `delayed` (still
   * trying: nothing to report), `unrelated` (a mail to a bounce address that reports nothing,
   * e.g. an auto-reply: dropped).
   */
  status: 'failed' | 'delivered' | 'delayed' | 'unrelated';
  /** For `failed`: `smtp_5_1_1` (Status), `smtp_550` (Diagnostic-Code), else `bounced`. */
  code: string;
}

/** Header-style fields of RFC 822 text, continuation lines unfolded; one map per blank-line block. */
function parseFieldBlocks(text: string): Array<Map<string, string>> {
  const blocks: Array<Map<string, string>> = [];
  let current = new Map<string, string>();
  let last: string | undefined;
  for (const line of text.replace(/\r\n?/g, '\n').split('\n')) {
    if (line.trim() === '') {
      if (current.size > 0) blocks.push(current);
      current = new Map();
      last = undefined;
      continue;
    }
    if (/^[ \t]/.test(line) && last !== undefined) {
      current.set(last, `${current.get(last) ?? ''} ${line.trim()}`);
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    last = line.slice(0, colon).trim().toLowerCase();
    if (!current.has(last)) current.set(last, line.slice(colon + 1).trim());
  }
  if (current.size > 0) blocks.push(current);
  return blocks;
}

/** Whether a mail is a bounce or a DSN rather than a customer's message. */
function isBounce(candidate: BounceCandidate, settings: BounceSettings): boolean {
  if (candidate.contentType === 'multipart/report' && candidate.reportType === 'delivery-status') return true;
  return candidate.recipients.some((r) => deliveryIdFromBounceAddress(r, settings.bounceLocalPart, settings.domain) !== undefined);
}

function codeFromText(text: string): string | undefined {
  const full = /\b([45]\d\d)[ -]([45]\.\d{1,3}\.\d{1,3})\b/.exec(text);
  if (full !== null) return smtpFailCode({ basic: Number(full[1]), enhanced: full[2] });
  const enhanced = /\b(5\.\d{1,3}\.\d{1,3})\b/.exec(text);
  if (enhanced !== null) return smtpFailCode({ basic: 550, enhanced: enhanced[1] });
  const basic = /\b(5[0-5]\d)\b/.exec(text);
  return basic === null ? undefined : `smtp_${basic[1]}`;
}

/** Reads a bounce: which delivery, and what happened to it. Undefined when it is not a bounce. */
export function parseBounce(candidate: BounceCandidate, settings: BounceSettings): BounceReport | undefined {
  if (!isBounce(candidate, settings)) return undefined;

  // Which delivery: the VERP recipient, else our Message-ID quoted in the returned headers, the
  // bounce's own In-Reply-To/References, or anywhere in its text.
  let deliveryId: string | undefined;
  for (const r of candidate.recipients) deliveryId ??= deliveryIdFromBounceAddress(r, settings.bounceLocalPart, settings.domain);
  let providerMessageId: string | undefined;
  const quoted = candidate.returnedMessage === undefined ? undefined : parseFieldBlocks(candidate.returnedMessage)[0]?.get('message-id');
  const anywhere = [candidate.returnedMessage, candidate.text].join('\n').match(/<(?:reply|start)\.[^<>\s]+>/g) ?? [];
  for (const raw of [quoted, ...candidate.relatedMessageIds, ...anywhere]) {
    const id = normalizeMessageId(raw);
    if (id === undefined) continue;
    const fromId = deliveryIdFromMessageId(id, settings.domain);
    if (fromId === undefined || (deliveryId !== undefined && fromId !== deliveryId)) continue;
    deliveryId ??= fromId;
    providerMessageId = id;
    break;
  }

  // What happened: the machine-readable report when there is one (the first recipient block
  // with an Action), else the text of a plain bounce.
  if (candidate.deliveryStatus !== undefined) {
    const recipientBlocks = parseFieldBlocks(candidate.deliveryStatus).filter((b) => b.has('action'));
    const failed = recipientBlocks.find((b) => (b.get('action') ?? '').toLowerCase().startsWith('failed'));
    const block = failed ?? recipientBlocks[0];
    if (block !== undefined) {
      const action = (block.get('action') ?? '').toLowerCase();
      if (action.startsWith('delayed')) return { deliveryId, providerMessageId, status: 'delayed', code: 'delayed' };
      if (/^(delivered|relayed|expanded)/.test(action)) return { deliveryId, providerMessageId, status: 'delivered', code: 'delivered' };
      const status = /^([45]\.\d{1,3}\.\d{1,3})/.exec(block.get('status') ?? '')?.[1];
      const diagnostic = (block.get('diagnostic-code') ?? '').replace(/^smtp;\s*/i, '');
      const reply = parseSmtpReply(diagnostic);
      const basic = reply?.basic ?? 550;
      const code = status !== undefined ? smtpFailCode({ basic, enhanced: status }) : reply !== undefined ? smtpFailCode(reply) : 'bounced';
      return { deliveryId, providerMessageId, status: 'failed', code };
    }
  }
  const code = codeFromText(candidate.text);
  // A plain (non-DSN) bounce comes from the null sender; anything else without a failure code is
  // not a bounce (an auto-reply sent to the envelope sender must not fail a delivery).
  if (code === undefined && candidate.envelopeFrom !== '') return { deliveryId, providerMessageId, status: 'unrelated', code: 'unrelated' };
  return { deliveryId, providerMessageId, status: 'failed', code: code ?? 'bounced' };
}
