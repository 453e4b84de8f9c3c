/**
 * The rules of message events (docs/contract.md#message-events), pure: whose message an event may
 * touch, and what `edited`, `deleted` and `reaction` do to a message's content. The events'
 * transaction (functions/src/messages/event-store.ts) applies them through `applyEvent`, both when an event arrives and
 * when a pending one meets its target, so an event means the same whichever way it reaches its
 * message. No Firebase here: times are epoch milliseconds, the callers convert.
 */
import { MESSAGE_EVENT_TYPES } from '../contract';

/** A reaction as stored on a message (`reactions[]`), `at` in ms. */
export interface Reaction {
  emoji: string;
  senderExternalId: string;
  at: number;
}

/** One entry of a customer message's `edits` history, `at` in ms. */
export interface Edit {
  text: string;
  at: number;
}

/** A stored image's path (all the rules need of `images[]`: a deletion removes the objects). */
export interface ImageRef {
  path: string;
}

/** What the rules read of a target message. */
export interface TargetMessage {
  direction: 'inbound' | 'outbound';
  /** `message` or `alert` for an inbound one; undefined for an operator reply. */
  kind: 'message' | 'alert' | undefined;
  /** The sender of an inbound message; undefined for an operator reply. */
  senderExternalId: string | undefined;
  /** The text as received (null without one; an operator reply's is not read: null). */
  text: string | null;
  deleted: boolean;
  edits: readonly Edit[];
  reactions: readonly Reaction[];
  images: readonly ImageRef[];
}

/** An event as the rules see it (a validated request, or a pending entry). */
export type EventChange =
  | { type: 'edited'; senderExternalId: string; text: string }
  | { type: 'deleted'; senderExternalId: string }
  | { type: 'reaction'; senderExternalId: string; emoji: string; removed: boolean };

/** What an event does to its target. */
export type EventEffect =
  /** Applied: the new fields of the message (`text: null` and `images: []` for a deletion), and the stored objects to delete. */
  | { kind: 'applied'; fields: MessageChange; removedImages: string[] }
  /** Not applied, and why (logged with this code): the message was deleted, or the reaction (or edit) changes nothing. */
  | { kind: 'ignored'; code: 'target_deleted' | 'no_change' }
  /** The target is not this sender's to change (404 `target_not_found`; a pending one is dropped with this). */
  | { kind: 'not_found'; code: 'not_own_message' | 'alert' | 'operator_reply' };

/** The fields an applied event writes on its message (the rest stays). */
export interface MessageChange {
  edits?: Edit[];
  reactions?: Reaction[];
  /** A deletion: the tombstone, the content gone. */
  deleted?: { at: number };
}

/**
 * The reactions after `change`: at most one entry per sender and emoji. Adding one the sender already
 * has keeps the first (its `at` stays); removing one the sender does not have changes nothing.
 */
export function nextReactions(reactions: readonly Reaction[], change: { emoji: string; senderExternalId: string; removed: boolean }, at: number): Reaction[] {
  const same = (r: Reaction): boolean => r.emoji === change.emoji && r.senderExternalId === change.senderExternalId;
  if (change.removed) return reactions.filter((r) => !same(r));
  return reactions.some(same) ? [...reactions] : [...reactions, { emoji: change.emoji, senderExternalId: change.senderExternalId, at }];
}

/**
 * Who may change the target: an edit or a deletion only the sender's own customer message (not an
 * alert, not an operator reply); a reaction any message of the conversation. Null when allowed.
 */
export function targetProblem(target: TargetMessage, event: EventChange): Extract<EventEffect, { kind: 'not_found' }>['code'] | null {
  if (event.type === 'reaction') return null;
  if (target.direction === 'outbound') return 'operator_reply';
  if (target.kind === 'alert') return 'alert';
  if (target.senderExternalId !== event.senderExternalId) return 'not_own_message';
  return null;
}

/** The text the desk shows for a customer message: its latest edit's, else the text it came with. */
const currentText = (target: Pick<TargetMessage, 'text' | 'edits'>): string | null => target.edits.at(-1)?.text ?? target.text;

/**
 * What `event` does to `target` at `at` (ms). A deleted message takes no more edits, deletions or
 * reactions (ignored: the tombstone is final, and the desk shows nothing but it); a reaction that
 * changes nothing is ignored too, and so is an edit to the text the message already shows (no
 * history entry that changes nothing: channels send such edits when only a formatting or a link
 * preview changed).
 */
