/**
 * The conversation's integration says whether replies may carry files, and which (its
 * `replies.attachments`), whether sent replies may be edited or unsent (`replies.lifecycle`), and
 * the channel's reply window and templates (`channel`); followed live, so an admin's change (or a
 * connector's new declaration) shows without a reload.
 */
import type { Session } from './session';
import { subscribeReplyCapability, type ReplyCapability } from './thread-data';

export interface CapabilityWatch {
  /** Follows `integrationId` (once known; the same one again changes nothing). */
  watch(integrationId: string | undefined): void;
  destroy(): void;
}

export function capabilityWatch(
  session: Session,
  onCapability: (capability: ReplyCapability) => void,
  onRefused: (err: unknown) => void,
): CapabilityWatch {
  let watched: string | undefined;
  let unsubscribe: (() => void) | undefined;
  return {
    watch(integrationId) {
      if (integrationId === undefined || integrationId === '' || integrationId === watched) return;
      watched = integrationId;
      unsubscribe?.();
      unsubscribe = subscribeReplyCapability(session, integrationId, onCapability, onRefused);
    },
    destroy: () => unsubscribe?.(),
  };
}
