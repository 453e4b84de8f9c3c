/**
 * The channel's reply window (docs/contract.md#windows): when a conversation's window closes, and
 * whether a free-text reply is too late for it. Pure, `now` a parameter: the service's message
 * transaction (functions/src/messages/store.ts), its sequencing (functions/src/deliveries/sequencing.ts),
 * the connector's `window_closed` fail (functions/src/deliveries/transition.ts) and the SDK's test
 * service (a generated copy) all run these.
 */

import { effectiveClosesAt, windowClosesAt, WINDOW_MARGIN_MS, type ConversationWindow } from '../contract';

// The window's arithmetic is the contract's (shared with the console, which shows the time left).
export { effectiveClosesAt, windowClosesAt, WINDOW_MARGIN_MS, type ConversationWindow };

/** The code a reply too late for its window fails with, and the connector's `fail` code that closes the window. */
export const WINDOW_CLOSED = 'window_closed';

/** What the conversation knows of its window when a customer message arrives. */
export interface WindowBefore {
  /** The stored `window.closesAt` (epoch ms), or null when the conversation has none. */
  closesAt: number | null;
  /** The greatest customer `sentAt` before this message (epoch ms), or null. */
  latestSentAt: number | null;
}

/**
 * `closesAt` after a customer message sent at `sentAt` on a channel whose window is `seconds` long:
 * the newest customer message opens it from its own `sentAt`. An older message arriving late never
 * moves it (back, nor forward past a connector's `window_closed`); without a stored window the
 * latest `sentAt` known opens it.
 */
export function closesAtAfterMessage(before: WindowBefore, sentAt: number, seconds: number): number {
  if (before.closesAt !== null && before.latestSentAt !== null && sentAt <= before.latestSentAt) return before.closesAt;
  return windowClosesAt(Math.max(sentAt, before.latestSentAt ?? sentAt), seconds);
}

/**
 * Whether the window is closed at `at`: the integration declares a window (`windowSeconds`, null
 * when it declares none: nothing is ever closed) and the conversation's window (`effectiveClosesAt`)
 * has passed, or it has none because no customer has written.
 */
export function isWindowClosed(windowSeconds: number | null, conversation: ConversationWindow, at: number): boolean {
  if (windowSeconds === null) return false;
  const closesAt = effectiveClosesAt(conversation, windowSeconds);
  return closesAt === null || closesAt <= at;
}

/**
 * `closesAt` after the connector failed a delivery `window_closed` at `now`: the channel's word wins,
 * so the window is closed now, unless it was closed already (an earlier end stays).
 */
export function closesAtAfterConnectorClosed(closesAt: number | null, now: number): number {
  return closesAt !== null && closesAt < now ? closesAt : now;
}

/**
 * Whether a decision on delivery `d` is the connector's word that the window has closed: a reply's
 * delivery (not an edit's or unsend's, which are not windowed) ends `failed` with `window_closed`.
 */
export function failClosesWindow(d: { kind?: string | undefined }, next: { status: string; error: { code: string } | null } | null | undefined): boolean {
  return d.kind === undefined && next?.status === 'failed' && next.error?.code === WINDOW_CLOSED;
}
