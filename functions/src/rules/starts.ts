/**
 * Conversations the desk starts (docs/contract.md#conversations-the-desk-starts): what a start
 * request may name, whether the service takes it, and the ids that make it idempotent. Pure: the
 * service's start trigger (functions/src/deliveries/starts.ts) and the SDK's test service run this
 * same module; firestore.rules state the same address patterns for the member's write.
 */
import { codePointLength, REPLY_MAX_CODE_POINTS, START_ADDRESS_KINDS, START_ADDRESS_LIMITS, startAddressFault } from '../contract';
import type { ChannelTemplate } from './channel';
import { templateReplyVerdict, type ReplyTemplate } from '../contract/templates';
import { sha256Hex } from './sha256';

export { START_ADDRESS_KINDS };
export type StartAddressKind = (typeof START_ADDRESS_KINDS)[number];

/** Who a start goes to: the channel's address of the customer, not a thread (there is none yet). */
export interface StartAddress {
  kind: StartAddressKind;
  value: string;
}

const isStartAddressKind = (value: unknown): value is StartAddressKind => (START_ADDRESS_KINDS as readonly unknown[]).includes(value);

/** The service's words for an address of each kind that `startAddressFault` refuses (the start's `error.message`). */
const ADDRESS_MESSAGES: Record<StartAddressKind, string> = {
  phone: 'to.value: a phone address is E.164 (+ then 7 to 15 digits, e.g. +4915112345678)',
  email: `to.value: an email address has one @ and at most ${START_ADDRESS_LIMITS.emailMax} characters`,
  handle: `to.value: a handle is 1 to ${START_ADDRESS_LIMITS.handleMax} characters without control characters`,
};

/** Why `value` is not an address of `kind` (the 400-style message), or null when it is one: the contract's `startAddressFault`. */
export function addressProblem(kind: StartAddressKind, value: unknown): string | null {
  if (typeof value !== 'string') return 'to.value: must be a string';
  return startAddressFault(kind, value) === null ? null : ADDRESS_MESSAGES[kind];
}

/**
 * The address kinds an integration's admin allowed (`conversations.start.addressKinds`), or null
 * when starts are off: no field, or not 1..3 distinct known kinds (the rules never let such a value
 * be written; a damaged one disables starts instead of guessing).
 */
export function allowedAddressKinds(conversations: unknown): StartAddressKind[] | null {
  const start = (conversations as { start?: { addressKinds?: unknown } } | null | undefined)?.start;
  const kinds = start?.addressKinds;
  if (!Array.isArray(kinds) || kinds.length === 0 || kinds.length > START_ADDRESS_KINDS.length) return null;
  if (!kinds.every(isStartAddressKind) || new Set(kinds).size !== kinds.length) return null;
  return [...kinds];
}

/** Why a start is refused: written on the start document as `error.code`. */
export type StartRefusal = 'starts_disabled' | 'address_kind_not_allowed' | 'invalid_address' | 'invalid_start' | 'template_required' | 'template_invalid' | 'replies_disabled';

/** What the service knows of the integration when it decides on a start. */
export interface StartChannelFacts {
  /** The integration takes replies (enabled, with a topic): a start is a message to send like one. */
  repliesEnabled: boolean;
  /** `conversations.start.addressKinds` (`allowedAddressKinds`), null when starts are off. */
  addressKinds: readonly StartAddressKind[] | null;
  /** The channel declares a window: the customer has not written, so it is closed and a start needs a template. */
  windowDeclared: boolean;
  /** The channel's templates (empty when it declares none). */
  templates: readonly ChannelTemplate[];
}

export type StartVerdict =
  | { accepted: true; to: StartAddress; text: string; template?: ReplyTemplate }
  | { accepted: false; code: StartRefusal; message: string };

const refused = (code: StartRefusal, message: string): StartVerdict => ({ accepted: false, code, message });

const isMap = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Whether the service takes a start request (the document as the member wrote it), in this order:
 *  - `starts_disabled`: the integration has no `conversations.start` (or is gone);
 *  - `replies_disabled`: it takes no replies, so nothing could send the start;
 *  - `invalid_start`: not exactly one of `text` and `template`, or a text that is not a reply's
 *    (1..10,000 code points), or no `to` map;
 *  - `address_kind_not_allowed`: `to.kind` is not one the admin allowed;
 *  - `invalid_address`: `to.value` does not fit its kind (`addressProblem`);
 *  - `template_required`: text while the channel declares a window (it is closed: nobody wrote);
 *  - `template_invalid`: a template the channel does not declare, or params that do not fit it.
 * The rules refuse most of these at the write already; the service decides again because an
 * admin may change the integration between the write and the trigger.
 */
export function startVerdict(doc: Record<string, unknown>, facts: StartChannelFacts): StartVerdict {
  if (facts.addressKinds === null) return refused('starts_disabled', 'the integration does not start conversations');
  if (!facts.repliesEnabled) return refused('replies_disabled', 'the integration takes no replies');
  const hasText = doc.text !== undefined;
  const hasTemplate = doc.template !== undefined;
  if (hasText === hasTemplate) return refused('invalid_start', 'a start has exactly one of text and template');
  if (hasText && (typeof doc.text !== 'string' || doc.text.length === 0 || codePointLength(doc.text) > REPLY_MAX_CODE_POINTS)) {
    return refused('invalid_start', `text: 1 to ${REPLY_MAX_CODE_POINTS} characters`);
  }
  const to = doc.to;
  if (!isMap(to) || !isStartAddressKind(to.kind)) return refused('invalid_start', 'to: { kind: phone | email | handle, value }');
  if (!facts.addressKinds.includes(to.kind)) return refused('address_kind_not_allowed', `to.kind: the integration starts conversations by ${facts.addressKinds.join(', ')}`);
  const problem = addressProblem(to.kind, to.value);
  if (problem !== null) return refused('invalid_address', problem);
  const address: StartAddress = { kind: to.kind, value: to.value as string };
  if (hasText) {
    if (facts.windowDeclared) return refused('template_required', 'the channel has a reply window and the customer has not written: start with a template');
    return { accepted: true, to: address, text: doc.text as string };
  }
  // The one template rule, the replies' (functions/src/contract/templates.ts).
  const filled = templateReplyVerdict(doc.template, facts.templates);
  if (!filled.accepted) return refused('template_invalid', `template: ${filled.problem}`);
  return { accepted: true, to: address, text: filled.text, template: filled.template };
}

/** The address book's document id of (integration, kind, value): one customer per address and integration. */
export const startAddressId = (integrationId: string, address: StartAddress): string => `a_${sha256Hex(['address', integrationId, address.kind, address.value].join('\u0000')).slice(0, 32)}`;

/**
 * The conversation a start creates: derived from (integration, start id), so a retried trigger (or
 * the document seen twice) lands on the same conversation. The `start` part keeps it apart from the
 * ids of incoming threads, which hash (integration, externalConversationId).
 */
export const startedConversationId = (integrationId: string, startId: string): string => `c_${sha256Hex(['start', integrationId, startId].join('\u0000')).slice(0, 32)}`;

/** The message a start becomes (in the started conversation, or in the one a known address names). */
export const startMessageId = (integrationId: string, startId: string): string => `s_${sha256Hex(['start-message', integrationId, startId].join('\u0000')).slice(0, 32)}`;

/** What the connector answers a start's `complete` with: the thread the channel made, and who it is. */
export interface StartedThread {
  externalConversationId: string;
  externalCustomerId: string;
  metadata?: Readonly<Record<string, string | null>> | undefined;
}
