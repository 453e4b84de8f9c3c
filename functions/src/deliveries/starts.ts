/**
 * Conversations the desk starts (docs/contract.md#conversations-the-desk-starts). A member writes
 * `conversationStarts/{startId}`; its create trigger calls `takeStart`, which in ONE creation
 * transaction (./transition.ts `runCreation`, on the conversation the start would create):
 *   - answers an already answered start with nothing (a retried trigger, the document seen twice);
 *   - decides (../rules/starts.ts `startVerdict`): a refusal is `error` on the start, nothing else;
 *   - looks the address up in the address book (`startAddresses/{a_…}`): a known address makes the
 *     start a reply in that conversation (the reply trigger sequences it like any other), `reused`;
 *   - otherwise claims the address (so a second start to it, even at the same moment, finds it:
 *     both transactions read the book's document, one commits, the other runs again and reuses),
 *     creates the conversation (`origin: "desk"`, `waitingForChannel`), its first message and its
 *     `start` delivery at the head of the new queue (`appendDelivery`, the path every delivery takes),
 *     and publishes the notification (attribute `kind: "start"`) right after the commit.
 * The conversation's id is derived from (integration, start id), and the message's too, so a second
 * run can only find what the first wrote. A start's `complete` is ./start-completion.ts.
 */
import { Timestamp, type DocumentSnapshot, type Firestore } from 'firebase-admin/firestore';
import { conversationListShard } from '../contract';
import { conversationSearchKeys } from '../contract/conversation-search';
import { deliveryIdFor } from '../platform/ids';
import { paths } from '../platform/paths';
import { retryTransient } from '../platform/failures';
import { parseChannel, repliesTopic } from '../integrations/model';
import { integrationOf, integrationRef } from '../integrations/store';
import { allowedAddressKinds, startAddressId, startedConversationId, startMessageId, startVerdict, type StartAddress, type StartRefusal } from '../rules/starts';
import type { ReplyTemplate } from '../contract/templates';
import { publishCommitted, type CommittedNotification } from './outbox';
import { appendDelivery, openQueue, runCreation } from './transition';

export type StartOutcome =
  | { kind: 'created'; conversationId: string; deliveryId: string }
  | { kind: 'reused'; conversationId: string; messageId: string }
  | { kind: 'refused'; code: StartRefusal }
  /** Nothing to do: the start is gone, or it was answered before (a retried trigger). */
  | { kind: 'ignored' };

/** The address a start document names, when it names one at all (the verdict decides whether it is valid). */
function namedAddress(data: Record<string, unknown> | undefined): StartAddress | null {
  const to = data?.to as { kind?: unknown; value?: unknown } | undefined;
  return typeof to?.kind === 'string' && typeof to.value === 'string' ? ({ kind: to.kind, value: to.value } as StartAddress) : null;
}

/** The start's first message as the console shows it: an operator's reply with `start`, and `text` or `template` as the member wrote it. */
function startMessage(startId: string, to: StartAddress, uid: unknown, body: { text: string; template?: ReplyTemplate }, createdAt: Timestamp): Record<string, unknown> {
  return {
    direction: 'outbound',
    author: { type: 'operator', uid: typeof uid === 'string' ? uid : null },
    ...(body.template !== undefined ? { template: body.template } : { text: body.text }),
    createdAt,
    start: { startId, to },
  };
}

/**
 * Takes one start request (the trigger's work): see the module's comment. `integrationId` is the
 * start's and `eventTo` its `to`, both from the trigger's event (a start is never updated by a
 * member, the rules say so); the document read in the transaction decides.
 * @public the bench calls it from the built module
 */