export function applyEvent(target: TargetMessage, event: EventChange, at: number): EventEffect {
  const problem = targetProblem(target, event);
  if (problem !== null) return { kind: 'not_found', code: problem };
  if (target.deleted) return { kind: 'ignored', code: 'target_deleted' };
  switch (event.type) {
    case 'edited':
      if (currentText(target) === event.text) return { kind: 'ignored', code: 'no_change' };
      return { kind: 'applied', fields: { edits: [...target.edits, { text: event.text, at }] }, removedImages: [] };
    case 'deleted':
      return { kind: 'applied', fields: { deleted: { at } }, removedImages: target.images.map((i) => i.path) };
    case 'reaction': {
      const reactions = nextReactions(target.reactions, event, at);
      // The same reaction again, or taking back one that is not there, changes nothing, and the
      // answer says so (200, not applied). Adding only appends and removing only filters, so the
      // set changed exactly when its size did.
      if (reactions.length === target.reactions.length) return { kind: 'ignored', code: 'no_change' };
      return { kind: 'applied', fields: { reactions }, removedImages: [] };
    }
  }
}

/** The target after an applied change (to apply several events in order: pending ones on arrival). */
export function afterChange(target: TargetMessage, change: MessageChange): TargetMessage {
  if (change.deleted !== undefined) return { ...target, deleted: true, text: null, edits: [], images: [] };
  return { ...target, ...(change.edits ? { edits: change.edits } : {}), ...(change.reactions ? { reactions: change.reactions } : {}) };
}

/** What each event type takes besides the common fields: `required` must be there, anything else of `EVENT_FIELDS` must not. */
const FIELDS_OF_TYPE = {
  edited: { required: ['target', 'text'], optional: [] },
  deleted: { required: ['target'], optional: [] },
  reaction: { required: ['target', 'emoji'], optional: ['removed'] },
  typing: { required: [], optional: [] },
} as const satisfies Record<(typeof MESSAGE_EVENT_TYPES)[number], { required: readonly EventField[]; optional: readonly EventField[] }>;
type EventField = 'target' | 'text' | 'emoji' | 'removed';
const EVENT_FIELDS: readonly EventField[] = ['target', 'text', 'emoji', 'removed'];

/**
 * The per-type rules of a message event, as issues naming the field (400 `invalid_request`, docs/contract.md#message-events):
 * a field the type does not take, a missing one, and the target's form (exactly one of `eventId` and `providerMessageId`).
 * The service's schema (functions/src/messages/schemas.ts) and the SDK's test service both ask this function.
 */
export function messageEventProblems(event: { type: (typeof MESSAGE_EVENT_TYPES)[number]; target?: { eventId?: string | undefined; providerMessageId?: string | undefined } | undefined } & Partial<Record<EventField, unknown>>): Array<{ path: string[]; message: string }> {
  const rules = FIELDS_OF_TYPE[event.type];
  const problems: Array<{ path: string[]; message: string }> = [];
  for (const field of EVENT_FIELDS) {
    const present = event[field] !== undefined;
    if ((rules.required as readonly EventField[]).includes(field)) {
      if (!present) problems.push({ path: [field], message: `required for type '${event.type}'` });
    } else if (present && !(rules.optional as readonly EventField[]).includes(field)) {
      problems.push({ path: [field], message: `not allowed for type '${event.type}'` });
    }
  }
  const target = event.target;
  if (target !== undefined) {
    const byEvent = target.eventId !== undefined;
    const byProvider = target.providerMessageId !== undefined;
    if (byEvent && byProvider) problems.push({ path: ['target'], message: 'exactly one of eventId and providerMessageId' });
    else if (!byEvent && !byProvider) problems.push({ path: ['target', 'eventId'], message: 'required (or target.providerMessageId)' });
  }
  return problems;
}

/**
 * The answer to `typing` in a chat the desk does not know (no conversation for its
 * externalConversationId yet: the customer is typing their first message): 200, not applied, and
 * no `conversationId`, since none exists. Nothing is written, not even the event's record: there
 * is nothing to show it on, and a retry gets this answer again (or, once the chat exists, shows it).
 */
export const TYPING_WITHOUT_CONVERSATION = { status: 200, body: { applied: false, duplicate: false } } as const;
