/**
 * Inspection: the service's state as the console's mirror (and more) shows it, as copies a test
 * may keep; the recorded calls and the delivery rules they break (./violations.ts); and `waitFor`,
 * checked after every change.
 */
import { createHash } from 'node:crypto';
import { traceIdOfDelivery, type DeliveryRecord } from '../internal/rules/record.js';
import { sweep } from './outbox.js';
import { replyView } from './replies.js';
import { extrasOf, type ServiceState, type StoredMessage } from './state.js';
import type { DeliveryView, MessageView, TestService } from './types.js';
import { findViolations } from './violations.js';

type Inspection = Pick<TestService, 'deliveries' | 'messages' | 'replies' | 'typing' | 'erasures' | 'calls' | 'violations' | 'waitFor'>;

export function inspection(state: ServiceState): Inspection {
  return {
    deliveries(filter = {}) {
      sweep(state);
      return [...state.deliveries.values()]
        .filter((d) => (filter.integrationId === undefined || d.integrationId === filter.integrationId) && (filter.conversationId === undefined || d.conversationId === filter.conversationId))
        .sort((a, b) => a.createdAt - b.createdAt || a.seq - b.seq)
        .map((d) => deliveryView(state, d));
    },

    messages(filter = {}) {
      return state.messages
        .filter((m) => !m.erased && (filter.integrationId === undefined || m.integrationId === filter.integrationId) && (filter.conversationId === undefined || m.conversationId === filter.conversationId))
        .map(messageView);
    },

    replies(filter = {}) {
      sweep(state);
      return [...state.replies.values()]
        .filter((r) => (filter.integrationId === undefined || r.integrationId === filter.integrationId) && (filter.conversationId === undefined || r.conversationId === filter.conversationId))
        .map((reply) => replyView(state, reply));
    },

    typing(filter = {}) {
      const at = state.now();
      return [...state.typing.values()].filter((t) => t.expireAt > at && (filter.integrationId === undefined || t.integrationId === filter.integrationId)).map((t) => ({ ...t }));
    },

    erasures(integrationId) {
      return state.erasures
        .filter((e) => integrationId === undefined || e.integrationId === integrationId)
        .map((e) => ({ ...e, externalConversationIds: [...e.externalConversationIds], counts: { ...e.counts } }));
    },

    calls(filter = {}) {
      return state.recorded.filter((c) => (filter.integrationId === undefined || c.integrationId === filter.integrationId) && (filter.operationId === undefined || c.operationId === filter.operationId));
    },

    violations(options = {}) {
      return findViolations(state.recorded, { final: options.final === true });
    },

    waitFor: (predicate, timeoutMs = 5000) => waitFor(state, predicate, timeoutMs),
  };
}

function deliveryView(state: ServiceState, d: DeliveryRecord): DeliveryView {
  const extras = extrasOf(state, d.deliveryId);
  return {
    deliveryId: d.deliveryId,
    integrationId: d.integrationId,
    conversationId: d.conversationId,
    messageId: d.messageId,
    ...(d.kind === undefined || d.target === undefined ? {} : { kind: d.kind, target: { ...d.target, providerMessageIds: [...d.target.providerMessageIds] } }),
    ...(d.start === undefined ? {} : { start: { to: { ...d.start.to }, ...(d.start.thread === undefined ? {} : { thread: { externalConversationId: d.start.thread.externalConversationId, externalCustomerId: d.start.thread.externalCustomerId } }) } }),
    status: d.status,
    cancelled: extras.cancelled || d.error?.code === 'erased',
    attempts: attemptsOf(d),
    providerMessageIds: [...d.providerMessageIds],
    parts: (d.parts ?? []).map((p) => ({ ...p })),
    receipts: [...extras.receipts].map(([providerMessageId, r]) => ({ status: r.status, providerMessageId, at: r.at })),
    fetchedAttachments: [...extras.fetched],
    ...(d.error === null || d.status === 'sent' ? {} : { failure: { code: d.error.code, outcome: d.error.outcome === 'unknown' ? ('unknown' as const) : ('failed' as const) } }),
    notBefore: d.notBefore,
    lastFail: d.lastFail === null ? null : { ...d.lastFail },
    lease: d.lease === null ? null : { expiresAt: d.lease.expiresAt },
    attachments: (d.attachments ?? []).map(({ attachmentId, name, contentType, size, sha256 }) => ({ attachmentId, name, contentType, size, sha256 })),
    traceparent: `00-${traceIdOfDelivery(d.deliveryId)}-${createHash('sha256').update(`span:${d.deliveryId}`).digest('hex').slice(0, 16)}-01`,
  };
}

/** The attempt log of the real record, numbered by the lease it belongs to. */
function attemptsOf(d: DeliveryRecord): DeliveryView['attempts'] {
  let attempt = 0;
  return (d.attemptLog ?? []).map((entry) => {
    if (entry.event === 'claimed') attempt += 1;
    return { event: entry.event, at: entry.at, attempt, ...(entry.code === undefined ? {} : { code: entry.code }) };
  });
}

/** A stored message without the service's own fields, copied. */
function messageView({ senderExternalId: _s, senderKind: _k, fingerprint: _f, erased: _e, ...view }: StoredMessage): MessageView {
  return {
    ...view,
    sender: { ...view.sender },
    images: view.images.map((i) => ({ ...i })),
    edits: view.edits.map((e) => ({ ...e })),
    ...(view.deleted === undefined ? {} : { deleted: { ...view.deleted } }),
    reactions: view.reactions.map((r) => ({ ...r })),
  };
}

/** Resolves when `predicate` holds (checked now and after every change), or rejects after `timeoutMs`. */
function waitFor(state: ServiceState, predicate: () => boolean, timeoutMs: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const check = (): void => {
      let held = false;
      try {
        held = predicate();
      } catch (error) {
        finish();
        reject(error instanceof Error ? error : new Error(String(error)));
        return;
      }
      if (held) {
        finish();
        resolve();
      }
    };
    const timer = setTimeout(() => {
      finish();
      reject(new Error(`test service: waitFor timed out after ${timeoutMs} ms`));
    }, timeoutMs);
    const finish = (): void => {
      clearTimeout(timer);
      state.waiters.delete(check);
    };
    state.waiters.add(check);
    check();
  });
}
