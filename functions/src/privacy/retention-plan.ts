/**
 * The retention job's decisions, pure (docs/privacy.md#retention): what happens to a message, a
 * conversation, and when a workspace's next pass is due. ./retention.ts reads and writes.
 *
 * Why a message naming stored objects gets no TTL `expireAt`: TTL would delete the message at an
 * unknown moment (typically within a day after `expireAt`), and the message is the only thing that
 * names its images (and, through `attachmentId`, its reply's upload records). Deleting the objects
 * ahead of TTL deleted them early (for a short period, right after the message arrived); deleting
 * them after TTL is impossible (nothing names them any more). So the pass deletes such a message
 * itself once its period is over: its objects first, then the document.
 */

export const DAY_MS = 86_400_000;
/** How often a pass starts over a workspace whose period has not changed (from the start of the previous pass): daily. */
export const PASS_INTERVAL_MS = 24 * 3_600_000;

/** The `expireAt` (epoch ms) of a document of time `at` under `days`, or null for none. */
export const expiryOf = (at: number, days: number | null): number | null => (days === null ? null : at + days * DAY_MS);

/** What the pass does with one message. */
export type MessagePlan =
  /** Its `expireAt` becomes `expireAt` (null: none); TTL (or, locally, the pass) deletes it when due. */
  | { kind: 'stamp'; expireAt: number | null }
  /** It names stored objects and its period is over: delete the objects, then the document. */
  | { kind: 'deleteWithObjects' };

export interface MessageFacts {
  /** The message's time (epoch ms). */
  createdAt: number;
  /** A reply whose delivery is unfinished (or not created yet): never deleted by retention. */
  pendingReply: boolean;
  /** It names stored objects (images, or a reply's attachments). */
  namesObjects: boolean;
}

/**
 * A message without stored objects is stamped for TTL, as every other document. One that names
 * stored objects carries no `expireAt` (a stamp left by an earlier version is removed) and is
 * deleted by the pass once `createdAt + days` has passed, never before.
 */
export function messagePlan(message: MessageFacts, days: number | null, now: number): MessagePlan {
  const expireAt = message.pendingReply ? null : expiryOf(message.createdAt, days);
  if (!message.namesObjects) return { kind: 'stamp', expireAt };
  return expireAt !== null && expireAt <= now ? { kind: 'deleteWithObjects' } : { kind: 'stamp', expireAt: null };
}

/** What the pass does with a conversation document once it has visited its messages. */
export type ConversationPlan = { kind: 'keep' } | { kind: 'delete' };

/**
 * A conversation is deleted by the pass, never by TTL: its messages are found only through it, so
 * TTL deleting it first would leave a message that names stored objects (or a reply written just
 * before) where no pass looks again. It goes when its newest message is older than the period,
 * nothing in it is kept (an unfinished delivery or its reply) and no message naming objects is
 * left (they went first, in the same visit).
 */
export function conversationPlan(conversation: { newest: number; keep: boolean; objectMessagesLeft: number }, days: number | null, now: number): ConversationPlan {
  const expireAt = expiryOf(conversation.newest, days);
  return !conversation.keep && conversation.objectMessagesLeft === 0 && expireAt !== null && expireAt <= now ? { kind: 'delete' } : { kind: 'keep' };
}

/**
 * The `expireAt` of an address book entry of starts (`startAddresses`): it follows the conversation
 * it names. While that conversation exists (the customer may still be written to, a start may still
 * be unsent) the entry has none, so the next start to the address still finds it; once the pass
 * deleted the conversation (its newest message past the period) the entry's own time (`updatedAt`,
 * the start or its `complete`) plus the period applies, which is past by then as well.
 */
export function startAddressExpiry(entry: { updatedAt: number; conversationExists: boolean }, days: number | null): number | null {
  return entry.conversationExists ? null : expiryOf(entry.updatedAt, days);
}

/** `settings/retentionState`: where the pass is, and the period it applied last. */
export interface RetentionState {
  appliedDays: number | null;
  /** The next document id to look at in `phase` (a pass is in progress), or null. */
  cursor: string | null;
  /**
   * What the pass walks: the conversations, then the customers, then the address book of starts,
   * then the start requests (states written before the last two existed end after the customers).
   */
  phase: 'conversations' | 'customers' | 'startAddresses' | 'conversationStarts';
  lastPassFinishedAt: number;
  /** When the current (or last) pass started; absent in states written before it was kept. */
  lastPassStartedAt?: number;
}

/**
 * Whether a pass should run now: the period changed, one is in progress, or the last one started
 * `PASS_INTERVAL_MS` ago. Counting from the start (not the end) keeps the gap between two visits of
 * a conversation at about a day however long a pass over a large workspace takes.
 */
export function passDue(state: RetentionState | undefined, days: number | null, now: number): boolean {
  if (state === undefined) return days !== null;
  const lastStart = state.lastPassStartedAt ?? state.lastPassFinishedAt;
  return state.cursor !== null || state.appliedDays !== days || now - lastStart >= PASS_INTERVAL_MS;
}
