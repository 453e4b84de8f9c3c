/**
 * The console's conversation search (docs/data-model.md#conversations--conversationsconversationid-service): the service stores on each
 * conversation the prefixes of what a member may search it by (`searchKeys`), and the console asks
 * for one of them with `array-contains`. One rule, here, for both sides: the service computes the
 * keys with `conversationSearchKeys`, the console turns what a member typed into the key it looks
 * for with `searchKeyOf`, so a search can never miss a conversation because the two normalised
 * differently.
 *
 * Why stored prefixes rather than a range query on a name field: one `array-contains` query
 * answers a search on any of the three fields with at most one page of reads, whereas ranges need
 * one query per field (three pages), and Firestore has no case- or accent-insensitive range.
 */

/** The longest key (code points): a longer search is looked up by its first 24 (docs/console.md#search). */
export const SEARCH_KEY_MAX = 24;
/** Words of one field that get their own prefixes (a name or id of more words is still found by its whole prefix). */
const SEARCH_WORDS_MAX = 6;

/** What a conversation is found by: its channel's id, and its latest customer's id and display name. */
export interface SearchableConversation {
  externalConversationId: string;
  customerExternalId?: string | null | undefined;
  customerName?: string | null | undefined;
}

/**
 * Lower case, without accents or other combining marks, compatibility forms folded (NFKD), runs of
 * white space as one space, trimmed: "  Zoë  O’Brien" and "zoe o’brien" compare equal.
 */
export function normalizeSearchText(text: string): string {
  return text.normalize('NFKD').replace(/\p{M}+/gu, '').toLowerCase().replace(/\s+/gu, ' ').trim();
}

/** The first `n` code points of `text` (a prefix never splits a surrogate pair). */
function firstCodePoints(text: string, n: number): string {
  return Array.from(text).slice(0, n).join('');
}

function prefixesOf(text: string, into: Set<string>): void {
  const points = Array.from(text).slice(0, SEARCH_KEY_MAX);
  let prefix = '';
  for (const point of points) {
    prefix += point;
    into.add(prefix);
  }
}

/**
 * The keys a conversation is stored with (`searchKeys`): every prefix (up to `SEARCH_KEY_MAX`
 * code points) of each field as a whole and of each of its first words, normalised. "Grace
 * Hopper" gives "g", "gr", …, "grace hopper" and "h", …, "hopper"; `chat-grace-1` gives its whole
 * prefixes and those of "chat", "grace" and "1". Sorted, without duplicates, so that the same
 * conversation always stores the same array (an unchanged array rewrites no index entry).
 */
export function conversationSearchKeys(conversation: SearchableConversation): string[] {
  const keys = new Set<string>();
  for (const field of [conversation.externalConversationId, conversation.customerExternalId, conversation.customerName]) {
    if (typeof field !== 'string') continue;
    const normalized = normalizeSearchText(field);
    if (normalized === '') continue;
    prefixesOf(normalized, keys);
    const words = normalized.split(/[^\p{L}\p{N}]+/u).filter((word) => word !== '');
    for (const word of words.slice(0, SEARCH_WORDS_MAX)) prefixesOf(word, keys);
  }
  return [...keys].sort();
}

/** The key a search looks up (`array-contains`): what was typed, normalised and cut to `SEARCH_KEY_MAX`; null when nothing is left. */
export function searchKeyOf(typed: string): string | null {
  const normalized = normalizeSearchText(typed);
  return normalized === '' ? null : firstCodePoints(normalized, SEARCH_KEY_MAX);
}
