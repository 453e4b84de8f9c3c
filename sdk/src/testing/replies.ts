/**
 * An operator reply's history as the console's mirror reads it off the deliveries: the reply's
 * own deliveries (a resend's last), when it was sent and unsent, and its edit / unsend requests.
 */
import { LIFECYCLE_KINDS } from '../internal/contract.generated.js';
import { isTerminal, type DeliveryRecord } from '../internal/rules/record.js';
import type { ServiceState, StoredReply } from './state.js';
import type { ReplyEditView, ReplyHistories, ReplyUnsendView, ReplyView } from './types.js';

/** The reply's own deliveries (not its edits / unsends), oldest first. */
export const replyDeliveries = (state: ServiceState, messageId: string): DeliveryRecord[] =>
  [...state.deliveries.values()].filter((d) => d.messageId === messageId && d.kind === undefined).sort((a, b) => a.createdAt - b.createdAt || a.seq - b.seq);
/** When a delivery became sent (its attempt log's `sent`). */
const sentAtOf = (d: DeliveryRecord): number | undefined => (d.status === 'sent' ? (d.attemptLog ?? []).findLast((e) => e.event === 'sent')?.at ?? d.updatedAt : undefined);
/** When a delivery ended (sent / failed / unknown), for the history's `at`. */
const endedAtOf = (d: DeliveryRecord): number | undefined => (isTerminal(d.status) ? ((d.attemptLog ?? []).at(-1)?.at ?? d.updatedAt) : undefined);
/** When an unsend of the reply completed (the reply is gone from the channel). */
export const unsentAtOf = (state: ServiceState, reply: StoredReply): number | undefined => {
  for (const u of reply.requests.unsend) {
    const d = u.deliveryId === null ? undefined : state.deliveries.get(u.deliveryId);
    if (d?.status === 'sent') return endedAtOf(d);
  }
  return undefined;
};

/** The reply as `replies()` shows it: its latest delivery, its edit / unsend history, reactions. */
export function replyView(state: ServiceState, reply: StoredReply): ReplyView {
  const own = replyDeliveries(state, reply.messageId);
  const latest = own.at(-1);
  const sentAt = latest === undefined ? undefined : sentAtOf(latest);
  const entry = (deliveryId: string | null) => {
    const d = deliveryId === null ? undefined : state.deliveries.get(deliveryId);
    if (d === undefined) return { deliveryId, status: 'failed' as const };
    const at = endedAtOf(d);
    return {
      deliveryId,
      status: d.status,
      ...(at === undefined ? {} : { at }),
      ...(d.error === null || d.status === 'sent' ? {} : { error: { outcome: d.error.outcome === 'unknown' ? ('unknown' as const) : ('failed' as const), code: d.error.code } }),
    };
  };
  const unsentAt = unsentAtOf(state, reply);
  return {
    messageId: reply.messageId,
    integrationId: reply.integrationId,
    conversationId: reply.conversationId,
    text: reply.text,
    delivery: { deliveryId: latest?.deliveryId ?? '', status: latest?.status ?? 'queued', ...(sentAt === undefined ? {} : { sentAt }) },
    // Each kind's history under its plural (`edits`, `unsends`, ...); an edit's entries carry its text.
    ...(Object.fromEntries(
      LIFECYCLE_KINDS.map((kind): [string, readonly (ReplyEditView | ReplyUnsendView)[]] => [
        `${kind}s`,
        reply.requests[kind].map((r) => ({ ...(kind === 'edit' ? { text: r.text ?? '' } : {}), requestedAt: r.requestedAt, uid: r.uid, ...entry(r.deliveryId) })),
      ]),
    ) as ReplyHistories),
    ...(unsentAt === undefined ? {} : { unsent: { at: unsentAt } }),
    reactions: reply.reactions.map((r) => ({ ...r })),
  };
}
