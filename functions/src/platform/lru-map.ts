/**
 * A Map of at most `capacity` entries that forgets the least recently set one first: the per-instance
 * memories of the service (the key cache, the rate limiter's buckets, the conversation -> integration
 * hints) stay bounded however many keys an instance sees. Recency is by `set` only, so a read never
 * reorders (reads are the hot path; every user writes what it uses). Pure.
 */
export class LruMap<K, V> {
  readonly #entries = new Map<K, V>();

  constructor(readonly capacity: number) {
    if (!Number.isSafeInteger(capacity) || capacity < 1) throw new RangeError(`LruMap capacity must be a positive integer, not ${capacity}`);
  }

  get size(): number {
    return this.#entries.size;
  }

  get(key: K): V | undefined {
    return this.#entries.get(key);
  }

  has(key: K): boolean {
    return this.#entries.has(key);
  }

  /** Stores `value` as the most recent entry; past the capacity, the least recently set entry goes. */
  set(key: K, value: V): this {
    // A Map iterates in insertion order: re-inserting moves the key to the end (most recent).
    this.#entries.delete(key);
    this.#entries.set(key, value);
    if (this.#entries.size > this.capacity) {
      const oldest = this.#entries.keys().next();
      if (oldest.done !== true) this.#entries.delete(oldest.value);
    }
    return this;
  }

  delete(key: K): boolean {
    return this.#entries.delete(key);
  }

  /** The keys, least recently set first. */
  keys(): IterableIterator<K> {
    return this.#entries.keys();
  }
}
