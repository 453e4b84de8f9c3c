/**
 * Connector metadata and the channel's time of an incoming message (docs/contract.md#incoming-messages):
 * what a message's `metadata` may be, how the conversation merges it, what a claim carries of it,
 * and which `sentAt` is accepted. Pure: the service's message transaction
 * (functions/src/messages/store.ts), its claim reads and the SDK's test service all run these.
 */
import { codePointLength, METADATA_LIMITS, SENT_AT_MAX_FUTURE_MS, utf8ByteLength } from '../contract';
import { BadRequestError } from './errors';

/** A message's `metadata` as sent: a `null` value removes its key from the conversation's. */
export type MetadataPatch = Readonly<Record<string, string | null>>;
/** The conversation's merged metadata (never a `null`: a removed key is gone). */
export type Metadata = Readonly<Record<string, string>>;

const KEY = new RegExp(METADATA_LIMITS.keyPattern);
// A lone surrogate (which Firestore would silently replace): in `u` mode a paired one is one code point and does not match.
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/** UTF-8 bytes of the map's JSON (how "2 KB in all" is measured: the form the map travels in). */
export function metadataBytes(map: Readonly<Record<string, string | null>>): number {
  return utf8ByteLength(JSON.stringify(map));
}

/**
 * The problems of a message's `metadata` (each with the path the 400 names), none when it is valid:
 * a flat map of at most `METADATA_LIMITS.keys` keys matching the key pattern to strings of at most
 * `METADATA_LIMITS.value` code points or `null`, at most `METADATA_LIMITS.bytes` in all. The schema
 * (functions/src/messages/schemas.ts) refines with these, and the test service checks them too.
 */
export function metadataProblems(metadata: unknown): Array<{ path: Array<string | number>; message: string }> {
  if (metadata === null || typeof metadata !== 'object' || Array.isArray(metadata)) return [{ path: ['metadata'], message: 'must be an object of string (or null) values' }];
  const problems: Array<{ path: Array<string | number>; message: string }> = [];
  const entries = Object.entries(metadata as Record<string, unknown>);
  if (entries.length > METADATA_LIMITS.keys) problems.push({ path: ['metadata'], message: `must have at most ${METADATA_LIMITS.keys} keys` });
  for (const [key, value] of entries) {
    if (!KEY.test(key)) problems.push({ path: ['metadata', key], message: 'key must be 1 to 64 of A-Z, a-z, 0-9, _, . and -' });
    if (value !== null && typeof value !== 'string') problems.push({ path: ['metadata', key], message: 'must be a string or null (no nested values)' });
    else if (typeof value === 'string' && LONE_SURROGATE.test(value)) problems.push({ path: ['metadata', key], message: 'must be well-formed Unicode (no lone surrogates)' });
    else if (typeof value === 'string' && codePointLength(value) > METADATA_LIMITS.value) problems.push({ path: ['metadata', key], message: `must be at most ${METADATA_LIMITS.value} characters` });
  }
  if (problems.length === 0 && metadataBytes(metadata as MetadataPatch) > METADATA_LIMITS.bytes) {
    problems.push({ path: ['metadata'], message: `must be at most ${METADATA_LIMITS.bytes} bytes of UTF-8 JSON in all` });
  }
  return problems;
}

/** The stored metadata of a conversation, as far as it is a metadata map (anything else reads as empty). */
export function storedMetadata(value: unknown): Metadata {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return {};
  return Object.fromEntries(Object.entries(value as Record<string, unknown>).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
}

/**
 * The conversation's metadata after a message's `patch`, applied in the order the conversation
 * accepts its messages (the message transaction): a string sets its key (the latest wins), `null`
 * removes it. The merge must stay within the limits of one map, so a claim never carries more:
 * 400 `invalid_request`, nothing written, when it would not. `removed`: the keys the patch took
 * away that were there (the store deletes those fields).
 */
export function mergeMetadata(current: Metadata, patch: MetadataPatch): { merged: Metadata; removed: string[] } {
  const merged: Record<string, string> = { ...current };
  const removed: string[] = [];
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) {
      if (key in merged) removed.push(key);
      delete merged[key];
    } else merged[key] = value;
  }
  if (Object.keys(merged).length > METADATA_LIMITS.keys) {
    throw new BadRequestError('invalid_request', `metadata: the conversation's metadata would have more than ${METADATA_LIMITS.keys} keys (remove keys with null).`);
  }
  if (metadataBytes(merged) > METADATA_LIMITS.bytes) {
    throw new BadRequestError('invalid_request', `metadata: the conversation's metadata would be more than ${METADATA_LIMITS.bytes} bytes of UTF-8 JSON (remove keys with null).`);
  }
  return { merged, removed };
}

/** What a `ready` claim carries of its conversation: `{ metadata }` when there is any, else nothing (the key stays absent). */
export function claimConversation(metadata: Metadata | undefined): { conversation: { metadata: Record<string, string> } } | Record<string, never> {
  return metadata !== undefined && Object.keys(metadata).length > 0 ? { conversation: { metadata: { ...metadata } } } : {};
}

/**
 * The message's `sentAt` (epoch ms): as given, at most `SENT_AT_MAX_FUTURE_MS` after `now` (a channel
 * clock a little ahead is tolerated, a time further ahead is a bug), else 400 `invalid_request`;
 * `now` (the receipt time) when absent. The schema already refused a non-integer or negative value.
 */
export function sentAtOf(sentAt: number | undefined, now: number): number {
  if (sentAt === undefined) return now;
  if (!Number.isSafeInteger(sentAt) || sentAt < 0) throw new BadRequestError('invalid_request', 'sentAt: must be a non-negative integer (epoch milliseconds).');
  if (sentAt > now + SENT_AT_MAX_FUTURE_MS) throw new BadRequestError('invalid_request', `sentAt: must be at most ${SENT_AT_MAX_FUTURE_MS / 60_000} minutes after the time the message is received.`);
  return sentAt;
}

/** The conversation's latest customer `sentAt`: the greatest seen, so an older message arriving late never moves it back. */
export function latestSentAt(previous: number | null, sentAt: number): number {
  return previous === null || sentAt > previous ? sentAt : previous;
}