export async function takeStart(db: Firestore, workspaceId: string, startId: string, integrationId: string, eventTo?: unknown): Promise<StartOutcome> {
  const conversationId = startedConversationId(integrationId, startId);
  const committed: CommittedNotification[] = [];
  const outcome = await retryTransient(() => {
    committed.length = 0;
    return runCreation(db, { workspaceId, conversationId }, async (tx, queue, now): Promise<StartOutcome> => {
      const startRef = db.doc(paths.conversationStart(workspaceId, startId));
      const bookRefOf = (address: StartAddress) => db.doc(paths.startAddress(workspaceId, startAddressId(integrationId, address)));
      // One read wave: the address the trigger's event carried names the address book's entry, so
      // it is read with the start itself (reading the start first cost a second wave: about +50%
      // per start on the emulator, bench/phases/starts.mjs).
      const hinted = namedAddress({ to: eventTo });
      const hintedBookRef = hinted === null ? null : bookRefOf(hinted);
      const [startSnap, integrationSnap, queueSnap, hintedBookSnap] = await tx.getAll(startRef, integrationRef(db, workspaceId, integrationId), queue.ref, ...(hintedBookRef === null ? [] : [hintedBookRef]));
      const data = startSnap?.data();
      if (data === undefined || data.result !== undefined || data.error !== undefined) return { kind: 'ignored' };
      const address = namedAddress(data);
      const bookRef = address === null ? null : bookRefOf(address);
      // Members never update a start (the rules), so the event's address is the document's; without
      // one (a caller that passed none) the entry is read now, in a second wave.
      const bookSnap = bookRef === null ? undefined : bookRef.path === hintedBookRef?.path ? hintedBookSnap : await tx.get(bookRef);
      const integration = integrationSnap?.exists === true ? integrationOf(integrationSnap) : null;
      const topic = repliesTopic(integration);
      const channel = parseChannel(integrationSnap?.get('channel'));
      const verdict = startVerdict(data, {
        repliesEnabled: topic !== null,
        addressKinds: integration === null ? null : allowedAddressKinds(integrationSnap?.get('conversations')),
        windowDeclared: channel?.window != null,
        templates: channel?.templates ?? [],
      });
      const updatedAt = Timestamp.fromMillis(now);
      if (!verdict.accepted) {
        tx.set(startRef, { error: { code: verdict.code, message: verdict.message }, updatedAt }, { merge: true });
        return { kind: 'refused', code: verdict.code };
      }
      const messageId = startMessageId(integrationId, startId);
      const body = verdict.template === undefined ? { text: verdict.text } : { text: verdict.text, template: verdict.template };
      const message = startMessage(startId, verdict.to, data.uid, body, updatedAt);
      const known = knownConversation(bookSnap);
      if (known !== null && known !== conversationId) {
        // A known address: a reply in its conversation (chatwoot #14086: never a second conversation).
        tx.set(db.doc(paths.message(workspaceId, known, messageId)), message);
        tx.set(startRef, { result: { conversationId: known, reused: true }, updatedAt }, { merge: true });
        return { kind: 'reused', conversationId: known, messageId };
      }
      await openQueue(tx, db, queue, queueSnap);
      // Claimed now: a start to the same address that reads the book after this commit reuses this conversation.
      if (bookRef !== null) {
        tx.set(bookRef, { integrationId, kind: verdict.to.kind, value: verdict.to.value, externalCustomerId: null, conversationId, updatedAt });
      }
      tx.set(db.doc(paths.conversation(workspaceId, conversationId)), startedConversation(integrationId, startId, verdict.to, updatedAt));
      tx.set(db.doc(paths.message(workspaceId, conversationId, messageId)), message);
      const deliveryId = deliveryIdFor(conversationId, messageId);
      const { outboxId } = appendDelivery(tx, db, queue, {
        deliveryId,
        workspaceId,
        integrationId,
        conversationId,
        messageId,
        text: verdict.text,
        start: { to: verdict.to },
        ...(verdict.template !== undefined ? { template: verdict.template } : {}),
        now,
        reason: 'created',
      });
      // The reply sequencing's position: later replies of the conversation come after the start.
      queue.fields = { lastReplyAt: updatedAt, lastReplyId: messageId };
      tx.set(startRef, { result: { conversationId, reused: false }, updatedAt }, { merge: true });
      if (outboxId !== null) {
        const notification = { deliveryId, workspaceId, integrationId, conversationId, messageId };
        const direct = topic !== null && (integration?.replies.topicStatus ?? 'ok') === 'ok' ? topic : null;
        committed.push(direct === null ? { outboxId } : { outboxId, publish: { topic: direct, reason: 'created', notification, kind: 'start' } });
      }
      return { kind: 'created', conversationId, deliveryId };
    });
  });
  await publishCommitted(db, committed);
  return outcome;
}

/** The conversation the address book names for an address, or null when the address is new. */
function knownConversation(book: DocumentSnapshot | undefined): string | null {
  const id = book?.exists === true ? (book.get('conversationId') as unknown) : null;
  return typeof id === 'string' && id.length > 0 ? id : null;
}

/**
 * A conversation the desk starts, before the channel has a thread for it: no customer, no
 * external ids yet (its start's `complete` brings them), `waitingForChannel` until then.
 */
function startedConversation(integrationId: string, startId: string, to: StartAddress, at: Timestamp): Record<string, unknown> {
  return {
    integrationId,
    origin: 'desk',
    waitingForChannel: true,
    startId,
    to,
    externalConversationId: '',
    lastSenderExternalId: '',
    needsReply: false,
    customerIds: [],
    // Found by the address the member typed until the channel names the thread.
    searchKeys: conversationSearchKeys({ externalConversationId: '', customerExternalId: to.value, customerName: null }),
    listShard: conversationListShard(startedConversationId(integrationId, startId)),
    createdAt: at,
    lastMessageAt: at,
    updatedAt: at,
  };
}
