/**
 * The channel's reply window as a thread shows it, the pure part (no DOM): whether free text may
 * go out now, the time left in words, and why a reply the service refused before publishing
 * failed. The conversation keeps `window.closesAt` (the customer's latest message's own time plus
 * the channel's window, less a minute of margin: docs/data-model.md); time is a parameter (`now`).
 */
import { effectiveClosesAt } from '../../functions/src/contract';

/** What the composer offers: free text (no window, or an open one) or only templates. */
export type WindowState =
  | { kind: 'none' }
  | { kind: 'open'; closesAtMs: number; leftMs: number }
  /** `closesAtMs` undefined: a desk-started conversation the customer has not answered yet. */
  | { kind: 'closed'; closesAtMs: number | undefined };

/**
 * The window at `now`, as the service decides it (functions/src/contract/index.ts
 * `effectiveClosesAt`): none when the integration declares no window (`windowSeconds` null); else
 * open until the stored `closesAt` or, without one, until the customer's latest `sentAt` + the window
 * - the margin; closed after, and when no customer has written (a desk-started conversation).
 */
export function windowState(windowSeconds: number | null, conversation: { closesAtMs: number | undefined; lastCustomerSentAtMs: number | undefined }, now: number): WindowState {
  if (windowSeconds === null) return { kind: 'none' };
  const closesAtMs = effectiveClosesAt({ closesAt: conversation.closesAtMs ?? null, lastCustomerSentAt: conversation.lastCustomerSentAtMs ?? null }, windowSeconds) ?? undefined;
  if (closesAtMs === undefined) return { kind: 'closed', closesAtMs: undefined };
  return closesAtMs <= now ? { kind: 'closed', closesAtMs } : { kind: 'open', closesAtMs, leftMs: closesAtMs - now };
}

/** 90061000 -> "1 d 1 h", 4_320_000 -> "1 h 12 min", 725_000 -> "12 min 5 s", 45_000 -> "45 s" (rounded down: never more than is left). */
export function formatTimeLeft(ms: number): string {
  const total = Math.max(0, Math.floor(ms / 1000));
  const days = Math.floor(total / 86_400);
  const hours = Math.floor((total % 86_400) / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const seconds = total % 60;
  if (days > 0) return hours > 0 ? `${days} d ${hours} h` : `${days} d`;
  if (hours > 0) return minutes > 0 ? `${hours} h ${minutes} min` : `${hours} h`;
  if (minutes > 0) return seconds > 0 ? `${minutes} min ${seconds} s` : `${minutes} min`;
  return `${seconds} s`;
}

/** The thread's line about the window; empty when the channel has none. */
export function windowText(state: WindowState): string {
  switch (state.kind) {
    case 'none':
      return '';
    case 'open':
      return `Reply window: ${formatTimeLeft(state.leftMs)} left for free text.`;
    case 'closed':
      return state.closesAtMs === undefined
        ? 'Window closed: the customer has not written yet, so the channel takes only a template.'
        : 'Window closed: the channel takes only a template until the customer writes again.';
  }
}

/**
 * Why a reply (or a start) failed, in words, for the codes the console knows; undefined for the
 * others (the code itself is shown beside the status in every case).
 */
export function failureText(code: string | undefined): string | undefined {
  switch (code) {
    case 'window_closed':
      return "Not sent: the channel's reply window had closed. Send a template instead.";
    case 'template_invalid':
      return 'Not sent: the channel does not declare this template (or its params changed). Choose a template again.';
    case 'recipient_unreachable':
      return 'Not sent: the channel cannot reach this address.';
    case 'replies_disabled':
      return "Not sent: the integration's replies are turned off.";
    default:
      return undefined;
  }
}
