/**
 * A member's read markers (docs/console.md#the-queue): `members/{uid}/reads/{conversationId}` =
 * `{ readAt }`, the server's time when they last had the conversation open; a conversation is
 * unread for them while a message came in after it (format.ts `isUnread`). firestore.rules let a
 * member read and write only their own. The list reads the markers of the rows it shows, 30 per
 * query (Firestore's `in` limit), once each: a row's marker is known from then on, and the member's
 * own writes update it here.
 */
import { collection, doc, documentId, query, serverTimestamp, setDoc, where } from 'firebase/firestore';
import { timestampMillis } from './format';
import { meteredGetAll } from './read-meter';
import type { Session } from './session';

/** Firestore's limit on the values of an `in` filter. */
const IN_LIMIT = 30;

export class ReadMarkers {
  /** readAt by conversation; undefined: known to have no marker. Absent: not looked up yet. */
  readonly #readAt = new Map<string, number | undefined>();
  readonly #asked = new Set<string>();

  constructor(
    private readonly session: Session,
    private readonly onChange: () => void,
  ) {}

  #collection() {
    return collection(this.session.services.db, 'workspaces', this.session.workspaceId, 'members', this.session.user.uid, 'reads');
  }

  /** Whether the marker of `conversationId` is known (looked up, or written here). */
  known(conversationId: string): boolean {
    return this.#readAt.has(conversationId);
  }

  /** The member's readAt of `conversationId` (undefined: never read, or not known yet). */
  readAt(conversationId: string): number | undefined {
    return this.#readAt.get(conversationId);
  }

  /** Looks up the markers of the conversations not asked for yet; calls onChange when they are in. */
  want(conversationIds: readonly string[]): void {
    const missing = conversationIds.filter((id) => !this.#asked.has(id));
    for (let i = 0; i < missing.length; i += IN_LIMIT) {
      const chunk = missing.slice(i, i + IN_LIMIT);
      for (const id of chunk) this.#asked.add(id);
      void meteredGetAll('marker', query(this.#collection(), where(documentId(), 'in', chunk))).then(
        (snap) => {
          const found = new Map(snap.docs.map((d) => [d.id, timestampMillis(d.get('readAt'))]));
          for (const id of chunk) if (!this.#readAt.has(id)) this.#readAt.set(id, found.get(id));
          this.onChange();
        },
        (err: unknown) => {
          // Unreadable (e.g. signed out meanwhile): ask again with the next rows.
          console.warn('read markers unreadable', err);
          for (const id of chunk) this.#asked.delete(id);
        },
      );
    }
  }

  /**
   * Marks `conversationId` read up to `seenUpToMs` (the newest message the member has in front of
   * them): kept here at once, so the row stops being unread, and written with the server's time.
   */
  markRead(conversationId: string, seenUpToMs: number): void {
    const before = this.#readAt.get(conversationId);
    if (before !== undefined && before >= seenUpToMs) return;
    this.#readAt.set(conversationId, seenUpToMs);
    this.#asked.add(conversationId);
    // Not re-entrant: the list calls this while it renders, and renders again after.
    queueMicrotask(this.onChange);
    // A refused write (e.g. the conversation was erased meanwhile) leaves the marker as it was on the server.
    setDoc(doc(this.#collection(), conversationId), { readAt: serverTimestamp() }).catch(() => undefined);
  }
}
