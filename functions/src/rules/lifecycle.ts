/**
 * The operator's edit or unsend of a sent reply (docs/contract.md#edits-and-unsends): the service's
 * own check of a request (`lifecycleVerdict`) and what the new delivery acts on (`lifecycleTarget`).
 * Pure. The service asks them in the reply trigger's creation transaction
 * (functions/src/deliveries/lifecycle.ts); the SDK's test service asks them in its `edit()` and
 * `unsend()`.
 */
import { codePointLength, REPLY_MAX_CODE_POINTS, type LifecycleKind, type LifecycleRefusal, type LifecycleWindow } from '../contract';
import type { DeliveryTarget } from './record';

/** What a request is checked against, as read in the creation transaction. */
export interface LifecycleFacts {
  kind: LifecycleKind;
  /** The kind's window; null when the integration does not take the kind or takes no replies at all. */
  window: LifecycleWindow | null;
  /** The reply's delivery as its mirror shows it (null: no mirror, the reply was never sequenced). */
  replyStatus: string | null;
  /** When the reply's delivery was sent (epoch ms), or null when unknown. */
  sentAt: number | null;
  /** The reply's text as written. */
  replyText: unknown;
  /** The reply was unsent. */
  unsent: boolean;
  /** An unsend of the reply is queued, on its way or sent. */
  unsendTaken: boolean;
  /** The latest request time of this kind already taken (a delivery), or null. */
  latestTaken: number | null;
}

export type LifecycleVerdict = { accepted: true; text: string } | { accepted: false; code: LifecycleRefusal };

/**
 * The service's own check of a request (the rules checked the same at write time; the trigger may
 * run later, and the integration may have changed since). The window is measured to the request's
 * server time, not to when the trigger ran. An edit's text is a reply's text (1 to
 * REPLY_MAX_CODE_POINTS code points) of a reply that has text; an unsend's delivery has none.
 */
export function lifecycleVerdict(facts: LifecycleFacts, request: { requestedAt: number; text?: unknown }): LifecycleVerdict {
  if (facts.window === null) return { accepted: false, code: 'lifecycle_disabled' };
  if (facts.replyStatus !== 'sent') return { accepted: false, code: 'reply_not_sent' };
  if (facts.unsent || facts.unsendTaken) return { accepted: false, code: 'reply_unsent' };
  if (facts.sentAt === null || request.requestedAt > facts.sentAt + facts.window.windowSeconds * 1000) return { accepted: false, code: 'edit_window_passed' };
  let text = '';
  if (facts.kind === 'edit') {
    const edited = request.text;
    const replyHasText = typeof facts.replyText === 'string' && facts.replyText.length > 0;
    if (!replyHasText || typeof edited !== 'string' || edited.length === 0 || codePointLength(edited) > REPLY_MAX_CODE_POINTS) return { accepted: false, code: 'invalid_edit' };
    text = edited;
  }
  if (facts.latestTaken !== null && request.requestedAt < facts.latestTaken) return { accepted: false, code: 'superseded' };
  return { accepted: true, text };
}


const stringsOf = (value: unknown): string[] => (Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []);

/**
 * What an edit or unsend acts on: the reply's sent delivery and the provider ids its connector
 * reported (`complete`), per part when it reported parts, only the parts it sent. A report of no
 * sent part (or none at all) gives no `parts`: the claim's target then has exactly the ids.
 */
export function lifecycleTarget(deliveryId: string, providerMessageIds: readonly string[], reported: ReadonlyArray<{ part?: unknown; status?: unknown; providerMessageIds?: unknown }>): DeliveryTarget {
  const parts = reported
    .filter((p) => p.status === 'sent' && typeof p.part === 'string')
    .map((p) => ({ part: p.part as string, providerMessageIds: stringsOf(p.providerMessageIds) }));
  return parts.length > 0 ? { deliveryId, providerMessageIds: [...providerMessageIds], parts } : { deliveryId, providerMessageIds: [...providerMessageIds] };
}
