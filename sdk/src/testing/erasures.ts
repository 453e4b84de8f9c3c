/**
 * Customer erasures: the operator's erasure (what it deletes, as functions/src/privacy/erasure.ts
 * does, and the deliveries it ends), and the connector's side of it, the list of erasures to purge
 * and their acknowledgement.
 */
import { decideErase } from '../internal/rules/state-machine.js';
import { decodeCursor, encodeCursor } from './cursors.js';
import { apiError } from './errors.js';
import { randomId } from './ids.js';
import { body, type Answer, type Handlers, type OperationRequest } from './operations.js';
import { decideOn, notifyWaiters, type Erasure, type ServiceState } from './state.js';

export function erasureHandlers(state: ServiceState): Pick<Handlers, 'listPendingErasures' | 'acknowledgeErasure'> {
  return {
    listPendingErasures: (request) => listPendingErasures(state, request),
    acknowledgeErasure: (request) => acknowledgeErasure(state, request),
  };
}

/** Erases a customer of the integration (`erase`): its messages, reactions, pending events and typing; its unfinished deliveries end. */
export function eraseCustomer(state: ServiceState, integrationId: string, externalCustomerId: string): { erasureId: string } {
  const at = state.now();
  const ofCustomer = state.messages.filter((m) => m.integrationId === integrationId && m.senderKind === 'customer' && m.senderExternalId === externalCustomerId && !m.erased);
  const conversationIds = [...new Set(ofCustomer.map((m) => m.conversationId))];
  // functions/src/privacy/erasure.ts: a conversation whose only customer is this one goes
  // entirely (every message, and the replies); in another, only the customer's messages go.
  const sole = conversationIds.filter((id) => !state.messages.some((m) => m.conversationId === id && !m.erased && m.senderKind === 'customer' && m.senderExternalId !== externalCustomerId));
  const erased = state.messages.filter((m) => !m.erased && (ofCustomer.includes(m) || sole.includes(m.conversationId)));
  const replies = new Set([...state.deliveries.values()].filter((d) => sole.includes(d.conversationId)).map((d) => d.messageId));
  for (const m of erased) m.erased = true;
  // The conversations' connector metadata goes with them, and from a shared one too: the merge does not
  // record whose message set a key (functions/src/privacy/erasure.ts, docs/privacy.md#erasure).
  for (const id of conversationIds) {
    const conversation = state.conversations.get(id);
    if (conversation !== undefined) conversation.metadata = {};
  }
  // The customer's reactions on what stays, their pending events and their typing go too (docs/privacy.md).
  for (const m of state.messages) if (m.integrationId === integrationId) m.reactions = m.reactions.filter((r) => r.senderExternalId !== externalCustomerId);
  for (const r of state.replies.values()) if (r.integrationId === integrationId) r.reactions = r.reactions.filter((x) => x.senderExternalId !== externalCustomerId);
  for (const [key, list] of state.pendingEvents) {
    if (!key.startsWith(`${integrationId}\u0000`)) continue;
    const kept = list.filter((e) => e.senderExternalId !== externalCustomerId && !sole.includes(e.conversationId));
    if (kept.length === 0) state.pendingEvents.delete(key);
    else state.pendingEvents.set(key, kept);
  }
  for (const [conversationId, t] of state.typing) if (t.integrationId === integrationId && (t.senderExternalId === externalCustomerId || sole.includes(conversationId))) state.typing.delete(conversationId);
  for (const messageId of state.replies.keys()) if (sole.includes(state.replies.get(messageId)?.conversationId ?? '')) state.replies.delete(messageId);
  for (const conversationId of conversationIds) {
    for (const d of [...state.deliveries.values()].filter((x) => x.conversationId === conversationId).sort((a, b) => a.seq - b.seq)) {
      const current = state.deliveries.get(d.deliveryId) ?? d;
      decideOn(state, current.deliveryId, at, (record) => decideErase(record, { now: at }));
    }
  }
  const erasure: Erasure = {
    erasureId: randomId('x_'),
    integrationId,
    externalCustomerId,
    // Sorted, as the service lists them (functions/src/privacy/erasure.ts).
    externalConversationIds: conversationIds.map((id) => state.conversations.get(id)?.externalConversationId ?? '').filter((id) => id !== '').sort(),
    requestedAt: at,
    counts: { conversations: sole.length, messages: erased.length + replies.size },
    acknowledged: false,
    acknowledgedAt: null,
  };
  state.erasures.push(erasure);
  notifyWaiters(state);
  return { erasureId: erasure.erasureId };
}

/** The caller's erasures not yet acknowledged, by id, a page at a time. */
function listPendingErasures(state: ServiceState, request: OperationRequest): Answer {
  const parsed = body<{ limit?: number; cursor?: string }>('listPendingErasures', request.json);
  const owner = request.integration;
  const limit = parsed.limit ?? 50;
  const after = parsed.cursor === undefined ? null : decodeCursor(owner, 'erasures\u0000', parsed.cursor, (c) => (typeof c.e === 'string' && Object.keys(c).length === 1 ? { e: c.e } : null));
  const open = state.erasures
    .filter((e) => e.integrationId === owner.integrationId && !e.acknowledged)
    .sort((a, b) => (a.erasureId < b.erasureId ? -1 : a.erasureId > b.erasureId ? 1 : 0))
    .filter((e) => after === null || e.erasureId > after.e);
  const page = open.slice(0, limit);
  const last = page.at(-1);
  return {
    status: 200,
    body: {
      erasures: page.map((e) => ({ erasureId: e.erasureId, externalCustomerId: e.externalCustomerId, externalConversationIds: [...e.externalConversationIds], requestedAt: e.requestedAt })),
      nextCursor: open.length > limit && last !== undefined ? encodeCursor(owner, 'erasures\u0000', { e: last.erasureId }) : null,
    },
  };
}

/** The connector purged what the erasure names: it leaves the list (an acknowledgement again is answered the same). */
function acknowledgeErasure(state: ServiceState, request: OperationRequest): Answer {
  const parsed = body<{ erasureId: string }>('acknowledgeErasure', request.json);
  const erasure = state.erasures.find((e) => e.erasureId === parsed.erasureId && e.integrationId === request.integration.integrationId);
  if (erasure === undefined) throw apiError(404, 'erasure_not_found', 'erasureId: no finished erasure of this integration has this id.');
  erasure.acknowledged = true;
  // functions/src/privacy/erasure-list.ts: `acknowledgedAt` is kept from the first acknowledgement.
  erasure.acknowledgedAt ??= request.now;
  return { status: 200, body: { acknowledged: true } };
}
