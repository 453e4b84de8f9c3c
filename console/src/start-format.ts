/**
 * Conversations the desk starts, the pure part (no DOM, no Firebase): the integration's
 * `conversations.start.addressKinds`, an address checked as the rules check it (phone E.164,
 * email, handle), and the service's refusals in words (docs/data-model.md, "Conversation starts").
 */
import { codePointLength, START_ADDRESS_KINDS, START_ADDRESS_LIMITS, startAddressFault } from '../../functions/src/contract';

/** The contract's address kinds, in its order (phone, email, handle). */
export const ADDRESS_KINDS = START_ADDRESS_KINDS;
export type AddressKind = (typeof ADDRESS_KINDS)[number];

const isKind = (value: unknown): value is AddressKind => typeof value === 'string' && (ADDRESS_KINDS as readonly string[]).includes(value);

/**
 * The address kinds of an integration document's `conversations` field, or undefined when the
 * integration does not let members start conversations (absent, or not 1..3 distinct known kinds:
 * a malformed value counts as absent, as it does for the service).
 */
export function readStartKinds(conversations: unknown): AddressKind[] | undefined {
  const start = typeof conversations === 'object' && conversations !== null ? (conversations as { start?: unknown }).start : undefined;
  const kinds = typeof start === 'object' && start !== null ? (start as { addressKinds?: unknown }).addressKinds : undefined;
  if (!Array.isArray(kinds) || kinds.length === 0 || kinds.length > ADDRESS_KINDS.length) return undefined;
  if (!kinds.every(isKind) || new Set(kinds).size !== kinds.length) return undefined;
  return ADDRESS_KINDS.filter((k) => kinds.includes(k));
}

/** Why a set of kinds would be refused, or undefined when it is valid. */
export function startKindsProblem(kinds: readonly AddressKind[]): string | undefined {
  return kinds.length === 0 ? 'Choose at least one address kind (or turn starts off).' : undefined;
}

/** What the card says ("Members may start conversations by phone or email."). */
export function startKindsText(kinds: readonly AddressKind[] | undefined): string {
  if (kinds === undefined) return 'Members cannot start conversations on this integration.';
  const words = kinds.map(addressKindLabel);
  const list = words.length === 1 ? words[0] : `${words.slice(0, -1).join(', ')} or ${words.at(-1) ?? ''}`;
  return `Members may start conversations by ${list}.`;
}

export function addressKindLabel(kind: AddressKind): string {
  return kind === 'phone' ? 'phone number' : kind === 'email' ? 'email address' : 'handle';
}

const EMAIL_MAX = START_ADDRESS_LIMITS.emailMax;
const HANDLE_MAX = START_ADDRESS_LIMITS.handleMax;

/** An example of each kind, for the address field's hint. */
export function addressHint(kind: AddressKind): string {
  switch (kind) {
    case 'phone':
      return 'In international format: + and the country code, digits only (e.g. +447700900123).';
    case 'email':
      return `An email address, at most ${EMAIL_MAX} characters (e.g. grace@example.com).`;
    case 'handle':
      return `The channel's user name or id, 1 to ${HANDLE_MAX} characters.`;
  }
}

/** Why an address would be refused by the rules (the contract's `startAddressFault`, in the form's words), or undefined when it is valid. The value is taken as given (the form trims it first). */
export function addressProblem(kind: AddressKind, value: string): string | undefined {
  switch (startAddressFault(kind, value)) {
    case null:
      return undefined;
    case 'empty':
      return `Enter the customer's ${addressKindLabel(kind)}.`;
    case 'not_e164':
      return 'A phone number is + then the country code and number, 7 to 15 digits, no spaces (e.g. +447700900123).';
    case 'too_long':
      return kind === 'email' ? `An email address is at most ${EMAIL_MAX} characters (this one has ${value.length}).` : `A handle is at most ${HANDLE_MAX} characters (this one has ${codePointLength(value)}).`;
    case 'not_one_at':
      return 'An email address has one @ with something on each side.';
    case 'space_or_control':
      return 'An email address has no spaces or control characters.';
    case 'control_character':
      return 'A handle has no control characters.';
  }
}

/** The service's refusal of a start (`error.code` on the start document), in words. */
export function startErrorText(code: string, message: string | undefined): string {
  const words: Record<string, string> = {
    starts_disabled: 'This integration does not let members start conversations (an admin may have turned it off).',
    address_kind_not_allowed: 'This integration does not start conversations by that kind of address.',
    invalid_address: 'The service did not accept this address.',
    invalid_start: 'The service did not accept this start request.',
    template_required: "This channel has a reply window: a conversation the desk starts must begin with a template.",
    template_invalid: 'The channel does not declare this template (or its params changed).',
    replies_disabled: "This integration's replies are turned off, so nothing can be sent on it.",
  };
  const said = words[code] ?? 'The service refused to start the conversation.';
  return `${said} (${code}${message ? `: ${message}` : ''})`;
}
