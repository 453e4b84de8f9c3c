/**
 * The connector's memory of its threads: one JSON file, `threads.json` in the data directory.
 *
 *   {
 *     "version": 1,
 *     "conversations": { "<externalConversationId>": { "lastMessageId", "references", "subject", "customer" } },
 *     "messages":      { "<Message-ID>": "<externalConversationId>" }
 *   }
 *
 * `conversations` gives a reply its threading headers (In-Reply-To the customer's last
 * Message-ID, References the thread) and its subject; `messages` puts a mail that answers a known
 * Message-ID (an earlier mail of the thread, or one of our replies) into that conversation. A
 * bounce needs no entry: its delivery is derived from our Message-ID (see ids.ts).
 *
 * Losing the file loses threading headers and subjects of older threads, nothing else: a reply
 * still goes to the customer's address (the API's recipient). Writes are atomic (a temporary file
 * renamed) and serialized; `messages` keeps the newest MAX_MESSAGES entries.
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** What the connector remembers of one conversation. */
export interface ThreadState {
  /** The customer's last Message-ID (no brackets): the reply's In-Reply-To; in a thread the desk started, our first mail's until the customer answers. */
  lastMessageId: string;
  /** The thread's Message-IDs up to and including `lastMessageId`, oldest first (at most MAX_REFERENCES). */
  references: string[];
  /** The subject of the customer's last mail. */
  subject: string;
  /** The customer's address. */
  customer: string;
}

interface StoreFile {
  version: 1;
  conversations: Record<string, ThreadState>;
  messages: Record<string, string>;
}

/** Kept References (mail clients keep the first and the last ones: RFC 5322 section 3.6.4 allows trimming). */
const MAX_REFERENCES = 20;
const MAX_MESSAGES = 50_000;

/** Trims a References list to its root and its newest ids. */
export function trimReferences(ids: readonly string[]): string[] {
  if (ids.length <= MAX_REFERENCES) return [...ids];
  return [ids[0] as string, ...ids.slice(ids.length - (MAX_REFERENCES - 1))];
}

export class ThreadStore {
  readonly path: string;
  #data: StoreFile;
  #writing: Promise<void> = Promise.resolve();

  private constructor(path: string, data: StoreFile) {
    this.path = path;
    this.#data = data;
  }

  /** Opens (or starts) `threads.json` in `dataDir`, creating the directory. */
  static async open(dataDir: string): Promise<ThreadStore> {
    await mkdir(dataDir, { recursive: true });
    const path = join(dataDir, 'threads.json');
    let data: StoreFile = { version: 1, conversations: {}, messages: {} };
    try {
      const parsed = JSON.parse(await readFile(path, 'utf8')) as Partial<StoreFile>;
      if (parsed.version === 1) data = { version: 1, conversations: parsed.conversations ?? {}, messages: parsed.messages ?? {} };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    return new ThreadStore(path, data);
  }

  /** The conversation a Message-ID belongs to, if the connector has seen it. */
  conversationOf(messageId: string): string | undefined {
    return Object.hasOwn(this.#data.messages, messageId) ? this.#data.messages[messageId] : undefined;
  }

  thread(externalConversationId: string): ThreadState | undefined {
    return Object.hasOwn(this.#data.conversations, externalConversationId) ? this.#data.conversations[externalConversationId] : undefined;
  }

  /** Records a customer's mail accepted by the API: the thread's new last Message-ID and subject. */
  async recordInbound(externalConversationId: string, mail: { messageId: string; references: readonly string[]; subject: string; customer: string }): Promise<void> {
    const references = trimReferences([...mail.references.filter((id) => id !== mail.messageId), mail.messageId]);
    this.#data.conversations[externalConversationId] = { lastMessageId: mail.messageId, references, subject: mail.subject, customer: mail.customer };
    this.#remember(mail.messageId, externalConversationId);
    await this.#save();
  }

  /** Records one of our replies, so that the customer's answer to it joins the conversation. */
  async recordOutbound(externalConversationId: string, messageId: string): Promise<void> {
    this.#remember(messageId, externalConversationId);
    await this.#save();
  }

  /**
   * Records the first mail of a conversation the desk starts: the thread begins with it (later
   * replies answer it: In-Reply-To and References its Message-ID, `Re: <its subject>`), and the
   * customer's answer to it joins the thread. A thread already known (a retried send that was
   * recorded before) is left as it is.
   */
  async recordStart(externalConversationId: string, mail: { messageId: string; subject: string; customer: string }): Promise<void> {
    if (!Object.hasOwn(this.#data.conversations, externalConversationId)) {
      this.#data.conversations[externalConversationId] = { lastMessageId: mail.messageId, references: [mail.messageId], subject: mail.subject, customer: mail.customer };
    }
    this.#remember(mail.messageId, externalConversationId);
    await this.#save();
  }

  /**
   * Forgets an erased customer (docs/decisions.md#erasure-on-the-connector-side): the threads that
   * were erased with them and every thread whose customer they are, with the Message-IDs that
   * pointed into those threads. Idempotent (a second call removes nothing and succeeds); saved
   * before it resolves, so an acknowledgement never precedes the purge on disk.
   */
  async purgeCustomer(externalCustomerId: string, externalConversationIds: readonly string[]): Promise<{ threads: number; messageIds: number }> {
    const erased = new Set(externalConversationIds);
    for (const [id, thread] of Object.entries(this.#data.conversations)) if (thread.customer === externalCustomerId) erased.add(id);
    let threads = 0;
    for (const id of erased) {
      if (!Object.hasOwn(this.#data.conversations, id)) continue;
      delete this.#data.conversations[id];
      threads += 1;
    }
    let messageIds = 0;
    for (const [messageId, conversation] of Object.entries(this.#data.messages)) {
      if (!erased.has(conversation)) continue;
      delete this.#data.messages[messageId];
      messageIds += 1;
    }
    await this.#save();
    return { threads, messageIds };
  }

  #remember(messageId: string, externalConversationId: string): void {
    // First writer wins: a Message-ID never moves to another conversation (stable threads).
    if (Object.hasOwn(this.#data.messages, messageId)) return;
    this.#data.messages[messageId] = externalConversationId;
    const ids = Object.keys(this.#data.messages);
    for (const old of ids.slice(0, Math.max(0, ids.length - MAX_MESSAGES))) delete this.#data.messages[old];
  }

  #save(): Promise<void> {
    const snapshot = JSON.stringify(this.#data, null, 1);
    const write = async () => {
      const tmp = `${this.path}.${process.pid}.tmp`;
      await writeFile(tmp, snapshot);
      await rename(tmp, this.path);
    };
    this.#writing = this.#writing.then(write, write);
    return this.#writing;
  }
}
