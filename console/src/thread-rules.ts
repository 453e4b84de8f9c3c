/**
 * A thread's replies as the after-the-send rules (lifecycle.ts) see them, and what those rules
 * decide at a given time: Edit and Unsend come and go as their windows pass, without a snapshot.
 */
import { canRequest, type LifecycleCapability, type LifecycleReply } from './lifecycle';
import type { OutboundMessage, ThreadMessage } from './thread-data';

/** The rules' view of a reply (lifecycle.ts) from the thread's shape. */
export function lifecycleReply(m: OutboundMessage): LifecycleReply {
  return {
    text: m.text,
    status: m.delivery?.status,
    sentAtMs: m.delivery?.sentAtMs,
    unsentAtMs: m.unsentAtMs,
    edits: m.edits,
    unsends: m.unsends,
    editRequest: m.editRequest,
    unsendRequest: m.unsendRequest,
  };
}

/** Which replies are offered Edit and Unsend at `at`, one mark each: the view re-renders when this changes. */
export function timeRulesKey(messages: readonly ThreadMessage[], lifecycle: LifecycleCapability | undefined, at: number): string {
  return messages
    .map((m) => (m.direction === 'outbound' ? `${canRequest(lifecycleReply(m), lifecycle, 'edit', at) ? 'e' : '-'}${canRequest(lifecycleReply(m), lifecycle, 'unsend', at) ? 'u' : '-'}` : ''))
    .join('');
}
