/**
 * Counts the Firestore document reads the conversation list makes (docs/console.md#what-a-page-costs),
 * as Firestore bills them: a listener's first answer from the server costs one read per document
 * (one for an empty answer), each later answer one per changed document; a `getDoc` one; a
 * `getDocs` one per document (at least one); a count one per 1000 index entries (at least one).
 * Answers from the local cache cost nothing. The total is on `window.deskConsole.reads()` for the
 * developer tools and the browser suite, which measures a page and a search with it, by kind.
 */
import { getCountFromServer, getDoc, getDocs, onSnapshot, type DocumentReference, type DocumentSnapshot, type Query, type QuerySnapshot, type Unsubscribe } from 'firebase/firestore';

/** What the reads were for: the list's shard windows, the new-message watch, a search, row previews, read markers, customer names, the title's count. */
export type ReadKind = 'list' | 'watch' | 'search' | 'preview' | 'marker' | 'customer' | 'count';

const reads: Record<ReadKind, number> = { list: 0, watch: 0, search: 0, preview: 0, marker: 0, customer: 0, count: 0 };

declare global {
  interface Window {
    /** The console's read meter, for the developer tools and the browser suite: reads so far, by kind. */
    deskConsole?: { reads(): Record<ReadKind, number> };
  }
}
// The desk CLI (console/cli) runs these modules in Node, where there is no window.
if (typeof window !== 'undefined') window.deskConsole = { reads: () => ({ ...reads }) };

/**
 * `onSnapshot` of a query, metered. The listener also fires when only the metadata changes: a
 * server answer equal to a first answer from the cache raises no other event, and it is both what
 * is billed and what a caller waiting for the server's answer needs.
 */
export function meteredQuery(kind: ReadKind, q: Query, onNext: (snap: QuerySnapshot) => void, onError: (err: Error) => void): Unsubscribe {
  let answered = false;
  return onSnapshot(
    q,
    { includeMetadataChanges: true },
    (snap) => {
      if (!snap.metadata.fromCache) {
        reads[kind] += answered ? snap.docChanges().filter((c) => !c.doc.metadata.hasPendingWrites).length : Math.max(1, snap.size);
        answered = true;
      }
      onNext(snap);
    },
    onError,
  );
}

/** `getDoc`, metered. */
export async function meteredGet(kind: ReadKind, ref: DocumentReference): Promise<DocumentSnapshot> {
  const snap = await getDoc(ref);
  if (!snap.metadata.fromCache) reads[kind] += 1;
  return snap;
}

/** `getDocs`, metered. */
export async function meteredGetAll(kind: ReadKind, q: Query): Promise<QuerySnapshot> {
  const snap = await getDocs(q);
  if (!snap.metadata.fromCache) reads[kind] += Math.max(1, snap.size);
  return snap;
}

/** A count aggregation, metered. */
export async function meteredCount(kind: ReadKind, q: Query): Promise<number> {
  const count = (await getCountFromServer(q)).data().count;
  reads[kind] += Math.max(1, Math.ceil(count / 1000));
  return count;
}
