/**
 * Which operator replies need an operator's attention (the console's "failed" badge and filter,
 * docs/console.md#the-queue): a reply whose delivery ended `failed`, or is `unknown` (the channel
 * may or may not have it). Not a reply an operator cancelled (`cancelled`: they meant it) nor one
 * an erasure ended (`erased`: nothing is left to act on). Each conversation counts its replies in
 * this state (`failedReplies`); every write of a reply's mirror adds the difference it makes.
 */

/** Failure codes that need no one's attention. */
const SETTLED_FAILURE_CODES: ReadonlySet<string> = new Set(['cancelled', 'erased']);

/** A reply's delivery state as its mirror shows it (null: none yet, e.g. before sequencing). */
export interface MirrorState {
  status: string | null;
  code: string | null;
}

/** Whether a reply in this state needs attention. */
export function needsAttention(state: MirrorState | null): boolean {
  if (state === null) return false;
  if (state.status === 'unknown') return true;
  return state.status === 'failed' && (state.code === null || !SETTLED_FAILURE_CODES.has(state.code));
}

/** What a mirror write changes in its conversation's count of replies that need attention: -1, 0 or +1. */
export function attentionDelta(before: MirrorState | null, after: MirrorState | null): -1 | 0 | 1 {
  const was = needsAttention(before);
  const is = needsAttention(after);
  return was === is ? 0 : is ? 1 : -1;
}
