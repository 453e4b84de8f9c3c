/**
 * Conversations the desk starts, in the test service (docs/contract.md#conversations-the-desk-starts):
 * the member's start decided by the service's own rule (../internal/rules/starts.ts), the address
 * book, and what a start's `complete` does: the started conversation joins the thread's
 * conversation (the one the thread's messages are filed under), and the address names it.
 */
import { mergeMetadata } from '../internal/rules/metadata.js';
import type { DeliveryRecord } from '../internal/rules/record.js';
import { allowedAddressKinds, startAddressId, startedConversationId, startMessageId, startVerdict } from '../internal/rules/starts.js';
import { digestId, randomId } from './ids.js';
import { appendDelivery } from './outbox.js';
import type { Conversation, ServiceState } from './state.js';
import type { StartConversationInput, StartConversationResult } from './types.js';

/** The address book: address id -> the conversation a start to it goes to (per service). */
const books = new WeakMap<ServiceState, Map<string, string>>();
const bookOf = (state: ServiceState): Map<string, string> => {
  let book = books.get(state);
  if (book === undefined) {
    book = new Map();
    books.set(state, book);
  }
  return book;
};

/**
 * The conversation an operator's call on `conversationId` acts on: the thread's conversation a
 * started one joined (`mergedInto`, followed as the console follows it), else itself; undefined
 * when there is none.
 */
export function followMerged(state: ServiceState, conversationId: string): Conversation | undefined {
  let conversation = state.conversations.get(conversationId);
  // Bounded: a merge points from a started conversation to a thread's, which is never merged itself.
  for (let hops = 0; conversation?.mergedInto !== undefined && hops < 4; hops++) conversation = state.conversations.get(conversation.mergedInto);
  return conversation;
}

/** A member's start: the verdict, then a reply in the known address's conversation or a new conversation with a `start` delivery. */
export function startConversation(state: ServiceState, input: StartConversationInput, createReply: (conversationId: string, text: string) => { deliveryId: string }): StartConversationResult {
  const startId = randomId('st_');
  const integration = state.integrations.get(input.integrationId);
  if (integration === undefined) throw new Error(`test service: no integration ${input.integrationId}`);
  const verdict = startVerdict(
    { ...input },
    {
      repliesEnabled: true,
      addressKinds: allowedAddressKinds(integration.capabilities.conversations),
      windowDeclared: integration.channel?.window != null,
      templates: integration.channel?.templates ?? [],
    },
  );
  if (!verdict.accepted) return { startId, error: { code: verdict.code, message: verdict.message } };
  const book = bookOf(state);
  const addressId = startAddressId(integration.integrationId, verdict.to);
  const known = book.get(addressId);
  if (known !== undefined && state.conversations.has(known)) {
    const { deliveryId } = createReply(known, verdict.text);
    return { startId, result: { conversationId: known, reused: true }, deliveryId };
  }
  const conversationId = startedConversationId(integration.integrationId, startId);
  const conversation: Conversation = { conversationId, integrationId: integration.integrationId, externalConversationId: '', lastSenderExternalId: '', lastCustomerExternalId: null, nextSeq: 1, metadata: {}, lastCustomerSentAt: null, windowClosesAt: null };
  state.conversations.set(conversationId, conversation);
  book.set(addressId, conversationId);
  const messageId = startMessageId(integration.integrationId, startId);
  const deliveryId = digestId('d_', [conversationId, messageId]);
  appendDelivery(state, { conversation, messageId, deliveryId, text: verdict.text, start: { to: verdict.to }, ...(verdict.template !== undefined ? { template: verdict.template } : {}), reason: 'created' });
  return { startId, result: { conversationId, reused: false }, deliveryId };
}

/**
 * After a start's first `complete` (the record now names the thread): the thread's conversation
 * takes the started one's place (created from it when new; its metadata merged), and the address
 * book names it, so the customer's answer and the next start to the address land there.
 */
export function afterStartCompleted(state: ServiceState, before: DeliveryRecord, now: DeliveryRecord, metadata: Readonly<Record<string, string | null>> | undefined): void {
  const thread = now.start?.thread;
  if (before.start === undefined || before.status === 'sent' || now.status !== 'sent' || thread === undefined) return;
  const started = state.conversations.get(before.conversationId);
  const targetId = digestId('c_', [before.integrationId, thread.externalConversationId]);
  const target: Conversation = state.conversations.get(targetId) ?? {
    ...(started ?? { integrationId: before.integrationId, nextSeq: 1, metadata: {}, lastCustomerSentAt: null, lastCustomerExternalId: null, windowClosesAt: null }),
    conversationId: targetId,
    externalConversationId: thread.externalConversationId,
    lastSenderExternalId: thread.externalCustomerId,
  };
  if (metadata !== undefined) target.metadata = mergeMetadata(target.metadata, metadata).merged;
  state.conversations.set(targetId, target);
  // The started conversation now names the thread too: replies queued behind the start are claimed to it.
  if (started !== undefined) {
    Object.assign(started, { externalConversationId: thread.externalConversationId, lastSenderExternalId: thread.externalCustomerId });
    // The service's `mergedInto`: what the operator does in the started conversation from now on goes to the thread's.
    if (started.conversationId !== targetId) started.mergedInto = targetId;
  }
  bookOf(state).set(startAddressId(before.integrationId, before.start.to), targetId);
}
